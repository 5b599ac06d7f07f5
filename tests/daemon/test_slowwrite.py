#!/usr/bin/python3
"""A commit the disk holds for 1.5 s misses cycles at a 1 s interval, and the daemon says which
stage of its loop took the time: the notice names "writing the cycle to the database" and how
long it took, so a miss in the field points at what to move off the loop.

The slow write is tests/lib/slowsync.c LD_PRELOADed (its path the third argument): a write to
the database's WAL sleeps 1.5 s, at most once every 3 s. Then a sysfs file that takes 1.5 s to
read in every cycle: the first notice, which follows the first cycle (run before the loop),
names that cycle's step and stage."""
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from thermlog_test import Workdir, main, preloaded_daemon, wait_cycles, wait_for

NOTICE = (r"notice: (\d+) cycles? missed \(\S+ to \S+\): (\d+) ms from one cycle to the next, "
          r"the loop woke too late for them \(its longest step meanwhile took (\d+) ms, its "
          r"longest stage ([a-z' (),]+): (\d+) ms\)")


def run(tap):
    exe, fixture, shim = sys.argv[1], sys.argv[2], sys.argv[3]
    with Workdir("thermlog-slowwrite.") as wd:
        d, db = preloaded_daemon(exe, fixture, wd, shim,
                                 {"THERMLOG_TEST_WAL_WRITE_DELAY_MS": "1500"})
        tap.ok(len(wait_cycles(db, 3, 40, d)) >= 3, "cycles are stored", d.log_text())
        tap.ok(wait_for(lambda: re.search(NOTICE, d.log_text()), 30),
               "a slow commit misses cycles, said", d.log_text())

        def stages():
            found = re.findall(NOTICE, d.log_text())
            return [(f[3], int(f[4]), int(f[2])) for f in found]

        def named():
            return [s for s in stages() if s[0] == "writing the cycle to the database"]
        # A loaded machine may also starve the process for a second: that miss is said too,
        # with a short step ("the loop woke too late"), before or after the write's own.
        tap.ok(wait_for(named, 30),
               "a notice names the cycle's write as the longest stage %s" % stages(),
               d.log_text())
        named = named()
        tap.ok(named and all(1400 <= ms <= step for _, ms, step in named),
               "with how long it took (%s ms), within its step" %
               [ms for _, ms, _ in named])
        tap.ok(d.stop() == 0, "clean stop")
    # A sysfs file that takes 1.5 s to read, in every cycle: the first cycle, which runs
    # before the loop, is held too, and its step counts as the loop's first (it said 0 ms).
    with Workdir("thermlog-slowread.") as wd:
        d, db = preloaded_daemon(exe, fixture, wd, shim,
                                 {"THERMLOG_TEST_READ_DELAY_MS": "1500",
                                  "THERMLOG_TEST_READ_DELAY_FILE": "/thermal_zone0/temp"})
        tap.ok(wait_for(lambda: re.search(r"cycles? missed", d.log_text()), 40),
               "a slow read misses cycles, said", d.log_text())
        first = re.search(r"notice: \d+ cycles? missed .*its longest step meanwhile took (\d+) "
                          r"ms(?:, its longest stage ([a-z' (),]+): (\d+) ms)?", d.log_text())
        tap.ok(first and int(first.group(1)) >= 1400 and
               first.group(2) == "reading the board's files",
               "the first notice has the first cycle's step and stage", d.log_text())
        tap.ok(d.stop() == 0, "clean stop")


main(run)
