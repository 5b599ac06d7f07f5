#!/usr/bin/python3
"""Another connection holds the database's write lock for 8 s (as a long import does) while the
daemon samples every second: no slot is skipped; the cycles wait in memory and are written when
the lock is released."""
import os
import sqlite3
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from thermlog_test import Daemon, Workdir, check_database, copy_fixture, cycles, main, \
    scheduler_missed, wait_cycles, wait_for, write_config

HOLD_S = 8


def run(tap):
    exe, fixture = sys.argv[1], sys.argv[2]
    with Workdir("thermlog-busy.") as wd:
        root = copy_fixture(fixture, os.path.join(wd, "sysfs"))
        db = os.path.join(wd, "t.db")
        cfg = write_config(os.path.join(wd, "t.yaml"))
        d = Daemon(exe, wd, ["-c", cfg, "--sysfs-root", root, "--db", db,
                             "--listen", "127.0.0.1:0"]).start()
        wait_cycles(db, 3, 20, d)
        con = sqlite3.connect(db, timeout=10, isolation_level=None)
        con.execute("BEGIN IMMEDIATE")
        con.execute("INSERT INTO state (key, value) VALUES ('test.busy', 'x')")
        t0 = time.time()
        time.sleep(HOLD_S)
        t1 = time.time()
        con.execute("ROLLBACK")
        con.close()
        wait_for(lambda: [r for r in cycles(db) if r[0] >= int(t1) + 2], 10)
        ts = [t for t, _ in cycles(db)]
        held = [t for t in ts if t0 < t < t1]
        log = d.log_text()
        # (a slot a loaded machine's scheduler made the loop miss is said so, and is no lock's)
        excused = scheduler_missed(log)
        missing = [t for t in range(ts[0], ts[-1] + 1) if t not in ts and t not in excused]
        tap.ok(d.alive(), "the daemon keeps running while another connection holds the lock")
        tap.ok(len(held) >= HOLD_S - 1, "the cycles of the %d s are stored afterwards (%d)" %
               (HOLD_S, len(held)), log)
        tap.ok(not missing, "no slot skipped: %s" % missing, log)
        tap.ok(log.count("keeping them in memory") == 1, "the wait is logged once", log)
        tap.ok(d.stop() == 0, "clean stop")
        ok, detail = check_database(db)
        tap.ok(ok, "database whole", detail)


main(run)
