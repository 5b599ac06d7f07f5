#!/usr/bin/python3
"""A soak of the recorder with the runs interface in use: thermlogd on a copy of the ROCK 5C
fixture sampling every second, a `thermlog run` started every 15 s (lengths 1-40 s, so runs
overlap; one in five exits 3), HTTP readers on /metrics and the JSON API all along, and
anonymous memory read every 30 s; /proc/stat and rknpu/load advance every second, so the load
source computes shares all along. At the end it prints what a soak is judged by:

  cycles stored / cycles expected (one a second from the first to the last cycle, less the
  seconds a wall-clock step the daemon logged jumped over)
  acknowledged runs (the wrapper printed "run ID ... ended") / those stored, ended
  the machine's stalls: a probe thread beside the daemon that slept 100 ms and woke over 0.5 s
  late, and how many missing cycles fall within one (said, still missing)
  RssAnon over the last half: min, max, spread (the target: within 256 KiB), read every 30 s
  with the HTTP readers paused for 2.5 s (no request in flight, and a cycle after the last
  one, after which the daemon gives freed heap back), and the same read under load beside it

and exits 1 if a cycle or an acknowledged run is missing or memory grew by more than 256 KiB
over the last half. Nothing is timed: figures only.

usage: bench/soak.py BUILD/src/thermlogd BUILD/src/thermlog [--minutes 120] [--readers 2]
"""
import argparse
import os
import random
import re
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "lib"))
from thermlog_test import rss_kib  # noqa: E402

PATHS = ("/metrics", "/api/v1/latest", "/api/v1/status", "/api/v1/runs",
         "/api/v1/runs/stats", "/api/v1/stats?from=-1h")


def advance_load(tree, k):
    """Moves the fixture's CPU counters on by one second of varying busy shares and rewrites
    the NPU's load line, each file replaced whole as the kernel's would read."""
    path = os.path.join(tree, "proc", "stat")
    out = []
    with open(path) as f:
        for i, line in enumerate(f):
            parts = line.split()
            if parts and parts[0].startswith("cpu"):
                busy = (k * 7 + i * 13) % 90
                v = [int(x) for x in parts[1:]]
                v[0] += busy
                v[3] += 100 - busy
                line = parts[0] + " " + " ".join(str(x) for x in v) + "\n"
            out.append(line)
    with open(path + ".new", "w") as f:
        f.writelines(out)
    os.replace(path + ".new", path)
    npu = os.path.join(tree, "kernel", "debug", "rknpu", "load")
    with open(npu + ".new", "w") as f:
        f.write("NPU load:  Core0: %3d%%, Core1: %3d%%, Core2: %3d%%,\n"
                % (k % 100, (k * 3) % 100, 0))
    os.replace(npu + ".new", npu)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("thermlogd")
    ap.add_argument("thermlog")
    ap.add_argument("--minutes", type=float, default=120)
    ap.add_argument("--readers", type=int, default=2)
    ap.add_argument("--run-every", type=float, default=15)
    ap.add_argument("--keep", action="store_true", help="keep the scratch directory")
    a = ap.parse_args()

    tmp = tempfile.mkdtemp(prefix="thermlog-soak-")
    tree = os.path.join(tmp, "sys")
    shutil.copytree(os.path.join(HERE, "..", "tests", "fixtures", "rock5c"), tree, symlinks=True)
    db = os.path.join(tmp, "thermlog.db")
    sock = os.path.join(tmp, "run", "thermlog.sock")
    cfg = os.path.join(tmp, "thermlog.yaml")
    with open(cfg, "w") as f:
        f.write(f"interval: 1s\nsysfs_root: {tree}\nprocfs_root: {tree}/proc\n"
                f"debugfs_root: {tree}/kernel/debug\n"
                f"database: {db}\nsources:\n  hwmon: {{enabled: false}}\n"
                f"http:\n  listen: 127.0.0.1:0\n"
                f"runs:\n  socket: {sock}\n  interval: 1s\n")
    log = open(os.path.join(tmp, "thermlogd.log"), "w+")
    d = subprocess.Popen([a.thermlogd, "-c", cfg], stdout=log, stderr=log)
    port = None
    for _ in range(400):
        log.seek(0)
        m = re.search(r"\(port (\d+)\)", log.read())
        if m and os.path.exists(sock):
            port = int(m.group(1))
            break
        time.sleep(0.05)
    if port is None:
        log.seek(0)
        sys.exit("thermlogd did not start:\n" + log.read())
    base = f"http://127.0.0.1:{port}"

    stop = threading.Event()
    go = threading.Event()  # cleared while memory is read
    go.set()
    busy = [0]  # requests in flight
    reads = [0, 0]  # ok, failed
    acked, unrecorded, lock = [], [], threading.Lock()

    def reader(i):
        k = i
        while not stop.is_set():
            go.wait()
            with lock:
                if not go.is_set():
                    continue
                busy[0] += 1
            try:
                with urllib.request.urlopen(base + PATHS[k % len(PATHS)], timeout=30) as r:
                    r.read()
                reads[0] += 1
            except OSError:
                reads[1] += 1
            finally:
                with lock:
                    busy[0] -= 1
            k += 1
            time.sleep(0.2)

    def one_run(n):
        secs = random.randint(1, 40)
        cmd = ["sleep", str(secs)] if n % 5 else ["sh", "-c", f"sleep {secs}; exit 3"]
        p = subprocess.run([a.thermlog, "-c", cfg, "run", "--label", f"soak{n % 3}", "--", *cmd],
                           capture_output=True, text=True)
        m = re.search(r"thermlog run: run (\d+) \(", p.stderr)
        with lock:
            (acked if m else unrecorded).append(int(m.group(1)) if m else p.stderr.strip())

    stalls = []  # (wall s, s) the machine did not run this process on time: a probe beside it

    def probe():
        while not stop.is_set():
            t0 = time.monotonic()
            time.sleep(0.1)
            late = time.monotonic() - t0 - 0.1
            if late > 0.5:
                stalls.append((time.time() - late, late))

    threads = [threading.Thread(target=reader, args=(i,), daemon=True)
               for i in range(a.readers)] + [threading.Thread(target=probe, daemon=True)]
    for t in threads:
        t.start()
    random.seed(1)
    t0 = time.monotonic()
    end = t0 + a.minutes * 60
    mem = []  # (minute, RssAnon KiB with the readers paused)
    loaded = []  # (minute, RssAnon KiB under load)
    next_run, next_mem, n, runners = t0, t0, 0, []
    next_load, k = t0, 0
    while time.monotonic() < end and d.poll() is None:
        now = time.monotonic()
        if now >= next_load:
            advance_load(tree, k)
            k += 1
            next_load += 1
        if now >= next_run:
            t = threading.Thread(target=one_run, args=(n,), daemon=True)
            t.start()
            runners.append(t)
            n += 1
            next_run += a.run_every
        if now >= next_mem:
            loaded.append(((now - t0) / 60, rss_kib(d.pid, "RssAnon:")))
            with lock:
                go.clear()
            while busy[0]:
                time.sleep(0.05)
            time.sleep(2.5)
            mem.append(((now - t0) / 60, rss_kib(d.pid, "RssAnon:")))
            go.set()
            next_mem += 30
        time.sleep(0.2)
    for t in runners:
        t.join(60)
    stop.set()
    time.sleep(2)
    alive = d.poll() is None
    d.send_signal(signal.SIGTERM)
    rc = d.wait(30)

    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    ts = [r[0] for r in con.execute("SELECT ts FROM cycles ORDER BY ts")]
    runs = dict(con.execute("SELECT id, status FROM runs"))
    con.close()
    # A wall clock stepped forward skips the seconds it jumps over (cycles are stamped on the
    # wall clock's seconds), and the slot it lands next to when it lands off the grid; the
    # daemon logs each step (whole seconds, rounded down). A gap of at most a step's seconds
    # + 2 is the step's, one gap per logged step; any other missing cycle counts.
    log.seek(0)
    text = log.read()
    steps = sorted([int(x) for x in re.findall(r"the wall clock stepped forward by (\d+) s$",
                                                text, re.M)] +
                   [int(x) // 1000 for x in re.findall(
                       r"the wall clock stepped forward by (\d+) ms: \d+ slots? passed", text)])
    # what the daemon says it missed because it did not run (counted as missing all the same)
    late = sum(int(x) for x in re.findall(r"notice: (\d+) cycles? missed", text))
    gaps = sorted(b - a - 1 for a, b in zip(ts, ts[1:]) if b - a > 1)
    stepped = 0
    for gap in reversed(gaps):
        if steps and gap <= steps[-1] + 2:
            steps.pop()
            stepped += gap
    expected = ts[-1] - ts[0] + 1 - stepped if ts else 0
    missing_runs = [i for i in acked if i not in runs]
    open_runs = [i for i in acked if runs.get(i) == "running"]
    half = [kib for minute, kib in mem if minute >= a.minutes / 2]
    half_loaded = [kib for minute, kib in loaded if minute >= a.minutes / 2]
    spread = (max(half) - min(half)) if half else 0
    print(f"soak: {a.minutes:g} min at 1 s, a run every {a.run_every:g} s, {a.readers} readers")
    print(f"cycles: {len(ts)} stored of {expected} expected ({expected - len(ts)} missing)"
          + (f"; {stepped} more skipped by wall-clock steps the daemon logged" if stepped else "")
          + (f"; the daemon said it woke too late for {late}" if late else ""))
    print(f"runs: {len(acked)} acknowledged, {len(acked) - len(missing_runs)} stored, "
          f"{len(open_runs)} left running; {len(unrecorded)} not recorded")
    for u in unrecorded[:5]:
        print(f"  not recorded: {u}")
    print(f"http: {reads[0]} reads, {reads[1]} failed")
    # a missing cycle within a second of a stall the probe saw: the machine's, not the daemon's
    holes = [t for a_, b_ in zip(ts, ts[1:]) for t in range(a_ + 1, b_)]
    machine = [t for t in holes if any(st - 1 <= t <= st + late + 1 for st, late in stalls)]
    print(f"machine: {len(stalls)} stalls over 0.5 s of a probe thread beside the daemon "
          f"(longest {max((l for _, l in stalls), default=0):.1f} s); {len(machine)} of the "
          f"{len(holes)} missing cycles fall within them")
    if half:
        print(f"RssAnon over the last half: min {min(half)} KiB, max {max(half)} KiB, "
              f"spread {spread} KiB (first {mem[0][1]} KiB, last {mem[-1][1]} KiB)")
        print(f"RssAnon under load over the last half: min {min(half_loaded)} KiB, "
              f"max {max(half_loaded)} KiB")
    print("RssAnon by minute: " + " ".join(f"{m:.0f}:{k}" for m, k in mem[::4]))
    print(f"daemon alive at the end: {alive}, exit status {rc}")
    good = (alive and rc == 0 and expected == len(ts) and not missing_runs and not open_runs
            and not unrecorded and spread <= 256)
    print("soak: " + ("held" if good else "FAILED"))
    if a.keep or not good:
        print("kept " + tmp)
    else:
        shutil.rmtree(tmp, ignore_errors=True)
    sys.exit(0 if good else 1)


if __name__ == "__main__":
    main()
