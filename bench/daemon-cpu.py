#!/usr/bin/python3
"""CPU time per sampling cycle of thermlogd on the ROCK 5C fixture, beside node_exporter's CPU
time per scrape of the same tree (thermal_zone and cpufreq collectors), in the same run, and
beside the floor under any such cycle (build/bench/bench-floor: the same reads and one SQLite
commit of the packed row, nothing else). hwmon (libsensors reads only the real /sys) and meminfo
(node_exporter is not asked for memory either) are off in both thermlogd and the floor.

Each program runs twice as a child, for a short and a long period, and its CPU time comes from
wait4()'s rusage (microseconds); the difference between the runs divided by the difference in
cycles (scrapes) removes start-up cost.

usage: bench/daemon-cpu.py BUILD/src/thermlogd [--seconds 60] [--interval 1s]
(bench-floor is taken from BUILD/bench/bench-floor beside it)
"""
import argparse
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "lib"))
from thermlog_test import free_port, read_cycles  # noqa: E402

SRC = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FIXTURE = os.path.join(SRC, "tests", "fixtures", "rock5c")


def cpu_of(proc):
    _, status, ru = os.wait4(proc.pid, 0)
    proc.returncode = status
    return ru.ru_utime + ru.ru_stime


def run_daemon(exe, wd, root, seconds, interval):
    db = os.path.join(wd, "bench-%d.db" % seconds)
    cfg = os.path.join(wd, "bench.yaml")
    with open(cfg, "w") as f:
        f.write("sources:\n  hwmon: {enabled: false}\n  meminfo: {enabled: false}\n")
    p = subprocess.Popen([exe, "-c", cfg, "--sysfs-root", root, "--db", db, "--interval",
                          interval, "--listen", "127.0.0.1:0"],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(seconds)
    p.send_signal(signal.SIGTERM)
    cpu = cpu_of(p)
    con = sqlite3.connect(db)
    cycles = len(read_cycles(con))
    channels = con.execute("SELECT count(*) FROM channels").fetchone()[0]
    con.close()
    return cpu, cycles, channels


def run_floor(exe, wd, root, seconds):
    db = os.path.join(wd, "floor-%d.db" % seconds)
    p = subprocess.Popen([exe, root, db], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                         text=True)
    time.sleep(seconds)
    p.send_signal(signal.SIGTERM)
    out = p.stdout.read()
    cpu = cpu_of(p)
    cycles = int(out.split()[0]) if out.split() else 0
    return cpu, cycles


def run_exporter(exe, root, seconds, period):
    port = free_port()
    p = subprocess.Popen([exe, "--path.sysfs=" + root, "--collector.disable-defaults",
                          "--collector.thermal_zone", "--collector.cpufreq",
                          "--web.listen-address=127.0.0.1:%d" % port],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = "http://127.0.0.1:%d/metrics" % port
    for _ in range(100):
        try:
            urllib.request.urlopen(url, timeout=2).read()
            break
        except OSError:
            time.sleep(0.1)
    scrapes, sample = 1, b""
    end = time.monotonic() + seconds
    next_at = time.monotonic()
    while time.monotonic() < end:
        next_at += period
        sample = urllib.request.urlopen(url, timeout=5).read()
        scrapes += 1
        time.sleep(max(0, next_at - time.monotonic()))
    p.send_signal(signal.SIGTERM)
    cpu = cpu_of(p)
    lines = sample.decode().splitlines()
    series = [l for l in lines if l.startswith(("node_thermal_zone_temp", "node_cpu_"))]
    failed = [l for l in lines if l.startswith("node_scrape_collector_success") and
              l.endswith(" 0")]
    if failed:
        print("# node_exporter collector failed: %s" % failed)
    return cpu, scrapes, len(series)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("thermlogd")
    ap.add_argument("--seconds", type=int, default=60)
    ap.add_argument("--interval", default="1s")
    args = ap.parse_args()
    exporter = shutil.which("prometheus-node-exporter") or shutil.which("node_exporter")
    floor = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(args.thermlogd))),
                         "bench", "bench-floor")
    floor = floor if os.access(floor, os.X_OK) else None
    wd = tempfile.mkdtemp(prefix="thermlog-bench.")
    # sysfs lives in memory: the copied tree goes to a RAM file system when there is one, the
    # database stays on disk as on a board.
    ram = tempfile.mkdtemp(prefix="thermlog-bench.", dir="/dev/shm") \
        if os.access("/dev/shm", os.W_OK) else wd
    try:
        root = os.path.join(ram, "sysfs")
        shutil.copytree(FIXTURE, root, symlinks=True)
        # node_exporter's cpufreq collector gives up on a policy without scaling_setspeed,
        # which real kernels always have ("<unsupported>" outside the userspace governor).
        pol = os.path.join(root, "devices/system/cpu/cpufreq")
        for name in os.listdir(pol) if os.path.isdir(pol) else []:
            f = os.path.join(pol, name, "scaling_setspeed")
            if not os.path.exists(f):
                with open(f, "w") as out:
                    out.write("<unsupported>\n")
        print("# tree %s, database in %s" % (root, wd))
        period = 1.0
        results = {}
        for seconds in (10, 10 + args.seconds):
            out = {}
            threads = [threading.Thread(target=lambda: out.__setitem__(
                "d", run_daemon(args.thermlogd, wd, root, seconds, args.interval)))]
            if exporter:
                threads.append(threading.Thread(target=lambda: out.__setitem__(
                    "n", run_exporter(exporter, root, seconds, period))))
            if floor:
                threads.append(threading.Thread(target=lambda: out.__setitem__(
                    "f", run_floor(floor, wd, root, seconds))))
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            results[seconds] = out
        a, b = results[10], results[10 + args.seconds]
        d_cpu = (b["d"][0] - a["d"][0]) / max(1, b["d"][1] - a["d"][1])
        print("thermlogd: %d channels, %d cycles in %d s: %.3f ms CPU per cycle (read + store)" %
              (b["d"][2], b["d"][1], 10 + args.seconds, d_cpu * 1000))
        if floor:
            f_cpu = (b["f"][0] - a["f"][0]) / max(1, b["f"][1] - a["f"][1])
            print("floor (the same reads, one SQLite commit): %d cycles: %.3f ms CPU per cycle" %
                  (b["f"][1], f_cpu * 1000))
            print("ratio thermlogd/floor: %.2f" % (d_cpu / f_cpu))
        if exporter:
            n_cpu = (b["n"][0] - a["n"][0]) / max(1, b["n"][1] - a["n"][1])
            print("node_exporter (thermal_zone, cpufreq): %d series, %d scrapes: %.3f ms CPU "
                  "per scrape" % (b["n"][2], b["n"][1], n_cpu * 1000))
            print("ratio thermlogd/node_exporter: %.3f (target <= 0.05)" % (d_cpu / n_cpu))
            if floor:
                print("ratio floor/node_exporter: %.3f (no daemon that stores each cycle in "
                      "SQLite goes below this)" % (f_cpu / n_cpu))
        else:
            print("prometheus-node-exporter not installed (scripts/bench installs it): the "
                  "baseline is then the read-only pass beside the whole cycle, build/bench/"
                  "bench-cycle")
    finally:
        shutil.rmtree(wd, ignore_errors=True)
        shutil.rmtree(ram, ignore_errors=True)


main()
