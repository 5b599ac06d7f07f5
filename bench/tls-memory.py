#!/usr/bin/python3
"""Memory of thermlogd serving HTTPS to many short connections: a real daemon on a copied
fixture tree in a scratch directory (its socket, database and state there), a self-signed
certificate made by openssl, N TLS connections one after the other with Python's ssl module,
each sending one request (unauthenticated: 401, or --token: 200 from /api/v1/status) and
closing. RssAnon is read from /proc/PID/status every --every connections.

The figure is the growth per connection over the second half of the run: a leak shows as a
steady slope, a plateau as about zero.

usage: bench/tls-memory.py BUILD/src/thermlogd [N] [--every 5000] [--parallel 4] [--token]
                           [--plain] [--wrap CMD]
                           [--fixtures tests/fixtures/rock5c]
"""
import argparse
import concurrent.futures
import os
import re
import shutil
import socket
import ssl
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "lib"))
from thermlog_test import rss_kib, stop  # noqa: E402

TOKEN = "bench-token-0123456789abcdef"


def make_cert(d):
    cert, key = os.path.join(d, "cert.pem"), os.path.join(d, "key.pem")
    subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-keyout", key,
                    "-out", cert, "-days", "2", "-subj", "/CN=127.0.0.1",
                    "-addext", "subjectAltName=IP:127.0.0.1"], check=True,
                   capture_output=True)
    return cert, key


def start_daemon(exe, d, tree, tls, wrap=()):
    """thermlogd -c on @tree, everything it writes inside @d; returns (proc, port, log path)."""
    cfg = os.path.join(d, "thermlog.yaml")
    http = f"http:\n  listen: 127.0.0.1:0\n  token: {TOKEN}\n"
    if tls:
        cert, key = make_cert(d)
        http += f"  tls_cert: {cert}\n  tls_key: {key}\n"
    with open(cfg, "w") as f:
        f.write(f"sysfs_root: {tree}\nprocfs_root: {tree}/proc\n"
                f"database: {os.path.join(d, 'thermlog.db')}\n{http}"
                f"runs:\n  socket: {os.path.join(d, 'run', 'thermlog.sock')}\n")
    log_path = os.path.join(d, "thermlogd.log")
    log = open(log_path, "w")
    proc = subprocess.Popen([*wrap, exe, "-c", cfg], stdout=log, stderr=log)
    deadline = time.time() + 30
    while time.time() < deadline:
        with open(log_path) as f:
            m = re.search(r"serving HTTPS?.* on 127\.0\.0\.1:0 \(port (\d+)\)", f.read())
        if m:
            return proc, int(m.group(1)), log_path
        if proc.poll() is not None:
            break
        time.sleep(0.1)
    with open(log_path) as f:
        sys.exit("thermlogd did not start:\n" + f.read())


def one(port, ctx, request):
    with socket.create_connection(("127.0.0.1", port), timeout=30) as raw:
        s = ctx.wrap_socket(raw, server_hostname="127.0.0.1") if ctx else raw
        s.sendall(request)
        head = b""
        while b"\r\n\r\n" not in head:
            chunk = s.recv(4096)
            if not chunk:
                break
            head += chunk
        if ctx:
            try:
                s.unwrap()
            except (ssl.SSLError, OSError):
                pass
        return head.split(b" ", 2)[1] if head.startswith(b"HTTP/") else b"none"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("thermlogd")
    ap.add_argument("n", nargs="?", type=int, default=40000)
    ap.add_argument("--every", type=int, default=5000)
    ap.add_argument("--parallel", type=int, default=4,
                    help="clients at once (each connects, asks, closes, again)")
    ap.add_argument("--token", action="store_true", help="authenticated requests (200)")
    ap.add_argument("--plain", action="store_true", help="plain HTTP, for comparison")
    ap.add_argument("--wrap", default="", help="a command to run the daemon under (the RSS"
                    " figures are then the wrapper's), e.g. 'heaptrack -o FILE'")
    ap.add_argument("--fixtures", default=os.path.join(HERE, "..", "tests", "fixtures", "rock5c"))
    args = ap.parse_args()

    d = tempfile.mkdtemp(prefix="thermlog-tls-bench-")
    try:
        tree = os.path.join(d, "tree")
        shutil.copytree(args.fixtures, tree, symlinks=True)
        proc, port, log_path = start_daemon(args.thermlogd, d, tree, not args.plain,
                                             args.wrap.split())
        ctx = None
        if not args.plain:
            ctx = ssl.create_default_context(cafile=os.path.join(d, "cert.pem"))
        auth = f"Authorization: Bearer {TOKEN}\r\n" if args.token else ""
        request = (f"GET /api/v1/status HTTP/1.1\r\nHost: 127.0.0.1\r\n{auth}"
                   "Connection: close\r\n\r\n").encode()
        print("# %s, %s, %d connections" % ("HTTP" if args.plain else "HTTPS",
                                             "token (200)" if args.token else "no token (401)",
                                             args.n))
        print("%8s %12s %10s" % ("conns", "RssAnon kB", "status"))
        samples = [(0, rss_kib(proc.pid, "RssAnon:"))]
        print("%8d %12d %10s" % (0, samples[0][1], "-"))
        statuses = {}
        t0 = time.time()
        pool = concurrent.futures.ThreadPoolExecutor(args.parallel)
        i = 0
        while i < args.n:
            # One sample point per batch: the daemon is idle while RssAnon is read.
            batch = min(args.every, args.n - i)
            for st in pool.map(lambda _: one(port, ctx, request), range(batch)):
                statuses[st] = statuses.get(st, 0) + 1
            i += batch
            samples.append((i, rss_kib(proc.pid, "RssAnon:")))
            print("%8d %12d %10s" % (i, samples[-1][1],
                                     ",".join("%s:%d" % (k.decode(), v)
                                              for k, v in sorted(statuses.items()))),
                  flush=True)
        el = time.time() - t0
        half = [s for s in samples if s[0] >= args.n // 2]
        slope = (half[-1][1] - half[0][1]) * 1024 / max(1, half[-1][0] - half[0][0])
        print("# %.0f connections/s; RssAnon %d -> %d kB; second half %+.1f B/connection"
              " (%d -> %d kB)" % (args.n / el, samples[0][1], samples[-1][1], slope,
                                   half[0][1], half[-1][1]))
        if proc.poll() is not None:
            sys.exit("thermlogd exited during the run")
        stop(proc)
    finally:
        shutil.rmtree(d, ignore_errors=True)


if __name__ == "__main__":
    main()
