"""What the campaign tests share: simulated boards that answer to work (thermlogd --demo
--board), suites written for them with thermlog-simload as their steps' commands, the runner
started and waited for, and readers of what it recorded (campaign show --json, runs --json,
export). Every wait is for a state the daemon or the database reports."""
import json
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from thermlog_test import Demo, export_series, wait_for  # noqa: E402

TIME_SCALE = "120"  # two minutes of the board's physics per second: gates of a few seconds


class Board(Demo):
    """A simulated board under work with its own database, tree and socket."""

    def __init__(self, thermlogd, spec, seed="1", db=None):
        self.spec, self.seed = spec, seed
        args = ["--board", spec, "--time-scale", TIME_SCALE, "--interval", "1s", "--seed", seed]
        if db:  # the daemon started again on an earlier board's database (getopt's last --db)
            args += ["--db", db]
        super().__init__(thermlogd, args, prefix="thermlog-campaign-")
        if db:
            self.db = db

    def conf(self):
        return os.path.join(self.sim_root(), "thermlog-demo.yaml")

    def run_env(self):
        e = dict(os.environ)
        e["THERMLOG_SIM_ROOT"] = self.sim_root()
        e["TMPDIR"] = self.tmp
        return e

    def thermlog(self, thermlog, *args, check=False):
        return subprocess.run([thermlog, "-c", self.conf(), "--db", self.db, *args],
                              capture_output=True, text=True, env=self.run_env(), check=check)


def restart(board, thermlogd):
    """The same board's daemon started again on its database (after kill -9): a new tree."""
    return Board(thermlogd, board.spec, board.seed, db=board.db)


def write_suite(path, text, simload):
    with open(path, "w") as f:
        f.write(text.replace("SIMLOAD", simload))
    return path


def start_runner(thermlog, board, suite, *args):
    """`campaign run` in the background, its stderr in a file beside the suite."""
    log = open(suite + ".log", "a")
    p = subprocess.Popen([thermlog, "-c", board.conf(), "--db", board.db, "campaign", "run",
                          suite, *args], stdout=log, stderr=log, env=board.run_env())
    p.log_path = suite + ".log"
    return p


def runner_log(p):
    with open(p.log_path, errors="replace") as f:
        return f.read()


def show(thermlog, board, cid=None):
    args = ["campaign", "show"] + ([str(cid)] if cid else []) + ["--json"]
    out = board.thermlog(thermlog, *args)
    return json.loads(out.stdout) if out.returncode == 0 else None


def runs(thermlog, board):
    out = board.thermlog(thermlog, "runs", "--json")
    return json.loads(out.stdout)["runs"] if out.returncode == 0 else []


def wait_running_rep(thermlog, board, step, timeout=120):
    """Waits until a run of step @step is under way; returns it."""
    def found():
        for r in runs(thermlog, board):
            if r["status"] == "running" and r["tags"].get("step") == step:
                return r
        return None
    return wait_for(found, timeout, 0.2)


def ended_once(view):
    """Each planned slot (step, rep, warmup) -> how many of its repetitions ended (not lost)."""
    count = {}
    for r in view["repetitions"]:
        key = (r["step"], r["rep"], r["warmup"])
        count.setdefault(key, 0)
        if r["status"] not in ("lost", "running", None):
            count[key] += 1
    return count


def planned(view):
    """The plan's slots of a campaign's suite: (step, rep, warmup)."""
    out = []
    for s in view["suite"]["steps"]:
        out += [(s["label"], i, True) for i in range(1, s["warmup"] + 1)]
        out += [(s["label"], i, False) for i in range(1, s["repetitions"] + 1)]
    return out


def iso_ms(text):
    import datetime
    return int(round(datetime.datetime.fromisoformat(text.replace("Z", "+00:00"))
                     .timestamp() * 1000))


def zones_at(thermlog, board, keys, at_ms):
    """Each channel of @keys at the last stored cycle at or before @at_ms (`thermlog export`)."""
    s = at_ms // 1000
    series = export_series(thermlog, board.db, keys, s - 10, s + 1)
    out = {}
    for k in keys:
        before = [v for t, v in series[k] if t <= s]
        out[k] = before[-1] if before else None
    return out


def wait_exit(p, timeout):
    try:
        return p.wait(timeout)
    except subprocess.TimeoutExpired:
        return None


def now_ms():
    return int(time.time() * 1000)
