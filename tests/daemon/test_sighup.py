#!/usr/bin/python3
"""SIGHUP reloads the configuration; a bad one is rejected and the daemon keeps running."""
import http.client
import os
import signal
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from thermlog_test import Daemon, Workdir, check_database, copy_fixture, cycles, main, \
    scheduler_missed, wait_cycles, wait_for, write_config


def gaps(db, since, log=""):
    """The cycles since @since and their spacings other than 1 s, but for the slots the log
    says a loaded machine's scheduler made the loop miss (scheduler_missed)."""
    ts = [t for t, _ in cycles(db) if t >= since]
    excused = scheduler_missed(log)
    return ts, [b - a for a, b in zip(ts, ts[1:])
                if b - a != 1 and not set(range(a + 1, b)) <= excused]


def test_reload_with_client(tap, exe, wd, root, db):
    """A reload with an idle keep-alive client connected misses no 1 s cycle; with the http
    settings unchanged the server (and the client's connection) stays."""
    cfg = write_config(os.path.join(wd, "k.yaml"), interval="1s")
    args = ["-c", cfg, "--sysfs-root", root, "--db", db, "--listen", "127.0.0.1:0"]
    d = Daemon(exe, wd, args, name="keepalive").start()
    port = d.http_port()  # port 0: the kernel picked it as the daemon bound
    tap.ok(wait_for(lambda: "first cycle stored" in d.log_text(), 20),
           "running at 1 s with an HTTP client", d.log_text())
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
    conn.request("GET", "/metrics")
    r = conn.getresponse()
    r.read()
    since = cycles(db)[-1][0]
    write_config(cfg, interval="1s", rescan="600s")  # http unchanged
    d.send(signal.SIGHUP)
    tap.ok(wait_for(lambda: "configuration reloaded" in d.log_text(), 10), "reloaded",
           d.log_text())
    wait_for(lambda: len(gaps(db, since)[0]) >= 4, 30)
    ts, bad = gaps(db, since, d.log_text())
    tap.ok(len(ts) >= 4 and not bad, "no cycle missed over the reload (gaps %s)" % bad, ts)
    try:
        conn.request("GET", "/api/v1/latest")
        r = conn.getresponse()
        r.read()
        kept = r.status
    except (http.client.HTTPException, OSError) as e:
        kept = repr(e)
    conn.close()
    tap.ok(kept == 200, "http settings unchanged: the kept-alive connection still answers",
           kept)

    # Changed http settings restart the server, still without stalling the cycle.
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
    conn.request("GET", "/metrics")
    conn.getresponse().read()
    since = cycles(db)[-1][0]
    write_config(cfg, interval="1s", rescan="600s", extra="http:\n  max_points: 1000\n")
    d.send(signal.SIGHUP)
    tap.ok(wait_for(lambda: d.log_text().count("configuration reloaded") >= 2, 10),
           "reloaded with new http settings", d.log_text())
    wait_for(lambda: len(gaps(db, since)[0]) >= 4, 30)
    ts, bad = gaps(db, since, d.log_text())
    tap.ok(len(ts) >= 4 and not bad, "no cycle missed over the server restart (gaps %s)" % bad,
           ts)
    conn.close()
    c2 = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
    c2.request("GET", "/api/v1/samples?max_points=2000")
    r = c2.getresponse()
    r.read()
    c2.close()
    tap.ok(r.status == 400, "the new http.max_points is in force", r.status)
    tap.ok(d.stop() == 0, "SIGTERM: exit 0", d.log_text())


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
        tap.ok(wait_for(lambda: "configuration rejected" in d.log_text(), 30),
               "the reload is answered", d.log_text())
        n = len(cycles(db))
        wait_cycles(db, n + 2, 30, d)
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
        # the cycle in flight at the reload may be on the old grid: from the next one on
        start = wait_cycles(db, len(cycles(db)) + 1, 30, d)[-1][0]
        wait_for(lambda: len([t for t, _ in cycles(db) if t > start]) >= 3, 30)
        after = [t for t, _ in cycles(db) if t > start]
        tap.ok(after and all(t % 2 == 0 for t in after) and
               all(b - a == 2 for a, b in zip(after, after[1:])),
               "the new 2 s interval, aligned to even seconds: %s" % after)
        tap.ok(d.stop() == 0, "SIGTERM: exit 0")
        test_reload_with_client(tap, exe, wd, root, db)
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
