#!/usr/bin/python3
"""RSS of thermlogd sampling every second: the demo's simulated ROCK 5C with a week of history,
HTTP server up, sampled from /proc every 10 s. Target: under 8 MiB and flat.

usage: bench/daemon-rss.py BUILD/src/thermlogd [--minutes 10]   (the issue asks for 10 and 60)
"""
import argparse
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "lib"))
from thermlog_test import Demo, rss_kib  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("thermlogd")
    ap.add_argument("--minutes", type=float, default=10)
    args = ap.parse_args()
    # Demo waits for the URL: backfill done, first live cycle stored.
    with Demo(args.thermlogd, ["--interval", "1s"], prefix="thermlog-rss.") as demo:
        p = demo.proc
        start = time.monotonic()
        samples = []
        end = start + args.minutes * 60
        while time.monotonic() < end:
            samples.append((time.monotonic() - start, rss_kib(p.pid)))
            time.sleep(10)
        samples.append((time.monotonic() - start, rss_kib(p.pid)))
        anon = rss_kib(p.pid, "RssAnon:")
        for t, kib in samples:
            if t < 30 or int(t) % 60 < 10 or t == samples[-1][0]:
                print("t=%6.0f s  RSS %6.2f MiB" % (t, kib / 1024))
        first_min = [k for t, k in samples if 50 <= t <= 130] or [samples[0][1]]
        last = samples[-1][1]
        print("RSS after %.0f min at 1 s: %.2f MiB (after 1-2 min: %.2f MiB, growth %+.2f MiB)" %
              (args.minutes, last / 1024, max(first_min) / 1024, (last - max(first_min)) / 1024))
        print("of which anonymous (heap, stacks, SQLite cache): %.2f MiB; the rest is shared "
              "library pages" % (anon / 1024))


main()
