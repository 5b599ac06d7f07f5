#!/usr/bin/python3
"""A database the previous thermlog wrote (the demo's week at schema 10: fixtures/db/
demo-schema10.db.xz) converted to chunks, killed -9 at random points: 50 times during
`thermlog repair --migrate`, then 50 times a daemon that converts it a slice a cycle while it
samples at 1 s. Each time: integrity_check ok, no acknowledged cycle lost, and once done the
same answers (stats, time-weighted stats, lifetime, export, peak, throttle, runs) as a
conversion never interrupted."""
import hashlib
import lzma
import os
import random
import shutil
import sqlite3
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from thermlog_test import Daemon, Workdir, check_database, connect_ro, copy_fixture, cycles, \
    main, wait_for, write_config  # noqa: E402

KILLS = 50
CAPACITOR = ("capacitors:\n  - name: C12\n    sensor: iio/maxim_thermocouple/temp\n"
             "    rated_life_h: 2000\n    rated_temp_c: 105\n    self_heating: {rise_k: 3}\n")


def converting(db):
    """Whether the database still holds its head's cycles in the old table."""
    con = connect_ro(db)
    try:
        return con.execute("SELECT count(*) FROM sqlite_schema WHERE name = 'cycles'") \
            .fetchone()[0] > 0
    finally:
        con.close()


def fresh_copy(src, dst):
    """@src copied to @dst, no WAL of an earlier @dst left beside it."""
    for suffix in ("", "-wal", "-shm"):
        if os.path.exists(dst + suffix):
            os.unlink(dst + suffix)
    shutil.copy(src, dst)


def answers(thermlog, db, cap, window, channels, runs=True):
    """What the history answers over @window ("--from", F, "--to", T) for @channels (the old
    history's; a daemon adds its own): command -> sha256. With @runs the runs and throttle
    episodes too (a daemon closes those left open)."""
    picked = [a for key in channels for a in ("--channel", key)]
    cmds = [["stats", "--json"] + picked, ["stats", "--json", "--weight", "time"] + picked,
            ["-c", cap, "lifetime", "--json"], ["export"] + picked,
            ["export", "--format", "wide"] + picked,
            ["peak", "--channel", "thermal/soc-thermal", "--json"]]
    cmds += [["throttle", "--json"]] if runs else []
    out = {}
    for cmd in cmds:
        p = subprocess.run([thermlog, "--db", db] + cmd + window, capture_output=True,
                           timeout=120)
        out[" ".join(cmd[:4])] = (p.returncode, hashlib.sha256(p.stdout).hexdigest(),
                                  len(p.stdout))
    for cmd in (["runs", "--json"], ["runs", "show", "5", "--json"]) if runs else ():
        p = subprocess.run([thermlog, "--db", db] + cmd, capture_output=True, timeout=120)
        out[" ".join(cmd)] = (p.returncode, hashlib.sha256(p.stdout).hexdigest(), len(p.stdout))
    return out


def differs(a, b):
    return [k for k in a if a[k] != b.get(k)]


def run(tap):
    thermlogd, thermlog, fixture, tree = sys.argv[1:5]
    seed = int(os.environ.get("KILL9_SEED", int(time.time())))
    rnd = random.Random(seed)
    print("# seed %d (KILL9_SEED=%d reproduces the kill times)" % (seed, seed))
    with Workdir("thermlog-convert.") as wd:
        old = os.path.join(wd, "old.db")
        with lzma.open(fixture) as src, open(old, "wb") as dst:
            shutil.copyfileobj(src, dst)
        cap = os.path.join(wd, "cap.yaml")
        with open(cap, "w") as f:
            f.write(CAPACITOR)
        old_cycles, keys = cycles_of_old(old)
        window = ["--from", str(old_cycles[0]), "--to", str(old_cycles[-1] + 1)]

        # The reference: converted at once, never interrupted.
        ref = os.path.join(wd, "ref.db")
        fresh_copy(old, ref)
        t0 = time.monotonic()
        p = subprocess.run([thermlog, "--db", ref, "repair", "--migrate"], capture_output=True,
                           text=True, timeout=300)
        took = time.monotonic() - t0
        tap.ok(p.returncode == 0 and "current format" in p.stdout,
               "repair --migrate converts the old database (%.2f s)" % took, p.stdout + p.stderr)
        want = answers(thermlog, ref, cap, window, keys)
        tap.ok([t for t, _ in cycles(ref)] == old_cycles, "every cycle of the old table kept")

        # repair --migrate killed at random points, again and again (ten copies, five kills
        # each): it resumes where it stopped, to the same result.
        db = os.path.join(wd, "killed.db")
        # A round kills it until a run finishes the conversion, then checks the answers and
        # begins again on a fresh copy; only kills while it converted count.
        mid, kills, problems, rounds = 0, 0, [], 0
        fresh_copy(old, db)
        while mid < KILLS and kills < KILLS * 10:
            with open(os.path.join(wd, "repair.log"), "w+") as log:
                proc = subprocess.Popen([thermlog, "--db", db, "repair", "--migrate"],
                                        stdout=log, stderr=subprocess.STDOUT)
                time.sleep(rnd.uniform(0.01, took))
                running = proc.poll() is None
                proc.kill()
                proc.wait()
                log.seek(0)
                said = log.read()
            kills += 1
            mid += running and converting(db)
            if not running and converting(db):
                # It ended by itself with the conversion unfinished: stopped by a failed
                # check (or an error); killing it again would change nothing.
                problems.append("kill %d: repair --migrate exited %d, not converted: %s" %
                                (kills, proc.returncode, said))
                break
            good, detail = check_database(db, values=False)
            if not good:
                problems.append("kill %d: %s" % (kills, detail))
            if [t for t, _ in cycles(db)] != old_cycles:
                problems.append("kill %d: the cycles differ" % kills)
            if not converting(db):
                good, detail = check_database(db)
                got = answers(thermlog, db, cap, window, keys)
                if not good:
                    problems.append("round %d: %s" % (rounds, detail))
                if got != want:
                    problems.append("round %d: answers differ: %s" % (rounds, differs(want, got)))
                rounds += 1
                print("# repair --migrate: conversion %d finished, %d kills so far (%d during it)"
                      % (rounds, kills, mid))
                fresh_copy(old, db)
        p = subprocess.run([thermlog, "--db", db, "repair", "--migrate"], capture_output=True,
                           text=True, timeout=300)
        got = answers(thermlog, db, cap, window, keys)
        if p.returncode != 0 or converting(db) or got != want:
            problems.append("the last round: finished %d, answers differ: %s" %
                            (p.returncode, differs(want, got)))
        tap.ok(not problems and mid >= KILLS,
               "%d kills of repair --migrate during its conversion (%d in all, %d conversions "
               "finished): integrity_check ok, every cycle there each time, each finished with "
               "the answers of the conversion never interrupted" % (mid, kills, rounds),
               "\n".join(problems))

        # A daemon converting it a slice a cycle while it samples at 1 s, killed -9: on
        # another board's tree. The channels both boards have take the live daemon's labels
        # and values, so the answers compared are those of the old board's other channels.
        # Three weeks of history, so that the conversion takes it many cycles.
        longer = os.path.join(wd, "weeks.db")
        earlier_weeks(old, longer, 2)
        old_cycles, _ = cycles_of_old(longer)
        window = ["--from", str(old_cycles[0]), "--to", str(old_cycles[-1] + 1)]
        ref = os.path.join(wd, "ref-weeks.db")
        fresh_copy(longer, ref)
        p = subprocess.run([thermlog, "--db", ref, "repair", "--migrate"], capture_output=True,
                           text=True, timeout=300)
        tap.ok(p.returncode == 0 and not converting(ref) and
               [t for t, _ in cycles(ref)] == old_cycles,
               "three weeks in the old layout converted, every cycle kept", p.stdout + p.stderr)
        root = copy_fixture(tree, os.path.join(wd, "sysfs"))
        db = os.path.join(wd, "daemon.db")
        cfg = write_config(os.path.join(wd, "t.yaml"))
        args = ["-c", cfg, "--sysfs-root", root, "--db", db, "--listen", "127.0.0.1:0"]
        d = Daemon(thermlogd, wd, args, name="live").start()
        wait_for(lambda: os.path.exists(db) and len(cycles(db)) >= 2, 30)
        d.stop()
        live = set(r[0] for r in sqlite3.connect(db).execute("SELECT key FROM channels"))
        keys = [k for k in keys if k not in live]
        tap.ok(len(keys) >= 10, "%d of the old board's channels the live board lacks" % len(keys))
        # The reference: the conversion never interrupted, with the live board's labels (peak
        # shows its cpufreq columns).
        fresh_copy(ref, db)
        d = Daemon(thermlogd, wd, args, name="relabel").start()
        n = len(cycles(db))
        wait_for(lambda: len(cycles(db)) >= n + 2, 30)
        d.stop()
        want = answers(thermlog, db, cap, window, keys, runs=False)
        problems, mid, rounds = [], 0, 5
        for r in range(rounds):
            fresh_copy(longer, db)
            for k in range(KILLS // rounds):
                d = Daemon(thermlogd, wd, args, name="convert%d-%d" % (r, k)).start()
                time.sleep(rnd.uniform(0.05, 1.6))
                before = set(t for t, _ in cycles(db))
                mid += converting(db)
                alive = d.alive()
                d.kill9()
                good, detail = check_database(db, values=False)
                after = set(t for t, _ in cycles(db))
                if not good:
                    problems.append("round %d kill %d: %s" % (r, k, detail))
                if not before <= after:
                    problems.append("round %d kill %d: %d acknowledged cycles lost" %
                                    (r, k, len(before - after)))
                if not alive:
                    problems.append("round %d kill %d: the daemon had exited: %s" %
                                    (r, k, d.log_text()[-500:]))
            # The last daemon of the round finishes the conversion and stops cleanly.
            d = Daemon(thermlogd, wd, args, name="finish%d" % r).start()
            d.http_port()  # its signal handlers are in place
            done = wait_for(lambda: not converting(db), 60)
            code = d.stop()
            good, detail = check_database(db)
            if not good:
                problems.append("round %d, converted: %s" % (r, detail))
            got = answers(thermlog, db, cap, window, keys, runs=False)
            if not done or code != 0 or got != want:
                problems.append("round %d: converted %s, stopped %s, answers differ: %s\n%s" %
                                (r, done, code, differs(want, got), d.log_text()[-800:]))
        tap.ok(not problems, "%d kills of a converting daemon (%d during the conversion): "
               "integrity_check ok, no acknowledged cycle lost, the same answers once done" %
               (KILLS, mid), "\n".join(problems))


def earlier_weeks(src, dst, weeks):
    """@src's whole days (those its daily rollups hold) copied @weeks times into the weeks
    before it, in @dst: a longer history in the old layout, whose conversion takes a daemon
    many cycles. Whole hours (a head row's chain begins each hour) and whole days (a day
    is checked against its daily row) shifted by whole weeks."""
    fresh_copy(src, dst)
    con = sqlite3.connect(dst)
    end = con.execute("SELECT max(day) + 86400 FROM rollup_days").fetchone()[0]
    for k in range(1, weeks + 1):
        d = 7 * 86400 * k
        con.execute("INSERT INTO cycles SELECT ts - ?1, boot, clock FROM cycles WHERE ts >= ?2 "
                    "AND ts < ?3", (d, end - 7 * 86400, end))
        con.execute("INSERT INTO samples SELECT ts - ?1, clock, data FROM samples WHERE ts >= ?2 "
                    "AND ts < ?3", (d, end - 7 * 86400, end))
        con.execute("INSERT INTO rollups SELECT hour - ?1, channel_id, count, sum, min, max, "
                    "max_ts - ?1, unsynced, hist FROM rollups WHERE hour >= ?2 AND hour < ?3",
                    (d, end - 7 * 86400, end))
        con.execute("INSERT INTO rollup_days SELECT day - ?1, channel_id, count, sum, min, max, "
                    "max_ts - ?1, unsynced, hist FROM rollup_days WHERE day >= ?2 AND day < ?3",
                    (d, end - 7 * 86400, end))
        con.execute("INSERT INTO cycle_days SELECT day - ?1, cycles, unsynced, first_ts - ?1, "
                    "last_ts - ?1, spacing FROM cycle_days WHERE day >= ?2 AND day < ?3",
                    (d, end - 7 * 86400, end))
    con.commit()
    con.close()


def cycles_of_old(db):
    """The old database's cycles and channel keys, read from its own tables."""
    con = sqlite3.connect("file:%s?mode=ro" % db, uri=True)
    try:
        return ([r[0] for r in con.execute("SELECT ts FROM cycles ORDER BY ts")],
                [r[0] for r in con.execute("SELECT key FROM channels ORDER BY key")])
    finally:
        con.close()


main(run)
