#!/usr/bin/python3
"""The dashboard's sign-in over real sockets: with http.token set, GET / sends a browser to the
sign-in form, POST /login with the right token sets an HttpOnly, SameSite=Strict session cookie
(Secure over TLS) that holds no token, and that cookie then opens the dashboard, the API and
/metrics, while a wrong, changed or old (restarted server) cookie does not. Bearer tokens keep
working.

usage: test-login.py HTTP_SERVE   (TAP output)
"""
import http.client
import os
import re
import shutil
import socket
import ssl
import subprocess
import sys
import tempfile
import urllib.parse

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from thermlog_test import done, listener, ok, stop  # noqa: E402

SERVE = sys.argv[1]
TOKEN = "0123456789abcdef+test/token"  # '+' and '/' must survive the form's encoding
servers = []


class Server:
    """http-serve with a config in its own directory, serving on a listening socket bound to
    loopback port 0 (passed with --listen-fd; the LISTEN address in @yaml is then not used)."""

    def __init__(self, d, yaml):
        os.makedirs(d, exist_ok=True)
        path = os.path.join(d, "thermlog.yaml")
        with open(path, "w") as f:
            f.write(yaml.replace("LISTEN", "127.0.0.1:9470"))
        self.log = open(os.path.join(d, "serve.log"), "w+")
        sock = listener()
        self.proc = subprocess.Popen([SERVE, path, os.path.join(d, "thermlog.db"), "--days", "1",
                                      "--listen-fd", str(sock.fileno())],
                                     stdout=subprocess.PIPE, stderr=self.log, text=True,
                                     pass_fds=(sock.fileno(),))
        sock.close()
        url = self.proc.stdout.readline().strip()
        self.port = int(url.rsplit(":", 1)[1].strip("/")) if url else None
        servers.append(self)

    def stderr(self):
        self.log.flush()
        self.log.seek(0)
        return self.log.read()

    def stop(self):
        if self.proc.poll() is None:
            stop(self.proc, 10)
        self.proc.stdout.close()


def request(port, path, method="GET", headers=None, body=None, tls=None):
    if tls:
        conn = http.client.HTTPSConnection("127.0.0.1", port, context=tls, timeout=30)
    else:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    conn.request(method, path, body=body, headers=headers or {})
    resp = conn.getresponse()
    data = resp.read()
    conn.close()
    return resp, data


def login(port, token, tls=None):
    body = urllib.parse.urlencode({"token": token})
    return request(port, "/login", "POST", {"Content-Type": "application/x-www-form-urlencoded"},
                   body, tls)


def cookie_of(resp):
    """The thermlog_session=VALUE pair of a Set-Cookie header, and the whole header."""
    h = resp.getheader("Set-Cookie") or ""
    return h.split(";", 1)[0], h


def test_plain(tmp):
    s = Server(os.path.join(tmp, "plain"), f"http:\n  listen: LISTEN\n  token: '{TOKEN}'\n")
    if not ok(s.port, "server with a token starts", s.stderr()):
        return
    port = s.port
    resp, _ = request(port, "/")
    ok(resp.status == 303 and resp.getheader("Location") == "login",
       "GET / without credentials: 303 to the sign-in form", (resp.status, resp.getheaders()))
    resp, page = request(port, "/login")
    ok(resp.status == 200 and resp.getheader("Content-Type", "").startswith("text/html")
       and b'method="post"' in page and b'name="token"' in page and b'type="password"' in page,
       "GET /login: the sign-in form, before authentication", (resp.status, page[:200]))
    resp, _ = request(port, "/favicon.svg")
    ok(resp.status == 200, "the form's icon is public", resp.status)
    resp, _ = request(port, "/app.js")
    ok(resp.status == 401, "other dashboard assets still need credentials", resp.status)
    resp, _ = request(port, "/api/v1/status")
    ok(resp.status == 401 and resp.getheader("WWW-Authenticate", "").startswith("Bearer"),
       "API without credentials: 401 as before", resp.status)

    resp, _ = login(port, "wrong-token-0123456789")
    ok(resp.status == 303 and resp.getheader("Location") == "login?failed"
       and resp.getheader("Set-Cookie") is None,
       "a wrong token: back to the form with ?failed, no cookie", (resp.status, resp.getheaders()))
    resp, _ = login(port, "")
    ok(resp.status == 303 and resp.getheader("Set-Cookie") is None, "an empty token: no cookie")
    resp, _ = request(port, "/login", "POST", {"Content-Type": "application/x-www-form-urlencoded"}, "")
    ok(resp.status == 303 and resp.getheader("Set-Cookie") is None, "an empty form: no cookie")

    resp, _ = login(port, TOKEN)
    pair, header = cookie_of(resp)
    attrs = [a.strip() for a in header.split(";")[1:]]
    ok(resp.status == 303 and resp.getheader("Location") == "./",
       "the right token: 303 to the dashboard", (resp.status, resp.getheaders()))
    ok(re.fullmatch(r"thermlog_session=\d+\.[0-9a-f]{64}", pair) is not None,
       "the cookie holds EXPIRY.HMAC", header)
    ok(set(attrs) == {"Path=/", "Max-Age=604800", "HttpOnly", "SameSite=Strict"},
       "HttpOnly; SameSite=Strict; Path=/; a week; not Secure over plain HTTP", attrs)
    quoted = urllib.parse.quote(TOKEN, safe="")
    ok(TOKEN not in header and quoted not in header and "0123456789abcdef" not in header,
       "the cookie does not hold the token", header)

    jar = {"Cookie": "theme=dark; " + pair}
    resp, page = request(port, "/", headers=jar)
    ok(resp.status == 200 and b"app.js" in page, "with the cookie: the dashboard", resp.status)
    for path in ["/app.js", "/api/v1/status", "/api/v1/channels", "/metrics",
                 "/api/v1/stats?from=-1h"]:
        resp, _ = request(port, path, headers=jar)
        ok(resp.status == 200, "with the cookie: " + path, resp.status)

    name, value = pair.split("=", 1)
    expiry, mac = value.split(".")
    bad = {
        "a changed MAC": f"{name}={expiry}.{mac[:-1]}{'0' if mac[-1] != '0' else '1'}",
        "a later expiry": f"{name}={int(expiry) + 86400}.{mac}",
        "the token as the value": f"{name}={TOKEN}",
        "an empty value": f"{name}=",
    }
    for what, c in bad.items():
        resp, _ = request(port, "/api/v1/status", headers={"Cookie": c})
        ok(resp.status == 401, f"{what}: 401", resp.status)

    resp, _ = request(port, "/api/v1/status", headers={"Authorization": f"Bearer {TOKEN}"})
    ok(resp.status == 200, "a bearer token keeps working", resp.status)
    resp, _ = request(port, "/api/v1/status",
                      headers={"Authorization": "Bearer wrong-token-0123456789", **jar})
    ok(resp.status == 401, "a wrong bearer header is refused even with a good cookie", resp.status)

    resp, _ = request(port, "/login", "POST", {"Content-Type": "application/x-www-form-urlencoded"},
                      "token=" + "x" * 5000)
    ok(resp.status == 413, "a sign-in form over 4 KiB: 413", resp.status)
    # A form declared far larger (or chunked, of unknown size) gets its 413 before any of it is
    # read; it was a closed connection without an answer.
    for what, head in (("declared 100 KB", "Content-Length: 100000"),
                       ("chunked", "Transfer-Encoding: chunked")):
        with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
            sock.sendall(("POST /login HTTP/1.1\r\nHost: x\r\nContent-Type: "
                          "application/x-www-form-urlencoded\r\n%s\r\n\r\n" % head).encode())
            got = b""
            try:
                while b"\r\n\r\n" not in got:
                    chunk = sock.recv(4096)
                    if not chunk:
                        break
                    got += chunk
            except OSError:
                pass
        ok(got.startswith(b"HTTP/1.1 413 "), "a sign-in form %s: 413 at once" % what, got[:200])
    resp, _ = request(port, "/login", "PUT")
    ok(resp.status == 405 and "POST" in (resp.getheader("Allow") or ""), "PUT /login: 405", resp.status)
    resp, _ = request(port, "/api/v1/status", "POST", {"Content-Type": "application/x-www-form-urlencoded"},
                      "token=" + urllib.parse.quote(TOKEN))
    ok(resp.status in (401, 405) and resp.getheader("Set-Cookie") is None,
       "a POST elsewhere signs nobody in", resp.status)
    ok(TOKEN not in s.stderr(), "the token is not logged")

    # A restart draws a new secret: the old cookie no longer opens anything.
    s.stop()
    s2 = Server(os.path.join(tmp, "plain"), f"http:\n  listen: LISTEN\n  token: '{TOKEN}'\n")
    if ok(s2.port, "the server restarts", s2.stderr()):
        resp, _ = request(s2.port, "/api/v1/status", headers=jar)
        ok(resp.status == 401, "a cookie from before a restart: 401", resp.status)
        resp, _ = request(s2.port, "/", headers=jar)
        ok(resp.status == 303, "... and the dashboard sends the browser to sign in again", resp.status)
        s2.stop()


def test_no_token(tmp):
    s = Server(os.path.join(tmp, "open"), "http:\n  listen: LISTEN\n")
    if not ok(s.port, "server without a token starts", s.stderr()):
        return
    resp, _ = request(s.port, "/login")
    ok(resp.status == 303 and resp.getheader("Location") == "./",
       "without a token /login goes straight to the dashboard", resp.status)
    resp, _ = login(s.port, "anything-at-all-0123")
    ok(resp.status == 303 and resp.getheader("Set-Cookie") is None, "and sets no cookie")
    resp, _ = request(s.port, "/")
    ok(resp.status == 200, "the dashboard needs no sign-in", resp.status)
    s.stop()


def test_tls(tmp):
    openssl = shutil.which("openssl")
    if not openssl:
        ok(True, "# SKIP openssl not installed")
        return
    d = os.path.join(tmp, "tls")
    os.makedirs(d)
    cert, key = os.path.join(d, "cert.pem"), os.path.join(d, "key.pem")
    r = subprocess.run([openssl, "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256",
                        "-nodes", "-keyout", key, "-out", cert, "-days", "2", "-subj", "/CN=127.0.0.1",
                        "-addext", "subjectAltName=IP:127.0.0.1"], capture_output=True)
    if not ok(r.returncode == 0, "self-signed certificate made", r.stderr):
        return
    s = Server(d, f"http:\n  listen: LISTEN\n  token: '{TOKEN}'\n"
               f"  tls_cert: {cert}\n  tls_key: {key}\n")
    if not ok(s.port, "TLS server starts", s.stderr()):
        return
    ctx = ssl.create_default_context(cafile=cert)
    resp, _ = login(s.port, TOKEN, tls=ctx)
    pair, header = cookie_of(resp)
    ok(resp.status == 303 and "Secure" in [a.strip() for a in header.split(";")],
       "over TLS the cookie is Secure", header)
    resp, _ = request(s.port, "/api/v1/status", headers={"Cookie": pair}, tls=ctx)
    ok(resp.status == 200, "and opens the API over TLS", resp.status)
    s.stop()


def main():
    with tempfile.TemporaryDirectory(prefix="thermlog-login-") as tmp:
        try:
            test_plain(tmp)
            test_no_token(tmp)
            test_tls(tmp)
        finally:
            for s in servers:
                s.stop()
    return done()


if __name__ == "__main__":
    sys.exit(main())
