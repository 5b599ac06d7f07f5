#!/usr/bin/python3
"""thermlog campaign on simulated boards that answer to work (thermlogd --demo --board).

usage: test_campaign.py THERMLOGD THERMLOG SIMLOAD PART
  check          bad suites refused with FILE:LINE:COL before anything runs; a good one checked
  boards         two boards (B 6.5 K warmer, big cores binned to 2304 MHz) run a five-step
                 suite to its end: every run recorded and tagged, cold repetitions starting
                 within the gate's tolerance of the idle baseline (the exported zones at each
                 run's start), warm ones hotter, the binning check's clocks, gate waits
  resume-runner  kill -9 of the runner mid-repetition, then --resume: each repetition ended
                 once, the cut one lost and run again; a changed suite refused naming the change
  resume-daemon  kill -9 of the daemon mid-repetition, the daemon started again, --resume
  timeout        a gate that cannot be met (the board kept hot) ends in gate_timeout after the
                 configured wait, marked and reported, and the campaign goes on
  warm-up        a board colder than its baseline runs the gate's warm_up, then the cold
                 repetition within the tolerance; a step past its timeout recorded timeout;
                 the progress lines
  interleaved    order: interleaved runs the steps' repetitions alternately (A B A B), each
                 cold; campaign list and show as text and JSON; GET /api/v1/campaigns and
                 /api/v1/campaigns/{id} give the CLI's JSON; the runs of one campaign by tag,
                 and the dashboard's Runs view filtered by it (tests/browser/campaign.test.js)
  report         docs/examples/five-tests-demo.yaml on board A twice and on board B:
                 campaign report --compare says B is not comparable with A, naming the ambient
                 and the binned clock with their figures, and A's second campaign comparable
                 with its first, every step's ratio interval holding 1; the Markdown report is
                 docs/examples/five-tests-report.md (--update writes it, else it must match but
                 for its figures and times)
"""
import json
import os
import re
import statistics
import shutil
import signal
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from campaign_lib import (Board, ended_once, iso_ms, planned, restart, runner_log,  # noqa: E402
                          runs, show, start_runner, wait_exit, wait_running_rep, write_suite,
                          zones_at)
from thermlog_test import Workdir, main, wait_for  # noqa: E402

THERMLOGD, THERMLOG, SIMLOAD = (os.path.abspath(p) for p in sys.argv[1:4])  # the steps run
PART = sys.argv[4]                                                          # in the suite's dir
UPDATE = "--update" in sys.argv[5:]
SOURCE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")

# The seed's Five Tests on the simulated board, as docs/CAMPAIGN.md shows them: idle (the
# campaign's idle step), all-core load, an NPU operator reporting latency_ms, inference cold and
# warm, a long repetition; its steps run thermlog-simload, found on PATH.
EXAMPLE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "docs",
                       "examples", "five-tests-demo.yaml")
with open(EXAMPLE) as f:
    FIVE = f.read()
os.environ["PATH"] = os.path.dirname(SIMLOAD) + os.pathsep + os.environ.get("PATH", "")


def part_check(tap, wd):
    """Bad suites named at their line before anything runs; nothing recorded."""
    cases = {
        "typo.yaml": ("name: x\nsteps:\n  - label: a\n    comand: [true]\n",
                      "typo.yaml:4:5: unknown key 'comand' in steps[0]: did you mean 'command'?"),
        "nocommand.yaml": ("name: x\nsteps:\n  - label: a\n    repetitions: 3\n",
                           "nocommand.yaml:3:5: steps[0] (a): no command"),
        "negative.yaml": ("name: x\nsteps:\n  - label: a\n    command: [true]\n"
                          "    repetitions: -3\n",
                          "negative.yaml:5:18: steps[0] (a).repetitions: must be 1 or more, got -3 "
                          "(negative)"),
        "metric.yaml": ("name: x\nmetrics: {latency_ms: ms}\nsteps:\n  - label: a\n"
                        "    command: [true]\n    metrics: [latncy_ms]\n",
                        "metric.yaml:6:15: steps[0] (a).metrics: unknown metric 'latncy_ms'; "
                        "did you mean 'latency_ms'?"),
    }
    with Board(THERMLOGD, "ambient=25") as b:
        tap.ok(b.url, "a board serves", b.stderr())
        for name, (text, want) in cases.items():
            path = write_suite(os.path.join(wd, name), text, SIMLOAD)
            chk = subprocess.run([THERMLOG, "campaign", "check", path], capture_output=True,
                                 text=True)
            tap.ok(chk.returncode == 2 and want in chk.stderr,
                   "campaign check %s: exit 2, %r" % (name, want), chk.stderr)
            run = b.thermlog(THERMLOG, "campaign", "run", path)
            tap.ok(run.returncode == 2 and want in run.stderr,
                   "campaign run %s: refused with the same line" % name, run.stderr)
        listed = json.loads(b.thermlog(THERMLOG, "campaign", "list", "--json").stdout)
        tap.ok(listed["campaigns"] == [] and runs(THERMLOG, b) == [],
               "nothing ran: no campaign, no run", listed)
        good = write_suite(os.path.join(wd, "five.yaml"), FIVE, SIMLOAD)
        chk = subprocess.run([THERMLOG, "campaign", "check", good], capture_output=True,
                             text=True)
        tap.ok(chk.returncode == 0 and "suite OK: five-tests, 5 steps, 31 repetitions" in
               chk.stdout, "the Five Tests suite checks", chk.stdout + chk.stderr)
        # the suite docs/CAMPAIGN.md shows for a real board (its commands are not here: check
        # reads the suite, run would look for them)
        real = os.path.join(SOURCE, "docs", "examples", "five-tests.yaml")
        chk = subprocess.run([THERMLOG, "campaign", "check", real], capture_output=True,
                             text=True)
        tap.ok(chk.returncode == 0 and "suite OK: five-tests, 6 steps" in chk.stdout,
               "docs/examples/five-tests.yaml checks", chk.stdout + chk.stderr)


def check_board(tap, name, b, view, spec_reached):
    """One board's campaign: recorded and tagged, gated, warm, the binning check's clocks."""
    tap.ok(view and view["status"] == "done" and view["slots_ended"] == view["slots"] == 31,
           "%s: the campaign ran to its end" % name, view and view["status"])
    all_runs = runs(THERMLOG, b)
    camp = [r for r in all_runs if r["tags"].get("campaign") == str(view["id"])]
    tap.ok(len(camp) == len(view["repetitions"]) + 2,
           "%s: every repetition is a recorded run, with the idle and burst runs" % name,
           (len(camp), len(view["repetitions"])))
    tap.ok(all(r["tags"].get("suite") == "five-tests" and r["tags"].get("rep") and
               r["tags"].get("start") in ("cold", "warm", "any") for r in camp),
           "%s: each tagged campaign, step, rep, start and the suite's own" % name)
    by_id = {r["id"]: r for r in camp}
    base = view["baseline"]["zones"]
    tol = view["suite"]["gate"]["tolerance_k"]
    keys = sorted(base)
    cold_ok, warm_hot, worst = True, True, []
    for rep in view["repetitions"]:
        run = by_id[rep["run"]]
        if rep["start_kind"] == "cold":
            z = zones_at(THERMLOG, b, keys, iso_ms(run["start"]))
            off = {k: z[k] - base[k] for k in keys if z[k] is not None}
            worst.append(max(abs(v) for v in off.values()))
            cold_ok = cold_ok and rep["gate"] == "passed" and len(off) == len(keys) and \
                all(abs(v) <= tol for v in off.values())
        elif rep["start_kind"] == "warm":
            z = zones_at(THERMLOG, b, ["thermal/npu-thermal"], iso_ms(run["start"]))
            warm_hot = warm_hot and z["thermal/npu-thermal"] - base["thermal/npu-thermal"] > tol
    tap.ok(cold_ok, "%s: every cold repetition started within ± %g K of the idle baseline "
           "(exported zones at its start; worst %.2f K)" % (name, tol, max(worst)), worst)
    tap.ok(warm_hot, "%s: every warm repetition started hotter than the tolerance" % name)
    reached = view["fingerprint"]["reached_hz"]
    tap.ok(reached.get("cpufreq/policy4") == spec_reached and
           reached.get("cpufreq/policy6") == spec_reached,
           "%s: the burst reached %d MHz on the big cores" % (name, spec_reached // 1000000),
           reached)
    steps = {s["label"]: s for s in view["steps"]}
    tap.ok(steps["all-core"]["gate_wait_s"] > 0 and steps["repetition"]["gate_wait_s"] == 0,
           "%s: gate waits summed per step (cold steps waited, 'any' did not)" % name,
           {k: v["gate_wait_s"] for k, v in steps.items()})
    tap.ok(steps["repetition"]["failed"] >= 1 and steps["repetition"]["ok"] >= 10,
           "%s: the long repetition counts completions and failures" % name, steps["repetition"])
    tap.ok(steps["npu-op"]["incomplete"] == 0 and all(
           by_id[r["run"]]["metrics"].get("latency_ms") for r in view["repetitions"]
           if r["step"] == "npu-op"), "%s: latency_ms reported by every npu-op run" % name)


def run_both(tap, a, b, suite):
    """Board A's and board B's campaign of @suite side by side, each to its end."""
    tap.ok(a.url and b.url, "two boards serve", a.stderr() + b.stderr())
    ra = start_runner(THERMLOG, a, suite, "--board", "A")
    rb = start_runner(THERMLOG, b, suite, "--board", "B")
    tap.ok(wait_exit(ra, 600) == 0, "board A's campaign ends (exit 0)", runner_log(ra))
    tap.ok(wait_exit(rb, 600) == 0, "board B's campaign ends (exit 0)", runner_log(rb))


def part_boards(tap, wd):
    suite = write_suite(os.path.join(wd, "five.yaml"), FIVE, SIMLOAD)
    with Board(THERMLOGD, "ambient=25") as a, \
            Board(THERMLOGD, "ambient=31.5,big_max=2304", seed="2") as b:
        run_both(tap, a, b, suite)
        check_board(tap, "A", a, show(THERMLOG, a), 2400000000)
        check_board(tap, "B", b, show(THERMLOG, b), 2304000000)


def resume_ok(tap, what, view, cut_step):
    count = ended_once(view)
    slots = planned(view)
    tap.ok(all(count.get(s) == 1 for s in slots),
           "%s: every repetition ended exactly once" % what,
           {s: count.get(s) for s in slots if count.get(s) != 1})
    lost = [r for r in view["repetitions"] if r["status"] == "lost"]
    tap.ok(len(lost) >= 1 and all(r["step"] == cut_step for r in lost),
           "%s: the cut repetition is lost, then ran again" % what, lost)


def part_resume_runner(tap, wd):
    suite = write_suite(os.path.join(wd, "five.yaml"), FIVE, SIMLOAD)
    with Board(THERMLOGD, "ambient=25") as a:
        p = start_runner(THERMLOG, a, suite)
        cut = wait_running_rep(THERMLOG, a, "npu-op")
        tap.ok(cut, "a repetition of npu-op is under way", runner_log(p))
        p.send_signal(signal.SIGKILL)
        p.wait()
        # The daemon closes its run lost once it sees the runner gone.
        lost = wait_for(lambda: [r for r in runs(THERMLOG, a)
                                 if r["id"] == cut["id"] and r["status"] == "lost"], 30, 0.2)
        tap.ok(lost, "the cut run is recorded lost")
        tap.ok(not os.listdir(os.path.join(a.sim_root(), "sim", "work")) or wait_for(
            lambda: not os.listdir(os.path.join(a.sim_root(), "sim", "work")), 30, 0.2),
            "its command died with the runner: no work left on the board")
        # A changed suite is refused for resume, naming what changed.
        changed = write_suite(os.path.join(wd, "five.yaml"),
                              FIVE.replace("repetitions: 20", "repetitions: 25"), SIMLOAD)
        out = a.thermlog(THERMLOG, "campaign", "run", changed, "--resume")
        tap.ok(out.returncode == 2 and "steps.repetition: repetitions 20 -> 25" in out.stderr,
               "a changed suite is refused for resume, naming the change", out.stderr)
        write_suite(os.path.join(wd, "five.yaml"), FIVE, SIMLOAD)
        p = start_runner(THERMLOG, a, suite, "--resume")
        tap.ok(wait_exit(p, 600) == 0, "--resume runs the campaign to its end", runner_log(p))
        view = show(THERMLOG, a)
        tap.ok(view["status"] == "done", "done", view["status"])
        resume_ok(tap, "runner killed", view, "npu-op")


def part_resume_daemon(tap, wd):
    suite = write_suite(os.path.join(wd, "five.yaml"), FIVE, SIMLOAD)
    with Board(THERMLOGD, "ambient=25") as a:
        p = start_runner(THERMLOG, a, suite)
        cut = wait_running_rep(THERMLOG, a, "inference-cold")
        tap.ok(cut, "a repetition of inference-cold is under way", runner_log(p))
        a.kill9()
        rc = wait_exit(p, 120)
        tap.ok(rc == 1 and "not recorded" in runner_log(p),
               "the runner stops, saying the end was not recorded", runner_log(p))
        a2 = restart(a, THERMLOGD)
        try:
            tap.ok(a2.url, "the daemon starts again on its database", a2.stderr())
            p = start_runner(THERMLOG, a2, suite, "--resume")
            tap.ok(wait_exit(p, 600) == 0, "--resume runs the campaign to its end",
                   runner_log(p))
            view = show(THERMLOG, a2)
            tap.ok(view["status"] == "done", "done", view["status"])
            resume_ok(tap, "daemon killed", view, "inference-cold")
        finally:
            a2.stop()


TIMEOUT = """name: hot
metrics: {latency_ms: ms}
idle: {duration: 4s, burst: 0s}
gate: {tolerance_k: 1, max_wait: 5s}
steps:
  - label: heater
    command: (SIMLOAD --cpu all=100 --for 120s & echo $! > heater.pid) && SIMLOAD --for 3s
    start: any
  - label: cold-op
    command: [SIMLOAD, --npu, all=50, --for, 500ms]
    repetitions: 2
  - label: after
    command: [SIMLOAD, --for, 200ms]
    repetitions: 1
    start: any
    metrics: [latency_ms]
"""


def part_timeout(tap, wd):
    suite = write_suite(os.path.join(wd, "hot.yaml"), TIMEOUT, SIMLOAD)
    with Board(THERMLOGD, "ambient=25") as a:
        # Its first step leaves a heater running on the board, which it has heated for 3 s
        # (six minutes of the board's time): no gate after it can pass.
        p = start_runner(THERMLOG, a, suite)
        rc = wait_exit(p, 300)
        with open(os.path.join(wd, "heater.pid")) as f:
            os.kill(int(f.read()), signal.SIGTERM)
        tap.ok(rc == 0, "the campaign goes on to its end", runner_log(p))
        view = show(THERMLOG, a)
        cold = [r for r in view["repetitions"] if r["step"] == "cold-op"]
        tap.ok(len(cold) == 2 and all(r["gate"] == "timeout" and r["gate_wait_s"] >= 5 and
                                      r["status"] == "ok" for r in cold),
               "each cold repetition ran after the 5 s wait, marked gate timeout", cold)
        tap.ok(all(r["gate_detail"].startswith("gate_timeout after") and
                   ("is throttled" in r["gate_detail"] or "over its idle baseline" in
                    r["gate_detail"]) for r in cold), "and says why (the heater's throttling "
               "or heat)", [r["gate_detail"] for r in cold])
        by_id = {r["id"]: r for r in runs(THERMLOG, a)}
        tap.ok(all(by_id[r["run"]]["tags"].get("gate") == "timeout" for r in cold),
               "its runs carry gate=timeout")
        steps = {s["label"]: s for s in view["steps"]}
        tap.ok(steps["cold-op"]["gate_timeouts"] == 2 and steps["after"]["ok"] == 1,
               "show counts the timeouts; the next step ran", steps)
        tap.ok("gate timed out after" in runner_log(p), "the progress says it", runner_log(p))
        # 'after' expects latency_ms, which its command never reports: the run ends ok and is
        # marked incomplete, counted in its step, said by the progress line
        after = [r for r in view["repetitions"] if r["step"] == "after"]
        tap.ok(len(after) == 1 and after[0]["status"] == "ok" and
               after[0]["missing_metrics"] == ["latency_ms"] and
               steps["after"]["incomplete"] == 1 and steps["cold-op"]["incomplete"] == 0,
               "a run without an expected metric is marked incomplete", (after, steps["after"]))
        tap.ok(re.search(r"after rep 1/1.*: run \d+ ok in .*, incomplete: no latency_ms",
                         runner_log(p)), "and the progress says which", runner_log(p))


CHILLY = """name: chilly
idle: {duration: 4s, burst: 0s}
gate: {tolerance_k: 1.5, max_wait: 120s,
       warm_up: "[ -e heater.pid ] || (SIMLOAD --cpu all=60 --for 600s & echo $! > heater.pid)"}
steps:
  - {label: window, start: any, command: "while [ ! -e window.opened ]; do sleep 0.1; done"}
  - {label: cold-op, repetitions: 2, command: [SIMLOAD, --npu, all=50, --for, 500ms]}
  - {label: hang, start: any, timeout: 1s, command: [SIMLOAD, --for, 60s]}
"""


def thermal_now(board):
    """The thermal zones' readings now (/api/v1/latest) with the cycle's time."""
    latest = board.latest()
    return latest[None], {k: v for k, v in latest.items()
                          if k and k.startswith("thermal/") and isinstance(v, (int, float))}


def steady(board, within_k=0.3):
    """Waits until two cycles at least 3 s apart read every zone within @within_k of each
    other: the board settled."""
    marks = []

    def settled():
        ts, z = thermal_now(board)
        if marks and ts < marks[-1][0] + 3:
            return False
        marks.append((ts, z))
        return len(marks) >= 2 and all(abs(z[k] - marks[-2][1].get(k, 1e9)) <= within_k
                                       for k in z)
    return wait_for(settled, 120, 0.3)


def part_warm_up(tap, wd):
    """A board colder than its idle baseline (a window opened: the load it idled under gone)
    runs the gate's warm_up until it is back within the tolerance, then the cold repetition;
    a step past its timeout is recorded timeout and the campaign goes on; the progress lines."""
    suite = write_suite(os.path.join(wd, "chilly.yaml"), CHILLY, SIMLOAD)
    with Board(THERMLOGD, "ambient=25") as a:
        # The board idles under a light load (a room warmer than the window), steady first.
        heater = subprocess.Popen([SIMLOAD, "--cpu", "all=60", "--for", "600s"], cwd=wd,
                                  env=a.run_env(), stdout=subprocess.DEVNULL)
        warmed = None
        try:
            tap.ok(steady(a), "the board settles under the idle load")
            p = start_runner(THERMLOG, a, suite, "--board", "A")
            tap.ok(wait_running_rep(THERMLOG, a, "window"), "the campaign's first step runs",
                   runner_log(p))
            view = show(THERMLOG, a)
            base = view["baseline"]["zones"]
            heater.terminate()
            heater.wait()
            # The window opened: the board cools under its baseline by more than the tolerance.
            cold = wait_for(lambda: all(thermal_now(a)[1][k] < base[k] - 1.5 for k in base), 120,
                            0.3)
            tap.ok(cold, "without the load the board falls more than 1.5 K under its baseline",
                   (base, thermal_now(a)))
            open(os.path.join(wd, "window.opened"), "w").close()
            rc = wait_exit(p, 300)
            tap.ok(rc == 0, "the campaign ends (exit 0)", runner_log(p))
            if os.path.exists(os.path.join(wd, "heater.pid")):
                with open(os.path.join(wd, "heater.pid")) as f:
                    warmed = int(f.read())
        finally:
            heater.kill()
            if warmed:
                os.kill(warmed, signal.SIGTERM)
        tap.ok(warmed, "the gate ran the warm_up command (it left its heater's pid)")
        view = show(THERMLOG, a)
        reps = [r for r in view["repetitions"] if r["step"] == "cold-op"]
        tap.ok(len(reps) == 2 and reps[0]["gate"] == "passed" and
               "and a warm-up" in reps[0]["gate_detail"] and reps[0]["gate_wait_s"] > 0,
               "the first cold repetition passed its gate after a warm-up, the wait recorded",
               reps)
        by_id = {r["id"]: r for r in runs(THERMLOG, a)}
        off = []
        for r in reps:
            z = zones_at(THERMLOG, a, sorted(base), iso_ms(by_id[r["run"]]["start"]))
            off.append(max(abs(z[k] - base[k]) for k in base))
        tap.ok(all(r["gate"] == "passed" and r["status"] == "ok" for r in reps) and
               max(off) <= 1.5, "each cold repetition started within ± 1.5 K of the baseline "
               "(exported zones; worst %.2f K)" % max(off), (off, reps))
        hang = [r for r in view["repetitions"] if r["step"] == "hang"]
        tap.ok(len(hang) == 1 and hang[0]["status"] == "timeout" and
               by_id[hang[0]["run"]]["duration_s"] < 30 and view["status"] == "done",
               "the step past its 1 s timeout is recorded timeout, cut, and the campaign ends",
               hang)
        log = runner_log(p)
        tap.ok(re.search(r"campaign chilly \[2/4\] cold-op rep 1/2 \(cold\): gate: waiting "
                         r"[^:]+: thermal/\S+ [\d.]+ .C, [\d.]+ K under its idle baseline",
                         log) and
               re.search(r"cold-op rep 1/2 \(cold\): running; ETA ", log) and
               re.search(r"cold-op rep 2/2 \(cold\): run \d+ ok in .*, gate passed after ", log),
               "progress lines: where the campaign is, the gate's state and time waited, "
               "the ETA, each run's end", log)


INTERLEAVED = """name: drift
tags: {suite: drift}
idle: {duration: 4s, burst: 0s}
gate: {tolerance_k: 2, max_wait: 60s}
order: interleaved
steps:
  - label: cpu
    command: [SIMLOAD, --cpu, all=100, --for, 1s]
    repetitions: 3
    warmup: 1
  - label: npu
    command: [SIMLOAD, --npu, all=80, --for, 1s]
    repetitions: 3
"""


def api_bytes(board, path):
    """GET @path of the board's API: (status, body as text)."""
    import urllib.error
    from thermlog_test import get
    try:
        return 200, get(board.url + path).decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()


def fingerprint_ok(tap, fp):
    """The board's fingerprint at the campaign's start, as the simulated board answers."""
    import hashlib
    board = fp["board"]
    tap.ok(board["model"] and board["compatible"] and board["kernel"] and board["cmdline"] and
           board["ram_bytes"] > 0 and "0.9.6" in (board["npu_driver"] or ""),
           "fingerprint: the device tree's model and compatible, kernel, command line, RAM "
           "and the NPU driver's version (debugfs)", {k: board.get(k) for k in
                                            ("model", "compatible", "kernel", "cmdline",
                                             "ram_bytes", "npu_driver")})
    cpus = board["cpufreq"]
    tap.ok(len(cpus) == 3 and all(c["cpuinfo_max_hz"] > 0 and c["frequencies_hz"] and
                                  c["governor"] for c in cpus),
           "fingerprint: each CPU cluster's hardware maximum, frequency table and governor", cpus)
    dmc = [d for d in board["devfreq"] if "upthreshold" in (d.get("tunables") or {})]
    tap.ok(dmc and all(d["governor"] for d in board["devfreq"]),
           "fingerprint: the devfreq governors and their tunables (the DMC's upthreshold)",
           board["devfreq"])
    tap.ok(any(z["trips"] for z in board["thermal"]) and any(
           z["cooling"] for z in board["thermal"]) and board["cooling"],
           "fingerprint: the thermal trips and the cooling devices bound to them",
           (board["thermal"], board["cooling"]))
    with open(SIMLOAD, "rb") as f:
        sha = hashlib.sha256(f.read()).hexdigest()
    tap.ok([(e["step"], e["sha256"]) for e in fp["executables"]] == [("cpu", sha), ("npu", sha)],
           "fingerprint: each step's executable with its sha256", fp["executables"])


def part_interleaved(tap, wd):
    """order: interleaved runs the steps' repetitions alternately, each one cold; campaign
    list and show say so as text and JSON, and the API gives the same JSON."""
    suite = write_suite(os.path.join(wd, "drift.yaml"), INTERLEAVED, SIMLOAD)
    with Board(THERMLOGD, "ambient=25") as a:
        p = start_runner(THERMLOG, a, suite, "--board", "A")
        tap.ok(wait_exit(p, 300) == 0, "the interleaved campaign ends (exit 0)", runner_log(p))
        view = show(THERMLOG, a)
        by_id = {r["id"]: r for r in runs(THERMLOG, a)}
        reps = sorted(view["repetitions"], key=lambda r: iso_ms(by_id[r["run"]]["start"]))
        order = [(r["step"], r["rep"], r["warmup"]) for r in reps]
        want = [("cpu", 1, True), ("npu", 1, False), ("cpu", 1, False), ("npu", 2, False),
                ("cpu", 2, False), ("npu", 3, False), ("cpu", 3, False)]
        tap.ok(order == want, "the runs started alternating the steps (their starts in order: "
               "cpu's warmup, then npu cpu npu cpu npu cpu)", order)
        tap.ok(all(r["start_kind"] == "cold" and r["gate"] == "passed" and r["status"] == "ok"
                   for r in reps), "each repetition passed its gate and ran cold",
               [(r["step"], r["start_kind"], r["gate"], r["status"]) for r in reps])
        tap.ok(all(by_id[r["run"]]["tags"].get("step") == r["step"] and
                   by_id[r["run"]]["tags"].get("rep") == str(r["rep"]) for r in reps),
               "each run tagged with its step and repetition")
        fingerprint_ok(tap, view["fingerprint"])
        # campaign list and show: text and JSON.
        listed = json.loads(a.thermlog(THERMLOG, "campaign", "list", "--json").stdout)
        row = listed["campaigns"][0] if len(listed["campaigns"]) == 1 else {}
        tap.ok(row.get("name") == "drift" and row.get("board") == "A" and
               row.get("status") == "done" and row.get("slots") == row.get("slots_ended") == 7,
               "campaign list --json: the campaign, done, 7 of 7", listed)
        text = a.thermlog(THERMLOG, "campaign", "list").stdout
        lines = text.splitlines()
        tap.ok(len(lines) == 2 and lines[0].split()[:4] == ["ID", "NAME", "BOARD", "STATUS"] and
               lines[1].split()[:4] == ["1", "drift", "A", "done"] and
               lines[1].split()[5:7] == ["7", "7"] if len(lines) == 2 else False,
               "campaign list: a table of the campaign", text)
        shown = a.thermlog(THERMLOG, "campaign", "show", "1").stdout
        steps = {l.split()[0]: l.split() for l in shown.splitlines()
                 if l.startswith("  cpu ") or l.startswith("  npu ")}
        tap.ok(shown.startswith("campaign 1: drift on A, done, 7 of 7 repetitions ended\n") and
               "idle baseline (" in shown and steps.get("cpu", [])[1:4] == ["cold", "4", "4"] and
               steps.get("npu", [])[1:4] == ["cold", "3", "3"],
               "campaign show: the campaign, its baseline and each step's repetitions", shown)
        # The API: GET /api/v1/campaigns and /api/v1/campaigns/{id}, as the CLI's JSON.
        tap.ok(a.url, "the board serves its API", a.stderr())
        code, body = api_bytes(a, "api/v1/campaigns")
        cli = a.thermlog(THERMLOG, "campaign", "list", "--json").stdout
        tap.ok(code == 200 and body == cli,
               "GET /api/v1/campaigns is campaign list --json, byte for byte", (code, body, cli))
        code, body = api_bytes(a, "api/v1/campaigns/1")
        cli = a.thermlog(THERMLOG, "campaign", "show", "1", "--json").stdout
        tap.ok(code == 200 and body == cli,
               "GET /api/v1/campaigns/1 is campaign show 1 --json, byte for byte", (code, body))
        code, body = api_bytes(a, "api/v1/campaigns/7")
        tap.ok(code == 404 and "no campaign 7" in body, "an unknown campaign is a 404",
               (code, body))
        code, body = api_bytes(a, "api/v1/campaigns?x=1")
        tap.ok(code == 400 and "unknown parameter 'x'" in body, "an unknown parameter a 400",
               (code, body))
        code, body = api_bytes(a, "api/v1/runs?tag=campaign=1")
        got = sorted(r["id"] for r in json.loads(body)["runs"]) if code == 200 else None
        camp = sorted(r["id"] for r in by_id.values() if r["tags"].get("campaign") == "1")
        tap.ok(got == camp and len(camp) == 7 + 1,
               "GET /api/v1/runs?tag=campaign=1: the campaign's runs (its repetitions and its "
               "idle run), what the dashboard's Runs view shows for it", (got, camp))
        browser_runs_view(tap, a, wd)


def browser_runs_view(tap, board, wd):
    """The dashboard's Runs view filtered by the campaign, in chromium (tests/browser/
    campaign.test.js), its TAP lines taken as this test's."""
    here = os.path.join(SOURCE, "tests", "browser")
    missing = [t for t in ("/usr/bin/chromium", "node") if not shutil.which(t)]
    if missing or not os.path.exists(os.path.join(here, "node_modules", "playwright-core")):
        tap.ok(True, "the Runs view by campaign in a browser # SKIP %s" %
               (" ".join(missing) or "tests/browser/node_modules (npm ci there)"))
        return
    out = subprocess.run(["node", os.path.join(here, "campaign.test.js"), board.url,
                          os.path.join(wd, "chromium-profile")], capture_output=True, text=True,
                         timeout=300)
    results = []
    for line in out.stdout.splitlines():
        m = re.match(r"(not )?ok \d+ - (.*)", line)
        if m:
            results.append([not m.group(1), "Runs view: " + m.group(2), []])
        elif line.startswith("#") and results:
            results[-1][2].append(line[1:])
    tap.ok(bool(results), "the browser test ran", out.stdout + out.stderr)
    for good, what, detail in results:
        tap.ok(good, what, "\n".join(detail))


def masked(text):
    """A report's structure: its headings and paragraphs with the figures masked, each table's
    header and the first cell of its rows (what a row is about), not what they hold."""
    out = []
    for line in text.splitlines():
        if line.startswith("| ") and not line.startswith("| ---"):
            cells = line.split(" | ")
            line = cells[0] + " | ..." if len(cells) > 1 else line
        out.append(re.sub(r"[-+]?\d+(\.\d+)?", "N", line))
    return "\n".join(out)


def report(tap, board, wd, name, *args):
    out = os.path.join(wd, name)
    r = board.thermlog(THERMLOG, "campaign", "report", *args, "-o", out, "--force")
    tap.ok(r.returncode == 0, "campaign report %s" % " ".join(args), r.stderr)
    with open(out) as f:
        return f.read()


def part_report(tap, wd):
    suite = write_suite(os.path.join(wd, "five.yaml"), FIVE, SIMLOAD)
    with Board(THERMLOGD, "ambient=25") as a, \
            Board(THERMLOGD, "ambient=31.5,big_max=2304", seed="2") as b:
        run_both(tap, a, b, suite)
        ra2 = start_runner(THERMLOG, a, suite, "--board", "A")
        tap.ok(wait_exit(ra2, 600) == 0, "a second campaign on A ends", runner_log(ra2))
        # B against A: not like for like, naming the ambient and the binned clock.
        md = report(tap, b, wd, "b-vs-a.md", "--compare", a.db + ":1")
        verdict = md[md.index("Comparable or not"):md.index("## Campaign")]
        tap.ok("not comparable" in verdict, "B against A: not comparable", verdict)
        amb = re.search(r"\| ambient \| (.*?) \|", verdict)
        tap.ok(amb and re.search(r"\d+\.\d+ .C", amb.group(1)) and "6." in amb.group(1),
               "the ambient named with both figures (6.5 K apart)", verdict)
        clk = re.findall(r"\| clock \| (.*?) \|", verdict)
        tap.ok(any("2304" in c and "2400" in c for c in clk),
               "the binned clock named with its figures (2304 of 2400 MHz)", verdict)
        tap.ok(set(re.findall(r"\| (\w+) \| ", verdict)) <= {"reason", "ambient", "clock"},
               "and no other reason", verdict)
        # A's second campaign against its first: comparable, every interval holding 1.
        md2 = report(tap, a, wd, "a2-vs-a1.md", "--campaign", "2", "--compare", a.db + ":1")
        v2 = md2[md2.index("Comparable or not"):md2.index("## Campaign")]
        tap.ok("comparable:" in v2 and "not comparable" not in v2,
               "A against itself: comparable", v2)
        steps = md2[md2.index("## Each step on both boards"):md2.index("## Steps")]
        rows = re.findall(r"\| ([\w-]+) \| \d+ / \d+ \| .*? \| ([\d.]+) \[([\d.]+), "
                          r"([\d.]+)\] \|", steps)
        # Whether each interval holds 1 is the machine's pace (a repetition's duration is its
        # command's time on a loaded machine); what the report must get right is the ratio of
        # the stored medians, campaign 1's over campaign 2's, inside its interval.
        mine = runs(THERMLOG, a)

        def median_s(cid, step):
            return statistics.median(
                r["duration_s"] for r in mine if r["status"] == "ok"
                and r["tags"].get("campaign") == cid and r["tags"].get("warmup") == "0"
                and r["tags"].get("step") == step)
        want = {step: median_s("1", step) / median_s("2", step) for step, _, _, _ in rows}
        tap.ok(len(rows) == 5 and all(
            float(ratio) == round(want[step], 3) and float(lo) <= float(ratio) <= float(hi)
            for step, ratio, lo, hi in rows),
            "every step's ratio of median durations is the stored runs' (campaign 1 over 2), "
            "inside its interval: %s" % {k: round(v, 3) for k, v in want.items()}, steps)
        html = report(tap, b, wd, "b-vs-a.html", "--compare", a.db + ":1")
        tap.ok(html.startswith("<!DOCTYPE html>") and "not comparable" in html,
               "the same report as HTML")
        # The documentation's example is this report: regenerated by --update, else matched.
        doc = os.path.join(SOURCE, "docs", "examples", "five-tests-report.md")
        if UPDATE:
            with open(doc, "w") as f:
                f.write(md)
        with open(doc) as f:
            kept = f.read()
        tap.ok(masked(kept) == masked(md),
               "docs/examples/five-tests-report.md is this report (but for figures and times; "
               "test_campaign.py ... report --update writes it)",
               "\n".join(l for l in __import__("difflib").unified_diff(
                   masked(kept).splitlines(), masked(md).splitlines(), lineterm="")))


def run(tap):
    with Workdir("thermlog-campaign.") as wd:
        {"check": part_check, "boards": part_boards, "resume-runner": part_resume_runner,
         "resume-daemon": part_resume_daemon, "timeout": part_timeout,
         "interleaved": part_interleaved,
         "warm-up": part_warm_up, "report": part_report}[PART](tap, wd)


if __name__ == "__main__":
    main(run)
