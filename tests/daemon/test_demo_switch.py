#!/usr/bin/python3
"""thermlogd --demo's switch from the backfilled history to the live loop is seamless: started
(on a shifted clock, the test hook) 40 s before an sdxl-image run of the simulated workload
ends, the throttle episode that run holds open goes on as one episode (not closed at the switch
and opened again), the cadence goes on without a gap or a spacing shorter than the live
interval (no "mixes intervals from 1 s" warning, no data gap in lifetime's warnings), and the
run, under way at the switch, ends live with its energy covering all of it.
usage: test_demo_switch.py THERMLOGD"""
import json
import os
import signal
import sys
import time
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from thermlog_test import Daemon, Workdir, cycles, main, query, set_clock_offset, \
    wait_for  # noqa: E402

EXE = sys.argv[1]
BEFORE_END = 40  # the switch this long before the run's end


def get(base, path):
    with urllib.request.urlopen(base + path, timeout=60) as r:
        return json.load(r)


def started(d, timeout=120):
    """The URL the demo prints once its first live cycle is stored."""
    return wait_for(lambda: open(d.out_path).read().strip() or None, timeout, 0.2)


def run(tap):
    with Workdir("thermlog-demo-switch.") as wd:
        # A week of the seed's workload, to pick a run from.
        db = os.path.join(wd, "week.db")
        d = Daemon(EXE, wd, ["--demo", "--db", db, "--listen", "127.0.0.1:0", "--seed", "7"],
                   name="week").start()
        if not tap.ok(started(d), "the demo starts", d.log_text()):
            return
        d.stop()
        synced = [t for t, cl in cycles(db) if cl == 1]
        sdxl = query(db, "SELECT start_ms / 1000, end_ms / 1000 FROM runs WHERE label = "
                     "'sdxl-image' AND status = 'ok' ORDER BY start_ms")
        mid = [r for r in sdxl if synced[0] + 86400 < r[0] and r[1] + 3600 < synced[-1]]
        if not tap.ok(mid, "the week has sdxl-image runs to start inside (%d)" % len(mid)):
            return
        rs, re_ = mid[len(mid) // 2]
        switch = re_ - BEFORE_END

        # The demo again, its clock at 40 s before that run's end.
        off = os.path.join(wd, "offset")
        set_clock_offset(off, switch - int(time.time()))
        sdb = os.path.join(wd, "switch.db")
        d = Daemon(EXE, wd, ["--demo", "--db", sdb, "--listen", "127.0.0.1:0", "--seed", "7"],
                   name="switch", env={"THERMLOG_TEST_CLOCK_OFFSET_FILE": off}).start()
        base = started(d)
        if not tap.ok(base, "the demo starts on the shifted clock", d.log_text()):
            return
        live_from = min(t for t, _ in cycles(sdb) if t > switch - 60)

        # The run under way at the switch ends live, and its episodes close, within minutes.
        def settled():
            # (replayed on the 5 s grid: started up to 5 s after the history's start)
            ended = query(sdb, "SELECT id, energy_coverage, energy_method FROM runs WHERE "
                          "label = 'sdxl-image' AND start_ms / 1000 BETWEEN ? AND ? AND "
                          "status = 'ok'", (rs - 5, rs + 5))
            eps = query(sdb, "SELECT domain, start_ts, end_ts FROM throttle_episodes WHERE "
                        "domain LIKE 'cpufreq/policy%' AND start_ts >= ? AND start_ts <= ?",
                        (rs, re_))
            return (ended, eps) if ended and eps and all(e[2] for e in eps) else None
        got = wait_for(settled, 150, 0.5)
        if not tap.ok(got, "the run under way at the switch ends live, its episodes close",
                      "%s\nruns %s\nepisodes %s" % (
                          d.log_text()[-1500:], query(sdb, "SELECT id, label, status, "
                                                      "start_ms, end_ms FROM runs WHERE "
                                                      "end_ms IS NULL OR end_ms / 1000 > ?",
                                                      (switch - 3600,)),
                          query(sdb, "SELECT domain, start_ts, end_ts FROM "
                                "throttle_episodes WHERE coalesce(end_ts, last_seen) > ?",
                                (switch - 3600,)))):
            return
        ended, eps = got
        times = [t for (t,) in query(sdb, "SELECT ts_ms FROM run_samples WHERE ts_ms BETWEEN ? "
                                     "AND ? ORDER BY ts_ms", (rs * 1000, re_ * 1000))]
        # (a gap for the energy: over 2.5 intervals, ENERGY_MAX_S)
        apart = [(a, b) for a, b in zip(times, times[1:]) if b - a > 12500]
        tap.ok(ended[0][1] == 1 and not apart,
               "its energy covers all of it (coverage %r, %s), its fast samples never a gap apart "
               "across the switch" % (ended[0][1], ended[0][2]),
               (ended, "switch %d" % switch, apart[:10]))
        per = {}
        for dom, s, e in eps:
            per.setdefault(dom, []).append((s, e))
        split = {k: v for k, v in per.items() if len(v) != 1}
        through = {k: v for k, v in per.items() if not (v[0][0] < switch <= v[0][1])}
        tap.ok(per and not split and not through,
               "one episode per big policy from inside the run, across the switch (%d)"
               % switch, per)
        # The cadence across the switch: the minutes, then the live interval, no shorter
        # spacing and no gap; lifetime says no gap.
        stats = get(base, "api/v1/stats?from=%d&to=%d&channel=thermal/soc-thermal"
                    % (switch - 600, live_from + 60))
        tap.ok(stats["longest_gap_s"] == 0 and stats["coverage"] == 1,
               "stats: no gap across the switch, the window covered", stats)
        warns = [w for c in get(base, "api/v1/lifetime")["capacitors"] for w in c["warnings"]
                 if w["code"] == "data_gaps"]
        tap.ok(not warns, "lifetime reports no data gap", warns)
        spacing = [b - a for (a, _), (b, _) in zip(cycles(sdb), cycles(sdb)[1:])
                   if a >= switch - 180]
        tap.ok(spacing and min(spacing) >= 5, "every spacing across the switch at least the live "
               "interval: %s" % spacing[:8])
        tap.ok(d.stop(signal.SIGTERM) == 0, "exit 0")


main(run)
