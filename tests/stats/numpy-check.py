#!/usr/bin/python3
"""Cross-checks `thermlog stats --json` against numpy on the same values (TAP).

Generates four days of one-minute samples (TSADC-like 1 degree steps, a 0.25 degree
thermocouple, clocks from an OPP table, millivolts, with gaps and missed readings), imports
them, and compares count, mean, population stddev, min, max, max_time and percentiles
(numpy.percentile's default linear method) to 1e-9 relative for raw-only windows and for
windows served from hourly rollups.

usage: numpy-check.py THERMLOG [SEED]
"""
import json
import os
import random
import shutil
import sqlite3
import subprocess
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from thermlog_test import done, ok  # noqa: E402

thermlog = sys.argv[1]
seed = int(sys.argv[2]) if len(sys.argv) > 2 else random.randrange(1 << 30)
rng = random.Random(seed)
print(f"# seed {seed} (repeat: numpy-check.py THERMLOG {seed})")

T0 = 1787184000 + 17 * 60  # 2026-08-20T00:17:00Z: the history starts mid-hour
N = 4 * 1440
OPP = [408000000, 600000000, 816000000, 1008000000, 1200000000, 1416000000, 1608000000,
       1800000000, 2208000000]


def generate():
    """rows: (ts, key, text value, unit); series: key -> list of (ts, float value)."""
    rows, series = [], {}
    temp = 45.0
    opp = 3
    for i in range(N):
        ts = T0 + 60 * i
        if 1500 <= i < 1620:  # two hours without a cycle
            continue
        temp = min(75.0, max(38.0, temp + rng.choice([-1, 0, 0, 1]) * rng.random() * 2))
        values = {
            # TSADC: whole degrees, read in millidegrees
            "thermal/bigcore0-thermal": ("%.3f" % round(temp + 3), "celsius"),
            "thermal/soc-thermal": ("%.3f" % round(temp), "celsius"),
            # MAX31855: quarter degrees
            "iio/maxim_thermocouple/temp": ("%.2f" % (round((temp - 8) * 4) / 4), "celsius"),
            "cpufreq/policy4": ("%d" % OPP[opp], "hertz"),
            "iio/fec10000.saradc/voltage2": ("%.3f" % (1.8 + rng.randrange(-20, 21) / 1000),
                                             "volts"),
        }
        opp = min(len(OPP) - 1, max(0, opp + rng.choice([-1, 0, 0, 0, 1])))
        if i % 53 == 7:
            del values["thermal/soc-thermal"]  # a missed reading
        if i > 3 * 1440:
            del values["iio/fec10000.saradc/voltage2"]  # unplugged on the last day
        for key, (text, unit) in values.items():
            rows.append((ts, key, text, unit))
            series.setdefault(key, []).append((ts, float(text)))
    return rows, series


def run(*args, check=True):
    p = subprocess.run([thermlog, *args], capture_output=True, text=True)
    if check and p.returncode != 0:
        raise SystemExit(f"Bail out! thermlog {' '.join(args)}: rc {p.returncode}: {p.stderr}")
    return p


def close(got, want, scale):
    if got is None:
        return False
    return abs(got - want) <= 1e-9 * max(abs(scale), 1e-300)


def check_window(db, series, start, end, what, extra=()):
    args = ["--db", db, "stats", "--json", "--percentile", "99", "--percentile", "0.1", *extra]
    if start is not None:
        args += ["--from", str(start)]
    if end is not None:
        args += ["--to", str(end)]
    out = json.loads(run(*args).stdout)
    lo = out["from"] if start is None else start
    hi = out["to"] if end is None else end
    by_key = {c["key"]: c for c in out["channels"]}
    for key, points in sorted(series.items()):
        vals = np.array([v for ts, v in points if lo <= ts < hi])
        times = [ts for ts, v in points if lo <= ts < hi]
        got = by_key[key]
        if len(vals) == 0:
            ok(got["count"] == 0 and got["mean"] is None, f"{what}: {key} empty")
            continue
        mean = float(np.mean(vals))
        scale = max(abs(mean), float(np.max(np.abs(vals))))
        want = {
            "mean": mean, "stddev": float(np.std(vals)), "min": float(np.min(vals)),
            "max": float(np.max(vals)), "p50": float(np.percentile(vals, 50)),
            "p95": float(np.percentile(vals, 95)), "p99": float(np.percentile(vals, 99)),
            "p0.1": float(np.percentile(vals, 0.1)),
        }
        bad = [f"{k}: got {got.get(k)!r} want {w!r}" for k, w in want.items()
               if not close(got.get(k), w, scale)]
        if got["count"] != len(vals):
            bad.append(f"count: got {got['count']} want {len(vals)}")
        max_time = times[int(np.argmax(vals))]  # argmax: the first occurrence
        if got["max_time"] != max_time:
            bad.append(f"max_time: got {got['max_time']} want {max_time}")
        ok(not bad, f"{what}: {key} equals numpy ({len(vals)} values)", "\n".join(bad))
    return out


def main():
    tmp = tempfile.mkdtemp(prefix="thermlog-numpy-")
    try:
        rows, series = generate()
        csv_path = os.path.join(tmp, "history.csv")
        with open(csv_path, "w") as f:
            f.write("unix,channel,value,unit\n")
            for ts, key, text, unit in rows:
                f.write(f"{ts},{key},{text},{unit}\n")
        db = os.path.join(tmp, "t.db")
        run("--db", db, "import", csv_path)
        con = sqlite3.connect(db)
        n_blocks = con.execute("SELECT count(DISTINCT block) FROM blocks").fetchone()[0]
        con.close()
        ok(n_blocks >= 90 // 4 - 1, f"import compacted the closed blocks ({n_blocks})")

        last = T0 + 60 * (N - 1)
        # Whole hours of history from their rollups, with raw edges and the last open hour.
        out = check_window(db, series, None, None, "whole history (rollups + raw tail)")
        ok(out["from"] == T0 and out["to"] == last + 1, "default window = stored history")
        ok(out["longest_gap_s"] == 120 * 60, f"longest gap {out['longest_gap_s']} s")
        gaps = {c["key"]: c["longest_gap_s"] for c in out["channels"]}
        ok(gaps["thermal/bigcore0-thermal"] == 120 * 60 and gaps["thermal/soc-thermal"] is None,
           "per-channel longest gap: the cycles' when present in all, else null", gaps)
        check_window(db, series, T0 + 2 * 3600 - T0 % 3600, T0 + 50 * 3600 - T0 % 3600,
                     "48 whole hours (rollups only)")
        check_window(db, series, T0 + 37 * 60 + 11, T0 + 2 * 86400 + 5 * 3600 + 13 * 60,
                     "ragged window (raw edges + rollups)")
        # Raw only: inside one hour, and across the open last hours.
        check_window(db, series, T0 + 3600 + 60, T0 + 3600 + 40 * 60, "inside one hour (raw)")
        check_window(db, series, last - 30 * 60, None, "last half hour (raw)")
        check_window(db, series, None, None, "ISO window", ("--from", "2026-08-21T00:00:00Z",
                                                            "--to", "2026-08-22"))
        # Errors a user meets.
        p = run("--db", db, "stats", "--channel", "thermal/nope", check=False)
        ok(p.returncode == 2 and "unknown channel 'thermal/nope'" in p.stderr,
           "unknown channel: exit 2 and named", p.stderr)
        p = run("--db", db, "stats", "--from", "yesterday-ish", check=False)
        ok(p.returncode == 2 and "bad time for --from: 'yesterday-ish'" in p.stderr,
           "bad time: exit 2 and named", p.stderr)
        p = run("--db", os.path.join(tmp, "none.db"), "stats", check=False)
        ok(p.returncode == 1 and "no database at" in p.stderr, "missing database", p.stderr)
        empty = os.path.join(tmp, "empty.csv")
        with open(empty, "w") as f:
            f.write("time,channel,value\n")
        run("--db", os.path.join(tmp, "e.db"), "import", empty)
        p = run("--db", os.path.join(tmp, "e.db"), "stats", check=False)
        ok(p.returncode == 1 and "holds no samples" in p.stderr, "empty database", p.stderr)
        # The human table shows the same numbers.
        p = run("--db", db, "stats", "--channel", "thermal/*")
        ok(p.stdout.startswith(f"{out['cycles']} samples over ") and "p95" in p.stdout
           and "thermal/soc-thermal" in p.stdout, "human table", p.stdout)
    finally:
        shutil.rmtree(tmp)
    return done()


sys.exit(main())
