#!/usr/bin/python3
"""numpy on the same values, already in memory: reads DIR/<n>.q (int64 q, native order) and
DIR/channels.txt ("key resolution" per line), times only the statistics, prints one line per
channel "key count mean std min max p50 p95 p99" and "seconds WALL CPU" (best of 3)."""
import sys
import time

import numpy as np

d = sys.argv[1]
channels = [line.split() for line in open(f"{d}/channels.txt")]
values = []
for i, (key, res) in enumerate(channels):
    q = np.fromfile(f"{d}/{i}.q", dtype=np.int64)
    # the same decimal values thermlog reports: q / 10^digits, correctly rounded
    res = float(res)
    for digits in range(10):  # resolution = step / 10^digits, as thermlog's stats_value()
        scaled = res * 10 ** digits
        if round(scaled) >= 1 and abs(scaled - round(scaled)) <= 1e-6:
            break
    step = round(res * 10 ** digits)
    values.append((q * step) / 10.0 ** digits if digits else (q * step).astype(np.float64))
best = best_cpu = None
for _ in range(3):
    t, c = time.perf_counter(), time.process_time()
    out = []
    for (key, _), v in zip(channels, values):
        p = np.percentile(v, [50, 95, 99])
        out.append((key, len(v), np.mean(v), np.std(v), np.min(v), np.max(v), *p))
    dt, dc = time.perf_counter() - t, time.process_time() - c
    best = dt if best is None or dt < best else best
    best_cpu = dc if best_cpu is None or dc < best_cpu else best_cpu
for row in out:
    print(row[0], row[1], *("%.17g" % x for x in row[2:]))
print("seconds", "%.6f" % best, "%.6f" % best_cpu)
