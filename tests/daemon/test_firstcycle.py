#!/usr/bin/python3
"""The first cycle is taken at start: /api/v1/latest and /metrics have values within a second of
the server answering, even with a one-minute interval; then cycles follow the grid and no slot
is handled twice."""
import json
import os
import sys
import time
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from thermlog_test import Daemon, Workdir, copy_fixture, cycles, main, wait_cycles, \
    wait_for, write_config


def get(port, path):
    try:
        with urllib.request.urlopen("http://127.0.0.1:%d%s" % (port, path), timeout=2) as r:
            return r.read().decode()
    except OSError:
        return None


def run(tap):
    exe, fixture = sys.argv[1], sys.argv[2]
    with Workdir("thermlog-first.") as wd:
        root = copy_fixture(fixture, os.path.join(wd, "sysfs"))
        db = os.path.join(wd, "t.db")
        cfg = write_config(os.path.join(wd, "t.yaml"), interval="60s")
        d = Daemon(exe, wd, ["-c", cfg, "--sysfs-root", root, "--db", db,
                             "--listen", "127.0.0.1:0"]).start()
        port = d.http_port()  # port 0: the kernel picked it as the daemon bound
        answer = wait_for(lambda: get(port, "/api/v1/latest"), 20, step=0.01)
        t_answer = time.monotonic()
        tap.ok(answer is not None, "the server answers", d.log_text())
        latest = wait_for(lambda: (lambda t: t and json.loads(t)["channels"] and t)(
            get(port, "/api/v1/latest")), 5, step=0.02)
        t_values = time.monotonic()
        tap.ok(latest and t_values - t_answer <= 1.0,
               "/api/v1/latest has values %.2f s after the server answers (interval 60 s)" %
               (t_values - t_answer), d.log_text())
        metrics = get(port, "/metrics") or ""
        ok_lines = [l for l in metrics.splitlines() if l.startswith("thermlog_channel_ok")]
        tap.ok("thermlog_cycles_total 1" in metrics and ok_lines,
               "/metrics has the first cycle's channels", metrics[:2000])
        c = cycles(db)
        tap.ok(len(c) == 1 and abs(c[0][0] - time.time()) <= 2,
               "the first cycle is stored at once, stamped now: %s" % c)
        tap.ok(d.stop() == 0, "clean stop")

        # A short interval: the first cycle at once, then the grid, never a slot twice, also
        # across quick restarts.
        cfg = write_config(os.path.join(wd, "t2.yaml"), interval="2s")
        db = os.path.join(wd, "t2.db")
        for i in range(3):
            d = Daemon(exe, wd, ["-c", cfg, "--sysfs-root", root, "--db", db,
                                 "--listen", "127.0.0.1:0"], name="grid%d" % i).start()
            n = len(cycles(db))
            wait_cycles(db, n + 3, 20, d)
            d.stop()
        c = cycles(db)
        ts = [t for t, _ in c]
        tap.ok(len(ts) >= 9 and ts == sorted(set(ts)), "stamps strictly increase: %s" % ts)
        off_grid = [t for t in ts if t % 2 != 0]
        tap.ok(len(off_grid) <= 3, "besides the first cycle of each start, cycles are on the "
               "2 s grid: %s" % off_grid)
        log = "".join(open(os.path.join(wd, "grid%d.log" % i)).read() for i in range(3))
        tap.ok("not stored" not in log and "small step back" not in log,
               "no refused or skipped cycle around restarts", log)


main(run)
