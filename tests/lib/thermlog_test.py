"""The one helper module of thermlog's Python integration tests and benchmarks: TAP output, a
work directory that leaves nothing behind, the real thermlogd as a child (Daemon, and Demo for
`thermlogd --demo`), port-0 helpers, HTTP GETs, and readers of a live database.

Scripts import it through their own location, e.g.
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
    from thermlog_test import Daemon, Workdir, main, ok
"""
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
import urllib.request


class TestFailure(Exception):
    pass


# ---- TAP ----

class Tap:
    """A tiny TAP producer, like tests/unit/test.h. The module's ok()/count()/done() and
    main() all use the one instance TAP, so a script may mix the two styles."""

    def __init__(self):
        self.n = 0
        self.failed = 0

    def ok(self, cond, what, detail=None, lines=30):
        """One TAP line; on failure `detail` follows as comments, at most `lines` lines of it
        (its first third and its end: a log's last lines usually say why)."""
        self.n += 1
        print(("ok" if cond else "not ok") + " %d - %s" % (self.n, what), flush=True)
        if not cond:
            self.failed += 1
            if detail is not None and detail != "":
                text = str(detail).splitlines()
                if len(text) > lines:
                    head = lines // 3
                    text = text[:head] + ["... (%d lines left out)" % (len(text) - lines)] + \
                        text[len(text) - (lines - head):]
                for line in text:
                    print("#   " + line, flush=True)
        return cond

    def done(self):
        """Prints the plan; returns the exit status (1 when a check failed)."""
        print("1..%d" % self.n, flush=True)
        return 1 if self.failed else 0


TAP = Tap()

# The schema version this source tree's store migrates to: one migration a file of sql/.
SCHEMA_VERSION = len([f for f in os.listdir(os.path.join(os.path.dirname(
    os.path.abspath(__file__)), "..", "..", "sql")) if re.match(r"\d{4}-.*\.sql$", f)])


def ok(cond, what, detail=None, lines=30):
    return TAP.ok(cond, what, detail, lines)


def count():
    """Number of TAP lines printed so far."""
    return TAP.n


def done():
    return TAP.done()


def main(fn):
    """Runs fn(tap) and exits with TAP's status; any exception is a failed check, and every
    daemon still running is stopped."""
    try:
        fn(TAP)
    except Exception as e:  # report, do not hide
        import traceback
        TAP.ok(False, "unexpected exception: %s" % e, traceback.format_exc())
    finally:
        stop_all()
    sys.exit(TAP.done())


# ---- files ----

class Workdir:
    """A temporary directory for `with`; on exit every daemon started is stopped first (one
    left running would write into the tree), then the tree is removed (kept, and named, with
    THERMLOG_KEEP set)."""

    def __init__(self, prefix):
        self.path = tempfile.mkdtemp(prefix=prefix)

    def __enter__(self):
        return self.path

    def __exit__(self, *exc):
        self.close()
        return False

    def close(self):
        stop_all()
        if os.environ.get("THERMLOG_KEEP"):
            print("# kept " + self.path)
            return
        shutil.rmtree(self.path, ignore_errors=True)


def copy_fixture(src, dst):
    shutil.copytree(src, dst, symlinks=True)
    return dst


def with_runs_socket(yaml, sock):
    """@yaml with runs.socket set to @sock unless it sets one: a daemon started on it never
    takes the system's /run/thermlog/thermlog.sock."""
    if re.search(r"^runs:.*\bsocket:|^runs:\n(?:  .*\n)*?  socket:", yaml, re.M):
        return yaml
    if re.search(r"^runs:\s*\n", yaml, re.M):
        return re.sub(r"^runs:\s*\n", "runs:\n  socket: %s\n" % sock, yaml, count=1, flags=re.M)
    if re.search(r"^runs:", yaml, re.M):
        raise ValueError("write_config: give runs.socket in a flow-style runs: mapping")
    return yaml + ("" if not yaml or yaml.endswith("\n") else "\n") + "runs:\n  socket: %s\n" % sock


def write_config(path, interval="1s", rescan="300s", extra=""):
    """A configuration for a test daemon; its runs.socket (unless @extra sets one) lies beside
    the file, in the test's scratch directory."""
    sock = os.path.join(os.path.dirname(os.path.abspath(path)), "run", "thermlog.sock")
    with open(path, "w") as f:
        # hwmon, meminfo and load would read the host's /sys, /proc and debugfs beside the fixture
        f.write(with_runs_socket("interval: %s\nrescan: %s\nsources:\n  hwmon: {enabled: false}\n"
                                 "  meminfo: {enabled: false}\n  load: {enabled: false}\n%s" %
                                 (interval, rescan, extra), sock))
    return path


# ---- ports and HTTP ----

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


# ---- processes ----

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


def scheduler_missed(log, busy_ms=500):
    """The slots (s since epoch, each second) the daemon said it missed because its loop woke
    too late while it was not busy (its longest step meanwhile under @busy_ms): a loaded
    machine's scheduler, not the daemon's work. A test that checks no slot is lost to what it
    does (a lock, a slow disk, a reload) lets these be, and only these."""
    import datetime
    out = set()
    for m in re.finditer(r"(\d+) cycles? missed \((\S+) to (\S+)\): \d+ ms from one cycle to the "
                         r"next, the loop woke too late for them \(its longest step meanwhile "
                         r"took (\d+) ms", log):
        if int(m.group(4)) < busy_ms:
            a, b = (int(datetime.datetime.fromisoformat(x.replace("Z", "+00:00")).timestamp())
                    for x in (m.group(2), m.group(3)))
            out.update(range(a, b + 1))
    return out


def wait_for(pred, timeout, step=0.05):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        v = pred()
        if v:
            return v
        time.sleep(step)
    return pred()


# Every daemon started, so that main() and Workdir stop those an exception left running.
_started = []


class Daemon:
    """One thermlogd process with its stderr in NAME.log and its stdout in NAME.out under
    `workdir` (appended: a restarted daemon keeps one log)."""

    def __init__(self, exe, workdir, args, env=None, name="thermlogd"):
        self.exe = exe
        self.args = list(args)
        self.env = dict(os.environ)
        self.env.pop("NOTIFY_SOCKET", None)
        self.env.pop("WATCHDOG_USEC", None)
        self.env.pop("LISTEN_FDS", None)
        self.env.pop("JOURNAL_STREAM", None)
        if env:
            self.env.update(env)
        self.log_path = os.path.join(workdir, name + ".log")
        self.out_path = os.path.join(workdir, name + ".out")
        self.proc = None
        self.log_offset = 0

    def start(self):
        self.log = open(self.log_path, "a")
        self.log_offset = self.log.tell()  # this start's lines begin here (the log is appended)
        self.out = open(self.out_path, "a")
        self.proc = subprocess.Popen([self.exe] + self.args, stdout=self.out, stderr=self.log,
                                     env=self.env)
        _started.append(self)
        return self

    def alive(self):
        return self.proc is not None and self.proc.poll() is None

    def send(self, sig):
        if self.alive():
            self.proc.send_signal(sig)

    def stop(self, sig=signal.SIGTERM, timeout=20):
        """Sends @sig and waits; returns the exit status (None if it had to be killed).
        Stopping a stopped daemon returns its status again."""
        if self.proc is None:
            return None
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
                self.close_files()
                return None
        self.close_files()
        return self.proc.returncode

    def close_files(self):
        for f in (getattr(self, "log", None), getattr(self, "out", None)):
            if f and not f.closed:
                f.close()

    def kill9(self):
        self.proc.kill()
        self.proc.wait()
        self.close_files()

    def log_text(self):
        try:
            with open(self.log_path, errors="replace") as f:
                return f.read()
        except FileNotFoundError:
            return ""

    def http_port(self, timeout=30):
        """The port this start serves HTTP on, read from its "http: serving ... (port N)" log
        line: with `--listen 127.0.0.1:0` the kernel picks a free port as the daemon binds it.
        None when no such line appears within @timeout s or the daemon exits first."""
        def found():
            try:
                with open(self.log_path, errors="replace") as f:
                    f.seek(self.log_offset)
                    m = re.search(r"http: serving .* \(port (\d+)\)$", f.read(), re.M)
            except FileNotFoundError:
                m = None
            if m:
                return int(m.group(1))
            return None if self.alive() else -1  # -1: exited, stop waiting
        port = wait_for(found, timeout)
        return port if port and port > 0 else None

    def wait_exit(self, timeout=20):
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            return None


def stop_all():
    """Stops every daemon still running (SIGTERM, then SIGKILL)."""
    for d in _started:
        d.stop()


class Demo(Daemon):
    """`thermlogd --demo` listening on 127.0.0.1:0 (the port is read back from the URL it
    prints) with its database, log and simulated sysfs tree (TMPDIR) inside a private temp
    dir. Started at once; use as a context manager: on exit the daemon is stopped (killed if
    it does not stop) and the temp dir removed, whatever happened.

    After start: .url ("http://127.0.0.1:PORT/" as printed by the daemon, "" when it did not
    become ready within `ready_timeout` s), .port, .db, .tmp, .proc."""

    def __init__(self, thermlogd, args=(), prefix="thermlog-demo-", ready_timeout=60):
        self.tmp = tempfile.mkdtemp(prefix=prefix)
        self.db = os.path.join(self.tmp, "demo.db")
        self.port = None
        self.url = ""
        super().__init__(thermlogd, self.tmp,
                         ["--demo", "--db", self.db, "--listen", "127.0.0.1:0", *args],
                         env={"TMPDIR": self.tmp})
        self.start()
        deadline = time.time() + ready_timeout
        while time.time() < deadline:
            with open(self.out_path) as f:
                line = f.readline()
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
        return self.log_text()

    def sim_root(self):
        """The simulated tree, from the log line "demo: simulated ROCK 5C ... in DIR, database"
        (the last start's), or None."""
        found = re.findall(r"demo: simulated ROCK 5C .*? in (/\S+), database ", self.log_text())
        return found[-1] if found else None

    def latest(self):
        """/api/v1/latest as {channel key: value}, with its "ts" under the key None."""
        d = get_json(self.url + "api/v1/latest")
        values = {c["key"]: c["value"] for c in d["channels"]}
        values[None] = d["ts"]
        return values

    def stop(self, sig=signal.SIGTERM, timeout=15):
        return super().stop(sig, timeout)

    def close(self):
        try:
            self.stop()
        finally:
            shutil.rmtree(self.tmp, ignore_errors=True)


def named_peak(run):
    """The peak a run of /api/v1/runs/{id} names, as (channel, °C), or None: a recorded run's
    figures.peak {channel, max_c, max_at}, else (no figures, as the demo's backfilled history)
    the hottest fast sample in its window, peak {channel, value, time, samples}."""
    fig = (run.get("figures") or {}).get("peak")
    if fig:
        return fig["channel"], fig["max_c"]
    peak = run.get("peak")
    return (peak["channel"], peak["value"]) if peak else None


# ---- the database of a running daemon ----

def set_clock_offset(path, seconds):
    """Writes the daemon's test hook THERMLOG_TEST_CLOCK_OFFSET_FILE: @seconds added to its
    wall clock from the next cycle on (replaced whole, so a cycle reads the old or the new)."""
    with open(path + ".new", "w") as f:
        f.write("%d\n" % seconds)
    os.rename(path + ".new", path)


def offset_clock_daemon(exe, fixture, wd):
    """A started thermlogd sampling a copy of @fixture every second in @wd, its wall clock
    shifted by the offset file (set_clock_offset(), 0 at start; no real clock is touched):
    (daemon, database path, offset file path)."""
    root = copy_fixture(fixture, os.path.join(wd, "sysfs"))
    db = os.path.join(wd, "t.db")
    cfg = write_config(os.path.join(wd, "t.yaml"))
    off = os.path.join(wd, "offset")
    set_clock_offset(off, 0)
    d = Daemon(exe, wd, ["-c", cfg, "--sysfs-root", root, "--db", db,
                         "--listen", "127.0.0.1:0"],
               env={"THERMLOG_TEST_CLOCK_OFFSET_FILE": off}).start()
    return d, db, off


def preloaded_daemon(exe, fixture, wd, shim, env):
    """A started thermlogd sampling a copy of @fixture every second in @wd with @shim
    LD_PRELOADed and @env (the shim's settings) added: (daemon, database path). A sanitized
    daemon takes the shim after its runtime."""
    root = copy_fixture(fixture, os.path.join(wd, "sysfs"))
    db = os.path.join(wd, "t.db")
    cfg = write_config(os.path.join(wd, "t.yaml"))
    env = dict(env, LD_PRELOAD=shim,
               ASAN_OPTIONS=os.environ.get("ASAN_OPTIONS", "") + ":verify_asan_link_order=0")
    d = Daemon(exe, wd, ["-c", cfg, "--sysfs-root", root, "--db", db,
                         "--listen", "127.0.0.1:0"], env=env).start()
    return d, db


def connect_ro(db):
    """A read-only connection. A WAL a killed writer left whose index a read-only connection
    cannot rebuild (SQLITE_READONLY_RECOVERY) is recovered by a read-write connection first,
    as any thermlog opening the file would."""
    con = sqlite3.connect("file:%s?mode=ro" % db, uri=True, timeout=10)
    con.execute("PRAGMA busy_timeout = 10000")
    try:
        con.execute("SELECT count(*) FROM sqlite_schema").fetchone()
    except sqlite3.OperationalError as e:
        if "readonly" not in str(e):
            raise
        con.close()
        rw = sqlite3.connect(db, timeout=10)
        rw.execute("SELECT count(*) FROM sqlite_schema").fetchone()
        rw.close()
        con = sqlite3.connect("file:%s?mode=ro" % db, uri=True, timeout=10)
        con.execute("PRAGMA busy_timeout = 10000")
    return con


def query(db, sql, args=()):
    """Runs a read query on a live database, retrying while it is being created."""
    last = None
    for _ in range(50):
        try:
            con = connect_ro(db)
            try:
                return con.execute(sql, args).fetchall()
            finally:
                con.close()
        except sqlite3.DatabaseError as e:
            last = e
            time.sleep(0.1)
    raise TestFailure("query failed: %s: %s" % (sql, last))


def cycles(db):
    """[(ts, clock)] in time order, compacted blocks and the head alike; [] before the schema
    exists."""
    if not os.path.exists(db):
        return []
    for _ in range(50):
        try:
            con = connect_ro(db)
            try:
                return read_cycles(con)
            finally:
                con.close()
        except sqlite3.DatabaseError:
            time.sleep(0.1)
        except TestFailure:
            return []
    return []


def has_table(con, name):
    return con.execute("SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name = ?",
                       (name,)).fetchone()[0] > 0


def read_cycles(con, series=0):
    """[(ts, clock)] of one series in one read snapshot: the compacted blocks' maps and the
    head's rows (a converted database's head keeps its cycles in the table cycles)."""
    con.execute("BEGIN")
    try:
        if not has_table(con, "samples"):
            raise TestFailure("no schema yet")
        out = []
        if has_table(con, "blocks"):
            for (blob,) in con.execute("SELECT map FROM blocks WHERE series = ? ORDER BY block, "
                                       "part", (series,)):
                out += [(ts, clock) for ts, clock, _ in decode_map(blob)[1]]
        if series == 1:
            out += [(r[0], 1) for r in con.execute("SELECT ts_ms FROM run_samples")]
        elif has_table(con, "cycles"):
            out += con.execute("SELECT ts, clock FROM cycles").fetchall()
        else:
            out += con.execute("SELECT ts, clock FROM samples").fetchall()
        return sorted(out)
    finally:
        con.execute("COMMIT")


class Reader:
    """Bits of a compacted blob, least significant first (src/base/blockcodec.c)."""

    def __init__(self, data, pos=0):
        self.data, self.pos, self.bit = data, pos, 0

    def varint(self):
        if self.bit:
            self.pos, self.bit = self.pos + 1, 0
        v, shift = 0, 0
        while True:
            b = self.data[self.pos]
            self.pos += 1
            v |= (b & 0x7F) << shift
            shift += 7
            if not b & 0x80:
                return v

    def byte(self):
        if self.bit:
            self.pos, self.bit = self.pos + 1, 0
        b = self.data[self.pos]
        self.pos += 1
        return b

    def bits(self, k):
        v = 0
        for i in range(k):
            v |= ((self.data[self.pos] >> self.bit) & 1) << i
            self.bit += 1
            if self.bit == 8:
                self.pos, self.bit = self.pos + 1, 0
        return v

    def unary(self):
        n = 0
        while self.bits(1):
            n += 1
        return n

    def end(self):
        return self.pos + (1 if self.bit else 0)


def decode_series(r, n):
    """A series of @n integers: first, common divisor, then the quotients' packing."""
    if n == 0:
        return []
    first = unzigzag(r.varint())
    if n == 1:
        return [first]
    g = r.varint()
    if g == 0:
        return [first] * n
    packing, m, u = r.byte(), n - 1, []
    if packing == 0:
        u = [r.varint() for _ in range(m)]
    elif packing == 1:
        base, w = r.varint(), r.byte()
        u = [base + r.bits(w) for _ in range(m)]
    elif packing == 2:
        w = r.byte()
        exc = r.varint()
        u = [r.bits(w) for _ in range(m)]
        at = 0
        for _ in range(exc):
            at += r.varint()
            u[at] |= r.varint() << w
            at += 1
    elif packing in (3, 4):
        k = r.byte()
        while len(u) < m:
            s = r.unary() << k | r.bits(k)
            if packing == 4 and s == 0:
                u += [0] * ((r.unary() << k | r.bits(k)) + 1)
            else:
                u.append(s)
    else:
        raise ValueError("unknown packing %d" % packing)
    out, v = [first], first
    for x in u:
        v = (v + unzigzag(x) * g + 2**63) % 2**64 - 2**63
        out.append(v)
    return out


def decode_runs(r):
    runs = []
    for _ in range(r.varint()):
        runs.append((r.varint(), r.varint()))
    return [v for v, n in runs for _ in range(n)]


def decode_map(blob):
    """A block's map part: (first, [(ts, clock, boot)])."""
    r = Reader(blob)
    if r.byte() != 2:
        raise ValueError("not a map")
    first, n = r.varint(), r.varint()
    ts = decode_series(r, n)
    clocks, boots = decode_runs(r), decode_runs(r)
    if r.end() != len(blob) or len(clocks) != n or len(boots) != n:
        raise ValueError("damaged map")
    return first, list(zip(ts, clocks, boots))


def decode_chunk(blob):
    """A channel's chunk part: [(cycle index in its block, q)]."""
    r = Reader(blob)
    if r.byte() != 1:
        raise ValueError("not a chunk")
    first, cycles = r.varint(), r.varint()
    n_runs = r.varint()
    if n_runs == 0:
        idx = list(range(first, first + cycles))
    else:
        idx, at = [], first
        for i in range(n_runs):
            length = r.varint()
            if i % 2 == 0:
                idx += range(at, at + length)
            at += length
    q = []
    if idx:
        form = r.byte()
        if form == 0:  # a series of the values
            q = decode_series(r, len(idx))
        elif form == 1:  # the distinct values, then each value's rank among them
            palette = decode_series(r, r.varint())
            q = [palette[i] for i in decode_series(r, len(idx))]
        else:
            raise ValueError("unknown form %d" % form)
    if r.end() != len(blob):
        raise ValueError("damaged chunk")
    return list(zip(idx, q))


def read_samples(con, series=0):
    """[(ts, {channel_id: q})] of one series in one read snapshot, compacted and head alike."""
    con.execute("BEGIN")
    try:
        out = []
        if has_table(con, "blocks"):
            blocks = {}
            for block, blob in con.execute("SELECT block, map FROM blocks WHERE series = ? "
                                           "ORDER BY block, part", (series,)):
                blocks.setdefault(block, []).extend(t for t, _, _ in decode_map(blob)[1])
            values = {b: [{} for _ in ts] for b, ts in blocks.items()}
            for block, cid, blob in con.execute("SELECT block, channel_id, data FROM chunks "
                                                "WHERE series = ? ORDER BY block, channel_id, "
                                                "part", (series,)):
                for i, q in decode_chunk(blob):
                    values[block][i][cid] = q
            for block in sorted(blocks):
                out += [(t, v) for t, v in zip(blocks[block], values[block]) if v]
        if series == 1:
            out += [(ts, decode_samples(d)) for ts, d in
                    con.execute("SELECT ts_ms, data FROM run_samples ORDER BY ts_ms")]
        else:
            out += [(ts, v) for ts, v in decode_chain(con.execute(
                "SELECT ts, data FROM samples ORDER BY ts").fetchall()) if v]
        return sorted(out, key=lambda r: r[0])
    finally:
        con.execute("COMMIT")


def wait_cycles(db, n, timeout, daemon=None):
    """Waits until at least @n cycles are stored; returns the cycles."""
    def enough():
        if daemon is not None and not daemon.alive():
            return None
        c = cycles(db)
        return c if len(c) >= n else None
    return wait_for(enough, timeout) or cycles(db)


def varints(data):
    out, v, shift = [], 0, 0
    for b in data:
        v |= (b & 0x7F) << shift
        if b & 0x80:
            shift += 7
        else:
            out.append(v)
            v, shift = 0, 0
    if shift:
        raise ValueError("truncated varint")
    return out


def unzigzag(u):
    return (u >> 1) ^ -(u & 1)


def decode_samples(data, base=None):
    """A samples row's blob: {channel_id: q}. Pairs: (id delta, zigzag q) varints. Runs (a
    leading 0 byte): per run of consecutive ids (gap, length) and the zigzag q varints, a run
    starting at the previous run's last id + 1 + gap (the first after -1). Delta (three 0
    bytes, then runs): each q is zigzag(q - base q), @base being the row before in the same
    UTC hour, decoded (a channel it lacks counts 0); a delta row without one is damage. See
    codec.h; decode_chain() supplies the bases."""
    if data[:3] == b"\0\0\0":
        if base is None:
            raise ValueError("a delta row without the row before it in its hour")
        rel = decode_samples(b"\0" + data[3:])
        return {cid: base.get(cid, 0) + d for cid, d in rel.items()}
    vals = varints(data)
    out = {}
    if data[:1] == b"\0":
        i, cid = 1, -1
        while i < len(vals):
            if i + 1 >= len(vals) or vals[i + 1] == 0:
                raise ValueError("damaged run")
            cid += vals[i]
            n = vals[i + 1]
            if i + 2 + n > len(vals):
                raise ValueError("truncated run")
            for q in vals[i + 2:i + 2 + n]:
                cid += 1
                out[cid] = unzigzag(q)
            i += 2 + n
        return out
    if len(vals) % 2:
        raise ValueError("odd number of varints")
    cid = 0
    for i in range(0, len(vals), 2):
        cid += vals[i]
        out[cid] = unzigzag(vals[i + 1])
    return out


def decode_chain(rows):
    """[(ts, blob)] in ts order, each hour from its first row: [(ts, {channel_id: q})]."""
    out, prev, hour = [], None, None
    for ts, data in rows:
        prev = decode_samples(data, prev if ts // 3600 == hour else None)
        hour = ts // 3600
        out.append((ts, prev))
    return out


def check_database(db, values=True):
    """integrity_check, every compacted blob whole, no block both compacted and in the head,
    each head row's chain readable: (ok, detail). Without @values the blobs and chains are not
    decoded (a loop that checks after every kill and compares the values once done)."""
    con = connect_ro(db)
    try:
        ic = con.execute("PRAGMA integrity_check").fetchall()
        if ic != [("ok",)]:
            return False, "integrity_check: %r" % ic
        c = read_cycles(con)
        if len(set(t for t, _ in c)) != len(c):
            return False, "a cycle stored twice"
        if values:
            read_samples(con)
            read_samples(con, 1)
        if has_table(con, "blocks"):
            for (block,) in con.execute("SELECT DISTINCT block FROM blocks WHERE series = 0"):
                n = con.execute("SELECT count(*) FROM samples WHERE ts >= ? AND ts < ?",
                                (block, block + 4 * 3600)).fetchone()[0]
                if n:
                    return False, "block %d both compacted and in the head" % block
        return True, "%d cycles" % len(c)
    finally:
        con.close()


def channel_ids(db):
    return dict(query(db, "SELECT key, id FROM channels"))


def export_series(thermlog, db, keys, frm="-1d", to=None):
    """`thermlog export` (long CSV) of the channels @keys over [frm, to):
    {key: [(unix s, value)]} in time order, through the CLI rather than the tables."""
    import csv
    import io
    args = [thermlog, "--db", db, "export", "--from", str(frm)]
    if to is not None:
        args += ["--to", str(to)]
    for k in keys:
        args += ["--channel", k]
    out = subprocess.run(args, capture_output=True, text=True, check=True).stdout
    series = {k: [] for k in keys}
    for row in csv.DictReader(io.StringIO(out)):
        series[row["channel"]].append((int(row["unix"]), float(row["value"])))
    return series


def samples(db):
    """[(ts, {channel_id: q})] of the cycles with values, compacted blocks and head alike."""
    con = connect_ro(db)
    try:
        return read_samples(con)
    finally:
        con.close()
