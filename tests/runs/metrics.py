#!/usr/bin/python3
"""A run's metrics from every way in, against a real thermlogd on a copied fixture tree: a shell
script writes them to $THERMLOG_METRICS (lines, and one JSON object), `thermlog run --metric`,
`thermlog run stop --metric`, `thermlog runs metric ID`, and a job log's metric: columns. A bad
line is named with its line number and the run and its other metrics are kept; a unit other
than the name's is refused; `runs stats --json` equals numpy's type 7 over the values of all
three sources; `runs compare` gives the ratio of medians with a bootstrap interval that holds
the true ratio of two seeded samples.

usage: metrics.py THERMLOGD THERMLOG FIXTURES_DIR
"""
import json
import os
import shutil
import subprocess
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from thermlog_test import Daemon, Workdir, main, query, wait_for, write_config  # noqa: E402

THERMLOGD, THERMLOG, FIXTURES = sys.argv[1:4]

SCRIPT = """#!/bin/sh
# a benchmark that measures itself: its figures go to the file thermlog run names
printf 'latency %s ms\\nthis line is not a metric\\nthroughput %s img/h\\nbad nan\\n' \\
    "$LATENCY" "$THROUGHPUT" >> "$THERMLOG_METRICS"
exit "${EXIT:-0}"
"""

JSON_SCRIPT = """#!/bin/sh
printf '{"latency": {"value": %s, "unit": "ms"},\\n "throughput": %s}\\n' "$LATENCY" \\
    "$THROUGHPUT" > "$THERMLOG_METRICS"
"""


def numpy_summary(values):
    v = np.array(values, dtype=float)
    return {"n": len(v), "mean": float(np.mean(v)), "p50": float(np.percentile(v, 50)),
            "p95": float(np.percentile(v, 95)), "min": float(np.min(v)), "max": float(np.max(v))}


def same(got, want):
    bad = [k for k in ("n", "p50", "p95", "min", "max") if got[k] != want[k]]
    if abs(got["mean"] - want["mean"]) > 1e-12 * max(1.0, abs(want["mean"])):
        bad.append("mean")
    return bad


def run(tap):
    with Workdir("thermlog-metrics.") as wd:
        tree = os.path.join(wd, "sys")
        shutil.copytree(os.path.join(FIXTURES, "rock5c"), tree, symlinks=True)
        db = os.path.join(wd, "thermlog.db")
        cfg = write_config(os.path.join(wd, "thermlog.yaml"),
                           extra="sysfs_root: %s\ndatabase: %s\nhttp:\n  listen: 127.0.0.1:0\n"
                           % (tree, db))
        sock = os.path.join(wd, "run", "thermlog.sock")
        d = Daemon(THERMLOGD, wd, ["-c", cfg]).start()
        tap.ok(wait_for(lambda: os.path.exists(sock) and "first cycle stored" in d.log_text(),
                        30), "the daemon listens on its runs socket", d.log_text())
        env = dict(os.environ, TMPDIR=wd)

        def tl(*args, extra_env=None):
            e = dict(env, **(extra_env or {}))
            return subprocess.run([THERMLOG, "-c", cfg, *args], capture_output=True, text=True,
                                  env=e, timeout=60)

        script = os.path.join(wd, "bench.sh")
        with open(script, "w") as f:
            f.write(SCRIPT)
        os.chmod(script, 0o755)
        json_script = os.path.join(wd, "bench-json.sh")
        with open(json_script, "w") as f:
            f.write(JSON_SCRIPT)
        os.chmod(json_script, 0o755)

        latencies, throughputs = [], []
        # The command's own file: five runs, a bad line each, another exit status once.
        for i, (lat, thr) in enumerate([(12.5, 3.25), (13.75, 3.5), (11.0, 3.0), (15.5, 2.75),
                                        (12.0, 3.125)]):
            p = tl("run", "--label", "bench", "--metric", "model_gb=7.5", "--", script,
                   extra_env={"LATENCY": str(lat), "THROUGHPUT": str(thr),
                              "EXIT": "3" if i == 3 else "0"})
            if i == 0:
                tap.ok(p.returncode == 0, "the wrapped script's run ends ok", p.stderr)
                tap.ok("THERMLOG_METRICS:2:" in p.stderr and "THERMLOG_METRICS:4:" in p.stderr
                       and "THERMLOG_METRICS:1:" not in p.stderr and
                       "THERMLOG_METRICS:3:" not in p.stderr,
                       "each bad line of the file is named by its line number", p.stderr)
            if i == 3:
                tap.ok(p.returncode == 3, "the command's exit status passes through", p.stderr)
                continue  # a failed run: its metrics are kept, never in the ok figures
            latencies.append(lat)
            throughputs.append(thr)
        rows = query(db, "SELECT r.id, r.status, m.name, m.value, m.unit FROM runs r JOIN "
                     "run_metrics m ON m.run_id = r.id ORDER BY r.id, m.name")
        first = [r for r in rows if r[0] == rows[0][0]]
        tap.ok([(r[2], r[3], r[4]) for r in first] ==
               [("latency", 12.5, "ms"), ("model_gb", 7.5, ""), ("throughput", 3.25, "img/h")],
               "the file's good lines and --metric are stored with the run, its bad lines "
               "left out", rows)
        failed = [r for r in rows if r[1] == "failed"]
        tap.ok(len(failed) == 3 and ("latency", 15.5, "ms") in [(r[2], r[3], r[4]) for r in
                                                                   failed],
               "a failed run keeps its metrics", failed)
        left = [n for n in os.listdir(wd) if n.startswith("thermlog-metrics.")]
        tap.ok(left == [], "the private metrics files are removed", left)

        # One JSON object instead of lines.
        p = tl("run", "--label", "bench", "--", json_script,
               extra_env={"LATENCY": "14.25", "THROUGHPUT": "3.375"})
        tap.ok(p.returncode == 0 and "NOT" not in p.stderr, "a JSON object of metrics is read",
               p.stderr)
        latencies.append(14.25)
        throughputs.append(3.375)

        # run start / run stop --metric, and runs metric on an ended run.
        p = tl("run", "start", "--label", "bench")
        rid = p.stdout.strip()
        p = tl("run", "stop", rid, "--exit", "0", "--metric", "latency=10.5ms",
               "--metric", "throughput=3.0625")
        stopped = json.loads(p.stdout) if p.returncode == 0 else {}
        tap.ok(stopped.get("metrics", {}).get("latency") == {"value": 10.5, "unit": "ms"} and
               stopped["metrics"]["throughput"]["unit"] == "img/h",
               "run stop --metric records them; a metric without a unit takes its name's",
               p.stdout + p.stderr)
        latencies.append(10.5)
        throughputs.append(3.0625)
        p = tl("runs", "metric", rid, "quality=0.985", "latency=10.75")
        got = json.loads(p.stdout) if p.returncode == 0 else {}
        tap.ok(got.get("metrics", {}).get("quality", {}).get("value") == 0.985 and
               got["metrics"]["latency"] == {"value": 10.75, "unit": "ms"},
               "runs metric adds a metric to an ended run and replaces one it had",
               p.stdout + p.stderr)
        latencies[-1] = 10.75
        p = tl("runs", "metric", rid, "latency=2s")
        tap.ok(p.returncode == 1 and "409" in p.stderr and "'ms'" in p.stderr,
               "a metric in another unit than its name's is refused (409), naming the unit",
               p.stderr)
        p = tl("runs", "metric", rid, "latency=abc")
        tap.ok(p.returncode == 2 and "latency" in p.stderr, "a value that is no number is a "
               "usage error", p.stderr)
        p = tl("runs", "metric", "999999", "latency=1")
        tap.ok(p.returncode == 1 and "404" in p.stderr, "an unknown run is 404", p.stderr)
        p = tl("run", "--label", "bench", "--metric", "oops", "--", "true")
        tap.ok(p.returncode == 2 and "NAME=VALUE" in p.stderr,
               "a bad --metric stops before the command runs", p.stderr)

        # A job log's metric: columns join the same label.
        log = os.path.join(wd, "jobs.csv")
        imported = [(16.0, 2.5), (9.75, 3.75), (12.25, 3.25)]
        with open(log, "w") as f:
            f.write("start,end,status,label,metric:latency (ms),metric:throughput,seed\n")
            for k, (lat, thr) in enumerate(imported):
                f.write("%d,%d,ok,bench,%sms,%s,%d\n" % (1790812800 + 600 * k,
                                                         1790812900 + 600 * k, lat, thr, k))
            f.write("1790820000,1790820100,ok,bench,12x,3,9\n")
        p = tl("runs", "import", log)
        tap.ok(p.returncode == 1 and "jobs.csv:5:" in p.stderr and "latency" in p.stderr,
               "a bad metric cell is a bad row named by its line", p.stderr)
        p = tl("runs", "import", "--skip-bad", log)
        tap.ok(p.returncode == 0 and "3 imported" in p.stdout, "the good rows import",
               p.stdout + p.stderr)
        latencies += [x[0] for x in imported]
        throughputs += [x[1] for x in imported]
        conflict = os.path.join(wd, "conflict.csv")
        with open(conflict, "w") as f:
            f.write("start,end,status,label,metric:latency (s)\n1790830000,1790830100,ok,x,1\n")
        p = tl("runs", "import", conflict)
        tap.ok(p.returncode == 1 and "conflict.csv:2:" in p.stderr and "'ms'" in p.stderr,
               "a log giving a metric another unit than the database's is refused by line",
               p.stderr)

        p = tl("runs", "stats", "--label", "bench", "--json", "--percentile", "90")
        lab = json.loads(p.stdout)["labels"][0] if p.returncode == 0 else {}
        metrics = {m["name"]: m for m in lab.get("metrics", [])}
        for name, values, unit in (("latency", latencies, "ms"),
                                   ("throughput", throughputs, "img/h")):
            m = metrics.get(name, {})
            want = numpy_summary(values)
            bad = same(m, want) if m else ["missing"]
            tap.ok(not bad and m["unit"] == unit and
                   m["p90"] == float(np.percentile(np.array(values), 90)),
                   "runs stats --json: %s over the file, the command line and the job log "
                   "equals numpy's type 7 (n, mean, p50, p95, p90, min, max)" % name,
                   "differ: %s\ngot %s\nwant %s" % (bad, m, want))
        p = tl("runs", "stats", "--label", "bench")
        tap.ok(p.returncode == 0 and any(x.split()[:2] == ["latency", "ms"]
                                         for x in p.stdout.splitlines()),
               "runs stats prints the metrics table", p.stdout)
        d.stop()

        # Two boards: B's metric is 1.25 times A's in distribution. Then other known
        # distributions and ratios: a skewed gamma (B 0.8 times A) and a uniform (the same).
        rng = np.random.default_rng(20261201)

        def boards(tag, ratio, draw):
            dbs = []
            for name, scale in (("a", 1.0), ("b", ratio)):
                path = os.path.join(wd, "%s-%s-jobs.csv" % (tag, name))
                with open(path, "w") as f:
                    f.write("start,end,status,label,metric:images_per_h (img/h)\n")
                    for k in range(40):
                        v = scale * draw()
                        f.write("%d,%d,ok,gen,%r\n" % (1790812800 + 600 * k,
                                                       1790813000 + 600 * k, v))
                bdb = os.path.join(wd, "%s-%s.db" % (tag, name))
                subprocess.run([THERMLOG, "--db", bdb, "runs", "import", path], check=True,
                               capture_output=True)
                dbs.append(bdb)
            p = subprocess.run([THERMLOG, "--db", dbs[0], "runs", "compare", "--label", "gen",
                                "--json", dbs[1]], capture_output=True, text=True)
            c = json.loads(p.stdout) if p.returncode == 0 else {}
            m = [x for x in c.get("metrics", []) if x["name"] == "images_per_h"]
            return dbs, m, (m[0]["ratio"] if m and m[0]["ratio"] else {})

        dbs, m, r = boards("lognormal", 1.25, lambda: 100 * rng.lognormal(0, 0.05))
        tap.ok(r and r["ci_low"] <= 1.25 <= r["ci_high"] and r["ci_high"] - r["ci_low"] < 0.1,
               "runs compare: the 95 % interval of the metric's ratio of medians holds the "
               "true 1.25", json.dumps(m))
        tap.ok(r and abs(r["ratio"] - r["median_other"] / r["median_here"]) < 1e-12,
               "the ratio is the other board's median over this one's", json.dumps(r))
        for tag, ratio, draw in (("gamma", 0.8, lambda: 25 * rng.gamma(4.0)),
                                 ("uniform", 1.0, lambda: rng.uniform(90, 110))):
            _, m2, r2 = boards(tag, ratio, draw)
            tap.ok(r2 and r2["ci_low"] <= ratio <= r2["ci_high"] and r2["ci_low"] < r2["ci_high"],
                   "a %s metric, B %g times A: the interval holds the true ratio" % (tag, ratio),
                   json.dumps(m2))
        p = subprocess.run([THERMLOG, "--db", dbs[0], "runs", "compare", "--label", "gen",
                            dbs[1]], capture_output=True, text=True)
        tap.ok("metric images_per_h ratio" in p.stdout, "the text names the metric's ratio",
               p.stdout)


main(run)
