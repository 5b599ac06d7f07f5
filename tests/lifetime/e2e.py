#!/usr/bin/python3
"""End to end: import a known temperature history, configure capacitors, and check
`thermlog lifetime --json` against a Miner sum computed here independently; then the
calculator form `thermlog lifetime calc`. Usage: e2e.py THERMLOG"""
import json
import math
import re
import os
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from thermlog_test import done, ok  # noqa: E402

thermlog = sys.argv[1]

def near(got, want, rel, what):
    good = got is not None and want is not None and abs(got - want) <= rel * max(abs(want), 1)
    ok(good, what, f"want {want!r}\ngot  {got!r}")


def run(*args, check=True):
    p = subprocess.run([thermlog, *args], capture_output=True, text=True)
    if check and p.returncode != 0:
        print(f"# {' '.join(args)} exited {p.returncode}: {p.stderr}")
    return p


T_START = 1785542400  # 2026-08-01T00:00:00Z
STEP = 300            # an older logger: one sample every 5 minutes


def history():
    """Two days and a bit of a daily cycle, a 3-hour outage and a hot afternoon."""
    rows = []
    for i in range(2 * 288 + 40):
        if 300 <= i < 336:
            continue  # outage
        ts = T_START + i * STEP
        phase = 2 * math.pi * i / 288
        temp = round(58 + 16 * math.sin(phase) + (9 if 120 <= i < 140 else 0), 1)
        rows.append((ts, temp))
    return rows


def lib(rated_life, rated_temp, base, step):
    return lambda t: rated_life * base ** ((rated_temp - t) / step)


def miner(rows, res, life, t_from=None, t_to=None):
    """The Miner sum written out: each sample stands for the spacing since the previous cycle
    (the first one for nothing: no interval before it is known); a spacing over 1.5 times the previous one is a
    gap, where the sample stands for the previous sample's interval."""
    rows = [r for r in rows if (t_from is None or r[0] >= t_from) and (t_to is None or r[0] < t_to)]
    spacings = sorted(b[0] - a[0] for a, b in zip(rows, rows[1:]))
    d = obs = tsum = 0.0
    pts = []
    prev = prev_spacing = prev_dt = None
    gaps = 0
    for ts, v in rows:
        t = round(v / res) * res
        dt = 0
        if prev is not None:
            spacing = ts - prev
            if prev_spacing is not None and 2 * spacing > 3 * prev_spacing:
                gaps += 1
                dt = prev_dt
            else:
                dt = spacing
            prev_spacing = spacing
        prev, prev_dt = ts, dt
        d += (dt / 3600) / life(t)
        obs += dt / 3600
        tsum += t * dt / 3600
        pts.append((t, dt / 3600))
    pts.sort()
    total = sum(w for _, w in pts)
    cum = 0.0
    p95 = None
    for t, w in pts:
        cum += w
        if cum >= 0.95 * total * (1 - 1e-12):
            p95 = t
            break
    span = (rows[-1][0] - rows[0][0]) / 3600
    return {"D": d, "obs": obs, "mean": tsum / obs, "p95": p95, "gaps": gaps, "span": span}


def check_capacitor(c, m, life, rated_temp, base, step, cap_h, label):
    near(c["observed_h"], m["obs"], 1e-12, f"{label}: observed hours")
    near(c["consumed_fraction"], m["D"], 1e-12, f"{label}: consumed fraction = Miner sum")
    l_eff = m["obs"] / m["D"]
    near(c["effective_life_h"], min(l_eff, cap_h), 1e-12, f"{label}: effective life")
    near(c["life_uncapped_h"], l_eff, 1e-12, f"{label}: effective life before the cap")
    near(c["mean_temp_c"], m["mean"], 1e-12, f"{label}: time-weighted mean temperature")
    near(c["p95_temp_c"], m["p95"], 1e-12, f"{label}: time-weighted p95 temperature")
    t_eq = rated_temp - step * math.log(l_eff / life(rated_temp)) / math.log(base)
    near(c["equivalent_temp_c"], t_eq, 1e-12, f"{label}: equivalent temperature")
    near(c["life_at_mean_temp_h"], life(m["mean"]), 1e-12, f"{label}: life at the mean temperature")
    near(c["life_at_p95_temp_h"], life(m["p95"]), 1e-12, f"{label}: life at the p95 temperature")
    ok(c["life_at_mean_temp_h"] > c["effective_life_h"], f"{label}: Miner is below the mean-temperature life")
    near(c["remaining_h"], min((1 - m["D"]) * l_eff, cap_h - m["obs"]), 1e-12, f"{label}: remaining life")
    near(c["coverage"], m["obs"] / m["span"], 1e-12, f"{label}: coverage")
    rel = c["relative_lifetime"]
    ok([r["reduction_k"] for r in rel] == [0, 10, 20, 30], f"{label}: reductions 0/10/20/30 K")
    for r in rel:
        near(r["factor"], base ** (r["reduction_k"] / step), 1e-12, f"{label}: factor at -{r['reduction_k']} K")
        near(r["life_h"], l_eff * base ** (r["reduction_k"] / step), 1e-12, f"{label}: life at -{r['reduction_k']} K")
    codes = {w["code"] for w in c["warnings"]}
    ok("data_gaps" in codes, f"{label}: the outage is reported", codes)
    ok("short_history" in codes, f"{label}: a short history is reported", codes)
    ok(all(w["message"] for w in c["warnings"]), f"{label}: every warning has a sentence")


def main():
    tmp = tempfile.mkdtemp(prefix="thermlog-lifetime-")
    try:
        rows = history()
        csv_path = os.path.join(tmp, "history.csv")
        with open(csv_path, "w") as f:
            f.write("time,channel,value,unit\n")
            for ts, v in rows:
                f.write(f"{ts},bench/c12_case,{v},celsius\n")
        db = os.path.join(tmp, "t.db")
        p = run("--db", db, "import", csv_path)
        ok(p.returncode == 0, "import the history", p.stderr)

        cfg = os.path.join(tmp, "thermlog.yaml")
        with open(cfg, "w") as f:
            f.write("capacitors:\n"
                    "  - name: C12 bulk 100uF/400V\n"
                    "    sensor: bench/c12_case\n"
                    "    basis: case\n"
                    "    rated_life_h: 2000\n"
                    "    rated_temp_c: 105\n"
                    "    review:\n"
                    "      enclosure: \"IP54 box, no fan: 'sealed'\"\n"
                    "      orientation: vertical, vent up\n"
                    "      heat_sources: Q3 MOSFET 12 mm away\n"
                    "  - name: C30 polymer\n"
                    "    sensor: bench/c12_case\n"
                    "    basis: ambient\n"
                    "    rated_life_h: 5000\n"
                    "    rated_temp_c: 105\n"
                    "    type: polymer\n")
        chans = json.loads(run("--db", db, "channels", "--json").stdout)["channels"]
        res = [c for c in chans if c["key"] == "bench/c12_case"][0]["resolution"]

        p = run("--db", db, "-c", cfg, "lifetime", "--json")
        ok(p.returncode == 0, "thermlog lifetime --json", p.stderr)
        whole = json.loads(p.stdout)
        caps = whole["capacitors"]
        ok([c["name"] for c in caps] == ["C12 bulk 100uF/400V", "C30 polymer"], "every configured capacitor")
        # the span it covers: the first and the last sample evaluated, the interval inferred
        ok(list(whole) == ["from", "to", "interval_s", "capacitors"] and
           whole["from"] == rows[0][0] and whole["to"] == rows[-1][0] and whole["interval_s"] == STEP,
           "the JSON says the span it covers (from, to, interval_s)",
           {k: whole.get(k) for k in ("from", "to", "interval_s")})
        keys = ["name", "sensor", "basis", "basis_reason", "observed_h", "coverage", "consumed_fraction", "effective_life_h",
                "life_uncapped_h", "equivalent_temp_c", "mean_temp_c", "life_at_mean_temp_h", "p95_temp_c",
                "life_at_p95_temp_h", "remaining_h", "capped", "life_cap_h", "warnings", "relative_lifetime",
                "self_heating_k", "equivalent_effective_temp_c", "mean_effective_temp_c", "p95_effective_temp_c",
                "in_service", "unobserved_service_h", "consumed_fraction_extrapolated", "consumed_fraction_total",
                "past_estimated_life", "review", "sensors", "load_channel", "band", "validity",
                "voltage", "ripple", "self_heating_check", "steady_state", "vent"]
        ok(list(caps[0].keys()) == keys, "JSON keys as specified", list(caps[0].keys()))
        review_keys = ["enclosure", "orientation", "thermocouple", "insulation", "heat_sources",
                       "vent_clearance", "series_conditions"]
        want = dict.fromkeys(review_keys)
        want.update({"enclosure": "IP54 box, no fan: 'sealed'", "orientation": "vertical, vent up",
                     "heat_sources": "Q3 MOSFET 12 mm away"})
        ok(list(caps[0]["review"].items()) == list(want.items()),
           "review: the configured notes, null where not recorded, in order", caps[0]["review"])
        ok(caps[1]["review"] == dict.fromkeys(review_keys), "review: a part without notes has every key null",
           caps[1]["review"])
        ok(caps[0]["sensor"] == "bench/c12_case" and caps[0]["basis"] == "case", "sensor and basis")

        wet = lib(2000, 105, 2, 10)
        m = miner(rows, res, wet)
        check_capacitor(caps[0], m, wet, 105, 2, 10, 131400, "wet")
        poly = lib(5000, 105, 10, 20)
        check_capacitor(caps[1], miner(rows, res, poly), poly, 105, 10, 20, 131400, "polymer")
        ok(not caps[0]["capped"], "wet part not capped")
        ok(caps[0]["life_cap_h"] == 131400 and caps[1]["life_cap_h"] == 131400, "the 15-year cap is reported",
           [c["life_cap_h"] for c in caps])
        ok(caps[1]["capped"] and caps[1]["effective_life_h"] == 131400
           and caps[1]["life_uncapped_h"] > caps[1]["effective_life_h"],
           "polymer part capped at 15 years, its life before the cap kept", caps[1])

        # a window: the second day only
        t_from, t_to = T_START + 86400, T_START + 2 * 86400
        p = run("--db", db, "-c", cfg, "lifetime", "--json", "--from", str(t_from), "--to", str(t_to))
        wj = json.loads(p.stdout)
        w = wj["capacitors"][0]
        inside = [ts for ts, _ in rows if t_from <= ts < t_to]
        ok(wj["from"] == inside[0] and wj["to"] == inside[-1],
           "window: the span covered inside it", (wj.get("from"), wj.get("to"), inside[0], inside[-1]))
        mw = miner(rows, res, wet, t_from, t_to)
        near(w["consumed_fraction"], mw["D"], 1e-12, "window: consumed fraction")
        near(w["observed_h"], mw["obs"], 1e-12, "window: observed hours")
        p = run("--db", db, "-c", cfg, "lifetime", "--from", "2026-08-02", "--to", "2026-08-03", "--json")
        near(json.loads(p.stdout)["capacitors"][0]["consumed_fraction"], mw["D"], 1e-12,
             "window given as ISO dates")

        # human output
        p = run("--db", db, "-c", cfg, "lifetime")
        ok(p.returncode == 0 and "C12 bulk 100uF/400V" in p.stdout and "8760 h" in p.stdout
           and "data_gaps" in p.stdout, "human table with warnings", p.stdout)
        review = p.stdout[p.stdout.find("C12 bulk 100uF/400V: design review:"):]
        ok("C12 bulk 100uF/400V: design review:\n  enclosure          IP54 box, no fan: 'sealed'\n"
           "  orientation        vertical, vent up\n  thermocouple       not recorded\n" in review
           and "  heat_sources       Q3 MOSFET 12 mm away\n" in review
           and "C30 polymer: design review:\n  enclosure          not recorded\n" in review
           and review.count("not recorded") == 4 + 7,
           "human output: the design review notes, 'not recorded' where missing", p.stdout)

        # an unknown sensor is a warning, not a failure
        with open(cfg, "a") as f:
            f.write("  - name: C40\n    sensor: hwmon/nothing/temp1\n    rated_life_h: 1000\n"
                    "    rated_temp_c: 85\n")
        p = run("--db", db, "-c", cfg, "lifetime", "--json")
        c40 = json.loads(p.stdout)["capacitors"][2]
        ok(p.returncode == 0 and c40["effective_life_h"] is None and c40["life_uncapped_h"] is None
           and c40["mean_temp_c"] is None and c40["p95_temp_c"] is None
           and c40["warnings"][0]["code"] == "sensor_not_found", "unknown sensor warned", c40)

        # no data: a missing sensor, an empty window and a one-sample window never print nan
        for what, window in [("whole history", []),
                             ("an empty window", ["--from", "2030-01-01", "--to", "2030-01-02"]),
                             ("a one-sample window", ["--from", str(T_START), "--to", str(T_START + 1)])]:
            p = run("--db", db, "-c", cfg, "lifetime", *window)
            out = p.stdout
            ok(p.returncode == 0 and "nan" not in out.lower(), f"{what}: no nan in the text", out)
            j = json.loads(run("--db", db, "-c", cfg, "lifetime", "--json", *window).stdout)["capacitors"]
            empty = [c["name"] for c in j if not c["observed_h"]]
            rows = out.splitlines()
            ok(all(sum(r.startswith(name + " ") and r.endswith(" no data") for r in rows) == 1
                   for name in empty) and out.count("no data") == len(empty),
               f"{what}: 'no data' once for each capacitor without data ({len(empty)})", out)
            ok(all(c["p95_temp_c"] is None and c["life_at_p95_temp_h"] is None for c in j
                   if not c["observed_h"]), f"{what}: no p95 life without observed time", j)
        ok(empty == ["C12 bulk 100uF/400V", "C30 polymer", "C40"], "the one-sample window observes nothing",
           empty)

        service_tests(db, tmp, caps[0])
        self_heating_tests(db, tmp)

        p = run("--db", db, "-c", cfg, "lifetime", "--from", "yesterday-ish", check=False)
        ok(p.returncode == 2 and "--from" in p.stderr, "bad --from is a usage error", p.stderr)
        p = run("--db", os.path.join(tmp, "nope", "x.db"), "-c", cfg, "lifetime", check=False)
        ok(p.returncode == 1, "a missing database is a runtime failure", p.returncode)

        calc_tests()
    finally:
        shutil.rmtree(tmp)
    return done()


def service_tests(db, tmp, ref):
    """in_service before the stored history counts in consumed life, extrapolated from the
    observed profile and marked; a part past its estimated life says so loudly."""
    cfg = os.path.join(tmp, "service.yaml")
    part = ("  - name: {name}\n    sensor: bench/c12_case\n    basis: case\n    rated_life_h: 2000\n"
            "    rated_temp_c: 105\n    in_service: {date}\n")
    with open(cfg, "w") as f:
        f.write("capacitors:\n" + part.format(name="C70 since 2020", date="2020-01-01")
                + part.format(name="C71 since July", date="2026-07-01"))
    t0 = time.time()
    p = run("--db", db, "-c", cfg, "lifetime", "--json")
    t1 = time.time()
    old, new = json.loads(p.stdout)["capacitors"]
    for c, since in [(old, 1577836800), (new, 1782864000)]:
        name = c["name"]
        ok(c["consumed_fraction"] == ref["consumed_fraction"] and c["observed_h"] == ref["observed_h"],
           f"{name}: the observed damage is unchanged", c)
        age = ((t0 + t1) / 2 - since) / 3600
        before = age - c["observed_h"]
        near(c.get("unobserved_service_h"), before, 1e-5, f"{name}: hours in service without samples")
        want = c["consumed_fraction"] * age / c["observed_h"]
        near(c.get("consumed_fraction_total"), want, 1e-5,
             f"{name}: consumed in total = observed + extrapolated at the observed rate")
        near(c.get("consumed_fraction_extrapolated"), want - c["consumed_fraction"], 1e-5,
             f"{name}: the extrapolated part")
        codes = [w["code"] for w in c["warnings"]]
        ok("in_service_extrapolated" in codes, f"{name}: marked as extrapolated", codes)
    ok(old.get("past_estimated_life") is True and old["remaining_h"] == 0
       and "life_exhausted" in [w["code"] for w in old["warnings"]],
       "in service since 2020: past its estimated life, nothing remains", old)
    ok(new.get("past_estimated_life") is False and new["remaining_h"] > 0
       and "life_exhausted" not in [w["code"] for w in new["warnings"]],
       "in service since July: not past its life", new)
    near(new["remaining_h"], (1 - new["consumed_fraction_total"]) * new["life_uncapped_h"], 1e-9,
         "remaining life after the extrapolated damage")
    # A part put in service during the stored history (a replacement) ages from that day only.
    with open(cfg, "w") as f:
        f.write("capacitors:\n" + part.format(name="C72 replaced", date="2026-08-02")
                + part.format(name="C73 not yet", date="2030-01-01")
                + part.format(name="C74", date="2026-08-02").replace("    in_service: 2026-08-02\n", ""))
    replaced, future, _ = json.loads(run("--db", db, "-c", cfg, "lifetime", "--json").stdout)["capacitors"]
    since = json.loads(run("--db", db, "-c", cfg, "lifetime", "--from", "2026-08-02",
                           "--json").stdout)["capacitors"][2]
    near(replaced["consumed_fraction"], since["consumed_fraction"], 1e-9,
         "in service during the history: only the samples since then age the part")
    near(replaced["observed_h"], since["observed_h"], 1e-9, "and only they are observed time")
    ok(future["consumed_fraction"] == 0 and future["observed_h"] == 0,
       "in service only in the future: nothing consumed yet", future)
    out = run("--db", db, "-c", cfg, "lifetime").stdout
    ok("nan" not in out, "no nan in the text for those parts", out)
    # "If it ran cooler" stays within the seal-ageing cap, as the dashboard shows it.
    cooler = re.findall(r"-(\d+) K: x[\d.]+ \((\*?)(\d+) h\)", out)
    ok(cooler and all(int(h) <= 131400 for _, _, h in cooler) and
       any(star and int(h) == 131400 for _, star, h in cooler),
       "the cooler lives are capped at 131400 h and marked *", out)
    with open(cfg, "w") as f:
        f.write("capacitors:\n" + part.format(name="C70 since 2020", date="2020-01-01")
                + part.format(name="C71 since July", date="2026-07-01"))
    out = run("--db", db, "-c", cfg, "lifetime").stdout
    ok("C70 since 2020: PAST ITS ESTIMATED LIFE" in out and out.count("PAST ITS ESTIMATED LIFE") == 1,
       "the text says so loudly, for that part only", out)
    row = [r for r in out.splitlines() if r.startswith("C70 since 2020 ")]
    ok(row and f"{old['consumed_fraction_total']:.5f}~" in row[0],
       "the table shows the total consumed, marked as extrapolated", row)


def self_heating_tests(db, tmp):
    """Self-heating: the measured and the effective temperatures side by side."""
    cfg = os.path.join(tmp, "self.yaml")
    with open(cfg, "w") as f:
        f.write("capacitors:\n  - name: C80 ambient\n    sensor: bench/c12_case\n    basis: ambient\n"
                "    rated_life_h: 2000\n    rated_temp_c: 105\n    self_heating: {rise_k: 3}\n")
    c = json.loads(run("--db", db, "-c", cfg, "lifetime", "--json").stdout)["capacitors"][0]
    ok(c.get("self_heating_k") == 3, "JSON: the self-heating rise", c)
    for key in ["equivalent", "mean", "p95"]:
        ok(c.get(f"{key}_effective_temp_c") == c[f"{key}_temp_c"] + 3,
           f"JSON: {key} temperature measured {c[f'{key}_temp_c']} and effective "
           f"{c.get(f'{key}_effective_temp_c')}")
    out = run("--db", db, "-c", cfg, "lifetime").stdout
    want = (f"C80 ambient: measured / effective (+3 K self-heating): T_eq {c['equivalent_temp_c']:.1f} / "
            f"{c['equivalent_temp_c'] + 3:.1f} °C, mean {c['mean_temp_c']:.1f} / {c['mean_temp_c'] + 3:.1f} °C, "
            f"p95 {c['p95_temp_c']:.1f} / {c['p95_temp_c'] + 3:.1f} °C")
    ok(want in out, "text: the measured and effective temperatures side by side", f"want {want}\n{out}")
    base = ["--rated-life-h", "2000", "--rated-temp-c", "105", "--self-heating-k", "3"]
    out = calc(*base, "--temp-c", "62").stdout
    ok("life at 62 °C measured, 65 °C effective (+3 K):" in out, "calc: both temperatures", out)
    out = calc(*base, "--profile", "60:1,64:1").stdout
    ok(re.search(r"equivalent temperature: +[\d.]+ °C measured, [\d.]+ °C effective", out)
       and re.search(r"mean 62.00 °C measured, 65.00 °C effective", out), "calc profile: both temperatures", out)
    j = json.loads(calc(*base, "--temp-c", "62", "--json").stdout)
    ok(j.get("self_heating_k") == 3 and j.get("equivalent_effective_temp_c") == 65
       and j["equivalent_temp_c"] == 62, "calc JSON: measured and effective", j)


def calc(*args, check=True):
    return run("lifetime", "calc", *args, check=check)


def calc_tests():
    base = ["--rated-life-h", "2000", "--rated-temp-c", "105", "--json"]
    for t, want in [(95, 4000), (85, 8000), (75, 16000), (65, 32000)]:
        j = json.loads(calc(*base, "--temp-c", str(t)).stdout)
        ok(j["life_h"] == want, f"calc V1 at {t} °C: {want} h", j)
    j = json.loads(calc(*base, "--temp-c", "65").stdout)
    ok(list(j.keys()) == ["life_h", "life_uncapped_h", "capped", "equivalent_temp_c", "life_at_mean_temp_h",
                          "consumed_fraction_per_hour", "warnings", "self_heating_k",
                          "equivalent_effective_temp_c", "band"], "calc JSON keys as specified", list(j.keys()))
    near(j["consumed_fraction_per_hour"], 1 / 32000, 1e-15, "calc rate per hour")
    j = json.loads(calc(*base, "--temp-c", "40").stdout)
    ok(j["capped"] and j["life_h"] == 131400, "calc caps at 15 years", j)
    near(j["life_uncapped_h"], 2000 * 2 ** 6.5, 1e-15, "calc keeps the uncapped life")
    ok("life_capped" in {w["code"] for w in j["warnings"]}, "calc warns about the cap")
    j = json.loads(calc(*base, "--temp-c", "40", "--cap-years", "25").stdout)
    ok(not j["capped"], "--cap-years raises the cap")
    j = json.loads(calc("--rated-life-h", "1000", "--rated-temp-c", "105", "--json",
                        "--profile", "45:8,55:8,65:8").stdout)
    near(j["equivalent_temp_c"], 105 - 10 * math.log2(24 / (8 / 64000 + 8 / 32000 + 8 / 16000) / 1000), 1e-12,
         "calc COSEL profile: T_eq 57.2 °C")
    near(j["life_at_mean_temp_h"], 32000, 1e-15, "calc COSEL: life at the mean 55 °C")
    j = json.loads(calc(*base, "--temp-c", "85", "--type", "polymer").stdout)
    near(j["life_h"], 20000, 1e-15, "calc V12 polymer at 85 °C")
    j = json.loads(calc(*base, "--temp-c", "40", "--model", "arrhenius", "--ea-ev", "0.8315478777968554",
                        "--cap-years", "100").stdout)
    near(j["life_h"], 399382, 2e-6, "calc Arrhenius at 40 °C")
    j = json.loads(calc(*base, "--temp-c", "62", "--self-heating-k", "3").stdout)
    ok(j["life_h"] == 32000, "calc self-heating adds to the ambient", j)
    j = json.loads(calc(*base, "--temp-c", "110").stdout)
    ok("above_rated" in {w["code"] for w in j["warnings"]}, "calc warns above the rating")

    for args, needle in [
        (["--rated-life-h", "0", "--rated-temp-c", "105", "--temp-c", "60"], "rated life must be a positive"),
        (["--rated-life-h", "-5", "--rated-temp-c", "105", "--temp-c", "60"], "rated life must be a positive"),
        (["--rated-life-h", "2000", "--rated-temp-c", "400", "--temp-c", "60"], "out of range"),
        (["--rated-life-h", "2000", "--rated-temp-c", "105", "--profile", "65:8;55:4"], "element 1"),
        (["--rated-life-h", "2000", "--rated-temp-c", "105", "--profile", "65:8,x"], "element 2 'x'"),
        (["--rated-life-h", "2000", "--rated-temp-c", "105", "--profile", "65:0"], "hours must be positive"),
        (["--rated-life-h", "2000", "--rated-temp-c", "105"], "one of --temp-c, --profile or --profile-csv"),
        (["--rated-life-h", "abc", "--rated-temp-c", "105", "--temp-c", "60"], "'abc' is not a number"),
        (["--rated-life-h", "2000", "--rated-temp-c", "105", "--temp-c", "nan"],
         "thermlog lifetime calc: --temp-c: 'nan' is not a number"),
        (["--rated-life-h", "2000", "--rated-temp-c", "105", "--temp-c", "60", "--model", "x"], "expected bt"),
        (["--rated-life-h", "2000", "--rated-temp-c", "105", "--temp-c", "60", "--model", "arrhenius"],
         "--model arrhenius needs --ea-ev"),
        # the calculator's errors name its flags, not the configuration's keys
        (["--rated-life-h", "0", "--rated-temp-c", "105", "--temp-c", "60"], "--rated-life-h"),
        (["--rated-life-h", "2000", "--rated-temp-c", "400", "--temp-c", "60"], "--rated-temp-c 400"),
        (["--rated-life-h", "2000", "--rated-temp-c", "105", "--temp-c", "60", "--ea-ev", "0.8"],
         "--ea-ev applies to --model arrhenius only"),
        (["--rated-life-h", "2000", "--rated-temp-c", "105", "--temp-c", "60", "--model", "arrhenius",
          "--ea-ev", "9"], "--ea-ev must be above 0"),
        (["--rated-life-h", "2000", "--rated-temp-c", "105", "--temp-c", "60", "--bt", "0.5"],
         "--bt must be above 1"),
        (["--rated-life-h", "2000", "--rated-temp-c", "105", "--temp-c", "60", "--model", "arrhenius",
          "--bt", "2"], "--bt applies to --model bt only"),
        (["--rated-life-h", "2000", "--rated-temp-c", "105", "--temp-c", "60", "--self-heating-k", "200"],
         "--self-heating-k must be between 0 and 100"),
        (["--rated-life-h", "2000", "--rated-temp-c", "105", "--temp-c", "60", "--cap-years", "0"],
         "--cap-years must be above 0"),
    ]:
        p = calc(*args, check=False)
        ok(p.returncode == 2 and needle in p.stderr, f"calc rejects {' '.join(args[-2:])}: {needle}", p.stderr)
        keys = ["ea_ev", "rated_life_h", "rated_temp_c", "life_cap_years", "rise_k", "model:"]
        ok(not any(k in p.stderr for k in keys), f"calc {' '.join(args[-2:])}: no config key named",
           p.stderr)


if __name__ == "__main__":
    sys.exit(main())
