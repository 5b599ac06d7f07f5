#!/usr/bin/python3
"""Time-weighted answers stream over history as sample-weighted ones do (TAP).

A generated history of 150 days of one-minute cycles of 20 channels (bench-stats, through the
store API, days merged). Each time-weighted answer over the whole of it (`stats --weight time`,
`report --weight time`, `lifetime`), from the merged days and from every raw cycle
(--include-unsynced), must peak at no more memory than the sample-weighted answer that reads the
same rows, measured in the same run: memory that grew with the window (every cycle's time, every
day's histograms held at once) showed here as megabytes more.

usage: weight-memory.py THERMLOG BENCH_STATS PEAKRSS_SO CONFIG
"""
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from thermlog_test import done, ok  # noqa: E402

thermlog, bench, peakrss, config = sys.argv[1:5]
DAYS = 150
MARGIN_KIB = 512  # what the same rows read two ways may differ by (a second histogram, the cache)


def peak_kib(tmp, *args):
    """thermlog ARGS' peak resident memory (VmHWM, KiB), written at its exit by peakrss.so."""
    out = os.path.join(tmp, "peak")
    if os.path.exists(out):
        os.unlink(out)
    env = dict(os.environ, LD_PRELOAD=os.path.abspath(peakrss), THERMLOG_PEAK_FILE=out)
    p = subprocess.run([thermlog, *args], env=env, capture_output=True)
    if p.returncode != 0:
        raise SystemExit(f"Bail out! thermlog {' '.join(args)}: rc {p.returncode}: "
                         f"{p.stderr.decode()}")
    with open(out) as f:
        return int(f.read())


def main():
    with open(thermlog, "rb") as f:
        if b"libasan" in f.read():  # ASan's quarantine keeps freed memory resident
            print("1..0 # SKIP thermlog runs under AddressSanitizer")
            return 0
    tmp = tempfile.mkdtemp(prefix="thermlog-weight-memory-")
    try:
        db = os.path.join(tmp, "history.db")
        subprocess.run([bench, "--generate-only", "--days", str(DAYS), "--db", db], check=True,
                       capture_output=True)
        base = ["--db", db, "--config", config]
        report = os.path.join(tmp, "report.html")
        pairs = [
            ("stats over merged days", ["stats", "--json", "--weight", "samples"],
             ["stats", "--json", "--weight", "time"]),
            ("stats over every cycle", ["stats", "--json", "--weight", "samples",
                                        "--include-unsynced"],
             ["stats", "--json", "--weight", "time", "--include-unsynced"]),
            ("report over merged days", ["report", "--weight", "samples", "-o", report,
                                         "--force"],
             ["report", "--weight", "time", "-o", report, "--force"]),
            ("lifetime over merged days", ["stats", "--json", "--weight", "samples"],
             ["lifetime", "--json"]),
            ("lifetime over every cycle", ["stats", "--json", "--weight", "samples",
                                           "--include-unsynced"],
             ["lifetime", "--json", "--include-unsynced"]),
        ]
        for what, baseline, timed in pairs:
            want = peak_kib(tmp, *base, *baseline)
            got = peak_kib(tmp, *base, *timed)
            ok(got <= want + MARGIN_KIB,
               f"{what} of {DAYS} days by time: peak {got} KiB, by samples {want} KiB")
    finally:
        shutil.rmtree(tmp)
    return done()


sys.exit(main())
