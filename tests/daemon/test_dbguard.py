#!/usr/bin/python3
"""The database guards: another program's SQLite file is refused untouched, a second daemon on
one database is refused, and start-up errors name the true cause (permission, no space)."""
import glob
import os
import sqlite3
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from thermlog_test import Daemon, Workdir, check_database, copy_fixture, cycles, main, wait_cycles, \
    write_config

NOBODY = 65534


def file_bytes(path):
    with open(path, "rb") as f:
        return f.read()


def run(tap):
    exe, fixture = sys.argv[1], sys.argv[2]
    with Workdir("thermlog-guard.") as wd:
        os.chmod(wd, 0o755)
        root = copy_fixture(fixture, os.path.join(wd, "sysfs"))
        cfg = write_config(os.path.join(wd, "t.yaml"))
        thermlog = os.path.join(os.path.dirname(exe), "thermlog")
        csv = os.path.join(wd, "in.csv")
        with open(csv, "w") as f:
            f.write("ts,key,value\n1700000000,thermal/x/temp,41.5\n")

        def daemon(db, name, user=None):
            args = ["-c", cfg, "--sysfs-root", root, "--db", db, "--listen", "127.0.0.1:0"]
            d = Daemon(exe, wd, args, name=name)
            if user:
                d.exe = "setpriv"
                d.args = ["--reuid=%d" % user, "--regid=%d" % user, "--clear-groups", exe] + args
            return d.start()

        # Another program's SQLite databases: refused, never renamed or changed.
        for app_id, version in ((0, 0), (0, 5), (1234, 0)):
            name = "other-%d-%d" % (app_id, version)
            db = os.path.join(wd, name + ".db")
            con = sqlite3.connect(db)
            con.execute("CREATE TABLE contacts (name TEXT, phone TEXT)")
            con.execute("INSERT INTO contacts VALUES ('a', '1')")
            con.execute("PRAGMA application_id = %d" % app_id)
            con.execute("PRAGMA user_version = %d" % version)
            con.commit()
            con.close()
            before = file_bytes(db)
            d = daemon(db, name)
            rc = d.wait_exit(30)
            log = d.log_text()
            tap.ok(rc == 1, "%s: exit 1 (got %r)" % (name, rc), log)
            tap.ok("not a thermlog database" in log and "CORRUPT" not in log,
                   "%s: says it is another program's database, not corrupt" % name, log)
            tap.ok(os.path.exists(db) and file_bytes(db) == before and
                   not glob.glob(db + ".corrupt*") and not glob.glob(db + "-*"),
                   "%s: left untouched where it was" % name)

        # Another program's database with its WAL left behind (it crashed, or was copied while
        # open): refused without checkpointing that WAL into it or deleting it.
        src = os.path.join(wd, "other-wal-src.db")
        con = sqlite3.connect(src)
        con.execute("PRAGMA journal_mode = WAL")
        con.execute("CREATE TABLE contacts (name TEXT, phone TEXT)")
        con.execute("INSERT INTO contacts VALUES ('a', '1')")
        con.commit()
        db = os.path.join(wd, "other-wal.db")
        with open(db, "wb") as f:
            f.write(file_bytes(src))
        with open(db + "-wal", "wb") as f:
            f.write(file_bytes(src + "-wal"))
        con.close()
        before = (file_bytes(db), file_bytes(db + "-wal"))
        d = daemon(db, "other-wal")
        rc = d.wait_exit(30)
        log = d.log_text()
        tap.ok(rc == 1 and "not a thermlog database" in log,
               "another program's database with a WAL: refused (exit %r)" % rc, log)
        tap.ok(os.path.exists(db + "-wal") and
               (file_bytes(db), file_bytes(db + "-wal")) == before and
               not os.path.exists(db + "-shm"),
               "its file and WAL left untouched, no -shm left behind",
               sorted(os.path.basename(p) for p in glob.glob(db + "*")))

        # A FIFO at the path: refused at once (opening it for reading would wait for a writer
        # with SIGTERM blocked, so the daemon hung at start and could only be killed).
        db = os.path.join(wd, "fifo.db")
        os.mkfifo(db)
        d = daemon(db, "fifo")
        rc = d.wait_exit(10)
        if rc is None:
            d.kill9()
        log = d.log_text()
        tap.ok(rc == 1 and "not an SQLite database" in log,
               "a FIFO as the database: refused (exit %r)" % rc, log)

        # A corrupt thermlog database is moved aside; a second one in the same second too,
        # without overwriting the first.
        db = os.path.join(wd, "t.db")
        asides = []
        for i in range(2):
            d = daemon(db, "good%d" % i)
            wait_cycles(db, len(cycles(db)) + 2, 20, d)
            d.stop()
            size = os.path.getsize(db)
            with open(db, "r+b") as f:
                f.seek(100)
                f.write(b"\xde\xad\xbe\xef" * ((size - 100) // 4))
            taken = []
            if i:
                # The names of the next seconds are taken: none of them may be overwritten.
                now = time.time()
                for t in range(int(now), int(now) + 30):
                    name = db + time.strftime(".corrupt-%Y%m%dT%H%M%SZ", time.gmtime(t))
                    with open(name, "w") as f:
                        f.write("earlier\n")
                    taken.append(name)
            d = daemon(db, "corrupt%d" % i)
            wait_cycles(db, 2, 30, d)
            tap.ok("DATABASE CORRUPT" in d.log_text(), "a corrupt thermlog database is called "
                   "corrupt (%d)" % i, d.log_text())
            d.stop()
            asides = [a for a in glob.glob(db + ".corrupt-*") if not a.endswith("-wal")]
            tap.ok(all(file_bytes(t) == b"earlier\n" for t in taken),
                   "no earlier moved-aside file is overwritten (%d)" % i)
        tap.ok(len(asides) == 32, "every corrupt file keeps its own name: %d" % len(asides))

        # Two daemons on one database: the second is refused, the first keeps running.
        db = os.path.join(wd, "shared.db")
        first = daemon(db, "first")
        wait_cycles(db, 2, 20, first)
        second = daemon(db, "second")
        rc = second.wait_exit(30)
        log = second.log_text()
        tap.ok(rc == 1, "a second daemon on the same database: exit 1 (got %r)" % rc, log)
        tap.ok("already in use" in log and "pid %d" % first.proc.pid in log,
               "with a message naming the running daemon", log)
        # The same file by another name (a symlink, a hard link) is the same database.
        os.symlink(db, os.path.join(wd, "shared-link.db"))
        os.link(db, os.path.join(wd, "shared-hard.db"))
        for alias in ("shared-link.db", "shared-hard.db"):
            other = daemon(os.path.join(wd, alias), alias)
            rc = other.wait_exit(10)
            if rc is None:
                other.stop()
            log = other.log_text()
            tap.ok(rc == 1 and "already in use" in log,
                   "a second daemon through %s: refused (exit %r)" % (alias, rc), log)
        n = len(cycles(db))
        wait_cycles(db, n + 2, 20, first)
        tap.ok(first.alive() and len(cycles(db)) >= n + 2, "the first keeps sampling")
        first.stop()
        ok, detail = check_database(db)
        tap.ok(ok, "and the database is whole", detail)
        # After a clean stop (or a crash) the lock is free again.
        again = daemon(db, "after")
        c = wait_cycles(db, len(cycles(db)) + 1, 20, again)
        tap.ok(again.alive(), "the lock is released when the first stops", again.log_text())
        again.kill9()
        again = daemon(db, "after-kill")
        wait_cycles(db, len(cycles(db)) + 1, 20, again)
        tap.ok(again.alive(), "and after a kill -9", again.log_text())
        again.stop()

        # A directory the daemon may not write: permission denied.
        locked = os.path.join(wd, "locked")
        os.mkdir(locked, 0o555)
        d = daemon(os.path.join(locked, "t.db"), "locked", user=NOBODY)
        rc = d.wait_exit(30)
        log = d.log_text()
        tap.ok(rc == 1, "a database in a directory the daemon may not write: exit 1 (got %r)" %
               rc, log)
        tap.ok("Permission denied" in log and "No such file" not in log,
               "says permission denied", log)
        r = subprocess.run(["setpriv", "--reuid=%d" % NOBODY, "--regid=%d" % NOBODY,
                            "--clear-groups", thermlog, "--db", os.path.join(locked, "t.db"),
                            "import", csv], capture_output=True, text=True)
        tap.ok(r.returncode == 1 and "Permission denied" in r.stderr and
               "No such file" not in r.stderr, "so does thermlog import", r.stderr)

        # A full file system: no space.
        mnt = os.path.join(wd, "mnt")
        os.mkdir(mnt)
        r = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=256k", "tmpfs", mnt],
                           capture_output=True, text=True)
        if tap.ok(r.returncode == 0, "a small tmpfs in a private mount namespace", r.stderr):
            try:
                with open(os.path.join(mnt, "filler"), "wb", buffering=0) as f:
                    try:
                        while True:
                            f.write(b"\0" * 4096)
                    except OSError:
                        pass
                d = daemon(os.path.join(mnt, "t.db"), "full")
                rc = d.wait_exit(30)
                log = d.log_text()
                tap.ok(rc == 1, "a new database on a full file system: exit 1 (got %r)" % rc,
                       log)
                tap.ok("No space left on device" in log and "Input/output error" not in log,
                       "says no space", log)
                r = subprocess.run([thermlog, "--db", os.path.join(mnt, "i.db"), "import", csv],
                                   capture_output=True, text=True)
                tap.ok(r.returncode == 1 and ("No space left on device" in r.stderr or
                                              "disk is full" in r.stderr) and
                       "Input/output error" not in r.stderr, "so does thermlog import",
                       r.stderr)
            finally:
                subprocess.run(["umount", "-l", mnt])


if os.environ.get("THERMLOG_IN_NS") != "1":
    env = dict(os.environ, THERMLOG_IN_NS="1")
    os.execvpe("unshare", ["unshare", "-m", "--propagation", "private", sys.executable,
                           os.path.abspath(__file__)] + sys.argv[1:], env)
main(run)
