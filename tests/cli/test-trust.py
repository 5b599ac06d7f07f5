#!/usr/bin/python3
"""No command loses a user's history, no answer is silently wrong: file targets, import times,
import counts and resolution, windows, backups, read-only copies, empty sysfs, batched
imports beside a writer (TAP).

usage: test-trust.py THERMLOG FIXTURES_DIR [THERMLOGD]
"""
import json
import os
import re
import resource
import shutil
import sqlite3
import stat
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from thermlog_test import cycles, done, ok, wait_for, with_runs_socket  # noqa: E402

thermlog, fixtures = sys.argv[1], sys.argv[2]
thermlogd = sys.argv[3] if len(sys.argv) > 3 else None
tmp = tempfile.mkdtemp(prefix="thermlog-trust-")
empty_cfg = os.path.join(tmp, "empty.yaml")
open(empty_cfg, "w").close()
NOW = int(time.time())


def run(*args, db=None, stdin=None, cfg=None, wrap=(), timeout=120):
    glob = ["-c", cfg or empty_cfg] + (["--db", db] if db else [])
    return subprocess.run([*wrap, thermlog, *glob, *args], capture_output=True, text=True,
                          input=stdin, timeout=timeout)


def write(path, text):
    with open(path, "w") as f:
        f.write(text)
    return path


def write_cfg(path, text):
    """A configuration; a daemon started on it keeps its runs.socket in the test's directory."""
    return write(path, with_runs_socket(text, os.path.join(tmp, "run", "thermlog.sock")))


def csv_rows(rows):
    return "unix,channel,value,unit\n" + "".join(f"{t},{k},{v},celsius\n" for t, k, v in rows)


def make_db(name, n=120, start=NOW - 3 * 86400):
    db = os.path.join(tmp, name)
    rows = [(start + 60 * i, "bench/tc", f"{40 + i % 7}.{i % 10}") for i in range(n)]
    p = run("import", write(db + ".csv", csv_rows(rows)), db=db)
    assert p.returncode == 0, p.stderr
    return db


def digest(path):
    with open(path, "rb") as f:
        return f.read()


def leftovers(d):
    return [f for f in os.listdir(d) if ".tmp" in f or f.startswith(".thermlog")]


# --- 1: files written by commands -------------------------------------------------------------
def test_targets():
    db = make_db("victim.db")
    before = digest(db)
    p = run("export", "-o", db, db=db)
    ok(p.returncode == 1 and digest(db) == before, "export -o DB refused, database intact",
       p.stderr)
    ok("database" in p.stderr, "the message says the target is the database", p.stderr)
    p = run("export", "--force", "-o", db, db=db)
    ok(p.returncode == 1 and digest(db) == before, "export --force -o DB refused too", p.stderr)
    link = os.path.join(tmp, "other-name.db")
    os.link(db, link)
    p = run("export", "--force", "-o", link, db=db)
    ok(p.returncode == 1 and digest(db) == before, "a hard link to the database is refused",
       p.stderr)
    for suffix in ("-wal", "-shm"):
        target = db + suffix
        existed = os.path.exists(target)
        p = run("export", "--force", "-o", target, db=db)
        ok(p.returncode == 1, f"export -o DB{suffix} refused (exists: {existed})", p.stderr)
        if os.path.exists(target):
            os.unlink(target) if not existed else None
    # A name that would become the -wal of the database once a writer opens it.
    p = run("export", "--force", "-o", os.path.join(tmp, "other-name.db-wal"), db=db)
    ok(p.returncode == 1, "the -wal name of a link to the database is refused", p.stderr)
    out = write(os.path.join(tmp, "out.csv"), "precious\n")
    p = run("export", "-o", out, db=db)
    ok(p.returncode == 1 and digest(out) == b"precious\n", "an existing file is kept", p.stderr)
    ok("--force" in p.stderr, "the refusal names --force", p.stderr)
    p = run("export", "--force", "-o", out, db=db)
    ok(p.returncode == 0 and digest(out).startswith(b"time,"), "--force overwrites", p.stderr)
    p = run("export", "--channel", "no/such", "-o", os.path.join(tmp, "new.csv"), db=db)
    ok(p.returncode != 0 and not os.path.exists(os.path.join(tmp, "new.csv")),
       "a failed export leaves no file", p.stderr)
    ok(not leftovers(tmp), "no temporary files left behind", leftovers(tmp))
    copy = os.path.join(tmp, "copy.db")
    p = run("backup", copy, db=db)
    ok(p.returncode == 0, "backup to a new file", p.stderr)
    p = run("backup", copy, db=db)
    ok(p.returncode == 1 and "--force" not in p.stderr,
       "backup refuses an existing file (and offers no --force it does not have)", p.stderr)
    p = run("backup", db, db=db)
    ok(p.returncode == 1 and digest(db) == before, "backup onto the database refused", p.stderr)
    # Not a regular file: written in place, never replaced by a renamed regular file.
    fifo = os.path.join(tmp, "fifo")
    os.mkfifo(fifo)
    got = []
    reader = threading.Thread(target=lambda: got.append(open(fifo, "rb").read()))
    reader.start()
    p = run("export", "--force", "-o", fifo, db=db)
    if p.returncode != 0:
        open(fifo, "wb").close()  # release the reader
    reader.join(30)
    ok(p.returncode == 0 and stat.S_ISFIFO(os.lstat(fifo).st_mode) and got and
       got[0].startswith(b"time,"), "export --force -o FIFO writes into it, the FIFO stays",
       p.stderr)
    p = run("export", "-o", "", db=db)
    ok(p.returncode == 1 and "empty" in p.stderr, "export -o '' says the name is empty", p.stderr)
    for target in ("/dev/stdout", "-"):
        p = subprocess.run(f"'{os.path.abspath(thermlog)}' -c '{empty_cfg}' --db '{db}' export -o {target} | cat",
                           shell=True, capture_output=True, text=True, cwd=tmp, timeout=60)
        ok(p.returncode == 0 and p.stdout.startswith("time,") and
           not os.path.exists(os.path.join(tmp, "-")), f"export -o {target} writes to stdout",
           p.stderr)
    ok(not leftovers(tmp), "no temporary files left behind", leftovers(tmp))


# --- 2: impossible times ----------------------------------------------------------------------
def test_times():
    db = make_db("times.db")
    before = run("export", db=db).stdout
    cases = [
        ("future", [(NOW - 60, "bench/tc", "41"), (NOW + 2 * 86400, "bench/tc", "42")],
         ":3:", "future"),
        ("before 2000", [(NOW - 60, "bench/tc", "41"), (900000000, "bench/tc", "42")],
         ":3:", "2000-01-01"),
        ("milliseconds", [((NOW - 60) * 1000, "bench/tc", "41")], ":2:", "milliseconds"),
        ("microseconds", [((NOW - 60) * 1000000, "bench/tc", "41")], ":2:", "microseconds"),
        ("3170843 AD", [(99999999999999, "bench/tc", "41")], ":2:", "milliseconds"),
    ]
    for name, rows, line, word in cases:
        p = run("import", write(os.path.join(tmp, name + ".csv"), csv_rows(rows)), db=db)
        ok(p.returncode == 1 and line in p.stderr and word in p.stderr,
           f"import refuses {name}, naming the line and the problem", p.stderr)
        ok(run("export", db=db).stdout == before, f"{name}: nothing changed")
    p = run("import", os.path.join(tmp, "milliseconds.csv"), db=db)
    ok("--time-unit ms" in p.stderr, "the message says how to import milliseconds", p.stderr)
    p = run("import", "--time-unit", "ms", os.path.join(tmp, "milliseconds.csv"), db=db)
    ok(p.returncode == 0, "--time-unit ms imports them", p.stderr)
    stamp = (NOW - 60)
    p = run("export", "--from", str(stamp), "--to", str(stamp + 1), db=db)
    ok(f",{stamp},bench/tc,41" in p.stdout, "stored at the right second", p.stdout)
    p = run("import", "--time-unit", "us", os.path.join(tmp, "microseconds.csv"), db=db)
    ok(p.returncode == 0, "--time-unit us imports microseconds", p.stderr)
    if thermlogd:
        future_row_beside_daemon()
        before_raw_horizon()


def before_raw_horizon():
    """A row older than the pruned raw history is a bad row found before anything is stored."""
    db = make_db("pruned.db", n=3 * 24 * 60)
    cfg = write(os.path.join(tmp, "pruned.yaml"),
                "interval: 1s\nretention:\n  raw: 1d\nsources:\n  hwmon: {enabled: false}\n"
                f"runs:\n  socket: {os.path.join(tmp, 'pruned-runs.sock')}\n")
    log = open(os.path.join(tmp, "pruned.log"), "w+")
    d = subprocess.Popen([thermlogd, "-c", cfg, "--sysfs-root", os.path.join(fixtures, "rock5c"),
                          "--db", db, "--listen", "127.0.0.1:0"],
                         stdout=subprocess.DEVNULL, stderr=log)
    deadline = time.time() + 30
    while time.time() < deadline and "first cycle stored" not in open(log.name).read():
        time.sleep(0.2)
    # the first cycle's tick ran the hourly retention; the second is stored after it
    wait_for(lambda: cycle_count(db, NOW - 60) >= 2, 30)
    d.terminate()
    d.wait(20)
    rows = [(NOW - 3600 - 2 * i, "late/t", "41") for i in range(30000)]  # 17 h: enough batches
    rows.append((NOW - 2 * 86400, "late/t", "42"))
    src = write(os.path.join(tmp, "late.csv"), csv_rows(rows))
    before = run("export", "--channel", "late/t", db=db).stdout
    p = run("import", src, db=db)
    ok(p.returncode == 1 and ":30002:" in p.stderr and "retention" in p.stderr,
       "a row before the pruned raw history is refused, naming the line", p.stderr)
    ok(run("export", "--channel", "late/t", db=db).stdout == before,
       "and nothing was imported", p.stdout)
    p = run("import", "--skip-bad", src, db=db)
    ok(p.returncode == 0 and counts(p.stdout) == (30000, 0, 0), "--skip-bad imports the rest",
       p.stdout + p.stderr)


def cycle_count(db, after=None):
    """Cycles stored in @db (those after @after, s since epoch); 0 before the schema exists."""
    return len([t for t, _ in cycles(db) if after is None or t > after])


def future_row_beside_daemon():
    """A row stamped a little ahead of now must not stop a running daemon's cycles."""
    db = os.path.join(tmp, "live.db")
    cfg = write_cfg(os.path.join(tmp, "live.yaml"), "interval: 1s\nsources:\n  hwmon: {enabled: false}\n")
    log = open(os.path.join(tmp, "live.log"), "w+")
    d = subprocess.Popen([thermlogd, "-c", cfg, "--sysfs-root", os.path.join(fixtures, "rock5c"),
                          "--db", db, "--listen", "127.0.0.1:0"],
                         stdout=subprocess.DEVNULL, stderr=log)
    try:
        deadline = time.time() + 30
        while time.time() < deadline and not os.path.exists(db + "-wal"):
            time.sleep(0.2)
        wait_for(lambda: cycle_count(db) >= 1, 30)
        now = int(time.time())
        p = run("import", write(os.path.join(tmp, "soon.csv"),
                                csv_rows([(now + 120, "bench/tc", "41")])), db=db)
        ok(p.returncode == 1 and "future" in p.stderr,
           "a row two minutes ahead is refused on a live database", p.stdout + p.stderr)
        after = wait_for(lambda: cycle_count(db, now) >= 2 and cycle_count(db, now), 30) or \
            cycle_count(db, now)
        log.seek(0)
        text = log.read()
        ok(after >= 2 and "not stored" not in text,
           f"the daemon kept storing its cycles ({after} since the import)", text[-1000:])
    finally:
        d.terminate()
        d.wait(20)


# --- 6, 7: resolution and counts ----------------------------------------------------------------
def counts(out):
    m = re.search(r"(\d+) new, (\d+) identical, (\d+) conflicting", out)
    return tuple(int(x) for x in m.groups()) if m else None


def test_counts():
    db = os.path.join(tmp, "counts.db")
    t = NOW - 86400
    a = write(os.path.join(tmp, "a.csv"), csv_rows([(t, "x/t", "45"), (t + 60, "x/t", "46")]))
    p = run("import", a, db=db)
    ok(p.returncode == 0 and counts(p.stdout) == (2, 0, 0), "first import: 2 new", p.stdout)
    p = run("import", a, db=db)
    ok(p.returncode == 0 and counts(p.stdout) == (0, 2, 0), "re-import: 0 new, 2 identical",
       p.stdout + p.stderr)
    b = write(os.path.join(tmp, "b.csv"),
              csv_rows([(t, "x/t", "45"), (t + 60, "x/t", "47"), (t + 120, "x/t", "43.461")]))
    p = run("import", b, db=db)
    ok(p.returncode == 0 and counts(p.stdout) == (1, 1, 1),
       "identical, conflicting and new reported apart (a finer value refines the channel)",
       p.stdout + p.stderr)
    p = run("export", "--channel", "x/t", db=db)
    vals = [line.split(",")[3] for line in p.stdout.splitlines()[1:]]
    ok(vals == ["45.000", "46.000", "43.461"], "stored value kept on conflict; finer value exact",
       vals)
    c = write(os.path.join(tmp, "c.csv"),
              csv_rows([(t + 180, "x/t", "1.0000000001"), (t + 240, "x/t", "44.5"),
                        (t + 300, "x/t", "oops")]))
    p = run("import", c, db=db)
    ok(p.returncode == 1 and ":2:" in p.stderr and ":4:" in p.stderr,
       "bad rows refused without --skip-bad", p.stderr)
    p = run("import", "--skip-bad", c, db=db)
    ok(p.returncode == 0 and counts(p.stdout) == (1, 0, 0) and "2 bad rows skipped" in p.stdout,
       "--skip-bad skips a too-fine value and imports the rest", p.stdout + p.stderr)


def test_import_then_daemon():
    """Integers imported (no unit column) before the daemon first sees the channel."""
    if not thermlogd:
        return
    db = os.path.join(tmp, "first.db")
    t = NOW - 7200
    p = run("import", write(os.path.join(tmp, "first.csv"),
                            "unix,channel,value\n" + f"{t},thermal/soc-thermal,45\n"
                            f"{t + 60},thermal/soc-thermal,46\n"), db=db)
    ok(p.returncode == 0, "integers imported for a channel the daemon has not seen", p.stderr)
    cfg = write_cfg(os.path.join(tmp, "first.yaml"), "interval: 1s\nsources:\n  hwmon: {enabled: false}\n")
    d = subprocess.Popen([thermlogd, "-c", cfg, "--sysfs-root", os.path.join(fixtures, "rock5c"),
                          "--db", db, "--listen", "127.0.0.1:0"],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.time() + 30
        live = []
        while time.time() < deadline and len(live) < 2:
            time.sleep(0.5)
            out = run("export", "--channel", "thermal/soc-thermal", "--from", str(NOW - 60),
                      db=db).stdout
            live = out.splitlines()[1:]
    finally:
        d.terminate()
        d.wait(20)
    ok(live and all(x.split(",")[3] == "43.461" for x in live),
       "live 43.461 stored exactly after the integer import", live[-3:])
    p = run("channels", "--channel", "thermal/soc-thermal", "--json", db=db)
    ch = (json.loads(p.stdout)["channels"] or [{}])[0] if p.returncode == 0 else {}
    ok(ch.get("unit") == "celsius" and ch.get("kind") == "temperature" and
       ch.get("source") == "thermal",
       "the live sensor gives the imported channel its kind and unit", p.stdout + p.stderr)
    p = run("stats", "--channel", "thermal/soc-thermal", db=db)
    ok("°C" in p.stdout, "stats shows the channel in °C", p.stdout)


# --- 13: windows --------------------------------------------------------------------------------
def test_windows():
    db = make_db("window.db")
    p = run("stats", "--from", "-99999999d", db=db)
    ok(p.returncode == 2 and "limit" in p.stderr and "max_window" in p.stderr,
       "stats --from -99999999d refused with the API's limit", p.stderr)
    p = run("export", "--from", "2020-01-01", "--to", "2026-01-01", db=db)
    ok(p.returncode == 2 and "limit" in p.stderr, "export over the limit refused", p.stderr)
    p = run("stats", "--from", "-4d", db=db)
    ok(p.returncode == 0, "a window within the limit works", p.stderr)
    for args in (["stats", "--to", "2999-01-01"], ["export", "--to", "2999-01-01"]):
        p = run(*args, db=db)
        ok(p.returncode == 2 and "limit" in p.stderr and "--to" in p.stderr,
           f"{args[0]} --to 2999-01-01 alone refused with the limit", p.stdout[:300] + p.stderr)
    p = run("stats", "--to", str(NOW + 86400), db=db)
    ok(p.returncode == 0, "--to a day ahead alone works", p.stderr)
    cfg = write(os.path.join(tmp, "window.yaml"), "http:\n  max_window: 1d\n")
    p = run("stats", "--from", "-4d", db=db, cfg=cfg)
    ok(p.returncode == 2 and "86400 s" in p.stderr, "the configured limit applies", p.stderr)


# --- 16: backups and read-only copies ------------------------------------------------------------
def test_readonly():
    db = make_db("mode.db")
    os.chmod(db, 0o640)
    ro = os.path.join(tmp, "ro")
    os.mkdir(ro)
    copy = os.path.join(ro, "copy.db")
    p = run("backup", copy, db=db)
    ok(p.returncode == 0 and copy in p.stdout, "backup prints what it wrote", p.stdout + p.stderr)
    mode = stat.S_IMODE(os.stat(copy).st_mode)
    ok(mode == 0o640, "a 0640 database gives a 0640 copy", oct(mode))
    # A plain copy of a WAL database (with its -wal/-shm) as users make them, too.
    shutil.copy(db, os.path.join(ro, "plain.db"))
    wrap = ["unshare", "-m", "sh", "-c",
            f"mount --bind {ro} {ro} && mount -o remount,bind,ro {ro} && exec \"$@\"", "sh"]
    for name in ("copy.db", "plain.db"):
        path = os.path.join(ro, name)
        for args in (["stats"], ["channels"], ["peak", "--channel", "bench/tc"], ["export"],
                     ["lifetime"], ["backup", os.path.join(tmp, f"again-{name}")]):
            p = run(*args, db=path, wrap=wrap)
            ok(p.returncode == 0, f"{args[0]} on {name} in a read-only directory", p.stderr)


# --- 17, 18: sample -------------------------------------------------------------------------------
def test_sample():
    empty = os.path.join(tmp, "sysfs-empty")
    os.mkdir(empty)
    p = run("sample", "--sysfs-root", empty)
    ok("no channels" in p.stderr and empty in p.stderr, "sample says no channels, and where",
       p.stderr)
    if thermlogd:
        cfg = write_cfg(os.path.join(tmp, "d.yaml"),
                    "interval: 1s\nsources:\n  hwmon: {enabled: false}\n")
        log = open(os.path.join(tmp, "d.log"), "w+")
        d = subprocess.Popen([thermlogd, "-c", cfg, "--sysfs-root", empty, "--db",
                              os.path.join(tmp, "d.db"), "--listen", "127.0.0.1:0"],
                             stdout=subprocess.DEVNULL, stderr=log)
        text = ""
        deadline = time.time() + 20
        while time.time() < deadline and "no channels" not in text and d.poll() is None:
            time.sleep(0.2)
            log.seek(0)
            text = log.read()
        d.terminate()
        d.wait(20)
        ok("no channels found under " + empty in text, "thermlogd warns at start", text)
    cfg = write(os.path.join(tmp, "iio.yaml"),
                "iio_channels:\n  - device: fec10000.saradc\n    channel: voltage2\n")
    p = run("sample", "--sysfs-root", os.path.join(fixtures, "rock5c"), cfg=cfg)
    line = [x for x in p.stdout.splitlines() if x.startswith("iio/fec10000.saradc/voltage2")]
    ok(line and line[0].split()[-2:] == ["1.375", "V"],
       "IIO voltage printed at the channel's resolution", line)


# --- issue 14 item 13: batched import beside a writer ---------------------------------------------
def test_batches():
    db = make_db("batch.db", n=10)
    n = 60000
    src = os.path.join(tmp, "big.csv")
    start = NOW - 50 * 86400
    with open(src, "w") as f:
        f.write("unix,channel,value\n")
        for i in range(n):
            for k in range(5):
                f.write(f"{start + 60 * i},big/c{k},{40 + (i * 7 + k) % 300 / 10}\n")
    waits, errors = [], []
    stop = threading.Event()

    def writer():
        con = sqlite3.connect(db, timeout=60.0, isolation_level=None)
        i = 0
        while not stop.is_set():
            t0 = time.monotonic()
            try:
                con.execute("INSERT OR REPLACE INTO state (key, value) VALUES ('test.w', ?)",
                            (str(i),))
            except sqlite3.OperationalError as e:
                errors.append(str(e))
            waits.append(time.monotonic() - t0)
            i += 1
            time.sleep(0.05)
        con.close()

    th = threading.Thread(target=writer)
    th.start()
    t0 = time.monotonic()
    p = run("-v", "import", src, db=db)
    took = time.monotonic() - t0
    stop.set()
    th.join()
    batches = re.findall(r"committed (\d+) values", p.stderr)
    ok(p.returncode == 0, f"import of {n * 5} values beside a writer", p.stderr[-2000:])
    ok(len(batches) >= 5, f"the import committed in {len(batches)} transactions", p.stderr[-500:])
    # The import holds the write lock a batch at a time, never for the whole import: the
    # writer's longest wait is a fraction of the import's time whatever the machine's pace
    # (one transaction for the import would make a write wait for nearly all of it).
    longest = max(waits or [0])
    ok(not errors and waits and longest < took / 2,
       f"the writer waited at most {longest * 1000:.0f} ms ({len(waits)} writes), under half "
       f"of the import's {took:.1f} s", errors[:3])


def cpu_run(*args, db, timeout):
    """run() and the CPU seconds (user + system) the command took."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    p = run(*args, db=db, timeout=timeout)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return p, after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime


def test_wide_import():
    """A wide file of 10,000 channel columns imports in time linear in its cells: its CPU time
    against the same number of values as 4 columns and 10,000 rows, measured in this run (the
    columns were compared pairwise, each new channel read every channel again, each value
    rewrote its cycle's row: 97 s for 20,000 columns, holding the write lock). Ragged rows (a
    wide row's cell too many or too few shifts the values into other channels' columns; a long
    row may end before its optional unit and label) are bad rows, each named; a channel named
    twice is still refused."""
    cols, rows = 10000, 4
    start = NOW - 86400
    wide = os.path.join(tmp, "wide.csv")
    with open(wide, "w") as f:
        f.write("unix," + ",".join(f"wide/c{i} (celsius)" for i in range(cols)) + "\n")
        for r in range(rows):
            f.write(f"{start + 60 * r}," + ",".join(f"{40 + (i + r) % 50 / 10}" for i in range(cols))
                    + "\n")
    narrow = os.path.join(tmp, "narrow.csv")
    with open(narrow, "w") as f:
        f.write("unix," + ",".join(f"narrow/c{i} (celsius)" for i in range(rows)) + "\n")
        for r in range(cols):
            f.write(f"{start - 60 * cols + 60 * r}," + ",".join(f"{40 + (i + r) % 50 / 10}"
                                                               for i in range(rows)) + "\n")
    p, base = cpu_run("import", narrow, db=os.path.join(tmp, "narrow.db"), timeout=120)
    ok(p.returncode == 0, f"{cols * rows} values as {rows} columns: {base:.2f} s CPU", p.stderr)
    budget = 4 * base + 1.0
    try:
        p, took = cpu_run("import", wide, db=os.path.join(tmp, "wide.db"),
                          timeout=max(30.0, 20 * base))
        done_in = p.returncode == 0 and f"imported {cols * rows} values of {cols} channels" in p.stdout
        detail = p.stdout + p.stderr[-500:]
    except subprocess.TimeoutExpired:
        done_in, took, detail = False, float("inf"), "timed out"
    ok(done_in and took <= budget,
       f"the same values as {cols} columns: {took:.2f} s CPU (at most 4 times that plus 1 s: "
       f"{budget:.2f} s)", detail)
    ragged = write(os.path.join(tmp, "ragged.csv"),
                   "unix,rag/a (celsius),rag/b (celsius),rag/c (celsius)\n"
                   f"{start},40.1,40.2,40.3\n{start + 60},40.1,40.3\n"
                   f"{start + 120},40.1,40.2,40.3,40.4\n{start + 180},40.1,,40.3\n")
    db = os.path.join(tmp, "ragged.db")
    p = run("import", ragged, db=db)
    ok(p.returncode != 0 and f"ragged.csv:3: 3 fields where the header has 4: a ragged row" in
       p.stderr and "ragged.csv:4: 5 fields where the header has 4: a ragged row" in p.stderr
       and "nothing imported" in p.stderr,
       "ragged rows in a wide file: each named, nothing imported", p.stderr)
    p = run("import", "--skip-bad", ragged, db=db)
    ok(p.returncode == 0 and "imported 5 values of 3 channels" in p.stdout and
       "2 bad rows skipped" in p.stdout, "--skip-bad: the whole rows imported (an empty cell is "
       "no value)", p.stdout + p.stderr)
    long_ragged = write(os.path.join(tmp, "long-ragged.csv"),
                        f"unix,channel,value,unit\n{start},rag/x,1\n{start + 60},rag/x,1,celsius,x\n")
    p = run("import", long_ragged, db=db)
    ok(p.returncode != 0 and "long-ragged.csv:3: 5 fields where the header has 4" in p.stderr
       and "long-ragged.csv:2" not in p.stderr,
       "and a long row with a cell too many (one that ends before its unit is good)", p.stderr)
    twice = write(os.path.join(tmp, "twice.csv"), "unix,a/x (celsius),a/y (celsius),a/x (celsius)"
                  f"\n{start},1,2,3\n")
    p = run("import", twice, db=db)
    ok(p.returncode != 0 and "channel a/x has two columns (2 and 4)" in p.stderr,
       "a channel named twice: refused, both columns named", p.stderr)


def test_full_output():
    """Output that cannot be written fails the command, with the reason, whichever it is."""
    db = make_db("full.db", n=30)
    cmds = [("version",), ("--help",), ("stats",), ("stats", "--json"), ("peak", "--channel", "bench/tc"), ("channels",),
            ("export",), ("runs", "--json"), ("runs", "stats", "--json"), ("lifetime", "--json"),
            ("lifetime", "calc", "--rated-life-h", "2000", "--rated-temp-c", "105",
             "--temp-c", "65"),
            ("sample", "--sysfs-root", os.path.join(fixtures, "rock5c"))]
    for args in cmds:
        with open("/dev/full", "w") as full:
            p = subprocess.run([thermlog, "-c", empty_cfg, "--db", db, *args], stdout=full,
                               stderr=subprocess.PIPE, text=True, timeout=60)
        ok(p.returncode == 1 and "could not write the output" in p.stderr,
           f"thermlog {' '.join(args[:2])} to a full disk: exit 1 naming the failed write",
           f"exit {p.returncode}: {p.stderr[-300:]}")


def test_bad_times():
    """Every command that takes a time refuses a bad one with the same message, naming the
    command, the option and the text, and saying what it accepts."""
    db = make_db("badtime.db", n=10)
    cmds = [("stats",), ("peak", "--channel", "bench/tc"), ("export",), ("runs",),
            ("runs", "stats"), ("throttle",), ("report", "-o", os.path.join(tmp, "r.html")),
            ("lifetime",), ("lifetime", "profile")]
    want = "(use 2026-08-20T00:00:00Z, 2026-08-20, unix seconds, -24h or now)"
    for args in cmds:
        for opt in ("--from", "--to"):
            p = run(*args, opt, "yesterday-ish", db=db)
            name = " ".join(a for a in args if not a.startswith("-") and "/" not in a)
            line = f"thermlog {name}: bad time for {opt}: 'yesterday-ish' {want}"
            ok(p.returncode == 2 and p.stderr.splitlines()[:1] == [line],
               f"thermlog {name} {opt} yesterday-ish: exit 2, the one bad-time message", p.stderr)
    p = run("repair", "--drop-after", "yesterday-ish", db=db)
    ok(p.returncode == 2 and p.stderr.startswith(
        f"thermlog repair: bad time for --drop-after: 'yesterday-ish' {want}"),
       "thermlog repair --drop-after: the same message", p.stderr)


def test_fifos():
    """A FIFO with no writer as the database, a compared database or an import file: the
    command answers (a database is refused, naming it; an import reads it as empty) instead of
    blocking for ever in open(), as the daemon already refuses a FIFO."""
    good = make_db("fifo-good.db", n=10)
    fifo = os.path.join(tmp, "nobody-writes.fifo")
    os.mkfifo(fifo)
    for args, db in ((("stats",), fifo), (("export",), fifo),
                     (("report", "--compare", fifo, "-o", os.path.join(tmp, "f.html")), good),
                     (("runs", "compare", "--label", "x", fifo), good)):
        try:
            p = run(*args, db=db, timeout=20)
            answered = p.returncode != 0 and "nobody-writes.fifo" in p.stderr and \
                "not a regular file" in p.stderr
            detail = p.stderr
        except subprocess.TimeoutExpired:
            answered, detail = False, "blocked for 20 s"
        ok(answered, f"{' '.join(args[:2])} with a FIFO as a database: refused, naming it",
           detail)
    try:
        p = run("import", fifo, db=os.path.join(tmp, "fifo-import.db"), timeout=20)
        answered = p.returncode != 0 and "nobody-writes.fifo" in p.stderr
        detail = p.stderr
    except subprocess.TimeoutExpired:
        answered, detail = False, "blocked for 20 s"
    ok(answered, "import of a FIFO nobody writes: an empty file, said, not a hang", detail)


tests = [test_targets, test_times, test_counts, test_import_then_daemon, test_windows, test_readonly, test_sample,
         test_batches, test_wide_import, test_full_output, test_bad_times, test_fifos]
try:
    for t in tests:
        try:
            t()
        except Exception as e:  # one broken area must not hide the others
            ok(False, f"{t.__name__} ran", repr(e))
finally:
    shutil.rmtree(tmp, ignore_errors=True)
sys.exit(done())
