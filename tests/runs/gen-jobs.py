#!/usr/bin/python3
"""The 649-run job log of the runs tests and its statistics computed by numpy (type 7).

usage: gen-jobs.py DIR          writes DIR/jobs-649.csv and DIR/jobs-649.expected
       gen-jobs.py --check DIR  regenerates both and checks DIR's copies are identical (TAP)

The log is seeded, so the committed fixture is reproducible: 649 attempts of one image job on
an RK3588 NPU, 404 ok and 245 failed, start/end as unix seconds with milliseconds (every tenth
row in ISO 8601 with milliseconds), energy only after the meter was wired (row 120 on), and a
column the importer ignores. The expected file lists each figure as "name value" with
numpy.percentile(method="linear") and numpy.mean over the millisecond durations.
"""
import datetime
import os
import sys
import tempfile

import numpy as np

N, N_OK = 649, 404
LABEL = "sdxl-npu"
PERCENTILES = [90, 99]


def generate():
    rng = np.random.default_rng(20261201)
    ok = np.zeros(N, dtype=bool)
    ok[rng.choice(N, N_OK, replace=False)] = True
    t_ms = 1790812800000  # 2026-10-01T00:00:00Z
    rows, dur_ms, energy, temp, rss, status = [], [], [], [], [], []
    for i in range(N):
        t_ms += int(rng.integers(2000, 90000))  # pause between attempts
        if ok[i]:
            d = int(round(rng.lognormal(np.log(1627.0), 0.045) * 1000))
        else:
            d = int(rng.integers(15000, 1500000))
        start, end = t_ms, t_ms + d
        t_ms = end
        e = "" if i < 120 else "%.3f" % (d / 1000 * rng.normal(7.8, 0.25))
        tc = "%.3f" % rng.normal(71.0, 3.0)
        r = str(int(rng.normal(5.2e9, 1.5e8)))
        st = "ok" if ok[i] else "failed"
        code = "0" if ok[i] else str(int(rng.integers(1, 4)))

        def fmt(ms):
            if i % 10 == 9:
                dt = datetime.datetime.fromtimestamp(ms // 1000, datetime.timezone.utc)
                return dt.strftime("%Y-%m-%dT%H:%M:%S") + ".%03dZ" % (ms % 1000)
            return "%d.%03d" % (ms // 1000, ms % 1000)

        rows.append([fmt(start), fmt(end), st, LABEL, code, e, tc, r, "seed=%d" % (1000 + i)])
        dur_ms.append(d)
        energy.append(float(e) if e else np.nan)
        temp.append(float(tc))
        rss.append(float(r))
        status.append(st)
    csv = "start,end,status,label,exit_code,energy_j,temp_max_c,rss_max_bytes,prompt\r\n"
    csv += "".join(",".join(r) + "\r\n" for r in rows)

    ok_mask = np.array(status) == "ok"
    dur = np.array(dur_ms, dtype=np.int64)[ok_mask] / 1000.0
    out = [("count", N), ("ok", int(ok_mask.sum())), ("failed", int((~ok_mask).sum())),
           ("over_1800", int((dur > 1800).sum()))]
    for name, vals in (("duration_s", dur), ("energy_j", np.array(energy)[ok_mask]),
                       ("temp_max_c", np.array(temp)[ok_mask]),
                       ("rss_max_bytes", np.array(rss)[ok_mask])):
        v = vals[~np.isnan(vals)]
        out.append((name + ".n", len(v)))
        for p in [50, 95] + PERCENTILES:
            out.append((f"{name}.p{p}", repr(float(np.percentile(v, p, method="linear")))))
        out.append((name + ".max", repr(float(np.max(v)))))
        out.append((name + ".mean", repr(float(np.mean(v)))))
    expected = "".join(f"{k} {v}\n" for k, v in out)
    return csv, expected


def main():
    check = sys.argv[1] == "--check"
    d = sys.argv[-1]
    csv, expected = generate()
    if not check:
        open(os.path.join(d, "jobs-649.csv"), "w", newline="").write(csv)
        open(os.path.join(d, "jobs-649.expected"), "w").write(expected)
        return 0
    n = 0
    bad = 0
    for name, text in (("jobs-649.csv", csv), ("jobs-649.expected", expected)):
        n += 1
        have = open(os.path.join(d, name), newline="").read()
        good = have == text
        bad += not good
        print(f"{'' if good else 'not '}ok {n} - {name} is numpy's, regenerated from the seed")
    print(f"1..{n}")
    return 1 if bad else 0


sys.exit(main())
