#!/usr/bin/python3
"""The demo daemon's running capacitor damage (/metrics) against the full recomputation
(GET /api/v1/lifetime and `thermlog lifetime`) at the same stored cycle: they must agree to
a few ulps (the CLI and the API to the bit). Usage: demo.py THERMLOGD THERMLOG"""
import json
import math
import os
import re
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from thermlog_test import Demo, done, get, ok  # noqa: E402

thermlogd, thermlog = sys.argv[1], sys.argv[2]

# The demo's own configuration (its capacitor), embedded in thermlogd at build time.
DEMO_YAML_PATH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "src",
                              "daemon", "demo.yaml")


def main():
    with Demo(thermlogd, prefix="thermlog-lifetime-demo-") as demo:
        return check(demo)


def check(demo):
    db = demo.db
    cfg = DEMO_YAML_PATH
    base = f"http://127.0.0.1:{demo.port}"

    def read(path):
        return get(base + path).decode()

    def latest():
        return json.loads(read("/api/v1/latest"))["ts"]

    deadline = time.time() + 60
    ok(demo.url.startswith(base), "demo is ready", demo.url)
    first = latest()
    while time.time() < deadline and latest() == first:
        time.sleep(0.5)
    ok(latest() != first, "live cycles are being stored")

    agreed = None
    # until the three reads fall between two cycles (a loaded machine takes more tries)
    deadline = time.time() + 60
    while agreed is None and time.time() < deadline:
        t1 = latest()
        metrics = read("/metrics")
        api = json.loads(read("/api/v1/lifetime"))["capacitors"][0]
        cli = subprocess.run([thermlog, "--db", db, "-c", cfg, "lifetime", "--json"],
                             capture_output=True, text=True)
        t2 = latest()
        if t1 == t2:
            agreed = (metrics, api, cli)
            break
        time.sleep(0.3)
    ok(agreed is not None, "caught one cycle for all three reads")
    if agreed:
        metrics, api, cli = agreed

        def metric(name):
            m = re.search(r"^thermlog_capacitor_" + name + r"\{[^}]*\} (\S+)$", metrics, re.M)
            return float(m.group(1)) if m else None

        # The same terms, but not always summed in the same order: the running sum adds cycle
        # by cycle from its catch-up on, the recomputation takes whole days from the daily
        # histograms. Under ASan beside other tests, a CI run met 1 ulp (4e-19) now and then;
        # which step lands in another order there is not pinned down yet.
        running = metric("consumed_ratio")
        ok(running is not None and
           abs(running - api["consumed_fraction"]) <= 4 * math.ulp(api["consumed_fraction"]),
           "running damage (/metrics) equals the full recomputation",
           f"{metric('consumed_ratio')!r} vs {api['consumed_fraction']!r}")
        obs = metric("observed_seconds")
        ok(obs is not None and abs(obs - api["observed_h"] * 3600) < 1e-6,
           "observed time agrees", f"{obs} vs {api['observed_h'] * 3600}")
        rem = metric("remaining_seconds")
        ok(rem is not None and abs(rem / 3600 - api["remaining_h"]) <= 1e-12 * api["remaining_h"],
           "remaining life agrees", f"{rem} vs {api['remaining_h'] * 3600}")
        ok(cli.returncode == 0, "thermlog lifetime on the demo database", cli.stderr)
        c = json.loads(cli.stdout)["capacitors"][0] if cli.returncode == 0 else {}
        ok(c.get("consumed_fraction") == api["consumed_fraction"]
           and c.get("effective_life_h") == api["effective_life_h"],
           "the CLI equals the API", c)
        ok(api["observed_h"] > 7 * 24 and api["coverage"] > 0.99, "the backfilled week is observed", api)
        ok(api["life_at_mean_temp_h"] > api["effective_life_h"], "Miner is below the mean-temperature life")
    return done()


if __name__ == "__main__":
    sys.exit(main())
