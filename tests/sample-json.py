#!/usr/bin/python3
"""thermlog sample over the sysfs fixtures: the JSON shape and values, the table, exit codes.

usage: sample-json.py THERMLOG FIXTURES_DIR
"""
import json
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
from thermlog_test import done, ok as check  # noqa: E402

thermlog, fixtures = sys.argv[1], sys.argv[2]


def run(*args):
    return subprocess.run([thermlog, "-c", empty_cfg, *args], capture_output=True, text=True,
                          timeout=30)


with tempfile.TemporaryDirectory() as tmp:
    # The fixture's /proc and debugfs stand in for the host's, so memory and load figures are
    # fixed too.
    proc = os.path.realpath(os.path.join(fixtures, "rock5c", "proc"))
    debug = os.path.realpath(os.path.join(fixtures, "rock5c", "kernel", "debug"))
    empty_cfg = os.path.join(tmp, "empty.yaml")
    with open(empty_cfg, "w") as f:
        f.write(f"procfs_root: {proc}\ndebugfs_root: {debug}\n")

    root = os.path.join(fixtures, "rock5c")
    p = run("sample", "--json", "--sysfs-root", root)
    check(p.returncode == 0, "rock5c: exit 0", p.stderr)
    doc = json.loads(p.stdout)
    # The time and the channel objects as /api/v1/latest gives them (docs/API.md)
    check(set(doc) == {"ts", "time", "channels"}, "top level has ts, time and channels",
          doc.keys())
    check(isinstance(doc["ts"], int) and doc["ts"] > 1.7e9, "ts is unix seconds", doc["ts"])
    check(re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", doc["time"]) is not None,
          "time is ISO 8601 UTC", doc["time"])
    want = [
        ("thermal/soc-thermal", "thermal", "soc-thermal", "temperature", "celsius", 43.461,
         "class/thermal/thermal_zone0/temp"),
        ("thermal/bigcore0-thermal", "thermal", "bigcore0-thermal", "temperature", "celsius",
         44.384, "class/thermal/thermal_zone1/temp"),
        ("thermal/bigcore1-thermal", "thermal", "bigcore1-thermal", "temperature", "celsius",
         43.461, "class/thermal/thermal_zone2/temp"),
        ("thermal/littlecore-thermal", "thermal", "littlecore-thermal", "temperature",
         "celsius", 42.538, "class/thermal/thermal_zone3/temp"),
        ("thermal/center-thermal", "thermal", "center-thermal", "temperature", "celsius",
         42.538, "class/thermal/thermal_zone4/temp"),
        ("thermal/gpu-thermal", "thermal", "gpu-thermal", "temperature", "celsius", 41.615,
         "class/thermal/thermal_zone5/temp"),
        ("thermal/npu-thermal", "thermal", "npu-thermal", "temperature", "celsius", 42.538,
         "class/thermal/thermal_zone6/temp"),
        ("cooling/cpufreq-cpu0", "cooling", "cpufreq-cpu0", "state", "state", 0,
         "class/thermal/cooling_device0/cur_state"),
        ("cooling/cpufreq-cpu4", "cooling", "cpufreq-cpu4", "state", "state", 0,
         "class/thermal/cooling_device1/cur_state"),
        ("cooling/cpufreq-cpu6", "cooling", "cpufreq-cpu6", "state", "state", 0,
         "class/thermal/cooling_device2/cur_state"),
        ("cooling/devfreq-fb000000.gpu", "cooling", "devfreq-fb000000.gpu", "state", "state", 0,
         "class/thermal/cooling_device3/cur_state"),
        ("cooling/pwm-fan", "cooling", "pwm-fan", "state", "state", 1,
         "class/thermal/cooling_device4/cur_state"),
        ("cpufreq/policy0", "cpufreq", "CPU 0-3", "frequency", "hertz", 1800000000,
         "devices/system/cpu/cpufreq/policy0/scaling_cur_freq"),
        ("cpufreq/policy4", "cpufreq", "CPU 4-5", "frequency", "hertz", 816000000,
         "devices/system/cpu/cpufreq/policy4/scaling_cur_freq"),
        ("cpufreq/policy6", "cpufreq", "CPU 6-7", "frequency", "hertz", 408000000,
         "devices/system/cpu/cpufreq/policy6/scaling_cur_freq"),
        ("devfreq/dmc", "devfreq", "dmc", "frequency", "hertz", 528000000,
         "class/devfreq/dmc/cur_freq"),
        ("devfreq/fb000000.gpu", "devfreq", "fb000000.gpu", "frequency", "hertz", 300000000,
         "class/devfreq/fb000000.gpu/cur_freq"),
        ("devfreq/fdab0000.npu", "devfreq", "fdab0000.npu", "frequency", "hertz", 1000000000,
         "class/devfreq/fdab0000.npu/cur_freq"),
        ("iio/maxim_thermocouple/temp", "iio", "maxim_thermocouple temp", "temperature",
         "celsius", 65.75, "bus/iio/devices/iio:device1/in_temp_raw"),
        ("iio/maxim_thermocouple/temp_ambient", "iio", "maxim_thermocouple temp_ambient",
         "temperature", "celsius", 23.5625, "bus/iio/devices/iio:device1/in_temp_ambient_raw"),
        # 3124508 kB available; swap used = SwapTotal 3963844 kB - SwapFree 3512196 kB
        ("meminfo/available", "meminfo", "memory available", "memory", "bytes", 3199496192,
         proc + "/meminfo"),
        ("meminfo/swap_used", "meminfo", "swap used", "memory", "bytes", 462487552,
         proc + "/meminfo"),
    ] + [("load/rknpu/core%d" % i, "load", "NPU core %d" % i, "load", "percent", 0,
          debug + "/rknpu/load") for i in range(3)] + [
        # Rockchip vendor devfreq: "3@300000000Hz"; the NPU's "100@1000000000Hz" is the rknpu
        # driver's constant, no load: left out
        ("load/fb000000.gpu", "load", "fb000000.gpu", "load", "percent", 3,
         "class/devfreq/fb000000.gpu/load"),
    ]
    # Rates need two reads: a single sample has none (null with its reason, never 0).
    rates = [("meminfo/swap_in", "swap in", "meminfo", "other", "pages_per_second", "vmstat"),
             ("meminfo/swap_out", "swap out", "meminfo", "other", "pages_per_second", "vmstat"),
             ("load/cpu", "all CPUs", "load", "load", "percent", "stat")] + [
        ("load/cpu%d" % i, "cpu%d" % i, "load", "load", "percent", "stat") for i in range(8)]
    got = [c for c in doc["channels"] if c["key"] not in [r[0] for r in rates]]
    for key, label, source, kind, unit, file in rates:
        c = [c for c in doc["channels"] if c["key"] == key]
        expect = {"key": key, "source": source, "label": label, "kind": kind,
                  "unit": unit, "value": None, "path": proc + "/" + file,
                  "error": "Resource temporarily unavailable"}
        check(c == [expect], f"{key}: no rate from one read", c)
    check(len(got) == len(want), f"rock5c: {len(want)} channels", [c["key"] for c in got])
    for w, c in zip(want, got):
        key, source, label, kind, unit, value, path = w
        check(set(c) == {"key", "source", "label", "kind", "unit", "value", "error", "path"},
              f"{key}: exactly the documented fields", sorted(c))
        expect = {"key": key, "source": source, "label": label, "kind": kind, "unit": unit,
                  "value": value, "error": None,
                  "path": path if path.startswith("/") else root + "/" + path}
        check(c == expect, f"{key}: fields and value", f"want {expect}\ngot  {c}")
    # JSON text carries the shortest exact decimal, not 43.461000000000006
    check('"value":43.461,' in p.stdout, "values are printed as their shortest decimal",
          p.stdout[:300])

    # A configured ADC channel, an override, and a vanished configured device.
    cfg = os.path.join(tmp, "adc.yaml")
    with open(cfg, "w") as f:
        f.write("channels:\n  thermal/soc-thermal: {label: SoC, offset: 0.5}\n"
                "iio_channels:\n  - device: fec10000.saradc\n    channel: voltage2\n"
                "    label: C12 ambient (AD8495)\n    unit: celsius\n"
                "    linear: {gain: 200.0, offset: -250.0}\n"
                "  - device: fe720000.saradc\n    channel: voltage0\n")
    p = subprocess.run([thermlog, "sample", "--json", "-c", cfg, "--sysfs-root", root],
                       capture_output=True, text=True, timeout=30)
    check(p.returncode == 0, "configured ADC: exit 0", p.stderr)
    by_key = {c["key"]: c for c in json.loads(p.stdout)["channels"]}
    soc = by_key.get("thermal/soc-thermal", {})
    check(soc.get("label") == "SoC" and abs(soc.get("value", 0) - 43.961) < 1e-9,
          "override: label and offset", soc)
    adc = by_key.get("iio/fec10000.saradc/voltage2", {})
    check(adc.get("unit") == "celsius" and adc.get("kind") == "temperature" and
          abs(adc.get("value", 0) - 25.009765625) < 1e-9, "AD8495 on SARADC ch2: 25.01 °C", adc)
    gone = by_key.get("iio/fe720000.saradc/voltage0", {})
    check(gone.get("value", 0) is None and gone.get("error") == "No such device",
          "configured but absent device: null with its error", gone)

    p = run("sample", "--json", "--sysfs-root", os.path.join(fixtures, "broken"))
    check(p.returncode == 0, "broken: still exit 0", p.stderr)
    by_key = {c["key"]: c for c in json.loads(p.stdout)["channels"]}
    errors = {
        "thermal/soc-thermal": "Bad message",
        "thermal/bigcore0-thermal": "No data available",
        "thermal/center-thermal": "No data available",
        "thermal/gpu-thermal": "Is a directory",
        "thermal/pmic-thermal": "Numerical result out of range",
        "cooling/pwm-fan": "No data available",
        "devfreq/fb000000.gpu": "Bad message",
        "iio/maxim_thermocouple/temp": "Is a directory",
    }
    for key, err in errors.items():
        c = by_key.get(key, {})
        check(c.get("value", 0) is None and c.get("error") == err, f"broken: {key} is null, {err}",
              c)
    check(by_key.get("thermal/littlecore-thermal", {}).get("value") == -12.5,
          "broken: negative temperature", by_key.get("thermal/littlecore-thermal"))
    check(all(c["error"] is None for c in by_key.values() if c["value"] is not None),
          "error null when there is a value")

    p = run("sample", "--sysfs-root", os.path.join(fixtures, "x86"))
    check(p.returncode == 0, "x86 table: exit 0", p.stderr)
    lines = p.stdout.splitlines()
    check(lines and lines[0].split() == ["KEY", "LABEL", "VALUE", "ERROR"], "table header",
          p.stdout)
    row = [line for line in lines if line.startswith("thermal/acpitz#2 ")]
    check(len(row) == 1 and row[0].split()[1:] == ["acpitz", "29.8", "°C"],
          "table row: key, label, value with unit", row)
    check(any(line.split()[0] == "cpufreq/policy2" and "3900.012 MHz" in line for line in lines),
          "frequencies in MHz", p.stdout)
    value_col = {line.index("°C") for line in lines if "°C" in line}
    check(len(value_col) == 1, "values are aligned", p.stdout)

    p = run("sample", "--sysfs-root", os.path.join(tmp, "no-such-dir"))
    check(p.returncode == 2 and "no-such-dir" in p.stderr, "missing sysfs root: exit 2, named",
          p.stderr)
    p = run("sample", "--bogus")
    check(p.returncode == 2, "unknown option: exit 2", p.stderr)
    p = subprocess.run([thermlog, "sample", "-c", os.path.join(tmp, "none.yaml")],
                       capture_output=True, text=True, timeout=30)
    check(p.returncode == 2, "missing config file: exit 2", p.stderr)

sys.exit(done())
