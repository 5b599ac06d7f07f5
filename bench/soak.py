#!/usr/bin/python3
"""A soak of the recorder with the runs interface in use: thermlogd on a copy of the ROCK 5C
fixture sampling every second, a `thermlog run` started every 15 s (lengths 1-40 s, so runs
overlap; one in five exits 3), HTTP readers on /metrics and the JSON API all along, and
one time-weighted report over the whole history a minute (GET /api/v1/report?weight=time, the
heaviest request there is), and anonymous memory read every 30 s; /proc/stat and rknpu/load advance every second, so the load
source computes shares all along. At the end it prints what a soak is judged by:

  cycles stored / cycles expected (one a second from the first to the last cycle, less the
  seconds a wall-clock step the daemon logged jumped over)
  acknowledged runs (the wrapper printed "run ID ... ended") / those stored, ended
  the whole-history reports answered / asked, and the slowest
  the machine's stalls: a probe thread beside the daemon that slept 100 ms and woke over 0.5 s
  late, and how many missing cycles fall within one (said, still missing)
  RssAnon over the last half: min, max, spread (the target: within --max-spread KiB,
  512 by default: a growing database fills SQLite's page caches, each bounded by cache_size), read every 30 s
  with the HTTP readers paused for 2.5 s (no request in flight, and a cycle after the last
  one, after which the daemon gives freed heap back), and the same read under load beside it;
  beside them, what each reading above the level caught: the least of three readings 0.5 s
  apart, and whether a run wrapper started or exited (its requests) in the 3 s before

and exits 1 if a cycle or an acknowledged run is missing or memory spread by more than --max-spread KiB
over the last half. Nothing is timed: figures only.

--heap-trace BUILD/bench/mtrace-start.so also reads glibc's malloc trace (libc_malloc_debug.so.0
preloaded, the trace written to a FIFO and followed as it comes) and prints the allocator's bytes
in use at each reading beside RssAnon: a rise in both is memory held, a rise in RssAnon alone
is the heap's layout. The trace slows every allocation: figures of its own, not the soak's.

The daemon gets the environment the service's unit sets (systemd/thermlogd.service.in:
GLIBC_TUNABLES, glibc's per-thread malloc cache off); --no-unit-env leaves it out.

usage: bench/soak.py BUILD/src/thermlogd BUILD/src/thermlog [--minutes 120] [--readers 2]
                     [--report-every 60] [--no-unit-env] [--heap-trace BUILD/bench/mtrace-start.so]
"""
import argparse
import os
import random
import re
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "lib"))
from thermlog_test import read_cycles, rss_kib  # noqa: E402

PATHS = ("/metrics", "/api/v1/latest", "/api/v1/status", "/api/v1/runs",
         "/api/v1/runs/stats", "/api/v1/stats?from=-1h")


def unit_environment():
    """The variables the service's unit sets (its Environment= lines), so the daemon is soaked
    as it runs installed."""
    env = {}
    with open(os.path.join(HERE, "..", "systemd", "thermlogd.service.in")) as f:
        for line in f:
            if line.startswith("Environment="):
                for word in line[len("Environment="):].split():
                    key, _, value = word.strip('"').partition("=")
                    env[key] = value
    return env


def advance_load(tree, k):
    """Moves the fixture's CPU counters on by one second of varying busy shares and rewrites
    the NPU's load line, each file replaced whole as the kernel's would read."""
    path = os.path.join(tree, "proc", "stat")
    out = []
    with open(path) as f:
        for i, line in enumerate(f):
            parts = line.split()
            if parts and parts[0].startswith("cpu"):
                busy = (k * 7 + i * 13) % 90
                v = [int(x) for x in parts[1:]]
                v[0] += busy
                v[3] += 100 - busy
                line = parts[0] + " " + " ".join(str(x) for x in v) + "\n"
            out.append(line)
    with open(path + ".new", "w") as f:
        f.writelines(out)
    os.replace(path + ".new", path)
    npu = os.path.join(tree, "kernel", "debug", "rknpu", "load")
    with open(npu + ".new", "w") as f:
        f.write("NPU load:  Core0: %3d%%, Core1: %3d%%, Core2: %3d%%,\n"
                % (k % 100, (k * 3) % 100, 0))
    os.replace(npu + ".new", npu)


class HeapTrace:
    """Follows glibc's malloc trace from a FIFO: the bytes in use, and after each stretch the
    trace went quiet (the daemon between allocations) the figure then, so a reading is paired
    with the trace caught up to it."""

    def __init__(self, module, tmp):
        # beside the C library this machine runs (a multiarch host has others)
        with open("/proc/self/maps") as f:
            libc = [ln.split()[-1] for ln in f if ln.rstrip().endswith("/libc.so.6")]
        debug = [p for p in (os.path.join(os.path.dirname(x), "libc_malloc_debug.so.0")
                             for x in libc[:1]) if os.path.exists(p)]
        if not debug:
            sys.exit("--heap-trace: libc_malloc_debug.so.0 (glibc 2.34 or later) not found "
                     "beside " + (libc[0] if libc else "the C library"))
        if not os.path.exists(module):
            sys.exit(f"--heap-trace: {module}: no such file (build the bench/ module first)")
        self.fifo = os.path.join(tmp, "malloc-trace")
        os.mkfifo(self.fifo)
        self.env = dict(os.environ, MALLOC_TRACE=self.fifo,
                        LD_PRELOAD=debug[0] + ":" + os.path.abspath(module))
        self.live, self.bytes = {}, 0
        self.caught_up = []  # (monotonic s, bytes in use) each time the trace went quiet
        self.lock = threading.Lock()
        threading.Thread(target=self.follow, daemon=True).start()

    def line(self, words):
        for i, w in enumerate(words):
            if w in (b"+", b">") and i + 2 < len(words):
                size = int(words[i + 2], 16)
                self.bytes += size - self.live.get(words[i + 1], 0)
                self.live[words[i + 1]] = size
                return
            if w in (b"-", b"<") and i + 1 < len(words):
                self.bytes -= self.live.pop(words[i + 1], 0)
                return

    def follow(self):
        with open(self.fifo, "rb", buffering=0) as f:
            rest = b""
            while True:
                chunk = f.read(1 << 20)
                if not chunk:
                    return
                lines = (rest + chunk).split(b"\n")
                rest = lines.pop()
                for ln in lines:
                    self.line(ln.split())
                if len(chunk) < 1 << 20:
                    with self.lock:
                        self.caught_up.append((time.monotonic(), self.bytes))
                        del self.caught_up[:-64]

    def in_use_after(self, t, timeout=10):
        """The bytes in use the first time the trace went quiet after monotonic time @t."""
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            with self.lock:
                later = [b for when, b in self.caught_up if when > t]
            if later:
                return later[0]
            time.sleep(0.05)
        return None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("thermlogd")
    ap.add_argument("thermlog")
    ap.add_argument("--minutes", type=float, default=120)
    ap.add_argument("--readers", type=int, default=2)
    ap.add_argument("--run-every", type=float, default=15)
    ap.add_argument("--report-every", type=float, default=60,
                    help="seconds between whole-history time-weighted reports (0: none)")
    ap.add_argument("--max-spread", type=int, default=512,
                    help="RssAnon's allowed spread over the last half, KiB (default 512)")
    ap.add_argument("--keep", action="store_true", help="keep the scratch directory")
    ap.add_argument("--no-unit-env", action="store_true",
                    help="leave out the unit's Environment= (by default the daemon gets it)")
    ap.add_argument("--heap-trace", metavar="MODULE",
                    help="follow glibc's malloc trace (BUILD/bench/mtrace-start.so)")
    a = ap.parse_args()

    tmp = tempfile.mkdtemp(prefix="thermlog-soak-")
    tree = os.path.join(tmp, "sys")
    shutil.copytree(os.path.join(HERE, "..", "tests", "fixtures", "rock5c"), tree, symlinks=True)
    db = os.path.join(tmp, "thermlog.db")
    sock = os.path.join(tmp, "run", "thermlog.sock")
    cfg = os.path.join(tmp, "thermlog.yaml")
    with open(cfg, "w") as f:
        f.write(f"interval: 1s\nsysfs_root: {tree}\nprocfs_root: {tree}/proc\n"
                f"debugfs_root: {tree}/kernel/debug\n"
                f"database: {db}\nsources:\n  hwmon: {{enabled: false}}\n"
                f"http:\n  listen: 127.0.0.1:0\n"
                f"runs:\n  socket: {sock}\n  interval: 1s\n")
    log = open(os.path.join(tmp, "thermlogd.log"), "w+")
    heap = HeapTrace(a.heap_trace, tmp) if a.heap_trace else None
    unit_env = {} if a.no_unit_env else unit_environment()
    d = subprocess.Popen([a.thermlogd, "-c", cfg], stdout=log, stderr=log,
                         env=dict(heap.env if heap else os.environ, **unit_env))
    port = None
    for _ in range(400):
        log.seek(0)
        m = re.search(r"\(port (\d+)\)", log.read())
        if m and os.path.exists(sock):
            port = int(m.group(1))
            break
        time.sleep(0.05)
    if port is None:
        log.seek(0)
        sys.exit("thermlogd did not start:\n" + log.read())
    base = f"http://127.0.0.1:{port}"

    stop = threading.Event()
    go = threading.Event()  # cleared while memory is read
    go.set()
    busy = [0]  # requests in flight
    reads = [0, 0]  # ok, failed
    acked, unrecorded, lock = [], [], threading.Lock()

    def reader(i):
        k = i
        while not stop.is_set():
            go.wait()
            with lock:
                if not go.is_set():
                    continue
                busy[0] += 1
            try:
                with urllib.request.urlopen(base + PATHS[k % len(PATHS)], timeout=30) as r:
                    r.read()
                reads[0] += 1
            except OSError:
                reads[1] += 1
            finally:
                with lock:
                    busy[0] -= 1
            k += 1
            time.sleep(0.2)

    reports = [0, 0, 0.0]  # answered, failed, the slowest in s

    def reporter():
        """One time-weighted report over the whole history every --report-every s, paused
        with the readers while memory is read."""
        while not stop.wait(a.report_every):
            go.wait()
            with lock:
                if not go.is_set():
                    continue
                busy[0] += 1
            t = time.monotonic()
            try:
                with urllib.request.urlopen(base + "/api/v1/report?weight=time",
                                            timeout=120) as r:
                    r.read()
                reports[0] += 1
                reports[2] = max(reports[2], time.monotonic() - t)
            except OSError:
                reports[1] += 1
            finally:
                with lock:
                    busy[0] -= 1

    events = []  # monotonic s of each wrapper's start and exit: its requests to the daemon

    def one_run(n):
        secs = random.randint(1, 40)
        cmd = ["sleep", str(secs)] if n % 5 else ["sh", "-c", f"sleep {secs}; exit 3"]
        events.append(time.monotonic())
        p = subprocess.run([a.thermlog, "-c", cfg, "run", "--label", f"soak{n % 3}", "--", *cmd],
                           capture_output=True, text=True)
        events.append(time.monotonic())
        m = re.search(r"thermlog run: run (\d+) \(", p.stderr)
        with lock:
            (acked if m else unrecorded).append(int(m.group(1)) if m else p.stderr.strip())

    stalls = []  # (wall s, s) the machine did not run this process on time: a probe beside it

    def probe():
        while not stop.is_set():
            t0 = time.monotonic()
            time.sleep(0.1)
            late = time.monotonic() - t0 - 0.1
            if late > 0.5:
                stalls.append((time.time() - late, late))

    threads = [threading.Thread(target=reader, args=(i,), daemon=True)
               for i in range(a.readers)] + [threading.Thread(target=probe, daemon=True)]
    if a.report_every > 0:
        threads.append(threading.Thread(target=reporter, daemon=True))
    for t in threads:
        t.start()
    random.seed(1)
    t0 = time.monotonic()
    end = t0 + a.minutes * 60
    mem = []  # (minute, RssAnon KiB with the readers paused)
    held = []  # the least of three readings 0.5 s apart in the same pause
    near_run = []  # whether a wrapper started or exited within 3 s before the reading
    loaded = []  # (minute, RssAnon KiB under load)
    in_use = []  # with --heap-trace: the allocator's bytes in use at each reading of mem
    next_run, next_mem, n, runners = t0, t0, 0, []
    next_load, k = t0, 0
    while time.monotonic() < end and d.poll() is None:
        now = time.monotonic()
        if now >= next_load:
            advance_load(tree, k)
            k += 1
            next_load += 1
        if now >= next_run:
            t = threading.Thread(target=one_run, args=(n,), daemon=True)
            t.start()
            runners.append(t)
            n += 1
            next_run += a.run_every
        if now >= next_mem:
            loaded.append(((now - t0) / 60, rss_kib(d.pid, "RssAnon:")))
            with lock:
                go.clear()
            while busy[0]:
                time.sleep(0.05)
            time.sleep(2.5)
            at = time.monotonic()
            mem.append(((now - t0) / 60, rss_kib(d.pid, "RssAnon:")))
            if heap:
                in_use.append(heap.in_use_after(at))
            three = [mem[-1][1]]
            for _ in range(2):
                time.sleep(0.5)
                three.append(rss_kib(d.pid, "RssAnon:"))
            held.append(min(three))
            near_run.append(any(at - 3 <= e <= at + 1 for e in list(events)))
            go.set()
            next_mem += 30
        time.sleep(0.2)
    for t in runners:
        t.join(60)
    stop.set()
    time.sleep(2)
    alive = d.poll() is None
    d.send_signal(signal.SIGTERM)
    rc = d.wait(30)

    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    ts = [t for t, _ in read_cycles(con)]
    runs = dict(con.execute("SELECT id, status FROM runs"))
    con.close()
    # A wall clock stepped forward skips the seconds it jumps over (cycles are stamped on the
    # wall clock's seconds), and the slot it lands next to when it lands off the grid; the
    # daemon logs each step (whole seconds, rounded down). A gap of at most a step's seconds
    # + 2 is the step's, one gap per logged step; any other missing cycle counts.
    log.seek(0)
    text = log.read()
    steps = sorted([int(x) for x in re.findall(r"the wall clock stepped forward by (\d+) s$",
                                                text, re.M)] +
                   [int(x) // 1000 for x in re.findall(
                       r"the wall clock stepped forward by (\d+) ms: \d+ slots? passed", text)])
    # what the daemon says it missed because it did not run (counted as missing all the same)
    late = sum(int(x) for x in re.findall(r"notice: (\d+) cycles? missed", text))
    gaps = sorted(b - a - 1 for a, b in zip(ts, ts[1:]) if b - a > 1)
    stepped = 0
    for gap in reversed(gaps):
        if steps and gap <= steps[-1] + 2:
            steps.pop()
            stepped += gap
    expected = ts[-1] - ts[0] + 1 - stepped if ts else 0
    missing_runs = [i for i in acked if i not in runs]
    open_runs = [i for i in acked if runs.get(i) == "running"]
    half = [kib for minute, kib in mem if minute >= a.minutes / 2]
    half_loaded = [kib for minute, kib in loaded if minute >= a.minutes / 2]
    spread = (max(half) - min(half)) if half else 0
    print(f"soak: {a.minutes:g} min at 1 s, a run every {a.run_every:g} s, {a.readers} readers"
          + "".join(f"; the unit's {k}={v}" for k, v in unit_env.items()))
    print(f"cycles: {len(ts)} stored of {expected} expected ({expected - len(ts)} missing)"
          + (f"; {stepped} more skipped by wall-clock steps the daemon logged" if stepped else "")
          + (f"; the daemon said it woke too late for {late}" if late else ""))
    print(f"runs: {len(acked)} acknowledged, {len(acked) - len(missing_runs)} stored, "
          f"{len(open_runs)} left running; {len(unrecorded)} not recorded")
    for u in unrecorded[:5]:
        print(f"  not recorded: {u}")
    print(f"http: {reads[0]} reads, {reads[1]} failed; whole-history time-weighted reports: "
          f"{reports[0]} answered, {reports[1]} failed, the slowest {reports[2]:.1f} s")
    # a missing cycle within a second of a stall the probe saw: the machine's, not the daemon's
    holes = [t for a_, b_ in zip(ts, ts[1:]) for t in range(a_ + 1, b_)]
    machine = [t for t in holes if any(st - 1 <= t <= st + late + 1 for st, late in stalls)]
    print(f"machine: {len(stalls)} stalls over 0.5 s of a probe thread beside the daemon "
          f"(longest {max((l for _, l in stalls), default=0):.1f} s); {len(machine)} of the "
          f"{len(holes)} missing cycles fall within them")
    if half:
        print(f"RssAnon over the last half: min {min(half)} KiB, max {max(half)} KiB, "
              f"spread {spread} KiB (first {mem[0][1]} KiB, last {mem[-1][1]} KiB)")
        print(f"RssAnon under load over the last half: min {min(half_loaded)} KiB, "
              f"max {max(half_loaded)} KiB")
    print("RssAnon by minute: " + " ".join(f"{m:.0f}:{k}" for m, k in mem[::4]))
    # What a reading above the level caught: the same pause 1 s later (memory held that long),
    # and a wrapper's start or exit just before it (a run's start or end in flight).
    last = [i for i, (minute, _) in enumerate(mem) if minute >= a.minutes / 2]
    if last:
        hk = [held[i] for i in last]
        quiet = [mem[i][1] for i in last if not near_run[i]]
        print(f"over the last half, the least of three readings 0.5 s apart: {min(hk)}-"
              f"{max(hk)} KiB, spread {max(hk) - min(hk)} KiB")
        print(f"over the last half, readings with no wrapper starting or exiting in the 3 s "
              f"before: {len(quiet)} of {len(last)}"
              + (f", {min(quiet)}-{max(quiet)} KiB, spread {max(quiet) - min(quiet)} KiB"
                 if quiet else ""))
        level = sorted(mem[i][1] for i in last)[len(last) // 2]
        for i in last:
            if mem[i][1] - level > 128:
                print(f"  minute {mem[i][0]:.1f}: {mem[i][1]} KiB ({mem[i][1] - level:+d} over "
                      f"the median), {held[i]} KiB 1 s later, "
                      + ("a wrapper started or exited just before" if near_run[i]
                         else "no wrapper started or exited just before"))
    if heap:
        print("in use by minute (KiB, the allocator's, at the same readings): " + " ".join(
            f"{m:.0f}:{'?' if b is None else b // 1024}"
            for (m, _), b in list(zip(mem, in_use))[::4]))
        known = [(k, b // 1024) for (m, k), b in zip(mem, in_use)
                 if m >= a.minutes / 2 and b is not None]
        if known:
            print(f"over the last half: RssAnon {min(k for k, _ in known)}-"
                  f"{max(k for k, _ in known)} KiB, in use {min(b for _, b in known)}-"
                  f"{max(b for _, b in known)} KiB")
    print(f"daemon alive at the end: {alive}, exit status {rc}")
    good = (alive and rc == 0 and expected == len(ts) and not missing_runs and not open_runs
            and not unrecorded and spread <= a.max_spread and not reports[1])
    print("soak: " + ("held" if good else "FAILED"))
    if a.keep or not good:
        print("kept " + tmp)
    else:
        shutil.rmtree(tmp, ignore_errors=True)
    sys.exit(0 if good else 1)


if __name__ == "__main__":
    main()
