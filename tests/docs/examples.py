#!/usr/bin/python3
"""The documentation's examples are real output, checked so they cannot drift.

In README.md, docs/*.md and the man pages (docs/RUNS.md imports the runs tests' job log into
runs.db first):
- a code block whose first line is `$ thermlog ARGS` shows that command and what it prints
  (stdout and stderr); a line `...` stands for any number of lines;
- a line `<!-- example: thermlog ARGS -->` right before a ```json block says the block is what
  that command prints (compared as JSON values; `first_seen`/`last_seen` may differ).
Commands run in a directory holding tests/docs/files/* (example.yaml, bad.yaml), the fixtures
as tests/fixtures, and example.db: the ROCK 5C fixture's channels (registered by the daemon)
with three days of imported minute samples from 2026-08-01 on.

The example report (docs/examples/report.md with its chart, and report.html) is `thermlog
report` over a copy of example.db with a small job log of runs in its window (report.db), its
three days pinned; capacitors.md, its charts and capacitors.html are `thermlog report
--lifetime-only` over report.db with a case thermocouple and a rail current imported beside
(capacitors.db), for two capacitors (REVIEW_CONFIG).

usage: examples.py THERMLOGD THERMLOG SOURCE_ROOT [--update]
  --update rewrites the blocks with the current output (then review the diff).
"""
import json
import math
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from thermlog_test import done, ok  # noqa: E402

DOCS = ["README.md", "docs/API.md", "docs/LIFETIME.md", "docs/DAEMON.md", "docs/FLEET.md",
        "docs/RUNS.md", "docs/REPORT.md", "docs/CAMPAIGN.md", "man/thermlog.1",
        "man/thermlogd.8", "man/thermlog.yaml.5", "man/thermlog-campaign.5"]
VOLATILE = {"first_seen", "last_seen"}  # when the daemon registered the channel
T0 = 1785542400  # 2026-08-01T00:00:00Z
DAYS = 3


def seed(thermlogd, thermlog, root, work):
    """example.db: the fixture's channels with their labels and metadata, then history."""
    for name in os.listdir(os.path.join(root, "tests", "docs", "files")):
        shutil.copy(os.path.join(root, "tests", "docs", "files", name), work)
    os.makedirs(os.path.join(work, "tests"))
    os.symlink(os.path.join(root, "tests", "fixtures"), os.path.join(work, "tests", "fixtures"))
    db = os.path.join(work, "example.db")
    cfg = os.path.join(work, "seed.yaml")
    with open(cfg, "w") as f:
        # its own runs socket: a daemon without one would listen under /run/thermlog; the
        # fixture's /proc, so the board it records (RAM, kernel) is the fixture's, not this
        # machine's
        fixture = os.path.join(root, "tests", "fixtures", "rock5c")
        f.write("interval: 1s\nsources:\n  hwmon: {enabled: false}\n"
                f"procfs_root: {fixture}/proc\ndebugfs_root: {work}/no-debugfs\n"
                f"runs:\n  socket: {os.path.join(work, 'runs.sock')}\n")
    log = open(os.path.join(work, "seed.log"), "w")
    d = subprocess.Popen([thermlogd, "-c", cfg, "--db", db, "--listen", "127.0.0.1:0",
                          "--sysfs-root", os.path.join(root, "tests", "fixtures", "rock5c")],
                         stdout=log, stderr=log)
    deadline = time.time() + 30
    while time.time() < deadline and "first cycle stored" not in open(log.name).read():
        time.sleep(0.1)
    d.terminate()
    d.wait(20)
    csv = os.path.join(work, "history.csv")
    with open(csv, "w") as f:
        f.write("time,channel,value,unit\n")
        for i in range(DAYS * 1440):
            ts = T0 + 60 * i
            day = math.sin(2 * math.pi * i / 1440)
            busy = 1 if (i // 37) % 5 == 0 else 0  # an NPU job now and then
            f.write("%d,thermal/soc-thermal,%.3f,celsius\n" % (ts, 48 + 6 * day + 4 * busy))
            f.write("%d,thermal/npu-thermal,%.3f,celsius\n" % (ts, 50 + 6 * day + 12 * busy))
            f.write("%d,cpufreq/policy4,%d,hertz\n" % (ts, 2256000000 if busy else 1800000000))
            f.write("%d,iio/maxim_thermocouple/temp,%.2f,celsius\n"
                    % (ts, round((38 + 5 * day + 2 * busy) * 4) / 4))
    p = subprocess.run([thermlog, "--db", db, "import", csv], capture_output=True, text=True)
    ok(p.returncode == 0, "seeded the example database", open(log.name).read() + p.stderr)


REPORT_FILES = ["report.md", "report-peak.svg", "report.html", "capacitors.md",
                "capacitors-cap1-profile.svg", "capacitors-cap1-consumed.svg",
                "capacitors-cap2-profile.svg", "capacitors-cap2-consumed.svg", "capacitors.html"]
# The capacitor design review's example: the example capacitor with an ambient and a case sensor
# (a second thermocouple on the can) and review notes, and a second one aging at the ambient with
# its ripple from the 24 V rail's measured current (capacitors.db: report.db with those channels).
REVIEW_CONFIG = """database: capacitors.db
capacitors:
  - name: C12 bulk 470uF/35V
    sensors: {ambient: iio/maxim_thermocouple/temp, case: bench/c12_case}
    rated_life_h: 2000
    rated_temp_c: 105
    self_heating: {rise_k: 3.0}
    load_channel: bench/rail_current
    case_diameter_mm: 10
    vent_clearance_mm: 2.5
    vent_facing: up, towards the lid
    review:
      enclosure: production ABS case, lid closed, board vertical as mounted
      thermocouple: type K bead Kapton-taped to the sleeve, 10 mm below the vent
      series_conditions: 24 V bus, 1.2 A ripple at 100 kHz, 25 °C room
  - name: C21 buck input 220uF/35V
    sensors: {ambient: iio/maxim_thermocouple/temp}
    rated_life_h: 5000
    rated_temp_c: 105
    self_heating: {current_a: 0.9, rated_ripple_a: 1.8, rated_rise_k: 5}
    ripple_from: {channel: bench/rail_current, formula: buck_input, v_in: 24, v_out: 5}
    valid_c: [60, 95]
    case_diameter_mm: 18
"""


def review_channels(thermlog, work, db):
    """The case thermocouple (the ambient one plus a rise following the rail's load) and the
    rail's current, imported into @db over the example's three days."""
    csv = os.path.join(work, "review.csv")
    with open(csv, "w") as f:
        f.write("time,channel,value,unit\n")
        for i in range(DAYS * 1440):
            ts = T0 + 60 * i
            day = math.sin(2 * math.pi * i / 1440)
            busy = 1 if (i // 37) % 5 == 0 else 0
            amb = round((38 + 5 * day + 2 * busy) * 4) / 4
            current = 1.2 + 2.4 * busy
            f.write("%d,bench/c12_case,%.2f,celsius\n" % (ts, amb + 1.5 + 2.5 * busy))
            f.write("%d,bench/rail_current,%.3f,amperes\n" % (ts, current))
    p = subprocess.run([thermlog, "--db", db, "import", csv], capture_output=True, text=True)
    ok(p.returncode == 0, "example review: the case sensor and the rail current", p.stderr)


def example_report(thermlog, root, work, update):
    """docs/examples/report.*: thermlog report over report.db (example.db and a job log)."""
    db = os.path.join(work, "report.db")
    shutil.copy(os.path.join(work, "example.db"), db)
    log = os.path.join(work, "report-jobs.csv")
    with open(log, "w") as f:
        f.write("start,end,status,label,exit_code,energy_j,rss_max_bytes\n")
        t = T0 + 3 * 3600
        for i in range(16):
            d = 1500 + (i * 137) % 400
            status = "failed" if i % 6 == 5 else "ok"
            f.write("%d,%d,%s,sdxl-npu,%d,%.1f,%d\n" % (t, t + d, status, 0 if status == "ok"
                    else 1, d * 11.5, 5100000000 + i * 7340033))
            t += d + 3 * 3600
    out = os.path.join(work, "report-out")
    os.makedirs(out)
    with open(os.path.join(work, "capacitors-example.yaml"), "w") as f:
        f.write(REVIEW_CONFIG)
    cmds = [["runs", "import", log],
            ["report", "--from", "2026-08-01", "--to", "2026-08-04", "--over", "30m", "-o",
             os.path.join(out, "report.md")],
            ["report", "--from", "2026-08-01", "--to", "2026-08-04", "--over", "30m", "-o",
             os.path.join(out, "report.html")]]
    cmds += [["report", "--from", "2026-08-01", "--to", "2026-08-04", "--lifetime-only", "-o",
              os.path.join(out, "capacitors." + ext)] for ext in ("md", "html")]
    for args in cmds:
        review = "--lifetime-only" in args
        if review and not os.path.exists(os.path.join(work, "capacitors.db")):
            shutil.copy(db, os.path.join(work, "capacitors.db"))
            review_channels(thermlog, work, os.path.join(work, "capacitors.db"))
        cfg = "capacitors-example.yaml" if review else "example.yaml"
        target = os.path.join(work, "capacitors.db") if review else db
        p = subprocess.run([thermlog, "-c", cfg, "--db", target] + args, cwd=work,
                           capture_output=True, text=True)
        ok(p.returncode == 0, "example report: thermlog %s" % " ".join(args[:2]), p.stderr)
    for name in REPORT_FILES:
        doc = os.path.join(root, "docs", "examples", name)
        with open(os.path.join(out, name)) as f:
            got = f.read()
        if update:
            os.makedirs(os.path.dirname(doc), exist_ok=True)
            with open(doc, "w") as f:
                f.write(got)
            continue
        want = open(doc).read() if os.path.exists(doc) else ""
        ok(got == want, "docs/examples/%s is thermlog report's output" % name,
           "\n".join(l for l in __import__("difflib").unified_diff(
               want.split("\n"), got.split("\n"), lineterm=""))[:3000])


def run(thermlog, work, line):
    args = shlex.split(line)
    assert args[0] == "thermlog"
    p = subprocess.run([thermlog] + args[1:], cwd=work, stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, text=True)
    return p.stdout


def matches(want, got):
    """Lines of `want` against `got`; a `...` line stands for any lines."""
    pattern = "".join("(?:.*\n)*?" if w.strip() == "..." else re.escape(w) + "\n" for w in want)
    return re.fullmatch(pattern, got) is not None


def unroff(text):
    return text.replace("\\-", "-").replace("\\e", "\\")


def strip_volatile(x):
    if isinstance(x, dict):
        return {k: strip_volatile(v) for k, v in x.items() if k not in VOLATILE}
    if isinstance(x, list):
        return [strip_volatile(v) for v in x]
    return x


def dump(x, indent=0):
    """JSON as the documentation writes it: short arrays and objects on one line."""
    flat = json.dumps(x, ensure_ascii=False)
    if indent and len(flat) + indent <= 96 or not isinstance(x, (dict, list)) or not x:
        return flat
    pad = " " * (indent + 2)
    if isinstance(x, dict):
        items = [pad + json.dumps(k) + ": " + dump(v, indent + 2) for k, v in x.items()]
        return "{\n" + ",\n".join(items) + "\n" + " " * indent + "}"
    return "[\n" + ",\n".join(pad + dump(v, indent + 2) for v in x) + "\n" + " " * indent + "]"


def blocks(lines, roff):
    """(start, end) line ranges of code blocks, end exclusive, and the tag before each."""
    i = 0
    while i < len(lines):
        line = lines[i]
        if roff and line.startswith(".nf"):
            j = i + 1
            while j < len(lines) and not lines[j].startswith(".fi"):
                j += 1
            yield i + 1, j, None
            i = j + 1
        elif not roff and line.startswith("```"):
            j = i + 1
            while j < len(lines) and not lines[j].startswith("```"):
                j += 1
            tag = lines[i - 1] if i > 0 else ""
            m = re.fullmatch(r"<!-- example: (thermlog .*) -->\n?", tag)
            yield i + 1, j, m.group(1) if m else None
            i = j + 1
        elif not roff and line.startswith("    ") and (i == 0 or not lines[i - 1].strip()):
            j = i
            while j < len(lines) and (lines[j].startswith("    ") or not lines[j].strip()):
                j += 1
            while j > i and not lines[j - 1].strip():
                j -= 1
            yield i, j, "indented"
            i = j
        else:
            i += 1


def check_doc(path, thermlog, work, update):
    roff = re.search(r"\.[1-8]$", path) is not None
    with open(path) as f:
        lines = f.read().split("\n")
    out, pos, n = [], 0, 0
    for start, end, tag in blocks(lines, roff):
        body = lines[start:end]
        dedent = 4 if tag == "indented" else 0
        text = [unroff(b)[dedent:] if roff else b[dedent:] for b in body]
        cmds = [k for k, t in enumerate(text) if t.startswith("$ thermlog ")]
        if tag and tag != "indented":
            n += 1
            got = run(thermlog, work, tag)
            try:
                value = json.loads(got)
            except ValueError:
                ok(False, "%s:%d: %s prints JSON" % (path, start, tag), got)
                continue
            if update:
                out += lines[pos:start] + dump(value).split("\n")
                pos = end
                continue
            try:
                want = json.loads("\n".join(body))
            except ValueError as e:
                ok(False, "%s:%d: the block is JSON" % (path, start + 1), e)
                continue
            ok(strip_volatile(want) == strip_volatile(value),
               "%s:%d: %s" % (path, start + 1, tag),
               "want %s\ngot  %s" % (json.dumps(want)[:1500], json.dumps(value)[:1500]))
        elif cmds and cmds[0] == 0:
            new = []
            for c, k in enumerate(cmds):
                n += 1
                stop = cmds[c + 1] if c + 1 < len(cmds) else len(text)
                got = run(thermlog, work, text[k][2:])
                want = text[k + 1:stop]
                if update:
                    new.append(text[k])
                    new += got.rstrip("\n").split("\n") if got else []
                    continue
                ok(matches(want, got), "%s:%d: %s" % (path, start + k + 1, text[k][2:]),
                   "want:\n%s\ngot:\n%s" % ("\n".join(want), got))
            if update:
                if roff:
                    new = [t.replace("\\", "\\e").replace("-", "\\-") for t in new]
                out += lines[pos:start] + [" " * dedent + t if t else t for t in new]
                pos = end
    if update:
        out += lines[pos:]
        with open(path, "w") as f:
            f.write("\n".join(out))
    return n


def main():
    thermlogd, thermlog, root = (os.path.abspath(a) for a in sys.argv[1:4])
    update = "--update" in sys.argv[4:]
    work = tempfile.mkdtemp(prefix="thermlog-docs-")
    try:
        seed(thermlogd, thermlog, root, work)
        total = 0
        for doc in DOCS:
            total += check_doc(os.path.join(root, doc), thermlog, work, update)
        ok(total >= 8, "the documentation has examples to check (%d)" % total)
        example_report(thermlog, root, work, update)
        # The man page's example configuration is a valid one.
        with open(os.path.join(root, "man", "thermlog.yaml.5")) as f:
            man = f.read()
        m = re.search(r"\.SH EXAMPLE\n\.nf\n(.*?)\n\.fi", man, re.S)
        with open(os.path.join(work, "man-example.yaml"), "w") as f:
            f.write(unroff(m.group(1)) if m else "")
        got = run(thermlog, work, "thermlog check-config man-example.yaml")
        ok(m and got == "configuration OK\n", "thermlog.yaml(5)'s example passes check-config", got)
        # One figure for the full scripts/test run, wherever it is given.
        figures = {}
        for doc in ("README.md", os.path.join("scripts", "test")):
            with open(os.path.join(root, doc)) as f:
                text = f.read()
            for line in re.findall(r"[^\n]*\babout \d+ minutes[^\n]*", text, re.I):
                if "scripts/test" in line or "full run" in line or doc.startswith("scripts"):
                    figures.setdefault(re.search(r"about (\d+) minutes", line, re.I).group(1),
                                       []).append("%s: %s" % (doc, line.strip()))
        ok(len(figures) == 1, "the full test run takes one figure of minutes in the docs (%s)"
           % ", ".join(sorted(figures)), "\n".join(sum(figures.values(), [])))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return done()


if __name__ == "__main__":
    sys.exit(main())
