#!/usr/bin/python3
"""One way to present a value: over the ROCK 5C fixture (sysfs and /proc, static, so every read
gives the same values), one channel of each kind (temperature, frequency, cooling state, memory)
reads alike in `thermlog sample` (table and --json), `thermlog stats` (table and --json),
/metrics and /api/v1/latest: the same value, the same unit symbol and scaling in both tables (the
unit registry), a family of its own in /metrics in the base unit (memory: thermlog_memory_bytes),
and the same channel object (identity, value and error form) in every JSON (peak's columns
too). A zone made
implausible is the failed channel: null with the same error in both JSON answers.
usage: test_present.py THERMLOGD THERMLOG FIXTURE"""
import json
import os
import re
import subprocess
import sys
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from thermlog_test import Daemon, Workdir, copy_fixture, main, wait_cycles, \
    with_runs_socket  # noqa: E402

THERMLOGD, THERMLOG, FIXTURE = sys.argv[1], sys.argv[2], sys.argv[3]
FAILED = "thermal/npu-thermal"  # made implausible below
PICK = {"temperature": "thermal/soc-thermal", "frequency": "cpufreq/policy4",
        "state": "cooling/pwm-fan", "memory": "meminfo/available"}
FAMILY = {"temperature": "thermlog_temperature_celsius", "frequency": "thermlog_frequency_hertz",
          "state": "thermlog_cooling_state", "memory": "thermlog_memory_bytes"}
IDENTITY = ("key", "label", "source", "kind", "unit")


def get(port, path):
    with urllib.request.urlopen("http://127.0.0.1:%d%s" % (port, path), timeout=10) as r:
        return r.read().decode()


def cli(cfg, *args):
    p = subprocess.run([THERMLOG, "-c", cfg, *args], capture_output=True, text=True, timeout=60)
    return p.returncode, p.stdout, p.stderr


def sample_cells(text):
    """`thermlog sample`'s table: key -> (number, symbol) of each row with a value."""
    cells = {}
    for line in text.splitlines()[1:]:
        tokens = line.split()
        if not tokens or tokens[-1] == "-":
            continue
        if re.fullmatch(r"-?[0-9.]+", tokens[-1]):
            cells[tokens[0]] = (float(tokens[-1]), "")
        elif len(tokens) >= 3 and re.fullmatch(r"-?[0-9.]+", tokens[-2]):
            cells[tokens[0]] = (float(tokens[-2]), tokens[-1])
    return cells


def stats_rows(text):
    """`thermlog stats`' table: key -> (unit, max as shown, places of the shown max)."""
    rows, header = {}, False
    for line in text.splitlines():
        tokens = line.split()
        if tokens[:2] == ["channel", "unit"]:
            header = True
            continue
        if header and not tokens:
            break
        if header and len(tokens) == 10:
            mx = tokens[8]
            rows[tokens[0]] = (tokens[1], float(mx), len(mx.split(".")[1]) if "." in mx else 0)
    return rows


def metric_lines(text, key):
    """The /metrics value samples of @key (not channel_ok): [(family, labels, value)]."""
    out = []
    for line in text.splitlines():
        m = re.match(r"^(\w+)\{([^}]*)\} (\S+)$", line)
        if m and m.group(1) != "thermlog_channel_ok" and 'key="%s"' % key in m.group(2):
            out.append((m.group(1), m.group(2), float(m.group(3))))
    return out


def run(tap):
    with Workdir("thermlog-present.") as wd:
        root = copy_fixture(FIXTURE, os.path.join(wd, "sysfs"))
        zone = os.path.join(root, "devices/virtual/thermal/thermal_zone6/temp")
        with open(zone, "w") as f:
            f.write("9223372036854775807\n")  # implausible: -ERANGE in every reader
        cfg = os.path.join(wd, "t.yaml")
        with open(cfg, "w") as f:
            # meminfo reads the fixture's /proc, so memory figures are fixed too
            f.write(with_runs_socket(
                "interval: 1s\nprocfs_root: %s\nsources:\n  hwmon: {enabled: false}\n" %
                os.path.realpath(os.path.join(FIXTURE, "proc")),
                os.path.join(wd, "run", "thermlog.sock")))
        db = os.path.join(wd, "t.db")
        d = Daemon(THERMLOGD, wd, ["-c", cfg, "--sysfs-root", root, "--db", db,
                                   "--listen", "127.0.0.1:0"]).start()
        port = d.http_port()
        wait_cycles(db, 3, 30, d)
        latest_doc = json.loads(get(port, "/api/v1/latest"))
        latest = {c["key"]: c for c in latest_doc["channels"]}
        metrics = get(port, "/metrics")
        d.stop()

        rc, out, err = cli(cfg, "sample", "--sysfs-root", root, "--json")
        tap.ok(rc == 0, "sample --json: exit 0", err)
        sample_doc = json.loads(out) if rc == 0 else {"channels": []}
        sample = {c["key"]: c for c in sample_doc["channels"]}
        rc, out, err = cli(cfg, "sample", "--sysfs-root", root)
        tap.ok(rc == 0, "sample: exit 0", err)
        cells = sample_cells(out)
        sample_text = out
        rc, out, err = cli(cfg, "--db", db, "stats", "--from", "-1h")
        tap.ok(rc == 0, "stats: exit 0", err)
        rows = stats_rows(out)
        stats_text = out
        rc, out, err = cli(cfg, "--db", db, "stats", "--from", "-1h", "--json")
        tap.ok(rc == 0, "stats --json: exit 0", err)
        stats = {c["key"]: c for c in json.loads(out)["channels"]} if rc == 0 else {}
        rc, out, err = cli(cfg, "--db", db, "peak", "--channel", PICK["temperature"],
                           "--samples", "3", "--from", "-1h", "--json")
        tap.ok(rc == 0, "peak --json: exit 0", err)
        peak = {c["key"]: c for c in json.loads(out)["columns"]} if rc == 0 else {}

        for kind, key in PICK.items():
            s, l, st = sample.get(key, {}), latest.get(key, {}), stats.get(key, {})
            tap.ok(l.get("kind") == kind, "%s is a %s channel" % (key, kind), l)
            tap.ok(isinstance(l.get("value"), (int, float)) and s.get("value") == l.get("value")
                   and st.get("max") == l.get("value"),
                   "%s: one value in sample --json, /api/v1/latest and stats --json" % key,
                   (s.get("value"), l.get("value"), st.get("max")))
            # The tables: the same symbol and the same scaled number
            cell, row = cells.get(key), rows.get(key)
            # (a bare count has no symbol beside its value; a column names its unit: "state")
            tap.ok(cell and row and (cell[1] == row[0] or cell[1] == "" and row[0] == l["unit"]),
                   "%s: sample's table and stats' table show one unit (%s)" %
                   (key, cell and cell[1]), "sample %r, stats %r\n%s\n%s" %
                   (cell, row, sample_text, stats_text))
            tap.ok(cell and row and abs(cell[0] - row[1]) <= 0.5 * 10 ** -row[2] + 1e-9,
                   "%s: sample's table and stats' table scale the value alike" % key,
                   "sample %r, stats %r" % (cell, row))
            # /metrics: the kind's own family, in the JSON's (base) unit
            lines = metric_lines(metrics, key)
            tap.ok(len(lines) == 1 and lines[0][0] == FAMILY[kind] and
                   'unit="' not in lines[0][1],
                   "/metrics: %s in %s" % (key, FAMILY[kind]), lines)
            tap.ok(len(lines) == 1 and lines[0][2] == l.get("value"),
                   "/metrics: %s's value is the API's, in its unit" % key, (lines, l))
            # One channel object: identity alike everywhere; value and error alike
            for name, obj in (("sample --json", s), ("stats --json", st),
                              ("peak --json", peak.get(key, {}))):
                tap.ok(obj and all(obj.get(f) == l.get(f) for f in IDENTITY),
                       "%s: %s's identity is /api/v1/latest's" % (key, name),
                       "%r\n%r" % (obj, l))
            tap.ok("error" in s and s.get("error") is None and "error" in l and
                   l.get("error") is None,
                   "%s: a good reading has \"error\": null in sample --json and the API" % key,
                   (s, l))

        # The failed channel: null with one error, no /metrics sample, channel_ok 0
        s, l = sample.get(FAILED, {}), latest.get(FAILED, {})
        tap.ok("value" in s and s["value"] is None and "value" in l and l["value"] is None,
               "%s: value null in sample --json and the API" % FAILED, (s, l))
        tap.ok(s.get("error") and s.get("error") == l.get("error"),
               "%s: the same error text in sample --json and the API" % FAILED, (s, l))
        tap.ok(all(s.get(f) == l.get(f) for f in IDENTITY),
               "%s: the same identity in sample --json and the API" % FAILED, (s, l))
        tap.ok(not metric_lines(metrics, FAILED) and
               re.search(r'^thermlog_channel_ok\{key="%s",[^}]*\} 0$' % re.escape(FAILED),
                         metrics, re.M),
               "/metrics: %s has no value sample and channel_ok 0" % FAILED)
        # The top level: the time of a reading as /api/v1/latest gives it
        tap.ok(isinstance(sample_doc.get("ts"), int) and
               re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", str(sample_doc.get("time"))) and
               isinstance(latest_doc.get("ts"), int) and
               re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", str(latest_doc.get("time"))),
               "sample --json and /api/v1/latest: ts in unix seconds, time in ISO 8601",
               ({k: sample_doc.get(k) for k in ("ts", "time")},
                {k: latest_doc.get(k) for k in ("ts", "time")}))


main(run)
