#!/usr/bin/python3
"""SIGHUP reloads the configuration; a bad one is rejected and the daemon keeps running."""
import os
import signal
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import Daemon, Workdir, check_database, copy_fixture, cycles, main, wait_cycles, \
    wait_for, write_config


def run(tap):
    exe, fixture = sys.argv[1], sys.argv[2]
    with Workdir("thermlog-hup.") as wd:
        root = copy_fixture(fixture, os.path.join(wd, "sysfs"))
        db = os.path.join(wd, "t.db")
        cfg = write_config(os.path.join(wd, "t.yaml"), interval="1s")
        args = ["-c", cfg, "--sysfs-root", root, "--db", db, "--listen", "127.0.0.1:0"]
        d = Daemon(exe, wd, args).start()
        tap.ok(len(wait_cycles(db, 2, 20, d)) >= 2, "running at 1 s", d.log_text())

        with open(cfg, "w") as f:
            f.write("interval: 2s\nintervall: 5s\n")
        d.send(signal.SIGHUP)
        time.sleep(0.5)
        n = len(cycles(db))
        time.sleep(3)
        log = d.log_text()
        tap.ok(d.alive(), "a bad configuration does not stop the daemon")
        tap.ok("configuration rejected" in log and "keeping the running configuration" in log,
               "it is rejected and logged", log)
        tap.ok("intervall" in log, "naming the problem", log)
        tap.ok(len(cycles(db)) - n >= 2, "and the old 1 s interval stays in force")

        write_config(cfg, interval="2s")
        d.send(signal.SIGHUP)
        tap.ok(wait_for(lambda: "configuration reloaded" in d.log_text(), 10),
               "a good configuration is applied", d.log_text())
        time.sleep(0.5)
        start = cycles(db)[-1][0]
        time.sleep(5)
        after = [t for t, _ in cycles(db) if t > start]
        tap.ok(after and all(t % 2 == 0 for t in after) and
               all(b - a == 2 for a, b in zip(after, after[1:])),
               "the new 2 s interval, aligned to even seconds: %s" % after)
        tap.ok(d.stop() == 0, "SIGTERM: exit 0")
        ok, detail = check_database(db)
        tap.ok(ok, "database whole", detail)

        # --check-config on the same file, and a bad file: exit 2.
        import subprocess
        r = subprocess.run([exe, "-c", cfg, "--check-config"], capture_output=True, text=True)
        tap.ok(r.returncode == 0 and "configuration OK" in r.stdout, "--check-config: OK")
        with open(cfg, "w") as f:
            f.write("interval: 2x\n")
        r = subprocess.run([exe, "-c", cfg, "--check-config"], capture_output=True, text=True)
        tap.ok(r.returncode == 2 and "t.yaml:1" in r.stderr, "a bad file: exit 2 with its line",
               r.stderr)
        r = subprocess.run([exe, "--interval", "10"], capture_output=True, text=True)
        tap.ok(r.returncode == 2, "a bare --interval number is a usage error", r.stderr)
        r = subprocess.run([exe, "--bogus"], capture_output=True, text=True)
        tap.ok(r.returncode == 2 and "usage" in r.stderr, "an unknown flag: usage, exit 2")


main(run)
