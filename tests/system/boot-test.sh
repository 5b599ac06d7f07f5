#!/usr/bin/env bash
# The Debian package under a real systemd: boots a minimal Debian root (debootstrap, cached) as
# a container with systemd as PID 1 (systemd-nspawn -b, private network), installs the package
# with dpkg and checks what a user of the package relies on: the service reaches active
# (running) through Type=notify, user thermlog owns /var/lib/thermlog, the hardened unit still
# serves HTTP on loopback, stores cycles, keeps the watchdog fed, reloads on `systemctl
# reload`, stops cleanly, a member of group thermlog can run `thermlog stats`, the unit's
# `systemd-analyze security` exposure is <= 1.5, remove keeps the database and purge deletes it.
# Runs as root (scripts/test --system). TAP output.
# usage: boot-test.sh PACKAGE.deb [CACHE_DIR]
set -uo pipefail
deb=$(readlink -f "$1")
cache=${2:-/var/cache/thermlog-systest}
suite=bookworm
# The container needs the package's run-time libraries (dpkg -i has no network there), curl
# for the HTTP checks and systemd as init.
include=systemd,systemd-sysv,dbus,libsensors5,libsqlite3-0,libyaml-0-2,libmicrohttpd12,curl,procps

n=0
failed=0
ok() { # status, description, detail...
	local st=$1 what=$2
	shift 2
	n=$((n + 1))
	if [ "$st" -eq 0 ]; then
		echo "ok $n - $what"
	else
		echo "not ok $n - $what"
		failed=1
		[ $# -gt 0 ] && printf '%s\n' "$@" | tail -30 | sed 's/^/#   /'
	fi
	return "$st"
}
bail() {
	echo "not ok $((n + 1)) - $*"
	echo "1..$((n + 1))"
	exit 1
}

[ "$(id -u)" -eq 0 ] || bail "needs root (debootstrap, systemd-nspawn)"
[ -f "$deb" ] || bail "no package $1 (scripts/package --arch amd64)"
for tool in debootstrap systemd-nspawn nsenter; do
	command -v $tool >/dev/null || bail "$tool is not installed"
done

# The root is made once per package list and reused: debootstrap takes minutes, a copy seconds.
key=$(printf '%s %s' "$suite" "$include" | sha1sum | cut -c1-12)
base=$cache/$suite-$key
if [ ! -x "$base/lib/systemd/systemd" ]; then
	# The mirror this machine's apt uses (Debian hosts only are reachable).
	mirror=$(sed -n 's/^URIs: *\(http[^ ]*debian\)\/*$/\1/p; s/^deb  *\(\[[^]]*\] *\)\{0,1\}\(http[^ ]*debian\)\/* .*/\2/p' \
		/etc/apt/sources.list /etc/apt/sources.list.d/* 2>/dev/null | grep -v security | head -1)
	mirror=${mirror:-http://deb.debian.org/debian}
	echo "# debootstrap $suite from $mirror into $base (once; minutes)"
	mkdir -p "$cache"
	rm -rf "$base.tmp"
	debootstrap --variant=minbase --include="$include" "$suite" "$base.tmp" "$mirror" \
		>"$cache/debootstrap.log" 2>&1 || bail "debootstrap failed: $(tail -3 "$cache/debootstrap.log")"
	mv "$base.tmp" "$base"
fi

work=$(mktemp -d /var/tmp/thermlog-systest.XXXXXX)
root=$work/root
nspawn_pid=
cleanup() {
	if [ -n "$nspawn_pid" ] && kill -0 "$nspawn_pid" 2>/dev/null; then
		kill "$nspawn_pid" 2>/dev/null
		for _ in $(seq 1 50); do
			kill -0 "$nspawn_pid" 2>/dev/null || break
			sleep 0.2
		done
		kill -9 "$nspawn_pid" 2>/dev/null
	fi
	rm -rf "$work"
}
trap cleanup EXIT
cp -a --reflink=auto "$base" "$root" || bail "could not copy the cached root"
cp "$deb" "$root/root/thermlog.deb"
# A board's sysfs for the second half (this machine's /sys may have no sensors at all).
mkdir -p "$root/srv"
cp -a "$(dirname "$0")/../fixtures/rock5c" "$root/srv/sysfs-rock5c"
echo thermlog-test >"$root/etc/hostname"

SECONDS=0
systemd-nspawn --register=no --keep-unit --console=pipe --private-network -b -D "$root" \
	>"$work/console.log" 2>&1 </dev/null &
nspawn_pid=$!

# The container's init: the systemd process that nspawn started.
init=
for _ in $(seq 1 100); do
	for p in $(pgrep -P "$nspawn_pid"); do
		[ "$(cat /proc/$p/comm 2>/dev/null)" = systemd ] && init=$p
	done
	[ -n "$init" ] && break
	kill -0 "$nspawn_pid" 2>/dev/null || break
	sleep 0.1
done
[ -n "$init" ] || bail "systemd-nspawn started no systemd: $(tail -5 "$work/console.log")"
ct() { nsenter -t "$init" -a "$@"; }

# /tmp is a tmpfs in the booted container, hence /root for the package.
# Until systemd's bus is up, systemctl cannot connect; then --wait waits for the boot to end.
for _ in $(seq 1 240); do
	state=$(ct systemctl is-system-running --wait 2>&1)
	case $state in running | degraded | maintenance | stopping | offline) break ;; esac
	sleep 0.5
done
[ "$state" = running ]
ok $? "systemd boots in the container: $state (${SECONDS} s)" "$(ct systemctl --failed --no-legend 2>&1)" \
	"$(tail -20 "$work/console.log")"
[ "$state" = running ] || [ "$state" = degraded ] || bail "the container did not boot"

out=$(ct dpkg -i /root/thermlog.deb 2>&1)
ok $? "dpkg -i thermlog.deb" "$out"

# postinst: sysusers, tmpfiles, enable + start (Type=notify: start returns once READY=1).
out=$(ct systemctl show thermlogd -p Type -p ActiveState -p SubState -p UnitFileState -p MainPID 2>&1)
printf '%s\n' "$out" | grep -qx 'Type=notify' && printf '%s\n' "$out" | grep -qx 'ActiveState=active' &&
	printf '%s\n' "$out" | grep -qx 'SubState=running'
ok $? "the package started thermlogd: active (running), Type=notify" "$out" "$(ct journalctl -u thermlogd --no-pager 2>&1)"
printf '%s\n' "$out" | grep -qx 'UnitFileState=enabled'
ok $? "thermlogd.service is enabled" "$out"
pid1=$(printf '%s\n' "$out" | sed -n 's/^MainPID=//p')
out=$(ct systemctl is-enabled thermlogd.socket 2>&1)
[ "$out" = disabled ]
ok $? "thermlogd.socket ships disabled" "$out"

out=$(ct getent passwd thermlog 2>&1)
ok $? "user thermlog exists (sysusers)" "$out"
out=$(ct stat -c '%U:%G %a' /var/lib/thermlog 2>&1)
[ "$out" = "thermlog:thermlog 750" ]
ok $? "/var/lib/thermlog is thermlog:thermlog 0750 ($out)" "$out"
out=$(ct stat -c '%U:%G %a' /var/lib/thermlog/thermlog.db 2>&1)
[ "$out" = "thermlog:thermlog 640" ]
ok $? "the database is thermlog:thermlog 0640 ($out)" "$out"
out=$(ct ps -o user=,group= -p "$pid1" 2>&1)
[ "$(echo $out)" = "thermlog thermlog" ]
ok $? "thermlogd runs as thermlog:thermlog" "$out"
out=$(ct sh -c "tr '\\0' '\\n' </proc/$pid1/environ" 2>&1)
printf '%s\n' "$out" | grep -qx 'GLIBC_TUNABLES=glibc.malloc.tcache_count=0'
ok $? "thermlogd runs with glibc's per-thread malloc cache off (the unit's Environment=)" "$out"

status() { ct curl -sf --max-time 10 http://127.0.0.1:9470/api/v1/status; }
field() { # JSON path in /api/v1/status, e.g. database.cycles
	status | /usr/bin/python3 -c 'import json, sys
v = json.load(sys.stdin)
for k in sys.argv[1].split("."):
    v = v[k]
print(v)' "$1" 2>/dev/null
}
json=$(status)
ok $? "HTTP on 127.0.0.1:9470 answers /api/v1/status" "$json"
c1=$(field database.cycles)
[ "${c1:-0}" -ge 1 ] 2>/dev/null
ok $? "READY came after the first stored cycle (cycles: ${c1:-none})" "$json"
out=$(ct curl -sf --max-time 10 http://127.0.0.1:9470/ | head -c 200)
case $out in *"<html"* | *"<!doctype"* | *"<!DOCTYPE"*) st=0 ;; *) st=1 ;; esac
ok $st "the dashboard is served" "$out"
out=$(ct curl -sf --max-time 10 http://127.0.0.1:9470/metrics 2>&1)
printf '%s\n' "$out" | grep -q '^thermlog_'
ok $? "/metrics answers on loopback" "$(printf '%s\n' "$out" | head -5)"
present=$(field channels_present)
echo "# sysfs channels read through the unit's read-only view of this machine's /sys:" \
	"${present:-?} (the service runs either way)"

# SIGHUP reload via ExecReload: a shorter interval and a board's sysfs tree (ROCK 5C fixture)
# take effect in the same process.
ct sed -i -e 's/^interval: 60s$/interval: 2s/' -e 's|^sysfs_root: /sys$|sysfs_root: /srv/sysfs-rock5c|' \
	/etc/thermlog/thermlog.yaml
out=$(ct systemctl reload thermlogd 2>&1)
ok $? "systemctl reload thermlogd" "$out"
ct journalctl -u thermlogd --no-pager -n 5 | grep -q 'configuration reloaded'
ok $? "thermlogd logged the reload" "$(ct journalctl -u thermlogd --no-pager -n 20 2>&1)"

# Past WatchdogSec=30s: the watchdog is fed (no SIGABRT, no restart) and cycles keep coming.
sleep 35
out=$(ct systemctl show thermlogd -p ActiveState -p SubState -p NRestarts -p MainPID -p WatchdogUSec 2>&1)
printf '%s\n' "$out" | grep -qx 'SubState=running' && printf '%s\n' "$out" | grep -qx 'NRestarts=0' &&
	printf '%s\n' "$out" | grep -qx "MainPID=$pid1" && printf '%s\n' "$out" | grep -qx 'WatchdogUSec=30s'
ok $? "35 s later: still running, watchdog fed (WatchdogSec=30s, no restart)" "$out"
c2=$(field database.cycles)
[ "${c2:-0}" -ge $((c1 + 10)) ] 2>/dev/null
ok $? "the database grows every 2 s after the reload ($c1 -> ${c2:-none} cycles)" "$(status)"
interval=$(field interval_s)
present=$(field channels_present)
[ "$interval" = 2 ] && [ "${present:-0}" -ge 10 ] 2>/dev/null
ok $? "the reloaded configuration is in use: interval ${interval:-?} s, ${present:-?} channels" \
	"$(status)"

# A member of group thermlog reads the database without root; others cannot.
ct useradd -m -G thermlog reader >/dev/null 2>&1
out=$(ct runuser -u reader -- thermlog stats 2>&1)
ok $? "a member of group thermlog runs thermlog stats" "$out"
ct useradd -m outsider >/dev/null 2>&1
out=$(ct runuser -u outsider -- thermlog stats 2>&1)
[ $? -ne 0 ]
ok $? "a user outside group thermlog cannot read the database" "$out"

out=$(ct systemd-analyze security thermlogd.service --no-pager 2>&1)
score=$(printf '%s\n' "$out" | sed -n 's/.*Overall exposure level for thermlogd.service: \([0-9.]*\).*/\1/p')
awk -v s="${score:-99}" 'BEGIN { exit !(s <= 1.5) }'
ok $? "systemd-analyze security exposure ${score:-?} <= 1.5" "$(printf '%s\n' "$out" | tail -3)"

errors=$(ct journalctl -u thermlogd --no-pager -p err 2>&1 | grep -v '^-- ')
[ -z "$errors" ]
ok $? "no errors in thermlogd's journal" "$errors"

out=$(ct systemctl stop thermlogd 2>&1)
ok $? "systemctl stop thermlogd" "$out"
out=$(ct systemctl show thermlogd -p ActiveState -p Result -p ExecMainStatus 2>&1)
printf '%s\n' "$out" | grep -qx 'ActiveState=inactive' && printf '%s\n' "$out" | grep -qx 'Result=success' &&
	printf '%s\n' "$out" | grep -qx 'ExecMainStatus=0'
ok $? "stopped cleanly (exit 0, result success)" "$out" "$(ct journalctl -u thermlogd --no-pager -n 10 2>&1)"

out=$(ct systemctl start thermlogd 2>&1)
ok $? "started again" "$out"
out=$(ct dpkg -r thermlog 2>&1)
ok $? "dpkg -r thermlog" "$out"
out=$(ct systemctl show thermlogd -p ActiveState 2>&1)
ct test -f /var/lib/thermlog/thermlog.db && ! ct pgrep -x thermlogd >/dev/null
ok $? "remove stops the service and keeps the database" "$out"
out=$(ct dpkg --purge thermlog 2>&1)
ok $? "dpkg --purge thermlog" "$out"
! ct test -e /var/lib/thermlog && ! ct test -e /etc/thermlog/thermlog.yaml
ok $? "purge deletes /var/lib/thermlog and the configuration" "$(ct ls -la /var/lib/thermlog /etc/thermlog 2>&1)"

ct systemctl poweroff >/dev/null 2>&1
for _ in $(seq 1 100); do
	kill -0 "$nspawn_pid" 2>/dev/null || break
	sleep 0.2
done
! kill -0 "$nspawn_pid" 2>/dev/null
ok $? "the container powers off" "$(tail -5 "$work/console.log")"
wait "$nspawn_pid" 2>/dev/null
nspawn_pid=
echo "# ${SECONDS} s from boot to poweroff"
echo "1..$n"
exit $failed
