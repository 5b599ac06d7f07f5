#!/usr/bin/python3
"""RSS of thermlogd sampling every second: the demo's simulated ROCK 5C with a week of history,
HTTP server up, sampled from /proc every 10 s. Target: under 8 MiB and flat.

usage: bench/daemon-rss.py BUILD/src/thermlogd [--minutes 10]   (the issue asks for 10 and 60)
"""
import argparse
import os
import signal
import socket
import subprocess
import tempfile
import time


def rss_kib(pid, field="VmRSS:"):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith(field):
                return int(line.split()[1])
    return 0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("thermlogd")
    ap.add_argument("--minutes", type=float, default=10)
    args = ap.parse_args()
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    wd = tempfile.mkdtemp(prefix="thermlog-rss.")
    db = os.path.join(wd, "rss.db")
    p = subprocess.Popen([args.thermlogd, "--demo", "--interval", "1s", "--db", db, "--listen",
                          "127.0.0.1:%d" % port], stdout=subprocess.PIPE,
                         stderr=subprocess.DEVNULL, text=True)
    try:
        p.stdout.readline()  # the URL: backfill done, first live cycle stored
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
    finally:
        p.send_signal(signal.SIGTERM)
        p.wait()
        for suffix in ("", "-wal", "-shm"):
            try:
                os.unlink(db + suffix)
            except FileNotFoundError:
                pass
        os.rmdir(wd)


main()
