#!/usr/bin/python3
"""thermlog report --lifetime / --lifetime-only: the capacitor design review over an imported
history (two days of a daily cycle with an outage and a hot afternoon, as tests/lifetime/), for
three capacitors (ambient with self-heating and an in-service date and review notes, case with
Arrhenius, ambient with ripple self-heating). Every number of the Markdown and the HTML, parsed
back, equals `thermlog lifetime --json` (to date, relative lives, warnings by code and
message), `thermlog lifetime profile --json` (the mission profile) and `lifetime --json --to T`
(the consumed-life series); the checklist shows what review: records and "not recorded"; the
charts are SVG files beside the Markdown and inline in the HTML; no capacitors configured says
so. Usage: lifetime.py THERMLOG"""
import datetime
import json
import math
import os
import re
import subprocess
import sys
import xml.etree.ElementTree as ET

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from thermlog_test import Workdir, main, write_config  # noqa: E402
from report import html_tables, md_tables  # noqa: E402

T_START = 1785542400  # 2026-08-01T00:00:00Z
STEP = 300
SENSOR = "bench/c30_ambient"
WINDOW = ["--from", str(T_START), "--to", str(T_START + 3 * 86400)]
REVIEW = {"enclosure": "production ABS case, lid closed, | bars & <tags>",
          "thermocouple": "type K, Kapton-taped to the sleeve"}
# The checklist's items that rest on a review: note alone (from configuration, not verified).
CHECKLIST = [("real enclosure reproduced", "enclosure"), ("orientation reproduced", "orientation"),
             ("thermocouple contact", "thermocouple"), ("thermocouple insulation", "insulation"),
             ("heat sources nearby", "heat_sources")]
# Every checklist record says what it rests on: never a bare pass.
RECORD = re.compile(r"(checked against measurements: |from configuration, not verified: |"
                    r"from configuration, checked against the table: |not recorded|"
                    r"not evaluated by this tool)")


def history():
    rows = []
    for i in range(2 * 288 + 40):
        if 300 <= i < 336:
            continue
        phase = 2 * math.pi * i / 288
        rows.append((T_START + i * STEP, round(58 + 16 * math.sin(phase) + (9 if 120 <= i < 140 else 0), 1)))
    return rows


CAPACITORS = (
    "capacitors:\n"
    f"  - name: C30 bulk\n    sensor: {SENSOR}\n    rated_life_h: 5000\n"
    "    rated_temp_c: 105\n    self_heating: {rise_k: 3}\n    in_service: 2026-07-01\n"
    "    review:\n"
    f"      enclosure: \"{REVIEW['enclosure']}\"\n"
    f"      thermocouple: \"{REVIEW['thermocouple']}\"\n"
    f"  - name: C12 case\n    sensor: {SENSOR}\n    basis: case\n    rated_life_h: 2000\n"
    "    rated_temp_c: 105\n    model: arrhenius\n    ea_ev: 0.832\n"
    f"  - name: C7 ripple\n    sensor: {SENSOR}\n    rated_life_h: 10000\n    rated_temp_c: 105\n"
    "    self_heating:\n      rated_ripple_a: 1.2\n      rated_rise_k: 5\n      ripple:\n"
    # 1.2 A and 0.9 A at the rated frequency: sqrt(1.44 + 0.81) = 1.5 A
    "        - {freq_hz: 120, current_a: 0.6, multiplier: 0.5}\n"
    "        - {freq_hz: 100000, current_a: 0.9, multiplier: 1}\n")


def seed(thermlog, wd):
    """The imported history and the configuration: (db, cfg)."""
    csv_in = os.path.join(wd, "history.csv")
    with open(csv_in, "w") as f:
        f.write("time,channel,value,unit\n")
        f.writelines(f"{ts},{SENSOR},{v},celsius\n" for ts, v in history())
    db = os.path.join(wd, "t.db")
    p = subprocess.run([thermlog, "--db", db, "import", csv_in], capture_output=True, text=True)
    if p.returncode != 0:
        raise RuntimeError("import: " + p.stderr)
    cfg = write_config(os.path.join(wd, "t.yaml"), extra=CAPACITORS)
    return db, cfg


def iso(ts):
    return datetime.datetime.fromtimestamp(ts, datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def f(v, places):
    return "-" if v is None else "%.*f" % (places, v)


def tables_by_heading(fmt, text):
    """{(section, first header cell): rows} of the document; the section is the h2, the tables
    under a capacitor's review keyed by (capacitor, header[0])."""
    tables = md_tables(text) if fmt == "md" else html_tables(text)[0]
    out = {}
    for section, header, rows, _ in tables:
        out.setdefault((section, header[0]), []).append((header, rows))
    return out


def run(tap):
    thermlog = sys.argv[1]

    def cli(*args):
        return subprocess.run([thermlog, *args], capture_output=True, text=True)

    with Workdir("thermlog-report-lifetime.") as wd:
        db, cfg = seed(thermlog, wd)
        base = ["--db", db, "-c", cfg]
        p = cli(*base, "lifetime", "--json", *WINDOW)
        life = {c["name"]: c for c in json.loads(p.stdout)["capacitors"]}
        p = cli(*base, "lifetime", "profile", "--json", *WINDOW)
        prof = {c["name"]: c for c in json.loads(p.stdout)["capacitors"]}
        tap.ok(len(life) == 3 and len(prof) == 3, "lifetime and lifetime profile --json", p.stderr)

        md = os.path.join(wd, "r.md")
        hp = os.path.join(wd, "r.html")
        p = cli(*base, "report", "--lifetime-only", *WINDOW, "-o", md)
        tap.ok(p.returncode == 0, "report --lifetime-only -o r.md", p.stderr)
        p = cli(*base, "report", "--lifetime-only", *WINDOW, "-o", hp)
        tap.ok(p.returncode == 0, "report --lifetime-only -o r.html", p.stderr)
        docs = {"md": open(md).read(), "html": open(hp).read()}
        now = datetime.datetime.now(datetime.timezone.utc)

        for fmt, text in docs.items():
            t = tables_by_heading(fmt, text)
            tap.ok(not any(s == "Zones" for s, _ in t) and ("Board and window", "") in t,
                   f"{fmt}: --lifetime-only has the board and window, no zone tables")
            tap.ok("thermlog capacitor design review: t.db" in text, f"{fmt}: the title says what it is")
            for name, c in life.items():
                sec = f"Capacitor design review: {name}"
                pc = prof[name]
                # part data and the sensor
                facts = t.get((sec, ""), [])
                part = {r[0]: r[1] for r in facts[0][1]} if facts else {}
                sensor = {r[0]: r[1] for r in facts[1][1]} if len(facts) > 1 else {}
                tap.ok(part.get("rated temperature", "").startswith("105 °C (%s)" % c["basis"])
                       and sensor.get(c["basis"]) == SENSOR
                       and sensor.get("ages at", "").startswith("the %s temperature: %s" % (c["basis"], c["basis_reason"]))
                       and part.get("sensor uncertainty", "").startswith("±2 K")
                       and part.get("validity band", "").startswith("[40, 105] °C"),
                       f"{fmt} {name}: part data, the temperatures and the one it ages at, and why",
                       (part, sensor))
                want_rise = "none" if not c["self_heating_k"] else "%+.2f K" % c["self_heating_k"]
                tap.ok(sensor.get("self-heating added") == want_rise,
                       f"{fmt} {name}: self-heating added as lifetime --json has it", sensor)
                # mission profile = lifetime profile --json
                mp = t.get((sec, "effective °C" if c["self_heating_k"] else "bin °C"), [])
                got = [r for r in mp[0][1]] if mp else []
                want = []
                for b in pc["bins"]:
                    row = ["[%g,%g)" % (b["from_c"], b["to_c"])]
                    if c["self_heating_k"]:
                        row.append("[%g,%g)" % (b["measured_from_c"], b["measured_to_c"]))
                    row += [f(b["hours"], 2), f(100 * b["share"], 2), f(100 * b["consumed_share"], 2),
                            f(b["temp_c"], 2)]
                    want.append(row)
                tap.ok(got == want and len(want) >= 5,
                       f"{fmt} {name}: the mission profile equals lifetime profile --json ({len(want)} bins)",
                       "got  %s\nwant %s" % (got, want))
                # consumed life over time = lifetime --json --to T
                series = t.get((sec, "up to (UTC)"), [])
                rows = series[0][1] if series else []
                bad = []
                for r in rows[:-1]:
                    ts = int(datetime.datetime.strptime(r[0], "%Y-%m-%dT%H:%M:%SZ").replace(
                        tzinfo=datetime.timezone.utc).timestamp())
                    q = cli(*base, "lifetime", "--json", "--from", str(T_START), "--to", str(ts))
                    at = {x["name"]: x for x in json.loads(q.stdout)["capacitors"]}[name]
                    band = at["band"]["consumed_fraction"]
                    if r[1:] != [f(at["observed_h"], 2), f(at["consumed_fraction"], 6),
                                 "%s-%s" % (f(band[1], 6), f(band[0], 6))]:
                        bad.append((r, at["observed_h"], at["consumed_fraction"]))
                last = rows[-1] if rows else None
                band = c["band"]["consumed_fraction"]
                tap.ok(len(rows) >= 10 and not bad and last == [
                    "2026-08-03T03:15:00Z", f(c["observed_h"], 2), f(c["consumed_fraction"], 6),
                    "%s-%s" % (f(band[1], 6), f(band[0], 6))],
                    f"{fmt} {name}: each consumed-life point equals lifetime --json --to T, the last the window's",
                    (bad, last))
                # to date
                td = t.get((sec, "figure"), [])
                fig = {r[0]: r[1:] for r in td[0][1]} if td else {}
                want = {"observed h": f(c["observed_h"], 2),
                        "consumed, observed": f(c["consumed_fraction"], 6),
                        "consumed, extrapolated": f(c["consumed_fraction_extrapolated"], 6)
                        if c["in_service"] else "-",
                        "consumed, total": f(c["consumed_fraction_total"], 6),
                        "effective life h": f(c["effective_life_h"], 0),
                        "uncapped life h": f(c["life_uncapped_h"], 0),
                        "equivalent temperature °C": f(c["equivalent_temp_c"], 2),
                        "mean temperature °C": f(c["mean_temp_c"], 2),
                        "p95 temperature °C": f(c["p95_temp_c"], 2),
                        "remaining h": f(c["remaining_h"], 0)}
                got = {k: fig.get(k, [None])[0] for k in want}
                tap.ok(got == want, f"{fmt} {name}: D to date, extrapolation, lives and "
                       "temperatures equal lifetime --json", "got  %s\nwant %s" % (got, want))
                if c["self_heating_k"]:
                    tap.ok(fig["equivalent temperature °C"][1] == "measured; %.2f °C effective"
                           % c["equivalent_effective_temp_c"], f"{fmt} {name}: the effective T_eq beside")
                eol = fig.get("projected end of life", ["", ""])
                base_ts = now.timestamp() if c["in_service"] else T_START + 615 * STEP
                want_day = datetime.datetime.fromtimestamp(base_ts + c["remaining_h"] * 3600,
                                                           datetime.timezone.utc).date()
                got_day = datetime.date.fromisoformat(eol[0]) if re.fullmatch(r"\d{4}-\d\d-\d\d", eol[0]) else None
                tap.ok(got_day is not None and abs((got_day - want_day).days) <= 1 and
                       ("report's date" if c["in_service"] else "last sample") in eol[1],
                       f"{fmt} {name}: projected end of life = {'now' if c['in_service'] else 'last sample'}"
                       " + remaining_h", (eol, want_day))
                # relative lives
                rl = t.get((sec, "cooler by K"), [])
                got = rl[0][1] if rl else []
                want = [[f(x["reduction_k"], 0), f(x["factor"], 3), f(x["life_h"], 0),
                         f(min(x["life_h"], c["life_cap_h"]), 0)] for x in c["relative_lifetime"][1:]]
                tap.ok(got == want, f"{fmt} {name}: relative lives at -10/-20/-30 K",
                       "got  %s\nwant %s" % (got, want))
                # warnings by code and message
                wt = t.get((sec, "code"), [])
                got = [tuple(r) for r in wt[0][1]] if wt else []
                want = [(w["code"], w["message"]) for w in c["warnings"]]
                tap.ok(got == want and want, f"{fmt} {name}: every warning by code and message",
                       "got  %s\nwant %s" % (got, want))
                # the checklist
                ck = t.get((sec, "item"), [])
                got = {r[0]: r[1] for r in ck[0][1]} if ck else {}
                want = {item: ("from configuration, not verified: " + c["review"][key]
                               if c["review"][key] is not None else "not recorded")
                        for item, key in CHECKLIST}
                tap.ok(all(got.get(k) == v for k, v in want.items()) and
                       got.get("ambient, case and core kept apart", "").startswith(
                           "from configuration, not verified: sensor %s on the %s basis" % (SENSOR, c["basis"])),
                       f"{fmt} {name}: the checklist shows the review: notes, 'not recorded' elsewhere",
                       "got  %s\nwant %s" % (got, want))
                tap.ok(got.get("evaluated at stabilized temperatures", "").startswith("checked against measurements: steady")
                       and got.get("series test conditions and validity", "").startswith(
                           "checked against measurements: 0.0 h below and 0.0 h above [40, 105] °C")
                       and got.get("vent clearance") == "not recorded (case_diameter_mm)"
                       and got.get("electrical clearance and creepage") == "not evaluated by this tool"
                       and all(RECORD.match(v) for v in got.values()),
                       f"{fmt} {name}: each item says what it rests on (measurements, configuration, "
                       "not recorded), never a bare pass", got)
            tap.ok("the configured rise (rise_k) is added" in text.replace("\\_", "_") and
                   "already contains the part" in text and "doubled above the rated ripple" in text,
                   f"{fmt}: the chain of assumptions for ambient + rise, case and ripple parts")
            plain = text.replace("\\", "")
            tap.ok("0.6 A at 120 Hz, frequency multiplier 0.5: 1.2 A at the rated frequency" in plain
                   and "0.9 A at 100000 Hz, frequency multiplier 1: 0.9 A at the rated frequency"
                   in plain and "= 1.5 A at the rated frequency, against the 1.2 A rating: OVER THE "
                   "RATING" in plain,
                   f"{fmt}: C7's ripple per frequency, each component and their sum at the rated "
                   "frequency")

        tap.ok(life["C30 bulk"]["review"]["enclosure"] == REVIEW["enclosure"], "the review note as configured")
        html = docs["html"]
        tap.ok("| bars &amp; &lt;tags&gt;" in html and "<tags>" not in html,
               "html: a review note is escaped")
        tap.ok(html.count("<svg") == 6, "html: two inline charts a capacitor", html.count("<svg"))
        for k in (1, 2, 3):
            for kind in ("profile", "consumed"):
                path = os.path.join(wd, f"r-cap{k}-{kind}.svg")
                ok = os.path.exists(path) and f"](<r-cap{k}-{kind}.svg>)" in docs["md"]
                try:
                    root = ET.parse(path).getroot()
                    ns = "{http://www.w3.org/2000/svg}"
                    name = list(life)[k - 1]
                    if kind == "profile":
                        ok = ok and len(root.findall(ns + "rect")) == 1 + len(prof[name]["bins"])
                    else:
                        pts = root.find(ns + "polyline").get("points").split()
                        ok = ok and len(pts) >= 10
                except (ET.ParseError, OSError, AttributeError):
                    ok = False
                tap.ok(ok, f"md: chart r-cap{k}-{kind}.svg beside it, linked, one bar a bin / a point a row")

        # --lifetime: the board report, then the review
        p = cli(*base, "report", "--lifetime", *WINDOW, "--format", "md", "-o", "-")
        secs = [line[3:] for line in p.stdout.split("\n") if line.startswith("## ")]
        tap.ok(p.returncode == 0 and "Zones" in secs and "Capacitor lifetime" in secs and
               secs[-3:] == ["Capacitor design review: C30 bulk", "Capacitor design review: C12 case",
                             "Capacitor design review: C7 ripple"] and
               p.stdout.startswith("# thermlog report: t.db"),
               "--lifetime adds the design review after the board report", secs)
        p = cli(*base, "report", *WINDOW, "--format", "md", "-o", "-")
        tap.ok(p.returncode == 0 and "design review" not in p.stdout, "without --lifetime no review")
        p = cli(*base, "report", "--lifetime", "--lifetime-only", "-o", "-")
        tap.ok(p.returncode == 2 and "not both" in p.stderr, "--lifetime and --lifetime-only exclude each other",
               p.stderr)

        # no capacitors configured
        bare = write_config(os.path.join(wd, "bare.yaml"))
        p = cli("--db", db, "-c", bare, "report", "--lifetime-only", *WINDOW, "--format", "md", "-o", "-")
        tap.ok(p.returncode == 0 and "No capacitors are configured" in p.stdout and
               "no capacitors configured" in p.stderr and "bare.yaml" in p.stderr,
               "no capacitors: the document and stderr say so", p.stdout[-400:] + p.stderr)
        # an empty window
        p = cli(*base, "report", "--lifetime-only", "--from", str(T_START - 86400), "--to",
                str(T_START - 3600), "--format", "md", "-o", "-")
        tap.ok(p.returncode == 0 and "No temperature samples in this window: no profile (the warnings say why)." in p.stdout
               and "no\\_data" in p.stdout, "an empty window: no profile, the no_data warning", p.stdout[-800:])


if __name__ == "__main__":
    main(run)
