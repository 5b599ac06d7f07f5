#!/usr/bin/python3
"""sd_notify through a fake NOTIFY_SOCKET: READY after the first stored cycle, STATUS,
WATCHDOG at half of WATCHDOG_USEC from the main loop (a hung loop stops them), STOPPING."""
import os
import select
import signal
import socket
import sys
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from thermlog_test import Daemon, Workdir, copy_fixture, cycles, main, wait_for, write_config


class Listener(threading.Thread):
    def __init__(self, path, db):
        super().__init__(daemon=True)
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.sock.bind(path)
        self.db = db
        self.messages = []  # (monotonic time, text, cycles stored when received)
        self.running = True

    def run(self):
        while self.running:
            r, _, _ = select.select([self.sock], [], [], 0.1)
            if r:
                text = self.sock.recv(4096).decode()
                stored = len(cycles(self.db)) if text.startswith("READY") else None
                self.messages.append((time.monotonic(), text, stored))

    def texts(self, prefix):
        return [m for m in self.messages if m[1].startswith(prefix)]


def run(tap):
    exe, fixture = sys.argv[1], sys.argv[2]
    with Workdir("thermlog-notify.") as wd:
        root = copy_fixture(fixture, os.path.join(wd, "sysfs"))
        db = os.path.join(wd, "t.db")
        cfg = write_config(os.path.join(wd, "t.yaml"), rescan="1s")
        sock_path = os.path.join(wd, "notify")
        lis = Listener(sock_path, db)
        lis.start()
        d = Daemon(exe, wd, ["-c", cfg, "--sysfs-root", root, "--db", db,
                             "--listen", "127.0.0.1:0"],
                   env={"NOTIFY_SOCKET": sock_path, "WATCHDOG_USEC": "1000000"}).start()
        tap.ok(wait_for(lambda: lis.texts("READY=1"), 20), "READY=1 arrives", d.log_text())
        ready = lis.texts("READY=1")
        tap.ok(ready and ready[0][2] >= 1, "only after the first cycle is stored")
        # eight pings (four seconds at half of WATCHDOG_USEC), however late they come
        wait_for(lambda: len(lis.texts("WATCHDOG=1")) >= 8 and lis.texts("STATUS="), 60)
        status = lis.texts("STATUS=")
        tap.ok(status and "last cycle" in status[-1][1] and "channels" in status[-1][1],
               "STATUS= with the last cycle and channel count: %r" %
               (status[-1][1] if status else None))
        w = [m[0] for m in lis.texts("WATCHDOG=1")]
        gaps = [b - a for a, b in zip(w, w[1:])]
        tap.ok(len(w) >= 8, "WATCHDOG=1 pings (%d)" % len(w))
        # On the half-interval grid: a loaded machine delays a ping, never adds one, so no gap
        # is much shorter than half of WATCHDOG_USEC, and their mean is about it.
        mean = (w[-1] - w[0]) / (len(w) - 1) if len(w) > 1 else 0
        tap.ok(gaps and min(gaps) > 0.2 and 0.4 <= mean <= 0.75,
               "every half of WATCHDOG_USEC: mean gap %.2f s, gaps %s"
               % (mean, ["%.2f" % g for g in gaps[:8]]))

        # Hang the main loop: a new zone whose temp is a FIFO with no writer blocks the
        # rescan's open(). The HTTP thread lives on, but the pings must stop.
        zone = os.path.join(root, "devices/virtual/thermal/thermal_zone9")
        os.mkdir(zone)
        with open(os.path.join(zone, "type"), "w") as f:
            f.write("hang-thermal\n")
        fifo = os.path.join(zone, "temp")
        os.mkfifo(fifo)
        os.symlink("../../devices/virtual/thermal/thermal_zone9",
                   os.path.join(root, "class/thermal/thermal_zone9"))

        # Opening the FIFO for writing would release the reader, so wait for the rescan
        # (every second) and look at where the main thread sleeps.
        def wchan_now():
            try:
                with open("/proc/%d/wchan" % d.proc.pid) as f:
                    return f.read().strip()
            except OSError:
                return "?"
        wchan = wait_for(lambda: wchan_now() in ("wait_for_partner", "fifo_open") and
                         wchan_now(), 30) or wchan_now()
        tap.ok(wchan in ("wait_for_partner", "fifo_open", "?", "0"), "the loop blocks in the FIFO's open() (%s)" % wchan)
        hung_at = time.monotonic()
        time.sleep(2.5)
        late = [m for m in lis.texts("WATCHDOG=1") if m[0] > hung_at]
        tap.ok(d.alive() and not late, "a hung loop sends no WATCHDOG=1 (%d sent)" % len(late))
        wfd = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
        # Release it: the zone becomes a plain file again, and the loop resumes.
        os.close(wfd)
        os.unlink(fifo)
        with open(fifo, "w") as f:
            f.write("45000\n")
        released = time.monotonic()
        tap.ok(wait_for(lambda: len([m for m in lis.texts("WATCHDOG=1")
                                     if m[0] > released]) >= 2, 30),
               "pings resume with the loop", d.log_text())

        tap.ok(d.stop(signal.SIGTERM) == 0, "SIGTERM: exit 0")
        tap.ok(wait_for(lambda: lis.texts("STOPPING=1"), 10), "STOPPING=1 sent")
        lis.running = False
        lis.join()

        # Abstract socket names start with @.
        name = "thermlog-test-%d" % os.getpid()
        s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        s.bind("\0" + name)
        d = Daemon(exe, wd, ["-c", cfg, "--sysfs-root", root, "--db", db,
                             "--listen", "127.0.0.1:0"],
                   env={"NOTIFY_SOCKET": "@" + name}, name="abstract").start()
        s.settimeout(20)
        got = []
        try:
            while "READY=1" not in got:
                got.append(s.recv(4096).decode())
        except socket.timeout:
            pass
        tap.ok("READY=1" in got, "READY=1 on an abstract socket", d.log_text())
        d.stop()
        s.close()


main(run)
