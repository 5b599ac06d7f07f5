#!/usr/bin/env python3
"""What a run costs the daemon: CPU per fast sample while a run is active, beside the CPU of a
one-minute cycle measured in the same run (the daemon at a 1 s interval, no run), on a copy of
the ROCK 5C fixture. Phase 1: interval 1 s, no run, N s: CPU per cycle. Phase 2: interval 60 s,
runs.interval 1 s, no run, N s: the idle floor. Phase 3: the same daemon with `thermlog run --
sleep N`: (CPU - idle floor) / fast samples. CPU is the sum of schedstat run time over the daemon's threads.

usage: bench/run-cpu.py build/src/thermlogd build/src/thermlog [--seconds N]
"""
import os
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests",
                                "lib"))
from thermlog_test import stop  # noqa: E402

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")


def cpu_s(pid):
    """CPU time of every thread of @pid, in s, from schedstat (ns; clock ticks are too coarse
    for a fast sample's cost)."""
    total = 0
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{tid}/schedstat") as f:
                total += int(f.read().split()[0])
        except (FileNotFoundError, ProcessLookupError):
            pass  # a thread that ended
    return total / 1e9


def start(thermlogd, tmp, name, interval, sock):
    tree = os.path.join(tmp, "sys")
    if not os.path.exists(tree):
        shutil.copytree(os.path.join(ROOT, "tests", "fixtures", "rock5c"), tree, symlinks=True)
    cfg = os.path.join(tmp, name + ".yaml")
    with open(cfg, "w") as f:
        f.write(f"interval: {interval}\nsysfs_root: {tree}\nprocfs_root: {tree}/proc\n"
                f"database: {tmp}/{name}.db\nhttp:\n  listen: 127.0.0.1:0\n"
                f"sources:\n  hwmon: {{enabled: false}}\n"
                f"runs:\n  socket: {sock}\n  interval: 1s\n")
    log = open(os.path.join(tmp, name + ".log"), "w")
    proc = subprocess.Popen([thermlogd, "-c", cfg], stdout=log, stderr=log)
    deadline = time.time() + 20
    while not os.path.exists(sock) and time.time() < deadline:
        time.sleep(0.05)
    time.sleep(2)  # past the first cycle and start-up
    return proc, cfg


def measure(pid, seconds):
    c0, t0 = cpu_s(pid), time.monotonic()
    time.sleep(seconds)
    return cpu_s(pid) - c0, time.monotonic() - t0


def main():
    thermlogd, thermlog = sys.argv[1], sys.argv[2]
    n = int(sys.argv[sys.argv.index("--seconds") + 1]) if "--seconds" in sys.argv else 30
    tmp = tempfile.mkdtemp(prefix="thermlog-run-cpu-")
    procs = []
    try:
        p, _ = start(thermlogd, tmp, "cycle", "1s", os.path.join(tmp, "a.sock"))
        procs.append(p)
        cpu, wall = measure(p.pid, n)
        per_cycle = cpu / wall
        stop(p, 10)
        p, cfg = start(thermlogd, tmp, "runs", "60s", os.path.join(tmp, "b.sock"))
        procs.append(p)
        idle, idle_wall = measure(p.pid, n)
        c0, t0 = cpu_s(p.pid), time.monotonic()
        subprocess.run([thermlog, "-c", cfg, "run", "--label", "bench", "--", "sleep", str(n)],
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
        busy, busy_wall = cpu_s(p.pid) - c0, time.monotonic() - t0
        per_sample = (busy - idle / idle_wall * busy_wall) / busy_wall
        print(f"minute cycle: {per_cycle * 1e6:.0f} us CPU per cycle (interval 1 s, {wall:.0f} s); "
              f"fast sample: {per_sample * 1e6:.0f} us CPU each ({busy_wall:.0f} s run at 1 s, "
              f"idle floor {idle / idle_wall * 1e6:.0f} us/s subtracted); "
              f"ratio {per_sample / per_cycle:.2f}")
    finally:
        for p in procs:
            if p.poll() is None:
                stop(p, 10)
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
