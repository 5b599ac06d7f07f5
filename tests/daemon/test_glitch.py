#!/usr/bin/python3
"""Forward clock glitches and far-future rows: an imported row dated 2099, a single cycle
stamped a year ahead and a clock 100 years ahead for 3 s. Later cycles are stamped with the true
time, retention deletes nothing, and thermlog repair removes the future cycles.

Uses the daemon's test hook THERMLOG_TEST_CLOCK_OFFSET_FILE (seconds added to its wall clock)."""
import os
import sqlite3
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from thermlog_test import Daemon, Workdir, check_database, copy_fixture, cycles, main, query, \
    samples, set_clock_offset, wait_cycles, wait_for, write_config

UNSYNCED = 2
YEAR = 366 * 86400
CENTURY = 100 * 365 * 86400
Y2099 = 4070908800



def near_now(ts, slack=5):
    return abs(ts - time.time()) <= slack


def run(tap):
    exe, fixture = sys.argv[1], sys.argv[2]
    thermlog = os.path.join(os.path.dirname(exe), "thermlog")
    with Workdir("thermlog-glitch.") as wd:
        root = copy_fixture(fixture, os.path.join(wd, "sysfs"))
        # Retention of one day: a run from a stamp a year ahead would prune every raw row.
        cfg = write_config(os.path.join(wd, "t.yaml"), extra="retention:\n  raw: 1d\n")
        off = os.path.join(wd, "offset")
        set_clock_offset(off, 0)

        def daemon(db, name):
            return Daemon(exe, wd, ["-c", cfg, "--sysfs-root", root, "--db", db,
                                    "--listen", "127.0.0.1:0"], name=name,
                          env={"THERMLOG_TEST_CLOCK_OFFSET_FILE": off}).start()

        # Issue 10 item 2: a row dated 2099 as an import leaves it (no boot, synced).
        db = os.path.join(wd, "import.db")
        d = daemon(db, "seed")
        wait_cycles(db, 2, 20, d)
        d.stop()
        con = sqlite3.connect(db)
        # A cycle is its head row: an imported one has no boot.
        con.execute("INSERT INTO samples (ts, clock, data, boot) VALUES (?, 1, x'0250', NULL)",
                    (Y2099,))
        con.commit()
        con.close()
        n = len(cycles(db))
        d = daemon(db, "after-import")
        c = wait_cycles(db, n + 3, 20, d)
        new = [r for r in c if r[0] != Y2099][-3:]
        log = d.log_text()
        tap.ok(len(c) >= n + 3, "cycles are stored beside an imported 2099 row", log)
        tap.ok(all(near_now(ts) and cl != UNSYNCED for ts, cl in new),
               "stamped now and not unsynced: %s" % new, log)
        tap.ok("continued timeline" not in log, "no continued timeline from an imported row",
               log)
        d.stop()

        # Issue 14 item 9: one cycle stamped a year ahead.
        db = os.path.join(wd, "t.db")
        d = daemon(db, "year")
        before = wait_cycles(db, 4, 20, d)
        raw_before = len(samples(db))
        set_clock_offset(off, YEAR)
        glitch = wait_for(lambda: [r for r in cycles(db) if r[0] > time.time() + YEAR / 2], 10,
                          step=0.02)
        set_clock_offset(off, 0)
        tap.ok(glitch and len(glitch) <= 2, "a cycle a year ahead is stored (%d)" %
               len(glitch or []), d.log_text())
        tap.ok(glitch and all(cl == UNSYNCED for _, cl in glitch), "marked unsynced")
        n = len(cycles(db))
        after = [r for r in wait_cycles(db, n + 3, 20, d) if r[0] < time.time() + 60][-3:]
        log = d.log_text()
        tap.ok(len(after) == 3 and all(near_now(ts) and cl != UNSYNCED for ts, cl in after),
               "later cycles are stamped with the true time and not unsynced: %s" % after, log)
        raw_kept = len([r for r in samples(db) if r[0] <= before[-1][0]])
        tap.ok(raw_kept == raw_before, "retention deleted nothing (%d of %d raw rows kept)" %
               (raw_kept, raw_before), log)
        tap.ok("ahead of the last cycle" in log, "the glitch is logged", log)

        # A clock 100 years ahead for 3 s; then a restart does not follow it either.
        set_clock_offset(off, CENTURY)
        time.sleep(3)
        set_clock_offset(off, 0)
        n = len(cycles(db))
        after = [r for r in wait_cycles(db, n + 3, 20, d) if r[0] < time.time() + 60][-3:]
        tap.ok(len(after) == 3 and all(near_now(ts) and cl != UNSYNCED for ts, cl in after),
               "after 100 years ahead for 3 s, cycles are stamped with the true time: %s" %
               after, d.log_text())
        tap.ok(d.stop() == 0, "clean stop")
        d = daemon(db, "restart")
        n = len(cycles(db))
        after = [r for r in wait_cycles(db, n + 3, 20, d) if r[0] < time.time() + 60][-3:]
        tap.ok(len(after) == 3 and all(near_now(ts) and cl != UNSYNCED for ts, cl in after),
               "and after a restart: %s" % after, d.log_text())
        d.stop()

        # A restart with the clock a year ahead (a garbage RTC): the saved anchor plus the
        # elapsed boot time says it is a glitch; the true time is trusted again at once.
        set_clock_offset(off, YEAR)
        d = daemon(db, "restart-ahead")
        ahead = wait_for(lambda: [r for r in cycles(db) if r[0] > time.time() + YEAR / 2 and
                                  r[0] < time.time() + 2 * YEAR], 10, step=0.05)
        set_clock_offset(off, 0)
        tap.ok(ahead and all(cl == UNSYNCED for _, cl in ahead),
               "a restart a year ahead: its cycles are unsynced (%d)" % len(ahead or []),
               d.log_text())
        n = len(cycles(db))
        after = [r for r in wait_cycles(db, n + 3, 20, d) if r[0] < time.time() + 60][-3:]
        tap.ok(len(after) == 3 and all(near_now(ts) and cl != UNSYNCED for ts, cl in after),
               "and the true time is followed again: %s" % after, d.log_text())
        d.stop()
        ok, detail = check_database(db)
        tap.ok(ok, "database whole", detail)

        # thermlog repair: a dry run changes nothing, the real run removes the future cycles.
        future = len([r for r in cycles(db) if r[0] > time.time() + 3600])
        tap.ok(future >= 2, "future cycles to repair: %d" % future)
        total = len(cycles(db))
        r = subprocess.run([thermlog, "--db", db, "repair", "--drop-after", "now", "--dry-run"],
                           capture_output=True, text=True)
        tap.ok(r.returncode == 0 and ("%d cycles" % future) in r.stdout and
               len(cycles(db)) == total, "repair --dry-run reports %d cycles and changes "
               "nothing" % future, r.stdout + r.stderr)
        r = subprocess.run([thermlog, "--db", db, "repair", "--drop-after", "now"],
                           capture_output=True, text=True)
        left = [r for r in cycles(db) if r[0] > time.time() + 3600]
        tap.ok(r.returncode == 0 and not left and len(cycles(db)) == total - future,
               "repair --drop-after now removes them", r.stdout + r.stderr)
        ok, detail = check_database(db)
        tap.ok(ok, "database whole after the repair", detail)
        r = subprocess.run([thermlog, "--db", db, "repair", "--drop-after", "yesterday-ish"],
                           capture_output=True, text=True)
        tap.ok(r.returncode == 2 and "--drop-after" in r.stderr, "a bad time is a usage error",
               r.stderr)


main(run)
