#!/usr/bin/python3
"""Two seeded boards for the report tests: eight hours of one-minute samples (three zones, a
CPU cluster, the NPU's devfreq, memory and swap), a job log of runs with energy on each, a
fingerprint on the latest run and a capacitor configured. Usage as a program (for the browser
test): seed.py THERMLOG DIR -> DIR/a.db, DIR/b.db, DIR/thermlog.yaml."""
import json
import math
import os
import random
import sqlite3
import subprocess
import sys

T0 = 1790812800  # 2026-10-01T00:00:00Z
HOURS = 8
# A label with markup and a table bar: the report must show it as text, never as HTML.
ODD_LABEL = "llm <b>|bench</b> & co"


def samples_csv(path, hotter, seed):
    rnd = random.Random(seed)
    with open(path, "w") as f:
        f.write("unix,channel,value,unit\n")
        for i in range(HOURS * 60):
            ts = T0 + i * 60
            big = 48 + hotter + 14 * math.sin(i / 37.0) ** 2 + rnd.random()
            f.write(f"{ts},thermal/bigcore0-thermal,{big:.3f},celsius\n")
            f.write(f"{ts},thermal/npu-thermal,{big - 4 + rnd.random():.3f},celsius\n")
            f.write(f"{ts},thermal/soc-thermal,{big - 2:.3f},celsius\n")
            f.write(f"{ts},thermal/center-thermal,{big - 6:.3f},celsius\n")
            # The hotter board throttles its big cores more often and has less memory free.
            f.write(f"{ts},cpufreq/policy4,{2256000000 if i % (3 if hotter else 4) else 408000000},hertz\n")
            f.write(f"{ts},devfreq/fdab0000.npu,1000000000,hertz\n")
            f.write(f"{ts},meminfo/available,{4000000000 - int(hotter * 50e6) + 1048576 * (i % 50)},bytes\n")
            f.write(f"{ts},meminfo/swap_used,{100000000 + int(hotter * 8e6) + 4096 * (i % 7)},bytes\n")


def jobs_csv(path, slower, seed):
    rnd = random.Random(seed)
    with open(path, "w") as f:
        f.write("start,end,status,label,exit_code,energy_j,temp_max_c,rss_max_bytes\n")
        t = T0 + 300.25
        for i in range(14):
            d = (1200 + rnd.random() * 200) * slower
            status = "failed" if i % 5 == 3 else "ok"
            energy = "" if i == 6 else "%.3f" % (d * 9.5)
            f.write("%.3f,%.3f,%s,sdxl-npu,%d,%s,,%d\n" % (t, t + d, status,
                    0 if status == "ok" else 1, energy, 5000000000 + i * 1000003))
            t += d + 20
        for i in range(3):
            d = 300 + 40 * i
            f.write("%.3f,%.3f,ok,\"%s\",0,%.3f,,%d\n" % (t, t + d, ODD_LABEL.replace('"', '""'),
                    d * 4.0, 2000000000))
            t += d + 10


def fingerprint(db, board, kernel):
    c = sqlite3.connect(db)
    c.execute("UPDATE runs SET fingerprint = ? WHERE id = (SELECT max(id) FROM runs)",
              (json.dumps({"board": board, "kernel": kernel,
                           "governors": {"cpufreq/policy4": "schedutil"}, "tags": {}}),))
    c.commit()
    c.close()


def config(path):
    with open(path, "w") as f:
        f.write("capacitors:\n"
                "  - name: C12 <bulk> & 100uF\n"
                "    sensor: thermal/soc-thermal\n"
                "    basis: ambient\n"
                "    rated_life_h: 2000\n"
                "    rated_temp_c: 105\n")


def seed(thermlog, d):
    """Builds both boards in @d; returns (a.db, b.db, thermlog.yaml)."""
    out = []
    for name, hotter, slower, board, kernel in (("a", 0.0, 1.0, "Radxa ROCK 5C <i>&</i>", "6.1.75"),
                                                ("b", 4.0, 1.3, "Radxa ROCK 5B", "6.1.99")):
        db = os.path.join(d, name + ".db")
        s = os.path.join(d, name + "-samples.csv")
        j = os.path.join(d, name + "-jobs.csv")
        samples_csv(s, hotter, 7 + len(out))
        jobs_csv(j, slower, 11 + len(out))
        for args in (["import", s], ["runs", "import", j]):
            p = subprocess.run([thermlog, "--db", db, *args], capture_output=True, text=True)
            if p.returncode != 0:
                raise RuntimeError(" ".join(args) + ": " + p.stderr)
        fingerprint(db, board, kernel)
        out.append(db)
    cfg = os.path.join(d, "thermlog.yaml")
    config(cfg)
    return out[0], out[1], cfg


if __name__ == "__main__":
    print("\n".join(seed(sys.argv[1], sys.argv[2])))
