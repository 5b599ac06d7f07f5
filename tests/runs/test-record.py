#!/usr/bin/env python3
"""Runs, the write side, with real processes: `thermlog run` against a real thermlogd on a
copied fixture tree (rock5c), its Unix socket in a temp dir and HTTP on port 0.

Exit status passthrough and statuses (exit 3, SIGTERM, --timeout, kill -9 of the wrapper),
run start/stop, a daemon restarted mid-run, no daemon at all, exact counter deltas when the
tree changes to rock5c-after-run mid-run, idle and 30 concurrent clients on the socket, every
signal passed on (SIGTSTP/SIGCONT as job control), --db checked against the daemon's database,
commands that cannot start, the wrapper's refusals, constant 5 W integrated when no energy counter
exists, POST over TCP refused without the token, and the minute series untouched by runs.

usage: test-record.py THERMLOGD THERMLOG FIXTURES_DIR
"""
import datetime
import json
import os
import re
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from thermlog_test import done, ok, stop  # noqa: E402

THERMLOGD, THERMLOG, FIXTURES = sys.argv[1], sys.argv[2], sys.argv[3]
INA = "devices/platform/feb20000.i2c/i2c-2/2-0040/hwmon/hwmon0"


class Daemon:
    """thermlogd on a copied tree, with runs.interval 1s and its socket in the temp dir."""

    def __init__(self, tmp, tree):
        self.tmp = tmp
        self.tree = tree
        self.db = os.path.join(tmp, "thermlog.db")
        self.sock = os.path.join(tmp, "run", "thermlog.sock")
        self.cfg = os.path.join(tmp, "thermlog.yaml")
        with open(self.cfg, "w") as f:
            f.write(f"sysfs_root: {tree}\nprocfs_root: {tree}/proc\ndatabase: {self.db}\n"
                    f"http:\n  listen: 127.0.0.1:0\n"
                    f"runs:\n  socket: {self.sock}\n  interval: 1s\n")
        self.proc = None
        self.log_path = os.path.join(tmp, "thermlogd.log")

    def start(self):
        self.log = open(self.log_path, "a+")
        self.proc = subprocess.Popen([THERMLOGD, "-c", self.cfg], stdout=self.log,
                                     stderr=self.log)
        deadline = time.time() + 20
        while time.time() < deadline:
            if os.path.exists(self.sock) and "first cycle stored" in self.text():
                return True
            if self.proc.poll() is not None:
                return False
            time.sleep(0.05)
        return False

    def stop(self):
        rc = stop(self.proc)
        self.log.close()
        return rc

    def text(self):
        with open(self.log_path) as f:
            return f.read()

    def port(self):
        m = re.findall(r"serving HTTP on 127\.0\.0\.1:0 \(port (\d+)\)", self.text())
        return int(m[-1]) if m else None


def run(d, *args, timeout=30):
    return subprocess.run([THERMLOG, "-c", d.cfg, *args], capture_output=True, text=True,
                          timeout=timeout)


def rows(d, sql, params=()):
    con = sqlite3.connect(f"file:{d.db}?mode=ro", uri=True)
    try:
        return con.execute(sql, params).fetchall()
    finally:
        con.close()


def last_run(d):
    r = rows(d, "SELECT id, label, status, exit_code, signal, start_ms, end_ms, energy_j, "
                "energy_method, energy_coverage, figures, tags, rss_max_bytes, error FROM runs "
                "ORDER BY id DESC LIMIT 1")
    keys = ["id", "label", "status", "exit_code", "signal", "start_ms", "end_ms", "energy_j",
            "energy_method", "energy_coverage", "figures", "tags", "rss_max_bytes", "error"]
    return dict(zip(keys, r[0])) if r else {}


def table(path, scale):
    """A residency file as {level: ms}: cpufreq "<kHz> <10 ms>", devfreq trans_stat rows."""
    out = {}
    with open(path) as f:
        for line in f:
            parts = line.split()
            if scale == "cpufreq" and len(parts) == 2:
                out[int(parts[0]) * 1000] = int(parts[1]) * 10
            elif scale == "devfreq" and parts and parts[0].rstrip(":").lstrip("*").isdigit():
                out[int(parts[0].lstrip("*").rstrip(":"))] = int(parts[-1])
    return out


def fresh_tree(tmp, name="sys"):
    tree = os.path.join(tmp, name)
    shutil.copytree(os.path.join(FIXTURES, "rock5c"), tree, symlinks=True)
    return tree


def proc_state(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0]
    except OSError:
        return None


def child_of(pid, deadline_s=30):
    deadline = time.time() + deadline_s
    while time.time() < deadline:
        try:
            with open(f"/proc/{pid}/task/{pid}/children") as f:
                kids = f.read().split()
            if kids:
                return int(kids[0])
        except OSError:
            pass
        time.sleep(0.02)
    return None


def wait_for(cond, deadline_s=30):
    """Waits for @cond, at most @deadline_s (a bound on a broken build, not a condition)."""
    deadline = time.time() + deadline_s
    while time.time() < deadline and not cond():
        time.sleep(0.02)
    return cond()


def running(d, label):
    """Waits until the newest run is @label's and running (its start stored): the state a
    test signals or changes the tree in, however long a loaded machine takes to get there."""
    return wait_for(lambda: last_run(d).get("label") == label and
                    last_run(d).get("status") == "running", 30)


def count_runs(d, label, status=None):
    if status:
        return rows(d, "SELECT count(*) FROM runs WHERE label = ? AND status = ?",
                    (label, status))[0][0]
    return rows(d, "SELECT count(*) FROM runs WHERE label = ?", (label,))[0][0]


def post_unix(d, path, body):
    """POSTs @body over the daemon's Unix socket: (HTTP status, the reply's JSON or {})."""
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(10)
    s.connect(d.sock)
    s.sendall(b"POST %s HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
              b"Content-Length: %d\r\nConnection: close\r\n\r\n%s" %
              (path.encode(), len(body), body))
    data = b""
    while True:
        chunk = s.recv(65536)
        if not chunk:
            break
        data += chunk
    s.close()
    head, _, payload = data.partition(b"\r\n\r\n")
    status = int(head.split(b" ")[1]) if head.startswith(b"HTTP/") else 0
    try:
        return status, json.loads(payload)
    except ValueError:
        return status, {}


def wrapper_checks(d, tmp):
    """The wrapper beside other clients, under signals, with --db, and for commands that
    cannot start."""
    # Idle local clients do not lock a run out: every Unix socket peer had one quota.
    idle = []
    for _ in range(8):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.connect(d.sock)
        idle.append(s)
    time.sleep(0.2)
    p = run(d, "run", "--label", "beside-idle", "--", "true")
    # The quota is per process still: this one's ninth connection is served by cutting its
    # oldest request still incomplete (docs/API.md), so idle ones never lock it out either.
    ninth = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    ninth.settimeout(10)
    try:
        ninth.connect(d.sock)
        ninth.sendall(b"GET /api/v1/status HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        answer = ninth.recv(100)
    except OSError as e:
        answer = repr(e).encode()
    ninth.close()
    idle[0].settimeout(10)
    try:
        oldest = idle[0].recv(100)
    except OSError as e:
        oldest = repr(e).encode()
    for s in idle:
        s.close()
    ok(answer.startswith(b"HTTP/1.1 200") and oldest in (b"", b"ConnectionResetError(104, "
                                                             b"'Connection reset by peer')"),
       "a ninth connection of one process: answered, its oldest idle one cut",
       answer + b" / oldest: " + oldest)
    ok(p.returncode == 0 and "NOT recorded" not in p.stderr and
       count_runs(d, "beside-idle", "ok") == 1,
       "8 idle connections on the socket: `run -- true` is still recorded", p.stderr)

    # 30 at once: each is recorded, none is refused for another's connections.
    procs = [subprocess.Popen([THERMLOG, "-c", d.cfg, "run", "--label", "thirty", "--",
                               "sleep", "2"], stderr=subprocess.PIPE, text=True)
             for _ in range(30)]
    errs = [w.communicate(timeout=60)[1] for w in procs]
    lost = [e for e in errs if "NOT recorded" in e or "refused" in e]
    ok(all(w.returncode == 0 for w in procs) and not lost and
       count_runs(d, "thirty", "ok") == 30,
       f"30 concurrent `run -- sleep 2`: all recorded ({count_runs(d, 'thirty', 'ok')})",
       lost[:3])

    # Every signal `kill` may send reaches the command; the wrapper stays, the run ends ok.
    log = os.path.join(tmp, "signals.log")
    names = ["SIGHUP", "SIGINT", "SIGQUIT", "SIGUSR1", "SIGUSR2", "SIGWINCH", "SIGALRM",
             "SIGPIPE", "SIGVTALRM", "SIGPROF", "SIGURG", "SIGXCPU", "SIGXFSZ", "SIGPWR"]
    script = (
        "import signal, sys, time\n"
        f"log = open({log!r}, 'a', buffering=1)\n"
        "def h(n, f):\n    log.write((signal.Signals(n).name if n < signal.SIGRTMIN\n"
        "               else 'RT%d' % n) + '\\n')\n"
        "def t(n, f):\n    log.write('SIGTERM\\n'); sys.exit(0)\n"
        f"for s in {names!r}:\n    signal.signal(getattr(signal, s), h)\n"
        "signal.signal(signal.SIGRTMIN + 1, h)\n"
        "signal.signal(signal.SIGTERM, t)\n"
        "log.write('ready\\n')\n"
        "while True:\n    time.sleep(1)\n")

    def logged():
        try:
            with open(log) as f:
                return f.read().split()
        except OSError:
            return []
    w = subprocess.Popen([THERMLOG, "-c", d.cfg, "run", "--label", "signals", "--",
                          sys.executable, "-c", script], stderr=subprocess.PIPE, text=True)
    ok(wait_for(lambda: "ready" in logged()), "the signal logger is ready", logged())
    logger = child_of(w.pid)
    for name in names + ["SIGRTMIN+1"]:
        sig = signal.SIGRTMIN + 1 if name == "SIGRTMIN+1" else getattr(signal, name)
        want = "RT%d" % sig if name == "SIGRTMIN+1" else name
        before = logged().count(want)
        if w.poll() is None:
            os.kill(w.pid, sig)
        ok(wait_for(lambda: logged().count(want) > before) and w.poll() is None,
           f"{name} to the wrapper reaches the command, the wrapper stays", logged())
    if w.poll() is None:
        os.kill(w.pid, signal.SIGTERM)
    elif logger:
        os.kill(logger, signal.SIGKILL)  # the wrapper died of a signal; its job ran on
    _, err = w.communicate(timeout=10)
    r = last_run(d)
    ok(w.returncode == 0 and r.get("label") == "signals" and r.get("status") == "ok",
       "the command ends by its own SIGTERM handler: exit 0, ok", (w.returncode, err, r))

    # SIGTSTP stops the command, and the wrapper with it; SIGCONT continues both. In a group
    # of its own, as a shell's job: the kernel drops SIGTSTP in an orphaned group.
    w = subprocess.Popen([THERMLOG, "-c", d.cfg, "run", "--label", "jobctl", "--",
                          "sleep", "30"], stderr=subprocess.PIPE, text=True,
                         preexec_fn=lambda: os.setpgid(0, 0))
    kid = child_of(w.pid)
    time.sleep(0.3)
    os.kill(w.pid, signal.SIGTSTP)
    ok(kid and wait_for(lambda: proc_state(kid) == "T" and proc_state(w.pid) == "T"),
       "SIGTSTP: the command and the wrapper are stopped",
       (kid and proc_state(kid), proc_state(w.pid)))
    os.kill(w.pid, signal.SIGCONT)
    ok(kid and wait_for(lambda: proc_state(kid) in ("S", "R") and
                        proc_state(w.pid) in ("S", "R")),
       "SIGCONT: both run again", (kid and proc_state(kid), proc_state(w.pid)))
    os.kill(w.pid, signal.SIGTERM)
    _, err = w.communicate(timeout=10)
    r = last_run(d)
    ok(w.returncode == 143 and r.get("label") == "jobctl" and r.get("status") == "signaled",
       "then SIGTERM: 143, signaled", (err, r))

    # --db names another database than the daemon's: the command runs, unrecorded, and both
    # paths are named; the daemon's own file under another name is recorded.
    other = os.path.join(tmp, "other.db")
    p = subprocess.run([THERMLOG, "-c", d.cfg, "--db", other, "run", "--label", "otherdb",
                        "--", "sh", "-c", "exit 4"], capture_output=True, text=True, timeout=30)
    ok(p.returncode == 4 and "NOT recorded" in p.stderr and other in p.stderr and
       d.db in p.stderr and count_runs(d, "otherdb") == 0,
       "--db another.db: runs, exit 4, not recorded, both paths named", p.stderr)
    p = subprocess.run([THERMLOG, "-c", d.cfg, "--db", other, "run", "start", "--label",
                        "otherdb"], capture_output=True, text=True, timeout=30)
    ok(p.returncode != 0 and not p.stdout and other in p.stderr and d.db in p.stderr and
       count_runs(d, "otherdb") == 0, "--db another.db: run start is refused", p.stderr)
    rid = run(d, "run", "start", "--label", "stopdb").stdout.strip()
    p = subprocess.run([THERMLOG, "-c", d.cfg, "--db", other, "run", "stop", rid, "--exit",
                        "0"], capture_output=True, text=True, timeout=30)
    ok(rid.isdigit() and p.returncode != 0 and other in p.stderr and
       count_runs(d, "stopdb", "running") == 1,
       "--db another.db: run stop is refused, the run still running", p.stderr)
    run(d, "run", "stop", rid, "--exit", "0")
    alias = os.path.join(tmp, "alias.db")
    os.symlink(d.db, alias)
    p = subprocess.run([THERMLOG, "-c", d.cfg, "--db", alias, "run", "--label", "samedb",
                        "--", "true"], capture_output=True, text=True, timeout=30)
    ok(p.returncode == 0 and count_runs(d, "samedb", "ok") == 1,
       "--db naming the daemon's database another way: recorded", p.stderr)

    # A command that cannot start is a failed run: 127 when missing, 126 when not executable.
    # The run's error names the caller's path and the cause; the message never the daemon.
    p = run(d, "run", "--", "/nonexistent/cmd")
    r = last_run(d)
    ok(p.returncode == 127 and r.get("label") == "cmd" and r.get("status") == "failed" and
       r.get("exit_code") == 127 and "refused" not in p.stderr and
       "/nonexistent/cmd" in p.stderr and "No such file" in p.stderr,
       "a missing command: exit 127, recorded failed with 127, the cause named", (p.stderr, r))
    missing_error = "/nonexistent/cmd: No such file or directory (command not found)"
    ok(r.get("error") == missing_error,
       "a missing command: the run's error names the path and the cause", r)
    ok(p.stderr.strip() == "thermlog run: %s; recorded as run %d (failed, exit 127)" %
       (missing_error, r.get("id")) and "daemon" not in p.stderr,
       "a missing command: one line, the cause and the run it is recorded as", p.stderr)
    q = run(d, "runs", "show", str(r.get("id")), "--json")
    shown = json.loads(q.stdout)["run"] if q.returncode == 0 else {}
    q = run(d, "runs", "--json", "--label", "cmd")
    listed = json.loads(q.stdout)["runs"] if q.returncode == 0 else []
    ok(shown.get("error") == missing_error and listed and
       listed[-1].get("error") == missing_error and list(shown).index("error") ==
       list(shown).index("signal") + 1,
       "runs show --json and runs --json: the error, after signal", (shown, listed))
    q = run(d, "runs", "show", str(r.get("id")))
    ok(q.returncode == 0 and ('"error": "%s"' % missing_error) in q.stdout,
       "runs show: the error in its indented document", q.stdout)
    q = run(d, "runs", "--label", "cmd")
    rows = q.stdout.splitlines()
    ok(q.returncode == 0 and len(rows) >= 2 and rows[0].split()[-1] == "ERROR" and
       rows[-1].endswith("  " + missing_error),
       "runs: the error in the last column", q.stdout)
    q = run(d, "runs", "stats", "--label", "cmd", "--json")
    stats = json.loads(q.stdout) if q.returncode == 0 else {}
    ok('"failed": 1' in json.dumps(stats) or '"failed":1' in q.stdout,
       "runs stats --json counts it as failed", q.stdout)
    noexec = os.path.join(tmp, "noexec.sh")
    with open(noexec, "w") as f:
        f.write("#!/bin/sh\nexit 0\n")
    p = run(d, "run", "--", noexec)
    r = last_run(d)
    ok(p.returncode == 126 and r.get("status") == "failed" and r.get("exit_code") == 126 and
       "refused" not in p.stderr and "Permission denied" in p.stderr,
       "a command not executable: exit 126, recorded failed with 126", (p.stderr, r))
    ok(r.get("error") == noexec + ": Permission denied (not executable)",
       "a command not executable: the run's error names the path and the cause", r)
    ok(p.stderr.strip() == "thermlog run: %s: Permission denied (not executable); recorded as "
       "run %d (failed, exit 126)" % (noexec, r.get("id")),
       "a command not executable: the message", p.stderr)

    # The stop body's error: null or a short text, else a 400 naming it.
    rid = run(d, "run", "start", "--label", "stoperr").stdout.strip()
    for body in (b'{"exit_code": 1, "error": 5}', b'{"exit_code": 1, "error": "a\\nb"}',
                 b'{"exit_code": 1, "error": "%s"}' % (b"x" * 501)):
        status, reply = post_unix(d, "/api/v1/runs/%s/stop" % rid, body)
        ok(status == 400 and str(reply.get("error", "")).startswith("error: "),
           "stop body %s...: 400 naming error" % body[:40].decode(), (status, reply))
    ok(count_runs(d, "stoperr", "running") == 1, "the run is still running after them")
    status, reply = post_unix(d, "/api/v1/runs/%s/stop" % rid,
                              b'{"exit_code": 2, "error": "lost its input"}')
    ok(status == 200 and reply.get("error") == "lost its input" and
       last_run(d).get("error") == "lost its input",
       "a stop with an error: stored, in the reply", (status, reply))

    # Messages: an unrecorded timeout says so; a missing --pid and a long label are refused.
    cfg = os.path.join(tmp, "nodaemon.yaml")
    with open(d.cfg) as f:
        text = f.read()
    with open(cfg, "w") as f:
        f.write(text.replace(d.sock, os.path.join(tmp, "none.sock")))
    p = subprocess.run([THERMLOG, "-c", cfg, "run", "--timeout", "1s", "--", "sleep", "5"],
                       capture_output=True, text=True, timeout=30)
    ok(p.returncode == 143 and re.search(r"sleep timeout after 1\.\d+ s \(not recorded\)",
                                         p.stderr),
       "an unrecorded timeout says timeout", p.stderr)
    p = run(d, "run", "start", "--label", "ghost", "--pid", "999999")
    ok(p.returncode != 0 and not p.stdout and "999999" in p.stderr and
       "no such process" in p.stderr and count_runs(d, "ghost") == 0,
       "run start --pid of no process is refused", p.stderr)
    marker = os.path.join(tmp, "ran")
    p = run(d, "run", "--label", "x" * 201, "--", "touch", marker)
    ok(p.returncode == 2 and "--label" in p.stderr and "200" in p.stderr and
       not os.path.exists(marker), "a label over 200 bytes is refused before the command runs",
       p.stderr)


def main():
    tmp = tempfile.mkdtemp(prefix="thermlog-runs-")
    d = None
    try:
        d = Daemon(tmp, fresh_tree(tmp))
        if not ok(d.start(), "thermlogd starts and creates its socket", d.text()):
            return

        mode = os.stat(d.sock).st_mode & 0o777
        ok(mode == 0o660, "the socket is mode 0660", oct(mode))

        # Exit status passthrough: exit 3 -> 3 and failed, with the code kept.
        t0 = time.time()
        p = run(d, "run", "--tag", "model=v1", "--", "sh", "-c", "sleep 2; exit 3")
        t1 = time.time()
        r = last_run(d)
        ok(p.returncode == 3, "exit 3 passes through", p.stderr)
        ok(r.get("status") == "failed" and r.get("exit_code") == 3, "recorded as failed, 3", r)
        ok(r.get("label") == "sh", "the label defaults to the command's base name", r)
        ok(json.loads(r.get("tags") or "{}") == {"model": "v1"}, "tags kept", r)
        ok(r.get("rss_max_bytes", 0) > 0, "peak RSS from wait4", r)
        said = re.search(r"run \d+ \(sh\) failed \(exit 3\) in (\d+\.\d+) s, peak [0-9.]+ °C",
                         p.stderr)
        ok(said and float(said.group(1)) >= 2.0, "one summary line on stderr", p.stderr)
        # The run covers the command and lies within the wrapper's life as this test saw it
        # (a loaded machine stretches both ends, never the order).
        dur = (r["end_ms"] - r["start_ms"]) / 1000
        ok(dur >= 2.0 and t0 * 1000 - 1 <= r["start_ms"] and r["end_ms"] <= t1 * 1000 + 1,
           f"duration {dur:.3f} s covers the command, within the wrapper's life", (r, t0, t1))
        fp = rows(d, "SELECT fingerprint FROM runs WHERE id = ?", (r["id"],))[0][0]
        fp = json.loads(fp)
        ok(fp.get("board") == "Radxa ROCK 5C" and fp.get("argv") == ["sh", "-c",
                                                                    "sleep 2; exit 3"]
           and re.fullmatch(r"[0-9a-f]{64}", fp.get("exe_sha256") or "")
           and fp.get("governors", {}).get("devfreq/fdab0000.npu") == "rknpu_ondemand",
           "fingerprint: board, argv, executable sha256, governors", fp)
        n_fast = rows(d, "SELECT count(*) FROM run_samples WHERE ts_ms BETWEEN ? AND ?",
                      (r["start_ms"], r["end_ms"]))[0][0]
        ok(n_fast >= 3, f"fast samples at 1 s stored with the run ({n_fast})")

        # /metrics counts the run when it ends, not at the next minute cycle.
        def runs_total():
            url = "http://127.0.0.1:%d/metrics" % d.port()
            with urllib.request.urlopen(url, timeout=10) as resp:
                text = resp.read().decode()
            m = re.search(r'^thermlog_runs_total\{label="sh",status="failed"\} (\S+)$', text,
                          re.M)
            return float(m.group(1)) if m else None
        ok(wait_for(lambda: runs_total() == 1, 30),
           "/metrics counts the ended run before the next cycle (60 s)", runs_total())

        # SIGTERM to the wrapper is forwarded: signaled, 143.
        w = subprocess.Popen([THERMLOG, "-c", d.cfg, "run", "--", "sleep", "30"],
                             stderr=subprocess.PIPE, text=True)
        running(d, "sleep")
        w.send_signal(signal.SIGTERM)
        _, err = w.communicate(timeout=10)
        r = last_run(d)
        ok(w.returncode == 143, "SIGTERM: exit 143", err)
        ok(r.get("status") == "signaled" and r.get("signal") == 15, "recorded as signaled 15", r)

        # --timeout ends the command and says so.
        p = run(d, "run", "--timeout", "1s", "--", "sleep", "5")
        r = last_run(d)
        ok(p.returncode == 143 and r.get("status") == "timeout", "--timeout: timeout", (p, r))

        # kill -9 of the wrapper: the daemon closes the run as lost within a cycle.
        w = subprocess.Popen([THERMLOG, "-c", d.cfg, "run", "--label", "victim", "--",
                              "sleep", "30"], stderr=subprocess.DEVNULL)
        running(d, "victim")
        w.kill()
        w.wait()
        wait_for(lambda: last_run(d).get("status") == "lost", 30)
        r = last_run(d)
        ok(r.get("label") == "victim" and r.get("status") == "lost", "kill -9: lost", r)

        # run start / run stop for orchestrators.
        p = run(d, "run", "start", "--label", "orch", "--tag", "k=v")
        rid = p.stdout.strip()
        ok(p.returncode == 0 and rid.isdigit(), "run start prints an id", p.stderr)
        time.sleep(1.5)  # no --pid: nothing watched, so it is not lost meanwhile
        p = run(d, "run", "stop", rid, "--exit", "0")
        r = last_run(d)
        ok(p.returncode == 0 and r.get("status") == "ok" and json.loads(p.stdout)["id"] ==
           int(rid), "run stop ends it as ok", (p.stdout, p.stderr, r))
        # The stop reply is the run object `runs` and `runs show` write: tags and origin too
        reply = json.loads(p.stdout) if p.returncode == 0 else {}
        q = run(d, "runs", "--json")
        listed = [x for x in json.loads(q.stdout)["runs"] if x["id"] == int(rid)] \
            if q.returncode == 0 else []
        q = run(d, "runs", "show", rid, "--json")
        shown = json.loads(q.stdout)["run"] if q.returncode == 0 else {}
        ok(listed and reply == listed[0] and list(reply) == list(listed[0]),
           "run stop's reply is the run's object in `runs --json`", (reply, listed))
        ok(reply and all(shown.get(k) == v for k, v in reply.items()) and
           reply.get("tags") == {"k": "v"} and reply.get("origin") == shown.get("origin") and
           "origin" in reply, "run stop's reply has `runs show`'s fields: tags, origin",
           (reply, shown))
        p = run(d, "run", "stop", rid, "--status", "failed")
        ok(p.returncode == 1 and "not running" in p.stderr, "a second stop is refused",
           p.stderr)

        # Over TCP: refused without a token (none is configured).
        port = d.port()
        req = urllib.request.Request(f"http://127.0.0.1:{port}/api/v1/runs",
                                     data=b'{"label":"x"}', method="POST")
        try:
            urllib.request.urlopen(req, timeout=5)
            status = 200
        except urllib.error.HTTPError as e:
            status = e.code
        ok(status == 403, f"POST over TCP without a token: 403 (got {status})")

        wrapper_checks(d, tmp)

        # A daemon restart during a run: the run stays open and the stop lands.
        w = subprocess.Popen([THERMLOG, "-c", d.cfg, "run", "--label", "across", "--",
                              "sleep", "4"], stderr=subprocess.PIPE, text=True)
        running(d, "across")
        d.stop()
        stopped_ms = time.time() * 1000
        ok(d.start(), "thermlogd restarts", d.text())
        _, err = w.communicate(timeout=15)
        r = last_run(d)
        ok(w.returncode == 0 and r.get("label") == "across" and r.get("status") == "ok",
           "a run across a daemon restart ends ok", (err, r))
        fig = json.loads(r.get("figures") or "{}")
        since = fig.get("fast_samples_from") or "1970-01-01T00:00:00Z"
        since_ms = datetime.datetime.fromisoformat(since.replace("Z", "+00:00")).timestamp() * 1000
        ok(since_ms > r["start_ms"] and since_ms >= stopped_ms - 1 and
           fig.get("energy", {}).get("method") == "counter",
           "after the restart: the counters from the stored start, the samples said to start "
           "after the restart", (fig.get("fast_samples_from"), r["start_ms"], stopped_ms))

        # Counters: the tree becomes rock5c-after-run mid-run; the deltas are exact.
        # The command ends when the test says so (a flag file), once the tree is changed.
        flag = os.path.join(tmp, "npu-done")
        w = subprocess.Popen([THERMLOG, "-c", d.cfg, "run", "--label", "npu", "--", "sh", "-c",
                              'while [ ! -e "$0" ]; do sleep 0.05; done', flag],
                             stderr=subprocess.PIPE, text=True)
        running(d, "npu")
        # The counter files are under devices/ (class/ holds symlinks into it).
        shutil.copytree(os.path.join(FIXTURES, "rock5c-after-run", "devices"),
                        os.path.join(d.tree, "devices"), symlinks=True, dirs_exist_ok=True)
        open(flag, "w").close()
        w.communicate(timeout=30)
        r = last_run(d)
        fig = json.loads(r.get("figures") or "{}")
        before = table(os.path.join(FIXTURES, "rock5c/devices/system/cpu/cpufreq/policy4/"
                                    "stats/time_in_state"), "cpufreq")
        after = table(os.path.join(FIXTURES, "rock5c-after-run/devices/system/cpu/cpufreq/"
                                   "policy4/stats/time_in_state"), "cpufreq")
        want = {str(k): round((after[k] - before[k]) / 1000, 3) for k in before}
        got = fig.get("residency", {}).get("cpufreq/policy4", {})
        ok({k: round(v, 3) for k, v in got.get("seconds", {}).items()} == want and
           got.get("method") == "time_in_state", "cpufreq policy4 residency is the exact delta",
           (got, want))
        npu_dir = "devices/platform/fdab0000.npu/devfreq/fdab0000.npu/trans_stat"
        nb = table(os.path.join(FIXTURES, "rock5c", npu_dir), "devfreq")
        na = table(os.path.join(FIXTURES, "rock5c-after-run", npu_dir), "devfreq")
        want = {str(k): round((na[k] - nb[k]) / 1000, 3) for k in nb}
        got = fig.get("residency", {}).get("devfreq/fdab0000.npu", {})
        ok({k: round(v, 3) for k, v in got.get("seconds", {}).items()} == want and
           got.get("method") == "trans_stat", "NPU trans_stat residency is the exact delta",
           (got, want))
        # Below max: against the hardware's maximum (the highest available frequency), not
        # the highest the table shows.
        below = sum(v for k, v in want.items() if k != "1000000000")
        ok(got.get("max_hz") == 1000000000 and got.get("max_hz_from") == "available_frequencies"
           and abs(got.get("below_max_share", -1) - below / sum(want.values())) < 1e-9,
           "NPU trans_stat: below_max_share against the 1 GHz hardware maximum", got)
        p4 = fig.get("residency", {}).get("cpufreq/policy4", {})
        ok(p4.get("max_hz") == 2256000000 and p4.get("max_hz_from") == "cpuinfo_max_freq",
           "policy4: max_hz is cpuinfo_max_freq", p4)
        with open(os.path.join(FIXTURES, "rock5c", INA, "energy1_input")) as f:
            e0 = int(f.read())
        with open(os.path.join(FIXTURES, "rock5c-after-run", INA, "energy1_input")) as f:
            e1 = int(f.read())
        ok(r.get("energy_method") == "counter" and abs(r["energy_j"] - (e1 - e0) / 1e6) < 1e-6
           and r.get("energy_coverage") == 1.0,
           f"energy from the ina238 counter: {(e1 - e0) / 1e6} J", r)
        ok(fig.get("cooling") is not None and fig["cooling"]["active_s_high"] > 0,
           "cooling active time from time_in_state_ms", fig.get("cooling"))

        # Heat: soc-thermal at 70 °C (above its 60 °C passive trip) for about 2 s, then 50 °C.
        zone = os.path.join(d.tree, "devices/virtual/thermal/thermal_zone0/temp")
        with open(zone, "w") as f:
            f.write("70000\n")
        # And the capacitor's thermocouple at 100 °C: no zone of the board, so no peak.
        with open(os.path.join(d.tree, "devices/platform/feb00000.spi/spi_master/spi0/spi0.0/"
                               "iio:device1/in_temp_raw"), "w") as f:
            f.write("400\n")
        w = subprocess.Popen([THERMLOG, "-c", d.cfg, "run", "--label", "hot", "--",
                              "sleep", "6"], stderr=subprocess.PIPE, text=True)
        # Hot from the run's recorded start for about 2 s of its 6 (the input's shape, not a
        # condition: a wrapper slow to start on a loaded machine still sees the heat).
        running(d, "hot")
        time.sleep(2)
        with open(zone, "w") as f:
            f.write("50000\n")
        _, err = w.communicate(timeout=10)
        r = last_run(d)
        heat = json.loads(r.get("figures") or "{}").get("heat", {}).get("thermal/soc-thermal", {})
        trips = {t["trip_c"]: t["seconds"] for t in heat.get("above_passive_trips", [])}
        ok(heat.get("max_c") == 70.0 and r.get("label") == "hot", "the peak of soc-thermal", heat)
        fig = json.loads(r.get("figures") or "{}")
        tmax = rows(d, "SELECT temp_max_c FROM runs WHERE id = ?", (r["id"],))[0][0]
        ok(tmax == 70.0 and (fig.get("peak") or {}).get("channel") == "thermal/soc-thermal"
           and not any(k.startswith("iio/") for k in fig.get("heat", {})),
           "the peak is the hottest zone, not the 100 °C thermocouple, and says its channel",
           (tmax, fig.get("peak"), list(fig.get("heat", {}))))
        ok("peak 70 °C" in err, "the summary line says the zone's peak", err)
        # Hot for about 2 s of a 6 s run, sampled each second: at least one 1 s interval
        # starts hot, never the whole run (how many more depends on the loop's pace).
        run_s = (r["end_ms"] - r["start_ms"]) / 1000
        ok(set(trips) == {60.0, 85.0} and 1.0 <= trips[60.0] < run_s - 1 and trips[85.0] == 0,
           "time above each passive trip point (60 °C: about 2 s of 6, 85 °C: none)",
           (trips, run_s))
        noise = re.findall(r"\d+\.\d*(?:0000000|9999999)\d*", r.get("figures") or "")
        ok(not noise, "the figures carry no float noise", noise[:5])
        n = heat.get("samples", 0)
        ok(n >= 4 and 50.0 < heat.get("mean_c", 0) < 70.0 and heat.get("p95_c") == 70.0,
           "mean and type-7 p95 over the fast samples", heat)
        rc = d.stop()
        ok(rc == 0 and "Sanitizer" not in d.text() and "runtime error" not in d.text(),
           f"thermlogd stops cleanly (status {rc})", d.text()[-3000:])

        # Constant 5 W and no energy counter: trapezoid integration over the fast samples, to a
        # part per million (times are epoch seconds in doubles: 0.24 us steps, 1.2 uJ at 5 W).
        tree = fresh_tree(tmp, "sys5w")
        os.unlink(os.path.join(tree, INA, "energy1_input"))
        with open(os.path.join(tree, INA, "power1_input"), "w") as f:
            f.write("5000000\n")
        # And a kernel without cpufreq stats for policy6, an NPU whose devfreq has no table.
        shutil.rmtree(os.path.join(tree, "devices/system/cpu/cpufreq/policy6/stats"))
        with open(os.path.join(tree, "devices/platform/fdab0000.npu/devfreq/fdab0000.npu/"
                               "trans_stat"), "w") as f:
            f.write("Not Supported.\n")
        with open(os.path.join(tree, "devices/platform/fdab0000.npu/devfreq/fdab0000.npu/"
                               "cur_freq"), "w") as f:
            f.write("300000000\n")
        os.makedirs(os.path.join(tmp, "5w"))
        d5 = Daemon(os.path.join(tmp, "5w"), tree)
        ok(d5.start(), "a second daemon on the 5 W tree", d5.text())
        p = run(d5, "run", "--", "sleep", "3")
        r = last_run(d5)
        dur = (r["end_ms"] - r["start_ms"]) / 1000
        ok(re.search(r"energy \d+(\.\d{1,6})? J", p.stderr), "the summary's energy to the uJ, "
           "no float noise", p.stderr)
        ok(r.get("energy_method") == "power_trapezoid" and abs(r["energy_j"] - 5 * dur) < 1e-6 * 5 * dur
           and r.get("energy_coverage") == 1.0,
           f"5 W over {dur:.3f} s: {r.get('energy_j')} J = duration x 5 W", r)
        res = json.loads(r.get("figures") or "{}").get("residency", {})
        for key in ("cpufreq/policy6", "devfreq/fdab0000.npu"):
            got = res.get(key, {})
            secs = sum(got.get("seconds", {}).values())
            ok(got.get("method") == "fast_samples" and abs(secs - dur) <= 1.0,
               f"{key} without a counter: residency from the fast samples ({secs} s)", got)
        npu = res.get("devfreq/fdab0000.npu", {})
        ok(npu.get("max_hz") == 1000000000 and npu.get("max_hz_seen") == 300000000
           and npu.get("below_max_share") == 1,
           "an NPU at 300 MHz all run: all of it below its 1 GHz maximum", npu)
        ok(res.get("cpufreq/policy4", {}).get("method") == "time_in_state",
           "policy4 keeps its counter", res.get("cpufreq/policy4"))

        # Minute-series invariance: the runs' rows leave `thermlog stats` as it was. The daemon
        # stops first and both answers cover one fixed window, so only the runs differ.
        rc = d5.stop()
        ok(rc == 0 and "Sanitizer" not in d5.text(), f"the 5 W daemon stops cleanly ({rc})",
           d5.text()[-3000:])
        now = int(time.time()) + 1
        window = ["--from", str(now - 3600), "--to", str(now)]
        copy = os.path.join(tmp, "without-runs.db")
        con = sqlite3.connect(d5.db)
        con.execute(f"VACUUM INTO '{copy}'")
        con.close()
        con = sqlite3.connect(copy)
        con.execute("DELETE FROM runs")
        con.execute("DELETE FROM run_samples")
        con.commit()
        con.close()
        before = run(d5, "--db", d5.db, "stats", *window, "--json")
        after = run(d5, "--db", copy, "stats", *window, "--json")
        ok(before.returncode == 0 and before.stdout == after.stdout and before.stdout,
           "thermlog stats is identical with and without the runs", (before.stderr,
                                                                     after.stderr))

        # No daemon: the command still runs, its status passes through, and we are told.
        p = run(d5, "run", "--", "sh", "-c", "exit 7")
        ok(p.returncode == 7 and "NOT recorded" in p.stderr,
           "daemon absent: exit 7 passes through and the run is said not recorded", p.stderr)
    finally:
        if d and d.proc and d.proc.poll() is None:
            d.stop()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
    sys.exit(done())
