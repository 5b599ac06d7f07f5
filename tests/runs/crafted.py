#!/usr/bin/env python3
"""A database that is not this thermlog's, with the right application_id and user_version:
`runs stats --db` and `runs compare` refuse it with an error naming the file and the problem,
never crash, and in bounded time. Crafted: a view `runs` with a NULL status, a recursive
view, a view building a huge string per row, a trigger, a column of the wrong type.

usage: crafted.py THERMLOG SQL_DIR
"""
import glob
import os
import sqlite3
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from thermlog_test import Workdir, main  # noqa: E402

THERMLOG, SQL = sys.argv[1], sys.argv[2]
COLS = ("id, label, tags, start_ms, end_ms, status, exit_code, signal, pid, boot, origin, "
        "import_key, energy_j, energy_method, energy_coverage, temp_max_c, rss_max_bytes, "
        "start_snapshot, figures, fingerprint, error")


def make_db(path, craft=None):
    """The built-in schema, the identity pragmas, one ok run; then @craft's SQL."""
    db = sqlite3.connect(path)
    migrations = sorted(glob.glob(os.path.join(SQL, "0*.sql")))
    for m in migrations:
        with open(m) as f:
            db.executescript(f.read())
    db.execute("PRAGMA user_version = %d" % len(migrations))
    db.execute("PRAGMA application_id = %d" % 0x54484c47)
    db.execute("INSERT INTO runs (label, start_ms, end_ms, status, origin) "
               "VALUES ('job', 1000, 2000, 'ok', 'import')")
    db.commit()
    if craft:
        db.executescript(craft)
        db.commit()
    db.close()
    return path


VIEW = "DROP TABLE runs; CREATE VIEW runs (%s) AS %s;"
CRAFTS = {
    "a view runs with a NULL status": VIEW % (
        COLS, "SELECT 1, 'job', '{}', 1000, 2000, NULL, 0, 0, 0, NULL, 'import', NULL, NULL, "
              "NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL"),
    "a recursive view": VIEW % (
        COLS, "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n) "
              "SELECT i, 'job', '{}', i, i + 1, 'ok', 0, 0, 0, NULL, 'import', NULL, NULL, "
              "NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL FROM n"),
    "a view of huge strings": VIEW % (
        COLS, "SELECT 1, 'job', '{}', 1000, 2000, 'ok', 0, 0, 0, NULL, 'import', NULL, NULL, "
              "NULL, NULL, NULL, NULL, NULL, hex(zeroblob(450000000)), NULL, NULL"),
    "a trigger": "CREATE TRIGGER t AFTER INSERT ON runs BEGIN DELETE FROM runs; END;",
    "a column of the wrong type": (
        "ALTER TABLE runs RENAME TO old_runs; CREATE TABLE runs (id INTEGER PRIMARY KEY, "
        "label TEXT NOT NULL, tags TEXT NOT NULL DEFAULT '{}', start_ms INTEGER NOT NULL, "
        "end_ms INTEGER, status INTEGER, exit_code INTEGER, signal INTEGER, pid INTEGER, "
        "boot INTEGER, origin TEXT NOT NULL, import_key TEXT UNIQUE, energy_j REAL, "
        "energy_method TEXT, energy_coverage REAL, temp_max_c REAL, rss_max_bytes INTEGER, "
        "start_snapshot TEXT, figures TEXT, fingerprint TEXT, error TEXT);"
        "INSERT INTO runs SELECT * FROM old_runs; DROP TABLE old_runs;"
        "CREATE INDEX runs_start ON runs (start_ms);"
        "CREATE INDEX runs_label_start ON runs (label, start_ms);"),
}


def cli(cfg, *args):
    t0 = time.monotonic()
    try:
        p = subprocess.run([THERMLOG, "-c", cfg, *args], capture_output=True, text=True,
                           timeout=60)
        return p.returncode, p.stderr, time.monotonic() - t0
    except subprocess.TimeoutExpired:
        return None, "timed out after 60 s", time.monotonic() - t0


def run(tap):
    with Workdir("thermlog-crafted.") as wd:
        cfg = os.path.join(wd, "empty.yaml")
        open(cfg, "w").close()
        good = make_db(os.path.join(wd, "good.db"))
        rc, err, _ = cli(cfg, "--db", good, "runs", "stats")
        tap.ok(rc == 0, "the built-in schema made here is accepted", err)
        for i, (what, sql) in enumerate(CRAFTS.items()):
            bad = make_db(os.path.join(wd, "bad%d.db" % i), sql)
            for cmd in (["--db", bad, "runs", "stats"],
                        ["--db", good, "runs", "compare", "--label", "job", bad]):
                rc, err, secs = cli(cfg, *cmd)
                tap.ok(rc is not None and rc > 0 and bad in err and "schema" in err
                       and secs < 30,
                       "%s: %s refused, naming the file and the schema (%.1f s)" %
                       (what, " ".join(cmd[2:4]), secs),
                       "exit %s: %s" % (rc, err))

        # A blob in the text column error (a crafted file): refused, not printed.
        bad = make_db(os.path.join(wd, "error-int.db"), (
            # runs is STRICT: only a schema text without it lets a blob in (the columns,
            # which the reader compares, stay the same).
            "PRAGMA writable_schema = ON; "
            "UPDATE sqlite_schema SET sql = replace(sql, ') STRICT', ')') WHERE name = 'runs'; "
            "PRAGMA writable_schema = RESET; "
            "UPDATE runs SET error = x'4142';"))
        for cmd in (["--db", bad, "runs", "--json"], ["--db", bad, "runs", "show", "1"]):
            rc, err, _ = cli(cfg, *cmd)
            tap.ok(rc is not None and rc > 0 and "run 1" in err and "text column" in err,
                   "an error that is a blob: %s refused" % " ".join(cmd[2:]),
                   "exit %s: %s" % (rc, err))

        # A file of schema 5 (before runs.error): the reader sends it to thermlogd.
        old = make_db(os.path.join(wd, "schema5.db"))
        db = sqlite3.connect(old)
        db.executescript("ALTER TABLE runs DROP COLUMN error; PRAGMA user_version = 5;")
        db.close()
        rc, err, _ = cli(cfg, "--db", good, "runs", "compare", "--label", "job", old)
        tap.ok(rc is not None and rc > 0 and old in err and "older than this thermlog's" in err
               and "thermlogd migrates it" in err,
               "runs compare of a schema-5 file: sent to thermlogd to migrate",
               "exit %s: %s" % (rc, err))


main(run)
