#!/usr/bin/python3
"""A daemon woken late keeps every slot: a loaded machine delays the sampling loop by a few
hundred milliseconds at times, which must not cost a cycle (the loop used to drop a slot it
reached more than a quarter interval late, so a busy 2-core machine lost cycles at 1 s).

The daemon samples every second and is stopped (SIGSTOP) for 300 to 700 ms across 16 slots, at
phases chosen so it wakes 250 to 650 ms after its slot; it then holds every slot from the first
cycle to the last, each stamped with its second, and a clock step still does not make a cycle
off the grid (test_clockstep covers the steps themselves)."""
import os
import signal
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from thermlog_test import Daemon, Workdir, copy_fixture, cycles, main, wait_cycles, \
    write_config

DELAYS_MS = (300, 450, 600, 700, 650, 350, 500, 650, 700, 400, 550, 700, 300, 600, 700, 450)


def run(tap):
    exe, fixture = sys.argv[1], sys.argv[2]
    with Workdir("thermlog-late.") as wd:
        root = copy_fixture(fixture, os.path.join(wd, "sysfs"))
        cfg = write_config(os.path.join(wd, "t.yaml"))
        db = os.path.join(wd, "t.db")
        d = Daemon(exe, wd, ["-c", cfg, "--sysfs-root", root, "--db", db,
                             "--listen", "127.0.0.1:0"]).start()
        first = wait_cycles(db, 2, 30, d)
        tap.ok(len(first) >= 2, "the daemon samples", d.log_text())
        woke = []
        for delay in DELAYS_MS:
            # Stop it 50 ms before a slot and keep it stopped for @delay: the timer expires
            # while it is stopped, so it wakes @delay - 50 ms after the slot.
            now = time.time()
            slot = int(now) + 1
            time.sleep(max(0.0, slot - 0.05 - time.time()))
            d.send(signal.SIGSTOP)
            time.sleep(delay / 1000)
            d.send(signal.SIGCONT)
            woke.append(slot)
            time.sleep(0.3)
        last = wait_cycles(db, len(cycles(db)) + 2, 30, d)
        ts = [t for t, _ in cycles(db)]
        start = ts.index(first[-1][0]) if first[-1][0] in ts else 0
        span = ts[start:]
        missing = sorted(set(range(span[0], span[-1] + 1)) - set(span)) if span else []
        late_missing = [s for s in woke if s in missing]
        tap.ok(span and not missing,
               "every second from %s to %s is stored (%d cycles, missing %s; of the late "
               "slots %s)" % (span[0] if span else None, span[-1] if span else None, len(span),
                              missing[:10], late_missing), d.log_text()[-3000:])
        tap.ok(all(s in ts for s in woke), "each slot the daemon woke late for is stamped "
               "with its own second", "missing %s" % late_missing)
        tap.ok(span == sorted(set(span)), "no duplicate or out-of-order cycles")
        tap.ok(len(last) >= len(first), "sampling goes on after the stops")
        tap.ok(d.stop() == 0, "clean stop", d.log_text()[-2000:])


main(run)
