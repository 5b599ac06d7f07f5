#!/usr/bin/python3
"""The database file is deleted, then renamed away, while the daemon runs: it notices, logs an
error, carries its history over to the configured path and writes on there, and
/api/v1/status counts the reopens."""
import json
import os
import signal
import sys
import time
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from thermlog_test import Daemon, Workdir, check_database, copy_fixture, cycles, main, \
    wait_cycles, wait_for, write_config


def status(port):
    with urllib.request.urlopen("http://127.0.0.1:%d/api/v1/status" % port, timeout=5) as r:
        return json.loads(r.read())


def run(tap):
    exe, fixture = sys.argv[1], sys.argv[2]
    with Workdir("thermlog-gone.") as wd:
        root = copy_fixture(fixture, os.path.join(wd, "sysfs"))
        db = os.path.join(wd, "t.db")
        cfg = write_config(os.path.join(wd, "t.yaml"))
        d = Daemon(exe, wd, ["-c", cfg, "--sysfs-root", root, "--db", db,
                             "--listen", "127.0.0.1:0"]).start()
        port = d.http_port()  # port 0: the kernel picked it as the daemon bound
        before = wait_cycles(db, 3, 20, d)

        # Deleted (with its WAL and shm, as rm t.db* does).
        for suffix in ("", "-wal", "-shm"):
            try:
                os.unlink(db + suffix)
            except FileNotFoundError:
                pass
        back = wait_for(lambda: os.path.exists(db) and len(cycles(db)) >= len(before) + 2, 15)
        log = d.log_text()
        tap.ok(back, "a deleted database is recreated at the configured path", log)
        tap.ok("was deleted or replaced" in log, "with an error in the log", log)
        c = cycles(db)
        tap.ok(c and c[0][0] == before[0][0],
               "the history written before carries over (first cycle %s)" % (c[:1],))
        st = status(port)
        tap.ok(st.get("database_reopens") == 1 and st.get("database_reopened_at"),
               "/api/v1/status reports the reopen: %s" %
               {k: st.get(k) for k in ("database_reopens", "database_reopened_at")})

        # Renamed away: the configured path is what counts.
        n = len(cycles(db))
        os.rename(db, db + ".old")
        back = wait_for(lambda: os.path.exists(db) and len(cycles(db)) >= n + 2, 15)
        tap.ok(back, "a renamed database is reopened at the configured path", d.log_text())
        st = status(port)
        tap.ok(st.get("database_reopens") == 2, "counted: %s" % st.get("database_reopens"))
        tap.ok(d.alive(), "the daemon keeps running")

        # The whole directory emptied (the lock file too): the daemon recreates the database
        # and takes the lock again, so a second daemon on it is refused.
        n = len(cycles(db))
        for name in os.listdir(wd):
            if name.startswith("t.db"):
                os.unlink(os.path.join(wd, name))
        back = wait_for(lambda: os.path.exists(db) and len(cycles(db)) >= n + 2, 15)
        tap.ok(back and os.path.exists(db + ".lock"),
               "an emptied directory gets the database and its lock file back", d.log_text())
        second = Daemon(exe, wd, ["-c", cfg, "--sysfs-root", root, "--db", db,
                                  "--listen", "127.0.0.1:0"], name="second").start()
        refused = wait_for(lambda: not second.alive(), 15)
        tap.ok(refused and second.stop() != 0 and "already in use by another thermlogd"
               in second.log_text(), "a second daemon on it is refused", second.log_text())
        second.stop(signal.SIGKILL)
        tap.ok(d.alive(), "the first one goes on")
        tap.ok(d.stop() == 0, "clean stop")
        ok, detail = check_database(db)
        tap.ok(ok, "the database at the configured path is whole", detail)


main(run)
