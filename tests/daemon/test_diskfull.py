#!/usr/bin/python3
"""Disk full: the database on a small tmpfs (private mount namespace) is filled up, then freed.
The daemon keeps running, queues the cycles it cannot write, and stores them all afterwards."""
import http.client
import json
import os
import socket
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from thermlog_test import Daemon, Workdir, check_database, copy_fixture, cycles, get_json, main, \
    wait_cycles, wait_for, write_config

FULL_S = 6


def fill(path):
    """Writes a file until the file system is full; returns its size."""
    n = 0
    chunk = b"\0" * 65536
    with open(path, "wb", buffering=0) as f:
        while True:
            try:
                n += f.write(chunk)
            except OSError:
                break
        for size in (4096, 512, 1):
            while True:
                try:
                    n += f.write(b"\0" * size)
                except OSError:
                    break
    return n


class UnixConnection(http.client.HTTPConnection):
    def __init__(self, path):
        super().__init__("localhost", timeout=30)
        self.path = path

    def connect(self):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(self.timeout)
        self.sock.connect(self.path)


def run_start(sock):
    """POST /api/v1/runs through the runs socket: the status (0 without an answer)."""
    c = UnixConnection(sock)
    try:
        c.request("POST", "/api/v1/runs", body=json.dumps({"label": "full", "pid": None}))
        r = c.getresponse()
        r.read()
        return r.status
    except OSError:
        return 0
    finally:
        c.close()


def run(tap):
    exe, fixture = sys.argv[1], sys.argv[2]
    with Workdir("thermlog-full.") as wd:
        root = copy_fixture(fixture, os.path.join(wd, "sysfs"))
        mnt = os.path.join(wd, "mnt")
        os.mkdir(mnt)
        r = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", mnt],
                           capture_output=True, text=True)
        if not tap.ok(r.returncode == 0, "a 2 MiB tmpfs in a private mount namespace", r.stderr):
            return
        try:
            db = os.path.join(mnt, "t.db")
            cfg = write_config(os.path.join(wd, "t.yaml"))
            d = Daemon(exe, wd, ["-c", cfg, "--sysfs-root", root, "--db", db,
                                 "--listen", "127.0.0.1:0"]).start()
            port = d.http_port()
            sock = os.path.join(wd, "run", "thermlog.sock")
            c = wait_cycles(db, 3, 20, d)
            tap.ok(len(c) >= 3, "sampling onto the tmpfs", d.log_text())
            filler = os.path.join(mnt, "filler")
            size = fill(filler)
            print("# filled %d bytes" % size)
            full_at = time.time()
            # Twenty runs asked to start meanwhile: each refused, the refusals said once.
            before = len(d.log_text().splitlines())
            refused = [run_start(sock) for _ in range(20)]
            time.sleep(max(0, FULL_S - (time.time() - full_at)))
            stored_while_full = len(cycles(db))
            log = d.log_text()
            tap.ok(d.alive(), "the daemon keeps running on a full disk", log)
            tap.ok("could not store cycles" in log and "keeping them in memory" in log,
                   "and says it keeps the cycles in memory", log)
            tap.ok(log.count("could not store cycles") == 1, "once", log)
            said = [line for line in log.splitlines()[before:] if "full" in line]
            tap.ok(all(st == 503 for st in refused) and len(said) <= 4,
                   "20 run starts refused (503), said in %d lines, not one each" % len(said),
                   (refused, said))
            os.unlink(filler)
            freed_at = time.time()

            def flushed():
                ts = [t for t, _ in cycles(db)]
                return "accepts writes again" in d.log_text() and ts and ts[-1] > freed_at + 1
            tap.ok(wait_for(flushed, 20), "space returns: the queued cycles are written",
                   d.log_text())
            st = get_json("http://127.0.0.1:%d/api/v1/status" % port)
            tap.ok(st.get("cycles_failed") == 0 and st.get("queued_cycles") == 0,
                   "and none of them counts as failed: %s" %
                   {k: st.get(k) for k in ("cycles_failed", "queued_cycles")})
            ts = [t for t, _ in cycles(db)]
            window = [t for t in ts if full_at + 1 <= t <= freed_at - 1]
            expected = int(freed_at - 1) - int(full_at + 1)
            tap.ok(len(window) >= expected - 1,
                   "the cycles of the full period are stored (%d of %d; %d stored while full)" %
                   (len(window), expected, stored_while_full))
            gaps = [b - a for a, b in zip(ts, ts[1:]) if b - a > 1]
            tap.ok(len(gaps) <= 1, "no hole in the series: gaps %s" % gaps)
            tap.ok(d.stop() == 0, "clean stop")
            ok, detail = check_database(db)
            tap.ok(ok, "nothing stored is damaged: " + detail, detail)

            # The queue is bounded: with room for three cycles (the test hook shrinks it from
            # 1 MiB), a longer outage keeps the newest and drops the oldest, logged once.
            d = Daemon(exe, wd, ["-c", cfg, "--sysfs-root", root, "--db", db,
                                 "--listen", "127.0.0.1:0"],
                       env={"THERMLOG_TEST_QUEUE_MAX_BYTES": "1100"}, name="bounded").start()
            n = len(cycles(db))
            wait_cycles(db, n + 2, 20, d)
            fill(filler)
            full_at = time.time()
            time.sleep(FULL_S + 1)
            log = d.log_text()
            tap.ok(d.alive() and log.count("queue of unwritten cycles is full") == 1,
                   "a full queue drops the oldest cycles, logged once", log)
            os.unlink(filler)
            freed_at = time.time()
            tap.ok(wait_for(flushed, 20), "the kept cycles are written when space returns", log)
            ts = [t for t, _ in cycles(db)]
            window = [t for t in ts if full_at + 1 <= t <= freed_at - 1]
            tap.ok(2 <= len(window) <= 4 and window[-1] >= int(freed_at) - 2,
                   "only the newest few of the outage are kept: %s (full %d..%d)" %
                   (window, full_at, freed_at))
            tap.ok(d.stop() == 0, "clean stop")
            ok, detail = check_database(db)
            tap.ok(ok, "database whole", detail)
        finally:
            subprocess.run(["umount", "-l", mnt])


if os.environ.get("THERMLOG_IN_NS") != "1":
    # Re-run inside a private mount namespace so the tmpfs is invisible outside and vanishes
    # with the test.
    env = dict(os.environ, THERMLOG_IN_NS="1")
    os.execvpe("unshare", ["unshare", "-m", "--propagation", "private", sys.executable,
                           os.path.abspath(__file__)] + sys.argv[1:], env)
main(run)
