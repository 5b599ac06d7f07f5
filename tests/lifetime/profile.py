#!/usr/bin/python3
"""`thermlog lifetime profile` over an imported history: the table, --json against bins
computed here from the samples (and against `thermlog lifetime --json`: the same hours, the
same consumed life), --bin 2, the --csv rows fed back to `thermlog lifetime calc
--profile-csv` (the same consumed life and equivalent temperature), bad --bin values, an
unknown capacitor, an empty window, and GET /api/v1/lifetime/profile byte for byte equal to
the CLI's --json. Usage: profile.py THERMLOGD THERMLOG FIXTURE"""
import json
import math
import os
import subprocess
import sys
import urllib.error
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from thermlog_test import Daemon, Workdir, main, write_config  # noqa: E402

T_START = 1785542400  # 2026-08-01T00:00:00Z
STEP = 300
SENSOR = "bench/c30_ambient"
RES = 0.1
# Pinned: the daemon's own cycles (now) lie outside, so the CLI and the API see the same.
WINDOW = ["--from", str(T_START), "--to", str(T_START + 3 * 86400)]
K_B = 8.617333262e-5


def history():
    """Two days of a daily cycle with a 3-hour outage and a hot afternoon (as e2e.py)."""
    rows = []
    for i in range(2 * 288 + 40):
        if 300 <= i < 336:
            continue
        phase = 2 * math.pi * i / 288
        rows.append((T_START + i * STEP, round(58 + 16 * math.sin(phase) + (9 if 120 <= i < 140 else 0), 1)))
    return rows


def weights(rows):
    """(temperature, hours) per sample by lifetime's rule: the spacing since the previous
    cycle, the previous interval after a gap, nothing for the first sample."""
    out, prev, prev_spacing, prev_dt = [], None, None, None
    for ts, v in rows:
        dt = 0
        if prev is not None:
            spacing = ts - prev
            dt = prev_dt if prev_spacing is not None and 2 * spacing > 3 * prev_spacing else spacing
            prev_spacing = spacing
        prev, prev_dt = ts, dt
        out.append((round(v / RES) * RES, dt / 3600))
    return out


def life_bt(t):  # C30: 5000 h @105 °C, B_t = 2, model temperature
    return 5000 * 2 ** ((105 - t) / 10)


def life_arr(t):  # C12: 2000 h @105 °C, Arrhenius 0.832 eV
    return 2000 * math.exp(0.832 / K_B * (1 / (t + 273.15) - 1 / (105 + 273.15)))


def bins_of(pts, rise, width):
    b = {}
    for t, h in pts:
        if h > 0:
            k = math.floor((t + rise) / width + 1e-9)
            b[k] = b.get(k, 0) + h
    return b


def near(a, b, rel):
    return a is not None and b is not None and abs(a - b) <= rel * max(abs(b), 1)


def run(tap):
    thermlogd, thermlog, fixture = sys.argv[1:4]

    def cli(*args, stdin=None):
        return subprocess.run([thermlog, *args], capture_output=True, text=True, input=stdin)

    with Workdir("thermlog-lifetime-profile.") as wd:
        rows = history()
        csv_in = os.path.join(wd, "history.csv")
        with open(csv_in, "w") as f:
            f.write("time,channel,value,unit\n")
            f.writelines(f"{ts},{SENSOR},{v},celsius\n" for ts, v in rows)
        db = os.path.join(wd, "t.db")
        p = cli("--db", db, "import", csv_in)
        tap.ok(p.returncode == 0, "import the history", p.stderr)
        cfg = write_config(os.path.join(wd, "t.yaml"), extra=(
            "capacitors:\n"
            f"  - name: C30 bulk\n    sensor: {SENSOR}\n    rated_life_h: 5000\n"
            "    rated_temp_c: 105\n    self_heating: {rise_k: 3}\n"
            f"  - name: C12 case\n    sensor: {SENSOR}\n    basis: case\n    rated_life_h: 2000\n"
            "    rated_temp_c: 105\n    model: arrhenius\n    ea_ev: 0.832\n"))
        base = ["--db", db, "-c", cfg, "lifetime"]
        p = cli(*base, "--json", *WINDOW)
        tap.ok(p.returncode == 0, "thermlog lifetime --json", p.stderr)
        life = {c["name"]: c for c in json.loads(p.stdout)["capacitors"]}
        pts = weights(rows)
        models = {"C30 bulk": (3, life_bt), "C12 case": (0, life_arr)}

        # the table
        p = cli(*base, "profile", *WINDOW)
        out = p.stdout
        tap.ok(p.returncode == 0 and "C30 bulk (sensor bench/c30_ambient, ambient): 48.2 h" in out
               and "effective °C  measured °C" in out and "[75,80)       [72,77)" in out,
               "table: the self-heated part shows effective and measured bins", out + p.stderr)
        tap.ok("C12 case (sensor bench/c30_ambient, case)" in out and "  bin °C " in out
               and "[40,45)" in out and "warning [data_gaps]" in out,
               "table: the case part's bins, the report's warnings", out)
        tap.ok("T_eq %.1f °C measured, %.1f °C effective (+3 K)" % (
            life["C30 bulk"]["equivalent_temp_c"], life["C30 bulk"]["equivalent_effective_temp_c"]) in out,
            "table: T_eq as thermlog lifetime has it", out)

        for width in (5, 2):
            args = [*base, "profile", "--json", *WINDOW] + (["--bin", str(width)] if width != 5 else [])
            p = cli(*args)
            if not tap.ok(p.returncode == 0, f"--json, {width} K bins", p.stderr):
                continue
            prof = json.loads(p.stdout)
            tap.ok(prof["bin_k"] == width, f"{width} K: bin_k")
            for c in prof["capacitors"]:
                name, (rise, lf) = c["name"], models[c["name"]]
                ref = life[name]
                bins = c["bins"]
                tap.ok(c["band"] == life[c["name"]]["band"], f"{c['name']}: the profile's band is lifetime's", c["band"])
                want = bins_of(pts, rise, width)
                lo, hi = min(want), max(want)
                tap.ok([(b["from_c"], b["to_c"]) for b in bins] ==
                       [(k * width, (k + 1) * width) for k in range(lo, hi + 1)],
                       f"{width} K, {name}: contiguous bins on multiples of {width}",
                       [(b["from_c"], b["to_c"]) for b in bins])
                tap.ok(all(near(b["hours"], want.get(k, 0), 1e-12)
                           for b, k in zip(bins, range(lo, hi + 1))),
                       f"{width} K, {name}: each bin's hours = the samples' here",
                       [(b["from_c"], b["hours"], want.get(k, 0)) for b, k in zip(bins, range(lo, hi + 1))])
                total = sum(b["hours"] for b in bins)
                tap.ok(near(total, ref["observed_h"], 1e-12) and c["hours"] == ref["observed_h"],
                       f"{width} K, {name}: total hours = lifetime's observed hours", (total, ref["observed_h"]))
                d = sum(b["consumed_fraction"] for b in bins)
                tap.ok(near(d, ref["consumed_fraction"], 1e-12)
                       and c["consumed_fraction"] == ref["consumed_fraction"],
                       f"{width} K, {name}: the bins' consumed life = lifetime's", (d, ref["consumed_fraction"]))
                # COSEL over the bins' rows, with this model written out here: L = sum A / sum (A / L_a)
                d_rows = sum(b["hours"] / lf(b["temp_c"]) for b in bins if b["hours"] > 0)
                tap.ok(near(d_rows, ref["consumed_fraction"], 1e-10),
                       f"{width} K, {name}: rows at the bins' temperatures consume the same life",
                       (d_rows, ref["consumed_fraction"]))
                tap.ok(all(b["from_c"] <= b["temp_c"] < b["to_c"] for b in bins if b["hours"] > 0),
                       f"{width} K, {name}: a bin's temperature lies in the bin")
                tap.ok(c["equivalent_temp_c"] == ref["equivalent_temp_c"]
                       and c["equivalent_effective_temp_c"] == ref["equivalent_effective_temp_c"]
                       and c["coverage"] == ref["coverage"],
                       f"{width} K, {name}: T_eq and coverage are lifetime's")
                tap.ok({w["code"] for w in c["warnings"]} == {w["code"] for w in ref["warnings"]},
                       f"{width} K, {name}: lifetime's warning codes", c["warnings"])
                measured = all(b["measured_from_c"] == b["from_c"] - 3 for b in bins) if rise else \
                    all("measured_from_c" not in b for b in bins)
                tap.ok(measured, f"{width} K, {name}: measured edges only with self-heating")

        # CSV -> lifetime calc --profile-csv: the same consumed life and equivalent temperature
        rating = {"C30 bulk": ["--rated-life-h", "5000", "--rated-temp-c", "105"],
                  "C12 case": ["--rated-life-h", "2000", "--rated-temp-c", "105",
                               "--model", "arrhenius", "--ea-ev", "0.832"]}
        for name, flags in rating.items():
            p = subprocess.run([thermlog, *base, "profile", "--csv", "--capacitor", name, *WINDOW],
                               capture_output=True)
            p.stdout, p.stderr = p.stdout.decode(), p.stderr.decode()
            lines = p.stdout.split("\r\n")
            tap.ok(p.returncode == 0 and lines[0] == "temp_c,hours" and len(lines) > 3
                   and all(len(line.split(",")) == 2 for line in lines if line),
                   f"--csv {name}: temp_c,hours rows (CRLF)", p.stdout + p.stderr)
            path = os.path.join(wd, "p.csv")
            with open(path, "w", newline="") as f:
                f.write(p.stdout)
            ref = life[name]
            for src, stdin in ((path, None), ("-", p.stdout)):
                c = cli("lifetime", "calc", *flags, "--profile-csv", src, "--json", stdin=stdin)
                if not tap.ok(c.returncode == 0, f"calc --profile-csv {src} reads {name}'s CSV", c.stderr):
                    continue
                got = json.loads(c.stdout)
                tap.ok(near(got["equivalent_temp_c"], ref["equivalent_effective_temp_c"], 1e-12),
                       f"round trip {name} ({src}): calc's T_eq = lifetime's effective T_eq",
                       (got["equivalent_temp_c"], ref["equivalent_effective_temp_c"]))
                tap.ok(near(got["consumed_fraction_per_hour"] * ref["observed_h"], ref["consumed_fraction"], 1e-12),
                       f"round trip {name} ({src}): the same consumed life",
                       (got["consumed_fraction_per_hour"] * ref["observed_h"], ref["consumed_fraction"]))
            c = cli("lifetime", "calc", *flags, "--profile-csv", path)
            tap.ok(c.returncode == 0 and "equivalent temperature:      %.2f °C" % ref["equivalent_effective_temp_c"]
                   in c.stdout, f"calc's text for {name}'s CSV", c.stdout + c.stderr)

        bad_csv = os.path.join(wd, "bad.csv")
        with open(bad_csv, "w") as f:
            f.write("temp_c,hours\n45,8\n55,abc\n")
        c = cli("lifetime", "calc", *rating["C30 bulk"], "--profile-csv", bad_csv)
        tap.ok(c.returncode == 2 and "line 3" in c.stderr and "--profile-csv" in c.stderr,
               "calc --profile-csv names a bad line", c.stderr)
        c = cli("lifetime", "calc", *rating["C30 bulk"], "--profile", "45:8", "--profile-csv", bad_csv)
        tap.ok(c.returncode == 2 and "one of --temp-c, --profile or --profile-csv" in c.stderr,
               "calc takes one profile", c.stderr)

        p = cli(*base, "profile", "--csv", *WINDOW)
        tap.ok(p.returncode == 2 and "--capacitor NAME" in p.stderr and not p.stdout,
               "--csv with two capacitors asks for --capacitor", p.stderr)
        for bad in ("0", "-5", "abc", "1e999", ""):
            p = cli(*base, "profile", "--bin", bad, *WINDOW)
            tap.ok(p.returncode == 2 and "--bin" in p.stderr and not p.stdout,
                   f"--bin '{bad}' is a usage error naming the option", p.stderr)
        p = cli(*base, "profile", "--capacitor", "C99", *WINDOW)
        tap.ok(p.returncode == 2 and "no capacitor named 'C99'" in p.stderr and "'C30 bulk'" in p.stderr,
               "an unknown capacitor is named with the configured ones", p.stderr)
        p = cli(*base, "profile", "--json", "--csv")
        tap.ok(p.returncode == 2 and "not both" in p.stderr, "--json and --csv exclude each other", p.stderr)

        empty = ["--from", str(T_START - 86400), "--to", str(T_START - 3600)]
        p = cli(*base, "profile", *empty)
        tap.ok(p.returncode == 0 and "C30 bulk (sensor bench/c30_ambient, ambient): no data in the window" in p.stdout
               and "warning [no_data]" in p.stdout, "an empty window says so", p.stdout + p.stderr)
        p = cli(*base, "profile", "--json", *empty)
        caps = json.loads(p.stdout)["capacitors"] if p.returncode == 0 else []
        tap.ok(len(caps) == 2 and all(c["bins"] == [] and c["warnings"][0]["code"] == "no_data" for c in caps),
               "an empty window in JSON: no bins, no_data", p.stdout)
        p = cli(*base, "profile", "--csv", "--capacitor", "C12 case", *empty)
        tap.ok(p.returncode == 1 and "no temperature samples in the window" in p.stderr and not p.stdout,
               "an empty window has no CSV to write", p.stderr)

        # HTTP: the same JSON, byte for byte
        d = Daemon(thermlogd, wd, ["-c", cfg, "--sysfs-root", fixture, "--db", db,
                                   "--listen", "127.0.0.1:0"]).start()
        port = d.http_port()
        if not tap.ok(port, "the daemon serves HTTP", d.log_text()):
            return
        url = f"http://127.0.0.1:{port}/api/v1/lifetime/profile?from={T_START}&to={T_START + 3 * 86400}"

        def get(q):
            try:
                with urllib.request.urlopen(url + q, timeout=30) as r:
                    return r.status, r.read().decode()
            except urllib.error.HTTPError as e:
                return e.code, e.read().decode()

        for q, args in (("", []), ("&bin=2", ["--bin", "2"]),
                        ("&capacitor=C12%20case", ["--capacitor", "C12 case"])):
            status, body = get(q)
            p = cli(*base, "profile", "--json", *WINDOW, *args)
            tap.ok(status == 200 and body == p.stdout, f"GET ...{q or ' (defaults)'} = the CLI's --json byte for byte",
                   body[:2000] + "\n----\n" + p.stdout[:2000])
        status, body = get("&bin=0")
        tap.ok(status == 400 and '"parameter":"bin"' in body, "bin=0 is a 400 naming 'bin'", body)
        status, body = get("&bin=x")
        tap.ok(status == 400 and '"parameter":"bin"' in body, "bin=x is a 400 naming 'bin'", body)
        status, body = get("&capacitor=C99")
        tap.ok(status == 404 and "C99" in body, "an unknown capacitor is a 404", body)
        # The consumed life over time (the dashboard's and the review's chart): each point is
        # lifetime --json from the window's start to it, the last the window's own figure.
        p = cli(*base, "series", "--json", *WINDOW)
        series = json.loads(p.stdout)["capacitors"] if p.returncode == 0 else []
        tap.ok(len(series) == 2 and all(8 <= len(c["points"]) <= 12 for c in series),
               "lifetime series --json: up to 12 points a capacitor", p.stdout[:1500] + p.stderr)
        for c in series:
            pts_c = c["points"]
            tap.ok(pts_c[-1]["consumed_fraction"] == life[c["name"]]["consumed_fraction"]
                   and pts_c[-1]["consumed_fraction_band"] == life[c["name"]]["band"]["consumed_fraction"],
                   f"{c['name']}: the last point is the window's consumed life and band", pts_c[-1])
            mid = pts_c[5]
            q = cli(*base, "--json", "--from", str(T_START), "--to", str(mid["to"]))
            part = [x for x in json.loads(q.stdout)["capacitors"] if x["name"] == c["name"]][0]
            tap.ok(mid["consumed_fraction"] == part["consumed_fraction"] and mid["observed_h"] == part["observed_h"],
                   f"{c['name']}: a middle point is lifetime --json --to it", (mid, part["consumed_fraction"]))
            tap.ok(all(a["to"] < b["to"] and a["consumed_fraction"] <= b["consumed_fraction"]
                       for a, b in zip(pts_c, pts_c[1:])), f"{c['name']}: points in time order, rising")
        text = cli(*base, "series", *WINDOW).stdout
        tap.ok(f"C30 bulk (sensor {SENSOR}, ambient):" in text and "band" in text,
               "lifetime series: the table", text)
        sb = f"http://127.0.0.1:{port}/api/v1/lifetime/series?from={T_START}&to={T_START + 3 * 86400}"
        with urllib.request.urlopen(sb, timeout=60) as r:
            body = r.read().decode()
        tap.ok(body == p.stdout, "GET /api/v1/lifetime/series = lifetime series --json byte for byte",
               body[:1000] + "\n----\n" + p.stdout[:1000])
        tap.ok(d.stop() == 0, "the daemon stops cleanly", d.log_text())


main(run)
