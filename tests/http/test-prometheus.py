#!/usr/bin/python3
"""Prometheus integration: a real Prometheus server (Debian's `prometheus`) on loopback scrapes a
running `thermlogd --demo` every second; a channel's value in Prometheus must equal
/api/v1/latest for the same cycle, `up` must be 1, `promtool check metrics` must pass on
/metrics, and the fleet rules in docs/fleet/ must pass `promtool check rules` and their unit
tests (`promtool test rules`).

usage: test-prometheus.py THERMLOGD SOURCE_ROOT   (TAP output; skips without prometheus)
"""
import json
import os
import re
import shutil
import subprocess
import sys
import time
import urllib.parse

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from thermlog_test import Demo, done, get, ok, stop  # noqa: E402

THERMLOGD, ROOT = sys.argv[1], sys.argv[2]
PROMETHEUS = shutil.which("prometheus")
PROMTOOL = shutil.which("promtool")
KEY = "iio/maxim_thermocouple/temp"

def prom_query(port, expr):
    q = urllib.parse.urlencode({"query": expr})
    body = json.loads(get(f"http://127.0.0.1:{port}/api/v1/query?{q}"))
    if body.get("status") != "success":
        return None
    return body["data"]["result"]


def check_rules():
    rules = os.path.join(ROOT, "docs", "fleet", "thermlog.rules.yml")
    tests = os.path.join(ROOT, "docs", "fleet", "thermlog.rules.test.yml")
    r = subprocess.run([PROMTOOL, "check", "rules", rules], capture_output=True, text=True)
    ok(r.returncode == 0, "promtool check rules docs/fleet/thermlog.rules.yml", r.stdout + r.stderr)
    r = subprocess.run([PROMTOOL, "test", "rules", tests], capture_output=True, text=True,
                       cwd=os.path.dirname(tests))
    ok(r.returncode == 0, "promtool test rules: recording and alert rules behave",
       r.stdout + r.stderr)
    with open(os.path.join(ROOT, "docs", "fleet", "grafana-thermlog.json")) as f:
        dash = json.load(f)
    exprs = [t.get("expr", "") for p in dash.get("panels", []) for t in p.get("targets", [])]
    ok(exprs and all("thermlog" in e for e in exprs), "the Grafana dashboard queries thermlog series",
       exprs)


def wait_listening(log, proc, timeout=30):
    """The port in Prometheus' 'msg="Listening on" address=127.0.0.1:PORT' log line, or None."""
    deadline = time.time() + timeout
    while time.time() < deadline and proc.poll() is None:
        with open(log) as f:
            m = re.search(r'msg="Listening on" address=127\.0\.0\.1:(\d+)', f.read())
        if m:
            return int(m.group(1))
        time.sleep(0.2)
    return None


def main():
    if not PROMETHEUS or not PROMTOOL:
        print("1..0 # SKIP prometheus/promtool not installed (Debian package prometheus)")
        return 0
    check_rules()
    with Demo(THERMLOGD, ["--interval", "2s"], prefix="thermlog-prom-") as demo:
        tmp, port = demo.tmp, demo.port
        prom = None
        try:
            url = demo.url
            if not ok(url == f"http://127.0.0.1:{port}/", "thermlogd --demo is ready", url):
                return 1
            metrics = get(url + "metrics")
            r = subprocess.run([PROMTOOL, "check", "metrics"], input=metrics, capture_output=True)
            ok(r.returncode == 0, "promtool check metrics passes on the demo's /metrics",
               r.stdout + r.stderr)

            config = os.path.join(tmp, "prometheus.yml")
            with open(config, "w") as f:
                f.write("global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n"
                        "scrape_configs:\n  - job_name: thermlog\n"
                        f"    static_configs:\n      - targets: ['127.0.0.1:{port}']\n"
                        "        labels: {board: demo}\n")
            prom_log = open(os.path.join(tmp, "prometheus.log"), "w")
            # Port 0; Prometheus logs the port it bound.
            prom = subprocess.Popen([PROMETHEUS, f"--config.file={config}",
                                     f"--storage.tsdb.path={tmp}/data",
                                     "--web.listen-address=127.0.0.1:0",
                                     "--storage.tsdb.retention.time=1h"],
                                    stdout=prom_log, stderr=prom_log)
            prom_port = wait_listening(prom_log.name, prom)
            if not ok(prom_port, "Prometheus listens on a port of its own choosing",
                      open(prom_log.name).read()):
                return 1

            # Wait for scrapes, then compare the same cycle on both sides.
            matched = None
            up = None
            deadline = time.time() + 40
            while time.time() < deadline and matched is None:
                time.sleep(1)
                try:
                    up = prom_query(prom_port, 'up{job="thermlog"}')
                    res = prom_query(prom_port, f'thermlog_temperature_celsius{{key="{KEY}"}}')
                    ts = prom_query(prom_port, 'thermlog_last_cycle_timestamp_seconds')
                    latest = json.loads(get(url + "api/v1/latest"))
                except OSError:
                    continue
                if not res or not ts:
                    continue
                chan = next(c for c in latest["channels"] if c["key"] == KEY)
                if int(float(ts[0]["value"][1])) == latest["ts"]:
                    matched = (float(res[0]["value"][1]), chan["value"], res[0]["metric"])
            if ok(matched is not None, "Prometheus scraped the demo's last cycle", up):
                prom_value, api_value, labels = matched
                ok(prom_value == api_value,
                   f"{KEY}: Prometheus value equals /api/v1/latest", f"{prom_value} vs {api_value}")
                ok(labels.get("label") == "C12 bulk capacitor (thermocouple)"
                   and labels.get("source") == "iio" and labels.get("board") == "demo",
                   "series carries key, label, source and the target's labels", labels)
            ok(up and up[0]["value"][1] == "1", "up{job=thermlog} == 1", up)
            # Every Grafana panel query is valid PromQL against real thermlog series.
            with open(os.path.join(ROOT, "docs", "fleet", "grafana-thermlog.json")) as f:
                dash = json.load(f)
            bad = []
            for panel in dash["panels"]:
                for t in panel["targets"]:
                    expr = t["expr"].replace("$instance", ".*").replace("$channel", ".*")
                    try:
                        if prom_query(prom_port, expr) is None:
                            bad.append(expr)
                    except OSError as e:
                        bad.append(f"{expr}: {e}")
            ok(not bad, "every Grafana panel query evaluates in Prometheus", bad)
            cap = prom_query(prom_port, "thermlog_capacitor_consumed_ratio")
            ok(cap and 0 <= float(cap[0]["value"][1]) <= 1
               and cap[0]["metric"].get("capacitor") == "C12 bulk 470uF/35V",
               "the demo capacitor's consumed ratio is scraped", cap)
        finally:
            stop(prom)
            rc = demo.stop()
            ok(rc == 0, "thermlogd stops cleanly", rc)
    return done()


if __name__ == "__main__":
    sys.exit(main())
