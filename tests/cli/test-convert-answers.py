#!/usr/bin/python3
"""A database the previous thermlog wrote, converted by `thermlog repair --migrate`, answers
as the previous thermlog answered on it before the conversion, byte for byte (TAP).

The previous thermlog is the one whose store was at schema 10, the last before the chunks
(commit 73bc76c); the current one refuses such a file for reading until it is converted, so
its answers were made once with it and stored: FIXTURE's answers, ANSWERS/answers.txt (one
line an answer: its name, the exit status, its length in bytes and its sha256; an answer of
16 KiB or less is also stored whole beside it, for the difference shown on failure). The
commands are COMMANDS below, run over a fixed window covering the whole history (nothing
depends on the day it runs), with the capacitor configuration CAPACITOR, TZ=UTC and LC_ALL=C,
on a file named demo.db in the working directory (the report names its database).
No key was added to these answers by the chunked store: every answer is compared whole.

usage: test-convert-answers.py THERMLOG FIXTURE.db.xz ANSWERS
       test-convert-answers.py --write OLD_THERMLOG FIXTURE.db.xz ANSWERS
         (--write: ANSWERS made with the previous thermlog on the unconverted fixture)
"""
import difflib
import hashlib
import lzma
import os
import shutil
import sqlite3
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from thermlog_test import Workdir, main  # noqa: E402

CAPACITOR = ("capacitors:\n  - name: C12\n    sensor: iio/maxim_thermocouple/temp\n"
             "    rated_life_h: 2000\n    rated_temp_c: 105\n    self_heating: {rise_k: 3}\n")
WHOLE = 16384  # answers up to this length are stored whole
ENV = dict(os.environ, TZ="UTC", LC_ALL="C")


def commands(window, runs):
    """(name, arguments, files it writes) of every answer compared: @window is
    ["--from", F, "--to", T], @runs the run ids shown one by one."""
    cmds = [("stats.json", ["stats", "--json"] + window, []),
            ("stats-time.json", ["stats", "--json", "--weight", "time"] + window, []),
            ("lifetime.json", ["lifetime", "--json"] + window, []),
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
    """The window covering @db's cycles and a few run ids (the first, the fifth, one in the
    middle, the last and the first with fast samples), read from the old layout's own tables."""
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
    return ["--from", str(first), "--to", str(last + 1)], picked


def answer(thermlog, wd, args, files):
    """{file name: (exit status, bytes)} of one command run in @wd on demo.db: its standard
    output under its own name (@files empty) or the files it writes."""
    for f in files:
        if os.path.exists(os.path.join(wd, f)):
            os.unlink(os.path.join(wd, f))
    p = subprocess.run([os.path.abspath(thermlog), "-c", "cap.yaml", "--db", "demo.db"] + args, cwd=wd,
                       capture_output=True, timeout=300, env=ENV)
    if not files:
        return p.returncode, {None: p.stdout}, p.stderr
    out = {}
    for f in files:
        path = os.path.join(wd, f)
        out[f] = open(path, "rb").read() if os.path.exists(path) else b""
    return p.returncode, out, p.stderr


def all_answers(thermlog, wd, window, runs):
    """name -> (exit status, bytes) of every answer, and the errors printed."""
    got, errors = {}, []
    for name, args, files in commands(window, runs):
        rc, out, err = answer(thermlog, wd, args, files)
        for f, data in out.items():
            got[f or name] = (rc, data)
        if rc != 0:
            errors.append("%s: exit %d: %s" % (" ".join(args), rc, err.decode(errors="replace")))
    return got, errors


def unpack(fixture, wd):
    with lzma.open(fixture) as src, open(os.path.join(wd, "demo.db"), "wb") as dst:
        shutil.copyfileobj(src, dst)
    with open(os.path.join(wd, "cap.yaml"), "w") as f:
        f.write(CAPACITOR)
    return os.path.join(wd, "demo.db")


def read_answers(answers):
    """name -> (exit status, length, sha256) from answers.txt."""
    want = {}
    with open(os.path.join(answers, "answers.txt")) as f:
        for line in f:
            if line.startswith("#") or not line.strip():
                continue
            name, rc, n, digest = line.split()
            want[name] = (int(rc), int(n), digest)
    return want


def write(old_thermlog, fixture, answers):
    """The previous thermlog's answers on the unconverted fixture, into @answers."""
    with Workdir("thermlog-answers.") as wd:
        window, runs = history(unpack(fixture, wd))
        got, errors = all_answers(old_thermlog, wd, window, runs)
        if errors:
            sys.exit("\n".join(errors))
        os.makedirs(answers, exist_ok=True)
        with open(os.path.join(answers, "answers.txt"), "w") as f:
            f.write("# name, exit status, bytes, sha256: thermlog 73bc76c on %s\n# window %s, "
                    "runs shown %s\n" % (os.path.basename(fixture), " ".join(window),
                                         " ".join(map(str, runs))))
            for name in sorted(got):
                rc, data = got[name]
                f.write("%s %d %d %s\n" % (name, rc, len(data), hashlib.sha256(data).hexdigest()))
                if len(data) <= WHOLE:
                    with open(os.path.join(answers, name), "wb") as g:
                        g.write(data)


def difference(answers, name, data):
    """The first lines where @data differs from the stored whole answer, if stored."""
    path = os.path.join(answers, name)
    if not os.path.exists(path):
        return "(not stored whole)"
    old = open(path, "rb").read().decode(errors="replace").splitlines()
    new = data.decode(errors="replace").splitlines()
    return "\n".join(list(difflib.unified_diff(old, new, "before", "converted", lineterm=""))[:40])


def check(thermlog, fixture, answers, tap):
    want = read_answers(answers)
    with Workdir("thermlog-convert-answers.") as wd:
        db = unpack(fixture, wd)
        window, runs = history(db)
        p = subprocess.run([thermlog, "--db", db, "repair", "--migrate"], capture_output=True,
                           text=True, timeout=300, env=ENV)
        con = sqlite3.connect("file:%s?mode=ro" % db, uri=True)
        left = con.execute("SELECT count(*) FROM sqlite_schema WHERE name = 'cycles'") \
            .fetchone()[0]
        con.close()
        tap.ok(p.returncode == 0 and "current format" in p.stdout and not left,
               "repair --migrate converts the previous thermlog's database",
               p.stdout + p.stderr)
        got, errors = all_answers(thermlog, wd, window, runs)
        tap.ok(sorted(got) == sorted(want), "%d answers, as stored" % len(want),
               "stored %s\nmade %s" % (sorted(want), sorted(got)))
        for name in sorted(want):
            rc, data = got.get(name, (None, b""))
            mine = (rc, len(data), hashlib.sha256(data).hexdigest())
            tap.ok(mine == want[name], "%s: byte for byte the previous thermlog's (%d bytes)" %
                   (name, want[name][1]), "before: exit %d, %d bytes, %s\nnow: exit %s, %d bytes, "
                   "%s\n%s" % (want[name] + mine + (difference(answers, name, data),)))


def run(tap):
    if sys.argv[1] == "--write":
        write(*sys.argv[2:5])
        return
    check(*sys.argv[1:4], tap)


main(run)
