#!/usr/bin/python3
"""A board with thousands of cooling devices of one type (a server's one per CPU, all
"Processor"): thermlogd finds them in linear time, each a channel, and says once which of them
throttle detection leaves out (it reads the first 32); and a SIGTERM during a discovery that
takes long (each type file held 20 ms by tests/lib/slowsync.c, LD_PRELOADed: its path the third
argument) stops the daemon within a read, not after the whole walk (before, it was read at the
loop only: 69 s with 3000 devices)."""
import os
import re
import signal
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from thermlog_test import Daemon, Workdir, copy_fixture, main, wait_for, write_config

DEVICES = 3000


def board(wd):
    root = copy_fixture(sys.argv[2], os.path.join(wd, "sysfs"))
    for i in range(100, 100 + DEVICES):
        d = os.path.join(root, "class", "thermal", "cooling_device%d" % i)
        os.makedirs(d)
        for name, text in (("type", "Processor"), ("cur_state", "0"), ("max_state", "3")):
            with open(os.path.join(d, name), "w") as f:
                f.write(text + "\n")
    return root


def start(exe, wd, root, env=None):
    cfg = write_config(os.path.join(wd, "t.yaml"))
    return Daemon(exe, wd, ["-c", cfg, "--sysfs-root", root, "--db", os.path.join(wd, "t.db"),
                            "--listen", "127.0.0.1:0"], env=env).start()


def run(tap):
    exe, shim = sys.argv[1], sys.argv[3]
    with Workdir("thermlog-discovery.") as wd:
        root = board(wd)
        d = start(exe, wd, root)
        first = r"first cycle stored at \S+: (\d+) channels"
        tap.ok(wait_for(lambda: re.search(first, d.log_text()), 60),
               "the first cycle is stored", d.log_text()[-2000:])
        m = re.search(first, d.log_text())
        tap.ok(m and int(m.group(1)) >= DEVICES, "every cooling device a channel (%s)" %
               (m and m.group(1)))
        limit = ("throttle detection: %d cooling devices past the first 32 left out "
                 "(cooling_device" % (DEVICES + 5 - 32))
        tap.ok(limit in d.log_text(), "the limit throttle detection applies is said",
               d.log_text()[-2000:])
        d.send(signal.SIGHUP)
        tap.ok(wait_for(lambda: "reloading the configuration" in d.log_text(), 20),
               "a reload", d.log_text()[-1000:])
        time.sleep(3)  # a cycle after it finds the throttle topology again
        tap.ok(d.log_text().count("throttle detection:") == 1,
               "said once: the reload finds the same left out", d.log_text()[-2000:])
        tap.ok(d.stop() == 0, "clean stop")
    with Workdir("thermlog-discovery-term.") as wd:
        root = board(wd)
        env = {"LD_PRELOAD": shim, "THERMLOG_TEST_READ_DELAY_MS": "20",
               "THERMLOG_TEST_READ_DELAY_FILE": "/type",
               "ASAN_OPTIONS": os.environ.get("ASAN_OPTIONS", "") + ":verify_asan_link_order=0"}
        d = start(exe, wd, root, env)
        # the database is opened before the sampler looks for channels: a minute's walk now
        tap.ok(wait_for(lambda: "created with schema" in d.log_text(), 30),
               "the daemon started", d.log_text())
        time.sleep(1)
        t0 = time.monotonic()
        d.send(signal.SIGTERM)
        # The walk alone takes DEVICES x 20 ms of delayed reads; a daemon that finished it
        # before it looked at the signal takes at least that: stopping within half of it is
        # the state (a loaded machine slows the stop, not the reads' delays).
        walk_s = DEVICES * 20 // 1000
        stopped = d.wait_exit(walk_s)
        took = time.monotonic() - t0
        tap.ok(stopped is not None and took < walk_s / 2,
               "SIGTERM during the discovery: stopped in %.1f s (the walk takes %d s)" %
               (took, walk_s), d.log_text())
        tap.ok(stopped == 0 and "first cycle stored" not in d.log_text() and
               "Terminated received: stopping" in d.log_text(),
               "cleanly, before any cycle (no half-found channel list stored)", d.log_text())
        if stopped is None:
            d.stop(signal.SIGKILL)


main(run)
