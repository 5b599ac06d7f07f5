#!/usr/bin/python3
"""A disk that takes 1.5 s a sync never stalls sampling: the WAL checkpoints (the only syncs of
a WAL database at synchronous = NORMAL) run on their own thread, so at a 1 s interval every
cycle is stored while they run, and they do run (the database file grows, the WAL stays small).

The slow disk is tests/lib/slowsync.c LD_PRELOADed (its path the third argument); the daemon's
test hook THERMLOG_TEST_CHECKPOINT_PAGES makes a checkpoint due every 8 WAL pages (a few
cycles) instead of 1000."""
import os
import re
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from thermlog_test import Workdir, cycles, main, preloaded_daemon, scheduler_missed, wait_cycles


def read_syncs(path):
    """The shim's log: (call, pid, thread id) per sync that slept."""
    try:
        with open(path) as f:
            return [line.split() for line in f]
    except OSError:
        return []


def run(tap):
    exe, fixture, shim = sys.argv[1], sys.argv[2], sys.argv[3]
    with Workdir("thermlog-slowdisk.") as wd:
        synclog = os.path.join(wd, "syncs")
        d, db = preloaded_daemon(exe, fixture, wd, shim, {
            "THERMLOG_TEST_SYNC_DELAY_MS": "1500", "THERMLOG_TEST_SYNC_LOG": synclog,
            "THERMLOG_TEST_CHECKPOINT_PAGES": "8"})
        c0 = wait_cycles(db, 3, 30, d)
        tap.ok(len(c0) >= 3, "sampling every second", d.log_text())
        size0 = os.path.getsize(db)
        n0 = len(read_syncs(synclog))  # creating the database may sync on the main thread
        # fourteen more cycles, however long they take to come
        wait_cycles(db, len(c0) + 14, 60, d)
        ts = [t for t, _ in cycles(db) if t >= c0[0][0]]
        # (a slot a loaded machine's scheduler made the loop miss is said so: the disk's is not)
        excused = scheduler_missed(d.log_text())
        holes = [(a, b) for a, b in zip(ts, ts[1:])
                 if b - a != 1 and not set(range(a + 1, b)) <= excused]
        tap.ok(len(ts) >= 12 and not holes,
               "every second has its cycle while checkpoints sync for 1.5 s (%d cycles)"
               % len(ts), holes)
        said = re.findall(r"cycles? missed \(.*", d.log_text())
        steps = [int(x) for x in re.findall(r"longest step meanwhile took (\d+) ms",
                                            " ".join(said))]
        tap.ok(len(steps) == len(said) and all(s < 500 for s in steps),
               "and the daemon says it missed none for a step of its own (at most a late "
               "wake-up on a loaded machine)", d.log_text())
        syncs = read_syncs(synclog)[n0:]
        tids = {s[2] for s in syncs}
        tap.ok(len(syncs) >= 2 and str(d.proc.pid) not in tids,
               "the checkpoints synced (%d syncs), none on the main thread" % len(syncs),
               syncs)
        wal = os.path.getsize(db + "-wal") if os.path.exists(db + "-wal") else 0
        tap.ok(os.path.getsize(db) > size0 and wal < 1024 * 1024,
               "the database file grew by the checkpoints (%d -> %d bytes), the WAL small "
               "(%d bytes)" % (size0, os.path.getsize(db), wal))
        tap.ok(d.stop() == 0, "clean stop, the checkpoint under way finished")


main(run)
