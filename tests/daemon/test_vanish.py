#!/usr/bin/python3
"""Sensors vanishing and reappearing while running: no crash, history kept, values resume."""
import os
import shutil
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from thermlog_test import Daemon, Workdir, check_database, copy_fixture, cycles, main, samples, \
    wait_cycles, wait_for, channel_ids, query, write_config

ZONE = "devices/virtual/thermal/thermal_zone6"  # npu-thermal
IIO = "bus/iio/devices"


def run(tap):
    exe, fixture = sys.argv[1], sys.argv[2]
    with Workdir("thermlog-vanish.") as wd:
        root = copy_fixture(fixture, os.path.join(wd, "sysfs"))
        db = os.path.join(wd, "t.db")
        cfg = write_config(os.path.join(wd, "t.yaml"), rescan="2s")
        d = Daemon(exe, wd, ["-c", cfg, "--sysfs-root", root, "--db", db,
                             "--listen", "127.0.0.1:0"]).start()
        c = wait_cycles(db, 3, 20, d)
        tap.ok(len(c) >= 3, "sampling the fixture", d.log_text())
        ids = channel_ids(db)
        key = "thermal/npu-thermal"
        tap.ok(key in ids, "the NPU zone is a channel")
        npu = ids.get(key)
        tc = ids.get("iio/maxim_thermocouple/temp")
        before = len(samples(db))

        # Unplug: the zone's device directory and the thermocouple's class link go away.
        parked = os.path.join(wd, "parked")
        os.mkdir(parked)
        shutil.move(os.path.join(root, ZONE), os.path.join(parked, "zone"))
        link = os.path.join(root, IIO, "iio:device1")
        target = os.readlink(link) if os.path.islink(link) else None
        if target:
            os.unlink(link)

        def gone():
            rows = samples(db)
            return len(rows) > before + 3 and npu not in rows[-1][1]
        tap.ok(wait_for(gone, 20), "the vanished zone stops appearing in cycles", d.log_text())
        tap.ok(d.alive(), "the daemon keeps running")
        absent = wait_for(lambda: query(db, "SELECT present FROM channels WHERE key = ?",
                                        (key,)) == [(0,)], 10)
        tap.ok(absent, "the channel is marked absent")
        rows = samples(db)
        tap.ok(any(npu in v for _, v in rows), "its history is kept")
        if target:
            tap.ok(tc not in rows[-1][1], "the unlinked thermocouple stops too")

        # Plug back in: values resume after the next rescan.
        n = len(rows)
        shutil.move(os.path.join(parked, "zone"), os.path.join(root, ZONE))
        if target:
            os.symlink(target, link)

        def back():
            r = samples(db)
            return len(r) > n and npu in r[-1][1] and (tc is None or tc in r[-1][1])
        tap.ok(wait_for(back, 20), "values resume when the sensors return", d.log_text())
        tap.ok(channel_ids(db).get(key) == npu, "under the same channel id")
        tap.ok(wait_for(lambda: query(db, "SELECT present FROM channels WHERE key = ?",
                                      (key,)) == [(1,)], 10), "and it is present again")
        tap.ok(d.stop() == 0, "clean stop")
        ok, detail = check_database(db)
        tap.ok(ok, "database whole", detail)


main(run)
