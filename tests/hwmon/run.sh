#!/bin/bash
# The libsensors source against fixture chips: libsensors only reads the real /sys, so this runs
# `thermlog sample --json` in a private mount namespace with a tmpfs on /sys/class holding
# tests/fixtures/hwmon (statfs("/sys") stays sysfs), and labels from a sensors.d file.
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
channels:
  hwmon/pwmfan-isa-0000/fan1:
    label: Case fan
EOF
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
EOF

/usr/bin/python3 - "$tmp" <<'EOF'
import json, os, sys
tmp = sys.argv[1]
doc = json.load(open(os.path.join(tmp, "out.json")))
err = open(os.path.join(tmp, "err.txt")).read()
labels_from_conf = os.path.isdir("/etc/sensors.d")
H = "/sys/class/"
want = [
    ("hwmon/soc_thermal-virtual-0/temp1", "temp1", "temperature", "celsius", 43.461,
     H + "hwmon/hwmon0/temp1_input"),
    ("hwmon/bigcore0_thermal-virtual-0/temp1", "temp1", "temperature", "celsius", 44.384,
     H + "hwmon/hwmon1/temp1_input"),
    ("hwmon/nvme-pci-0100/temp1", "Composite", "temperature", "celsius", 38.85,
     H + "hwmon/hwmon2/temp1_input"),
    ("hwmon/nvme-pci-0100/temp2", "Sensor 1", "temperature", "celsius", 41.85,
     H + "hwmon/hwmon2/temp2_input"),
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
    ("hwmon/pwmfan-isa-0000/fan1", "Case fan", "fan", "rpm", 2650,
     H + "hwmon/hwmon5/fan1_input"),
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
check(len(doc["channels"]) == len(want), f"{len(want)} hwmon channels",
      "\n".join(got) + "\n" + err)
for key, label, kind, unit, value, path in want:
    c = got.get(key)
    expect = {"key": key, "source": "hwmon", "label": label, "kind": kind, "unit": unit,
              "value": value, "path": path}
    check(c is not None and all(abs(c[k] - v) < 1e-9 if k == "value" else c[k] == v
                                for k, v in expect.items()) and "error" not in c,
          f"{key}: {label} = {value} {unit}", f"want {expect}\ngot  {c}")
table = open(os.path.join(tmp, "out.txt")).read()
check("Case fan" in table and "2650 rpm" in table and "6.265 W" in table,
      "the table shows hwmon values with units", table)
check("error" not in err.lower(), "no errors logged", err)
print(f"1..{n}")
sys.exit(1 if failed else 0)
EOF
