#!/usr/bin/env python3
"""What `thermlog run -- true` costs over `true`: wall time per command (median of N runs,
each a fresh process) with a thermlogd on a copy of the ROCK 5C fixture, its socket in a temp
dir; the difference is the run's start and stop through the daemon (boundary counters,
fingerprint, a fast sample at each end, two transactions). Target: under 5 ms.

usage: bench/run-overhead.py build/src/thermlogd build/src/thermlog [--runs N]
"""
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests",
                                "lib"))
from thermlog_test import stop  # noqa: E402

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")


def timed(cmd, n):
    out = []
    for _ in range(n):
        t0 = time.perf_counter()
        subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
        out.append(time.perf_counter() - t0)
    return out


def main():
    thermlogd, thermlog = sys.argv[1], sys.argv[2]
    n = int(sys.argv[sys.argv.index("--runs") + 1]) if "--runs" in sys.argv else 50
    tmp = tempfile.mkdtemp(prefix="thermlog-run-bench-")
    proc = None
    try:
        tree = os.path.join(tmp, "sys")
        shutil.copytree(os.path.join(ROOT, "tests", "fixtures", "rock5c"), tree, symlinks=True)
        sock = os.path.join(tmp, "thermlog.sock")
        cfg = os.path.join(tmp, "thermlog.yaml")
        with open(cfg, "w") as f:
            f.write(f"sysfs_root: {tree}\nprocfs_root: {tree}/proc\n"
                    f"database: {tmp}/thermlog.db\nhttp:\n  listen: 127.0.0.1:0\n"
                    f"runs:\n  socket: {sock}\n")
        log = open(os.path.join(tmp, "log"), "w")
        proc = subprocess.Popen([thermlogd, "-c", cfg], stdout=log, stderr=log)
        deadline = time.time() + 20
        while not os.path.exists(sock) and time.time() < deadline:
            time.sleep(0.05)
        true = shutil.which("true")
        timed([true], 5)  # warm the page cache
        timed([thermlog, "-c", cfg, "run", "--", true], 5)
        base = timed([true], n)
        wrapped = timed([thermlog, "-c", cfg, "run", "--", true], n)
        b, w = statistics.median(base), statistics.median(wrapped)
        print(f"true: {b * 1000:.2f} ms; thermlog run -- true: {w * 1000:.2f} ms "
              f"(median of {n}); overhead {(w - b) * 1000:.2f} ms (target < 5 ms), "
              f"ratio {w / b:.1f}")
    finally:
        stop(proc)
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
