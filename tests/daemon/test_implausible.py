#!/usr/bin/python3
"""Implausible sysfs values (a zone at INT64_MAX m°C, a CPU at -5 kHz) are errors everywhere
alike: /api/v1/latest has null and an error, /metrics says channel_ok 0 with no value, the store
keeps no value, and the log has one warning each."""
import json
import os
import sys
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from thermlog_test import Daemon, Workdir, channel_ids, copy_fixture, main, samples, \
    wait_cycles, write_config

ZONE = "thermal/bigcore0-thermal"
CPU = "cpufreq/policy0"


def get(port, path):
    with urllib.request.urlopen("http://127.0.0.1:%d%s" % (port, path), timeout=5) as r:
        return r.read().decode()


def run(tap):
    exe, fixture = sys.argv[1], sys.argv[2]
    with Workdir("thermlog-implausible.") as wd:
        root = copy_fixture(fixture, os.path.join(wd, "sysfs"))
        with open(os.path.join(root, "devices/virtual/thermal/thermal_zone1/temp"), "w") as f:
            f.write("9223372036854775807\n")
        with open(os.path.join(root, "devices/system/cpu/cpufreq/policy0/scaling_cur_freq"),
                  "w") as f:
            f.write("-5\n")
        db = os.path.join(wd, "t.db")
        cfg = write_config(os.path.join(wd, "t.yaml"))
        d = Daemon(exe, wd, ["-c", cfg, "--sysfs-root", root, "--db", db,
                             "--listen", "127.0.0.1:0"]).start()
        port = d.http_port()  # port 0: the kernel picked it as the daemon bound
        wait_cycles(db, 3, 20, d)
        latest = {c["key"]: c for c in json.loads(get(port, "/api/v1/latest"))["channels"]}
        for key in (ZONE, CPU):
            c = latest.get(key, {})
            tap.ok(c.get("value") is None and c.get("error"),
                   "/api/v1/latest: %s is null with an error: %s" % (key, c))
        metrics = get(port, "/metrics")
        for key in (ZONE, CPU):
            ok_line = [l for l in metrics.splitlines()
                       if l.startswith("thermlog_channel_ok{") and 'key="%s"' % key in l]
            value = [l for l in metrics.splitlines()
                     if not l.startswith("#") and 'key="%s"' % key in l and
                     not l.startswith("thermlog_channel_ok")]
            tap.ok(ok_line and ok_line[0].endswith(" 0") and not value,
                   "/metrics: %s has channel_ok 0 and no value" % key, ok_line + value)
        ids = channel_ids(db)
        stored = [v for _, data in samples(db) for cid, v in data.items()
                  if cid in (ids.get(ZONE), ids.get(CPU))]
        tap.ok(ZONE in ids and CPU in ids and not stored,
               "the store keeps the channels but no value: %s" % stored[:5])
        log = d.log_text()
        tap.ok(log.count("warning: implausible reading from class/thermal/thermal_zone1/temp")
               == 1 and log.count("warning: implausible reading from devices/system/cpu/"
                                  "cpufreq/policy0/scaling_cur_freq") == 1,
               "one warning each", log)
        tap.ok(d.stop() == 0, "clean stop")


main(run)
