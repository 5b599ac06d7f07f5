#!/usr/bin/python3
"""Databases that are not SQLite, corrupt, read-only or newer: a clear error at start."""
import glob
import os
import sqlite3
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from thermlog_test import Daemon, Workdir, check_database, copy_fixture, cycles, main, wait_cycles, \
    write_config


def run(tap):
    exe, fixture = sys.argv[1], sys.argv[2]
    with Workdir("thermlog-baddb.") as wd:
        root = copy_fixture(fixture, os.path.join(wd, "sysfs"))
        cfg = write_config(os.path.join(wd, "t.yaml"))

        def daemon(db, name, env=None, user=None):
            args = ["-c", cfg, "--sysfs-root", root, "--db", db, "--listen", "127.0.0.1:0"]
            d = Daemon(exe, wd, args, env=env, name=name)
            if user:
                d.exe = "setpriv"
                d.args = ["--reuid=%d" % user, "--regid=%d" % user, "--clear-groups", exe] + args
            return d.start()

        # Not SQLite: refused, left untouched.
        db = os.path.join(wd, "notes.db")
        text = b"these are my notes, not a database\n" * 100
        with open(db, "wb") as f:
            f.write(text)
        d = daemon(db, "foreign")
        rc = d.wait_exit(30)
        tap.ok(rc == 1, "a file that is not SQLite: exit 1 (got %r)" % rc, d.log_text())
        tap.ok("is not an SQLite database" in d.log_text(), "with a clear error", d.log_text())
        with open(db, "rb") as f:
            tap.ok(f.read() == text, "and the file is left as it was")

        # A good database, then corrupted: moved aside, a fresh one started.
        db = os.path.join(wd, "t.db")
        d = daemon(db, "good")
        wait_cycles(db, 3, 20, d)
        tap.ok(d.stop() == 0, "a database with a few cycles")
        size = os.path.getsize(db)
        with open(db, "r+b") as f:
            # Keep the header (so it is recognisably SQLite); smash the pages behind it.
            f.seek(100)
            f.write(b"\xde\xad\xbe\xef" * ((size - 100) // 4))
        d = daemon(db, "corrupt")
        c = wait_cycles(db, 2, 30, d)
        log = d.log_text()
        aside = glob.glob(db + ".corrupt-*")
        tap.ok(d.alive() and len(c) >= 2, "a corrupt database: the daemon starts fresh", log)
        tap.ok("DATABASE CORRUPT" in log and "moved it to" in log, "loudly", log)
        tap.ok(len([a for a in aside if not a.endswith("-wal")]) == 1,
               "the corrupt file is kept under a timestamped name: %s" % aside)
        tap.ok(d.stop() == 0, "and stops cleanly")
        ok, detail = check_database(db)
        tap.ok(ok, "the fresh database is whole", detail)

        # Newer schema version: refused.
        con = sqlite3.connect(db)
        con.execute("PRAGMA user_version = 9999")
        con.commit()
        con.close()
        d = daemon(db, "newer")
        rc = d.wait_exit(30)
        tap.ok(rc == 1, "a database from a newer version: exit 1 (got %r)" % rc, d.log_text())
        tap.ok("newer" in d.log_text(), "with a clear error", d.log_text())
        con = sqlite3.connect(db)
        tap.ok(con.execute("PRAGMA user_version").fetchone()[0] == 9999, "and it is not touched")
        con.close()

        # Read-only: the daemon runs as an unprivileged user that may read but not write.
        ro = os.path.join(wd, "ro")
        os.mkdir(ro)
        db = os.path.join(ro, "t.db")
        d = daemon(db, "seed")
        wait_cycles(db, 2, 20, d)
        d.stop()
        os.chmod(ro, 0o755)
        os.chmod(db, 0o644)
        os.chmod(wd, 0o755)
        nobody = 65534
        d = daemon(db, "readonly", user=nobody)
        rc = d.wait_exit(30)
        tap.ok(rc == 1, "a read-only database: exit 1 (got %r)" % rc, d.log_text())
        tap.ok("cannot be written" in d.log_text() or "read-only" in d.log_text(),
               "with a clear error", d.log_text())


main(run)
