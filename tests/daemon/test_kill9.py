#!/usr/bin/python3
"""kill -9 at random moments during 1-second sampling, 50 times: the database stays whole."""
import os
import random
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from thermlog_test import Daemon, Workdir, check_database, copy_fixture, cycles, main, samples, \
    wait_cycles, write_config

KILLS = 50


def run(tap):
    exe, fixture = sys.argv[1], sys.argv[2]
    seed = int(os.environ.get("KILL9_SEED", int(time.time())))
    rnd = random.Random(seed)
    print("# seed %d (KILL9_SEED=%d reproduces the kill times)" % (seed, seed))
    with Workdir("thermlog-kill9.") as wd:
        root = copy_fixture(fixture, os.path.join(wd, "sysfs"))
        db = os.path.join(wd, "t.db")
        cfg = write_config(os.path.join(wd, "t.yaml"))
        args = ["-c", cfg, "--sysfs-root", root, "--db", db, "--listen", "127.0.0.1:0"]
        all_ok = True
        lost_ok = True
        problems = []
        started_runs = 0
        for i in range(KILLS):
            d = Daemon(exe, wd, args, name="kill9").start()
            before = len(cycles(db))
            if i % 2 == 0:
                # Anywhere in a run: start-up, between cycles, during one.
                time.sleep(rnd.uniform(0.05, 1.6))
            else:
                # Just after a slot boundary, when a cycle is being read and written.
                wait_cycles(db, before + 1, 10, d)
                now = time.time()
                time.sleep((1 - (now % 1)) + rnd.uniform(0.0, 0.03))
            kill_time = time.time()
            alive = d.alive()
            d.kill9()
            ok, detail = check_database(db) if os.path.exists(db) else (True, "no db yet")
            if not ok:
                all_ok = False
                problems.append("kill %d: %s" % (i, detail))
            c = cycles(db)
            if len(c) > before:
                started_runs += 1
                # Every cycle due more than one slot before the kill was stored.
                if c[-1][0] < int(kill_time) - 1:
                    lost_ok = False
                    problems.append("kill %d at %.3f: last stored cycle %d" % (i, kill_time, c[-1][0]))
            if not alive:
                problems.append("kill %d: the daemon had exited: %s" % (i, d.log_text()[-500:]))
                all_ok = False
        tap.ok(all_ok, "integrity_check ok and every cycle whole after %d kills" % KILLS,
               "\n".join(problems))
        tap.ok(lost_ok, "at most the in-flight cycle lost at each kill", "\n".join(problems))
        tap.ok(started_runs >= KILLS // 2, "most runs stored cycles before the kill (%d)" % started_runs)

        # The survivor carries on where the last one stopped.
        n = len(cycles(db))
        d = Daemon(exe, wd, args, name="final").start()
        c = wait_cycles(db, n + 3, 15, d)
        tap.ok(len(c) >= n + 3, "a restarted daemon keeps storing cycles", d.log_text())
        tap.ok(d.stop() == 0, "and stops cleanly with SIGTERM")
        ok, detail = check_database(db)
        tap.ok(ok, "database whole at the end: " + detail, detail)
        ts = [t for t, _ in c]
        tap.ok(ts == sorted(set(ts)), "cycle stamps strictly increase")
        tap.ok(all(cl != 2 for _, cl in c),
               "restarts never shift stamps onto an unsynced timeline")
        rows = samples(db)
        counts = {len(v) for _, v in rows}
        tap.ok(len(counts) == 1, "every stored cycle has all channels (%s)" % sorted(counts))


main(run)
