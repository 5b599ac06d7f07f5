#!/usr/bin/python3
"""GET /api/v1/runs, /api/v1/runs/{id} and /api/v1/runs/stats answer the CLI's JSON byte for
byte; bad requests are named; /metrics exports the runs per label with the labels capped (1000
unique labels give 20 series sets plus "other"), and `promtool check metrics` passes.
Usage: api.py THERMLOGD THERMLOG FIXTURE_SYSFS FIXTURES_RUNS_DIR"""
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import urllib.error
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from thermlog_test import Daemon, Workdir, main, wait_for, write_config  # noqa: E402

CAP = 20


def run(tap):
    thermlogd, thermlog, sysfs, fixtures = sys.argv[1:5]

    def tl(db, *args):
        return subprocess.run([thermlog, "--db", db, *args], capture_output=True, text=True)

    with Workdir("thermlog-runs-api.") as wd:
        db = os.path.join(wd, "t.db")
        p = tl(db, "runs", "import", os.path.join(fixtures, "jobs-649.csv"))
        tap.ok(p.returncode == 0, "the 649-run log imported", p.stderr)
        # 1000 runs with unique labels, 3 of every 4 ok, 10 s to 1000 s long.
        loop = os.path.join(wd, "loop.csv")
        with open(loop, "w") as f:
            f.write("start,end,status,label,energy_j\n")
            for i in range(1000):
                t = 1793000000 + 2000 * i
                f.write("%d,%d,%s,loop-%04d,%d\n" % (t, t + 10 + i, "ok" if i % 4 else "failed",
                                                      i, i))
        p = tl(db, "runs", "import", loop)
        tap.ok(p.returncode == 0 and "1000 imported" in p.stdout, "1000 unique labels imported",
               p.stdout + p.stderr)
        cfg = write_config(os.path.join(wd, "t.yaml"), interval="1s")
        d = Daemon(thermlogd, wd, ["-c", cfg, "--sysfs-root", sysfs, "--db", db,
                                   "--listen", "127.0.0.1:0"]).start()
        port = d.http_port()
        tap.ok(port is not None, "the daemon serves HTTP", d.log_text())
        base = "http://127.0.0.1:%d" % port

        def get(path):
            try:
                with urllib.request.urlopen(base + path, timeout=20) as r:
                    return r.status, r.read().decode()
            except urllib.error.HTTPError as e:
                return e.code, e.read().decode()

        for path, args in [("/api/v1/runs?label=sdxl-npu&from=2026-10-02&to=2026-10-03",
                            ["runs", "--json", "--label", "sdxl-npu", "--from", "2026-10-02",
                             "--to", "2026-10-03"]),
                           ("/api/v1/runs/3", ["runs", "show", "3", "--json"]),
                           ("/api/v1/runs/stats?label=sdxl-npu&over=30m&percentile=90"
                            "&percentile=99.5",
                            ["runs", "stats", "--json", "--label", "sdxl-npu", "--over", "30m",
                             "--percentile", "90", "--percentile", "99.5"]),
                           ("/api/v1/runs/stats", ["runs", "stats", "--json"])]:
            status, body = get(path)
            cli = tl(db, *args)
            tap.ok(status == 200 and cli.returncode == 0 and body == cli.stdout,
                   "GET %s = thermlog %s" % (path, " ".join(args)),
                   "%d\n%s\n---\n%s" % (status, body[:600], cli.stdout[:600]))
        # The list is bounded: the newest 1000 of the 1649 unless limit= says otherwise, cut
        # short only with "truncated" saying so; the CLI's --last N is the same list.
        for path, args in [("/api/v1/runs", ["runs", "--json", "--last", "1000"]),
                           ("/api/v1/runs?label=sdxl-npu&limit=3",
                            ["runs", "--json", "--label", "sdxl-npu", "--last", "3"])]:
            status, body = get(path)
            cli = tl(db, *args)
            tap.ok(status == 200 and cli.returncode == 0 and body == cli.stdout,
                   "GET %s = thermlog %s" % (path, " ".join(args)),
                   "%d\n%s\n---\n%s" % (status, body[:300], cli.stdout[:300]))
        status, body = get("/api/v1/runs")
        listed = json.loads(body) if status == 200 else {}
        everything = json.loads(tl(db, "runs", "--json").stdout)
        ids = [r["id"] for r in everything["runs"]]
        tap.ok(len(ids) == 1649 and "truncated" not in everything,
               "thermlog runs --json lists all 1649, not truncated", str(len(ids)))
        tap.ok([r["id"] for r in listed.get("runs", [])] == ids[-1000:] and
               listed.get("truncated") == {"limit": 1000, "matched": 1649},
               "GET /api/v1/runs: the newest 1000, oldest first, truncated {limit 1000, "
               "matched 1649}", str(listed.get("truncated")))
        status, body = get("/api/v1/runs?limit=100000")
        tap.ok(status == 200 and "truncated" not in json.loads(body) and
               len(json.loads(body)["runs"]) == 1649, "limit=100000 lists every run")
        for bad in ("0", "100001", "ten", "-5"):
            status, body = get("/api/v1/runs?limit=" + bad)
            tap.ok(status == 400 and "'limit'" in body, "limit=%s is 400 naming limit" % bad,
                   body)
        p = tl(db, "runs", "--last", "0")
        tap.ok(p.returncode == 2 and "--last" in p.stderr, "--last 0 is a usage error naming it",
               p.stderr)
        status, body = get("/api/v1/runs/99999")
        tap.ok(status == 404 and "no run 99999" in body, "an unknown run is 404", body)
        status, body = get("/api/v1/runs/stats?percentile=101")
        tap.ok(status == 400 and "percentile" in body, "a bad percentile is named", body)
        status, body = get("/api/v1/runs/stats?over=long")
        tap.ok(status == 400 and "'over'" in body, "a bad --over is named", body)
        for path in ("/api/v1/runs/stats?label=sdxl", "/api/v1/runs?label=sdxl-nup"):
            status, body = get(path)
            p = tl(db, "runs", "stats", "--label", path.rsplit("=", 1)[1])
            tap.ok(status == 400 and json.loads(body).get("parameter") == "label"
                   and "did you mean 'sdxl-npu'?" in body and p.returncode == 1
                   and json.loads(body)["error"].split(": ", 1)[1] in p.stderr,
                   "%s: a label no run has is a 400 with the CLI's suggestion" % path,
                   body + p.stderr)
        status, body = get("/api/v1/runs?from=yesterdayish")
        tap.ok(status == 400 and "'from'" in body, "a bad time is named", body)
        status, body = get("/api/v1/runs/3x")
        tap.ok(status == 404, "a run path that is no id is 404", body)

        # /metrics: refreshed once per cycle from the database, never per scrape.
        def runs_metrics():
            s, text = get("/metrics")
            return text if "thermlog_runs_total" in text else None
        text = wait_for(runs_metrics, 20)
        tap.ok(text is not None, "/metrics carries the runs", d.log_text())
        series = [x for x in text.splitlines() if x.startswith("thermlog_run")]
        labels = set(re.findall(r'label="([^"]*)"', "\n".join(series)))
        tap.ok(len(labels) == CAP + 1 and "other" in labels and "sdxl-npu" in labels,
               "1649 runs in 1001 labels: %d labels exported (the cap, plus other)" % len(labels),
               sorted(labels))
        per_label = 5 + (16 + 1 + 2) + 1 + 1
        tap.ok(len(series) == (CAP + 1) * per_label,
               "%d series: bounded by the cap, not by the runs" % len(series))

        def value(name, **lab):
            want = ",".join('%s="%s"' % kv for kv in lab.items())
            for x in series:
                if x.startswith(name + "{" + want + "}"):
                    return float(x.rsplit(" ", 1)[1])
            return None
        tap.ok(value("thermlog_runs_total", label="sdxl-npu", status="ok") == 404 and
               value("thermlog_runs_total", label="sdxl-npu", status="failed") == 245,
               "the 649-run label's counts")
        total = sum(value("thermlog_runs_total", label=l, status=s) for l in labels
                    for s in ("ok", "failed", "signaled", "timeout", "lost"))
        tap.ok(total == 1649, "every run is counted once, folded or not (%g)" % total)
        tap.ok(value("thermlog_run_duration_seconds_count", label="sdxl-npu") == 404 and
               value("thermlog_run_duration_seconds_bucket", label="sdxl-npu", le="1800") == 402
               and value("thermlog_run_duration_seconds_bucket", label="sdxl-npu",
                         le="+Inf") == 404,
               "the duration histogram: 402 of 404 ok runs within 1800 s")
        tap.ok(value("thermlog_run_active", label="sdxl-npu") == 0, "no run active")
        e = value("thermlog_run_energy_joules_total", label="sdxl-npu")
        want_e = 0.0
        with open(os.path.join(fixtures, "jobs-649.csv")) as f:
            next(f)
            for line in f:
                v = line.split(",")[5]
                want_e += float(v) if v else 0.0
        tap.ok(e is not None and abs(e - want_e) < 1e-6 * want_e,
               "energy total of the label (%.3f J)" % want_e, "%r" % e)
        # The busiest label and then the first 19 by name are exported; the rest fold.
        kept = ["loop-%04d" % i for i in range(CAP - 1)]
        tap.ok(labels == set(kept) | {"sdxl-npu", "other"}, "the busiest labels, then by name")
        other_ok = sum(1 for i in range(CAP - 1, 1000) if i % 4)
        tap.ok(value("thermlog_runs_total", label="other", status="ok") == other_ok,
               "the folded labels' %d ok runs are under other" % other_ok)
        promtool = shutil.which("promtool")
        if promtool:
            r = subprocess.run([promtool, "check", "metrics"], input=text, capture_output=True,
                               text=True)
            tap.ok(r.returncode == 0, "promtool check metrics", r.stdout + r.stderr)
        d.stop()

        # runs.metrics_labels sets the cap; a reload (SIGHUP) applies a new one.
        def exported():
            s, text = get("/metrics")
            lines = [x for x in text.splitlines() if x.startswith("thermlog_run")]
            return lines, set(re.findall(r'label="([^"]*)"', "\n".join(lines)))
        cfg = write_config(os.path.join(wd, "t.yaml"), interval="1s",
                           extra="runs:\n  metrics_labels: 5\n")
        d = Daemon(thermlogd, wd, ["-c", cfg, "--sysfs-root", sysfs, "--db", db,
                                   "--listen", "127.0.0.1:0"], name="cap5").start()
        port = d.http_port()
        base = "http://127.0.0.1:%d" % port
        got = wait_for(lambda: exported() if exported()[1] else None, 20)
        lines, labels = got or ([], set())
        tap.ok(labels == {"sdxl-npu", "loop-0000", "loop-0001", "loop-0002", "loop-0003",
                          "other"} and len(lines) == 6 * per_label,
               "runs.metrics_labels: 5 exports 5 labels plus other (%d series)" % len(lines),
               sorted(labels))
        write_config(os.path.join(wd, "t.yaml"), interval="1s",
                     extra="runs:\n  metrics_labels: 2\n")
        d.send(signal.SIGHUP)
        got = wait_for(lambda: exported() if len(exported()[1]) == 3 else None, 20)
        tap.ok(got and got[1] == {"sdxl-npu", "loop-0000", "other"},
               "after a reload with 2: 2 labels plus other", got and sorted(got[1]))
        # Runs imported by another process while the daemon runs reach /metrics.
        more = os.path.join(wd, "more.csv")
        with open(more, "w") as f:
            f.write("start,end,status,label,energy_j\n")
            for i in range(3):
                t = 1795000000 + 2000 * i
                f.write("%d,%d,ok,sdxl-npu,%d\n" % (t, t + 1500, 100 + i))
        p = tl(db, "runs", "import", more)
        tap.ok(p.returncode == 0 and "3 imported" in p.stdout, "3 more runs imported",
               p.stdout + p.stderr)

        def sdxl_ok():
            s, text = get("/metrics")
            m = re.search(r'^thermlog_runs_total\{label="sdxl-npu",status="ok"\} (\S+)$', text,
                          re.M)
            return m and float(m.group(1)) == 407
        tap.ok(wait_for(sdxl_ok, 20), "an import while the daemon runs reaches /metrics (407 ok)")
        d.stop()


if __name__ == "__main__":
    main(run)
