#!/usr/bin/python3
"""thermlog peak: companion channels (--with KEY|GLOB|LABEL), a time window (--around DUR) as well
as a sample count, text within 100 columns by default (--wide for every channel), --channel by
label, and near names suggested when nothing matches. Usage: peak.py THERMLOGD THERMLOG FIXTURE"""
import json
import math
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from thermlog_test import Daemon, Workdir, main, wait_cycles, write_config  # noqa: E402

T0 = 1785542400  # 2026-08-01T00:00:00Z
N = 180          # three hours at one a minute
PEAK = 100       # the row of soc-thermal's maximum


def run(tap):
    thermlogd, thermlog, fixture = sys.argv[1:4]
    with Workdir("thermlog-peak.") as wd:
        db = os.path.join(wd, "t.db")
        cfg = write_config(os.path.join(wd, "t.yaml"), interval="1s")
        # The daemon registers the fixture's channels with their labels ("CPU 4-5") ...
        d = Daemon(thermlogd, wd, ["-c", cfg, "--sysfs-root", fixture, "--db", db,
                                   "--listen", "127.0.0.1:0"]).start()
        tap.ok(len(wait_cycles(db, 1, 30, d)) >= 1, "the daemon stored a cycle", d.log_text())
        d.stop()
        chans = json.loads(subprocess.run([thermlog, "--db", db, "channels", "--json"],
                                          capture_output=True, text=True).stdout)["channels"]
        # ... then three hours of older history for every one of them, soc-thermal peaking once.
        csv = os.path.join(wd, "h.csv")
        with open(csv, "w") as f:
            f.write("time,channel,value,unit\n")
            for i in range(N):
                for k, c in enumerate(chans):
                    if c["unit"] == "celsius":
                        v = 50 + 10 * math.sin(i / 20 + k) + (20 if c["key"] == "thermal/soc-thermal"
                                                              and i == PEAK else 0)
                        f.write("%d,%s,%.3f,celsius\n" % (T0 + 60 * i, c["key"], v))
                    elif c["unit"] == "hertz":
                        f.write("%d,%s,%d,hertz\n" % (T0 + 60 * i, c["key"], 408000000 * (1 + i % 5)))
                    else:
                        f.write("%d,%s,%d,%s\n" % (T0 + 60 * i, c["key"], i % 3, c["unit"]))
        p = subprocess.run([thermlog, "--db", db, "import", csv], capture_output=True, text=True)
        tap.ok(p.returncode == 0, "imported the history", p.stderr)

        def peak(*args, check=True):
            p = subprocess.run([thermlog, "--db", db, "peak", *args], capture_output=True, text=True)
            if check and p.returncode != 0:
                print("# peak %s: %s" % (" ".join(args), p.stderr))
            return p

        window = ["--to", str(T0 + 60 * N)]
        out = peak("--channel", "thermal/soc-thermal", *window).stdout
        lines = out.splitlines()
        tap.ok(lines and max(len(line) for line in lines) <= 100,
               "the default text fits 100 columns (widest %d)" % max(map(len, lines or [""])), out)
        rows = [line for line in lines if re.match(r"\d\d:\d\d:\d\d ", line)]
        tap.ok(len(rows) == 30 and sum(r.split()[1] == "*" for r in rows) == 1,
               "30 cycles, the maximum marked", out)
        tap.ok("--with" in out and "--wide" in out, "says how to see the other channels", out)
        head = [line for line in lines if line.startswith("time")]
        tap.ok(head and head[0].split()[1:3] == ["soc-thermal", "bigcore0-thermal"],
               "the peak channel first, then those of its unit", head)
        wide = peak("--channel", "thermal/soc-thermal", "--wide", *window).stdout
        tap.ok(all(c["key"] in wide for c in chans), "--wide: every channel, by key", wide[:400])

        j = json.loads(peak("--channel", "thermal/soc-thermal", "--with", "cpufreq/*",
                            "--with", "npu-thermal", "--json", *window).stdout)
        cols = [c["key"] for c in j["columns"]]
        tap.ok(cols == ["thermal/soc-thermal", "cpufreq/policy0", "cpufreq/policy4",
                        "cpufreq/policy6", "thermal/npu-thermal"],
               "--with a glob and a label: just those companions", cols)
        text = peak("--channel", "thermal/soc-thermal", "--with", "cpufreq/*", "--with",
                    "npu-thermal", *window).stdout
        head = [line for line in text.splitlines() if line.startswith("time")]
        tap.ok(head and head[0].split()[1:] == ["soc-thermal", "policy0", "policy4", "policy6",
                                                "npu-thermal"], "the text shows the same", text)

        j = json.loads(peak("--channel", "thermal/soc-thermal", "--around", "10m", "--json",
                            *window).stdout)
        times = [r[0] for r in j["rows"]]
        tap.ok(times == [T0 + 60 * i for i in range(PEAK - 10, PEAK + 11)],
               "--around 10m: the cycles within 10 minutes of the maximum", times)
        p = peak("--channel", "thermal/soc-thermal", "--around", "10m", "--samples", "5", check=False)
        tap.ok(p.returncode == 2 and "--around" in p.stderr and "--samples" in p.stderr,
               "--around and --samples exclude each other", p.stderr)
        p = peak("--channel", "thermal/soc-thermal", "--around", "soon", check=False)
        tap.ok(p.returncode == 2 and "--around" in p.stderr, "a bad --around is named", p.stderr)

        j = json.loads(peak("--channel", "CPU 4-5", "--json", *window).stdout)
        tap.ok(j["key"] == "cpufreq/policy4", "--channel takes a label", j.get("key"))
        p = peak("--channel", "soc-thermel", check=False)
        tap.ok(p.returncode == 2 and "did you mean thermal/soc-thermal" in p.stderr,
               "a near miss suggests the near name", p.stderr)
        p = peak("--channel", "polcy4", check=False)
        tap.ok(p.returncode == 2 and "did you mean cpufreq/policy4" in p.stderr,
               "a typo in the last part of a key is suggested too", p.stderr)
        p = peak("--channel", "thermal/nothing-like-it", check=False)
        tap.ok(p.returncode == 2 and "unknown channel" in p.stderr and "did you mean" not in p.stderr,
               "no suggestion when nothing is near", p.stderr)

main(run)
