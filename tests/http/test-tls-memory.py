#!/usr/bin/python3
"""Memory over TLS stays flat: bench/tls-memory.py's daemon (its own scratch directory, a
self-signed certificate) serves 4000 HTTPS connections one request each, and RssAnon grows by
less than 100 B a connection over the second half. Before the fixed TLS thread pool every
connection left about 240 B behind (GnuTLS state of a thread that was never reused), 480 kB
over these 2000 connections.

usage: test-tls-memory.py THERMLOGD BENCH_SCRIPT [N]   (TAP output)
"""
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from thermlog_test import done, ok  # noqa: E402

THERMLOGD, BENCH = sys.argv[1], sys.argv[2]
N = int(sys.argv[3]) if len(sys.argv) > 3 else 4000
BOUND = 100  # B a connection; the leak was 240, a plateau reads 0-20 here

with open(THERMLOGD, "rb") as f:
    if b"libasan" in f.read():  # ASan's quarantine keeps freed memory resident
        print("1..0 # SKIP RSS means nothing when the daemon runs under AddressSanitizer")
        sys.exit(0)

r = subprocess.run([sys.executable, BENCH, THERMLOGD, str(N), "--every", str(N // 4)],
                   capture_output=True, text=True, timeout=600)
print("\n".join("# " + line for line in r.stdout.splitlines()))
ok(r.returncode == 0, "the TLS bench ran: " + r.stderr.strip()[-300:])
m = re.search(r"second half ([-+][0-9.]+) B/connection", r.stdout)
ok(m is not None, "it printed the second half's growth")
last = [line for line in r.stdout.splitlines() if re.match(r"\s+%d\s" % N, line)]
ok(bool(last) and last[0].split()[-1] == "401:%d" % N,
   "every one of %d connections was answered (401, no token)" % N)
if m:
    ok(float(m.group(1)) < BOUND,
       "RssAnon over the second half grows %s B a connection, under %d" % (m.group(1), BOUND))
done()
