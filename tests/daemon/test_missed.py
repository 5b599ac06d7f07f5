#!/usr/bin/python3
"""Slots the loop takes no cycle at are said and counted: a stopped process (SIGSTOP for 3.5 s)
misses cycles, logged with how late the loop woke and counted in /api/v1/status
(`cycles_missed`) and /metrics (`thermlog_cycles_missed_total`), as many as the database lacks;
a wall clock stepped forward by a second passes a slot, said, not counted as missed.

Uses the daemon's test hook THERMLOG_TEST_CLOCK_OFFSET_FILE for the step (no real clock is
touched)."""
import os
import re
import signal
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from thermlog_test import Workdir, cycles, get, get_json, main, offset_clock_daemon, \
    set_clock_offset, wait_cycles, wait_for


def gaps(db, after):
    ts = [t for t, _ in cycles(db) if t >= after]
    return sum(b - a - 1 for a, b in zip(ts, ts[1:]))


MISSED = (r"notice: (\d+) cycles? missed \(\S+ to \S+\): (\d+) ms from one cycle to the next, "
          r"the loop woke too late for them \(its longest step meanwhile took (\d+) ms"
          r"(?:, its longest stage ([a-z' (),]+): (\d+) ms)?\)")


def stop_notice(d):
    """The notice of the SIGSTOP's misses: two or more cycles (a starved second is one)."""
    return next((m for m in re.finditer(MISSED, d.log_text()) if int(m.group(1)) >= 2), None)


def said(d):
    return sum(int(m.group(1)) for m in re.finditer(MISSED, d.log_text()))


def counted(base):
    return get_json(base + "/api/v1/status").get("cycles_missed")


def metric(base):
    m = re.search(r"^thermlog_cycles_missed_total (\d+)$", get(base + "/metrics").decode(), re.M)
    return int(m.group(1)) if m else None


def run(tap):
    exe, fixture = sys.argv[1], sys.argv[2]
    with Workdir("thermlog-missed.") as wd:
        d, db, off = offset_clock_daemon(exe, fixture, wd)
        base = "http://127.0.0.1:%d" % d.http_port()
        c0 = wait_cycles(db, 3, 20, d)
        tap.ok(len(c0) >= 3, "sampling every second", d.log_text())
        first = c0[0][0]

        d.send(signal.SIGSTOP)
        time.sleep(3.5)
        d.send(signal.SIGCONT)
        tap.ok(wait_for(lambda: stop_notice(d), 10), "the missed cycles are said", d.log_text())
        m = stop_notice(d)
        tap.ok(m and int(m.group(1)) >= 2 and int(m.group(2)) == (int(m.group(1)) + 1) * 1000,
               "how many, and the time between the two cycles around them", d.log_text())
        # (a stop that lands inside a step makes that step long: only its bound is sure)
        tap.ok(m and int(m.group(3)) <= int(m.group(2)),
               "and the loop's longest step meanwhile", d.log_text())
        # (a step with stages names the longest, within the step's time)
        tap.ok(m and (m.group(4) is None or int(m.group(5)) <= int(m.group(3))),
               "and that step's longest stage, if it had one (%s)"
               % (m.group(4) if m else None), d.log_text())
        # Every slot the database lacks is said and counted, the stop's and any a loaded
        # machine adds (a process starved for a second is said the same way): the database,
        # the notices, /api/v1/status and /metrics agree (read again until a cycle settles
        # them).
        wait_cycles(db, len(cycles(db)) + 2, 10, d)
        tap.ok(wait_for(lambda: gaps(db, first) == said(d), 10),
               "as many as the database lacks (%d, said %d)" % (gaps(db, first), said(d)))
        tap.ok(wait_for(lambda: counted(base) == said(d), 10),
               "/api/v1/status counts them (%s)" % counted(base))
        tap.ok(wait_for(lambda: metric(base) == said(d), 10),
               "/metrics counts them (%s)" % metric(base))

        set_clock_offset(off, 1)
        tap.ok(wait_for(lambda: "the wall clock stepped forward by" in d.log_text(), 10),
               "a step of a second forward is said", d.log_text())
        tap.ok("slot passed" in d.log_text(), "the slot it passed is named", d.log_text())
        wait_cycles(db, len(cycles(db)) + 2, 10, d)
        tap.ok(wait_for(lambda: counted(base) == said(d) and
                        gaps(db, first) == said(d) + 1, 10),
               "a step misses no cycle (counted %s, said %d, the database lacks %d)"
               % (counted(base), said(d), gaps(db, first)))
        tap.ok(d.stop() == 0, "clean stop")


main(run)
