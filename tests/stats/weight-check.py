#!/usr/bin/python3
"""Sample and time weighting of `thermlog stats`, coverage in time, and window errors (TAP).

An hour at 60 s and 70 degrees, then an hour at 5 s and 40 degrees: by samples the mean is
42.31, by time (and in `thermlog lifetime`) 54.76; coverage is 100 % with no gap. Then a
seeded history of 1 s, 5 s and 60 s stretches with holes, against a reference computed here:
the time each sample stands for (the spacing since the one before; a spacing over 1.5 times
the previous one is a gap and the sample keeps the previous sample's time), numpy's weighted
mean and std, and numpy's percentile(x, q, weights=w, method='inverted_cdf') (numpy >= 2.0;
before, the same definition written out below and checked on a hand case).

usage: weight-check.py THERMLOG [SEED]
"""
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from thermlog_test import done, ok  # noqa: E402

thermlog = sys.argv[1]
seed = int(sys.argv[2]) if len(sys.argv) > 2 else random.randrange(1 << 30)
rng = random.Random(seed)
print(f"# seed {seed} (repeat: weight-check.py THERMLOG {seed})")

T0 = 1795737600  # 2026-11-27T00:00:00Z
KEY = "thermal/soc-thermal"


def run(*args, check=True):
    p = subprocess.run([thermlog, *args], capture_output=True, text=True)
    if check and p.returncode != 0:
        raise SystemExit(f"Bail out! thermlog {' '.join(args)}: rc {p.returncode}: {p.stderr}")
    return p


def import_points(tmp, name, points):
    path = os.path.join(tmp, name + ".csv")
    with open(path, "w") as f:
        f.write("unix,channel,value,unit\n")
        for ts, v in points:
            f.write(f"{ts},{KEY},{v:.3f},celsius\n")
    db = os.path.join(tmp, name + ".db")
    run("--db", db, "import", path)
    return db


def stand_for(times):
    """Seconds each sample stands for and the unobserved seconds before it (lifetime's rule)."""
    w, gaps, prev_spacing, prev_dt = [], [], 0, 0
    for i, ts in enumerate(times):
        if i == 0:
            dt, gap = 0, 0
        else:
            spacing = ts - times[i - 1]
            if prev_spacing > 0 and spacing * 2 > prev_spacing * 3:
                dt, gap = prev_dt, spacing - prev_dt
            else:
                dt, gap = spacing, 0
            prev_spacing = spacing
        prev_dt = dt
        w.append(dt)
        gaps.append(gap)
    return w, gaps


def inverted_cdf(x, w, q):
    """numpy's weighted 'inverted_cdf': the first sorted value whose cumulative weight over
    the total reaches q / 100 (cdf[i-1] < q/100 <= cdf[i]), in numpy's float steps."""
    if tuple(int(v) for v in np.__version__.split(".")[:2]) >= (2, 0):
        return float(np.percentile(x, q, weights=w, method="inverted_cdf"))
    order = np.argsort(x, kind="stable")
    xs, ws = np.asarray(x, dtype=float)[order], np.asarray(w, dtype=float)[order]
    cdf = np.cumsum(ws)
    cdf /= cdf[-1]
    i = int(np.searchsorted(cdf, q / 100.0, side="left"))
    return float(xs[min(i, len(xs) - 1)])


def example(tmp):
    points = [(T0 + 60 * i, 70.0) for i in range(60)]
    points += [(T0 + 3600 + 5 * i, 40.0) for i in range(720)]
    db = import_points(tmp, "example", points)
    s = json.loads(run("--db", db, "stats", "--json").stdout)
    c = s["channels"][0]
    ok(s.get("weight") == "samples" and abs(c["mean"] - 42.31) < 0.005,
       "by samples (the default) the mean is 42.31", s)
    ok(s["coverage"] == 1 and s["longest_gap_s"] == 0 and s.get("mixed_intervals"),
       "coverage in time: 100 %, no gap, mixed intervals", s)
    # expected per stretch at its own interval (an hour at 60 s, an hour at 5 s: 60 + 720), not
    # the window over the median interval (1440 at 5 s)
    ok(s["cycles"] == 780 and s["expected_cycles"] == 780,
       "780 cycles of 780 expected, each stretch at its own interval (%s of %s)"
       % (s["cycles"], s["expected_cycles"]))
    text = run("--db", db, "stats").stdout
    ok("coverage 100.0 %, no gaps" in text and "weighted by samples" in text
       and "mixes sampling intervals from 5 s to 60 s" in text,
       "text: coverage, the weighting and the mixed-interval warning", text)
    t = json.loads(run("--db", db, "stats", "--json", "--weight", "time").stdout)
    tc = t["channels"][0]
    ok(t["weight"] == "time" and "weighted by time" in run("--db", db, "stats", "--weight",
                                                            "time").stdout,
       "JSON and text state the time weighting", t)
    cfg = os.path.join(tmp, "thermlog.yaml")
    with open(cfg, "w") as f:
        f.write(f"capacitors:\n  - name: C1\n    sensor: {KEY}\n    rated_life_h: 2000\n"
                "    rated_temp_c: 105\n")
    life = json.loads(run("--db", db, "-c", cfg, "lifetime", "--json").stdout)["capacitors"][0]
    ok(abs(tc["mean"] - 54.76) < 0.005 and abs(tc["mean"] - life["mean_temp_c"]) < 0.01,
       f"by time the mean is 54.76, as lifetime's ({tc['mean']} vs {life['mean_temp_c']})")
    ok(tc["p95"] == life["p95_temp_c"] == 70 and tc["p50"] == 40,
       "by time p95 equals lifetime's, p50 is 40", (tc, life["p95_temp_c"]))
    p = run("--db", db, "stats", "--weight", "both", check=False)
    ok(p.returncode == 2 and "bad --weight 'both'" in p.stderr, "a bad --weight is named",
       p.stderr)
    # --percentile 50 and 95 are the median and p95 columns already.
    text = run("--db", db, "stats", "--percentile", "50", "--percentile", "95",
               "--percentile", "99").stdout
    head = [line for line in text.splitlines() if line.startswith("channel")][0].split()
    ok(head.count("median") == 1 and "p50" not in head and head.count("p95") == 1
       and "p99" in head, "no repeated percentile column", head)
    raw = run("--db", db, "stats", "--json", "--percentile", "50", "--percentile", "95").stdout
    ok(raw.count('"p50"') == 1 and raw.count('"p95"') == 1, "no repeated JSON key", raw)
    return db


def seeded(tmp):
    """Stretches at 1 s, 5 s and 60 s with holes, values a random walk in 0.5 degree steps."""
    times, ts, v, points = [], T0 + 17, 50.0, []
    for _ in range(14):
        step = rng.choice([1, 5, 60])
        for _ in range(rng.randrange(20, 400 if step < 60 else 60)):
            times.append(ts)
            v = min(90, max(20, v + rng.choice([-0.5, 0, 0.5])))
            points.append((ts, v))
            ts += step
        ts += rng.choice([0, 0, 1800, 7200])  # sometimes a hole
    db = import_points(tmp, "seeded", points)
    x = np.array([v for _, v in points])
    w, gaps = stand_for(times)
    lo, hi = times[0], times[-1] + 1
    t = json.loads(run("--db", db, "stats", "--json", "--weight", "time", "--percentile", "99",
                       "--percentile", "0.1", "--percentile", "37.5").stdout)
    c = t["channels"][0]
    mean = float(np.average(x, weights=w))
    std = float(np.sqrt(np.average((x - mean) ** 2, weights=w)))
    bad = []
    for k, want in [("mean", mean), ("stddev", std)]:
        if abs(c[k] - want) > 1e-9 * max(abs(want), 1):
            bad.append(f"{k}: got {c[k]} want {want}")
    for q in [50, 95, 99, 0.1, 37.5]:
        got, want = c["p%g" % q], inverted_cdf(x, w, q)
        if got != want:
            bad.append(f"p{q}: got {got} want {want}")
    ok(not bad, f"time-weighted mean, std, percentiles = numpy ({len(x)} samples)", bad)
    s = json.loads(run("--db", db, "stats", "--json").stdout)
    want_cov = (hi - lo - sum(gaps)) / (hi - lo)
    ok(abs(s["coverage"] - want_cov) < 1e-12 and s["longest_gap_s"] == max(gaps),
       f"coverage {s['coverage']:.6f} and longest gap {s['longest_gap_s']} s in time "
       f"(want {want_cov:.6f}, {max(gaps)} s)")
    ok(s["channels"][0]["mean"] == float(np.mean(x)) or
       abs(s["channels"][0]["mean"] - float(np.mean(x))) < 1e-9 * abs(np.mean(x)),
       "by samples the plain numpy mean")


def hand_reference():
    # cdf 0.25, 0.5, 1 over the values 1, 2, 3: p25 -> 1, p50 -> 2, p50.1 -> 3.
    x, w = [3, 1, 2], [2, 1, 1]
    got = [inverted_cdf(x, w, q) for q in (0, 25, 25.1, 50, 50.1, 100)]
    ok(got == [1, 1, 2, 2, 3, 3], "the reference inverted_cdf on a hand case", got)
    w2, g2 = stand_for([0, 60, 120, 125, 130, 300, 305])
    ok(w2 == [0, 60, 60, 5, 5, 5, 5] and g2 == [0, 0, 0, 0, 0, 165, 0],
       "the reference stand-for rule on a hand case", (w2, g2))


def windows(tmp, db):
    end = T0 + 3600 + 5 * 719
    p = run("--db", db, "stats", "--from", str(end + 86400), "--to", str(end + 86400 + 60),
            check=False)
    ok(p.returncode == 0 and p.stdout.startswith("0 samples")
       and "the stored history runs from 2026-11-27T00:00:00Z to 2026-11-27T01:59:55Z"
       in p.stdout, "a window past the history is empty, no error, and says where it lies",
       p.stdout + p.stderr)
    p = run("--db", db, "stats", "--to", str(T0 - 3600), check=False)
    ok(p.returncode == 2 and "2026-11-26T23:00:00Z" in p.stderr and "history runs from "
       "2026-11-27T00:00:00Z" in p.stderr and "(1795" not in p.stderr,
       "an end before the history: ISO times and where the history lies", p.stderr)
    future = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() + 7 * 86400))
    for cmd in (["stats"], ["lifetime"]):
        p = run("--db", db, *cmd, "--from", future, check=False)
        ok(p.returncode == 2 and "--from (" in p.stderr and "is not before now" in p.stderr,
           f"{cmd[0]} --from in the future is refused", p.stderr)
    out = json.loads(run("--db", db, "stats", "--json", "--from", str(T0 + 600)).stdout)
    ok(abs(out["to"] - time.time()) < 60, "with --from alone the window ends now", out["to"])


def gaps_warning(tmp):
    # 60 s samples with one 95 s spacing (jitter, no sample missed) and one missed sample.
    times = [T0 + 60 * i for i in range(30)] + [T0 + 29 * 60 + 95 + 60 * i for i in range(30)]
    db = import_points(tmp, "jitter", [(ts, 50.0) for ts in times])
    cfg = os.path.join(tmp, "thermlog.yaml")
    life = json.loads(run("--db", db, "-c", cfg, "lifetime", "--json").stdout)["capacitors"][0]
    codes = [w["code"] for w in life["warnings"]]
    ok("data_gaps" not in codes, "a 95 s spacing at 60 s is no gap", life["warnings"])
    times.append(times[-1] + 120)
    db = import_points(tmp, "missed", [(ts, 50.0) for ts in times])
    life = json.loads(run("--db", db, "-c", cfg, "lifetime", "--json").stdout)["capacitors"][0]
    msg = [w["message"] for w in life["warnings"] if w["code"] == "data_gaps"]
    ok(msg and "totalling 1.0 min" in msg[0] and "0.0 h" not in msg[0],
       "one missed sample: 1 gap of a minute, not 0.0 h", msg)
    text = run("--db", db, "-c", cfg, "lifetime").stdout
    ok("time-weighted" in text, "lifetime's text says its mean and p95 are time-weighted", text)


def main():
    tmp = tempfile.mkdtemp(prefix="thermlog-weight-")
    try:
        hand_reference()
        db = example(tmp)
        seeded(tmp)
        windows(tmp, db)
        gaps_warning(tmp)
    finally:
        shutil.rmtree(tmp)
    return done()


sys.exit(main())
