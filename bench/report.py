#!/usr/bin/python3
"""thermlog report over a year of one-minute samples of 25 channels (bench-stats
--generate-only) with the 649-run job log imported: the wall time of `thermlog report`
(HTML, and Markdown with its chart) beside `thermlog stats --json` over the same window, each
the median of N runs, and their ratio; then, with one capacitor configured, `thermlog
lifetime --json`, the report and the report with its design review (--lifetime).
usage: bench/report.py [BUILD_DIR] [--days N] [--runs N]   (the database goes to $TMPDIR or /tmp)"""
import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

here = os.path.dirname(os.path.abspath(__file__))
ap = argparse.ArgumentParser()
ap.add_argument("build", nargs="?", default="build")
ap.add_argument("--days", type=int, default=365)
ap.add_argument("--runs", type=int, default=7)
a = ap.parse_args()
thermlog = os.path.join(a.build, "src", "thermlog")
bench = os.path.join(a.build, "bench", "bench-stats")
tmp = tempfile.mkdtemp(prefix="thermlog-bench-report.")
try:
    db = os.path.join(tmp, "year.db")
    subprocess.run([bench, "--days", str(a.days), "--channels", "25", "--db", db,
                    "--generate-only"], check=True, stdout=subprocess.DEVNULL)
    subprocess.run([thermlog, "--db", db, "runs", "import",
                    os.path.join(here, "..", "tests", "fixtures", "runs", "jobs-649.csv")],
                   check=True, stdout=subprocess.DEVNULL)

    def median_wall(args):
        times = []
        for i in range(a.runs):
            t = time.perf_counter()
            subprocess.run([thermlog, "--db", db] + args, check=True, stdout=subprocess.DEVNULL)
            times.append(time.perf_counter() - t)
        return statistics.median(times)

    stats = median_wall(["stats", "--json"])
    html = median_wall(["report", "--over", "30m", "--force", "-o", os.path.join(tmp, "r.html")])
    md = median_wall(["report", "--over", "30m", "--force", "-o", os.path.join(tmp, "r.md")])
    print("%d days x 25 channels, 649 runs; median of %d runs each" % (a.days, a.runs))
    print("  thermlog stats --json        %8.1f ms" % (stats * 1000))
    print("  thermlog report -o r.html    %8.1f ms  (%.2f x stats, %d bytes)"
          % (html * 1000, html / stats, os.path.getsize(os.path.join(tmp, "r.html"))))
    print("  thermlog report -o r.md      %8.1f ms  (%.2f x stats)" % (md * 1000, md / stats))
    # The capacitor design review: one capacitor on a zone, its consumed-life chart a
    # lifetime computation a point.
    cfg = os.path.join(tmp, "capacitor.yaml")
    with open(cfg, "w") as f:
        f.write("capacitors:\n  - name: C1\n    sensor: thermal/soc-thermal\n"
                "    rated_life_h: 5000\n    rated_temp_c: 105\n")
    life = median_wall(["-c", cfg, "lifetime", "--json"])
    plain = median_wall(["-c", cfg, "report", "--force", "-o", os.path.join(tmp, "r.html")])
    review = median_wall(["-c", cfg, "report", "--lifetime", "--force", "-o",
                          os.path.join(tmp, "r.html")])
    print("  thermlog lifetime --json     %8.1f ms  (one capacitor)" % (life * 1000))
    print("  thermlog report -o r.html    %8.1f ms  (with the capacitor)" % (plain * 1000))
    print("  report --lifetime -o r.html  %8.1f ms  (%.2f x lifetime --json)" % (review * 1000,
                                                                        review / life))
finally:
    shutil.rmtree(tmp, ignore_errors=True)
