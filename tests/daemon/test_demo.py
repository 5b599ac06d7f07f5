#!/usr/bin/python3
"""thermlogd --demo: a week of simulated ROCK 5C history, live cycles every 5 s, the URL on
stdout, its own database, and nothing left behind."""
import datetime
import json
import os
import re
import signal
import socket
import sys
import time
import urllib.error
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from thermlog_test import (Daemon, Workdir, check_database, cycles, main, named_peak,
                           query, set_clock_offset, wait_cycles, wait_for)


def iso_s(text):
    """Seconds since the epoch of an ISO 8601 time as the API writes it."""
    return datetime.datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()


def run(tap):
    exe = sys.argv[1]
    with Workdir("thermlog-demo.") as wd:
        db = os.path.join(wd, "demo.db")
        # Port 0: the daemon binds a free port and prints it in the URL.
        d = Daemon(exe, wd, ["--demo", "--db", db, "--listen", "127.0.0.1:0",
                             "--seed", "7"]).start()

        def url():
            with open(d.out_path) as f:
                return f.read().strip()
        printed = wait_for(url, 90, 0.2)
        m = re.fullmatch(r"http://127\.0\.0\.1:(\d+)/", printed or "")
        port = int(m.group(1)) if m else 0
        tap.ok(m and port > 0, "prints the URL with the bound port: %r" % printed, d.log_text())
        c = cycles(db)
        synced = [t for t, cl in c if cl == 1]
        tap.ok(len(synced) >= 7 * 1440, "a week of one-minute history (%d cycles)" % len(synced))
        tap.ok(all(b - a == 60 for a, b in zip(synced, synced[1:])), "one per minute, no gap")
        keys = {k for (k,) in query(db, "SELECT key FROM channels")}
        want = {"thermal/soc-thermal", "thermal/bigcore0-thermal", "thermal/bigcore1-thermal",
                "thermal/littlecore-thermal", "thermal/center-thermal", "thermal/gpu-thermal",
                "thermal/npu-thermal", "cooling/pwm-fan", "cpufreq/policy0", "cpufreq/policy4",
                "cpufreq/policy6", "devfreq/fdab0000.npu", "devfreq/fb000000.gpu",
                "devfreq/dmc", "iio/maxim_thermocouple/temp", "iio/fec10000.saradc/voltage2"}
        tap.ok(want <= keys, "the ROCK 5C channels", sorted(want - keys))
        tap.ok(not any(k.startswith("hwmon/") for k in keys), "none of the host's hwmon chips")
        tap.ok(not any(k.startswith("meminfo/") for k in keys), "none of the host's memory figures",
               sorted(k for k in keys if k.startswith("meminfo/")))
        # The simulated workload: a week of labelled runs, some failed, each with its energy
        # from the simulated INA226 (power trapezoids), written through the store's run functions.
        runs = query(db, "SELECT label, status, exit_code, end_ms - start_ms, energy_j, "
                     "energy_method, temp_max_c FROM runs WHERE status != 'running'")
        labels = {r[0] for r in runs}
        tap.ok(labels == {"sdxl-image", "reranker"}, "runs of both labels", labels)
        sdxl = [r for r in runs if r[0] == "sdxl-image"]
        tap.ok(len(sdxl) >= 80 and all(1515000 <= r[3] <= 1555000 for r in sdxl),
               "%d sdxl-image runs of about 25 minutes" % len(sdxl))
        failed = [r for r in runs if r[1] == "failed"]
        tap.ok(failed and all(r[2] in (1, 2) for r in failed) and len(failed) < len(runs) / 4,
               "some runs failed, exit code kept (%d of %d)" % (len(failed), len(runs)))
        tap.ok(all(r[5] == "power_trapezoid" and r[4] > 0 for r in runs),
               "every run has energy by power trapezoids")
        per_s = [r[4] / (r[3] / 1000) for r in sdxl]
        tap.ok(all(7 < w < 11 for w in per_s), "an sdxl-image run draws 7-11 W on average (%.2f-%.2f)"
               % (min(per_s), max(per_s)))
        tap.ok(all(r[6] and 35 < r[6] < 90 for r in runs), "peak temperatures are kept")
        # Load: the simulated board's CPUs (its proc/stat) and NPU cores (its debug/rknpu/load).
        load_keys = ({"load/cpu"} | {"load/cpu%d" % c for c in range(8)} |
                     {"load/rknpu/core%d" % c for c in range(3)})
        tap.ok(load_keys <= keys, "load channels of the 8 CPUs and the 3 NPU cores",
               sorted(load_keys - keys))
        # Throttling: each sdxl-image run of the history takes both big-core zones over their
        # passive trip; each big policy's episode starts inside the run and ends within two
        # minutes of its end (one-minute cycles), capped below 2256 MHz, cause thermal.
        eps = query(db, "SELECT domain, start_ts, end_ts, min_hz, max_hz, cause, zone, "
                    "trip_temp_mc, cooling, stuck FROM throttle_episodes")
        tap.ok(eps and {e[0] for e in eps} == {"cpufreq/policy4", "cpufreq/policy6"},
               "%d throttle episodes in the history, of the big-core policies" % len(eps),
               sorted({e[0] for e in eps}))
        ended = query(db, "SELECT start_ms / 1000, end_ms / 1000 FROM runs WHERE label = "
                      "'sdxl-image' AND status != 'running' ORDER BY start_ms")
        last_cycle = synced[-1]
        inside = [r for r in ended if r[1] + 180 < last_cycle]
        missed = []
        for rs, re_ in inside:
            for dom in ("cpufreq/policy4", "cpufreq/policy6"):
                mine = [e for e in eps if e[0] == dom and rs <= e[1] <= re_]
                if not (len(mine) == 1 and mine[0][2] is not None and
                        re_ - 300 <= mine[0][2] <= re_ + 120 and mine[0][5] == "thermal" and
                        mine[0][3] < mine[0][4] == 2256000000 and not mine[0][9]):
                    missed.append((rs, re_, dom, mine))
        tap.ok(len(inside) >= 80 and not missed,
               "each of %d sdxl-image runs has one thermal episode per big policy, pinned to "
               "the run" % len(inside), missed[:3])
        # A run still going (the demo's live job, or one under way when the demo started,
        # which goes on live) holds the episodes from its start on.
        going = query(db, "SELECT start_ms / 1000 FROM runs WHERE label = 'sdxl-image' AND "
                      "status = 'running'")
        spans = ended + [(r[0], float("inf")) for r in going]
        outside = [e for e in eps if not any(rs <= e[1] <= re_ for rs, re_ in spans)]
        tap.ok(not outside, "and no episode starts outside an sdxl-image run", outside[:3])
        # Each policy's episode names the zone bound to its own cooling device (policy4's
        # cpufreq-cpu4 to bigcore0-thermal, policy6's cpufreq-cpu6 to bigcore1-thermal), not
        # the hottest zone over a passive trip.
        own = {"cpufreq/policy4": ("bigcore0-thermal", "cpufreq-cpu4"),
               "cpufreq/policy6": ("bigcore1-thermal", "cpufreq-cpu6")}
        wrong = [e for e in eps if e[0] in own and (e[6], own[e[0]][1] in e[8]) !=
                 (own[e[0]][0], True)]
        tap.ok(not wrong and {e[7] for e in eps} == {60000},
               "each explained by its own big-core zone's 60 °C passive trip and cooling device",
               (wrong[:3], {e[7] for e in eps}))
        try:
            with urllib.request.urlopen("http://127.0.0.1:%d/api/v1/status" % port, timeout=10) as r:
                status = json.load(r)
            tap.ok(r.status == 200 and status, "the HTTP API answers")
            tap.ok(status.get("board") == "Radxa ROCK 5C", "the board is named from the device tree",
                   status.get("board"))
        except Exception as e:
            tap.ok(False, "the HTTP API answers: %s" % e)
        # The API over one run's window: its episodes, and the load of its NPU job's minutes.
        try:
            base = "http://127.0.0.1:%d" % port
            rs, re_ = inside[-1]
            with urllib.request.urlopen(base + "/api/v1/throttle?from=%d&to=%d" % (rs, re_),
                                        timeout=10) as r:
                th = json.load(r)
            doms = {d["domain"]: d for d in th["domains"]}
            e4 = [e for e in th["episodes"] if e["domain"] == "cpufreq/policy4"]
            tap.ok(set(doms) == {"cpufreq/policy4", "cpufreq/policy6"} and len(e4) == 1 and
                   e4[0]["cause"] == "thermal" and e4[0]["trip_temp_c"] == 60 and
                   e4[0]["cooling"][0]["type"] == "cpufreq-cpu4" and
                   e4[0]["min_hz"] < e4[0]["max_hz"] and
                   0.5 < doms["cpufreq/policy4"]["share"] < 1,
                   "/api/v1/throttle over an sdxl-image run: its thermal episodes", th)
            # Ten minutes into the run the NPU job runs; it ends 15-60 s before the run does.
            q = ("/api/v1/stats?from=%d&to=%d&channel=load/cpu4&channel=load/cpu0"
                 "&channel=load/rknpu/core0" % (rs + 600, re_ - 120))
            with urllib.request.urlopen(base + q, timeout=10) as r:
                st = {c["key"]: c for c in json.load(r)["channels"]}
            c4, c0, n0 = (st.get(k, {}) for k in ("load/cpu4", "load/cpu0", "load/rknpu/core0"))
            tap.ok(c4.get("min") == c4.get("max") == 41 and 12 < c0.get("min", 0) and
                   c0.get("max", 100) < 70 and n0.get("min", 0) >= 80,
                   "the NPU job loads cpu4 41 %, the little cores less, NPU core 0 over 80 %",
                   {k: (v.get("min"), v.get("max")) for k, v in st.items()})
        except Exception as e:
            tap.ok(False, "throttle and load over HTTP: %r" % e)
        # The backfill's last 3 hours of runs are replayed with fast samples; a run's chart
        # gets every stride-th of them.
        try:
            base = "http://127.0.0.1:%d" % port
            with urllib.request.urlopen(base + "/api/v1/runs?from=-3h", timeout=10) as r:
                recent = [x for x in json.load(r)["runs"] if x["status"] != "running"]
            rid = recent[-1]["id"] if recent else 0
            with urllib.request.urlopen(base + "/api/v1/runs/%d" % rid, timeout=10) as r:
                shown = json.load(r)["run"]
            n = shown["fast_samples"]
            tap.ok(n >= 6 and shown["figures"] and "residency" in shown["figures"],
                   "a recent run has fast samples (%d) and residency figures" % n)
            with urllib.request.urlopen(base + "/api/v1/runs/%d/samples" % rid, timeout=10) as r:
                every = json.load(r)
            tap.ok(every["fast_samples"] == n and every["stride"] == 1 and
                   len(every["samples"]) == n and
                   "cpufreq/policy4" in every["samples"][0]["values"] and
                   "thermal/npu-thermal" in every["samples"][0]["values"],
                   "/api/v1/runs/ID/samples: every fast sample, clocks and zones",
                   {k: every[k] for k in ("fast_samples", "stride")})
            # Its peak is the hottest zone of its samples (as the backfilled runs' peaks are
            # the zones'), not the capacitor thermocouple, and says which zone.
            zone_max = max(v for x in every["samples"] for k, v in x["values"].items()
                           if k.startswith("thermal/"))
            fpeak = (shown["figures"] or {}).get("peak") or {}
            tap.ok(abs(shown["temp_max_c"] - zone_max) < 0.0015 and
                   fpeak.get("channel", "").startswith("thermal/") and
                   (shown.get("peak") or {}).get("channel", "").startswith("thermal/"),
                   "a live run's peak is its hottest zone (%.3f °C), its channel named" % zone_max,
                   (shown["temp_max_c"], fpeak, (shown.get("peak") or {}).get("channel")))
            with urllib.request.urlopen(base + "/api/v1/runs/%d/samples?max_points=5" % rid,
                                        timeout=10) as r:
                few = json.load(r)
            stride = -(-n // 5)
            tap.ok(few["stride"] == stride and len(few["samples"]) == -(-n // stride) and
                   [x["time"] for x in few["samples"]] ==
                   [x["time"] for x in every["samples"]][::stride],
                   "max_points=5: every %d-th, from the first" % stride)
            for path, code in (("/api/v1/runs/999999/samples", 404),
                               ("/api/v1/runs/%d/samples?max_points=0" % rid, 400),
                               ("/api/v1/runs/%dx/samples" % rid, 404)):
                try:
                    urllib.request.urlopen(base + path, timeout=10)
                    got = 200
                except urllib.error.HTTPError as e:
                    got = e.code
                tap.ok(got == code, "%s answers %d (%d)" % (path, code, got))
        except Exception as e:
            tap.ok(False, "the runs over HTTP: %r" % e)
        # The daemon's running damage (/metrics) agrees with the full recomputation.
        try:
            base = "http://127.0.0.1:%d" % port
            with urllib.request.urlopen(base + "/api/v1/lifetime", timeout=30) as r:
                full = json.load(r)["capacitors"][0]["consumed_fraction"]
            with urllib.request.urlopen(base + "/metrics", timeout=10) as r:
                m = re.search(r'^thermlog_capacitor_consumed_ratio\{[^}]*\} (\S+)$',
                              r.read().decode(), re.M)
            running = float(m.group(1)) if m else None
            tap.ok(running is not None and abs(running - full) <= 1e-3 * full,
                   "running capacitor damage %r agrees with the recomputation %r" %
                   (running, full))
        except Exception as e:
            tap.ok(False, "capacitor damage via HTTP: %s" % e)
        n = len(cycles(db))
        wait_cycles(db, n + 3, 60, d)
        live = [t for t, cl in cycles(db)][n - 1:]
        # The first cycle after start is taken at once (docs/DAEMON.md), then the 5 s grid.
        grid = [t for t in live if t % 5 == 0]
        tap.ok(len(grid) >= 2 and len(live) - len(grid) <= 1,
               "live cycles every 5 s after the first at start: %s" % live)
        m = re.search(r"simulated ROCK 5C in (\S+),", d.log_text())
        tree = m.group(1) if m else None
        tap.ok(tree and os.path.isdir(os.path.join(tree, "class/thermal")), "the simulated tree")
        tap.ok(d.stop(signal.SIGINT) == 0, "Ctrl-C: exit 0")
        tap.ok(tree and not os.path.exists(tree), "the simulated tree is removed")
        ok, detail = check_database(db)
        tap.ok(ok, "the demo database is whole", detail)

        # Restarting on the same database adds only the missing history.
        before = len(cycles(db))
        d = Daemon(exe, wd, ["--demo", "--db", db, "--listen", "127.0.0.1:0"],
                   name="again").start()
        tap.ok(wait_for(lambda: os.path.getsize(d.out_path) > 0, 60, 0.2),
               "a second run on the same database", d.log_text())
        added = len(cycles(db)) - before
        tap.ok(added < 10, "backfills only the gap (%d cycles added)" % added)
        tap.ok(d.stop(signal.SIGTERM) == 0, "exit 0")

        # A week back from now may fall inside a run (its episodes open): the history then
        # begins before that run, so it holds the whole run and every episode in one. The demo
        # is started on a clock (the test hook) a week after five minutes into a run above.
        rs, re_ = inside[len(inside) // 2]
        off = os.path.join(wd, "offset")
        set_clock_offset(off, rs + 300 + 7 * 86400 - int(time.time()))
        mid = os.path.join(wd, "mid.db")
        d = Daemon(exe, wd, ["--demo", "--db", mid, "--listen", "127.0.0.1:0", "--seed", "7"],
                   name="midrun", env={"THERMLOG_TEST_CLOCK_OFFSET_FILE": off}).start()
        wait_for(lambda: os.path.getsize(d.out_path) > 0, 90, 0.2)
        first = min((t for t, cl in cycles(mid) if cl == 1), default=None)
        mruns = query(mid, "SELECT start_ms / 1000, end_ms / 1000 FROM runs WHERE status != "
                      "'running'")
        meps = query(mid, "SELECT domain, start_ts FROM throttle_episodes")
        tap.ok(first is not None and rs - 3600 < first <= rs and (rs, re_) in mruns,
               "a history that would begin inside a run begins before it (%r, the run %d-%d)"
               % (first, rs, re_), d.log_text())
        # the run under way at the (shifted) start goes on live: its episodes are open
        live = [a for (a,) in query(mid, "SELECT start_ms / 1000 FROM runs WHERE status = "
                                    "'running'")]
        stray = [e for e in meps if not any(a <= e[1] <= b for a, b in mruns)
                 and not any(a <= e[1] for a in live)]
        tap.ok(meps and not stray, "and each of its %d episodes starts inside a run" % len(meps),
               stray[:3])
        tap.ok(d.stop(signal.SIGTERM) == 0, "exit 0")

        # The last 3 hours of runs are replayed with fast samples, the runs before them stored
        # without. Where that boundary would fall inside a run that another one overlaps, the
        # replayed run's fast samples lay in the stored one's window, and its `peak` (the
        # hottest fast sample in the window) was not its temp_max_c. The boundary falls where
        # no run is under way, so each run's fast samples are its own. The demo is started
        # on a clock 3 hours after a minute inside such a run.
        # The pair: run b starts inside run a and is not as hot (else a's peak is b's too).
        every = query(db, "SELECT start_ms / 1000, end_ms / 1000, temp_max_c FROM runs WHERE "
                      "status != 'running' ORDER BY start_ms")
        pairs = [(a, b) for a, b in zip(every, every[1:])
                 if b[0] - a[0] > 180 and a[1] > b[0] and a[0] > synced[0] + 86400 and
                 a[2] > b[2]]
        tap.ok(pairs, "the week holds a run that a cooler one starts inside (%d)" % len(pairs))
        if pairs:
            (a_start, a_end, _), (b_start, _, _) = pairs[0]
            boundary = b_start - 90  # inside run a, before run b
            set_clock_offset(off, boundary + 3 * 3600 - int(time.time()))
            sdb = os.path.join(wd, "split.db")
            d = Daemon(exe, wd, ["--demo", "--db", sdb, "--listen", "127.0.0.1:0",
                                 "--seed", "7"], name="split",
                       env={"THERMLOG_TEST_CLOCK_OFFSET_FILE": off}).start()
            sbase = wait_for(lambda: open(d.out_path).read().strip(), 90, 0.2)
            wrong, seen = [], False
            try:
                got = json.load(urllib.request.urlopen(sbase + "api/v1/runs", timeout=30))
                for r in got["runs"]:
                    start = iso_s(r["start"])
                    if r["status"] == "running" or not (
                            boundary - 3600 <= start <= boundary + 3600):
                        continue
                    one = json.load(urllib.request.urlopen(
                        sbase + "api/v1/runs/%d" % r["id"], timeout=30))["run"]
                    seen = seen or a_start <= start < a_start + 5  # replayed on the 5 s grid
                    peak = named_peak(one)
                    if peak and peak[1] != one["temp_max_c"]:
                        wrong.append((one["id"], one["start"], one["temp_max_c"], peak[1]))
            except (OSError, ValueError, KeyError, TypeError) as e:
                wrong.append(repr(e))
            tap.ok(seen and not wrong,
                   "a demo whose replay would begin inside run %d-%d: every run's peak is its "
                   "temp_max_c" % (a_start, a_end), wrong[:3] or d.log_text())
            tap.ok(d.stop(signal.SIGTERM) == 0, "exit 0")

        # A database with history the demo did not write is never filled with simulated data,
        # under any name.
        real = os.path.join(wd, "real.db")
        cfg = os.path.join(wd, "real.yaml")
        with open(cfg, "w") as f:
            f.write("interval: 1s\nsources:\n  hwmon: {enabled: false}\n"
                    "runs:\n  socket: %s\n" % os.path.join(wd, "run", "thermlog.sock"))
        fixture = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fixtures",
                               "rock5c")
        s = Daemon(exe, wd, ["-c", cfg, "--sysfs-root", fixture, "--db", real, "--listen",
                             "127.0.0.1:0"], name="service").start()
        wait_for(lambda: len(cycles(real)) >= 2, 30, 0.2)
        tap.ok(s.stop(signal.SIGTERM) == 0, "a service database with a few live cycles")
        mine = cycles(real)
        link = os.path.join(wd, "other-name.db")
        os.symlink(real, link)
        for name, path in (("its name", real), ("a symlink", link)):
            r = Daemon(exe, wd, ["--demo", "--db", path, "--listen", "127.0.0.1:0"],
                       name="onreal-" + name.replace(" ", "-"))
            r.start()
            code = r.wait_exit(30)
            tap.ok(code not in (0, None) and "did not write" in r.log_text(),
                   "the demo refuses a database with other history (%s)" % name, r.log_text())
            tap.ok(cycles(real) == mine, "and adds nothing to it (%s)" % name)
        # A port in use is reported at once, naming it, before a week of backfill.
        holder = socket.socket()
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        busy = holder.getsockname()[1]
        t0 = time.monotonic()
        b = Daemon(exe, wd, ["--demo", "--db", os.path.join(wd, "busy.db"),
                             "--listen", "127.0.0.1:" + str(busy)], name="busy").start()
        rc = b.wait_exit(60)
        took = time.monotonic() - t0
        holder.close()
        tap.ok(rc not in (0, None) and "127.0.0.1:%d" % busy in b.log_text()
               and "port 0" not in b.log_text(),
               "a port in use fails naming the port", b.log_text())
        tap.ok("backfilling" not in b.log_text(),
               "and fails before the backfill (in %.1f s)" % took, b.log_text())
        tap.ok("--listen 127.0.0.1:0" in b.log_text() and "demo: query it" not in b.log_text(),
               "and suggests --listen 127.0.0.1:0, printing no commands that could not work",
               b.log_text())

        r = Daemon(exe, wd, ["--demo", "--db", "/var/lib/thermlog/thermlog.db"], name="real")
        r.start()
        tap.ok(r.wait_exit(20) == 2 and "never writes" in r.log_text(),
               "the demo refuses the service's database", r.log_text())


main(run)
