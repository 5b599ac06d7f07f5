#!/usr/bin/python3
"""thermlogd --demo --board: a simulated board that answers to work. Two boards of one model (B
6.5 K warmer and its big cores binned to 2304 MHz) idle apart by their ambient; declared
all-core work heats them through the lags, throttles the big cores at their trip and draws
power; A's burst reaches 2400 MHz and B's 2304 while both say cpuinfo_max_freq 2400000; left
alone they cool back to idle. Every wait is for a state the daemons report."""
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from thermlog_test import Demo, export_series, main, wait_for

BOARD_ARGS = ["--interval", "1s", "--time-scale", "60"]
ZONE = "thermal/bigcore0-thermal"


def read(root, path):
    with open(os.path.join(root, path)) as f:
        return f.read()


def run(tap):
    thermlogd, thermlog, simload = sys.argv[1], sys.argv[2], sys.argv[3]
    with Demo(thermlogd, ["--board", "ambient=25"] + BOARD_ARGS) as a, \
            Demo(thermlogd, ["--board", "ambient=31.5,big_max=2304"] + BOARD_ARGS) as b:
        tap.ok(a.url and b.url, "both boards serve", a.stderr() + b.stderr())
        ra, rb = a.sim_root(), b.sim_root()
        tap.ok(ra and rb and os.path.isdir(os.path.join(ra, "sim", "work")),
               "each logs its tree, with sim/work", a.stderr())
        tap.ok(read(rb, "sim/board").startswith("ambient_c 31.5\nbig_max_khz 2304000\n"),
               "B's tree says its parameters", read(rb, "sim/board"))
        maxf = "devices/system/cpu/cpufreq/policy4/cpuinfo_max_freq"
        tap.ok(read(ra, maxf) == read(rb, maxf) == "2400000\n",
               "both say cpuinfo_max_freq 2400000")
        tap.ok(read(ra, "class/thermal/cooling_device4/type") == "pwm-fan\n",
               "the fan board has its pwm-fan")
        # Idle: no history, no runs of their own, B warmer by its ambient.
        la, lb = a.latest(), b.latest()
        tap.ok(abs((lb["iio/maxim_thermocouple/temp_ambient"] -
                    la["iio/maxim_thermocouple/temp_ambient"]) - 6.5) < 0.2,
               "the cold junctions read the ambients 6.5 K apart",
               (la["iio/maxim_thermocouple/temp_ambient"],
                lb["iio/maxim_thermocouple/temp_ambient"]))
        idle_a, idle_b = la[ZONE], lb[ZONE]
        tap.ok(5.5 <= idle_b - idle_a <= 7.5, "B idles %.2f K above A (TSADC steps)" %
               (idle_b - idle_a))
        tap.ok(la["cpufreq/policy4"] == 408000000, "idle big cores at 408 MHz")

        # All-core work on both; wait for each to throttle (a cooling state above 0).
        env = dict(os.environ)
        work = [subprocess.Popen([simload, "--root", r, "--cpu", "all=100"], env=env)
                for r in (ra, rb)]
        tops = {}
        for name, board in (("A", a), ("B", b)):
            state = wait_for(lambda board=board: (lambda x: x["cooling/cpufreq-cpu4"] > 0 and
                                                  x)(board.latest()), 60, 0.2)
            tap.ok(state, "board %s throttles under all-core work" % name)
            # The highest clock the board recorded (its first loaded cycles, before the cap).
            clocks = export_series(thermlog, board.db, ["cpufreq/policy4"], "-10m")
            tops[name] = max(v for _, v in clocks["cpufreq/policy4"])
            if state:
                tap.ok(state[ZONE] > 58 and state["cpufreq/policy0"] == 1800000000,
                       "%s: bigcore0 %.1f C at its trip, the little cores at 1800 MHz" %
                       (name, state[ZONE]))
        tap.ok(tops["A"] == 2400000000, "A's big cores reach 2400 MHz (%s)" % tops["A"])
        tap.ok(tops["B"] == 2304000000, "B's hold their binned 2304 MHz (%s)" % tops["B"])
        for p in work:
            p.terminate()
            p.wait(10)
        tap.ok(all(p.returncode == 128 + 15 for p in work), "the work ends on SIGTERM")
        tap.ok(wait_for(lambda: not os.listdir(os.path.join(ra, "sim", "work")), 30, 0.2),
               "its declaration is gone once the board has counted it")
        # Left alone, both cool back to within a TSADC step of idle, the caps lifted.
        for name, board, idle in (("A", a, idle_a), ("B", b, idle_b)):
            back = wait_for(lambda: (lambda x: x[ZONE] <= idle + 1.0 and
                                     x["cooling/cpufreq-cpu4"] == 0 and x)(board.latest()),
                            90, 0.2)
            tap.ok(back, "board %s cools back to idle" % name)


if __name__ == "__main__":
    main(run)
