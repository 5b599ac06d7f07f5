#!/usr/bin/python3
"""The load source in a daemon at a 1 s interval over a copy of the ROCK 5C fixture: the test
rewrites proc/stat and debugfs rknpu/load between cycles and reads the stored values back
exactly. Each version of a file is read by at least one whole cycle, so every change of
/proc/stat gives exactly one busy share per CPU (a version read twice has no tick between
the reads: no value), whatever the machine's load. The first cycle has no share and no
warning; an offline CPU (its line removed) is absent, never 0, and starts over when back; a
malformed rknpu/load and an unreadable rkrga/load (a directory: EISDIR) give one warning each
and leave every other channel as it was. The daemon reads debugfs where --debugfs-root says
(as the systemd unit starts it), not where the configuration's debugfs_root points. Then a run,
its /proc/stat advancing in the same proportions every 100 ms: its figures.load has the exact mean and p95 busy share of all CPUs,
of each cpufreq policy's CPUs and of each NPU core (core1 and core2 idle: 0, not absent); core0
alternating between two texts has the mean and type-7 p95 of the run's own fast samples as
GET /api/v1/runs/ID/samples gives them. A job log's run over the same window gets the same
figures from the stored 1 s samples."""
import json
import os
import subprocess
import sys
import threading
import time
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from thermlog_test import Daemon, Workdir, channel_ids, copy_fixture, cycles, main, samples, \
    wait_cycles, with_runs_socket

CPUS = 8


class Stat:
    """Per-CPU (user, idle) ticks and the /proc/stat text of them; offline CPUs keep theirs."""

    def __init__(self):
        self.ticks = [[1000 * (i + 1), 9000] for i in range(CPUS)]
        self.offline = set()

    def step(self, deltas):
        """@deltas: {cpu: (busy, idle)} ticks added this step."""
        for cpu, (b, i) in deltas.items():
            self.ticks[cpu][0] += b
            self.ticks[cpu][1] += i

    def text(self):
        # The "cpu" line sums every CPU, offline ones' frozen counters too (as the kernel does).
        ub = sum(t[0] for t in self.ticks)
        ui = sum(t[1] for t in self.ticks)
        lines = ["cpu  %d 0 0 %d 0 0 0 0 0 0" % (ub, ui)]
        lines += ["cpu%d %d 0 0 %d 0 0 0 0 0 0" % (c, t[0], t[1])
                  for c, t in enumerate(self.ticks) if c not in self.offline]
        return "\n".join(lines) + "\nintr 1 0 0\nctxt 2\nbtime 1764613213\n"


def put(path, text):
    """Replaces @path whole (a rename: a cycle reads the old text or the new, never a part)."""
    tmp = path + ".new"
    with open(tmp, "w") as f:
        f.write(text)
    os.rename(tmp, path)


def run(tap):
    exe, thermlog = sys.argv[1], sys.argv[2]
    fixture = sys.argv[3]
    with Workdir("thermlog-load.") as wd:
        root = copy_fixture(fixture, os.path.join(wd, "sysfs"))
        proc, debug = os.path.join(root, "proc"), os.path.join(root, "kernel", "debug")
        npu = os.path.join(debug, "rknpu", "load")
        os.makedirs(os.path.join(debug, "rkrga", "load"))  # a read gives EISDIR
        stat = Stat()
        put(os.path.join(proc, "stat"), stat.text())
        put(npu, "NPU load:  Core0:   0%, Core1:   0%, Core2:   0%,\n")
        db = os.path.join(wd, "t.db")
        cfg = os.path.join(wd, "t.yaml")
        with open(cfg, "w") as f:
            f.write(with_runs_socket(
                "interval: 1s\nrescan: 2s\nprocfs_root: %s\ndebugfs_root: %s\n"
                "sources:\n  hwmon: {enabled: false}\n  meminfo: {enabled: false}\n"
                "runs:\n  interval: 1s\n"
                % (proc, os.path.join(wd, "no-debugfs")), os.path.join(wd, "run", "thermlog.sock")))
        d = Daemon(exe, wd, ["-c", cfg, "--sysfs-root", root, "--debugfs-root", debug,
                             "--db", db, "--listen", "127.0.0.1:0"]).start()
        tap.ok(len(wait_cycles(db, 1, 30, d)) >= 1, "the first cycle is stored")

        def advance():
            """Waits until two more cycles are stored: one of them read the new text whole."""
            n = len(cycles(db))
            got = len(wait_cycles(db, n + 2, 30, d))
            if got < n + 2:
                raise RuntimeError("no cycles after %d" % n)

        # (deltas per CPU, offline CPUs, rknpu/load text)
        others = {c: (10, 90) for c in range(2, CPUS)}
        steps = [
            ({0: (80, 20), 1: (25, 75), **others}, set(), "NPU load:  Core0:  12%, Core1:   0%, Core2:  40%,\n"),
            ({0: (50, 50), 1: (0, 100), **others}, set(), "NPU load: Core0: 100%, Core1: 0%, Core2: 0%,\n"),
            # cpu5 offline: no line
            ({0: (20, 80), 1: (30, 70), **{c: v for c, v in others.items() if c != 5}}, {5},
             "NPU load:  Core0:  55%, Core1:   0%, Core2:   0%,\n"),
            # back with its old counters plus some: a first reading again. Held over two
            # rescan periods: a rescan while cpu5 was offline dropped its channel ("channel
            # load/cpu5 is gone"), and the next one, within this step, brings it back (one in
            # the next step took that step's text as cpu5's first reading, and its 60 % was
            # lost: the test failed on a loaded machine)
            ({0: (40, 60), 1: (30, 70), **others}, set(), "NPU load:  Core0:  55%, Core1:   0%, Core2:   0%,\n"),
            ({0: (70, 30), 1: (30, 70), 5: (60, 40), **{c: v for c, v in others.items() if c != 5}},
             set(), "NPU load:  Core0:  55%, Core1:   0%, Core2:   0%,\n"),
        ]
        want_all = []
        before_offline = set()
        for deltas, offline, text in steps:
            before = [list(t) for t in stat.ticks]
            stat.step(deltas)
            stat.offline = offline
            db_all = sum(stat.ticks[c][0] - before[c][0] for c in range(CPUS))
            dt_all = sum(sum(stat.ticks[c]) - sum(before[c]) for c in range(CPUS))
            want_all.append(int(1000 * db_all / dt_all + 0.5))  # llround: half away from 0
            put(os.path.join(proc, "stat"), stat.text())
            put(npu, text)
            advance()
            if 5 in before_offline and not offline:
                advance()  # six cycles, over two rescan periods (rescan: 2s): the note above
                advance()
            before_offline = offline
        # a malformed rknpu/load: its channels go, nothing else does
        stat.step({0: (30, 70)})
        put(os.path.join(proc, "stat"), stat.text())
        put(npu, "NPU load: garbage\n")
        advance()
        advance()  # and a rescan (every 2 s): still one warning
        advance()

        ids = channel_ids(db)
        rows = samples(db)
        series = {k: [v.get(ids[k]) for _, v in rows] for k in ids}

        def values(key):
            return [q for q in series.get(key, []) if q is not None]

        def runs(key):
            """The values with repeats of the one before dropped (snapshots, not shares)."""
            out = []
            for q in values(key):
                if not out or out[-1] != q:
                    out.append(q)
            return out

        cpu_keys = ["load/cpu"] + ["load/cpu%d" % c for c in range(CPUS)]
        tap.ok(all(k in ids for k in cpu_keys), "load/cpu and load/cpu0..7 stored",
               sorted(ids))
        first = rows[0][1] if rows else {}
        tap.ok(all(ids.get(k) not in first for k in cpu_keys),
               "the first cycle has no busy share", first)
        # Resolution 0.1 %: stored integers are tenths of a percent
        tap.ok(values("load/cpu0") == [800, 500, 200, 400, 700, 300],
               "cpu0: one exact share per change of /proc/stat", values("load/cpu0"))
        tap.ok(values("load/cpu1") == [250, 0, 300, 300, 300],
               "cpu1: 25 %, 0 % (a stored 0 is a real 0), 30 %", values("load/cpu1"))
        tap.ok(values("load/cpu5") == [100, 100, 600],
               "cpu5: absent while offline and on its first reading back, never 0",
               values("load/cpu5"))
        offline_rows = [v for _, v in rows
                        if ids["load/cpu0"] in v and ids["load/cpu5"] not in v]
        tap.ok(len(offline_rows) >= 2, "cycles with cpu0 and without cpu5", len(offline_rows))
        tap.ok(values("load/cpu")[:5] == want_all, "all CPUs: the shares of the ticks summed",
               (values("load/cpu"), want_all))
        tap.ok(runs("load/rknpu/core0") == [0, 12, 100, 55], "NPU core0: every rknpu/load text",
               runs("load/rknpu/core0"))
        tap.ok(runs("load/rknpu/core2") == [0, 40, 0], "NPU core2", runs("load/rknpu/core2"))
        tap.ok(set(values("load/fb000000.gpu")) == {3} and
               len(values("load/fb000000.gpu")) == len(rows),
               "devfreq load of the GPU in every cycle", values("load/fb000000.gpu"))
        last = rows[-1][1] if rows else {}
        tap.ok(ids.get("load/rknpu/core0") not in last and ids["load/fb000000.gpu"] in last,
               "after the malformed text: no NPU core values, the devfreq load still there",
               last)
        tap.ok("load/fdab0000.npu" not in ids,
               "no load/fdab0000.npu: the rknpu driver's constant 100 % is not a load",
               sorted(ids))
        tap.ok(not any(k.startswith("load/rkrga") for k in ids), "no RGA channel", sorted(ids))

        log = d.log_text()
        warn = [l for l in log.splitlines() if l.startswith("warning:")]
        npu_w = [l for l in warn if "rknpu/load" in l]
        rga_w = [l for l in warn if "rkrga/load" in l]
        tap.ok(len(npu_w) == 1 and "a load figure is not a whole number" in npu_w[0] and
               npu in npu_w[0], "one warning for the malformed rknpu/load, naming it and why",
               warn)
        tap.ok(len(rga_w) == 1 and "Is a directory" in rga_w[0],
               "one warning for the unreadable rkrga/load", warn)
        tap.ok(not [l for l in warn if "load/cpu" in l or "/stat" in l],
               "no warning for the first cycle or the offline CPU", warn)

        # The same figures through thermlog stats --json
        p = subprocess.run([thermlog, "--db", db, "stats", "--json", "--channel", "load/cpu5",
                            "--include-unsynced"],
                           capture_output=True, text=True, timeout=30)
        doc = json.loads(p.stdout) if p.returncode == 0 else {}
        ch = [c for c in doc.get("channels", []) if c.get("key") == "load/cpu5"]
        tap.ok(len(ch) == 1 and ch[0].get("count") == 3 and ch[0].get("max") == 60 and
               ch[0].get("min") == 10 and ch[0].get("unit") == "percent",
               "thermlog stats: cpu5 has 3 samples, 10..60 %", (p.stderr, ch))
        # A run: every 100 ms each CPU adds ticks in fixed proportions, so every fast sample's
        # share is exact whatever the timing (a sample with no tick since the one before has
        # none); the NPU's text stays.
        busy = {0: (90, 10), 1: (0, 100), 2: (50, 50), 3: (20, 80),  # policy0: 40 %
                4: (100, 0), 5: (30, 70),  # policy4: 65 %
                6: (10, 90), 7: (80, 20)}  # policy6: 45 %; all: 380 of 800 ticks, 47.5 %
        stat.offline = set()
        put(npu, "NPU load:  Core0:  70%, Core1:   0%, Core2:   0%,\n")
        put(os.path.join(proc, "stat"), stat.text())
        advance()  # a rescan brings the NPU cores back
        advance()
        stop = threading.Event()

        def ticker():
            k = 0
            while not stop.is_set():
                stat.step(busy)
                put(os.path.join(proc, "stat"), stat.text())
                if k % 7 == 0:  # core0 at 70 % or 20 %, changing every 0.7 s
                    put(npu, "NPU load:  Core0:  %d%%, Core1:   0%%, Core2:   0%%,\n"
                        % (70 if k // 7 % 2 == 0 else 20))
                k += 1
                time.sleep(0.1)

        th = threading.Thread(target=ticker)
        th.start()
        try:
            p = subprocess.run([thermlog, "-c", cfg, "run", "--label", "npu-job", "--", "sleep",
                                "5.5"], capture_output=True, text=True, timeout=60)
        finally:
            stop.set()
            th.join()
        p2 = subprocess.run([thermlog, "-c", cfg, "--db", db, "runs", "show", "1", "--json"],
                            capture_output=True, text=True, timeout=30)
        run_doc = json.loads(p2.stdout)["run"] if p2.returncode == 0 else {}
        load = (run_doc.get("figures") or {}).get("load") or {}
        tap.ok(p.returncode == 0 and load, "the run has figures.load", (p.stderr, p2.stderr))

        def fig(mean, n_min=3):
            return lambda f: (f and f["mean_pct"] == mean and f["p95_pct"] == mean and
                              f["samples"] >= n_min)

        tap.ok(fig(47.5)(load.get("cpu")), "all CPUs: 47.5 % mean and p95", load.get("cpu"))
        cl = {c["name"]: c for c in load.get("clusters", [])}
        tap.ok(sorted(cl) == ["policy0", "policy4", "policy6"] and
               [cl[k]["cpus"] for k in sorted(cl)] == ["0-3", "4-5", "6-7"],
               "one cluster per cpufreq policy, its CPUs from related_cpus", cl)
        tap.ok(all(fig(m)(cl.get(k)) for k, m in (("policy0", 40), ("policy4", 65),
                                                   ("policy6", 45))),
               "clusters: the mean of their CPUs' shares, 40 %, 65 %, 45 %", cl)
        cores = {c["core"]: c for c in load.get("npu", [])}
        port = d.http_port()
        with urllib.request.urlopen("http://127.0.0.1:%d/api/v1/runs/1/samples" % port,
                                    timeout=10) as r:
            fast = json.loads(r.read())["samples"]
        c0 = sorted(x["values"]["load/rknpu/core0"] for x in fast
                    if "load/rknpu/core0" in x["values"])
        h = (len(c0) - 1) * 0.95
        lo = int(h)
        p95 = c0[lo] + (h - lo) * (c0[min(lo + 1, len(c0) - 1)] - c0[lo]) if c0 else None
        want0 = {"mean_pct": round(sum(c0) / len(c0), 3) if c0 else None,
                 "p95_pct": round(p95, 3) if c0 else None, "samples": len(c0)}
        got0 = {k: cores.get("core0", {}).get(k) for k in want0}
        tap.ok(got0 == want0 and set(c0) == {20, 70},
               "NPU core0 at 70 % and 20 %: the mean and type-7 p95 of its fast samples",
               (got0, want0, c0))
        tap.ok(sorted(cores) == ["core0", "core1", "core2"] and
               fig(0)(cores["core1"]) and fig(0)(cores["core2"]) and
               cores["core0"]["channel"] == "load/rknpu/core0",
               "NPU: core0 busy 70 %, core1 and core2 idle (0 measured, not absent)", cores)
        tap.ok(all(f["samples"] == load["cpu"]["samples"] for f in cl.values()),
               "each cluster has a value at every fast sample with a CPU share", cl)
        # The same window as a job log's run: figures.load from the stored 1 s samples, the
        # clusters from the cpufreq channels' affected_cpus
        log = os.path.join(wd, "jobs.csv")
        with open(log, "w") as f:
            f.write("start,end,status,label\n%s,%s,ok,imported-job\n"
                    % (run_doc.get("start"), run_doc.get("end")))
        p = subprocess.run([thermlog, "-c", cfg, "--db", db, "runs", "import", log],
                           capture_output=True, text=True, timeout=30)
        p2 = subprocess.run([thermlog, "-c", cfg, "--db", db, "runs", "--label",
                             "imported-job", "--json"], capture_output=True, text=True,
                            timeout=30)
        got = json.loads(p2.stdout)["runs"] if p2.returncode == 0 else []
        p3 = subprocess.run([thermlog, "-c", cfg, "--db", db, "runs", "show",
                             str(got[0]["id"]) if got else "0", "--json"],
                            capture_output=True, text=True, timeout=30)
        imp = ((json.loads(p3.stdout)["run"].get("figures") or {}).get("load") or {}
               if p3.returncode == 0 else {})
        icl = {c["name"]: c for c in imp.get("clusters", [])}
        icores = {c["core"]: c for c in imp.get("npu", [])}
        tap.ok(p.returncode == 0 and fig(47.5)(imp.get("cpu")) and
               [icl.get(k, {}).get("cpus") for k in ("policy0", "policy4", "policy6")] ==
               ["0-3", "4-5", "6-7"] and
               all(fig(m)(icl.get(k)) for k, m in (("policy0", 40), ("policy4", 65),
                                                    ("policy6", 45))) and
               fig(0)(icores.get("core1")) and "minute samples" in imp.get("method", ""),
               "an imported run over that window: the same shares from the stored samples",
               (p.stderr, imp))
        tap.ok(d.stop() == 0, "clean stop")


main(run)
