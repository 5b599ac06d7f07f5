#!/usr/bin/python3
"""The capacitor review over an imported history (issue 40), against figures computed here.

Three simulated channels over three days of one-minute samples: an ambient with a daily swing; a
case = ambient + a load-following rise (8 K at the high load, 0.5 K at the low one: I^2); a
"mislabelled ambient" that is really the case (the case + 0.25 K); and the load, a current
switching between 0.5 A and 2.0 A every 37 minutes.
- a part with the true ambient and the case, modelled rise 12 K: ages at the case (the Miner sum
  over the case samples, by hand: no self-heating added), and the measured rise (about 4 K)
  against the modelled 12 K is a self_heating_mismatch warning with both figures;
- a part with the mislabelled ambient beside the case and the load declared: "this ambient
  sensor looks like a case measurement";
- a part on the ambient with ripple_from the load (proportional, and a buck's input): the
  consumed life equals the sample-by-sample recomputation here to 1e-9 relative, and the
  constant current_a's beside it;
- the sensitivity band, the vent clearance (a diameter class, a missing diameter) and
  check-config's file:line:col for a bad key;
- the design review (report --lifetime-only): the measured rise beside the modelled one, the
  mislabelled ambient checked against measurements, steady state per sensor (the case steps
  with the load every 37 minutes, never steady for the 30-minute soak: mostly_transient), the
  ripple side by side, the vent against the table, every checklist item saying what it rests on.
Usage: review.py THERMLOG"""
import json
import math
import re
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from thermlog_test import done, ok  # noqa: E402

thermlog = sys.argv[1]
T0 = 1785542400  # 2026-08-01T00:00:00Z
N = 3 * 1440  # over one replay chunk (4096 cycles): a cycle gathered across its end


def run(*args):
    return subprocess.run([thermlog, *args], capture_output=True, text=True)


def rel_near(got, want, rel, what):
    good = got is not None and want is not None and abs(got - want) <= rel * abs(want)
    ok(good, what, f"want {want!r}\ngot  {got!r}")


def channels():
    rows = []
    for i in range(N):
        ts = T0 + 60 * i
        amb = round(42 + 6 * math.sin(2 * math.pi * i / 1440), 2)
        load = 2.0 if (i // 37) % 2 else 0.5
        case = round(amb + 8 * (load / 2.0) ** 2, 2)
        rows.append((ts, amb, case, round(case + 0.25, 2), load))
    return rows


CONFIG = """capacitors:
  - name: C1 true ambient
    sensors: {ambient: bench/ambient, case: bench/case}
    rated_life_h: 2000
    rated_temp_c: 105
    self_heating: {rise_k: 12}
    case_diameter_mm: 18
    vent_clearance_mm: 2.9
  - name: C2 mislabelled
    sensors: {ambient: bench/mislabelled, case: bench/case}
    load_channel: bench/load
    rated_life_h: 2000
    rated_temp_c: 105
  - name: C3 case only
    sensor: bench/case
    basis: case
    rated_life_h: 2000
    rated_temp_c: 105
    case_diameter_mm: 10
    vent_clearance_mm: 2
  - name: C4 measured ripple
    sensors: {ambient: bench/ambient}
    rated_life_h: 2000
    rated_temp_c: 105
    self_heating: {current_a: 1.0, rated_ripple_a: 1.5, rated_rise_k: 6}
    ripple_from: {channel: bench/load, formula: proportional, k: 0.8}
  - name: C5 buck input
    sensors: {ambient: bench/ambient}
    rated_life_h: 2000
    rated_temp_c: 105
    self_heating: {esr_ohm: 0.2, rth_k_per_w: 25}
    ripple_from: {channel: bench/load, formula: buck_input, v_in: 24, v_out: 5, multiplier: 0.9}
"""


def spacing_dts(ts):
    """What each sample stands for (struct lifetime_spacing; a steady cadence here)."""
    return [0] + [b - a for a, b in zip(ts, ts[1:])]


def life(t):
    return 2000 * 2 ** ((105 - t) / 10)


def main():
    tmp = tempfile.mkdtemp(prefix="thermlog-review-")
    try:
        rows = channels()
        csv_path = os.path.join(tmp, "history.csv")
        with open(csv_path, "w") as f:
            f.write("time,channel,value,unit\n")
            for ts, amb, case, mis, load in rows:
                f.write(f"{ts},bench/ambient,{amb},celsius\n{ts},bench/case,{case},celsius\n"
                        f"{ts},bench/mislabelled,{mis},celsius\n{ts},bench/load,{load},amperes\n")
        db = os.path.join(tmp, "t.db")
        p = run("--db", db, "import", csv_path)
        ok(p.returncode == 0, "import the three channels and the load", p.stderr)
        cfg = os.path.join(tmp, "thermlog.yaml")
        with open(cfg, "w") as f:
            f.write(CONFIG)
        chans = json.loads(run("--db", db, "channels", "--json").stdout)["channels"]
        res = {c["key"]: c["resolution"] for c in chans}
        p = run("--db", db, "-c", cfg, "lifetime", "--json")
        ok(p.returncode == 0, "thermlog lifetime --json", p.stderr)
        caps = {c["name"]: c for c in json.loads(p.stdout)["capacitors"]}

        q = lambda key, v: round(v / res[key]) * res[key]  # noqa: E731
        ts = [r[0] for r in rows]
        dts = spacing_dts(ts)
        amb = [q("bench/ambient", r[1]) for r in rows]
        case = [q("bench/case", r[2]) for r in rows]
        load = [q("bench/load", r[4]) for r in rows]

        # C1: the case drives, nothing added (by hand); the check's both figures
        c1 = caps["C1 true ambient"]
        d_case = sum(dt / 3600 / life(t) for dt, t in zip(dts, case))
        ok(c1["basis"] == "case" and c1["sensor"] == "bench/case", "C1 ages at the case sensor",
           (c1["basis"], c1["sensor"]))
        ok(c1["sensors"] == {"ambient": "bench/ambient", "case": "bench/case", "core": None},
           "C1 names its three temperatures", c1["sensors"])
        ok("nothing is added" in c1["basis_reason"], "C1 says why", c1["basis_reason"])
        rel_near(c1["consumed_fraction"], d_case, 1e-12,
                 "C1: the Miner sum over the case temperature, self-heating not added twice")
        ok(c1["self_heating_k"] == 0, "C1: no self-heating added", c1["self_heating_k"])
        hours = sum(dts) / 3600
        rise = sum(dt * (c - a) for dt, c, a in zip(dts, case, amb)) / sum(dts)
        chk = c1["self_heating_check"]
        rel_near(chk["measured_mean_k"], rise, 1e-9, "C1: the measured rise, time-weighted")
        ok(chk["modelled_k"] == 12 and chk["agrees"] is False and chk["tolerance_k"] == 6,
           "C1: 12 K modelled, tolerance max(3 K, 50 %), disagreeing", chk)
        rel_near(chk["hours"], hours, 1e-12, "C1: paired over the whole window")
        w = [x["message"] for x in c1["warnings"] if x["code"] == "self_heating_mismatch"]
        ok(w and f"averages {rise:.2f} K" in w[0] and "the modelled one 12.00 K" in w[0]
           and "p95" in w[0], "C1: the self_heating_mismatch warning gives both figures", w)
        ok(not chk["ambient_looks_like_case"], "C1: the true ambient is not flagged", chk)

        c2 = caps["C2 mislabelled"]
        chk = c2["self_heating_check"]
        ok(chk["ambient_looks_like_case"] and chk["ambient_load_r"] >= 0.9 * chk["case_load_r"] > 0.5,
           "C2: the mislabelled ambient follows the load as the case does", chk)
        w = [x["message"] for x in c2["warnings"] if x["code"] == "ambient_looks_like_case"]
        ok(w and "this ambient sensor looks like a case measurement" in w[0]
           and "bench/mislabelled" in w[0] and "reads above the case sensor 100 %" in w[0],
           "C2: flagged by name, with why", w)
        rel_near(c2["consumed_fraction"], d_case, 1e-12, "C2: also ages at the case")
        c3 = caps["C3 case only"]
        rel_near(c3["consumed_fraction"], d_case, 1e-12,
                 "C3: the single sensor + basis: case form gives the same sum")
        ok(c3["self_heating_check"] is None and c3["steady_state"] is None,
           "C3: no check without an ambient, no steady state outside the review", c3)

        # C4: ripple from the measured current, per sample (Jianghai/Nichicon ripple form)
        def ripple_rise(i_rms, rated=1.5, rise0=6):
            r = rise0 * ((i_rms / rated) ** 2 - 1)
            return 2 * r if i_rms > rated else r

        d4 = sum(dt / 3600 / life(a + ripple_rise(0.8 * ld)) for dt, a, ld in zip(dts, amb, load))
        d4c = sum(dt / 3600 / life(a + ripple_rise(1.0)) for dt, a in zip(dts, amb))
        c4 = caps["C4 measured ripple"]
        rel_near(c4["consumed_fraction"], d4, 1e-9,
                 "C4: measured ripple = the sample-by-sample recomputation (1e-9)")
        rp = c4["ripple"]
        rel_near(rp["consumed_fraction_constant"], d4c, 1e-9, "C4: the constant current_a beside it")
        ok(rp["channel"] == "bench/load" and rp["formula"] == "proportional", "C4: names the channel", rp)
        mean_rise = sum(dt * ripple_rise(0.8 * ld) for dt, ld in zip(dts, load)) / sum(dts)
        rel_near(rp["mean_rise_k"], mean_rise, 1e-9, "C4: the mean rise added")
        ok("ripple_over_rated" not in {x["code"] for x in c4["warnings"]},
           "C4: the constant 1 A is within its rating")
        # the sensitivity band: the reading 2 K hotter and cooler
        d4hot = sum(dt / 3600 / life(a + 2 + ripple_rise(0.8 * ld)) for dt, a, ld in zip(dts, amb, load))
        band = c4["band"]
        ok(band["uncertainty_k"] == 2, "C4: the default 2 K band", band)
        rel_near(band["consumed_fraction"][0], d4hot, 1e-9, "C4: the band's hot end")
        rel_near(band["life_uncapped_h"][0], hours / d4hot, 1e-9, "C4: the shortest life")

        # its profile bins the temperature it ages at, each sample's rise included
        p = run("--db", db, "-c", cfg, "lifetime", "profile", "--json", "--capacitor", "C4 measured ripple")
        prof = json.loads(p.stdout)["capacitors"][0] if p.returncode == 0 else {"bins": []}
        model = [a + ripple_rise(0.8 * ld) for a, ld in zip(amb, load)]
        ok(prof["bins"] and abs(sum(b["consumed_fraction"] for b in prof["bins"] if b["consumed_fraction"]) - d4) <= 1e-6 * d4
           and prof["bins"][0]["from_c"] <= min(model) and prof["bins"][-1]["to_c"] > max(model)
           and all("measured_from_c" not in b for b in prof["bins"]),
           "C4: the profile bins the model temperature (each sample's rise), its damage adds up to D",
           p.stdout[:2000] + p.stderr)
        c5 = caps["C5 buck input"]
        d = 5 / 24
        d5 = sum(dt / 3600 / life(a + (ld * math.sqrt(d * (1 - d)) / 0.9) ** 2 * 0.2 * 25)
                 for dt, a, ld in zip(dts, amb, load))
        rel_near(c5["consumed_fraction"], d5, 1e-9, "C5: buck input I_out sqrt(D(1-D)) per sample (1e-9)")
        ok(c5["ripple"]["consumed_fraction_constant"] is None, "C5: no constant current to compare")

        # vent clearance: 18 mm needs 3 mm (2.9 fails), 10 mm needs 2 (passes), none recorded
        ok(c1["vent"]["verdict"] == "fail" and c1["vent"]["required_mm"] == 3, "vent: 18 mm with 2.9 mm fails", c1["vent"])
        ok(c3["vent"]["verdict"] == "pass" and c3["vent"]["required_mm"] == 2, "vent: 10 mm with 2 mm passes", c3["vent"])
        ok(c2["vent"]["verdict"] == "not recorded", "vent: a missing diameter says not recorded", c2["vent"])

        # the text output names the temperature, the range and the warnings
        out = run("--db", db, "-c", cfg, "lifetime").stdout
        ok("C1 true ambient: ages at the case temperature (bench/case)" in out, "text: which temperature", out)
        ok("this ambient sensor looks like a case measurement" in out, "text: the flag", out)
        ok("C4 measured ripple: ±2 K:" in out, "text: the band", out)

        # the design review (report --lifetime-only): what the data shows, per item
        md = os.path.join(tmp, "r.md")
        p = run("--db", db, "-c", cfg, "report", "--lifetime-only", "-o", md)
        ok(p.returncode == 0, "report --lifetime-only", p.stderr)
        doc = open(md).read().replace("\\", "") if p.returncode == 0 else ""
        secs = {s.split("\n", 1)[0]: s for s in doc.split("\n## ")[1:]}
        r1, r2 = secs.get("Capacitor design review: C1 true ambient", ""), secs.get("Capacitor design review: C2 mislabelled", "")
        r4 = secs.get("Capacitor design review: C4 measured ripple", "")
        ok(f"| measured rise, mean K | {rise:.2f} |" in r1 and "| modelled rise K | 12.00 |" in r1
           and "| verdict | DISAGREE |" in r1, "review C1: the measured rise beside the modelled one", r1[:3000])
        ok("| ages at | the case temperature: the case is measured" in r1
           and "| self-heating added | none: the case reading contains it" in r1,
           "review C1: the case it ages at, nothing added", r1[:2000])
        ok("| verdict | looks like a case measurement |" in r2 and "| ambient, case and core kept apart | "
           "checked against measurements: the ambient bench/mislabelled LOOKS LIKE A CASE MEASUREMENT" in r2,
           "review C2: the mislabelled ambient, checked against measurements", r2[:4000])
        # the case steps with the load every 37 minutes: never steady for the 30-minute soak,
        # the ambient's slow daily swing steady all but its first window
        ok("| case (ages at) | 0.0 | 0.0 |" in r1 and "| ambient | " in r1 and "mostly_transient" in r1
           and "checked against measurements: steady 0.0 % of the time, 100.0 % of the consumed life "
           "drawn in transients: MOSTLY FROM TRANSIENTS" in r1,
           "review C1: steady state per sensor, a lifetime drawn from transients flagged", r1[:6000])
        ok(f"| consumed | {d4:.6f} | {d4c:.6f} |" in r4 and "| ripple | bench/load, proportional | 1 A |" in r4,
           "review C4: the measured ripple and the constant one side by side", r4[:5000])
        ok("| vent clearance | FAIL: case diameter 18 mm, 18-35 mm: at least 3 mm above the vent; 2.9 mm recorded |" in r1
           and "| electrical clearance and creepage | not evaluated by this tool |" in r1
           and "| vent clearance | not recorded: case diameter not recorded" in r2,
           "review: the vent against the table, electrical clearance not evaluated, a missing diameter", r2[-3000:])
        checklist = [ln for s_ in secs.values() if "### Review checklist" in s_
                     for ln in s_.split("### Review checklist", 1)[1].split("\n")
                     if ln.startswith("| ") and not ln.startswith("| item") and not ln.startswith("| ---")]
        bare = [ln for ln in checklist if not re.match(
            r"\| [^|]+ \| (checked against measurements: |from configuration, not verified: |"
            r"from configuration, checked against the table: |not recorded|not evaluated by this tool)", ln)]
        ok(len(checklist) >= 5 * 11 and not bare, "review: every checklist item says what it rests on", bare)
        ok("±2 K" in doc and "| effective life h, band |" in doc and "| remaining h, band |" in doc,
           "review: the band beside the lives")

        # check-config names the file, line and column of a bad new key
        bad = os.path.join(tmp, "bad.yaml")
        with open(bad, "w") as f:
            f.write(CONFIG.replace("formula: buck_input", "formula: boost"))
        p = run("check-config", bad)
        ok(p.returncode != 0 and f"{bad}:32:" in p.stderr + p.stdout and "formula: expected" in p.stderr + p.stdout,
           "check-config: file:line:col for a bad formula", p.stderr + p.stdout)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return done()


if __name__ == "__main__":
    sys.exit(main())
