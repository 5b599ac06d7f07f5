#!/usr/bin/python3
"""A live reading finer than an imported history refines it off the cycle, in batches.

Sixty days of soc-thermal imported at whole degrees (`thermlog import`), then thermlogd on the
rock5c tree, which reads that zone in millidegrees: the first cycle rescales only its own day,
the daemon rewrites the older rows a batch a cycle (the table rescales empties), and the
imported values read in millidegrees all along, as `thermlog export` shows before and after.

usage: test_refine.py THERMLOGD THERMLOG FIXTURE
"""
import os
import sqlite3
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from thermlog_test import Daemon, Workdir, channel_ids, copy_fixture, main, samples, wait_for, \
    write_config

DAYS = 60
KEY = "thermal/soc-thermal"


def pending(db):
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        return con.execute("SELECT count(*) FROM rescales").fetchone()[0]
    finally:
        con.close()


def resolution(db):
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        return con.execute("SELECT resolution FROM channels WHERE key = ?", (KEY,)).fetchone()[0]
    finally:
        con.close()


def run(tap):
    thermlogd, thermlog, fixture = sys.argv[1:4]
    with Workdir("thermlog-refine.") as wd:
        db = os.path.join(wd, "t.db")
        csv = os.path.join(wd, "history.csv")
        end = int(time.time()) // 86400 * 86400 - 86400  # the day before yesterday's end
        with open(csv, "w") as f:
            f.write("unix,channel,value,unit\n")
            for i in range(DAYS * 24 * 12):  # every 5 minutes
                f.write(f"{end - DAYS * 86400 + 300 * i},{KEY},{40 + i % 9},celsius\n")
        p = subprocess.run([thermlog, "--db", db, "import", csv], capture_output=True,
                           text=True)
        tap.ok(p.returncode == 0, "sixty days imported at whole degrees", p.stderr)

        def export_values():
            out = subprocess.run([thermlog, "--db", db, "export", "--channel", KEY, "--to",
                                  str(end)], capture_output=True, text=True).stdout
            return [line.split(",")[3] for line in out.splitlines()[1:]]

        want = export_values()
        root = copy_fixture(fixture, os.path.join(wd, "sysfs"))
        cfg = write_config(os.path.join(wd, "t.yaml"))
        d = Daemon(thermlogd, wd, ["-c", cfg, "--sysfs-root", root, "--db", db,
                                   "--listen", "127.0.0.1:0"]).start()
        tap.ok(wait_for(lambda: resolution(db) == 0.001, 40),
               "the daemon's first cycle refines the channel to m°C (its reading's)",
               d.log_text())
        tap.ok("refined from resolution 1 to 0.001" in d.log_text(), "and says so",
               d.log_text())
        tap.ok(wait_for(lambda: pending(db) == 0, 60),
               "the older rows are rescaled a batch a cycle until none is left", d.log_text())
        # The rows themselves now hold millidegrees: none left for the reads to scale.
        soc = channel_ids(db)[KEY]
        old = [v[soc] for ts, v in samples(db) if ts < end and soc in v]
        tap.ok(len(old) == DAYS * 24 * 12 and all(40000 <= q <= 48000 and q % 1000 == 0
                                                   for q in old),
               "the imported rows hold millidegrees", old[:5])
        got = export_values()
        tap.ok(len(got) == len(want) == DAYS * 24 * 12 and
               all(float(a) == float(b) for a, b in zip(got, want)),
               "every imported value reads the same, now stored in m°C",
               (len(got), len(want), got[:3], want[:3]))
        tap.ok(d.stop() == 0, "clean stop")


main(run)
