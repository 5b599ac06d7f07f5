"""Shared helpers for the daemon fault tests: run the real thermlogd, read its database."""
import os
import re
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time


class TestFailure(Exception):
    pass


class Tap:
    """A tiny TAP producer, like tests/unit/test.h."""

    def __init__(self):
        self.n = 0
        self.failed = 0

    def ok(self, cond, what, detail=None):
        self.n += 1
        print(("ok" if cond else "not ok") + " %d - %s" % (self.n, what), flush=True)
        if not cond:
            self.failed += 1
            if detail is not None:
                for line in str(detail).splitlines()[-30:]:
                    print("#   " + line, flush=True)
        return cond

    def done(self):
        print("1..%d" % self.n, flush=True)
        return 1 if self.failed else 0


def copy_fixture(src, dst):
    shutil.copytree(src, dst, symlinks=True)
    return dst


def write_config(path, interval="1s", rescan="300s", extra=""):
    with open(path, "w") as f:
        # hwmon and meminfo would read the host's /sys and /proc beside the fixture
        f.write("interval: %s\nrescan: %s\nsources:\n  hwmon: {enabled: false}\n"
                "  meminfo: {enabled: false}\n%s" %
                (interval, rescan, extra))
    return path


# Every daemon started, so that main() stops those an exception left running.
_started = []


class Daemon:
    """One thermlogd process with its stderr in a log file."""

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
        """Sends @sig and waits; returns the exit status (None if it had to be killed)."""
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


def connect_ro(db):
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
    """[(ts, clock)] in time order; [] before the schema exists."""
    if not os.path.exists(db):
        return []
    try:
        return query(db, "SELECT ts, clock FROM cycles ORDER BY ts")
    except TestFailure:
        return []


def wait_for(pred, timeout, step=0.05):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        v = pred()
        if v:
            return v
        time.sleep(step)
    return pred()


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


def decode_samples(data):
    """A samples row's blob: {channel_id: q}. Pairs: (id delta, zigzag q) varints. Runs (a
    leading 0 byte): per run of consecutive ids (gap, length) and the zigzag q varints, a run
    starting at the previous run's last id + 1 + gap (the first after -1). See codec.h."""
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


def check_database(db):
    """integrity_check, one samples row per cycle and every blob whole: (ok, detail)."""
    con = connect_ro(db)
    try:
        ic = con.execute("PRAGMA integrity_check").fetchall()
        if ic != [("ok",)]:
            return False, "integrity_check: %r" % ic
        c = [r[0] for r in con.execute("SELECT ts FROM cycles ORDER BY ts")]
        s = con.execute("SELECT ts, data FROM samples ORDER BY ts").fetchall()
        if c != [r[0] for r in s]:
            return False, "cycles and samples rows differ: %d vs %d" % (len(c), len(s))
        for ts, data in s:
            decode_samples(data)
        return True, "%d cycles" % len(c)
    finally:
        con.close()


def channel_ids(db):
    return dict(query(db, "SELECT key, id FROM channels"))


def samples(db):
    return [(ts, decode_samples(d)) for ts, d in query(db, "SELECT ts, data FROM samples ORDER BY ts")]


def stop_all():
    """Stops every daemon still running (SIGTERM, then SIGKILL)."""
    for d in _started:
        d.stop()


class Workdir:
    def __init__(self, prefix):
        self.path = tempfile.mkdtemp(prefix=prefix)

    def __enter__(self):
        return self.path

    def __exit__(self, *exc):
        stop_all()  # before the tree goes: a daemon left running would write into it
        if os.environ.get("THERMLOG_KEEP"):
            print("# kept " + self.path)
            return
        shutil.rmtree(self.path, ignore_errors=True)


def main(fn):
    """Runs fn(tap) and exits with TAP's status; any exception is a failed check."""
    tap = Tap()
    try:
        fn(tap)
    except Exception as e:  # report, do not hide
        import traceback
        tap.ok(False, "unexpected exception: %s" % e, traceback.format_exc())
    finally:
        stop_all()
    sys.exit(tap.done())
