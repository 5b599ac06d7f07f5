#!/usr/bin/python3
"""thermlog runs: the 649-run job log imported gives numpy's type-7 figures; a re-import changes
nothing; bad rows are named by line and nothing is imported; imported runs take their peak
temperature from the stored minute samples (and `thermlog stats` answers the same with runs);
`runs compare` gives a known ratio and names fingerprint differences; list filters; text within
100 columns. Usage: cli.py THERMLOG FIXTURES_RUNS_DIR"""
import json
import re
import os
import sqlite3
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from thermlog_test import Workdir, main  # noqa: E402

FIGURES = ["duration_s", "energy_j", "temp_max_c", "rss_max_bytes"]


def expected(path):
    out = {}
    with open(path) as f:
        for line in f:
            name, value = line.split()
            out[name] = float(value)
    return out


def run(tap):
    thermlog, fixtures = sys.argv[1:3]

    def tl(db, *args):
        return subprocess.run([thermlog, "--db", db, *args], capture_output=True, text=True)

    def dump(db):
        c = sqlite3.connect(db)
        rows = c.execute("SELECT * FROM runs ORDER BY id").fetchall()
        c.close()
        return rows

    with Workdir("thermlog-runs.") as wd:
        db = os.path.join(wd, "a.db")
        log = os.path.join(fixtures, "jobs-649.csv")
        p = tl(db, "runs", "import", log)
        tap.ok(p.returncode == 0 and "649 imported" in p.stdout, "the 649-run log imports",
               p.stdout + p.stderr)
        want = expected(os.path.join(fixtures, "jobs-649.expected"))
        p = tl(db, "runs", "stats", "--json", "--over", "30m", "--percentile", "90",
               "--percentile", "99")
        stats = json.loads(p.stdout)
        tap.ok(len(stats["labels"]) == 1, "one label", p.stdout)
        lab = stats["labels"][0]
        tap.ok(lab["label"] == "sdxl-npu" and lab["count"] == want["count"] and
               lab["ok"] == want["ok"] and lab["failed"] == want["failed"] and
               lab["signaled"] == 0 and lab["timeout"] == 0 and lab["lost"] == 0,
               "counts by status equal the log's", json.dumps(lab))
        tap.ok(lab["over"] == want["over_1800"], "runs over 30 minutes: %d" % lab["over"])
        # Each figure to its documented quantum (1 ms, 1 mJ, 0.001 °C, 1 byte): a type-7
        # percentile of such values has at most two decimals more (for a whole p), written
        # exactly, without float noise (numpy's 13853.531249999998 is 13853.53125); the mean
        # to three decimals more.
        places = {"duration_s": 3, "energy_j": 3, "temp_max_c": 3, "rss_max_bytes": 0}
        for fig in FIGURES:
            s = lab[fig]
            bad = [k for k in ("p50", "p95", "p90", "p99", "max")
                   if s[k] != round(want["%s.%s" % (fig, k)], places[fig] + 2)]
            tap.ok(s["n"] == want[fig + ".n"] and not bad,
                   "%s: n, p50, p95, p90, p99 and max equal numpy's type 7 exactly" % fig,
                   "differ: %s\n%s" % (bad, json.dumps(s)))
            m = want[fig + ".mean"]
            tap.ok(abs(s["mean"] - m) <= 0.5 * 10 ** -(places[fig] + 3) + 1e-12 * abs(m),
                   "%s: mean equals numpy's to %d decimals" % (fig, places[fig] + 3),
                   "%r vs %r" % (s["mean"], m))
        noise = re.findall(r"\d+\.\d*(?:000000|999999)\d*", p.stdout)
        tap.ok(not noise, "runs stats --json carries no float noise", noise[:5])
        p = tl(db, "runs", "stats", "--over", "30m")
        lines = p.stdout.splitlines()
        tap.ok(all(len(x) <= 100 for x in lines), "the text fits 100 columns", p.stdout)
        rss = [x for x in lines if x.strip().startswith("rss_max")]
        tap.ok(len(rss) == 1 and rss[0].split()[0] == "rss_max_mib" and
               all(re.fullmatch(r"\d+\.\d", v) for v in rss[0].split()[2:]),
               "peak RSS in MiB to 0.1 in the text, not raw bytes", rss)
        text = " ".join(x.strip() for x in lines)
        tap.ok("649 attempts, 404 completed, 245 failed; completed runs p50 1632.38 s, "
               "p95 1756.55 s, max 1838.34 s; 2 runs (0.50 %) over 30 min" in text,
               "the seed-style summary line", p.stdout)

        before = dump(db)
        p = tl(db, "runs", "import", log)
        tap.ok(p.returncode == 0 and "0 imported, 649 already stored" in p.stdout,
               "a re-import imports nothing", p.stdout + p.stderr)
        tap.ok(dump(db) == before, "and changes no row")

        # Bad rows: named by line, and nothing imported.
        bad = os.path.join(wd, "bad.csv")
        with open(bad, "w") as f:
            f.write("start,end,status,label\n"
                    "1790812811.5,1790813128.1,ok,x\n"
                    "1790812811.5,1790813128.1,exploded,x\n"
                    "1790813128.1,1790812811.5,ok,x\n"
                    "1990-01-01T00:00:00Z,1990-01-01T00:10:00Z,ok,x\n"
                    "4070908800,4070909800,ok,x\n")
        p = tl(db, "runs", "import", bad)
        tap.ok(p.returncode == 1, "a log with bad rows is refused", p.stdout + p.stderr)
        for line in (3, 4, 5, 6):
            tap.ok("bad.csv:%d:" % line in p.stderr, "bad row %d is named" % line, p.stderr)
        tap.ok("bad.csv:2:" not in p.stderr, "the good row is not", p.stderr)
        tap.ok("before 2000" in p.stderr and "future" in p.stderr,
               "pre-2000 and future stamps are refused like import's", p.stderr)
        tap.ok(dump(db) == before, "nothing was imported")
        p = tl(db, "runs", "import", "--skip-bad", bad)
        tap.ok(p.returncode == 0 and "1 imported" in p.stdout, "--skip-bad imports the good row",
               p.stdout + p.stderr)

        # Rows naming one run (label and start) twice in one file: a different one is named
        # by line like a bad row, an exact repeat is stored once and said so.
        dup = os.path.join(wd, "dup.csv")
        with open(dup, "w") as f:
            f.write("start,end,status,label\n"
                    "1790900000,1790900100,ok,d\n"
                    "1790900000,1790900200,ok,d\n"
                    "1790900000,1790900100,ok,d\n"
                    "1790900000,1790900100,ok,e\n")
        before_dup = dump(db)
        p = tl(db, "runs", "import", dup)
        tap.ok(p.returncode == 1 and "dup.csv:3: duplicate of line 2" in p.stderr and
               "dup.csv:4:" not in p.stderr and dump(db) == before_dup,
               "a row with another row's label and start but other figures is named by line",
               p.stdout + p.stderr)
        p = tl(db, "runs", "import", "--skip-bad", dup)
        tap.ok(p.returncode == 0 and "2 runs read: 2 imported, 0 already stored, 1 bad rows"
               in p.stdout and "1 rows repeat an earlier row" in p.stdout,
               "--skip-bad: the first of them imported, the exact repeat counted once",
               p.stdout + p.stderr)

        # --time-unit ms|us, as `thermlog import` takes it.
        ms = os.path.join(wd, "ms.csv")
        with open(ms, "w") as f:
            f.write("start,end,status,label\n1790900000123,1790900100456,ok,ms\n")
        p = tl(db, "runs", "import", "--time-unit", "ms", ms)
        got = json.loads(tl(db, "runs", "--json", "--label", "ms").stdout)["runs"]
        tap.ok(p.returncode == 0 and got and got[0]["start"] == "2026-10-02T00:13:20.123Z"
               and got[0]["duration_s"] == 100.333,
               "runs import --time-unit ms reads unix milliseconds", p.stderr + json.dumps(got))
        us = os.path.join(wd, "us.csv")
        with open(us, "w") as f:
            f.write("start,end,status,label\n1790900000123456,1790900100456789,ok,us\n")
        p = tl(db, "runs", "import", "--time-unit", "us", us)
        got = json.loads(tl(db, "runs", "--json", "--label", "us").stdout)["runs"]
        tap.ok(p.returncode == 0 and got and got[0]["start"] == "2026-10-02T00:13:20.123Z",
               "and --time-unit us microseconds", p.stderr + json.dumps(got))
        p = tl(db, "runs", "import", ms)
        tap.ok(p.returncode == 1 and "ms.csv:2: bad start" in p.stderr,
               "without it, a millisecond stamp is a bad row", p.stderr)
        p = tl(db, "runs", "import", "--time-unit", "min", ms)
        tap.ok(p.returncode == 2 and "bad --time-unit 'min'" in p.stderr,
               "an unknown unit is refused", p.stderr)

        # An error column: kept with the run, one line (a traceback's line feeds escaped).
        errlog = os.path.join(wd, "err.csv")
        with open(errlog, "w") as f:
            f.write('start,end,status,label,exit_code,error\n'
                    '1790900000,1790900100,failed,errcol,1,"Traceback:\n  OOM"\n'
                    '1790900200,1790900300,ok,errcol,0,\n')
        p = tl(db, "runs", "import", errlog)
        got = json.loads(tl(db, "runs", "--json", "--label", "errcol").stdout)["runs"]
        shown = json.loads(tl(db, "runs", "show", str(got[0]["id"]), "--json").stdout)["run"] \
            if got else {}
        tap.ok(p.returncode == 0 and len(got) == 2 and got[0]["error"] == "Traceback:\\n  OOM"
               and got[1]["error"] is None and shown.get("error") == "Traceback:\\n  OOM",
               "runs import: an error column lands in runs --json and runs show --json",
               p.stderr + json.dumps(got))
        text = tl(db, "runs", "--label", "errcol").stdout
        rows = text.splitlines()
        tap.ok(len(rows) == 3 and rows[0].split()[-1] == "ERROR" and
               rows[1].endswith("  Traceback:\\n  OOM") and rows[2].endswith(" -"),
               "runs: the error in the last column of its run, escaped", text)
        p = tl(db, "runs", "import", errlog)
        tap.ok(p.returncode == 0 and "0 imported, 2 already stored" in p.stdout + p.stderr,
               "re-imported: unchanged", p.stdout + p.stderr)

        # Lists: --label, --from, --to, ms precision.
        p = tl(db, "runs", "--json", "--label", "sdxl-npu", "--from", "2026-10-01T00:06:00Z",
               "--to", "2026-10-01T00:48:00Z")
        runs = json.loads(p.stdout)["runs"]
        tap.ok([r["start"] for r in runs] == ["2026-10-01T00:06:24.356Z",
                                              "2026-10-01T00:18:01.166Z",
                                              "2026-10-01T00:47:15.147Z"],
               "runs --label --from --to: the runs starting in the window, ms precision",
               p.stdout)
        r = runs[0]
        tap.ok(r["status"] == "failed" and r["exit_code"] == 3 and r["signal"] is None and
               r["energy_j"] is None and r["tags"] == {} and r["duration_s"] == 612.531,
               "a run's fields", json.dumps(r))
        p = tl(db, "runs")
        # Columns as wide as their cells: with short labels, a row up to its error fits 100.
        head = p.stdout.splitlines()[0] if p.stdout else ""
        cut = head.find("ERROR")
        tap.ok(cut > 0 and all(len(x[:cut].rstrip()) <= 100 for x in p.stdout.splitlines()),
               "the list up to its error column fits 100 columns", head)
        long_label = "x" * 200
        lp = os.path.join(wd, "long.csv")
        with open(lp, "w") as f:
            f.write("start,end,status,label\n1793500000,1793500060,ok,%s\n" % long_label)
        tl(db, "runs", "import", lp)
        q = tl(db, "runs", "--label", long_label)
        rows = q.stdout.splitlines()
        tap.ok(q.returncode == 0 and len(rows) == 2 and long_label in rows[1] and
               rows[0].index("START") == rows[1].index("2026-"),
               "a 200-character label is shown whole, the columns after it aligned", q.stdout)
        p = tl(db, "runs", "--label", "sdxl-nup")
        tap.ok(p.returncode == 1 and p.stdout == "" and
               "no run has the label 'sdxl-nup'; did you mean 'sdxl-npu'?" in p.stderr,
               "an unknown label: said, with the near label, and no empty header",
               p.stdout + p.stderr)
        p = tl(db, "runs", "--label", "sdxl-npu", "--from", "2030-01-01T00:00:00Z")
        tap.ok(p.returncode == 0 and p.stdout == "" and "starts in that window" in p.stderr,
               "a known label with no run in the window: said so", p.stdout + p.stderr)
        p = tl(db, "runs", "show", str(r["id"]), "--json")
        show = json.loads(p.stdout)["run"]
        tap.ok(show["id"] == r["id"] and show["figures"]["temp_max_c"]["method"] == "job log",
               "runs show: one run and the method of each figure", p.stdout)
        p = tl(db, "runs", "show", "99999")
        tap.ok(p.returncode == 1 and "no run 99999" in p.stderr, "an unknown id is named",
               p.stderr)

        # Partial energy (a daemon restart mid-run): flagged in the list and the stats.
        c = sqlite3.connect(db)
        pid = c.execute("SELECT min(id) FROM runs WHERE status = 'ok' AND energy_j IS NOT NULL "
                        "AND label = 'sdxl-npu'").fetchone()[0]
        c.execute("UPDATE runs SET energy_coverage = 0.696 WHERE id = ?", (pid,))
        c.commit()
        c.close()
        p = tl(db, "runs", "--label", "sdxl-npu")
        row = [x for x in p.stdout.splitlines() if x.split()[0] == str(pid)]
        tap.ok(row and row[0].split()[7].startswith("~") and
               sum("~" in x for x in p.stdout.splitlines()) == 1,
               "runs: a partial energy is flagged with ~", row)
        p = tl(db, "runs", "stats", "--label", "sdxl")
        tap.ok(p.returncode == 1 and p.stdout == "" and
               "no run has the label 'sdxl'; did you mean 'sdxl-npu'?" in p.stderr,
               "runs stats: a label no run has is an error with the near label, not 'no runs'",
               p.stdout + p.stderr)
        p = tl(db, "runs", "stats", "--label", "sdxl-npu")
        tap.ok("warning: energy of 1 of these 328 ok runs covers part of the run" in p.stdout and
               "energy_j leaves out 76 ok runs without energy and " in p.stdout,
               "runs stats says which runs the energy figure covers", p.stdout)
        st = json.loads(tl(db, "runs", "stats", "--json", "--label", "sdxl-npu").stdout)
        lab = st["labels"][0]
        tap.ok(lab["energy_partial"] == 1 and lab["energy_missing"] == 76 and
               lab["energy_not_ok"] >= 0, "and its JSON", json.dumps(lab)[:300])

        # Imported runs meet the minute samples stored for their windows.
        db2 = os.path.join(wd, "b.db")
        hist = os.path.join(wd, "hist.csv")
        t0 = 1790812800  # 2026-10-01T00:00:00Z
        with open(hist, "w") as f:
            f.write("time,channel,value,unit\n")
            for i in range(60):
                f.write("%d,thermal/soc,%.3f,celsius\n" % (t0 + 60 * i, 40 + i * 0.5))
                f.write("%d,thermal/npu,%.3f,celsius\n" % (t0 + 60 * i, 45 + (i % 7)))
                # A capacitor's thermocouple: a temperature, but no zone of the board.
                f.write("%d,iio/thermocouple,%.3f,celsius\n" % (t0 + 60 * i, 100))
                f.write("%d,meminfo/available,%d,bytes\n" % (t0 + 60 * i, 3000000000 - i * 10**6))
                f.write("%d,meminfo/swap_used,%d,bytes\n" % (t0 + 60 * i, 10**8 + i * 10**6))
        p = tl(db2, "import", hist)
        tap.ok(p.returncode == 0, "minute history imported", p.stderr)
        stats_before = tl(db2, "stats", "--json", "--from", str(t0), "--to", str(t0 + 3600))
        jobs = os.path.join(wd, "jobs.csv")
        with open(jobs, "w") as f:
            # 10:00.5 .. 20:00: samples at minutes 11..20 (soc 45.5..50, npu up to 51)
            f.write("start,end,status\n%d.500,%d,ok\n%d,%d,failed\n" %
                    (t0 + 600, t0 + 1200, t0 + 7200, t0 + 7300))
        p = tl(db2, "runs", "import", "--default-label", "build", jobs)
        tap.ok(p.returncode == 0 and "1 peak temperatures from the stored minute samples"
               in p.stdout, "the peak temperature of a run comes from the minute samples",
               p.stdout + p.stderr)
        runs = json.loads(tl(db2, "runs", "--json").stdout)["runs"]
        tap.ok(runs[0]["label"] == "build" and runs[0]["temp_max_c"] == 51.0,
               "max over the thermal zones (not the 100 °C thermocouple) in [start, end]: 51.0",
               json.dumps(runs[0]))
        tap.ok(runs[1]["temp_max_c"] is None, "no sample in the window: unknown, not 0",
               json.dumps(runs[1]))
        show = json.loads(tl(db2, "runs", "show", str(runs[0]["id"]), "--json").stdout)["run"]
        m = show["figures"]["temp_max_c"]
        tap.ok("minute samples" in m["method"] and m["samples"] == 20,
               "the method is named with the samples it used", json.dumps(m))
        mem = show["figures"]["memory"]
        tap.ok(mem["available_min_bytes"] == 2980000000 and mem["swap_used_max_bytes"] == 120000000
               and mem["samples"] == 10 and "minute samples" in mem["method"],
               "minimum available memory and maximum swap used in the window, method named",
               json.dumps(mem))
        # Fast samples (written by the daemon during live runs; put in with SQL here): the
        # run's 5-second samples, the NPU peaking at the 40th of 120.
        def varint(v):
            out = bytearray()
            while True:
                b = v & 0x7F
                v >>= 7
                out.append(b | (0x80 if v else 0))
                if not v:
                    return bytes(out)

        def zigzag(q):
            return (q << 1) ^ (q >> 63)
        c = sqlite3.connect(db2)
        ids = dict(c.execute("SELECT key, id FROM channels"))
        npu, soc, tc = ids["thermal/npu"], ids["thermal/soc"], ids["iio/thermocouple"]
        start_ms = (t0 + 600) * 1000 + 500
        for i in range(130):  # 10 past the end: not the run's
            npu_q = 60000 + (20000 if i == 40 else i * 10) + (30000 if i > 121 else 0)
            pairs = sorted([(npu, npu_q), (soc, 50000 + i), (tc, 100000)])
            blob, prev = b"", 0
            for cid, q in pairs:
                blob += varint(cid - prev) + varint(zigzag(q))
                prev = cid
            c.execute("INSERT INTO run_samples VALUES (?, ?)", (start_ms + 5000 * i, blob))
        c.commit()
        c.close()
        text = tl(db2, "runs", "show", str(runs[0]["id"]), "--json").stdout
        noise = re.findall(r"\d+\.\d*(?:0000000|9999999)\d*", text)
        tap.ok(not noise, "runs show: values to their resolution, no float noise", noise[:5])
        show = json.loads(text)["run"]
        pk = show["peak"]
        tap.ok(show["fast_samples"] == 120, "runs show counts the run's fast samples (120)",
               json.dumps(show)[:800])
        tap.ok(pk["channel"] == "thermal/npu" and pk["value"] == 80.0 and
               pk["time"] == "2026-10-01T00:13:20.500Z",
               "the peak: the hottest fast sample of a thermal zone, not the thermocouple",
               json.dumps(pk))
        tap.ok(len(pk["samples"]) == 13 and pk["samples"][6]["time"] == pk["time"] and
               pk["samples"][0]["values"] == {"thermal/npu": 60.34, "thermal/soc": 50.034,
                                              "iio/thermocouple": 100.0},
               "with six samples on each side, every channel's value", json.dumps(pk)[:800])
        stats_after = tl(db2, "stats", "--json", "--from", str(t0), "--to", str(t0 + 3600))
        tap.ok(stats_before.stdout == stats_after.stdout and stats_after.returncode == 0,
               "runs change nothing `thermlog stats` answers about the window")

        # Two boards: B takes 1.25 times as long; fingerprints differ in kernel and tags. B's
        # JSON is written compact with \u escapes: the same values, spelled otherwise, are
        # no difference.
        def board(path, factor, kernel, tag, compact=False):
            dumps = ((lambda v: json.dumps(v, separators=(",", ":"))) if compact else
                     (lambda v: json.dumps(v, ensure_ascii=False)))
            csv = os.path.join(wd, os.path.basename(path) + ".csv")
            with open(csv, "w") as f:
                f.write("start,end,status,label,energy_j\n")
                t = 1790812800000
                for i in range(41):
                    d = 1000000 + 7000 * ((i * 17) % 41)
                    st = "ok" if i % 5 else "failed"
                    f.write("%d.%03d,%d.%03d,%s,render,%d\n" % (
                        t // 1000, t % 1000, (t + int(d * factor)) // 1000,
                        (t + int(d * factor)) % 1000, st, d // 100))
                    t += 2 * d
            p = tl(path, "runs", "import", csv)
            tap.ok(p.returncode == 0, "board %s imported" % os.path.basename(path), p.stderr)
            c = sqlite3.connect(path)
            c.execute("UPDATE runs SET fingerprint = ?, tags = ? WHERE id = (SELECT max(id) "
                      "FROM runs WHERE status = 'ok')",
                      (dumps({"board": "Radxa ROCK 5C \u00e9", "kernel": kernel,
                              "governor": {"npu": "rknpu_ondemand", "cpu": ["a", 1]}}),
                       dumps({"model": tag})))
            c.commit()
            c.close()

        dba, dbb = os.path.join(wd, "boarda.db"), os.path.join(wd, "boardb.db")
        board(dba, 1.0, "6.1.75", "sdxl")
        board(dbb, 1.25, "6.1.84", "sdxl-turbo", compact=True)
        p = tl(dba, "runs", "compare", "--label", "render", dbb, "--json")
        tap.ok(p.returncode == 0, "runs compare", p.stderr)
        c = json.loads(p.stdout)
        d = c["duration_s"]
        tap.ok(c["here"]["ok"] == 32 and c["other_board"]["ok"] == 32,
               "counts of each board", p.stdout)
        tap.ok(abs(d["ratio"] - 1.25) < 1e-6, "the ratio of medians is 1.25", json.dumps(d))
        tap.ok(d["ci_low"] <= 1.25 <= d["ci_high"] and d["level"] == 95,
               "its 95 % bootstrap interval holds it", json.dumps(d))
        tap.ok(c["energy_j"]["ratio"] == 1.0, "energy per run is the same", json.dumps(c))
        tap.ok("bootstrap" in c["method"]["ci"] and c["method"]["resamples"] == 2000,
               "the method is stated", json.dumps(c["method"]))
        w = c["warnings"]
        tap.ok(len(w) == 2 and any(x.startswith("kernel differs: \"6.1.75\" here, \"6.1.84\"")
                                   for x in w) and
               any(x.startswith("tags.model differs") for x in w),
               "a warning per fingerprint difference (kernel, tags), none for the same",
               json.dumps(w))
        p = tl(dba, "runs", "compare", "--label", "render", dbb)
        tap.ok(p.returncode == 0 and all(len(x) <= 100 for x in p.stdout.splitlines()) and
               "ratio 1.2500" in p.stdout, "the text comparison", p.stdout)
        tap.ok("failure rate 22.0 % here (9 of 41 ended runs), 22.0 % there (9 of 41)"
               in p.stdout and "peak RSS p50 - MiB here" in p.stdout and
               "few ok runs" not in p.stdout,
               "the text has the failure rate and peaks as the JSON, no small-sample warning "
               "at 32 a side", p.stdout)
        # One side with no fingerprint at all: one line, not one per key; few runs: said.
        small = os.path.join(wd, "small.db")
        with open(os.path.join(wd, "small.csv"), "w") as f:
            f.write("start,end,status,label\n1790812800,1790813800,ok,render\n"
                    "1790823800,1790824800,ok,render\n")
        tl(small, "runs", "import", os.path.join(wd, "small.csv"))
        p = tl(dba, "runs", "compare", "--label", "render", small)
        warn = [x for x in p.stdout.splitlines() if x.startswith("warning:")]
        tap.ok(p.returncode == 0 and
               "warning: fingerprint differs: recorded here, none there" in warn and
               not any(x.startswith("warning: kernel") for x in warn) and
               any("few ok runs (32 here, 2 there" in x for x in warn),
               "no fingerprint on one side: one warning; fewer than 10 ok runs: a warning",
               p.stdout)
        p = tl(dba, "runs", "compare", "--label", "nothing", dbb)
        tap.ok(p.returncode == 1 and "no ok run" in p.stderr, "an unknown label is named",
               p.stderr)

        # Throttling: unknown on boards no daemon watched (no cycle stored), then known from
        # a cycle before the runs on: episodes on B over the first half of its 4 longest ok
        # runs (and over a failed run, which counts nowhere).
        c = json.loads(tl(dba, "runs", "compare", "--label", "render", dbb, "--json").stdout)
        tap.ok(c["here"]["throttle"] is None and c["other_board"]["throttle"] is None and
               not [x for x in c["warnings"] if "throttl" in x],
               "no daemon watched either board: throttling unknown (null), no warning",
               json.dumps(c["here"]))
        for path in (dba, dbb):
            con = sqlite3.connect(path)
            # a cycle is its head row
            con.execute("INSERT INTO samples (ts, clock, data) VALUES (1790812000, 1, x'')")
            con.commit()
            con.close()
        c = json.loads(tl(dba, "runs", "compare", "--label", "render", dbb, "--json").stdout)
        tap.ok(not [x for x in c["warnings"] if "throttl" in x] and
               c["here"]["throttle"] == {"runs": 32, "throttled": 0, "throttled_ratio": 0,
                                         "share": None,
                                         "loaded": {"runs": 32, "throttled": 0,
                                                    "throttled_ratio": 0, "share": None,
                                                    "board_share_used": 32}} and
               c["excluded_throttled"] is None,
               "no throttling on either side: no throttle warning", json.dumps(c["here"]))
        con = sqlite3.connect(dbb)
        okr = con.execute("SELECT id, start_ms, end_ms FROM runs WHERE status = 'ok' "
                          "ORDER BY end_ms - start_ms DESC, id LIMIT 4").fetchall()
        bad = con.execute("SELECT id, start_ms, end_ms FROM runs WHERE status = 'failed' "
                          "LIMIT 1").fetchall()
        for _, s_ms, e_ms in okr + bad:
            # whole seconds from the first one after the start, for half the run
            t0, t1 = -(-s_ms // 1000), -(-s_ms // 1000) + (e_ms - s_ms) // 2000
            con.execute("INSERT INTO throttle_episodes (domain, start_ts, end_ts, last_seen, "
                        "duration_ms, min_hz, max_hz, cause, method) VALUES "
                        "('cpufreq/policy6', ?, ?, ?, ?, 1416000000, 2256000000, 'thermal', "
                        "'poll')", (t0, t1, t1 - 1, (t1 - t0) * 1000))
        rest = [e - s for s, e in con.execute(
            "SELECT start_ms, end_ms FROM runs WHERE status = 'ok' AND id NOT IN (%s)"
            % ",".join(str(r[0]) for r in okr)).fetchall()]
        a_ok = [e - s for s, e in sqlite3.connect(dba).execute(
            "SELECT start_ms, end_ms FROM runs WHERE status = 'ok'").fetchall()]
        con.commit()
        con.close()
        want_shares = sorted(((-(-s // 1000) + (e - s) // 2000) - -(-s // 1000)) * 1000 / (e - s)
                             for _, s, e in okr)
        _, s_ms, e_ms = okr[0]
        t0 = -(-s_ms // 1000)
        want_ms = ((e_ms - s_ms) // 2000) * 1000
        th = json.loads(tl(dbb, "runs", "show", str(okr[0][0]), "--json").stdout)["run"]["throttle"]
        tap.ok(th == {"share": want_ms / (e_ms - s_ms), "loaded_share": None,
                      "loaded_domains": None,
                      "domains": [{"domain": "cpufreq/policy6", "episodes": 1,
                                   "throttled_s": want_ms / 1000,
                                   "share": want_ms / (e_ms - s_ms), "min_hz": 1416000000,
                                   "max_hz": 2256000000, "method": "episodes",
                                   "uncertainty_s": 1}]}
               and t0 * 1000 >= s_ms,
               "runs show: the imported run's episode, its throttled time and share", th)
        c = json.loads(tl(dba, "runs", "compare", "--label", "render", dbb, "--json").stdout)
        tw = [x for x in c["warnings"] if "throttl" in x]
        med = (want_shares[1] + want_shares[2]) / 2
        tap.ok(len(tw) == 1 and tw[0] == "throttle exposure differs: loaded domains throttled in "
               "none of 32 ok runs here, loaded domains throttled in 4 of 32 ok runs, median "
               "throttled share %.2f %% on the other board (--exclude-throttled compares the "
               "unthrottled runs)" % (100 * med),
               "B throttled in 4 ok runs, A in none: one warning saying so", json.dumps(tw))
        tb = c["other_board"]["throttle"]
        tap.ok(tb["runs"] == 32 and tb["throttled"] == 4 and tb["share"]["n"] == 4 and
               abs(tb["share"]["p50"] - med) <= 1e-6,
               "the other board: 4 of 32 throttled, the median of their shares", json.dumps(tb))
        p = tl(dba, "runs", "compare", "--label", "render", "--exclude-throttled", dbb, "--json")
        c = json.loads(p.stdout) if p.returncode == 0 else {}

        def median(v):
            v = sorted(v)
            n = len(v)
            return (v[(n - 1) // 2] + v[n // 2]) / 2

        ratio = median(rest) / median(a_ok)
        tap.ok(c.get("other_board", {}).get("ok") == 28 and c["here"]["ok"] == 32 and
               c["excluded_throttled"] == {"here": 0, "other_board": 4} and
               abs(c["duration_s"]["ratio"] - ratio) < 1e-9 and
               len([x for x in c["warnings"] if "throttl" in x]) == 1,
               "--exclude-throttled: B's 4 throttled ok runs left out (28 left), the ratio of "
               "the rest %.6f, the exposure still warned of" % ratio, p.stdout + p.stderr)
        p = tl(dba, "runs", "compare", "--label", "render", "--exclude-throttled", dbb)
        tap.ok(p.returncode == 0 and "--exclude-throttled left out 0 throttled ok runs here, 4 "
               "there" in p.stdout and "throttled in 0 of 32 ok runs here (median share - %), "
               "0 of 28 there (- %)" in p.stdout and "warning: throttle exposure differs" in p.stdout and
               all(len(x) <= 100 for x in p.stdout.splitlines()),
               "the text says what was left out and warns", p.stdout)

    # Control characters in labels: refused on import (and named escaped); a label already
    # stored with them (an older database) is printed escaped, never raw to the terminal.
    with Workdir("thermlog-runs-esc.") as wd:
        db = os.path.join(wd, "c.db")
        log = os.path.join(wd, "evil.csv")
        with open(log, "w") as f:
            f.write("start,end,status,label\n1790812811,1790813128,ok,\"t\x1b]0;pwned\x07\"\n")
        p = tl(db, "runs", "import", log)
        tap.ok(p.returncode != 0 and "bad label 't\\x1b]0;pwned\\x07'" in p.stderr and
               "\x1b" not in p.stderr and "\x07" not in p.stderr,
               "import: a label with ESC is refused, the error shows it escaped", repr(p.stderr))
        with open(log, "w") as f:
            f.write("start,end,status,label\n1790812811,1790813128,ok,render\n")
        p = tl(db, "runs", "import", log)
        tap.ok(p.returncode == 0, "a good log imports", p.stdout + p.stderr)
        c = sqlite3.connect(db)
        c.execute("UPDATE runs SET label = ?", ("x\x1b]0;pwned\x07\r\n999  forged row",))
        c.commit()
        c.close()
        for args in (["--label", "a\x1bb"], ["--tag", "k=a\nb"], ["--tag", "k\rx=v"]):
            p = tl(db, "run", *args, "--", "true")
            tap.ok(p.returncode != 0 and "expected 1 to 200 characters, no control" in p.stderr,
                   "thermlog run %s: refused by the label rule" % repr(args), p.stderr)
        for args in (["runs"], ["runs", "stats"]):
            p = tl(db, *args)
            raw = [ch for ch in p.stdout if ord(ch) < 0x20 and ch != "\n"]
            rows = [x for x in p.stdout.splitlines() if x.startswith("999")]
            tap.ok(p.returncode == 0 and not raw and not rows and
                   "x\\x1b]0;pwned\\x07" in p.stdout and
                   (args == ["runs"] or "x\\x1b]0;pwned\\x07\\x0d\\n999" in p.stdout),
                   "thermlog %s: a stored label's control characters are escaped" % " ".join(args),
                   repr(p.stdout))


if __name__ == "__main__":
    main(run)
