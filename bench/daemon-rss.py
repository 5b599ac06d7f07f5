#!/usr/bin/python3
"""RSS of thermlogd sampling every second: the demo's simulated ROCK 5C with a week of history,
HTTP server up, sampled from /proc every 10 s. Beside it, in the same run, the floor: rss-floor,
a program that links thermlogd's libraries the same way and does nothing (build/bench/rss-floor).
The figure is the daemon's VmRSS as a ratio of the floor's, and how far above the floor it is.
Target (issue 15): 5 MiB and flat over a day.

usage: bench/daemon-rss.py BUILD/src/thermlogd [--minutes 10] [--floor BUILD/bench/rss-floor]
                           [--clients N]
  --clients N: N threads fetch /metrics and /api/v1/... in a loop during the middle third of
  the run, so a flat end shows that what the requests took was given back.
"""
import argparse
import os
import subprocess
import sys
import threading
import time
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "lib"))
from thermlog_test import Demo, rss_kib  # noqa: E402

FIELDS = ("VmRSS:", "RssAnon:", "RssFile:")
PATHS = ("/metrics", "/api/v1/latest", "/api/v1/status", "/api/v1/channels",
         "/api/v1/stats?from=-1d", "/api/v1/samples?from=-1h", "/api/v1/runs")


def status(pid):
    return [rss_kib(pid, f) for f in FIELDS]


def measure_floor(exe):
    """The floor's figures once it is up (it does nothing after printing its ready line)."""
    p = subprocess.Popen([exe], stdout=subprocess.PIPE, text=True)
    try:
        line = p.stdout.readline()
        if not line.startswith("ready"):
            sys.exit("%s did not start: %r" % (exe, line))
        time.sleep(0.5)
        return status(p.pid)
    finally:
        p.terminate()
        p.wait()


def clients(url, n, stop, counts):
    def loop(i):
        k = i
        while not stop.is_set():
            try:
                with urllib.request.urlopen(url.rstrip("/") + PATHS[k % len(PATHS)],
                                            timeout=30) as r:
                    r.read()
                counts[i] += 1
            except OSError:
                counts[i] -= 1000000  # shows as a negative count: a request failed
            k += 1
    threads = [threading.Thread(target=loop, args=(i,), daemon=True) for i in range(n)]
    for t in threads:
        t.start()
    return threads


def row(name, fig, floor):
    return "%-10s VmRSS %6.2f MiB  RssAnon %5.2f MiB  RssFile %5.2f MiB  %5.2fx floor  %+.2f MiB" % (
        name, fig[0] / 1024, fig[1] / 1024, fig[2] / 1024, fig[0] / floor[0],
        (fig[0] - floor[0]) / 1024)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("thermlogd")
    ap.add_argument("--minutes", type=float, default=10)
    ap.add_argument("--floor", help="default: BUILD/bench/rss-floor beside BUILD/src/thermlogd")
    ap.add_argument("--clients", type=int, default=0)
    args = ap.parse_args()
    floor_exe = args.floor or os.path.join(
        os.path.dirname(os.path.dirname(os.path.abspath(args.thermlogd))), "bench", "rss-floor")
    floor = measure_floor(floor_exe)
    # Demo waits for the URL: backfill done, first live cycle stored.
    with Demo(args.thermlogd, ["--interval", "1s"], prefix="thermlog-rss.") as demo:
        if not demo.url:
            sys.exit("thermlogd --demo did not start:\n" + demo.stderr())
        p = demo.proc
        start = time.monotonic()
        samples = []
        end = start + args.minutes * 60
        load = (start + args.minutes * 20, start + args.minutes * 40)
        stop, threads, counts = threading.Event(), [], [0] * args.clients
        while time.monotonic() < end:
            now = time.monotonic()
            if args.clients and not threads and now >= load[0]:
                threads = clients(demo.url, args.clients, stop, counts)
            if threads and not stop.is_set() and now >= load[1]:
                stop.set()
                for t in threads:
                    t.join()
            samples.append((now - start, rss_kib(p.pid), bool(threads) and not stop.is_set()))
            time.sleep(10)
        samples.append((time.monotonic() - start, rss_kib(p.pid), False))
        fig = status(p.pid)
        for t, kib, loaded in samples:
            if t < 30 or int(t) % 60 < 10 or t == samples[-1][0]:
                print("t=%6.0f s  RSS %6.2f MiB%s" % (t, kib / 1024, "  (clients)" if loaded else ""))
        if args.clients:
            print("%d clients: %d requests between t=%.0f s and t=%.0f s%s" % (
                args.clients, sum(max(c, 0) for c in counts), load[0] - start, load[1] - start,
                "" if min(counts) >= 0 else ", SOME FAILED"))
        first_min = [k for t, k, _ in samples if 50 <= t <= 130] or [samples[0][1]]
        peak = max(k for _, k, _ in samples)
        last = samples[-1][1]
        print("RSS after %.0f min at 1 s: %.2f MiB (after 1-2 min: %.2f MiB, growth %+.2f MiB, "
              "peak %.2f MiB)" % (args.minutes, last / 1024, max(first_min) / 1024,
                                  (last - max(first_min)) / 1024, peak / 1024))
        print(row("floor", floor, floor))
        print(row("thermlogd", fig, floor))
        print("thermlogd: %.2fx the floor (%s: its libraries, linked the same way), "
              "%+.2f MiB above it" % (fig[0] / floor[0], os.path.basename(floor_exe),
                                      (fig[0] - floor[0]) / 1024))


main()
