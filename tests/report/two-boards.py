#!/usr/bin/python3
"""Two boards, months apart, compared fairly (issue 37's "Done when"): the demo's simulated board
under work (thermlogd --demo --board's model) as board A (seed 1, 25 °C) in August and as board B
(seed 2, 31.5 °C ambient, its big cores binned to 2304 MHz: the top OPPs gone) the next January,
each running the same tests (tests/lib/simhistory.c: idle, all-core, npu-op), each database its
own window.

- `runs compare` and `report --compare` say not comparable with exactly the ambient and clock
  reasons, each with both boards' figures (the ambient's means equal each board's stats --json of
  its ambient channel; the clocks reached equal each board's per-test figures);
- the same board against itself is comparable, in both;
- temperatures compare as B−A in K, each zone with its counterpart of the same part, equal to both
  boards' stats --json over their own windows;
- the label map and the channel map pair what they name and nothing else;
- --compare-from/--compare-to choose the other board's window: its zones, its runs and their
  per-test figures, its ambient are those of the window (stats --json and runs stats --json
  --from/--to on its database); a bad time, an empty window and either option without
  --compare are refused, naming the option and the database;
- a board whose ambient is a channel of no telling name (an lm75 by the board) is judged by it
  once the configuration's roles: names it ambient (kept in the database by an import), or its
  label says ambient: the verdict finds the ambient by its role, as the pairing does;
- the boards' names (board: in their databases) name every comparison; each board's per-test
  figures side by side equal its runs stats --json; the Load and Throttling sections are those of
  runs stats --json and thermlog throttle --json.

usage: two-boards.py SIMHISTORY THERMLOG"""
import csv
import io
import json
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from thermlog_test import Workdir, main  # noqa: E402
from report import find, md_tables  # noqa: E402

SIMHISTORY, THERMLOG = (os.path.abspath(x) for x in sys.argv[1:3])


def iso(ts):
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(ts))
AUGUST, JANUARY = 1786000000, 1801000000  # 2026-08-06, 2027-01-26: five months apart
SEPTEMBER = 1790000000  # 2026-09-21: board C, imported (an import takes no stamp after now)
LM75 = "hwmon/lm75-i2c-1-48/temp1"  # a room sensor by the board: no key or label says ambient


def run(tap):
    with Workdir("thermlog-two-boards.") as wd:
        a, b = os.path.join(wd, "a.db"), os.path.join(wd, "b.db")
        for db, spec, seed, end, name in ((a, "ambient=25", "1", AUGUST, "ROCK 5C A"),
                                          (b, "ambient=31.5,big_max=2304", "2", JANUARY,
                                           "ROCK 5C B")):
            p = subprocess.run([SIMHISTORY, "--db", db, "--board", spec, "--seed", seed, "--end",
                                str(end), "--rounds", "4", "--name", name],
                               capture_output=True, text=True)
            tap.ok(p.returncode == 0, "simulated history of %s" % name, p.stderr)

        def tl(*args, db=a):
            return subprocess.run([THERMLOG, "--db", db, *args], capture_output=True, text=True)

        def js(*args, db=a):
            p = tl(*args, db=db)
            if p.returncode != 0:
                raise RuntimeError(" ".join(args) + ": " + p.stderr)
            return json.loads(p.stdout)

        sa, sb = js("stats", "--json"), js("stats", "--json", db=b)
        tap.ok(sb["from"] - sa["to"] > 100 * 86400, "the boards' histories lie months apart",
               (sa["from"], sa["to"], sb["from"], sb["to"]))
        amb = "iio/maxim_thermocouple/temp_ambient"
        mean = {s: {c["key"]: c for c in st["channels"]} for s, st in (("a", sa), ("b", sb))}

        # runs compare: exactly the ambient and clock reasons, with their figures.
        c = js("runs", "compare", "--label", "all-core", "--json", b)
        v = c["verdict"]
        codes = [r["code"] for r in v["reasons"]]
        tap.ok(not v["comparable"] and codes == ["ambient", "clock", "clock"],
               "runs compare: not comparable, for the ambient and the big clusters' clocks, "
               "nothing else", json.dumps(v)[:600])
        ra = v["reasons"][0]
        tap.ok(abs(ra["a"] - mean["a"][amb]["mean"]) < 1e-9 and
               abs(ra["b"] - mean["b"][amb]["mean"]) < 1e-9 and
               "+6.50 K" in ra["message"] and "on ROCK 5C A" in ra["message"] and
               "on ROCK 5C B" in ra["message"],
               "the ambient reason: each board's mean of its cold junction over its own window "
               "(stats --json), 6.5 K apart, the boards by name", ra)
        clocks = {x["key"]: x for x in c["board_other"]["clocks"]}
        here = {x["key"]: x for x in c["board_here"]["clocks"]}
        good = all(r["a"] == here[k]["max"] == 2.4e9 and r["b"] == clocks[k]["max"] == 2.304e9
                   and k in r["message"]
                   for r, k in zip(v["reasons"][1:], ("cpufreq/policy4", "cpufreq/policy6")))
        tap.ok(good, "the clock reasons: 2400 MHz reached on A, 2304 on B (the per-test "
               "figures' highest), of the 2400 MHz both boards' hardware allows", v["reasons"][1:])
        text = subprocess.run([THERMLOG, "--db", "a.db", "runs", "compare", "--label", "all-core",
                               "b.db"], capture_output=True, text=True, cwd=wd).stdout
        tap.ok(all(len(x) <= 100 for x in text.splitlines()),
               "runs compare's text: every line within 100 columns",
               [x for x in text.splitlines() if len(x) > 100])
        readme = open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                                   "README.md")).read()
        block = readme.split("$ thermlog --db a.db runs compare --label all-core b.db\n")
        shown = block[1].split("\n...\n")[0].splitlines() if len(block) > 1 else []
        tap.ok(shown and text.splitlines()[:len(shown)] == shown,
               "the README's two-board example is this output", "\n".join(shown))
        same = js("runs", "compare", "--label", "all-core", "--json", a)
        tap.ok(same["verdict"] == {"comparable": True, "reasons": []},
               "runs compare: the same board against itself is comparable", same["verdict"])
        npu = js("runs", "compare", "--label", "npu-op", "--json", b)
        tap.ok([r["code"] for r in npu["verdict"]["reasons"]] == ["ambient"],
               "npu-op (the big clusters not loaded): the ambient alone",
               npu["verdict"]["reasons"])

        # report --compare: the verdict first, the same reasons.
        p = tl("report", "--compare", b, "--format", "md", "-o", "-")
        text = p.stdout
        t = md_tables(text)
        tap.ok(p.returncode == 0 and all(x[3] for x in t) and
               text.startswith("# thermlog report: ROCK 5C A against ROCK 5C B"),
               "report --compare: the boards named as declared, every table consistent",
               text[:200] + p.stderr)
        vt = find(t, "Comparable or not", "label")
        got = sorted({r[1] for r in vt[0][2]}) if vt else []
        tap.ok(got == ["ambient", "clock"] and "not comparable:" in text and
               text.find("## Comparable or not") < text.find("## Board and window"),
               "report: not comparable, for the ambient and the clocks alone, first",
               vt[0][2] if vt else text[:600])
        same = tl("report", "--compare", a, "--format", "md", "-o", "-")
        tap.ok(same.returncode == 0 and "comparable: the conditions were like for like" in
               same.stdout and not find(md_tables(same.stdout), "Comparable or not", "label"),
               "report: the same board against itself is comparable", same.stdout[:400])

        # Temperatures as B−A in K, each zone with its counterpart, from both boards' stats.
        zc = find(t, "Zones compared", "zone")
        rows = {r[0]: r for r in zc[0][2]} if zc else {}
        bad = []
        for key, r in rows.items():
            x, y = mean["a"][key], mean["b"][key]
            want = ["%.2f" % x["mean"], "%.2f" % y["mean"], "%.2f" % (y["mean"] - x["mean"])]
            if r[1:4] != want:
                bad.append((key, r[1:4], want))
        temps = [k for k, ch in mean["a"].items() if ch["kind"] == "temperature"]
        tap.ok(rows and not bad and sorted(rows) == sorted(temps),
               "zones as B−A in K, each from both boards' own stats --json", bad or rows.keys())
        tap.ok(rows.get("thermal/bigcore1-thermal", [""])[-1] == "big-core zone" and
               rows.get(amb, [""])[-1] == "ambient",
               "each paired by its part", {k: r[-1] for k, r in rows.items()})
        # The windows: each board's own.
        bt = find(t, "Board and window", "")
        brow = {r[0]: r[1:] for r in bt[0][2]} if bt else {}
        tap.ok(brow.get("window") == ["%s .. %s" % (iso(sa["from"]), iso(sa["to"])),
                                      "%s .. %s" % (iso(sb["from"]), iso(sb["to"]))] and
               brow.get("cooling") == ["heatsink and fan", "heatsink and fan"] and
               brow.get("clock cpufreq/policy4 (CPU 4-5), big cluster", [""])[1].startswith(
                   "schedutil; 2400 MHz hardware, 2304 MHz reached"),
               "the Board table: each board's own window, declared cooling, hardware and "
               "reached clocks", brow)

        # Per-test figures side by side: each board's runs stats --json board.
        fa = {x["label"]: x["board"] for x in js("runs", "stats", "--json")["labels"]}
        fb = {x["label"]: x["board"] for x in js("runs", "stats", "--json", db=b)["labels"]}
        sec = text.split("### all-core\n")[1].split("\n### ")[0] if "### all-core\n" in text else ""
        ft = md_tables(sec)
        frow = {r[0]: r for r in ft[0][2]} if ft else {}
        za = {z["key"]: z for z in fa["all-core"]["zones"]}
        zb = {z["key"]: z for z in fb["all-core"]["zones"]}
        la = {x["key"]: x for x in fa["all-core"]["loads"]}
        lb = {x["key"]: x for x in fb["all-core"]["loads"]}
        z = frow.get("thermal/bigcore0-thermal °C", [])
        l = frow.get("cluster/policy4 load %", [])
        tap.ok(z[1:4] == ["%.2f" % za["thermal/bigcore0-thermal"]["mean"],
                          "%.2f" % zb["thermal/bigcore0-thermal"]["mean"],
                          "%+.2f K" % (zb["thermal/bigcore0-thermal"]["mean"] -
                                       za["thermal/bigcore0-thermal"]["mean"])] and
               l[1:3] == ["%.1f" % la["cluster/policy4"]["mean"],
                          "%.1f" % lb["cluster/policy4"]["mean"]],
               "all-core's per-test figures side by side equal each board's runs stats --json",
               (z, l))
        # Load and Throttling: each label's, as runs stats --json says.
        lt = find(t, "Load: ROCK 5C A", "CPU or core")
        lt2 = [x for x in t if x[0] == "Load: ROCK 5C A" and x[1][0] == "label"]
        got = {(r[0], r[1].split(" ")[0]): r[3] for r in lt2[0][2]} if lt2 else {}
        want = {(lab, f["key"]): "%.1f" % f["mean"] for lab, bd in fa.items()
                for f in bd["loads"] if f["samples"]}
        tap.ok(lt and got == want, "the Load section: each label's clusters and NPU cores as "
               "runs stats --json", (got, want))
        th = [x for x in t if x[0] == "Throttling: ROCK 5C B" and x[1][0] == "label"]
        got = {r[0]: r[2] for r in th[0][2]} if th else {}
        want = {lab: "%.1f" % (100 * bd["throttle"]["board_share"]) for lab, bd in fb.items()
                if bd["throttle"]["runs"]}
        tap.ok(th and got == want, "the Throttling section: each label's share as runs stats "
               "--json", (got, want))
        tap.ok("## Peaks compared" in text and "in minutes from" in text,
               "both boards' peaks on one time axis")

        # The label map and the channel map: what they name, nothing else.
        p = tl("report", "--compare", b, "--map-label", "all-core=npu-op", "--map-channel",
               "thermal/bigcore0-thermal=thermal/soc-thermal", "--format", "md", "-o", "-")
        t = md_tables(p.stdout)
        rc = find(t, "Runs compared", "label")
        labels = [r[0] for r in rc[0][2]] if rc else []
        tap.ok(labels == ["all-core (B: npu-op)", "idle", "npu-op"] and
               "Unmatched, not compared: all-core (B)" in p.stdout,
               "--map-label all-core=npu-op: that pair, the others by name, B's all-core "
               "unmatched", (labels, p.stderr))
        zc = find(t, "Zones compared", "zone")
        pairs = {r[0]: r[-1] for r in zc[0][2]} if zc else {}
        tap.ok(pairs.get("thermal/bigcore0-thermal (B: thermal/soc-thermal)") == "--map-channel"
               and pairs.get("thermal/bigcore1-thermal") == "big-core zone" and
               "thermal/soc-thermal" not in pairs and
               "thermal/soc-thermal (A, SoC zone)" in p.stdout and
               "thermal/bigcore0-thermal (B, big-core zone)" in p.stdout,
               "--map-channel bigcore0=soc: that pair; bigcore1 still with bigcore1; A's soc "
               "and B's bigcore0 listed unmatched, never with their namesakes", pairs)
        compare_window(tap, tl, js, b)
        ambient_by_role(tap, wd, tl, js, mean["a"])


def compare_window(tap, tl, js, b):
    """Board B over the second and third of its four rounds, chosen by --compare-from and
    --compare-to: each of its figures in the report is the window's."""
    whole = js("stats", "--json", db=b)
    lo, hi = iso(whole["from"] + 1800), iso(whole["from"] + 5400)
    sw = js("stats", "--json", "--from", lo, "--to", hi, db=b)
    fw = {x["label"]: x for x in js("runs", "stats", "--json", "--from", lo, "--to", hi,
                                    db=b)["labels"]}
    fall = {x["label"]: x for x in js("runs", "stats", "--json", db=b)["labels"]}
    p = tl("report", "--compare", b, "--compare-from", lo, "--compare-to", hi, "--format", "md",
           "-o", "-")
    t = md_tables(p.stdout)
    bt = find(t, "Board and window", "")
    brow = {r[0]: r[1:] for r in bt[0][2]} if bt else {}
    tap.ok(p.returncode == 0 and brow.get("window", ["", ""])[1] == "%s .. %s" % (lo, hi),
           "report --compare-from/--compare-to: B's window is the one given",
           brow.get("window", p.stderr))
    zc = find(t, "Zones compared", "zone")
    mb = {c["key"]: c for c in sw["channels"]}
    bad = [(r[0], [r[2], r[5], r[8]]) for r in (zc[0][2] if zc else [])
           if [r[2], r[5], r[8]] != ["%.2f" % mb[r[0]][f] for f in ("mean", "p95", "max")]]
    tap.ok(zc and len(zc[0][2]) == 9 and not bad,
           "B's zones: mean, p95 and max as stats --json --from/--to on its database", bad)
    rc = find(t, "Runs compared", "label")
    att = {r[0]: r[1] for r in rc[0][2]} if rc else {}
    want = {lab: "%d / %d" % (4, fw[lab]["count"]) for lab in fw}
    tap.ok(att == want and all(fw[x]["count"] < fall[x]["count"] for x in fw),
           "B's runs: those of the window (2 of its 4 a test), as runs stats --from/--to",
           (att, want))
    sec = p.stdout.split("### all-core\n")[1].split("\n### ")[0] \
        if "### all-core\n" in p.stdout else ""
    ft = md_tables(sec)
    frow = {r[0]: r for r in ft[0][2]} if ft else {}
    zb = {z["key"]: z for z in fw["all-core"]["board"]["zones"]}
    got = [frow.get(k + " °C", [""] * 3)[2] for k in sorted(zb)]
    tap.ok(got == ["%.2f" % zb[k]["mean"] for k in sorted(zb)],
           "all-core's per-test figures of B: its runs stats --json --from/--to board",
           (got, [zb[k]["mean"] for k in sorted(zb)]))
    amb = "iio/maxim_thermocouple/temp_ambient"
    tap.ok("%.2f °C on ROCK 5C B" % mb[amb]["mean"] in p.stdout,
           "the verdict's ambient of B: its mean over the window", mb[amb]["mean"])
    for args, want in ((("--compare", b, "--compare-from", "last tuesday"),
                        ["--compare-from", "last tuesday"]),
                       (("--compare", b, "--compare-from", hi, "--compare-to", lo),
                        ["--compare-from", "--compare-to", "b.db", "must be before"]),
                       (("--compare", b, "--compare-from", iso(whole["to"] + 86400)),
                        ["b.db, the compared board: empty window"]),
                       (("--compare-to", hi), ["--compare-to", "--compare"])):
        p = tl("report", *args, "--format", "md", "-o", "-")
        tap.ok(p.returncode == 2 and not p.stdout and all(w in p.stderr for w in want),
               "report %s: refused, saying %s" % (" ".join(args[2:] if args[0] == "--compare"
                                                           else args), ", ".join(want)),
               (p.returncode, p.stderr))


def ambient_by_role(tap, wd, tl, js, mean_a):
    """Board C (31.5 °C) measured its air with an lm75 by the board rather than a cold junction:
    its history imported with that channel's key and label telling nothing, then again with the
    configuration's roles: naming it ambient; board D's import labels it ambient."""
    c = os.path.join(wd, "c.db")
    p = subprocess.run([SIMHISTORY, "--db", c, "--board", "ambient=31.5", "--seed", "3", "--end",
                        str(SEPTEMBER), "--rounds", "4", "--name", "ROCK 5C C"],
                       capture_output=True, text=True)
    tap.ok(p.returncode == 0, "simulated history of ROCK 5C C", p.stderr)
    cold = "iio/maxim_thermocouple/temp_ambient"
    rows = list(csv.DictReader(io.StringIO(tl("export", db=c).stdout)))
    runs = tl("runs", "--csv", "--last", "100000", db=c).stdout

    def imported(name, label, cfg_text):
        db = os.path.join(wd, name + ".db")
        path = os.path.join(wd, name + ".csv")
        with open(path, "w", newline="") as f:
            w = csv.DictWriter(f, ["unix", "channel", "value", "unit", "label"],
                               extrasaction="ignore")
            w.writeheader()
            for r in rows:
                if r["channel"] == cold:
                    r = dict(r, channel=LM75, label=label)
                w.writerow(r)
        cfg = os.path.join(wd, name + ".yaml")
        with open(cfg, "w") as f:
            f.write(cfg_text)
        for args in (("import", path), ("runs", "import", "-")):
            p = subprocess.run([THERMLOG, "-c", cfg, "--db", db, *args], input=runs,
                               capture_output=True, text=True)
            tap.ok(p.returncode == 0, "%s: %s" % (name, " ".join(args)), p.stderr)
        return db

    def ambient_reason(db):
        v = js("runs", "compare", "--label", "all-core", "--json", db)["verdict"]
        got = [r for r in v["reasons"] if r["code"] == "ambient"]
        return got[0] if got else None, v

    plain = imported("c1", "lm75 by the board", "board:\n  name: ROCK 5C C\n")
    r, v = ambient_reason(plain)
    tap.ok(r is None, "C, its lm75 of no part: no ambient to judge by", v)
    declared = imported("c2", "lm75 by the board", "board:\n  name: ROCK 5C C\nroles:\n  %s: "
                        "ambient\n" % LM75)
    mc = {x["key"]: x for x in js("stats", "--json", db=declared)["channels"]}
    r, v = ambient_reason(declared)
    tap.ok(r is not None and abs(r["a"] - mean_a[cold]["mean"]) < 1e-9 and
           abs(r["b"] - mc[LM75]["mean"]) < 1e-9 and r["b"] - r["a"] > 6 and
           "(%s)" % cold in r["message"] and "on ROCK 5C C (%s)" % LM75 in r["message"],
           "C with roles: naming its lm75 ambient: the ambient reason, B's figure that "
           "channel's mean (stats --json), each side's channel named", v)
    p = tl("report", "--compare", declared, "--format", "md", "-o", "-")
    vt = find(md_tables(p.stdout), "Comparable or not", "label")
    tap.ok(vt and "ambient" in {x[1] for x in vt[0][2]},
           "report --compare C: the ambient reason too", vt[0][2] if vt else p.stdout[:600])
    labelled = imported("d", "ambient air (lm75)", "board:\n  name: ROCK 5C D\n")
    r, v = ambient_reason(labelled)
    tap.ok(r is not None and "on ROCK 5C D (%s)" % LM75 in r["message"],
           "D, its lm75 labelled ambient: the ambient reason", v)


if __name__ == "__main__":
    main(run)
