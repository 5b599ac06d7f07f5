#!/usr/bin/python3
"""Requests per second of thermlogd's /metrics and /api/v1/latest against node_exporter's /metrics
on the same sysfs fixture tree, measured with wrk in one run, printed as ratios (target: >= 5x).

usage: bench/http-bench.py THERMLOGD [SOURCE_ROOT] [--seconds N] [--connections N]
thermlogd runs on the fixture tree tests/fixtures/rock5c (no simulation, a cycle every 10 s,
hwmon off as libsensors reads the real /sys); node_exporter
(Debian prometheus-node-exporter) gets --path.sysfs on the same tree, once with its default
collectors and once with only the collectors that read what thermlog reads (thermal_zone,
hwmon, cpufreq). Everything listens on loopback; wrk uses 2 threads.
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "lib"))
from thermlog_test import free_port, stop, wait_http  # noqa: E402


def wrk(url, seconds, connections):
    out = subprocess.run(["wrk", "-t2", f"-c{connections}", f"-d{seconds}s", url],
                         capture_output=True, text=True).stdout
    rps = next((float(l.split()[1]) for l in out.splitlines() if l.startswith("Requests/sec")), 0)
    non2xx = next((l.strip() for l in out.splitlines() if "Non-2xx" in l), "")
    return rps, non2xx


def logged_port(log, timeout=30):
    """The port in thermlogd's "http: serving ... (port N)" log line (it binds port 0)."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        with open(log) as f:
            m = re.search(r"http: serving .* \(port (\d+)\)", f.read())
        if m:
            return int(m.group(1))
        time.sleep(0.2)
    return None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("thermlogd")
    ap.add_argument("root", nargs="?", default=os.path.join(os.path.dirname(__file__), ".."))
    ap.add_argument("--seconds", type=int, default=10)
    ap.add_argument("--connections", type=int, default=8)
    a = ap.parse_args()
    if not shutil.which("wrk"):
        print("wrk is not installed (Debian package wrk)", file=sys.stderr)
        return 1
    fixture = os.path.abspath(os.path.join(a.root, "tests", "fixtures", "rock5c"))
    exporter = shutil.which("prometheus-node-exporter") or shutil.which("node_exporter")
    procs = []
    with tempfile.TemporaryDirectory(prefix="thermlog-bench-") as tmp:
        try:
            cfg = os.path.join(tmp, "thermlog.yaml")
            with open(cfg, "w") as f:
                f.write(f"sysfs_root: {fixture}\nsources:\n  hwmon: {{enabled: false}}\n")
            dlog = os.path.join(tmp, "d.log")
            d = subprocess.Popen([a.thermlogd, "-c", cfg, "--db", os.path.join(tmp, "t.db"),
                                  "--listen", "127.0.0.1:0", "--interval", "10s"],
                                 stdout=subprocess.DEVNULL, stderr=open(dlog, "w"))
            procs.append(d)
            port = logged_port(dlog)
            if not port:
                print("thermlogd did not start", file=sys.stderr)
                return 1
            base = f"http://127.0.0.1:{port}"
            if not wait_http(base + "/api/v1/latest"):
                print("thermlogd did not start", file=sys.stderr)
                return 1
            # The first cycle comes on the interval's boundary: wait for it.
            deadline = time.time() + 30
            while time.time() < deadline:
                if json.loads(urllib.request.urlopen(base + "/api/v1/latest").read())["ts"]:
                    break
                time.sleep(0.5)
            else:
                print("thermlogd stored no cycle", file=sys.stderr)
                return 1
            results = []
            for path in ("/metrics", "/api/v1/latest"):
                size = len(urllib.request.urlopen(base + path).read())
                rps, bad = wrk(base + path, a.seconds, a.connections)
                results.append((f"thermlogd {path}", rps, size, bad))

            baselines = []
            if exporter:
                for name, extra in (("node_exporter /metrics (default collectors)", []),
                                    ("node_exporter /metrics (thermal_zone, hwmon, cpufreq)",
                                     ["--collector.disable-defaults", "--collector.thermal_zone",
                                      "--collector.hwmon", "--collector.cpufreq"])):
                    nport = free_port()
                    n = subprocess.Popen([exporter, f"--path.sysfs={fixture}",
                                          f"--web.listen-address=127.0.0.1:{nport}", *extra],
                                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                    procs.append(n)
                    nurl = f"http://127.0.0.1:{nport}/metrics"
                    if not wait_http(nurl):
                        print(f"{name}: did not start", file=sys.stderr)
                        continue
                    size = len(urllib.request.urlopen(nurl).read())
                    rps, bad = wrk(nurl, a.seconds, a.connections)
                    baselines.append((name, rps, size, bad))
                    stop(n, 10)
            else:
                print("prometheus-node-exporter is not installed: no baseline", file=sys.stderr)

            print(f"wrk -t2 -c{a.connections} -d{a.seconds}s, loopback, fixture {fixture}")
            print(f"{'endpoint':58} {'req/s':>10} {'bytes':>8}")
            for name, rps, size, bad in results + baselines:
                print(f"{name:58} {rps:10.0f} {size:8d} {bad}")
            for bname, brps, _, _ in baselines:
                for name, rps, _, _ in results:
                    ratio = rps / brps if brps else float("inf")
                    print(f"ratio {name} / {bname}: {ratio:.1f}x")
        finally:
            for p in procs:
                stop(p, 10)
    return 0


if __name__ == "__main__":
    sys.exit(main())
