"""Shared helpers for thermlog's Python integration tests and benchmarks: TAP output, a free
loopback port, HTTP GETs, stopping a child process, and a `thermlogd --demo` that always
leaves nothing behind (process, temp files, simulated sysfs tree).

Scripts import it through their own location, e.g.
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
"""
import json
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import urllib.request

_count = 0
_failed = 0


def ok(cond, what, detail=None, lines=30):
    """One TAP line; on failure the first `lines` lines of `detail` follow as comments."""
    global _count, _failed
    _count += 1
    print(("ok" if cond else "not ok") + f" {_count} - {what}", flush=True)
    if not cond:
        _failed += 1
        if detail is not None and detail != "":
            for line in str(detail).splitlines()[:lines]:
                print(f"#   {line}", flush=True)
    return cond


def count():
    """Number of TAP lines printed so far."""
    return _count


def done():
    """Prints the plan; returns the exit status (1 when a check failed)."""
    print(f"1..{_count}", flush=True)
    return 1 if _failed else 0


def free_port():
    """A port that was free a moment ago: only for servers that cannot take a socket (a test
    that passes it must retry when the server reports the port in use)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def listener(host="127.0.0.1"):
    """A listening TCP socket on a port the kernel picks (bind port 0), to hand to a server:
    a port number alone could be taken by another process before the server binds it, which
    slow machines and emulation hit."""
    s = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET)
    s.bind((host, 0))
    s.listen(64)
    return s


def get(url, timeout=10):
    """GET url; the body as bytes (urllib errors propagate)."""
    with urllib.request.urlopen(url, timeout=timeout) as r:
        return r.read()


def get_json(url, timeout=10):
    return json.loads(get(url, timeout))


def wait_http(url, timeout=20):
    """Polls url until it answers (True) or `timeout` s have passed (False)."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        try:
            get(url, 2)
            return True
        except OSError:
            time.sleep(0.2)
    return False


def rss_kib(pid, field="VmRSS:"):
    """A /proc/PID/status memory figure in KiB (0 when absent)."""
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(field):
                return int(line.split()[1])
    return 0


def stop(proc, timeout=15):
    """SIGTERM, then SIGKILL after `timeout` s; returns the exit status (None for no process)."""
    if proc is None:
        return None
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    return proc.returncode


class Demo:
    """`thermlogd --demo` listening on 127.0.0.1:0 (the port is read back from the URL it
    prints) with its database, log and simulated sysfs tree (TMPDIR) inside a private temp
    dir. Use as a context manager: on exit the daemon is stopped (killed if it does not stop)
    and the temp dir removed, whatever happened.

    After start: .url ("http://127.0.0.1:PORT/" as printed by the daemon, "" when it did not
    become ready within `ready_timeout` s), .port, .db, .tmp, .proc."""

    def __init__(self, thermlogd, args=(), prefix="thermlog-demo-", ready_timeout=60):
        self.tmp = tempfile.mkdtemp(prefix=prefix)
        self.port = None
        self.db = os.path.join(self.tmp, "demo.db")
        self.returncode = None
        self.url = ""
        self._log = open(os.path.join(self.tmp, "thermlogd.log"), "w+")
        self._out = open(os.path.join(self.tmp, "thermlogd.out"), "w+")
        env = dict(os.environ, TMPDIR=self.tmp)
        self.proc = subprocess.Popen([thermlogd, "--demo", "--db", self.db, "--listen",
                                      "127.0.0.1:0", *args],
                                     stdout=self._out, stderr=self._log, env=env)
        deadline = time.time() + ready_timeout
        while time.time() < deadline:
            self._out.seek(0)
            line = self._out.readline()
            if line.endswith("\n"):
                self.url = line.strip()
                self.port = int(self.url.rsplit(":", 1)[1].strip("/"))
                break
            if self.proc.poll() is not None:
                break
            time.sleep(0.1)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    def stderr(self):
        self._log.flush()
        self._log.seek(0)
        return self._log.read()

    def stop(self, timeout=15):
        """Stops the daemon (idempotent); returns its exit status."""
        if self.returncode is None:
            self.returncode = stop(self.proc, timeout)
        return self.returncode

    def close(self):
        try:
            self.stop()
        finally:
            self._out.close()
            self._log.close()
            shutil.rmtree(self.tmp, ignore_errors=True)
