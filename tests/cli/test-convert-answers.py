#!/usr/bin/python3
"""Databases the previous thermlog wrote, converted by `thermlog repair --migrate`, answer as
the previous thermlog answered on them before the conversion, byte for byte (TAP).

The previous thermlog is the one whose store was at schema 10, the last before the chunks
(commit 73bc76c); the current one refuses such a file for reading until it is converted, so
its answers were made once with it and stored, in ANSWERS/answers.txt (one line an answer:
its name, the exit status, its length in bytes and its sha256; an answer of 16 KiB or less is
also stored whole beside it, for the difference shown on failure; and the sha256 of the old
history's rows, so a history that is not the one they were made on is named as such). Two
histories: the demo's week as that thermlog wrote it (fixtures/db/demo-schema10.db.xz) and a
year of store-wear's simulated board written by lib/oldyear.c in that thermlog's layout. The
commands are commands() below, over fixed windows read from the history (nothing depends on
the day it runs), with the capacitor configuration CAPACITOR, TZ=UTC and LC_ALL=C, on a file
named demo.db in the working directory (the report names its database). The chunked store
added no key to these answers: every answer is compared whole.

usage: test-convert-answers.py THERMLOG SOURCE ANSWERS [SOURCE ANSWERS]...
       test-convert-answers.py --write OLD_THERMLOG SOURCE ANSWERS
         (SOURCE: a FILE.db.xz, or the oldyear generator; --write: ANSWERS made with the
         previous thermlog on the unconverted history)
"""
import difflib
import hashlib
import lzma
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from thermlog_test import Workdir, main  # noqa: E402

CAPACITOR = ("capacitors:\n  - name: C12\n    sensor: iio/maxim_thermocouple/temp\n"
             "    rated_life_h: 2000\n    rated_temp_c: 105\n    self_heating: {rise_k: 3}\n")
WHOLE = 16384  # answers up to this length are stored whole
ENV = dict(os.environ, TZ="UTC", LC_ALL="C")
YEAR_DAYS = 365  # the generated history's days


def commands(window, inner, runs):
    """(name, arguments, files it writes) of every answer compared: @window is
    ["--from", F, "--to", T] covering the history, @inner one inside it that starts and ends
    within a day and an hour, @runs the run ids shown one by one."""
    cmds = [("stats.json", ["stats", "--json"] + window, []),
            ("stats-time.json", ["stats", "--json", "--weight", "time"] + window, []),
            ("stats-inner.json", ["stats", "--json"] + inner, []),
            ("stats-time-inner.json", ["stats", "--json", "--weight", "time"] + inner, []),
            ("lifetime.json", ["lifetime", "--json"] + window, []),
            ("lifetime-inner.json", ["lifetime", "--json"] + inner, []),
            ("export.csv", ["export"] + window, []),
            ("export-wide.csv", ["export", "--format", "wide"] + window, []),
            ("peak.json", ["peak", "--channel", "thermal/soc-thermal", "--json"] + window, []),
            ("throttle.json", ["throttle", "--json"] + window, []),
            ("channels.json", ["channels", "--json"], []),
            ("runs.json", ["runs", "--json"], []),
            ("runs-stats.json", ["runs", "stats", "--json"], []),
            ("report.md", ["report", "-o", "report.md"] + window,
             ["report.md", "report-peak.svg"]),
            ("report.html", ["report", "--lifetime", "-o", "report.html"] + window,
             ["report.html"])]
    cmds += [("runs-show-%d.json" % i, ["runs", "show", str(i), "--json"], []) for i in runs]
    return cmds


def history(db):
    """Where @db's answers are asked, read from the old layout's own tables: the window
    covering its cycles, a window inside it (from 3/8 to 5/8 of it, neither on a day's nor an
    hour's edge) and a few run ids (the first, the fifth, one in the middle, the last and the
    first with fast samples)."""
    con = sqlite3.connect("file:%s?mode=ro" % db, uri=True)
    try:
        first, last = con.execute("SELECT min(ts), max(ts) FROM cycles").fetchone()
        ids = [r[0] for r in con.execute("SELECT id FROM runs ORDER BY id")]
        fast = con.execute("SELECT id FROM runs WHERE end_ms >= (SELECT min(ts_ms) FROM "
                           "run_samples) ORDER BY start_ms LIMIT 1").fetchone()
    finally:
        con.close()
    picked = sorted(set(ids[:1] + ids[4:5] + ids[len(ids) // 2:len(ids) // 2 + 1] + ids[-1:] +
                        ([fast[0]] if fast else [])))
    span = last + 1 - first
    inner = [first + span * 3 // 8 + 1817, first + span * 5 // 8 + 1823]
    return (["--from", str(first), "--to", str(last + 1)],
            ["--from", str(inner[0]), "--to", str(inner[1])], picked)


def content(db):
    """sha256 of every row of every table of @db, tables by name, rows in their key's order:
    the history the answers are asked of, whatever its pages."""
    h = hashlib.sha256()
    con = sqlite3.connect("file:%s?mode=ro" % db, uri=True)
    try:
        for (name,) in con.execute("SELECT name FROM sqlite_schema WHERE type = 'table' "
                                   "ORDER BY name").fetchall():
            h.update(name.encode())
            for row in con.execute('SELECT * FROM "%s"' % name):
                h.update(repr(row).encode())
    finally:
        con.close()
    return h.hexdigest()


def answer(thermlog, wd, args, files):
    """One command run in @wd on demo.db: its exit status, {name: (length, sha256, the bytes
    when WHOLE or fewer)} of its standard output (name None) or of the files it writes
    (@files), and what it printed on standard error."""
    for f in files:
        if os.path.exists(os.path.join(wd, f)):
            os.unlink(os.path.join(wd, f))
    with tempfile.TemporaryFile() as err:
        p = subprocess.Popen([os.path.abspath(thermlog), "-c", "cap.yaml", "--db", "demo.db"] +
                             args, cwd=wd, stdout=subprocess.PIPE, stderr=err, env=ENV)
        out = {None: digest(p.stdout)} if not files else {}
        rc = p.wait(timeout=300)
        err.seek(0)
        said = err.read().decode(errors="replace")
    for f in files:
        path = os.path.join(wd, f)
        with open(path if os.path.exists(path) else os.devnull, "rb") as g:
            out[f] = digest(g)
    return rc, out, said


def digest(stream):
    """(length, sha256, the bytes if WHOLE or fewer) of what @stream holds, read in pieces (an
    export of the year is 180 MB)."""
    h, n, head = hashlib.sha256(), 0, b""
    for piece in iter(lambda: stream.read(1 << 20), b""):
        h.update(piece)
        n += len(piece)
        head = head + piece if len(head) <= WHOLE else head
    return n, h.hexdigest(), head if n <= WHOLE else None


def all_answers(thermlog, wd, where):
    """name -> (exit status, length, sha256, bytes or None) of every answer, and the errors."""
    got, errors = {}, []
    for name, args, files in commands(*where):
        rc, out, said = answer(thermlog, wd, args, files)
        for f, (n, sha, data) in out.items():
            got[f or name] = (rc, n, sha, data)
        if rc != 0:
            errors.append("%s: exit %d: %s" % (" ".join(args), rc, said))
    return got, errors


def unpack(source, wd):
    """The old history in @wd/demo.db: @source decompressed, or written by @source (the
    generator of store-wear's year, tests/lib/oldyear.c)."""
    db = os.path.join(wd, "demo.db")
    if source.endswith(".xz"):
        with lzma.open(source) as src, open(db, "wb") as dst:
            shutil.copyfileobj(src, dst)
    else:
        p = subprocess.run([source, db, str(YEAR_DAYS)], capture_output=True, text=True,
                           timeout=300)
        if p.returncode != 0:
            raise RuntimeError("%s: exit %d: %s" % (source, p.returncode, p.stderr))
    with open(os.path.join(wd, "cap.yaml"), "w") as f:
        f.write(CAPACITOR)
    return db


def read_answers(answers):
    """(name -> (exit status, length, sha256), the old history's content sha256)."""
    want, history_sha = {}, None
    with open(os.path.join(answers, "answers.txt")) as f:
        for line in f:
            if line.startswith("# content "):
                history_sha = line.split()[2]
            if line.startswith("#") or not line.strip():
                continue
            name, rc, n, sha = line.split()
            want[name] = (int(rc), int(n), sha)
    return want, history_sha


def write(old_thermlog, source, answers):
    """The previous thermlog's answers on the unconverted history, into @answers."""
    with Workdir("thermlog-answers.") as wd:
        db = unpack(source, wd)
        where = history(db)
        got, errors = all_answers(old_thermlog, wd, where)
        if errors:
            sys.exit("\n".join(errors))
        os.makedirs(answers, exist_ok=True)
        with open(os.path.join(answers, "answers.txt"), "w") as f:
            f.write("# name, exit status, bytes, sha256: thermlog 73bc76c on %s\n"
                    "# window %s, inner %s, runs shown %s\n# content %s\n" %
                    (os.path.basename(source), " ".join(where[0]), " ".join(where[1]),
                     " ".join(map(str, where[2])) or "none", content(db)))
            for name in sorted(got):
                rc, n, sha, data = got[name]
                f.write("%s %d %d %s\n" % (name, rc, n, sha))
                if data is not None:
                    with open(os.path.join(answers, name), "wb") as g:
                        g.write(data)


def difference(answers, name, data):
    """The first lines where @data differs from the stored whole answer, if stored."""
    path = os.path.join(answers, name)
    if data is None or not os.path.exists(path):
        return "(not stored whole)"
    old = open(path, "rb").read().decode(errors="replace").splitlines()
    new = data.decode(errors="replace").splitlines()
    return "\n".join(list(difflib.unified_diff(old, new, "before", "converted", lineterm=""))[:40])


def check(thermlog, source, answers, tap):
    want, history_sha = read_answers(answers)
    what = os.path.basename(source)
    with Workdir("thermlog-convert-answers.") as wd:
        db = unpack(source, wd)
        tap.ok(content(db) == history_sha, "%s: the history the answers were made on" % what)
        where = history(db)
        p = subprocess.run([thermlog, "--db", db, "repair", "--migrate"], capture_output=True,
                           text=True, timeout=300, env=ENV)
        con = sqlite3.connect("file:%s?mode=ro" % db, uri=True)
        left = con.execute("SELECT count(*) FROM sqlite_schema WHERE name = 'cycles'") \
            .fetchone()[0]
        con.close()
        tap.ok(p.returncode == 0 and "current format" in p.stdout and not left,
               "%s: repair --migrate converts it" % what, p.stdout + p.stderr)
        got, errors = all_answers(thermlog, wd, where)
        tap.ok(sorted(got) == sorted(want), "%s: %d answers, as stored" % (what, len(want)),
               "stored %s\nmade %s" % (sorted(want), sorted(got)))
        for name in sorted(want):
            rc, n, sha, data = got.get(name, (None, 0, None, None))
            tap.ok((rc, n, sha) == want[name], "%s: %s byte for byte the previous thermlog's "
                   "(%d bytes)" % (what, name, want[name][1]), "before: exit %d, %d bytes, %s\n"
                   "now: exit %s, %d bytes, %s\n%s" %
                   (want[name] + (rc, n, sha, difference(answers, name, data))))


def run(tap):
    if sys.argv[1] == "--write":
        write(*sys.argv[2:5])
        return
    for k in range(2, len(sys.argv), 2):
        check(sys.argv[1], sys.argv[k], sys.argv[k + 1], tap)


main(run)
