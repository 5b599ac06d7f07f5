#!/usr/bin/python3
"""kill -9 of a daemon while it compacts a closed 4-hour block into chunks. The block before
the current one holds 14,400 one-second cycles of 24 imported channels in the head (an import
compacts every closed block but the last); a daemon sampling at 1 s compacts it in the
maintenance after its first cycle. The daemon is killed at random points until 50 kills have
landed during that compaction (its first cycle committed, the block not yet compacted). After
every kill: integrity_check ok, no block both compacted and in the head, no imported or
acknowledged cycle lost; once compacted the block exports byte for byte as imported."""
import hashlib
import math
import os
import random
import shutil
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from thermlog_test import Daemon, Workdir, check_database, copy_fixture, cycles, main, query, \
    wait_for, write_config  # noqa: E402

KILLS = 50
BLOCK_S = 4 * 3600
BLOCKS = 1
ZONES = 16
KEYS = tuple("import/zone%d" % z for z in range(ZONES)) + \
    tuple("import/ambient%d" % a for a in range(4)) + \
    tuple("import/policy%d" % c for c in range(4))


def write_block(path, end, seed):
    """A wide CSV of one-second values over the @BLOCKS blocks before @end: zones in m°C steps
    drifting with a load, ambients of a TSADC's uneven steps, clocks among OPPs."""
    rnd = random.Random(seed)
    opps = (408, 816, 1200, 1608, 2016, 2400)
    with open(path, "w") as f:
        f.write("unix," + ",".join("%s (%s)" % (k, "hertz" if "policy" in k else "celsius")
                                  for k in KEYS) + "\n")
        for t in range(end - BLOCKS * BLOCK_S, end):
            load = 0.5 + 0.5 * math.sin(t / 900.0)
            zones = ["%.3f" % (45 + z + 20 * load + rnd.gauss(0, 0.4)) for z in range(ZONES)]
            amb = ["%.3f" % (30 + rnd.randint(0, 3) * 0.923) for _ in range(4)]
            clk = ["%d" % (opps[min(5, int(load * 6 + rnd.random()))] * 1000000)
                   for _ in range(4)]
            f.write("%d,%s\n" % (t, ",".join(zones + amb + clk)))


def compacted(db, first, end):
    """How many of the imported blocks are compacted."""
    return query(db, "SELECT count(DISTINCT block) FROM blocks WHERE series = 0 AND block >= ? "
                 "AND block < ?", (first, end))[0][0]


def exported(thermlog, db, first, end):
    p = subprocess.run([thermlog, "--db", db, "export", "--from", str(first), "--to", str(end)] +
                       [a for k in KEYS for a in ("--channel", k)], capture_output=True,
                       timeout=120)
    return p.returncode, hashlib.sha256(p.stdout).hexdigest(), len(p.stdout)


def fresh_copy(src, dst):
    for suffix in ("", "-wal", "-shm"):
        if os.path.exists(dst + suffix):
            os.unlink(dst + suffix)
    shutil.copy(src, dst)


def run(tap):
    thermlogd, thermlog, fixture = sys.argv[1:4]
    seed = int(os.environ.get("KILL9_SEED", int(time.time())))
    rnd = random.Random(seed)
    print("# seed %d (KILL9_SEED=%d reproduces the kill times)" % (seed, seed))
    with Workdir("thermlog-kill9-compact.") as wd:
        end = int(time.time()) // BLOCK_S * BLOCK_S  # the current block's start
        first = end - BLOCKS * BLOCK_S
        csv = os.path.join(wd, "block.csv")
        write_block(csv, end, seed)
        imported = os.path.join(wd, "block.db")
        p = subprocess.run([thermlog, "--db", imported, "import", "--format", "wide", csv],
                           capture_output=True, text=True, timeout=120)
        stamps = set(t for t, _ in cycles(imported))
        tap.ok(p.returncode == 0 and len(stamps) == BLOCKS * BLOCK_S and
               compacted(imported, first, end) == 0,
               "a block of one-second values imported, in the head",
               p.stdout + p.stderr)
        want = exported(thermlog, imported, first, end)

        root = copy_fixture(fixture, os.path.join(wd, "sysfs"))
        db = os.path.join(wd, "t.db")
        cfg = write_config(os.path.join(wd, "t.yaml"))
        args = ["-c", cfg, "--sysfs-root", root, "--db", db, "--listen", "127.0.0.1:0"]

        # The reference: how long a daemon takes to compact it, never interrupted.
        fresh_copy(imported, db)
        t0 = time.monotonic()
        d = Daemon(thermlogd, wd, args, name="reference").start()
        done = wait_for(lambda: compacted(db, first, end) == BLOCKS, 120)
        took = time.monotonic() - t0
        d.stop()
        good, detail = check_database(db)
        tap.ok(done and good and exported(thermlog, db, first, end) == want,
               "a daemon started on it compacts it in %.2f s; it exports as imported" % took,
               detail + d.log_text()[-800:])

        problems, mid, kills, rounds = [], 0, 0, 0
        fresh_copy(imported, db)
        while mid < KILLS and kills < KILLS * 8:
            earlier = set(t for t, _ in cycles(db))
            d = Daemon(thermlogd, wd, args, name="kill%d" % kills).start()
            time.sleep(rnd.uniform(0.02, took * 1.2))
            before = set(t for t, _ in cycles(db))
            alive = d.alive()
            d.kill9()
            kills += 1
            good, detail = check_database(db, values=False)
            after = set(t for t, _ in cycles(db))
            n = compacted(db, first, end)
            # Its first cycle committed (the block is closed), the compaction not yet.
            mid += n == 0 and len(after - earlier) > 0
            if not good:
                problems.append("kill %d: %s" % (kills, detail))
            if not (before | stamps) <= after:
                problems.append("kill %d (%d of %d blocks compacted): %d imported or "
                                "acknowledged cycles lost" %
                                (kills, n, BLOCKS, len((before | stamps) - after)))
            if not alive:
                problems.append("kill %d: the daemon had exited: %s" %
                                (kills, d.log_text()[-500:]))
            if n == BLOCKS:
                good, detail = check_database(db)
                got = exported(thermlog, db, first, end)
                if not good or got != want:
                    problems.append("round %d: %s; the export %s" %
                                    (rounds, detail, "the same" if got == want else "differs"))
                rounds += 1
                fresh_copy(imported, db)
            if len(problems) > 10:
                break
        tap.ok(not problems and mid >= KILLS,
               "%d kills during the compaction of a block (%d in all, %d compacted after one): "
               "integrity_check ok, no imported or acknowledged cycle lost, each compacted block "
               "exports as imported" % (mid, kills, rounds), "\n".join(problems))


main(run)
