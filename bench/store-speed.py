#!/usr/bin/python3
"""The whole-history answers of this build beside a previous build's (the old code path), in the
same run: `thermlog stats --json` over a year of 20 channels, `thermlog lifetime --json` over
three years of one temperature with three capacitors, and `thermlog report` (HTML) over the
year with the 649-run job log. Each build generates its own databases with its own
bench-stats (the same seeded values, in its own layout); the commands run in turn, old and
new alternating, and the median CPU time (user + sys of the thermlog process) and wall time of
each are printed with the ratio new / old (below 1: faster). The answers of stats and lifetime
are compared byte for byte (both builds' databases end at the same hour when generated in it).

usage: bench/store-speed.py OLD_BUILD [NEW_BUILD] [--runs N] [--year-days N] [--life-days N]
  OLD_BUILD: a build directory of the previous thermlog, e.g. made by
    git archive main | tar -x -C /tmp/old && meson setup /tmp/old/build /tmp/old &&
    ninja -C /tmp/old/build src/thermlog bench/bench-stats
  (the databases go to $TMPDIR or /tmp)"""
import argparse
import hashlib
import os
import shutil
import statistics
import subprocess
import tempfile
import time

here = os.path.dirname(os.path.abspath(__file__))
ap = argparse.ArgumentParser()
ap.add_argument("old")
ap.add_argument("new", nargs="?", default="build")
ap.add_argument("--runs", type=int, default=7)
ap.add_argument("--year-days", type=int, default=365)
ap.add_argument("--life-days", type=int, default=3 * 365)
a = ap.parse_args()

CAPACITORS = ("capacitors:\n" + "".join(
    "  - name: C%d\n    sensor: thermal/soc-thermal\n    rated_life_h: %d\n"
    "    rated_temp_c: 105\n" % (i + 1, life) for i, life in enumerate((2000, 5000, 10000))))


def timed(cmd):
    """(CPU s, wall s, sha256 of stdout) of one run of @cmd."""
    t = time.perf_counter()
    with tempfile.TemporaryFile() as out:
        p = subprocess.Popen(cmd, stdout=out, stderr=subprocess.DEVNULL)
        _, status, ru = os.wait4(p.pid, 0)
        p.returncode = os.waitstatus_to_exitcode(status)
        wall = time.perf_counter() - t
        if p.returncode != 0:
            raise SystemExit("store-speed: %s failed (%d)" % (" ".join(cmd), p.returncode))
        out.seek(0)
        digest = hashlib.sha256(out.read()).hexdigest()
    return ru.ru_utime + ru.ru_stime, wall, digest


def prepare(build, tmp, name):
    """The year's database (with the job log) and the three years' of @build."""
    bench = os.path.join(build, "bench", "bench-stats")
    thermlog = os.path.join(build, "src", "thermlog")
    year = os.path.join(tmp, name + "-year.db")
    life = os.path.join(tmp, name + "-life.db")
    subprocess.run([bench, "--days", str(a.year_days), "--channels", "20", "--db", year,
                    "--generate-only"], check=True, stdout=subprocess.DEVNULL)
    subprocess.run([thermlog, "--db", year, "runs", "import",
                    os.path.join(here, "..", "tests", "fixtures", "runs", "jobs-649.csv")],
                   check=True, stdout=subprocess.DEVNULL)
    subprocess.run([bench, "--days", str(a.life_days), "--channels", "1", "--db", life,
                    "--generate-only"], check=True, stdout=subprocess.DEVNULL)
    return thermlog, year, life


tmp = tempfile.mkdtemp(prefix="thermlog-store-speed.")
try:
    cfg = os.path.join(tmp, "capacitors.yaml")
    with open(cfg, "w") as f:
        f.write(CAPACITORS)
    builds = {}
    for name, build in (("old", a.old), ("new", a.new)):
        t = time.perf_counter()
        builds[name] = prepare(build, tmp, name)
        print("%s: %s, databases generated in %.0f s (year %.1f MiB, three years %.1f MiB)" %
              (name, build, time.perf_counter() - t, os.path.getsize(builds[name][1]) / 2**20,
               os.path.getsize(builds[name][2]) / 2**20))
    html = os.path.join(tmp, "r.html")
    cases = [
        ("stats --json, %d days x 20 channels" % a.year_days,
         lambda exe, year, life: [exe, "--db", year, "stats", "--json"], True),
        ("lifetime --json, %d days, 3 capacitors" % a.life_days,
         lambda exe, year, life: [exe, "-c", cfg, "--db", life, "lifetime", "--json"], True),
        ("report -o r.html, %d days + 649 runs" % a.year_days,
         lambda exe, year, life: [exe, "--db", year, "report", "--over", "30m", "--force",
                                  "-o", html], False),
    ]
    print("median of %d runs each, old and new in turn; CPU = user + sys of thermlog" % a.runs)
    print("%-44s %10s %10s %10s %10s %8s  %s" % ("", "old CPU ms", "new CPU ms", "old wall",
                                                  "new wall", "new/old", "answers"))
    for what, make, compare in cases:
        got = {"old": [], "new": []}
        for _ in range(a.runs):
            for name in ("old", "new"):
                got[name].append(timed(make(*builds[name])))
        cpu = {n: statistics.median(r[0] for r in got[n]) for n in got}
        wall = {n: statistics.median(r[1] for r in got[n]) for n in got}
        same = "-" if not compare else \
            "identical" if got["old"][0][2] == got["new"][0][2] else "DIFFER"
        print("%-44s %10.1f %10.1f %10.1f %10.1f %8.2f  %s" %
              (what, cpu["old"] * 1e3, cpu["new"] * 1e3, wall["old"] * 1e3, wall["new"] * 1e3,
               cpu["new"] / cpu["old"], same))
finally:
    shutil.rmtree(tmp, ignore_errors=True)
