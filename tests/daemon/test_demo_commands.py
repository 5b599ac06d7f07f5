#!/usr/bin/python3
"""scripts/demo: builds both programs and prints thermlog commands that work when pasted as
printed (absolute path to the built thermlog, quoted paths, one command a line), even with a
space and a quote in the paths: stats, lifetime, export and a `thermlog run` through the
demo's own runs socket (in its scratch directory, never /run/thermlog), which records the run,
and the last day's throttle episodes.
usage: test_demo_commands.py SOURCE_ROOT BUILD_DIR"""
import os
import re
import signal
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from thermlog_test import Daemon, Workdir, get_json, main, wait_for


def run(tap):
    root, build = sys.argv[1], os.path.abspath(sys.argv[2])
    with Workdir("thermlog-demo-cmds.") as wd:
        odd = os.path.join(wd, "it's a demo")  # a space and a quote, as a home directory may have
        os.mkdir(odd)
        db = os.path.join(odd, "demo $HOME.db")
        # Port 0 (the demo passes --listen on to thermlogd): the daemon binds a free port and
        # prints it in the URL, so the test never depends on 9470 being free.
        d = Daemon(os.path.join(root, "scripts", "demo"), wd,
                   ["--db", db, "--listen", "127.0.0.1:0", "--seed", "3"],
                   env={"THERMLOG_BUILD_DIR": build, "TMPDIR": odd}).start()

        def url():
            with open(d.out_path) as f:
                m = re.search(r"^http://127\.0\.0\.1:(\d+)/$", f.read(), re.M)
            return m.group(0) if m is not None and int(m.group(1)) > 0 else None
        tap.ok(wait_for(url, 120, 0.2), "the demo starts and prints its URL", d.log_text())
        base = url()
        log = d.log_text().splitlines()
        head = [i for i, line in enumerate(log) if line.startswith("demo: query it")]
        cmds = [line.strip() for line in log[head[0] + 1:head[0] + 6]] if head else []
        tap.ok(len(cmds) == 5 and all(c.startswith("'/") for c in cmds),
               "five commands, one a line, each starting with an absolute quoted path", log)
        # What a demo user reads: the dashboard's address right above the commands, and
        # nothing they cannot act on: no line per simulated run, no socket group warning.
        tap.ok(head and head[0] > 0 and log[head[0] - 1] == "demo: the dashboard: " + base,
               "the dashboard's address right above the commands", log[:head[0] + 1])
        noise = [line for line in log if re.search(r"\bstarted, pid |\) ended: |no group "
                                                   r"'thermlog'", line)]
        tap.ok(not noise, "no line per simulated run, no group warning (%d such lines)"
               % len(noise), noise[:5])
        tap.ok(head and log[head[0] + 6:] == [], "the commands are the last lines shown",
               log[-12:])
        thermlog = os.path.join(build, "src", "thermlog")
        for c in cmds:
            tap.ok(c.startswith("'%s' " % thermlog), "runs the thermlog built beside thermlogd: %s"
                   % c)
        want = {"stats": "thermal/soc-thermal", "lifetime": "consumed",
                "export": ",thermal/soc-thermal,", "throttle": "throttle episodes from ",
                "run": ""}
        ran = None
        for c in cmds:
            word = next((w for w in want if (" " + w + " ") in c + " "), None)
            p = subprocess.run(["bash", "-c", c], capture_output=True, text=True, timeout=60)
            tap.ok(p.returncode == 0 and word and want[word] in p.stdout,
                   "pasted as printed, it works: %s" % c,
                   "rc %d\nstdout: %s\nstderr: %s" % (p.returncode, p.stdout[:2000], p.stderr))
            if word == "run":
                ran = p
            if word == "export":
                tap.ok(",load/cpu4," in p.stdout and ",load/rknpu/core0," in p.stdout,
                       "the export has the CPUs' and NPU cores' load")
            if word == "throttle":
                # The simulated board's big cores were capped by their zones' passive trip
                # during its sdxl-image runs: over the week (a day may have had no busy block).
                week = subprocess.run(["bash", "-c", c.replace("--from -1d", "--from -7d")],
                                      capture_output=True, text=True, timeout=60)
                totals = re.findall(r"^(cpufreq/policy[46]) +(\d+) ", week.stdout, re.M)
                tap.ok(len(totals) == 2 and all(int(n) >= 40 for _, n in totals) and
                       re.search(r" thermal +bigcore[01]-thermal ", week.stdout),
                       "a week of thermal throttle episodes of both big-core policies",
                       week.stdout[-600:])

        tap.ok(ran is not None and re.search(r"run \d+ \(try-it\) ", ran.stderr),
               "the run example is recorded by the demo", ran and ran.stderr)
        runs = get_json(base + "api/v1/runs").get("runs", []) if base else []
        mine = [r for r in runs if r.get("label") == "try-it"]
        tap.ok(len(mine) == 1 and mine[0]["status"] == "ok" and mine[0]["duration_s"] >= 2.9,
               "the API has it: one try-it run, ok, about 3 s", runs[-3:])
        sock = re.search(r"socket: (.*)$", open(next(
            os.path.join(dp, f) for dp, _, fs in os.walk(odd) for f in fs
            if f == "thermlog-demo.yaml")).read(), re.M)
        tap.ok(sock and sock.group(1).startswith(odd + "/") and os.path.exists(sock.group(1)),
               "the demo's runs socket is in its scratch directory", sock and sock.group(1))
        tap.ok(d.stop(signal.SIGINT) == 0, "Ctrl-C stops the demo", d.log_text())


main(run)
