#!/usr/bin/python3
"""The daemon's running capacitor damage (/metrics) agrees to the bit with GET /api/v1/lifetime
and `thermlog lifetime` after an import of older history: imported while the daemon was stopped
(then restarted), and imported while it runs. Usage: import.py THERMLOGD THERMLOG FIXTURE"""
import json
import os
import re
import signal
import subprocess
import sys
import time
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from thermlog_test import Daemon, Workdir, cycles, main, wait_cycles, write_config  # noqa

SENSOR = "thermal/soc-thermal"  # 43.461 °C in the fixture


def run(tap):
    thermlogd, thermlog, fixture = sys.argv[1], sys.argv[2], sys.argv[3]
    with Workdir("thermlog-lifetime-import.") as wd:
        db = os.path.join(wd, "t.db")
        # C2 was put in service two days ago: history before that is its predecessor's.
        since = time.strftime("%Y-%m-%d", time.gmtime(time.time() - 2 * 86400))
        cfg = write_config(os.path.join(wd, "t.yaml"), interval="1s", extra=(
            "capacitors:\n  - name: C1\n    sensor: %s\n    rated_life_h: 2000\n"
            "    rated_temp_c: 105\n"
            "  - name: C2\n    sensor: %s\n    rated_life_h: 2000\n    rated_temp_c: 105\n"
            "    in_service: %s\n" % (SENSOR, SENSOR, since)))
        # Port 0: each start binds a free port and logs it; `port` follows the running daemon.
        args = ["-c", cfg, "--sysfs-root", fixture, "--db", db, "--listen", "127.0.0.1:0"]
        port = None

        def get(path):
            with urllib.request.urlopen("http://127.0.0.1:%d%s" % (port, path), timeout=30) as r:
                return r.read().decode()

        def import_hours(start, hours, temp):
            path = os.path.join(wd, "h%d.csv" % start)
            with open(path, "w") as f:
                f.write("time,channel,value,unit\n")
                for i in range(hours * 60):
                    f.write("%d,%s,%.3f,celsius\n" % (start + 60 * i, SENSOR, temp))
            p = subprocess.run([thermlog, "--db", db, "import", path], capture_output=True,
                               text=True)
            tap.ok(p.returncode == 0, "import %d h at %g °C" % (hours, temp), p.stderr)

        def agree(d, what):
            """The three figures at one stored cycle (retried until no cycle lands between)."""
            for _ in range(40):
                t1 = len(cycles(db))
                metrics = get("/metrics")
                api = json.loads(get("/api/v1/lifetime"))["capacitors"]
                cli = subprocess.run([thermlog, "--db", db, "-c", cfg, "lifetime", "--json"],
                                     capture_output=True, text=True)
                if len(cycles(db)) == t1:
                    break
                time.sleep(0.2)
            m = re.findall(r'^thermlog_capacitor_consumed_ratio\{capacitor="(C\d)"[^}]*\} (\S+)$',
                           metrics, re.M)
            running = {name: float(v) for name, v in m}
            apis = {c["name"]: c["consumed_fraction"] for c in api}
            clis = {c["name"]: c["consumed_fraction"] for c in json.loads(cli.stdout)["capacitors"]} \
                if cli.returncode == 0 else {}
            tap.ok(len(running) == 2 and running == apis == clis,
                   "%s: /metrics, the API and the CLI agree to the bit" % what,
                   "metrics %r api %r cli %r\n%s" % (running, apis, clis, d.log_text()))
            return api[0], api[1]

        d = Daemon(thermlogd, wd, args).start()
        port = d.http_port()
        if not tap.ok(port, "the daemon serves HTTP on the port it bound", d.log_text()):
            return
        tap.ok(len(wait_cycles(db, 3, 30, d)) >= 3, "the daemon stores cycles", d.log_text())
        before, _ = agree(d, "live history only")
        tap.ok(d.stop() == 0, "stops cleanly (the running damage is saved)", d.log_text())

        first = cycles(db)[0][0]
        import_hours(first - 86400, 6, 95.0)  # a hot spell the day before
        d = Daemon(thermlogd, wd, args).start()
        port = d.http_port()
        tap.ok(port and len(wait_cycles(db, len(cycles(db)) + 2, 30, d)) > 0, "restarted",
               d.log_text())
        after, after2 = agree(d, "import, then restart")
        tap.ok(after["consumed_fraction"] > 10 * before["consumed_fraction"],
               "the imported hot spell counts", (before, after))

        n = len(cycles(db))
        # Imported while the daemon runs, and wholly before C2's service began: since is a
        # midnight two days back, so a spell starting three days back crossed it when the test
        # ran after 18:00 UTC; four days back it ends at least 42 h before.
        import_hours(first - 4 * 86400, 6, 100.0)
        tap.ok(len(wait_cycles(db, n + 6 * 60 + 2, 30, d)) > 0, "the daemon goes on")
        later, later2 = agree(d, "import while running")
        tap.ok(later["consumed_fraction"] > 1.5 * after["consumed_fraction"],
               "the second import counts too", (after, later))
        grew, grew2 = (x["consumed_fraction"] - y["consumed_fraction"]
                       for x, y in ((later, after), (later2, after2)))
        tap.ok(0 <= grew2 < 0.01 * grew,
               "but not for C2, in service only since %s" % since, (after2, later2))
        tap.ok(d.stop() == 0, "stops cleanly", d.log_text())


main(run)
