#!/usr/bin/python3
"""HTTP integration test over real sockets: the security rules (refused non-loopback bind
without a token, 401 without or with a wrong bearer token, metrics_public, TLS), 404/405,
parameter errors as JSON naming the parameter, the endpoints' answers, streamed CSV export
with flat memory, connection limits and socket activation.

The JSON endpoints and the CSV export are also compared with the CLI's --json and export output
for the same fixed window: the same code answers both.

usage: test-http.py HTTP_SERVE THERMLOG [PROMTOOL]   (TAP output)
"""
import csv
import http.client
import io
import json
import os
import shutil
import signal
import socket
import ssl
import struct
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from thermlog_test import done, listener, ok, rss_kib, stop  # noqa: E402

SERVE, THERMLOG = sys.argv[1], sys.argv[2]
IPV6_CHILD = len(sys.argv) > 4 and sys.argv[3] == "--ipv6-prefix-child"
PROMTOOL = sys.argv[3] if len(sys.argv) > 3 and not IPV6_CHILD else shutil.which("promtool")
TOKEN = "0123456789abcdef-test-token"

# Every server started, so that main() stops the ones a failed check left running.
servers = []


class Server:
    """http-serve with a YAML config written to a temp dir; stops on exit. It serves on a
    listening socket bound to port 0 on @host (passed with --listen-fd), so no port can be
    taken by another process first; the port in http.listen is then not used. host=None: the
    server binds http.listen itself."""

    def __init__(self, tmp, yaml, args=(), days=2, host="127.0.0.1"):
        self.tmp = tmp
        path = os.path.join(tmp, "thermlog.yaml")
        with open(path, "w") as f:
            f.write(yaml)
        self.db = os.path.join(tmp, "thermlog.db")
        self.log = open(os.path.join(tmp, "serve.log"), "w+")
        argv, fds = [SERVE, path, self.db, "--days", str(days), *args], ()
        sock = listener(host) if host else None
        if sock:
            argv += ["--listen-fd", str(sock.fileno())]
            fds = (sock.fileno(),)
        self.proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=self.log, text=True,
                                     pass_fds=fds)
        if sock:
            sock.close()
        self.url = self.proc.stdout.readline().strip()
        self.port = int(self.url.rsplit(":", 1)[1].strip("/")) if self.url else None
        servers.append(self)

    def stderr(self):
        if self.log.closed:
            return self.final_stderr
        self.log.flush()
        self.log.seek(0)
        return self.log.read()

    def rss_kib(self):
        return rss_kib(self.proc.pid)

    def stop(self):
        stop(self.proc, 10)
        if not self.log.closed:
            self.proc.stdout.close()
            self.final_stderr = self.stderr()
            self.log.close()
        return self.proc.returncode


def request(port, path, method="GET", headers=None, tls=None, body=None):
    if tls:
        conn = http.client.HTTPSConnection("127.0.0.1", port, context=tls, timeout=30)
    else:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    conn.request(method, path, body=body, headers=headers or {})
    resp = conn.getresponse()
    data = resp.read()
    conn.close()
    return resp, data


def get_json(port, path, headers=None, tls=None):
    resp, data = request(port, path, headers=headers, tls=tls)
    try:
        return resp, json.loads(data)
    except ValueError:
        return resp, None


CAPACITOR = """capacitors:
  - name: C12 bulk 470uF/35V
    sensor: iio/maxim_thermocouple/temp
    basis: ambient
    rated_life_h: 2000
    rated_temp_c: 105
    model: bt
    type: wet
"""


def base_yaml(listen="127.0.0.1:9470", extra=""):
    return f"interval: 1s\nhttp:\n  listen: {listen}\n{extra}{CAPACITOR}"


def start_server(tmp, name, yaml, what, **kw):
    """A Server in its own directory @name under @tmp, checked as started (@what): None when it
    did not start (the check failed, the server is stopped)."""
    d = os.path.join(tmp, name)
    os.mkdir(d)
    s = Server(d, yaml, **kw)
    if not ok(s.port, what, s.stderr()):
        s.stop()
        return None
    return s


def test_refused_bind(tmp):
    d = os.path.join(tmp, "refuse")
    os.mkdir(d)
    s = Server(d, "http:\n  listen: 0.0.0.0:9470\n", host="0.0.0.0")
    rc = s.proc.wait(30)
    err = s.stderr()
    s.stop()
    ok(rc == 2, "non-loopback bind without a token: http_create refuses", f"rc={rc}\n{err}")
    ok("not a loopback address" in err and "http.token" in err,
       "the refusal says why and names http.token", err)


def test_loopback(tmp):
    s = start_server(tmp, "loopback", base_yaml(), "server on loopback starts without a token",
                     days=30)
    if not s:
        return
    p = s.port

    resp, status = get_json(p, "/api/v1/status")
    ok(resp.status == 200 and status and status["database"]["cycles"] > 30 * 1440 - 5,
       "status reports the stored cycles", status)
    ok(status and status["channels_present"] == 4 and status["clock_synchronized"] is True,
       "status reports channels present and clock", status)

    resp, latest = get_json(p, "/api/v1/latest")
    keys = [c["key"] for c in latest["channels"]] if latest else []
    ok(resp.status == 200 and "thermal/soc-thermal" in keys, "latest lists the live channels",
       latest)
    ok(resp.getheader("Content-Type") == "application/json"
       and resp.getheader("Cache-Control") == "no-store", "JSON content type, no-store")

    resp, chans = get_json(p, "/api/v1/channels")
    ok(resp.status == 200 and len(chans["channels"]) == 4, "channels lists the stored channels",
       chans)

    resp, stats = get_json(p, "/api/v1/stats?from=-6h&channel=thermal/soc-thermal")
    ok(resp.status == 200 and len(stats["channels"]) == 1
       and stats["channels"][0]["key"] == "thermal/soc-thermal"
       and stats["channels"][0]["count"] >= 359, "stats over 6 h for one channel", stats)
    resp, stats2 = get_json(p, "/api/v1/stats?from=-6h&channel=thermal/*&percentile=99")
    ok(resp.status == 200 and len(stats2["channels"]) == 2 and "p99" in stats2["channels"][0],
       "stats with a glob and an extra percentile", stats2)

    resp, samples = get_json(p, "/api/v1/samples?channel=thermal/npu-thermal&from=-1d&max_points=100")
    ok(resp.status == 200 and 0 < len(samples["channels"][0]["points"]) <= 100,
       "samples downsampled to max_points", samples and samples.get("bucket_s"))
    resp, peak = get_json(p, "/api/v1/peak?channel=thermal/npu-thermal&samples=11")
    ok(resp.status == 200 and len(peak["rows"]) == 11, "peak returns N rows around the maximum",
       peak)

    # Errors: JSON bodies naming the parameter.
    cases = [
        ("/api/v1/stats?from=yesterday", 400, "from"),
        ("/api/v1/stats?to=2026-13-01", 400, "to"),
        ("/api/v1/stats?from=-1h&from=-2h", 400, "from"),
        ("/api/v1/stats?channel=nope/zone", 400, "channel"),
        ("/api/v1/stats?bogus=1", 400, "bogus"),
        ("/api/v1/stats?from=-500d", 400, "from"),
        ("/api/v1/stats?include_unsynced=maybe", 400, "include_unsynced"),
        ("/api/v1/samples?channel=thermal/soc-thermal&max_points=999999", 400, "max_points"),
        ("/api/v1/samples?channel=thermal/soc-thermal&max_points=-1", 400, "max_points"),
        ("/api/v1/peak", 400, "channel"),
        ("/api/v1/export.csv?format=xml", 400, "format"),
    ]
    for path, want, param in cases:
        resp, body = get_json(p, path)
        ok(resp.status == want and body and body.get("parameter") == param
           and f"'{param}'" in body.get("error", ""),
           f"{path} -> {want} naming '{param}'", f"{resp.status} {body}")

    resp, body = get_json(p, "/api/v2/nothing")
    ok(resp.status == 404 and body and "error" in body, "unknown path 404 JSON", body)
    for method in ("POST", "PUT", "DELETE", "PATCH"):
        resp, data = request(p, "/api/v1/latest", method=method, body=b"x=1")
        ok(resp.status == 405 and resp.getheader("Allow") == "GET, HEAD",
           f"{method} is 405 with Allow", resp.status)
    # One rule for methods: anything but GET and HEAD is 405 on every path, known or not.
    for method, path in (("OPTIONS", "/api/v2/nothing"), ("POST", "/nothing"),
                         ("OPTIONS", "/metrics"), ("DELETE", "/")):
        resp, data = request(p, path, method=method, body=b"x=1" if method == "POST" else None)
        ok(resp.status == 405 and resp.getheader("Allow") == "GET, HEAD",
           f"{method} {path} is 405 with Allow", resp.status)
    # Prometheus jobs may set params: /metrics ignores what it does not know.
    for path in ("/metrics?x=1", "/metrics?job=thermlog&x"):
        resp, data = request(p, path)
        ok(resp.status == 200 and b"thermlog_" in data, f"{path} answers the metrics",
           resp.status)
    # A GET body means nothing; a large one is 413 (declared or chunked), a small one ignored.
    resp, data = request(p, "/api/v1/latest", body=b"x" * 100)
    ok(resp.status == 200, "GET with a small body: 200", resp.status)
    reply = raw_request(p, "GET /api/v1/latest HTTP/1.1\r\nHost: x\r\n"
                        "Content-Length: 1000000\r\n\r\n")
    ok(reply and reply.startswith(b"HTTP/1.1 413 "), "GET declaring a 1 MB body: 413", reply)
    sock = socket.create_connection(("127.0.0.1", p))
    sock.settimeout(5)
    sock.sendall(b"GET /api/v1/latest HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n")
    reply = b""
    try:
        for _ in range(40):
            sock.sendall(b"1000\r\n" + b"y" * 4096 + b"\r\n")
        reply = sock.recv(100)
    except OSError as e:
        try:
            reply = sock.recv(100)
        except OSError:
            reply = repr(e).encode()
    sock.close()
    ok(reply.startswith(b"HTTP/1.1 413 "), "GET with a 160 KiB chunked body: 413", reply)
    # A run body over 64 KiB (src/http/api.h: API_RUN_BODY_MAX) is answered 413, whether its
    # length is declared or it comes chunked; a small chunked one is read as usual.
    big = b'{"label": "' + b"x" * 70000 + b'"}'
    reply = raw_request(p, b"POST /api/v1/runs HTTP/1.1\r\nHost: x\r\n"
                        b"Content-Type: application/json\r\n"
                        b"Content-Length: %d\r\n\r\n" % len(big) + big)
    ok(reply and reply.startswith(b"HTTP/1.1 413 "), "POST runs, 70 KB declared: 413", reply)
    chunked = b"".join(b"%x\r\n" % len(big[i:i + 4096]) + big[i:i + 4096] + b"\r\n"
                       for i in range(0, len(big), 4096)) + b"0\r\n\r\n"
    reply = raw_request(p, b"POST /api/v1/runs HTTP/1.1\r\nHost: x\r\n"
                        b"Transfer-Encoding: chunked\r\n\r\n" + chunked, timeout=5)
    ok(reply and reply.startswith(b"HTTP/1.1 413 "), "POST runs, 70 KB chunked: 413", reply)
    small = b'{"label": "x"}'
    reply = raw_request(p, b"POST /api/v1/runs HTTP/1.1\r\nHost: x\r\n"
                        b"Transfer-Encoding: chunked\r\n\r\n%x\r\n%s\r\n0\r\n\r\n"
                        % (len(small), small), timeout=5)
    ok(reply and not reply.startswith(b"HTTP/1.1 413 ") and reply.startswith(b"HTTP/1.1 4"),
       "POST runs, small chunked body: read, answered by the API (no token here)", reply)
    resp, data = request(p, "/api/v1/latest", method="HEAD")
    ok(resp.status == 200 and data == b"", "HEAD answers headers only")

    # Keep-alive: several requests on one connection.
    conn = http.client.HTTPConnection("127.0.0.1", p, timeout=10)
    statuses = []
    for path in ("/metrics", "/api/v1/latest", "/api/v1/status"):
        conn.request("GET", path)
        r = conn.getresponse()
        r.read()
        statuses.append(r.status)
    conn.close()
    ok(statuses == [200, 200, 200], "three requests on one kept-alive connection", statuses)

    # The dashboard.
    resp, page = request(p, "/", headers={"Accept-Encoding": "gzip"})
    etag = resp.getheader("ETag")
    ok(resp.status == 200 and resp.getheader("Content-Type", "").startswith("text/html")
       and etag and resp.getheader("Vary") == "Accept-Encoding", "GET / serves the dashboard")
    resp, _ = request(p, "/", headers={"Accept-Encoding": "gzip", "If-None-Match": etag})
    ok(resp.status == 304, "If-None-Match -> 304", resp.status)

    # /metrics passes promtool and matches /api/v1/latest.
    resp, metrics = request(p, "/metrics")
    ok(resp.status == 200 and b"thermlog_temperature_celsius{" in metrics, "/metrics serves")
    if PROMTOOL:
        r = subprocess.run([PROMTOOL, "check", "metrics"], input=metrics, capture_output=True)
        ok(r.returncode == 0, "promtool check metrics passes", r.stdout + r.stderr)

    resp, life = get_json(p, "/api/v1/lifetime")
    ok(resp.status == 200 and life["capacitors"][0]["name"] == "C12 bulk 470uF/35V"
       and 0 < life["capacitors"][0]["consumed_fraction"] < 1,
       "lifetime reports the configured capacitor", life)
    resp, body = get_json(p, "/api/v1/lifetime?from=now&to=-1d")
    ok(resp.status == 400 and body.get("parameter") == "from", "lifetime: from after to is 400",
       body)

    test_same_as_cli(s)
    test_export(s)
    test_many_params(s)
    test_limits(s)
    rc = s.stop()
    ok(rc == 0, "server stops cleanly on SIGTERM", s.stderr()[-2000:])


def cli(s, *args):
    r = subprocess.run([THERMLOG, "-c", os.path.join(s.tmp, "thermlog.yaml"), "--db", s.db, *args],
                       capture_output=True)
    return r.returncode, r.stdout


def test_same_as_cli(s):
    """The API and the CLI answer the same window with the same numbers and bytes."""
    now = int(time.time())
    frm, to = now - 6 * 3600, now - 3600
    w = f"from={frm}&to={to}"
    pairs = [
        (f"/api/v1/stats?{w}&channel=thermal/*&percentile=99",
         ["stats", "--from", str(frm), "--to", str(to), "--channel", "thermal/*",
          "--percentile", "99", "--json"]),
        (f"/api/v1/peak?{w}&channel=thermal/npu-thermal&samples=9",
         ["peak", "--from", str(frm), "--to", str(to), "--channel", "thermal/npu-thermal",
          "--samples", "9", "--json"]),
        (f"/api/v1/lifetime?{w}", ["lifetime", "--from", str(frm), "--to", str(to), "--json"]),
    ]
    for path, args in pairs:
        resp, api = get_json(s.port, path)
        rc, out = cli(s, *args)
        try:
            mine = json.loads(out)
        except ValueError:
            mine = out[:500]
        ok(resp.status == 200 and rc == 0 and api == mine,
           f"{path.split('?')[0]} equals thermlog {args[0]} --json", f"rc={rc}\napi: {str(api)[:800]}\ncli: {str(mine)[:800]}")
    test_same_names(s, frm, to)
    resp, api = get_json(s.port, "/api/v1/channels")
    rc, out = cli(s, "channels", "--json")
    strip = lambda d: [{k: v for k, v in c.items() if k != "last_seen"} for c in d["channels"]]
    ok(resp.status == 200 and rc == 0 and strip(api) == strip(json.loads(out)),
       "/api/v1/channels equals thermlog channels --json (but the moving last_seen)")
    for fmt in ("long", "wide"):
        resp, body = request(s.port, f"/api/v1/export.csv?{w}&format={fmt}")
        rc, out = cli(s, "export", "--from", str(frm), "--to", str(to), "--format", fmt)
        ok(resp.status == 200 and rc == 0 and body == out and len(body) > 1000,
           f"export.csv format={fmt} is byte-identical to thermlog export",
           f"{len(body)} vs {len(out)} bytes")


def cli_err(s, *args):
    r = subprocess.run([THERMLOG, "-c", os.path.join(s.tmp, "thermlog.yaml"), "--db", s.db, *args],
                       capture_output=True, text=True)
    return r.returncode, r.stderr


def test_same_names(s, frm, to):
    """A name is resolved once for both: a channel by its label answers as the CLI's --channel
    does, and an unknown channel or throttle domain is refused with the CLI's suggestion."""
    w = f"from={frm}&to={to}"
    resp, api = get_json(s.port, f"/api/v1/stats?{w}&channel=A76%20cluster%200")
    rc, out = cli(s, "stats", "--from", str(frm), "--to", str(to), "--channel", "A76 cluster 0",
                  "--json")
    ok(resp.status == 200 and rc == 0 and api == json.loads(out)
       and [c["key"] for c in api["channels"]] == ["cpufreq/policy4"],
       "/api/v1/stats?channel=<label> equals thermlog stats --channel <label> --json",
       f"{resp.status} {str(api)[:400]}")
    for path, args, param, hint in [
            ("/api/v1/stats?channel=soc-thermel", ["stats", "--channel", "soc-thermel"],
             "channel", "did you mean thermal/soc-thermal?"),
            ("/api/v1/peak?channel=polcy4", ["peak", "--channel", "polcy4"], "channel",
             "did you mean cpufreq/policy4?"),
            ("/api/v1/throttle?domain=policy4", ["throttle", "--domain", "policy4"], "domain",
             "did you mean 'cpufreq/policy4'?")]:
        resp, body = get_json(s.port, path)
        rc, err = cli_err(s, *args)
        msg = (body or {}).get("error", "")
        ok(resp.status == 400 and body.get("parameter") == param and hint in msg
           and rc == 2 and hint in err and msg.split(": ", 1)[1] in err,
           f"{path.split('?')[1]}: a 400 naming '{param}' with the CLI's suggestion",
           f"{resp.status} {body}\ncli {rc}: {err}")


def test_export(s):
    p = s.port
    resp, data = request(p, "/api/v1/export.csv?from=-1d&channel=thermal/soc-thermal")
    resp_w, wide = request(p, "/api/v1/export.csv?from=-1h&format=wide")
    header = wide.decode().splitlines()[0] if wide else ""
    ok(resp_w.status == 200 and "thermal/soc-thermal" in header
       and 'wide.csv"' in resp_w.getheader("Content-Disposition", ""),
       "wide export has one column per channel", header)
    rows = list(csv.reader(io.StringIO(data.decode())))
    ok(resp.status == 200 and resp.getheader("Transfer-Encoding") == "chunked",
       "export.csv is streamed (chunked)", dict(resp.getheaders()))
    cd = resp.getheader("Content-Disposition", "")
    ok(cd.startswith('attachment; filename="thermlog-') and cd.endswith('-long.csv"'),
       "Content-Disposition names the file", cd)
    ok(resp.getheader("Content-Type", "").startswith("text/csv"), "CSV content type")
    ok(len(rows) >= 1440 and all(r[2] == "thermal/soc-thermal" for r in rows[1:]),
       "one row per minute of the channel", len(rows))

    # Memory stays flat: a 30-day export (about 12 MB) must not grow the server's RSS by its size.
    before = s.rss_kib()
    conn = http.client.HTTPConnection("127.0.0.1", p, timeout=60)
    conn.request("GET", "/api/v1/export.csv?from=-30d")
    r = conn.getresponse()
    total = 0
    peak = before
    while True:
        chunk = r.read(65536)
        if not chunk:
            break
        total += len(chunk)
        peak = max(peak, s.rss_kib())
    conn.close()
    ok(r.status == 200 and total > 10_000_000, "a 30-day export streams",
       f"{r.status} {total} bytes")
    with open(f"/proc/{s.proc.pid}/maps") as f:
        sanitized = "libasan" in f.read()  # ASan's quarantine keeps freed memory resident
    ok(sanitized or peak - before < 4096, "server RSS grows by less than 4 MiB during the export",
       f"before {before} KiB, peak {peak} KiB, body {total // 1024} KiB")


def raw_request(port, text, timeout=2.0):
    """Sends @text on a fresh connection; the answer's first bytes (b"" if closed, None if
    nothing came within @timeout)."""
    sock = socket.create_connection(("127.0.0.1", port))
    sock.settimeout(timeout)
    try:
        sock.sendall(text.encode() if isinstance(text, str) else text)
        data = b""
        while b"\r\n\r\n" not in data:
            chunk = sock.recv(4096)
            if not chunk:
                break
            data += chunk
        return data
    except socket.timeout:
        return None
    finally:
        sock.close()


def test_many_params(s):
    """Hundreds of query parameters once exhausted libmicrohttpd's connection pool before our
    handler ran: no answer, and the per-request state leaked (ASan reports it at exit)."""
    p = s.port
    forms = {
        "2000 'aN=1' parameters": "&".join(f"a{i}=1" for i in range(2000)),
        "2000 bare parameters": "&".join("a" for _ in range(2000)),
        "600 parameters": "&".join(f"k{i}=v" for i in range(600)),
    }
    for what, query in forms.items():
        reply = raw_request(p, f"GET /metrics?{query} HTTP/1.1\r\nHost: x\r\n\r\n")
        ok(reply is not None and (reply.startswith(b"HTTP/1.1 414 ")
                                  or reply.startswith(b"HTTP/1.1 400 ")),
           f"{what}: 414 or 400 at once", reply)
    before = s.rss_kib()
    query = "&".join(f"a{i}=1" for i in range(2000))
    answered = 0
    for _ in range(1000):
        if raw_request(p, f"GET /api/v1/latest?{query} HTTP/1.1\r\nHost: x\r\n\r\n"):
            answered += 1
        else:
            break
    after = s.rss_kib()
    ok(answered == 1000, "1000 requests with 2000 parameters are all answered", answered)
    with open(f"/proc/{s.proc.pid}/maps") as f:
        sanitized = "libasan" in f.read()
    ok(sanitized or after - before < 2048,
       "RSS grows by less than 2 MiB over 1000 such requests",
       f"before {before} KiB, after {after} KiB")
    resp, _ = request(p, "/metrics")
    ok(resp.status == 200, "/metrics answers after the parameter flood", resp.status)


def test_limits(s):
    p = s.port
    # A header larger than the per-connection memory limit is refused, and the server lives on.
    sock = socket.create_connection(("127.0.0.1", p))
    sock.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\nX-Big: " + b"b" * 60000 + b"\r\n\r\n")
    reply = sock.recv(100)
    sock.close()
    ok(reply.startswith(b"HTTP/1.1 431") or reply.startswith(b"HTTP/1.1 413"),
       "oversized headers are refused", reply)
    # Idle connections beyond the per-address limit (8 with connection_limit 32): each new one
    # makes room by cutting the oldest of that address without a request, so the newest are
    # answered and the oldest are closed.
    socks = []
    for _ in range(12):
        socks.append(socket.create_connection(("127.0.0.1", p)))
        time.sleep(0.05)  # accepted in order: the oldest idle one is the first opened
    answered, closed = [], []
    for i, sk in enumerate(socks):
        sk.settimeout(10)
        try:
            sk.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n")
            (answered if sk.recv(20).startswith(b"HTTP/1.1 200") else closed).append(i)
        except OSError:
            closed.append(i)
    for sk in socks:
        sk.close()
    ok(answered == list(range(4, 12)) and closed == list(range(4)),
       "beyond the per-address limit (8) the oldest idle connections are closed, not the new",
       (answered, closed))
    resp, _ = request(p, "/api/v1/latest")
    ok(resp.status == 200, "service continues after the flood")
    test_local_quota(p)


def test_local_quota(p):
    """Every local client shares 127.0.0.1: one holding 8 half-sent requests must not deny the
    dashboard and /metrics to the others (2 of 42 were answered), nor may connections its
    clients closed count until the server notices (six sequential clients got resets)."""
    held = []
    for _ in range(8):
        sk = socket.create_connection(("127.0.0.1", p))
        sk.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\n")  # the head never ends
        held.append(sk)
    time.sleep(0.2)
    answered = 0
    for path in ("/", "/metrics") * 21:
        try:
            resp, _ = request(p, path)
            answered += resp.status == 200
        except OSError:
            pass
    for sk in held:
        sk.close()
    ok(answered == 42, f"8 half-sent requests from 127.0.0.1 leave it the dashboard and "
       f"/metrics ({answered} of 42 answered)")
    import threading
    failures = []

    def polite():
        for _ in range(30):
            try:
                conn = http.client.HTTPConnection("127.0.0.1", p, timeout=30)
                conn.request("GET", "/metrics")
                conn.getresponse().read()
                conn.close()  # the client closes first; the server keeps the connection
            except OSError as e:
                failures.append(repr(e))
    threads = [threading.Thread(target=polite) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    ok(not failures, f"six sequential clients, 180 requests, no reset ({len(failures)} failed)",
       failures[:5])


def abort_close(sock):
    """Closes with a reset: a client socket bound to a chosen address leaves no TIME_WAIT that
    would keep a later server from binding 0.0.0.0."""
    if sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        sock.close()


def test_heavy(tmp):
    """Heavy requests (half a year of series, statistics, lifetime) run beside light ones:
    /metrics is answered while both heavy worker slots are busy, heavy ones beyond the worker
    slots get 503 with Retry-After, and clients that never read their large answers do not grow
    the server without bound. Nothing here depends on the machine's speed: the clients loop
    until enough has happened (bench/metrics-heavy.py measures /metrics' latency under this
    load as a ratio against the idle server's)."""
    import threading
    s = start_server(tmp, "heavy",
                     base_yaml("127.0.0.1:0", "  connection_limit: 64\n  max_points: 20000\n"),
                     "server with half a year of history starts", days=180)
    if not s:
        return
    p = s.port
    heavy = ["/api/v1/samples?from=-180d&max_points=5000", "/api/v1/stats?from=-180d",
             "/api/v1/lifetime", "/api/v1/samples?from=-180d&max_points=5000&channel=thermal/*"]
    statuses = []
    retry_after = []
    busy = [0]  # heavy requests sent and not yet answered
    lock = threading.Lock()
    metrics = []  # (status, heavy requests in flight before and after it)
    done = threading.Event()

    def enough():
        return (statuses.count(200) >= 8 and statuses.count(503) >= 1 and
                sum(1 for m in metrics if m[1] >= 2 and m[2] >= 2) >= 20)

    deadline = time.monotonic() + 90  # a bound on a broken server, not a condition

    def loop(i):
        # Each heavy client from its own loopback address, as distinct clients would be,
        # on one kept-alive connection; after a 503 it waits a little (not the 2 s asked).
        c = http.client.HTTPConnection("127.0.0.1", p, timeout=60,
                                       source_address=(f"127.0.0.{10 + i}", 0))
        while not done.is_set() and time.monotonic() < deadline:
            try:
                with lock:
                    busy[0] += 1
                c.request("GET", heavy[(i + len(statuses)) % len(heavy)])
                r = c.getresponse()
                r.read()
                statuses.append(r.status)
                if r.status == 503:
                    retry_after.append(r.getheader("Retry-After"))
                    time.sleep(0.02)
            except (OSError, http.client.HTTPException) as e:
                statuses.append(repr(e))
                abort_close(c.sock)
                c.close()
                c = http.client.HTTPConnection("127.0.0.1", p, timeout=60,
                                               source_address=(f"127.0.0.{10 + i}", 0))
            finally:
                with lock:
                    busy[0] -= 1
        abort_close(c.sock)
        c.close()
    threads = [threading.Thread(target=loop, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    conn = http.client.HTTPConnection("127.0.0.1", p, timeout=60)
    while not enough() and time.monotonic() < deadline:
        before = busy[0]
        conn.request("GET", "/metrics")
        r = conn.getresponse()
        body = r.read()
        metrics.append((r.status if b"thermlog_" in body else -r.status, before, busy[0]))
        time.sleep(0.01)
    done.set()
    conn.close()
    for t in threads:
        t.join()
    done200 = statuses.count(200)
    beside = sum(1 for m in metrics if m[1] >= 2 and m[2] >= 2)
    ok(metrics and all(m[0] == 200 for m in metrics) and beside >= 20,
       f"/metrics answered {len(metrics)} times, {beside} of them while two or more heavy "
       f"requests were in flight ({done200} heavy answers computed)",
       [m for m in metrics if m[0] != 200][:5])
    ok(done200 >= 8 and all(x in (200, 503) for x in statuses),
       f"heavy requests answer 200 or 503 ({done200} x 200, {statuses.count(503)} x 503)",
       [x for x in statuses if x not in (200, 503)][:5])
    ok(retry_after and all(x == "2" for x in retry_after),
       "eight heavy clients on two worker slots and four waiting places: some get 503 with "
       "Retry-After", retry_after[:5])

    # 32 clients that ask for ~9 MB answers and never read them.
    before = s.rss_kib()
    socks = []
    for i in range(32):
        sk = socket.socket()
        sk.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        sk.bind((f"127.0.1.{1 + i % 8}", 0))
        sk.connect(("127.0.0.1", p))
        sk.sendall(b"GET /api/v1/samples?from=-180d&max_points=20000 HTTP/1.1\r\nHost: x\r\n\r\n")
        socks.append(sk)
    time.sleep(5)
    after = s.rss_kib()
    resp, _ = request(p, "/metrics")
    for sk in socks:
        abort_close(sk)
    with open(f"/proc/{s.proc.pid}/maps") as f:
        sanitized = "libasan" in f.read()
    ok(sanitized or after - before < 48 * 1024,
       f"RSS grows by less than 48 MiB while 32 clients hold ~9 MB answers unread "
       f"({before // 1024} -> {after // 1024} MiB)", f"{before} -> {after} KiB")
    ok(resp.status == 200, "/metrics answers meanwhile", resp.status)
    ok(s.stop() == 0, "the server stops cleanly", s.stderr()[-2000:])


def test_slowloris(tmp):
    """Two addresses x 16 connections trickling a header line each second, plus idle
    connections from more addresses: a third client still gets /metrics within 1 s, and the
    tricklers are cut off at the request-head deadline (5 s)."""
    s = start_server(tmp, "slowloris", base_yaml("127.0.0.1:0"),
                     "server for the slow-client test starts")
    if not s:
        return
    p = s.port
    tricklers, idle = [], []

    def connect(addr):
        sk = socket.socket()
        sk.bind((addr, 0))
        sk.settimeout(0.5)
        try:
            sk.connect(("127.0.0.1", p))
        except OSError:
            abort_close(sk)
            return None
        return sk
    for a in ("127.0.2.1", "127.0.2.2"):
        for _ in range(16):
            sk = connect(a)
            if sk:
                try:
                    sk.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\n")
                    tricklers.append(sk)
                except OSError:
                    abort_close(sk)
    for i in range(40):
        sk = connect(f"127.0.3.{1 + i % 10}")
        if sk:
            idle.append(sk)
    n_tricklers = len(tricklers)
    start = time.monotonic()
    worst = 0.0
    answered = 0
    cut = 0
    failed = []
    while time.monotonic() - start < 6.5:
        for sk in list(tricklers):
            try:
                sk.sendall(b"X-Slow: 1\r\n")
            except OSError:
                tricklers.remove(sk)
                abort_close(sk)
                cut += 1
        t0 = time.monotonic()
        try:
            sk = socket.create_connection(("127.0.0.1", p), timeout=30,
                                          source_address=("127.0.4.1", 0))
            sk.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            reply = sk.recv(64)
            abort_close(sk)
            if reply.startswith(b"HTTP/1.1 200"):
                answered += 1
            worst = max(worst, time.monotonic() - t0)
        except OSError as e:  # refused or reset: no answer at all
            worst = max(worst, 5.0)
            failed.append(f"{time.monotonic() - start:.1f} s: {e!r}")
        time.sleep(max(0, 1 - (time.monotonic() - t0)))
    # The tricklers still open after the deadline: a reset or EOF shows they were cut. Each
    # is waited for (a loaded server cuts them late, but cuts them).
    for sk in tricklers:
        try:
            sk.sendall(b"X-Slow: 1\r\n")
            sk.settimeout(30)
            if sk.recv(1) == b"":
                cut += 1
        except socket.timeout:
            pass  # still open
        except OSError:
            cut += 1
    for sk in tricklers + idle:
        abort_close(sk)
    ok(answered >= 5 and not failed,
       f"a third client gets /metrics every time under slow and idle clients "
       f"({answered} answers, slowest {worst * 1000:.0f} ms)", failed or worst)
    ok(n_tricklers >= 8 and cut == n_tricklers,
       f"all {n_tricklers} tricklers are refused (per address) or cut off by the head "
       f"deadline ({cut})")
    resp, _ = request(p, "/metrics")
    ok(resp.status == 200, "service continues after the slow clients", resp.status)
    ok(s.stop() == 0, "the server stops cleanly", s.stderr()[-2000:])


def test_queued_burst(tmp):
    """Connections queued while the server cannot run (a loaded board), accepted in one go
    when it can, each making room by cutting an older idle one: the last, which asks for
    /metrics at once, is answered. libmicrohttpd counts a cut connection until its thread has
    ended; the server is pinned to one core that a busy process shares, so the burst is
    accepted before any cut connection's thread runs (the reset this test was written for)."""
    s = start_server(tmp, "burst", base_yaml("127.0.0.1:0"),
                     "server for the queued-burst test starts")
    if not s:
        return
    core = min(os.sched_getaffinity(0))
    for tid in os.listdir(f"/proc/{s.proc.pid}/task"):
        os.sched_setaffinity(int(tid), {core})
    busy = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    os.sched_setaffinity(busy.pid, {core})
    socks, answer = [], None
    os.kill(s.proc.pid, signal.SIGSTOP)
    try:
        # 62 idle clients, 4 from each of 16 addresses (under the 8 per address), then the
        # probe: 63 queued, within the listen backlog of 64.
        for k in range(62):
            sk = socket.socket()
            sk.bind((f"127.0.5.{1 + k // 4}", 0))
            sk.settimeout(2)
            sk.connect(("127.0.0.1", s.port))
            socks.append(sk)
        probe = socket.socket()
        probe.bind(("127.0.4.1", 0))
        probe.settimeout(10)
        probe.connect(("127.0.0.1", s.port))
        socks.append(probe)
        probe.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        os.kill(s.proc.pid, signal.SIGCONT)
        try:
            answer = probe.recv(64)[:15]
        except OSError as e:
            answer = e
    finally:
        os.kill(s.proc.pid, signal.SIGCONT)
        busy.kill()
        busy.wait()
        for sk in socks:
            abort_close(sk)
    ok(answer == b"HTTP/1.1 200 OK",
       "a client queued behind 62 idle ones while the server could not run is answered "
       "(they were cut to make room, not it)", answer)
    resp, _ = request(s.port, "/metrics")
    ok(resp.status == 200, "service continues after the queued burst", resp.status)
    ok(s.stop() == 0, "the server stops cleanly", s.stderr()[-2000:])


IPV6_CLIENTS = [f"2001:db8:1::{i:x}" for i in range(1, 13)]  # one /64
IPV6_OTHER = "2001:db8:2::1"                                  # another /64


def ipv6_prefix_child(tmp):
    """Runs in a private network namespace (unshare -n): prints one JSON line."""
    subprocess.run(["ip", "link", "set", "lo", "up"], check=True)
    for a in IPV6_CLIENTS + [IPV6_OTHER]:
        subprocess.run(["ip", "-6", "addr", "add", a + "/128", "dev", "lo", "nodad"], check=True)
    d = os.path.join(tmp, "ipv6")
    os.mkdir(d)
    s = Server(d, 'interval: 1s\nhttp:\n  listen: "[::1]:0"\n', host="::1")
    port = s.port
    result = {"started": bool(s.port), "answered": [], "other": None, "log": ""}
    if s.port:
        def client(addr):
            sk = socket.socket(socket.AF_INET6)
            sk.bind((addr, 0))
            sk.settimeout(3)
            sk.connect(("::1", port))
            return sk
        socks = [client(a) for a in IPV6_CLIENTS]
        time.sleep(0.3)
        for sk in socks:
            try:
                sk.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n")
                result["answered"].append(sk.recv(12).decode(errors="replace"))
            except OSError as e:
                result["answered"].append(repr(e))
        sk = client(IPV6_OTHER)
        sk.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n")
        result["other"] = sk.recv(12).decode(errors="replace")
        for sk in socks + [sk]:
            abort_close(sk)
    s.stop()
    result["log"] = s.stderr()[-1500:]
    print(json.dumps(result))


def test_ipv6_prefix(tmp):
    """Twelve addresses of one IPv6 /64 count as one client address: 8 connections (a quarter
    of 32) get in, the rest are refused, and a client from another /64 still gets in."""
    if os.geteuid() != 0 or not shutil.which("unshare") or not shutil.which("ip"):
        ok(True, "# SKIP a private network namespace needs root, unshare and ip")
        return
    r = subprocess.run(["unshare", "-n", sys.executable, os.path.abspath(__file__), SERVE,
                        THERMLOG, "--ipv6-prefix-child", tmp],
                       capture_output=True, text=True, timeout=60)
    try:
        res = json.loads(r.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        ok(False, "the IPv6 namespace test ran", r.stdout[-1500:] + r.stderr[-1500:])
        return
    got = sum(1 for a in res["answered"] if a.startswith("HTTP/1.1 200"))
    ok(res["started"] and got == 8,
       f"12 clients from one IPv6 /64: 8 answered, the rest refused ({got})", res)
    ok(res["other"] and res["other"].startswith("HTTP/1.1 200"),
       "a client from another /64 gets in", res)


def test_token(tmp):
    s = start_server(tmp, "token", f"http:\n  listen: 0.0.0.0:9470\n  token: {TOKEN}\n",
                     "non-loopback bind with a token starts", host="0.0.0.0")
    if not s:
        return
    err = s.stderr()
    ok("without TLS" in err, "a token over plain HTTP on a non-loopback address logs a warning",
       err)
    resp, body = get_json(s.port, "/api/v1/latest")
    ok(resp.status == 401 and body and "error" in body
       and resp.getheader("WWW-Authenticate", "").startswith("Bearer"),
       "no token: 401 with WWW-Authenticate", f"{resp.status} {dict(resp.getheaders())}")
    resp, _ = get_json(s.port, "/api/v1/latest", {"Authorization": "Bearer wrong-token-0123456789"})
    ok(resp.status == 401 and 'error="invalid_token"' in resp.getheader("WWW-Authenticate", ""),
       "wrong token: 401 invalid_token", resp.status)
    resp, body = get_json(s.port, "/api/v1/latest", {"Authorization": f"Bearer {TOKEN}"})
    ok(resp.status == 200 and body and body["channels"], "right token: 200", resp.status)
    resp, _ = request(s.port, "/metrics")
    ok(resp.status == 401, "/metrics needs the token by default", resp.status)
    resp, _ = request(s.port, "/api/v1/nothing")
    ok(resp.status == 401, "unknown paths are 401 before authentication", resp.status)
    s.stop()

    # token_file and metrics_public.
    d = os.path.join(tmp, "token-file")
    os.mkdir(d)
    tf = os.path.join(d, "token")
    with open(tf, "w") as f:
        f.write(TOKEN + "\n")
    os.chmod(tf, 0o600)
    s = Server(d, f"http:\n  listen: 0.0.0.0:9470\n  token_file: {tf}\n"
               "  metrics_public: true\n", host="0.0.0.0")
    if ok(s.port, "token_file and metrics_public start", s.stderr()):
        resp, _ = request(s.port, "/metrics")
        ok(resp.status == 200, "metrics_public: /metrics without a token", resp.status)
        resp, _ = request(s.port, "/api/v1/status")
        ok(resp.status == 401, "metrics_public keeps the API closed", resp.status)
        resp, _ = request(s.port, "/api/v1/status", headers={"Authorization": f"Bearer {TOKEN}"})
        ok(resp.status == 200, "token from token_file (newline stripped) works", resp.status)
    s.stop()


def test_tls(tmp):
    openssl = shutil.which("openssl")
    if not openssl:
        ok(True, "# SKIP openssl not installed")
        return
    d = os.path.join(tmp, "tls")
    os.mkdir(d)
    cert, key = os.path.join(d, "cert.pem"), os.path.join(d, "key.pem")
    r = subprocess.run([openssl, "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key,
                        "-out", cert, "-days", "2", "-subj", "/CN=127.0.0.1",
                        "-addext", "subjectAltName=IP:127.0.0.1"], capture_output=True)
    if not ok(r.returncode == 0, "self-signed certificate made", r.stderr):
        return
    s = Server(d, f"http:\n  listen: 0.0.0.0:9470\n  token: {TOKEN}\n"
               f"  tls_cert: {cert}\n  tls_key: {key}\n", host="0.0.0.0")
    if not ok(s.port, "TLS server starts", s.stderr()):
        s.stop()
        return
    ok("without TLS" not in s.stderr(), "no clear-text warning with TLS")
    ctx = ssl.create_default_context(cafile=cert)
    resp, body = get_json(s.port, "/api/v1/latest", {"Authorization": f"Bearer {TOKEN}"}, tls=ctx)
    ok(resp.status == 200 and body["channels"], "HTTPS request with the token: 200")
    resp, _ = get_json(s.port, "/api/v1/latest", tls=ctx)
    ok(resp.status == 401, "HTTPS without the token: 401")
    try:
        request(s.port, "/api/v1/latest")
        plain = "answered"
    except (http.client.HTTPException, OSError) as e:
        plain = "refused"
    ok(plain == "refused", "plain HTTP to the TLS port gets no answer", plain)

    # Protocol versions and suites: TLS >= 1.2 with forward-secret AEAD suites only.
    def handshake(port, *args):
        r = subprocess.run([openssl, "s_client", "-connect", f"127.0.0.1:{port}", *args],
                           stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=20)
        return r.returncode == 0 and "Cipher is (NONE)" not in r.stdout, r.stdout + r.stderr
    for args, what in (
            (["-tls1_1", "-cipher", "DEFAULT:@SECLEVEL=0"], "TLS 1.1"),
            (["-tls1_2", "-cipher", "AES128-SHA:@SECLEVEL=0"], "TLS 1.2 static-RSA AES-CBC"),
            (["-tls1_2", "-cipher", "ECDHE-RSA-AES128-SHA:ECDHE-RSA-AES256-SHA384"],
             "TLS 1.2 ECDHE AES-CBC")):
        done_, out = handshake(s.port, *args)
        ok(not done_, f"{what} is refused", out[-1500:])
    done_, out = handshake(s.port, "-tls1_2", "-cipher", "ECDHE-RSA-AES128-GCM-SHA256")
    ok(done_, "TLS 1.2 ECDHE AES-GCM is accepted", out[-1500:])
    done_, out = handshake(s.port, "-tls1_3")
    ok(done_, "TLS 1.3 is accepted", out[-1500:])

    # A half-open handshake (a record header, then nothing) is cut at the head deadline.
    sk = socket.create_connection(("127.0.0.1", s.port))
    sk.sendall(b"\x16\x03\x01\x00\xff")
    sk.settimeout(60)
    t0 = time.monotonic()
    try:
        closed = sk.recv(100) == b""
    except ConnectionResetError:
        closed = True
    except socket.timeout:
        closed = False
    took = time.monotonic() - t0
    abort_close(sk)
    ok(closed and took >= 4, f"a half-open TLS handshake is closed at the head deadline (5 s), "
       f"not before ({took:.1f} s)")
    s.stop()

    # http.tls_priorities replaces the default: here TLS 1.3 only.
    s = Server(d, f"http:\n  listen: 0.0.0.0:0\n  token: {TOKEN}\n"
               f"  tls_cert: {cert}\n  tls_key: {key}\n"
               "  tls_priorities: 'NORMAL:-VERS-ALL:+VERS-TLS1.3'\n")
    port = s.port
    if ok(s.port, "TLS server with http.tls_priorities starts", s.stderr()):
        done_, out = handshake(port, "-tls1_2", "-cipher", "ECDHE-RSA-AES128-GCM-SHA256")
        ok(not done_, "tls_priorities without TLS 1.2: TLS 1.2 refused", out[-1500:])
        done_, out = handshake(port, "-tls1_3")
        ok(done_, "tls_priorities: TLS 1.3 accepted", out[-1500:])
    s.stop()
    s = Server(d, f"http:\n  listen: 127.0.0.1:0\n"
               f"  tls_cert: {cert}\n  tls_key: {key}\n  tls_priorities: 'NORMAL:+BOGUS'\n")
    rc = s.proc.wait(30)
    err = s.stderr()
    s.stop()
    ok(rc == 2 and "http.tls_priorities" in err and "BOGUS" in err,
       "a bad tls_priorities is refused naming the part GnuTLS rejects", err)

    # A key that does not load: GnuTLS' reason is logged, not just "could not start".
    bad = os.path.join(d, "bad-key.pem")
    with open(bad, "w") as f:
        f.write("-----BEGIN PRIVATE KEY-----\nbm90IGEga2V5\n-----END PRIVATE KEY-----\n")
    s = Server(d, f"http:\n  listen: 127.0.0.1:0\n"
               f"  tls_cert: {cert}\n  tls_key: {bad}\n")
    rc = s.proc.wait(30)
    err = s.stderr()
    s.stop()
    ok(rc == 2 and "GnuTLS" in err and bad in err, "a bad key logs GnuTLS' reason and the file",
       err)
    # A key that does not match the certificate.
    other = os.path.join(d, "other-key.pem")
    subprocess.run([openssl, "genrsa", "-out", other, "2048"], capture_output=True)
    s = Server(d, f"http:\n  listen: 127.0.0.1:0\n"
               f"  tls_cert: {cert}\n  tls_key: {other}\n")
    rc = s.proc.wait(30)
    err = s.stderr()
    s.stop()
    ok(rc == 2 and "GnuTLS" in err, "a key not matching the certificate logs GnuTLS' reason",
       err)


def test_socket_activation(tmp):
    d = os.path.join(tmp, "fd")
    os.mkdir(d)
    s = Server(d, base_yaml())
    if ok(s.port, "serves on a passed listening socket", s.stderr()):
        resp, _ = request(s.port, "/api/v1/latest")
        ok(resp.status == 200, "socket-activated server answers")
    ok(s.stop() == 0, "socket-activated server stops cleanly")


def test_bad_listen(tmp):
    d = os.path.join(tmp, "badlisten")
    os.mkdir(d)
    holder = listener()  # keeps its port taken until the end of the check
    s = Server(d, base_yaml("127.0.0.1:" + str(holder.getsockname()[1])), host=None)
    rc = s.proc.wait(30)
    err = s.stderr()
    s.stop()
    port = holder.getsockname()[1]
    holder.close()
    ok(rc == 2 and f"127.0.0.1:{port}" in err and "in use" in err and "port 0" not in err,
       "a port in use fails with a message naming the address and port", err)


def test_port_zero(tmp):
    """http.listen takes port 0 as --listen does: any free port, reported once bound."""
    d = os.path.join(tmp, "port0")
    os.mkdir(d)
    s = Server(d, base_yaml("127.0.0.1:0"), host=None)
    if ok(s.port, "http.listen 127.0.0.1:0 starts on a free port", s.stderr()):
        resp, _ = request(s.port, "/metrics")
        ok(resp.status == 200 and f"(port {s.port})" in s.stderr(),
           "the log names the port actually bound", s.stderr())
    s.stop()


def main():
    with tempfile.TemporaryDirectory(prefix="thermlog-http-") as tmp:
        try:
            test_refused_bind(tmp)
            test_bad_listen(tmp)
            test_port_zero(tmp)
            test_loopback(tmp)
            test_heavy(tmp)
            test_slowloris(tmp)
            test_queued_burst(tmp)
            test_ipv6_prefix(tmp)
            test_token(tmp)
            test_tls(tmp)
            test_socket_activation(tmp)
        finally:
            for s in servers:
                s.stop()
    return done()


if __name__ == "__main__":
    if IPV6_CHILD:
        ipv6_prefix_child(sys.argv[4])
        sys.exit(0)
    sys.exit(main())
