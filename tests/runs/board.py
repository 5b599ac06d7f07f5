#!/usr/bin/python3
"""Per-test board figures against a recomputation from `thermlog export`: on the demo's week,
every zone's, clock's, cluster's and NPU core's mean, p95 and max in `runs stats --json`'s
"board" of a label equal the ones recomputed in Python from the exported minute samples over
the label's ok runs' windows, each window weighed as `stats --weight time` weighs it (a sample
the seconds since the cycle before it in the window, the first none; p95 the weighted inverted
CDF; a cluster's load the mean of its CPUs at each cycle); the mean power of a board power
channel (an INA226's minute samples, imported: the demo leaves hwmon off) alike; each clock's
residency the time-weighted share of each clock value; and the throttled shares, the board's
and the loaded domains', recomputed from `thermlog throttle --json`'s episodes clipped to each
run (a cooling device's counted time where the run's figures have it) as docs/RUNS.md defines
them, each run weighed by its duration. And a run's throttled share is
reported twice, named: a reranker that only overlapped an sdxl job's heat has the board's share
but none in the domains it loaded (item 5 of the trust issue).

usage: board.py THERMLOGD THERMLOG
"""
import csv
import io
import json
import math
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from thermlog_test import Demo, get_json, main  # noqa: E402

THERMLOGD, THERMLOG = sys.argv[1:3]
POWER = "hwmon/ina226-i2c-2-40/power1"
CLUSTERS = {"cluster/policy0": [0, 1, 2, 3], "cluster/policy4": [4, 5],
            "cluster/policy6": [6, 7]}


def spacing_weights(stamps):
    """struct lifetime_spacing over one window's cycles: the seconds each stands for."""
    out, prev_ts, prev_spacing, prev_dt = [], None, 0, 0
    for ts in stamps:
        if prev_ts is None:
            dt = 0
        else:
            spacing = ts - prev_ts
            dt = prev_dt if prev_spacing > 0 and spacing * 2 > prev_spacing * 3 else spacing
            prev_spacing = spacing
        out.append(dt)
        prev_ts, prev_dt = ts, dt
    return out


def weighted(values):
    """(value, seconds) pairs: the mean, numpy's weighted inverted_cdf p95, the max."""
    total = sum(w for _, w in values)
    if total == 0:
        return None
    mean = sum(v * w for v, w in values) / total
    acc, p95 = 0, None
    for v, w in sorted(values):
        acc += w
        if acc >= 0.95 * total:
            p95 = v
            break
    return mean, p95


def run(tap):
    with Demo(THERMLOGD) as demo:
        tap.ok(demo.url, "the demo starts", demo.stderr())
        # One code path: GET /api/v1/runs/stats's per-test figures are the CLI's, over a window
        # the live cycles no longer change.
        to = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() - 4 * 3600))
        api = get_json(demo.url + "api/v1/runs/stats?label=sdxl-image&to=" + to)
        p = subprocess.run([THERMLOG, "--db", demo.db, "runs", "stats", "--json", "--label",
                            "sdxl-image", "--to", to], capture_output=True, text=True)
        cli = json.loads(p.stdout) if p.returncode == 0 else {}
        a = api["labels"][0]["board"] if api.get("labels") else None
        c = cli["labels"][0]["board"] if cli.get("labels") else None
        tap.ok(a and a == c and a["runs"] > 10,
               "GET /api/v1/runs/stats's per-test figures equal runs stats --json's",
               json.dumps(a)[:300] + "\n" + json.dumps(c)[:300])
        demo.stop()
        db = demo.db

        def tl(*args):
            p = subprocess.run([THERMLOG, "--db", db, *args], capture_output=True, text=True)
            return p.stdout

        # A board power channel in the minute history (a real board's INA226 through hwmon;
        # the demo reads it for the runs' energy alone): imported at the cycles' own stamps.
        power_csv = os.path.join(os.path.dirname(db), "power.csv")
        with open(power_csv, "w") as f:
            f.write("unix,channel,value,unit,label\n")
            for row in csv.DictReader(io.StringIO(tl("export", "--channel",
                                                     "thermal/soc-thermal"))):
                f.write("%s,%s,%.3f,watts,board power\n" % (
                    row["unix"], POWER, 2 + 0.4 * (float(row["value"]) - 35)))
        p = subprocess.run([THERMLOG, "--db", db, "import", power_csv], capture_output=True,
                           text=True)
        tap.ok(p.returncode == 0, "a board power channel imported beside the demo's week",
               p.stderr)

        runs = [r for r in json.loads(tl("runs", "--json", "--last", "100000"))["runs"]
                if r["label"] == "sdxl-image" and r["status"] == "ok"]
        stats = json.loads(tl("runs", "stats", "--json", "--label", "sdxl-image"))["labels"][0]
        board = stats["board"]
        tap.ok(board and board["runs"] == len(runs) == stats["ok"],
               "runs stats --json carries the board figures of the label's ok runs",
               json.dumps(board)[:300])

        def ms(iso):
            from datetime import datetime, timezone
            t = datetime.strptime(iso.rstrip("Z").split(".")[0], "%Y-%m-%dT%H:%M:%S")
            frac = iso.rstrip("Z").split(".")[1] if "." in iso else "0"
            return int(t.replace(tzinfo=timezone.utc).timestamp()) * 1000 + int(frac.ljust(3, "0"))

        windows = []
        for r in sorted(runs, key=lambda r: r["start"]):
            s, e = ms(r["start"]), ms(r["end"])
            if windows and s <= windows[-1][1]:
                windows[-1][1] = max(windows[-1][1], e)
            else:
                windows.append([s, e])
        export = tl("export")
        samples = {}  # ts -> {channel: value}
        for row in csv.DictReader(io.StringIO(export)):
            samples.setdefault(int(row["unix"]), {})[row["channel"]] = float(row["value"])
        stamps = sorted(samples)
        want = {}  # key -> [(value, seconds)], and the max over samples
        maxima = {}
        for s_ms, e_ms in windows:
            lo, hi = -(-s_ms // 1000), e_ms // 1000 + 1
            ts = [t for t in stamps if lo <= t < hi]
            for t, w in zip(ts, spacing_weights(ts)):
                vals = samples[t]
                for key, v in vals.items():
                    want.setdefault(key, []).append((v, w))
                    maxima[key] = max(maxima.get(key, v), v)
                for name, cpus in CLUSTERS.items():
                    got = [vals["load/cpu%d" % c] for c in cpus if "load/cpu%d" % c in vals]
                    if got:
                        v = math.floor(sum(got) / len(got) / 0.001 + 0.5) * 0.001
                        want.setdefault(name, []).append((v, w))
                        maxima[name] = max(maxima.get(name, v), v)
        figures = board["zones"] + board["clocks"] + board["loads"] + board["power"]
        tap.ok([f["key"] for f in board["power"]] == [POWER],
               "the board power channel is among the figures", board["power"])
        checked, bad = 0, []
        for f in figures:
            r = weighted(want.get(f["key"], []))
            if r is None:
                bad.append((f["key"], "nothing to recompute"))
                continue
            mean, p95 = r
            if abs(f["mean"] - mean) > 1e-9 * max(1, abs(mean)) or \
                    abs(f["p95"] - p95) > 1e-9 * max(1, abs(p95)) or \
                    abs(f["max"] - maxima[f["key"]]) > 1e-9 * max(1, abs(f["max"])):
                bad.append((f["key"], f["mean"], mean, f["p95"], p95, f["max"],
                            maxima[f["key"]]))
            checked += 1
        tap.ok(checked >= 19 and not bad,
               "every zone, clock, cluster, NPU core and power figure (%d) equals the "
               "recomputation from export over the %d windows" % (checked, len(windows)), bad)
        # Residency: each clock value's share of the time weighed.
        bad, states = [], 0
        for c in board["clocks"]:
            secs = {}
            for v, w in want[c["key"]]:
                secs[v] = secs.get(v, 0) + w
            total = sum(secs.values())
            got = {x["hz"]: x["share"] for x in c["residency"]}
            exp = {v: w / total for v, w in secs.items() if w > 0}
            states += len(exp)
            if sorted(got) != sorted(exp) or \
                    any(abs(got[v] - exp[v]) > 1e-12 for v in exp):
                bad.append((c["key"], got, exp))
        tap.ok(states > 10 and not bad,
               "every clock's residency (%d clock values) equals each value's time-weighted "
               "share recomputed from export" % states, bad)
        throttle_shares(tap, tl, "sdxl-image", runs, board["throttle"], ms)
        # The reranker's runs sat in the sdxl jobs' heat: its loaded domains' share is less.
        rr_runs = [r for r in json.loads(tl("runs", "--json", "--last", "100000"))["runs"]
                   if r["label"] == "reranker" and r["status"] == "ok"]
        rr_board = json.loads(tl("runs", "stats", "--json", "--label",
                                 "reranker"))["labels"][0]["board"]
        throttle_shares(tap, tl, "reranker", rr_runs, rr_board["throttle"], ms)
        clock = [c for c in board["clocks"] if c["key"] == "cpufreq/policy4"][0]
        tap.ok(abs(sum(x["share"] for x in clock["residency"]) - 1) < 1e-9 and
               clock["max"] == 2256000000,
               "a clock's residency adds up to the time weighed; its highest reached, 2256 MHz",
               clock)

        # Item 5: the board's share and the loaded domains' share, named.
        # A reranker run after an sdxl job, in its heat: the big cores capped, not busy.
        rr = [r for r in json.loads(tl("runs", "--json", "--last", "100000"))["runs"]
              if r["label"] == "reranker" and r["status"] == "ok" and r["throttle"] and
              r["throttle"]["share"] > 0.5 and
              "cpufreq/policy4" not in r["throttle"]["loaded_domains"]]
        tap.ok(rr and all(r["throttle"]["loaded_share"] == 0 and
                          "cpufreq/policy0" in r["throttle"]["loaded_domains"] for r in rr),
               "%d reranker runs in an sdxl job's heat, big cores capped but idle: the board's "
               "share above 50 %%, none in the domains they loaded (policy0, the NPU)"
               % len(rr), [r["throttle"] for r in rr[:2]])
        rst = json.loads(tl("runs", "stats", "--json", "--label", "reranker"))["labels"][0]
        t = rst["throttle"]
        tap.ok(t["throttled"] > 0 and t["loaded"]["throttled"] < t["throttled"] and
               t["loaded"]["board_share_used"] == 0,
               "runs stats: the board throttled in %d reranker runs, their loaded domains in %d"
               % (t["throttled"], t["loaded"]["throttled"]), t)
        text = tl("runs", "stats", "--label", "sdxl-image", "--board")
        tap.ok("cluster/policy4" in text and "thermal/npu-thermal" in text and
               "the board during the" in text and all(len(x) <= 100 for x in
                                                     text.splitlines()[:3]),
               "runs stats --board prints the table", text)


def throttle_shares(tap, tl, label, runs, got, ms):
    """The runs' throttled shares, the board's and the loaded domains', recomputed: per run and
    domain the episodes of `thermlog throttle --json` clipped to the run (a counters episode its
    counted time, at most the part inside), replaced by the most a capping cooling device of
    the domain counted where the run's figures have it (more than 0, at most the run); the
    board's share the most throttled domain's, the loaded share the most throttled among the
    domains whose mean load was at least 25 % (a CPU cluster, the NPU for its devfreq device);
    over the runs each weighed by its duration (docs/RUNS.md)."""
    first = min(ms(r["start"]) for r in runs) // 1000 - 3600
    last = max(ms(r["end"]) for r in runs) // 1000 + 3600
    eps = json.loads(tl("throttle", "--json", "--from", str(first), "--to", str(last)))
    eps = eps["episodes"]
    board = loaded = total = 0.0
    per_run = []
    for r in runs:
        s_ms, e_ms = ms(r["start"]), ms(r["end"])
        dur = e_ms - s_ms
        fig = json.loads(tl("runs", "show", str(r["id"]), "--json"))["run"]["figures"] or {}
        times = {}
        for ep in eps:
            a = ms(ep["start"])
            b = ms(ep["end"] or ep["last_seen"])
            if not (a < e_ms and b >= s_ms):
                continue
            inside = max(0, min(b, e_ms) - max(a, s_ms))
            if ep["method"] == "counters":
                inside = min(inside, round(ep["duration_s"] * 1000))
            times[ep["domain"]] = times.get(ep["domain"], 0) + inside
        counted = {}
        for d in (fig.get("cooling") or {}).get("devices", []):
            t = round(d["active_s"] * 1000) if d.get("active_s") is not None else 0
            if d.get("domain") and 0 < t <= dur:
                counted[d["domain"]] = max(counted.get(d["domain"], 0), t)
        times.update(counted)
        shares = {d: t / dur for d, t in times.items()}
        load = fig.get("load")
        busy, npu = [], False
        if isinstance(load, dict):
            busy = ["cpufreq/" + c["name"] for c in load.get("clusters", [])
                    if c.get("mean_pct") is not None and c["mean_pct"] >= 25]
            npu = any(c.get("mean_pct") is not None and c["mean_pct"] >= 25
                      for c in load.get("npu", []))
        b_share = max(shares.values(), default=0)
        l_share = max([v for d, v in shares.items() if d in busy or
                       (npu and d.startswith("devfreq/") and "npu" in d[8:])], default=0) \
            if isinstance(load, dict) else b_share
        per_run.append((r["id"], b_share, r["throttle"]["share"]))
        board += b_share * dur / 1000
        loaded += l_share * dur / 1000
        total += dur / 1000
    want = (board / total, loaded / total)
    bad = [x for x in per_run if abs(x[1] - x[2]) > 1e-9]
    tap.ok(not bad and abs(got["board_share"] - want[0]) < 1e-12 and
           abs(got["loaded_share"] - want[1]) < 1e-12 and got["runs"] == len(runs) and
           want[0] > 0.01,
           "%s: the throttled shares (the board's %.4f, the loaded domains' %.4f) equal the "
           "recomputation from throttle --json's episodes over the %d runs"
           % (label, want[0], want[1], len(runs)), (got, want, bad[:5]))


main(run)
