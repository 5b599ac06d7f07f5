#!/usr/bin/python3
"""thermlog report --compare of two boards, each two years of one-minute samples of 25 channels
(bench-stats --generate-only) and 5,000 runs with a metric and a tag (a generated job log): the
wall time of `thermlog report --compare` beside `thermlog stats --json` over the same window,
each the median of N runs, and their ratio (the target: under 1 s). The per-test figures scan
each run's window, so the runs' count matters more than the history's length.
usage: bench/report-compare.py [BUILD_DIR] [--days N] [--runs-a-side N] [--repeat N]
(the databases go to $TMPDIR or /tmp)"""
import argparse
import os
import random
import resource
import shutil
import statistics
import subprocess
import tempfile
import time

ap = argparse.ArgumentParser()
ap.add_argument("build", nargs="?", default="build")
ap.add_argument("--days", type=int, default=730)
ap.add_argument("--runs-a-side", type=int, default=5000)
ap.add_argument("--repeat", type=int, default=5)
a = ap.parse_args()
thermlog = os.path.join(a.build, "src", "thermlog")
bench = os.path.join(a.build, "bench", "bench-stats")
tmp = tempfile.mkdtemp(prefix="thermlog-bench-compare.")


def job_log(path, first, last, n, slower, seed):
    """@n runs spread over [first, last]: four labels, 10 to 40 minutes, a metric and a tag."""
    rnd = random.Random(seed)
    step = (last - first) // n
    with open(path, "w") as f:
        f.write("start,end,status,label,tag:start,metric:tok_s (tok/s)\n")
        for i in range(n):
            t = first + i * step + rnd.randrange(max(1, step // 4))
            d = int((600 + rnd.random() * 1800) * slower)
            d = min(d, step - 1)
            f.write("%d,%d,%s,job-%d,%s,%.3f\n" % (t, t + d, "ok" if i % 7 else "failed", i % 4,
                                                   "cold" if i % 3 == 0 else "warm",
                                                   30 / slower + rnd.random()))


try:
    dbs = []
    for name, slower, seed in (("a", 1.0, 1), ("b", 1.2, 2)):
        db = os.path.join(tmp, name + ".db")
        subprocess.run([bench, "--days", str(a.days), "--channels", "25", "--db", db,
                        "--generate-only"], check=True, stdout=subprocess.DEVNULL)
        span = subprocess.run([thermlog, "--db", db, "stats", "--json"], check=True,
                              capture_output=True, text=True).stdout
        import json
        s = json.loads(span)
        log = os.path.join(tmp, name + ".csv")
        job_log(log, s["from"] + 3600, s["to"] - 3600, a.runs_a_side, slower, seed)
        subprocess.run([thermlog, "--db", db, "runs", "import", log], check=True,
                       stdout=subprocess.DEVNULL)
        dbs.append(db)

    def median_times(args):
        """The median wall and CPU (user + sys of thermlog) seconds of @args: on a loaded
        machine the wall time is the scheduler's as much as thermlog's, the CPU time is not."""
        walls, cpus = [], []
        for _ in range(a.repeat):
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            t = time.perf_counter()
            subprocess.run([thermlog, "--db", dbs[0]] + args, check=True,
                           stdout=subprocess.DEVNULL)
            walls.append(time.perf_counter() - t)
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpus.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
        return statistics.median(walls), statistics.median(cpus)

    stats = median_times(["stats", "--json"])
    out = os.path.join(tmp, "r.html")
    compare = median_times(["report", "--compare", dbs[1], "--force", "-o", out])
    runs = median_times(["runs", "compare", "--label", "job-1", "--json", dbs[1]])
    print("%d days x 25 channels and %d runs a side; median of %d runs each (wall, CPU)"
          % (a.days, a.runs_a_side, a.repeat))
    print("  thermlog stats --json              %8.1f ms  %8.1f ms CPU" %
          (stats[0] * 1000, stats[1] * 1000))
    print("  thermlog report --compare          %8.1f ms  %8.1f ms CPU  (%.2f x stats, %d bytes)"
          % (compare[0] * 1000, compare[1] * 1000, compare[0] / stats[0], os.path.getsize(out)))
    print("  thermlog runs compare --label L    %8.1f ms  %8.1f ms CPU  (%.2f x stats)"
          % (runs[0] * 1000, runs[1] * 1000, runs[0] / stats[0]))
finally:
    shutil.rmtree(tmp, ignore_errors=True)
