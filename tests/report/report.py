#!/usr/bin/python3
"""thermlog report over two seeded boards (seed.py): every number of the Markdown and the HTML
document, parsed back out of it, equals the CLI's JSON (stats --json, runs stats --json,
lifetime --json, peak --json, runs compare --json); the Markdown tables keep their column
counts; labels and names are escaped; the chart files sit beside the Markdown; two boards; an
empty window; -o never over a database and an existing file only with --force.
Usage: report.py THERMLOG"""
import html
import html.parser
import json
import math
import os
import re
import subprocess
import sys
import time
import xml.etree.ElementTree as ET

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from thermlog_test import Workdir, main  # noqa: E402
import seed as seeding  # noqa: E402

MIB = 1.0 / 1048576


def iso(ts):
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(ts))


def md_cells(line):
    """The cells of a Markdown table row: split at bars that are not escaped, unescaped."""
    cells, cur, i = [], "", 0
    body = line.strip()[1:-1] if line.strip().endswith("|") else line.strip()[1:]
    while i < len(body):
        if body[i] == "\\" and i + 1 < len(body):
            cur += body[i + 1]
            i += 2
            continue
        if body[i] == "|":
            cells.append(cur)
            cur = ""
        else:
            cur += body[i]
        i += 1
    cells.append(cur)
    return [html.unescape(c.strip()) for c in cells]


def md_tables(text):
    """[(section, header, rows, consistent)] of a Markdown document."""
    out, section, lines = [], None, text.split("\n")
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("## "):
            section = md_cells("|" + line[3:] + "|")[0]
        if line.startswith("|") and i + 1 < len(lines) and re.fullmatch(r"\|( -{3}:? \|)+",
                                                                            lines[i + 1]):
            header = md_cells(line)
            rows, consistent = [], len(md_cells(lines[i + 1])) == len(header)
            i += 2
            while i < len(lines) and lines[i].startswith("|"):
                cells = md_cells(lines[i])
                consistent = consistent and len(cells) == len(header)
                rows.append(cells)
                i += 1
            out.append((section, header, rows, consistent))
            continue
        i += 1
    return out


class HtmlTables(html.parser.HTMLParser):
    """[(section, header, rows, True)] of an HTML document, and its text."""

    def __init__(self):
        super().__init__()
        self.tables, self.section, self.cell, self.row, self.in_h2 = [], None, None, None, False
        self.text = []
        self.tags = []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))
        if tag == "h2":
            self.in_h2, self.section = True, ""
        elif tag == "table":
            self.tables.append([self.section, None, [], True])
        elif tag == "tr":
            self.row = []
        elif tag in ("td", "th"):
            self.cell = ""

    def handle_endtag(self, tag):
        if tag == "h2":
            self.in_h2 = False
        elif tag in ("td", "th") and self.row is not None:
            self.row.append(self.cell)
            self.cell = None
        elif tag == "tr" and self.tables:
            t = self.tables[-1]
            if t[1] is None:
                t[1] = self.row
            else:
                t[2].append(self.row)
            self.row = None

    def handle_data(self, data):
        self.text.append(data)
        if self.in_h2:
            self.section += data
        if self.cell is not None:
            self.cell += data


def html_tables(text):
    p = HtmlTables()
    p.feed(text)
    return [tuple(t) for t in p.tables], "".join(p.text), p.tags


def find(tables, section, first_header):
    return [t for t in tables if t[0] == section and t[1] and t[1][0] == first_header]


def f2(v):
    return "-" if v is None else "%.2f" % v


NS = "{http://www.w3.org/2000/svg}"
# The line style of each zone's role (report-chart.c): one per role, never two roles alike.
ROLE_STROKE = {"thermal/bigcore0-thermal": ("#c0392b", None), "thermal/npu-thermal": ("#1f5fa8", "7 4"),
               "thermal/soc-thermal": ("#2c3e50", None), "thermal/center-thermal": ("#7f8c8d", "2 3")}


def round_ticks(values):
    """Whether tick labels are evenly spaced multiples of 1, 2, 2.5 or 5 times a power of ten."""
    if len(values) < 3:
        return False
    step = values[1] - values[0]
    even = all(abs((values[i + 1] - values[i]) - step) < 1e-9 for i in range(len(values) - 1))
    mag = 10 ** math.floor(math.log10(step))
    nice = any(abs(step - m * mag) < 1e-9 * mag for m in (1, 2, 2.5, 5, 10))
    return even and nice and all(abs(v / step - round(v / step)) < 1e-6 for v in values)


def check_chart(tap, root, zones, peak):
    """The peak chart: a line a zone over the peak's cycles in its role's style, a legend entry
    per role naming its zones, round ticks on both axes, the unit along the y axis (not over
    its top tick), scaled by its viewBox."""
    lines = root.findall(NS + "polyline")
    styles = {x.find(NS + "title").text: (x.get("stroke"), x.get("stroke-dasharray"))
              for x in lines}
    points = [len(x.get("points").split()) for x in lines]
    tap.ok(len(lines) == len(zones) and points == [len(peak["rows"])] * len(zones) and
           root.get("viewBox") and root.get("width") is None,
           "the chart: one line a zone over the peak's cycles, scaled by its viewBox", points)
    tap.ok(styles == ROLE_STROKE and len(set(styles.values())) == len(styles),
           "the chart: one line style per role (big-core solid red, NPU dashed blue, ...)",
           styles)
    texts = [t.text or "" for t in root.iter(NS + "text")]
    legend = [t for t in texts if ": " in t and t.split(": ")[0] in (
        "big-core zone", "NPU zone", "SoC zone", "other")]
    tap.ok(sorted(legend) == ["NPU zone: npu-thermal", "SoC zone: soc-thermal",
                              "big-core zone: bigcore0-thermal", "other: center-thermal"],
           "the chart: a legend naming each role's zones", texts)
    nums = [t for t in root.iter(NS + "text") if re.fullmatch(r"-?\d+(\.\d+)?", t.text or "")]
    ys = sorted(float(t.text) for t in nums if t.get("text-anchor") == "end")
    xs = sorted(float(t.text) for t in nums if t.get("text-anchor") == "middle")
    tap.ok(round_ticks(ys) and round_ticks(xs) and ys[0] <= min(
        v for r in peak["rows"] for v in r[1:] if v is not None) and ys[-1] >= peak["max"],
           "the chart: round ticks on both axes, around every value", (ys, xs))
    unit = [t for t in root.iter(NS + "text") if t.text == "°C"]
    tap.ok(len(unit) == 1 and "rotate(-90" in (unit[0].get("transform") or ""),
           "the chart: °C along the y axis, not over its top tick",
           [(t.text, t.attrib) for t in unit])


def board_csv(path, rows):
    """Two hours of one-minute samples of @rows: [(key, unit, f(minute))]."""
    with open(path, "w") as f:
        f.write("unix,channel,value,unit\n")
        for i in range(120):
            for key, unit, fn in rows:
                f.write("%d,%s,%s,%s\n" % (seeding.T0 + 60 * i, key, fn(i), unit))


def bump(i):
    return max(0.0, 20 - abs(i - 60) / 2.0)


RK3588 = [("thermal/bigcore0-thermal", "celsius", lambda i: "%.3f" % (50 + bump(i))),
          ("thermal/littlecore-thermal", "celsius", lambda i: "%.3f" % (46 + bump(i) / 2)),
          ("thermal/soc-thermal", "celsius", lambda i: "%.3f" % (48 + bump(i) / 2)),
          ("thermal/center-thermal", "celsius", lambda i: "%.3f" % (47 + bump(i) / 3)),
          # A capacitor's thermocouple, hotter than every zone, and its cold junction.
          ("iio/maxim_thermocouple/temp", "celsius", lambda i: "%.2f" % (90 + (i % 3) * 0.25)),
          ("iio/maxim_thermocouple/temp_ambient", "celsius", lambda i: "%.4f" % (30 + (i % 2) * 0.0625)),
          ("cpufreq/policy0", "hertz", lambda i: 1800000000 if i % 2 else 408000000),
          ("cpufreq/policy4", "hertz", lambda i: 2400000000 if i % 3 else 408000000),
          ("cpufreq/policy6", "hertz", lambda i: 2400000000 if i % 4 else 408000000)]
X86 = [("thermal/x86_pkg_temp", "celsius", lambda i: "%.3f" % (60 + bump(i))),
       ("thermal/acpitz", "celsius", lambda i: "%.3f" % (40 + bump(i) / 4)),
       ("cpufreq/policy0", "hertz", lambda i: 4700000000 if i % 2 else 800000000),
       ("cpufreq/policy1", "hertz", lambda i: 4600000000 if i % 3 else 800000000)]


def peak_and_zones(tap, tl, wd):
    """The peak picks the hottest thermal zone, never a capacitor's thermocouple hotter than it;
    --peak-channel chooses; the Zones table lists thermal zones alone, the thermocouple and its
    cold junction go to a table of their own, each said for what it is."""
    db = os.path.join(wd, "rk.db")
    board_csv(os.path.join(wd, "rk.csv"), RK3588)
    tl("import", os.path.join(wd, "rk.csv"), db=db)
    p = tl("report", "--format", "md", "-o", "-", db=db)
    tap.ok(p.returncode == 0 and "The hottest zone, thermal/bigcore0-thermal, the big-core zone, "
           "peaked at 70.00 °C" in p.stdout and "iio/maxim_thermocouple/temp peaked" not in p.stdout,
           "the peak is the hottest thermal zone's, not the 90 °C thermocouple's",
           p.stdout[p.stdout.find("## Peak"):][:400] + p.stderr)
    t = md_tables(p.stdout)
    zt = find(t, "Zones", "channel")
    tap.ok(zt and sorted(r[0] for r in zt[0][2]) == sorted(k for k, _, _ in RK3588
                                                            if k.startswith("thermal/")),
           "the Zones table lists the thermal zones alone", zt[0][2] if zt else t)
    ot = find(t, "Other temperatures", "channel")
    what = {r[0]: r[1] for r in ot[0][2]} if ot else {}
    tap.ok(what == {"iio/maxim_thermocouple/temp": "thermocouple",
                    "iio/maxim_thermocouple/temp_ambient":
                        "ambient: the thermocouple's cold junction"},
           "the thermocouple and its cold junction have a table of their own, said for what "
           "they are", what)
    p = tl("report", "--peak-channel", "iio/maxim_thermocouple/temp", "--format", "md", "-o", "-",
           db=db)
    tap.ok(p.returncode == 0 and "The channel --peak-channel chose, iio/maxim\\_thermocouple/temp, "
           "peaked at 90.50 °C" in p.stdout, "--peak-channel chooses the peak's channel",
           p.stdout[p.stdout.find("## Peak"):][:300] + p.stderr)
    p = tl("report", "--peak-channel", "thermal/*little*", "--format", "md", "-o", "-", db=db)
    tap.ok(p.returncode == 0 and "--peak-channel chose, thermal/littlecore-thermal" in p.stdout,
           "--peak-channel takes a glob (its hottest)", p.stderr)
    p = tl("report", "--peak-channel", "thermal/bigcore-thermal", "-o", "-", db=db)
    tap.ok(p.returncode == 2 and "the peak's channel" in p.stderr and "did you mean" in p.stderr and
           "thermal/bigcore0-thermal" in p.stderr,
           "an unknown --peak-channel is refused with the near names", p.stderr)


def roles(tap, tl, wd):
    """Two boards' zones and clocks pair by their part: an RK3588's cpufreq/policy0 (its little
    cluster) is never compared with an x86 board's cpufreq/policy0 (its CPU), nor its big-core
    zone with the x86 package; --map-channel and the configuration's roles: pair what they name
    and nothing else."""
    rk, x86 = os.path.join(wd, "rk.db"), os.path.join(wd, "x86.db")
    board_csv(os.path.join(wd, "x86.csv"), X86)
    tl("import", os.path.join(wd, "x86.csv"), db=x86)
    p = tl("report", "--compare", x86, "--format", "md", "-o", "-", db=rk)
    t = md_tables(p.stdout)
    cc = find(t, "Clocks compared", "clock")
    zc = find(t, "Zones compared", "zone")
    tap.ok(p.returncode == 0 and not cc and not zc,
           "RK3588 against x86: no clock or zone compared with a namesake of another part",
           [x[:2] for x in t])
    sec = p.stdout.split("## Clocks compared")[1].split("\n## ")[0] if "## Clocks compared" in \
        p.stdout else ""
    tap.ok("cpufreq/policy0 (A, little cluster)" in sec and "cpufreq/policy0 (B, CPU cluster)" in sec
           and "cpufreq/policy4 (A, big cluster)" in sec and "Unmatched, not compared" in sec,
           "the unmatched clocks are listed as such, with their parts", sec)
    p = tl("report", "--compare", x86, "--map-channel", "cpufreq/policy4=cpufreq/policy0",
           "--map-channel", "thermal/bigcore0-thermal=thermal/x86_pkg_temp", "--format", "md",
           "-o", "-", db=rk)
    t = md_tables(p.stdout)
    cc = find(t, "Clocks compared", "clock")
    zc = find(t, "Zones compared", "zone")
    tap.ok(p.returncode == 0 and cc and [r[0] for r in cc[0][2]] ==
           ["cpufreq/policy4 (B: cpufreq/policy0)"] and cc[0][2][0][-1] == "--map-channel" and
           zc and [r[0] for r in zc[0][2]] == ["thermal/bigcore0-thermal (B: thermal/x86_pkg_temp)"],
           "--map-channel pairs what it names, and nothing else",
           [(x[0], x[2]) for x in t if x[0] in ("Clocks compared", "Zones compared")])
    row = zc[0][2][0] if zc else []
    tap.ok(row[7:10] == ["70.00", "80.00", "10.00"] if row else False,
           "and compares it as a temperature: B−A in K", row)
    p = tl("report", "--compare", x86, "--map-channel", "cpufreq/policy4", "-o", "-", db=rk)
    tap.ok(p.returncode == 2 and "--map-channel cpufreq/policy4" in p.stderr,
           "--map-channel without =B is refused", p.stderr)
    # Two RK3588 boards, B's big cluster named otherwise (policy6 alone): paired by role.
    rk2 = os.path.join(wd, "rk2.db")
    board_csv(os.path.join(wd, "rk2.csv"), [r for r in RK3588 if r[0] != "cpufreq/policy4"])
    tl("import", os.path.join(wd, "rk2.csv"), db=rk2)
    p = tl("report", "--compare", rk2, "--format", "md", "-o", "-", db=rk)
    cc = find(md_tables(p.stdout), "Clocks compared", "clock")
    got = [(r[0], r[-1]) for r in cc[0][2]] if cc else []
    tap.ok(got == [("cpufreq/policy0", "little cluster"),
                   ("cpufreq/policy4 (B: cpufreq/policy6)", "big cluster")],
           "two RK3588s: the big cluster with the big cluster whatever its number; the second "
           "big cluster unmatched", got)
    # The configuration's roles: on the first board (kept in its database by an import).
    cfg = os.path.join(wd, "roles.yaml")
    with open(cfg, "w") as f:
        f.write("board:\n  name: RK with roles\n  cooling: heatsink\nroles:\n"
                "  thermal/center-thermal: cpu-zone\n")
    tl("import", os.path.join(wd, "rk.csv"), cfg=cfg, db=rk)
    p = tl("report", "--compare", x86, "--format", "md", "-o", "-", db=rk)
    zc = find(md_tables(p.stdout), "Zones compared", "zone")
    tap.ok(p.returncode == 0 and zc and [r[0] for r in zc[0][2]] ==
           ["thermal/center-thermal (B: thermal/x86_pkg_temp)"] and
           p.stdout.startswith("# thermlog report: RK with roles against"),
           "roles: kept in the database pairs center-thermal (declared a CPU zone) with "
           "x86_pkg_temp; board.name names the board", p.stdout[:200])


def run(tap):
    thermlog = sys.argv[1]

    def tl(*args, cfg=None, db=None):
        cmd = [thermlog] + (["-c", cfg] if cfg else []) + (["--db", db] if db else []) + list(args)
        return subprocess.run(cmd, capture_output=True, text=True)

    with Workdir("thermlog-report.") as wd:
        a, b, cfg = seeding.seed(thermlog, wd)

        def js(*args, db=a):
            p = tl(*args, cfg=cfg, db=db)
            if p.returncode != 0:
                raise RuntimeError(" ".join(args) + ": " + p.stderr)
            return json.loads(p.stdout)

        stats = js("stats", "--json")
        runs = js("runs", "stats", "--json", "--percentile", "0", "--over", "25m")
        life = js("lifetime", "--json")
        zones = [c for c in stats["channels"] if c["kind"] == "temperature"]
        hottest = max(zones, key=lambda c: c["max"])
        peak = js("peak", "--json", "--channel", hottest["key"])

        md = os.path.join(wd, "r.md")
        p = tl("report", "--over", "25m", "-o", md, cfg=cfg, db=a)
        tap.ok(p.returncode == 0 and os.path.exists(md), "report -o FILE.md writes Markdown",
               p.stderr)
        text = open(md).read() if os.path.exists(md) else ""
        hp = os.path.join(wd, "r.html")
        p = tl("report", "--over", "25m", "-o", hp, cfg=cfg, db=a)
        tap.ok(p.returncode == 0 and os.path.exists(hp), "report -o FILE.html writes HTML",
               p.stderr)
        htext = open(hp).read() if os.path.exists(hp) else ""
        mdt = md_tables(text)
        htt, hplain, htags = html_tables(htext)
        tap.ok(len(mdt) >= 7 and all(t[3] for t in mdt),
               "every Markdown table has the header's column count in every row (%d tables)"
               % len(mdt), [t[:2] for t in mdt if not t[3]])

        for fmt, tables, plain in (("md", mdt, text), ("html", htt, hplain)):
            # The board and window.
            board = find(tables, "Board and window", "")
            rows = {r[0]: r[1] for r in board[0][2]} if board else {}
            tap.ok(rows.get("board") == "Radxa ROCK 5C <i>&</i>" and
                   rows.get("kernel") == "6.1.75" and rows.get("database") == "a.db",
                   "%s: the board and kernel from the latest run's fingerprint" % fmt, rows)
            tap.ok(rows.get("samples") == "%d of %d expected" % (stats["cycles"],
                                                                 stats["expected_cycles"]) and
                   rows.get("coverage", "").startswith("%.1f %%" % (100 * stats["coverage"])) and
                   rows.get("first sample") == iso(seeding.T0) and
                   rows.get("last sample") == iso(seeding.T0 + (seeding.HOURS * 60 - 1) * 60) and
                   rows.get("interval") == "%d s" % stats["interval_s"] and
                   rows.get("window") == "%s .. %s" % (iso(stats["from"]), iso(stats["to"])),
                   "%s: window, first and last sample, samples, coverage, interval as stats"
                   % fmt, rows)
            # Zones: the numbers of stats --json, two decimals.
            zt = find(tables, "Zones", "channel")
            got = {r[0]: r for r in zt[0][2]} if zt else {}
            # One channel column: a label that only repeats the key is not shown twice.
            want = {c["key"]: [c["key"], "°C", str(c["count"]), f2(c["mean"]), f2(c["p50"]),
                               f2(c["p95"]), f2(c["max"]), iso(c["max_time"])] for c in zones}
            tap.ok(got == want, "%s: zones' mean, p50, p95, max and its time equal stats --json"
                   % fmt, "got  %s\nwant %s" % (got, want))
            tap.ok("weighted by samples" in plain, "%s: the weighting is stated" % fmt)
            # Memory and swap in MiB to 0.1.
            mt = find(tables, "Memory and swap", "channel")
            got = {r[0]: r[3:8] for r in mt[0][2]} if mt else {}
            want = {c["key"]: ["%.1f" % (c[k] * MIB) for k in ("mean", "p50", "p95", "min", "max")]
                    for c in stats["channels"] if c["kind"] == "memory"}
            tap.ok(got == want and len(want) == 2, "%s: memory and swap equal stats --json (MiB)"
                   % fmt, "got  %s\nwant %s" % (got, want))
            # Clocks: residency from time_in_state.
            ct = find(tables, "Clocks", "channel")
            got = {r[0]: (r[2], r[3]) for r in ct[0][2]} if ct else {}
            want = {}
            for c in stats["channels"]:
                if c["kind"] == "frequency":
                    tis = sorted(c["time_in_state"], key=lambda s: (-s["share"], -s["value"]))
                    res = "held %.0f MHz for %.1f %% of the samples" % (tis[0]["value"] * 1e-6,
                                                                       100 * tis[0]["share"])
                    res += "".join(", %.0f MHz %.1f %%" % (s["value"] * 1e-6, 100 * s["share"])
                                   for s in tis[1:])
                    want[c["key"]] = ("%.0f" % (c["mean"] * 1e-6), res)
            tap.ok(got == want, "%s: clock residency per cluster and devfreq device" % fmt,
                   "got  %s\nwant %s" % (got, want))
            tap.ok("held 1000 MHz for 100.0 % of the samples" in plain,
                   "%s: the NPU held 1000 MHz for 100.0 %%" % fmt)
            # The peak.
            tap.ok("peaked at %.2f °C at %s" % (peak["max"], iso(peak["max_time"])) in plain and
                   peak["key"] == "thermal/bigcore0-thermal",
                   "%s: the peak's maximum and time equal peak --json" % fmt)
            # Runs: runs stats --json --percentile 0 --over 25m.
            rt = find(tables, "Runs", "label")
            dur = {r[0]: r for r in rt[0][2]} if rt else {}
            eng = {r[0]: r for r in rt[1][2]} if len(rt) > 1 else {}
            bad = []
            for lab in runs["labels"]:
                d = lab["duration_s"]
                e = lab["energy_j"]
                r = lab["rss_max_bytes"]
                others = sum(lab[k] for k in ("signaled", "timeout", "lost", "running"))
                want_d = [lab["label"], str(lab["count"]), str(lab["ok"]), str(lab["failed"]),
                          "-" if not others else None, f2(d["mean"]), f2(d["p50"]), f2(d["p95"]),
                          f2(d["p0"]), f2(d["max"]), str(lab["over"]),
                          "%.2f" % (100.0 * lab["over"] / lab["ok"])]
                want_e = [lab["label"], str(e["n"]), f2(e["mean"]), "%.4f" % (e["mean"] / 3600),
                          f2(e["p50"]), f2(e["p95"]), None, "%.1f" % (r["p50"] * MIB),
                          "%.1f" % (r["max"] * MIB),
                          "%.1f" % (lab["swap_max_bytes"]["max"] * MIB)]
                gd, ge = dur.get(lab["label"]), eng.get(lab["label"])
                if not gd or any(w is not None and g != w for g, w in zip(gd, want_d)):
                    bad.append(("duration", gd, want_d))
                if not ge or any(w is not None and g != w for g, w in zip(ge, want_e)):
                    bad.append(("energy", ge, want_e))
                if ge and not ge[6].startswith("%d of %d ok runs" % (e["n"], lab["ok"])):
                    bad.append(("coverage", ge[6]))
            tap.ok(not bad and len(dur) == 2, "%s: runs per label equal runs stats --json "
                   "(attempts, by status, mean/p50/p95/min/max, over, energy J and Wh, RSS)"
                   % fmt, bad)
            tap.ok(seeding.ODD_LABEL in dur, "%s: the label with markup reads as itself" % fmt,
                   list(dur))
            # Lifetime.
            lt = find(tables, "Capacitor lifetime", "capacitor")
            got = lt[0][2][0][:9] if lt and lt[0][2] else None
            c = life["capacitors"][0]
            want = [c["name"], c["sensor"], "%.1f" % c["observed_h"],
                    "%.1f" % (100 * c["coverage"]),
                    "%.4f" % (100 * c["consumed_fraction"]), "%.0f" % c["effective_life_h"],
                    "%.0f" % c["remaining_h"], f2(c["mean_temp_c"]), f2(c["p95_temp_c"])]
            tap.ok(got == want, "%s: the capacitor's figures equal lifetime --json" % fmt,
                   "got  %s\nwant %s" % (got, want))

        # Escaping: nothing user-controlled is markup.
        tap.ok("<b>|bench" not in htext and "<i>&</i>" not in htext and
               "&lt;b&gt;|bench&lt;/b&gt; &amp; co" in htext and "C12 &lt;bulk&gt;" in htext,
               "html: labels, board and capacitor names are escaped")
        tap.ok("<b>" not in text and "<i>" not in text and "\\|bench" in text,
               "md: markup in labels is escaped (bars too)")
        tap.ok(not [t for t, at in htags if t in ("script", "link", "img", "iframe", "object")
                    or "src" in at or "href" in at] and
               "Content-Security-Policy" in htext and "default-src 'none'" in htext,
               "html: no script, link, image or reference; a CSP forbids fetching",
               [t for t, at in htags if t in ("script", "link", "img") or "src" in at])
        tap.ok(htext.count("<svg") == 1 and "@media print" in htext and
               "break-before:page" in htext and 'name="viewport"' in htext,
               "html: an inline SVG chart, a print stylesheet with page breaks, a viewport")

        # The chart beside the Markdown.
        svg = os.path.join(wd, "r-peak.svg")
        tap.ok("](<r-peak.svg>)" in text and os.path.exists(svg), "md: the peak chart is "
               "written as FILE-peak.svg and linked", [x for x in text.split("\n") if "svg" in x])
        try:
            check_chart(tap, ET.parse(svg).getroot(), zones, peak)
        except (ET.ParseError, OSError) as e:
            tap.ok(False, "the chart parses as SVG", str(e))

        # Standard output: no chart files, and it says so.
        os.remove(svg)
        p = tl("report", "--over", "25m", "--format", "md", "-o", "-", cfg=cfg, db=a)
        tap.ok(p.returncode == 0 and "Chart left out" in p.stdout and not os.path.exists(svg)
               and md_tables(p.stdout) == md_tables(text.replace("](<r-peak.svg>)", "")),
               "-o - writes the Markdown to stdout, no chart file, said so", p.stderr)

        # --weight time: the numbers of stats --weight time --json.
        tstats = js("stats", "--json", "--weight", "time")
        p = tl("report", "--weight", "time", "--format", "md", "-o", "-", cfg=cfg, db=a)
        zt = find(md_tables(p.stdout), "Zones", "channel")
        got = {r[0]: r[3:7] for r in zt[0][2]} if zt else {}
        want = {c["key"]: [f2(c["mean"]), f2(c["p50"]), f2(c["p95"]), f2(c["max"])]
                for c in tstats["channels"] if c["kind"] == "temperature"}
        tap.ok(p.returncode == 0 and got == want and "weighted by time" in p.stdout and
               "held 1000 MHz for 100.0 % of the time" in p.stdout,
               "--weight time: zones equal stats --weight time --json, residency of the time",
               "got  %s\nwant %s" % (got, want))

        # A clock of seven operating points: six shown, then "1 more state" (one, singular).
        seven = os.path.join(wd, "seven.db")
        with open(os.path.join(wd, "seven.csv"), "w") as f:
            f.write("unix,channel,value,unit\n")
            for i in range(70):
                f.write("%d,cpufreq/policy6,%d,hertz\n" % (seeding.T0 + 60 * i,
                                                          (408 + 200 * (i % 7)) * 1000000))
        tl("import", os.path.join(wd, "seven.csv"), db=seven)
        p = tl("report", "--format", "md", "-o", "-", db=seven)
        tap.ok(p.returncode == 0 and ", 1 more state" in p.stdout and
               "1 more states" not in p.stdout, "seven clock states: six shown, '1 more state'",
               p.stdout + p.stderr)

        # --label: only that label.
        p = tl("report", "--label", "sdxl-npu", "--format", "md", "-o", "-", cfg=cfg, db=a)
        rt = find(md_tables(p.stdout), "Runs", "label")
        tap.ok(p.returncode == 0 and rt and [r[0] for r in rt[0][2]] == ["sdxl-npu"],
               "--label shows that label alone", p.stderr)
        p = tl("report", "--label", "sdxl-np", "-o", "-", cfg=cfg, db=a)
        tap.ok(p.returncode == 2 and "sdxl-np" in p.stderr and "did you mean" in p.stderr,
               "an unknown label is refused with the near ones", p.stderr)

        # An empty window says so.
        p = tl("report", "--from", "2027-01-01", "--to", "2027-01-02", "--format", "md", "-o",
               "-", cfg=cfg, db=a)
        t = md_tables(p.stdout)
        tap.ok(p.returncode == 0 and "No samples in this window (2027-01-01T00:00:00Z .. "
               "2027-01-02T00:00:00Z)" in p.stdout and not find(t, "Zones", "channel") and
               "No runs in this window." in p.stdout,
               "an empty window says so instead of empty tables", p.stdout + p.stderr)
        p = tl("report", "--from", "2027-01-01", "--to", "2027-01-02", "-o", "-", cfg=cfg, db=a)
        tap.ok(p.returncode == 0 and "No samples in this window" in p.stdout and
               "<svg" not in p.stdout, "and so does its HTML", p.stderr)
        empty_db = os.path.join(wd, "empty.db")
        tl("runs", "import", os.path.join(wd, "a-jobs.csv"), db=empty_db)
        p = tl("report", "--format", "md", "-o", "-", db=empty_db)
        tap.ok(p.returncode == 0 and "No samples: the database holds no history yet." in
               p.stdout, "a database without samples says so", p.stdout + p.stderr)

        # Two boards.
        cmp_md = os.path.join(wd, "cmp.md")
        before = os.stat(b)
        with open(b, "rb") as f:
            b_bytes = f.read()
        p = tl("report", "--compare", b, "-o", cmp_md, cfg=cfg, db=a)
        ctext = open(cmp_md).read() if p.returncode == 0 else ""
        ct = md_tables(ctext)
        tap.ok(p.returncode == 0 and all(t[3] for t in ct), "--compare OTHER.db writes both "
               "boards, tables consistent", p.stderr)
        with open(b, "rb") as f:
            tap.ok(f.read() == b_bytes and os.stat(b).st_mtime == before.st_mtime,
                   "the other database is not written")
        tap.ok(ctext.startswith("# thermlog report: Radxa ROCK 5C &lt;i&gt;&amp;&lt;/i&gt; "
                                "against Radxa ROCK 5B") and
               os.path.exists(os.path.join(wd, "cmp-peak-1.svg")) and
               os.path.exists(os.path.join(wd, "cmp-peak-2.svg")),
               "each board named by its fingerprint; a chart each", ctext[:200])
        bstats = js("stats", "--json", db=b)
        zc = find(ct, "Zones compared", "zone")
        got = {r[0]: r[1:] for r in zc[0][2]} if zc else {}
        bz = {c["key"]: c for c in bstats["channels"]}
        want = {}
        parts = {"thermal/bigcore0-thermal": "big-core zone", "thermal/npu-thermal": "NPU zone",
                 "thermal/soc-thermal": "SoC zone", "thermal/center-thermal": "same key"}
        for c in zones:
            o = bz[c["key"]]
            want[c["key"]] = [v for k in ("mean", "p95", "max")
                              for v in (f2(c[k]), f2(o[k]), "%.2f" % (o[k] - c[k]))]
            want[c["key"]].append(parts[c["key"]])
        tap.ok(got == want, "zones side by side with B−A in K (temperatures as differences, "
               "never ratios), from both boards' stats --json",
               "got  %s\nwant %s" % (got, want))
        # Clocks and memory side by side: mean, p95, max and B/A (MHz, MiB) from both boards'
        # stats --json, and each board's commonest states.
        for section, kind, unit, scale, places in (("Clocks compared", "frequency", "MHz", 1e-6, 0),
                                                   ("Memory and swap compared", "memory", "MiB", MIB, 1)):
            tc = find(ct, section, "clock" if kind == "frequency" else "channel")
            got = {r[0]: r[1:] for r in tc[0][2]} if tc else {}
            want = {}
            for c in stats["channels"]:
                if c["kind"] != kind:
                    continue
                o = bz[c["key"]]
                row = [unit] + [v for k in ("mean", "p95", "max") for v in (
                    "%.*f" % (places, c[k] * scale), "%.*f" % (places, o[k] * scale), "%.3f" % (o[k] / c[k]))]
                if kind == "frequency":
                    for s in (c, o):
                        tis = sorted(s["time_in_state"], key=lambda x: (-x["share"], -x["value"]))
                        row.append("held %.0f MHz for %.1f %% of the samples" % (tis[0]["value"] * 1e-6,
                                                                                  100 * tis[0]["share"]) +
                                   "".join(", %.0f MHz %.1f %%" % (x["value"] * 1e-6, 100 * x["share"])
                                           for x in tis[1:3]))
                # The part each row pairs by: the policy of one kind of core, the NPU.
                row.append({"cpufreq/policy4": "CPU cluster", "devfreq/fdab0000.npu": "NPU"}
                           .get(c["key"], "same key"))
                want[c["key"]] = row
            ratios = [r[4] for r in got.values()]
            tap.ok(got == want and len(want) == 2 and any(x != "1.000" for x in ratios),
                   "%s: side by side with B/A, from both boards' stats --json" % section.lower(),
                   "got  %s\nwant %s" % (got, want))
        rc = find(ct, "Runs compared", "label")
        got = {r[0]: r[1:] for r in rc[0][2]} if rc else {}
        want = {}
        for lab in ("sdxl-npu", seeding.ODD_LABEL):
            j = js("runs", "compare", "--label", lab, "--json", b)
            d, e = j["duration_s"], j["energy_j"]
            h, o = j["here"], j["other_board"]

            def pair(x, y, places):
                return "%s / %s" % tuple("-" if v is None else "%.*f" % (places, v)
                                         for v in (x, y))

            def failed(s):
                ended = s["count"] - s["running"]
                return 100.0 * (ended - s["ok"]) / ended if ended else None

            def power(s):
                return s["energy_j"]["mean"] / s["duration_s"]["mean"] if s["energy_j"] else None

            def exposure(board):
                share = board and board["throttle"]["loaded_share"]
                return None if share is None else 100 * share
            want[lab] = ["%d / %d" % (h["count"], o["count"]), "%d / %d" % (h["ok"], o["ok"]),
                         pair(failed(h), failed(o), 1),
                         f2(d["median_here"]), f2(d["median_other"]),
                         pair(h["duration_s"]["p95"], o["duration_s"]["p95"], 2),
                         "%d / %d" % (h["over"], o["over"]), "%.3f" % d["ratio"],
                         "%.3f .. %.3f" % (d["ci_low"], d["ci_high"]), "%.3f" % e["ratio"],
                         pair(power(h), power(o), 2),
                         pair(exposure(j["board_here"]), exposure(j["board_other"]), 1)]
        ok_runs = all(got.get(lab) == want[lab] for lab in want)
        tap.ok(ok_runs, "runs compared: attempts, completed, failure rate, p50/p95, over-N, the "
               "ratio with its bootstrap interval, energy, power and exposure as runs compare",
               "got  %s\nwant %s" % (got, want))
        top = ctext.find("## Comparable or not")
        tap.ok(0 < top < ctext.find("## Board and window") and
               ("not comparable:" in ctext or "comparable: the conditions" in ctext),
               "the verdict comes first: comparable or not", ctext[:600])
        p = tl("report", "--compare", b, "--map-label", "sdxl-npu=no-such-job", "--format", "md",
               "-o", "-", cfg=cfg, db=a)
        sec = p.stdout.split("## Runs compared")[-1].split("\n## ")[0]
        rc2 = [x for x in sec.splitlines() if x.startswith("| sdxl-npu")]
        tap.ok(p.returncode == 0 and "Unmatched, not compared: sdxl-npu (A), sdxl-npu (B)" in
               p.stdout and not rc2,
               "--map-label to a label B has not: sdxl-npu unmatched on both sides, never "
               "compared with its namesake", p.stdout[-800:] + p.stderr)
        fd = [t for t in ct if t[1] == ["label", "key", "A", "B"]]
        keys = {r[1] for r in fd[0][2]} if fd else set()
        tap.ok({"board", "kernel"} <= keys, "fingerprint differences are listed", keys)
        bruns = js("runs", "stats", "--json", "--percentile", "0", db=b)
        brt = find(ct, "Runs: Radxa ROCK 5B", "label")
        brow = {r[0]: r for r in brt[0][2]} if brt else {}
        bl = {x["label"]: x for x in bruns["labels"]}["sdxl-npu"]
        tap.ok(brow.get("sdxl-npu", [None] * 7)[6] == f2(bl["duration_s"]["p50"]),
               "the other board's runs are its own runs stats", brow)
        p = tl("report", "--compare", b, "-o", "-", cfg=cfg, db=a)
        tap.ok(p.returncode == 0 and p.stdout.count("<svg") == 3 and
               "Zones compared" in p.stdout, "and as HTML, with a chart a board and both boards' "
               "peaks on one", p.stderr)

        # Files: never a database, an existing file only with --force.
        for target in (a, a + "-wal", b):
            p = tl("report", "--compare", b, "--force", "-o", target, cfg=cfg, db=a)
            tap.ok(p.returncode == 1 and "refusing" in p.stderr,
                   "-o %s is refused, even with --force" % os.path.basename(target), p.stderr)
        p = tl("report", "-o", hp, cfg=cfg, db=a)
        tap.ok(p.returncode == 1 and "exists" in p.stderr, "an existing file is refused",
               p.stderr)
        p = tl("report", "--force", "--format", "md", "-o", hp, cfg=cfg, db=a)
        tap.ok(p.returncode == 0 and open(hp).read().startswith("# thermlog report"),
               "--force replaces it", p.stderr)
        left = [x for x in os.listdir(wd) if x.startswith(".thermlog-")]
        tap.ok(not left, "no temporary file is left behind", left)
        p = tl("report", cfg=cfg, db=a)
        tap.ok(p.returncode == 2 and "-o FILE" in p.stderr, "-o is required", p.stderr)

        peak_and_zones(tap, tl, wd)
        roles(tap, tl, wd)


if __name__ == "__main__":
    main(run)
