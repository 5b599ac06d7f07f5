#!/bin/bash
# The libsensors source against fixture chips: libsensors only reads the real /sys, so this runs
# `thermlog sample --json` in a private mount namespace with a tmpfs on /sys/class holding
# tests/fixtures/hwmon (statfs("/sys") stays sysfs), and labels from a sensors.d file.
# Runs: hwmon alone; with the thermal source (whose zones' hwmon mirrors are then skipped); and
# with a sensors.d file that does not parse (libsensors falls back to an empty configuration).
# usage: run.sh THERMLOG FIXTURES_DIR      (needs root, as developers and CI are)
set -euo pipefail
thermlog=$(realpath "$1")
fixtures=$(realpath "$2")

if [ "$(id -u)" -ne 0 ] || ! command -v unshare >/dev/null; then
	echo "1..0 # SKIP needs root and unshare"
	exit 0
fi

tmp=$(mktemp -d /tmp/thermlog-hwmon-XXXXXX)
trap 'rm -rf "$tmp"' EXIT

cat >"$tmp/thermlog.yaml" <<'EOF'
sysfs_root: /sys
sources:
  thermal: {enabled: false}
  cpufreq: {enabled: false}
  devfreq: {enabled: false}
  iio: {enabled: false}
  meminfo: {enabled: false}
  load: {enabled: false}
channels:
  hwmon/pwmfan-isa-0000/fan1:
    label: Case fan
EOF
sed -e '/thermal: {enabled: false}/d' "$tmp/thermlog.yaml" >"$tmp/with-thermal.yaml"
cat >"$tmp/ina219.conf" <<'EOF'
chip "ina219-*"
    label in0 "Shunt"
    label in1 "VBUS"
    label curr1 "Board current"
EOF

# Everything mounted here disappears with the namespace.
unshare -m /bin/bash -s "$thermlog" "$fixtures" "$tmp" <<'EOF'
set -euo pipefail
thermlog=$1 fixtures=$2 tmp=$3
mount --make-rprivate /
mount -t tmpfs -o mode=755 thermlog-hwmon /sys/class
cp -a "$fixtures/hwmon/." /sys/class/
mkdir -p "$tmp/sensors.d"
cp "$tmp/ina219.conf" "$tmp/sensors.d/"
if [ -d /etc/sensors.d ]; then
	mount --bind "$tmp/sensors.d" /etc/sensors.d
fi
"$thermlog" -c "$tmp/thermlog.yaml" sample --json >"$tmp/out.json" 2>"$tmp/err.txt"
"$thermlog" -c "$tmp/thermlog.yaml" sample >"$tmp/out.txt" 2>>"$tmp/err.txt"
"$thermlog" -c "$tmp/with-thermal.yaml" sample --json >"$tmp/thermal.json" 2>"$tmp/thermal.err"
if [ -d /etc/sensors.d ]; then
	# a section for an I2C bus this board does not have: sensors_init() fails on it
	printf 'chip "lm75-i2c-9-*"\n    label temp1 "Inlet"\n' >"$tmp/sensors.d/broken.conf"
	"$thermlog" -c "$tmp/thermlog.yaml" sample --json >"$tmp/fallback.json" 2>"$tmp/fallback.err"
fi
EOF

/usr/bin/python3 - "$tmp" <<'EOF'
import json, os, sys
tmp = sys.argv[1]
doc = json.load(open(os.path.join(tmp, "out.json")))
err = open(os.path.join(tmp, "err.txt")).read()
labels_from_conf = os.path.isdir("/etc/sensors.d")
H = "/sys/class/"
want = [
    ("hwmon/bigcore0_thermal-virtual-0/temp1", "temp1", "temperature", "celsius", 44.384,
     H + "hwmon/hwmon1/temp1_input"),
    ("hwmon/coretemp-isa-0000/temp1", "Package id 0", "temperature", "celsius", 52,
     H + "hwmon/hwmon3/temp1_input"),
    ("hwmon/coretemp-isa-0000/temp2", "Core 0", "temperature", "celsius", 49,
     H + "hwmon/hwmon3/temp2_input"),
    ("hwmon/coretemp-isa-0000/temp3", "Core 1", "temperature", "celsius", 51,
     H + "hwmon/hwmon3/temp3_input"),
    ("hwmon/ina219-i2c-1-40/in0", "Shunt" if labels_from_conf else "in0", "voltage", "volts",
     0.012, H + "hwmon/hwmon4/in0_input"),
    ("hwmon/ina219-i2c-1-40/in1", "VBUS" if labels_from_conf else "in1", "voltage", "volts",
     5.012, H + "hwmon/hwmon4/in1_input"),
    ("hwmon/ina219-i2c-1-40/power1", "power1", "power", "watts", 6.265,
     H + "hwmon/hwmon4/power1_input"),
    ("hwmon/ina219-i2c-1-40/curr1", "Board current" if labels_from_conf else "curr1", "current",
     "amperes", 1.25, H + "hwmon/hwmon4/curr1_input"),
    ("hwmon/nvme-pci-0100/temp1", "Composite", "temperature", "celsius", 38.85,
     H + "hwmon/hwmon2/temp1_input"),
    ("hwmon/nvme-pci-0100/temp2", "Sensor 1", "temperature", "celsius", 41.85,
     H + "hwmon/hwmon2/temp2_input"),
    ("hwmon/pwmfan-isa-0000/fan1", "Case fan", "fan", "rpm", 2650,
     H + "hwmon/hwmon5/fan1_input"),
    ("hwmon/soc_thermal-virtual-0/temp1", "temp1", "temperature", "celsius", 43.461,
     H + "hwmon/hwmon0/temp1_input"),
]
n = failed = 0
def check(cond, what, detail=""):
    global n, failed
    n += 1
    print(("ok" if cond else "not ok") + f" {n} - {what}")
    if not cond:
        failed += 1
        for line in str(detail).splitlines():
            print("#   " + line)
got = {c["key"]: c for c in doc["channels"]}
check([c["key"] for c in doc["channels"]] == [w[0] for w in want],
      f"{len(want)} hwmon channels, listed by chip name", "\n".join(got) + "\n" + err)
for key, label, kind, unit, value, path in want:
    c = got.get(key)
    expect = {"key": key, "source": "hwmon", "label": label, "kind": kind, "unit": unit,
              "value": value, "path": path}
    check(c is not None and all(abs(c[k] - v) < 1e-9 if k == "value" else c[k] == v
                                for k, v in expect.items()) and c.get("error", 0) is None,
          f"{key}: {label} = {value} {unit}", f"want {expect}\ngot  {c}")
table = open(os.path.join(tmp, "out.txt")).read()
check("Case fan" in table and "2650 rpm" in table and "6.265 W" in table,
      "the table shows hwmon values with units", table)
check("error" not in err.lower(), "no errors logged", err)

# With the thermal source on, zones are read once: as thermal/<type>, not again as their mirrors.
doc = json.load(open(os.path.join(tmp, "thermal.json")))
keys = [c["key"] for c in doc["channels"]]
mirrors = {"hwmon/soc_thermal-virtual-0/temp1", "hwmon/bigcore0_thermal-virtual-0/temp1"}
check(keys[:2] == ["thermal/soc-thermal", "thermal/bigcore0-thermal"],
      "thermal zones under /sys are read", keys)
check([c["value"] for c in doc["channels"][:2]] == [43.461, 44.384], "zone values",
      doc["channels"][:2])
check(keys[2:] == [w[0] for w in want if w[0] not in mirrors],
      "hwmon mirrors of those zones are skipped, the other chips stay", keys)

if labels_from_conf:
    doc = json.load(open(os.path.join(tmp, "fallback.json")))
    ferr = open(os.path.join(tmp, "fallback.err")).read()
    got = {c["key"]: c for c in doc["channels"]}
    check(len(got) == len(want) and all(c["value"] is not None for c in got.values()),
          "a sensors.conf that does not parse: every chip is still read", ferr)
    check(got.get("hwmon/ina219-i2c-1-40/in1", {}).get("label") == "in1" and
          got.get("hwmon/nvme-pci-0100/temp1", {}).get("label") == "Composite",
          "labels then come from the chips only", got.get("hwmon/ina219-i2c-1-40/in1"))
    check("broken.conf:1: Undeclared bus id referenced" in ferr and
          "labels from the chips only" in ferr,
          "the parse error and the fallback are logged", ferr)
print(f"1..{n}")
sys.exit(1 if failed else 0)
EOF
