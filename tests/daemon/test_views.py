#!/usr/bin/python3
"""Every view tells the same truth: against thermlogd --demo, the figures a run's peak, the
weighting of statistics, residency's maximum and the capacitor's consumed life touch agree
between the CLI's JSON and text, the JSON API and /metrics. Windows are pinned in the past of
the demo (the history before it started), so a cycle the demo adds between two reads changes
neither side; the running damage on /metrics is compared with the API's between two API reads
that agree (no cycle stored in between).
usage: test_views.py THERMLOGD THERMLOG"""
import fnmatch
import json
import os
import re
import subprocess
import sys
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from thermlog_test import Demo, get, get_json, main, named_peak  # noqa: E402

THERMLOGD, THERMLOG = sys.argv[1], sys.argv[2]


def cli(demo, cfg, *args):
    p = subprocess.run([THERMLOG, "-c", cfg, "--db", demo.db, *args], capture_output=True,
                       text=True, timeout=60)
    return p.returncode, p.stdout, p.stderr


def metric(base, name, capacitor):
    text = get(base + "metrics").decode()
    for line in text.splitlines():
        m = re.match(r'^%s\{capacitor="([^"]*)",[^}]*\} (\S+)$' % re.escape(name), line)
        if m and m.group(1) == capacitor:
            return float(m.group(2))
    return None


def run(tap):
    with Demo(THERMLOGD) as demo:
        if not tap.ok(demo.url, "the demo starts", demo.stderr()):
            return
        base = demo.url
        cfg = next(os.path.join(dp, f) for dp, _, fs in os.walk(demo.tmp) for f in fs
                   if f == "thermlog-demo.yaml")

        # 1. a run's peak: CLI = API, from the thermal zones, the channel named
        runs = get_json(base + "api/v1/runs")["runs"]
        ended = [r for r in runs if r["status"] != "running"]
        tap.ok(len(ended) >= 5, "the demo has ended runs", len(ended))
        same, zones, off = True, True, []
        for r in ended[-30:]:
            api = get_json(base + "api/v1/runs/%d" % r["id"])["run"]
            rc, out, err = cli(demo, cfg, "runs", "show", str(r["id"]), "--json")
            mine = json.loads(out)["run"] if rc == 0 else None
            if mine != api:
                same = False
                tap.ok(False, "run %d: runs show --json equals /api/v1/runs/%d" % (r["id"], r["id"]),
                       "cli %r\napi %r" % (mine, api))
                break
            if api["temp_max_c"] != r["temp_max_c"]:
                same = False
            # The peak a run names, from its figures or its fast samples, is its temp_max_c.
            peak = named_peak(api)
            if peak and not (fnmatch.fnmatch(peak[0], "thermal/*") and
                             peak[1] == api["temp_max_c"]):
                zones = False
                off.append({k: api.get(k) for k in ("id", "label", "status", "start", "end",
                                                    "temp_max_c")} |
                           {"peak": peak, "from_figures": bool(api.get("figures"))})
        tap.ok(same, "every run: runs show --json = /api/v1/runs/{id}, its temp_max_c the list's")
        tap.ok(zones, "a named peak is a thermal zone's and is the run's temp_max_c", off[:5])

        # 2. statistics: the weighting named, CLI = API for both, in a pinned past window
        rc, out, err = cli(demo, cfg, "stats", "--json")
        whole = json.loads(out) if rc == 0 else {}
        frm, to = whole.get("from"), whole.get("to")
        tap.ok(frm is not None and to is not None, "the history has a window",
               (out[:300], err))
        # a day well inside the backfilled week
        rc, out, err = cli(demo, cfg, "stats", "--from", "-4d", "--to", "-3d", "--json")
        pinned = json.loads(out) if rc == 0 else {}
        frm, to = str(pinned.get("from")), str(pinned.get("to"))  # unix seconds
        for weight in ("samples", "time"):
            rc, out, err = cli(demo, cfg, "stats", "--from", frm, "--to", to, "--weight", weight,
                               "--json", "--channel", "thermal/*")
            mine = json.loads(out) if rc == 0 else None
            api = get_json(base + "api/v1/stats?from=%s&to=%s&weight=%s&channel=thermal/*" %
                           (frm, to, weight))
            tap.ok(mine == api and api.get("weight") == weight,
                   "stats --weight %s --json = /api/v1/stats?weight=%s, weight named" %
                   (weight, weight), "cli %.400r\napi %.400r" % (mine, api))
        rc, out, err = cli(demo, cfg, "stats", "--from", frm, "--to", to, "--weight", "time",
                           "--channel", "thermal/soc-thermal")
        tap.ok(rc == 0 and re.search(r"weight(ed)?[^\n]*time|time-weighted", out, re.I),
               "stats text says it is time-weighted", out[:600])

        # 3. residency: below_max_share against the hardware maximum, the same in both views
        maxes = set()
        for r in ended[-30:]:
            res = ((get_json(base + "api/v1/runs/%d" % r["id"])["run"].get("figures") or {})
                   .get("residency") or {})
            for key, v in res.items():
                if key.startswith("cpufreq/") and isinstance(v, dict) and "max_hz" in v:
                    maxes.add((key, v["max_hz"], v.get("max_hz_from")))
        want = {}
        for key, hz, src in maxes:
            want.setdefault(key, set()).add((hz, src))
        tap.ok(len(want) == 3 and all(len(v) == 1 and next(iter(v))[1] == "cpuinfo_max_freq"
                                      for v in want.values()),
               "residency's max_hz is each policy's cpuinfo_max_freq, one per policy",
               sorted(maxes))
        tree = os.path.dirname(cfg)
        for key, hz_src in want.items():
            path = os.path.join(tree, "devices/system/cpu/cpufreq", key.split("/")[1],
                                "cpuinfo_max_freq")
            if os.path.exists(path):
                with open(path) as f:
                    tap.ok(int(f.read()) * 1000 == next(iter(hz_src))[0],
                           "%s: max_hz = cpuinfo_max_freq x 1000" % key)

        # 4 and 5. consumed life and self-heating: CLI JSON = API in a pinned window; the CLI
        # text shows measured and effective; /metrics = the API's running value
        rc, out, err = cli(demo, cfg, "lifetime", "--to", to, "--json")
        mine = json.loads(out) if rc == 0 else {}
        api = get_json(base + "api/v1/lifetime?to=%s" % to)
        tap.ok(mine == api and mine.get("capacitors"), "lifetime --to T --json = /api/v1/lifetime"
               "?to=T", "cli %.300r\napi %.300r" % (mine, api))
        cap = (mine.get("capacitors") or [{}])[0]
        tap.ok("consumed_fraction_total" in cap, "the total consumed life is reported", cap)
        rc, text, err = cli(demo, cfg, "lifetime", "--to", to)
        if cap.get("self_heating_k"):
            want = "mean %.1f / %.1f" % (cap["mean_temp_c"], cap["mean_effective_temp_c"])
            tap.ok(want in text, "the CLI text shows measured and effective mean: " + want, text)
        agreed = False
        for _ in range(10):
            a = get_json(base + "api/v1/lifetime")["capacitors"][0]
            m = metric(base, "thermlog_capacitor_consumed_total_ratio", a["name"])
            b = get_json(base + "api/v1/lifetime")["capacitors"][0]
            if a["consumed_fraction_total"] == b["consumed_fraction_total"]:
                agreed = m is not None and abs(m - a["consumed_fraction_total"]) <= \
                    1e-12 * max(1e-300, abs(a["consumed_fraction_total"]))
                tap.ok(agreed, "/metrics consumed_total_ratio = the API's consumed_fraction_total",
                       "%r vs %r" % (m, a["consumed_fraction_total"]))
                break
        else:
            tap.ok(False, "two lifetime reads agreed within 10 tries")


main(run)
