#!/usr/bin/python3
"""Anonymous memory (RssAnon of /proc/PID/status) of thermlogd recording runs, on a copied
ROCK 5C fixture tree with fast samples every second, over its Unix socket:

  - N starts (all active at once, runs.max_active raised to N), then their N stops;
  - one long run: RssAnon every --every seconds for --seconds.

Prints the figures only; it asserts nothing.

usage: bench/run-memory.py BUILD/src/thermlogd [--runs 2000] [--seconds 600] [--every 60]
"""
import argparse
import http.client
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "lib"))
from thermlog_test import rss_kib, stop, wait_for  # noqa: E402


class UnixConnection(http.client.HTTPConnection):
    def __init__(self, path):
        super().__init__("localhost", timeout=60)
        self.path = path

    def connect(self):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(self.timeout)
        self.sock.connect(self.path)


def post(sock, path, body):
    c = UnixConnection(sock)
    try:
        c.request("POST", path, body=json.dumps(body))
        r = c.getresponse()
        return r.status, json.loads(r.read() or b"null")
    finally:
        c.close()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("thermlogd")
    ap.add_argument("--runs", type=int, default=2000)
    ap.add_argument("--seconds", type=int, default=600)
    ap.add_argument("--every", type=int, default=60)
    a = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="thermlog-run-memory-")
    proc = None
    try:
        tree = os.path.join(tmp, "sys")
        shutil.copytree(os.path.join(HERE, "..", "tests", "fixtures", "rock5c"), tree,
                        symlinks=True)
        sock = os.path.join(tmp, "run", "thermlog.sock")
        cfg = os.path.join(tmp, "thermlog.yaml")
        with open(cfg, "w") as f:
            f.write(f"sysfs_root: {tree}\nprocfs_root: {tree}/proc\n"
                    f"database: {tmp}/thermlog.db\nhttp:\n  listen: 127.0.0.1:0\n"
                    f"runs:\n  socket: {sock}\n  interval: 1s\n  max_active: {a.runs}\n")
        log = open(os.path.join(tmp, "thermlogd.log"), "w")
        proc = subprocess.Popen([a.thermlogd, "-c", cfg], stdout=log, stderr=log)
        if not wait_for(lambda: os.path.exists(sock), 30):
            sys.exit("thermlogd did not create its socket")
        time.sleep(2)
        anon = lambda: rss_kib(proc.pid, "RssAnon:")  # noqa: E731
        base = anon()
        print(f"RssAnon at start:                 {base} kB")
        ids = []
        for i in range(a.runs):
            st, body = post(sock, "/api/v1/runs", {"label": f"r{i % 50}", "pid": None})
            if st != 201:
                sys.exit(f"start {i}: HTTP {st} {body}")
            ids.append(body["id"])
        time.sleep(3)
        active = anon()
        print(f"RssAnon with {a.runs} runs active:   {active} kB "
              f"({(active - base) * 1024 / a.runs:.0f} B a run)")
        for i in ids:
            st, body = post(sock, f"/api/v1/runs/{i}/stop", {"exit_code": 0})
            if st != 200:
                sys.exit(f"stop {i}: HTTP {st} {body}")
        time.sleep(3)
        print(f"RssAnon after their {a.runs} stops:   {anon()} kB")
        st, body = post(sock, "/api/v1/runs", {"label": "long", "pid": None})
        t0 = time.monotonic()
        first = anon()
        print(f"one long run at 1 s: {first} kB at 0 s")
        while time.monotonic() - t0 < a.seconds:
            time.sleep(min(a.every, a.seconds - (time.monotonic() - t0)))
            print(f"one long run at 1 s: {anon()} kB at {time.monotonic() - t0:.0f} s")
        post(sock, f"/api/v1/runs/{body['id']}/stop", {"exit_code": 0})
        print(f"RssAnon after the long run:       {anon()} kB")
    finally:
        if proc:
            stop(proc)
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
