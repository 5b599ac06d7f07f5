#!/usr/bin/python3
"""A run's tags: from a job log's tag: columns and thermlog run --tag, shown in the list (text
and JSON); --tag KEY=VALUE filters runs, runs stats, runs compare and report, and ?tag= the API
alike (byte for byte the CLI's JSON); runs stats --by TAGKEY splits a label's figures per
value (cold against warm in one table), each group's figures those of the runs with that value.

usage: tags.py THERMLOGD THERMLOG FIXTURE_SYSFS
"""
import csv
import io
import json
import os
import subprocess
import sys
import urllib.error
import urllib.parse
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from thermlog_test import Daemon, Workdir, main, wait_cycles, write_config  # noqa: E402

THERMLOGD, THERMLOG, SYSFS = sys.argv[1:4]
T0 = 1790812800  # 2026-10-01T00:00:00Z


def job_log(path, slower=1.0):
    """Twelve llm runs: cold ones take 130 s, warm ones 100 s, on two SDKs; three rerank runs
    without a start tag."""
    with open(path, "w") as f:
        f.write("start,end,status,label,tag:start,tag:sdk,metric:tok_s\n")
        t = T0
        for i in range(12):
            cold = i % 3 == 0
            d = (130 if cold else 100) * slower + i
            f.write("%d,%d,ok,llm,%s,%s,%d\n" % (t, t + d, "cold" if cold else "warm",
                                                 "2.3.2" if i < 6 else "2.3.0", 30 - i))
            t += int(d) + 60
        for i in range(3):
            f.write("%d,%d,ok,rerank,,2.3.2,\n" % (t, t + 40))
            t += 100


def run(tap):
    with Workdir("thermlog-tags.") as wd:
        dbs = []
        for name, slower in (("a", 1.0), ("b", 1.25)):
            log = os.path.join(wd, name + ".csv")
            job_log(log, slower)
            db = os.path.join(wd, name + ".db")
            p = subprocess.run([THERMLOG, "--db", db, "runs", "import", log],
                               capture_output=True, text=True)
            tap.ok(p.returncode == 0 and "15 imported" in p.stdout,
                   "board %s: a job log with tag: columns imports" % name, p.stdout + p.stderr)
            dbs.append(db)
        db = dbs[0]

        def tl(*args):
            return subprocess.run([THERMLOG, "--db", db, *args], capture_output=True,
                                  text=True)

        runs = json.loads(tl("runs", "--json").stdout)["runs"]
        tap.ok(runs[0]["tags"] == {"start": "cold", "sdk": "2.3.2"} and
               runs[12]["tags"] == {"sdk": "2.3.2"},
               "each run keeps its tags; an empty cell is no tag", runs[:1] + runs[12:13])
        p = tl("runs", "--label", "llm", "--last", "2")
        tap.ok("start=warm sdk=2.3.0" in p.stdout and "TAGS" in p.stdout,
               "the list's text shows the tags", p.stdout)
        cold = json.loads(tl("runs", "--json", "--tag", "start=cold").stdout)["runs"]
        tap.ok([r["id"] for r in cold] == [r["id"] for r in runs
                                           if r["tags"].get("start") == "cold"] and len(cold) == 4,
               "runs --tag start=cold lists the four cold runs", cold)
        both = json.loads(tl("runs", "--json", "--tag", "start=cold", "--tag",
                             "sdk=2.3.0").stdout)["runs"]
        tap.ok(len(both) == 2 and all(r["tags"] == {"start": "cold", "sdk": "2.3.0"}
                                      for r in both), "two --tag: runs carrying both", both)
        none = tl("runs", "--tag", "start=lukewarm")
        tap.ok(none.returncode == 0 and none.stdout == "", "a tag no run carries: no runs",
               none.stdout + none.stderr)
        bad = tl("runs", "--tag", "start")
        tap.ok(bad.returncode == 2 and "KEY=VALUE" in bad.stderr, "--tag needs KEY=VALUE",
               bad.stderr)

        st = json.loads(tl("runs", "stats", "--json", "--label", "llm", "--by",
                           "start").stdout)["labels"]
        groups = {(g["label"], g["by"]["value"]): g for g in st}
        want = {"cold": [130 + i for i in range(12) if i % 3 == 0],
                "warm": [100 + i for i in range(12) if i % 3]}
        tap.ok(set(groups) == {("llm", "cold"), ("llm", "warm")} and
               all(groups[("llm", v)]["count"] == len(d) and
                   groups[("llm", v)]["duration_s"]["max"] == max(d) for v, d in want.items()),
               "runs stats --by start: one group per value, each over its own runs", st)
        p = tl("runs", "stats", "--label", "llm", "--by", "start")
        tap.ok("llm [start=cold]" in p.stdout and "llm [start=warm]" in p.stdout,
               "the text heads each group with its value", p.stdout)
        st = json.loads(tl("runs", "stats", "--json", "--by", "start").stdout)["labels"]
        tap.ok(any(g["label"] == "rerank" and g["by"]["value"] is None for g in st),
               "runs without the tag form their own group (value null)", st)
        st = json.loads(tl("runs", "stats", "--json", "--tag", "sdk=2.3.0").stdout)["labels"]
        tap.ok(len(st) == 1 and st[0]["count"] == 6 and st[0]["metrics"][0]["n"] == 6,
               "runs stats --tag: the runs (and metrics) of that tag only", st)

        cmp = subprocess.run([THERMLOG, "--db", db, "runs", "compare", "--label", "llm", "--tag",
                              "start=warm", "--json", dbs[1]], capture_output=True, text=True)
        c = json.loads(cmp.stdout) if cmp.returncode == 0 else {}
        d = c.get("duration_s") or {}
        tap.ok(c.get("here", {}).get("ok") == 8 and c.get("other_board", {}).get("ok") == 8 and
               abs(d.get("median_here", 0) - 106) < 1e-9 and
               abs(d.get("median_other", 0) - 131) < 1e-9,
               "runs compare --tag start=warm: the warm runs of both boards", cmp.stdout)

        rep = os.path.join(wd, "r.md")
        p = subprocess.run([THERMLOG, "--db", db, "report", "--tag", "start=cold", "--format",
                            "md", "-o", rep], capture_output=True, text=True)
        text = open(rep).read() if p.returncode == 0 else ""
        rows = [x for x in text.splitlines() if x.startswith("| llm |")]
        tap.ok(rows and "| llm | 4 | 4 |" in rows[0] and "rerank" not in text,
               "report --tag: only the tagged runs", p.stderr + "\n".join(rows))

        # CSV where a review wants a file: the list reads back through runs import.
        out = tl("runs", "--csv").stdout
        rows = list(csv.DictReader(io.StringIO(out)))
        tap.ok(len(rows) == 15 and rows[0]["tag:start"] == "cold" and
               rows[0]["metric:tok_s"] == "30" and rows[12]["tag:start"] == "",
               "runs --csv: a row a run, a tag:KEY and a metric:NAME column each", out[:300])
        back = os.path.join(wd, "back.csv")
        with open(back, "w") as f:
            f.write(out)
        copy = os.path.join(wd, "copy.db")
        p = subprocess.run([THERMLOG, "--db", copy, "runs", "import", back],
                           capture_output=True, text=True)
        again = subprocess.run([THERMLOG, "--db", copy, "runs", "--json"], capture_output=True,
                               text=True)
        tags_back = [r["tags"] for r in json.loads(again.stdout)["runs"]] if again.stdout else []
        tap.ok(p.returncode == 0 and "15 imported" in p.stdout and
               tags_back == [r["tags"] for r in runs],
               "and imports back with its tags and metrics", p.stdout + p.stderr)
        st = list(csv.DictReader(io.StringIO(tl("runs", "stats", "--csv").stdout)))
        figures = {(r["label"], r["figure"]) for r in st}
        tok = [r for r in st if r["figure"] == "metric:tok_s"]
        tap.ok(("llm", "duration_s") in figures and tok and tok[0]["n"] == "12",
               "runs stats --csv: a row a label and figure, metrics included", st[:3])

        cfg = write_config(os.path.join(wd, "t.yaml"))
        dm = Daemon(THERMLOGD, wd, ["-c", cfg, "--sysfs-root", SYSFS, "--db", db, "--listen",
                                    "127.0.0.1:0"]).start()
        port = dm.http_port()
        tap.ok(port is not None, "a daemon serves the database", dm.log_text())
        wait_cycles(db, 1, 30, dm)  # its first cycle: the runs' throttling known from here on
        base = "http://127.0.0.1:%d/api/v1/" % port

        def get(path):
            try:
                with urllib.request.urlopen(base + path, timeout=20) as r:
                    return r.status, r.read().decode()
            except urllib.error.HTTPError as e:
                return e.code, e.read().decode()

        q = urllib.parse.quote
        for path, args in [("runs?tag=" + q("start=cold") + "&tag=" + q("sdk=2.3.0"),
                            ["runs", "--json", "--tag", "start=cold", "--tag", "sdk=2.3.0"]),
                           ("runs/stats?by=start&tag=" + q("sdk=2.3.2"),
                            ["runs", "stats", "--json", "--by", "start", "--tag", "sdk=2.3.2"])]:
            status, body = get(path)
            cli = tl(*args).stdout
            tap.ok(status == 200 and body == cli, "GET %s = thermlog %s" % (path, " ".join(args)),
                   body[:400] + "\n---\n" + cli[:400])
        status, body = get("runs?tag=nokey")
        tap.ok(status == 400 and "'tag'" in body, "?tag= without KEY=VALUE is 400", body)
        status, body = get("report?format=md&tag=" + q("start=cold"))
        tap.ok(status == 200 and "rerank" not in body and "| llm | 4 | 4 |" in body,
               "GET /api/v1/report?tag= shows the tagged runs only", body[:300])
        dm.stop()
        p = tl("throttle", "--csv")
        tap.ok(p.returncode == 0 and p.stdout.startswith("domain,start,end,duration_s,min_hz,"),
               "throttle --csv: the episodes, a row each, under their header",
               p.stdout + p.stderr)


main(run)
