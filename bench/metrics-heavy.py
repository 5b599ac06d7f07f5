#!/usr/bin/python3
"""/metrics latency while heavy requests are computed, as a ratio against the same server's
idle latency measured in the same run (so a slower or busier machine moves both alike).

usage: bench/metrics-heavy.py HTTP_SERVE [--days 180] [--requests 300] [--clients 8]
HTTP_SERVE is the test server built with the tests (build/tests/http-serve): it fills a database
with DAYS of history and serves it on a loopback socket bound to port 0. First REQUESTS
sequential GET /metrics on the idle server (the baseline), then as many while CLIENTS heavy
clients loop on half a year of samples, statistics and lifetime (each from its own loopback
address). Prints p50 and p99 of both and their ratios; the target is a p99 ratio under 10:
/metrics reads the live snapshot and never waits for a heavy worker slot.
"""
import argparse
import http.client
import os
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "lib"))
from thermlog_test import listener, stop  # noqa: E402

HEAVY = ["/api/v1/samples?from=-180d&max_points=5000", "/api/v1/stats?from=-180d",
         "/api/v1/lifetime", "/api/v1/samples?from=-180d&max_points=5000&channel=thermal/*"]
YAML = """interval: 1s
http:
  listen: 127.0.0.1:0
  connection_limit: 64
  max_points: 20000
capacitors:
  - name: C12 bulk 470uF/35V
    sensor: iio/maxim_thermocouple/temp
    basis: ambient
    rated_life_h: 2000
    rated_temp_c: 105
    model: bt
    type: wet
"""


def percentile(values, p):
    v = sorted(values)
    return v[min(len(v) - 1, int(p / 100 * len(v)))]


def metrics_latencies(port, n):
    """@n sequential GET /metrics on one kept-alive connection, in ms."""
    lat = []
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    for _ in range(n):
        t0 = time.monotonic()
        conn.request("GET", "/metrics")
        r = conn.getresponse()
        r.read()
        lat.append((time.monotonic() - t0) * 1000)
        if r.status != 200:
            raise RuntimeError("/metrics answered %d" % r.status)
        time.sleep(0.01)
    conn.close()
    return lat


def heavy_client(port, i, done, counts):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=60,
                                   source_address=("127.0.0.%d" % (10 + i), 0))
    k = i
    while not done.is_set():
        try:
            c.request("GET", HEAVY[k % len(HEAVY)])
            r = c.getresponse()
            r.read()
            counts[r.status] = counts.get(r.status, 0) + 1
            if r.status == 503:
                time.sleep(0.02)
        except (OSError, http.client.HTTPException):
            c.close()
            c = http.client.HTTPConnection("127.0.0.1", port, timeout=60,
                                           source_address=("127.0.0.%d" % (10 + i), 0))
        k += 1
    c.close()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("http_serve")
    ap.add_argument("--days", type=int, default=180)
    ap.add_argument("--requests", type=int, default=300)
    ap.add_argument("--clients", type=int, default=8)
    a = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="thermlog-bench-") as tmp:
        cfg = os.path.join(tmp, "thermlog.yaml")
        with open(cfg, "w") as f:
            f.write(YAML)
        sock = listener()
        proc = subprocess.Popen([a.http_serve, cfg, os.path.join(tmp, "thermlog.db"), "--days",
                                 str(a.days), "--listen-fd", str(sock.fileno())],
                                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                                pass_fds=(sock.fileno(),))
        sock.close()
        url = proc.stdout.readline().strip()
        if not url:
            print("http-serve did not start", file=sys.stderr)
            return 1
        port = int(url.rsplit(":", 1)[1].strip("/"))
        try:
            idle = metrics_latencies(port, a.requests)
            done = threading.Event()
            counts = {}
            threads = [threading.Thread(target=heavy_client, args=(port, i, done, counts))
                       for i in range(a.clients)]
            for t in threads:
                t.start()
            time.sleep(0.3)  # the heavy clients' first requests in flight
            loaded = metrics_latencies(port, a.requests)
            done.set()
            for t in threads:
                t.join()
        finally:
            stop(proc, 10)
    print("/metrics, %d requests each, %d days of history, %d heavy clients" %
          (a.requests, a.days, a.clients))
    print("  idle:   p50 %7.2f ms  p99 %7.2f ms" % (percentile(idle, 50), percentile(idle, 99)))
    print("  heavy:  p50 %7.2f ms  p99 %7.2f ms  (heavy answers: %s)" %
          (percentile(loaded, 50), percentile(loaded, 99),
           ", ".join("%d x %d" % (n, s) for s, n in sorted(counts.items()))))
    r50 = percentile(loaded, 50) / percentile(idle, 50)
    r99 = percentile(loaded, 99) / percentile(idle, 99)
    print("  ratio:  p50 %.2f  p99 %.2f  (target: p99 ratio under 10)" % (r50, r99))
    return 0 if r99 < 10 else 1


if __name__ == "__main__":
    sys.exit(main())
