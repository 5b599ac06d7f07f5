#!/usr/bin/env bash
# The unit's sandbox: systemd-analyze security --offline=true must report an exposure of 1.5 or
# lower, and the unit must still let the daemon read /sys and /etc and write its database.
# Usage: test-security.sh BUILT_UNIT SYSUSERS_FILE
set -uo pipefail
unit=$1
sysusers=$(realpath "$2")
n=0
failed=0
check() { # condition-status, description
	n=$((n + 1))
	if [ "$1" -eq 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; failed=$((failed + 1)); fi
}

out=$(systemd-analyze security --offline=true "$unit" 2>&1)
level=$(printf '%s\n' "$out" | sed -n 's/.*Overall exposure level for [^:]*: \([0-9.]*\).*/\1/p')
echo "# exposure: ${level:-none}"
[ -n "$level" ]
check $? "systemd-analyze security reports an exposure level"
awk -v l="${level:-99}" 'BEGIN { exit !(l <= 1.5) }'
check $? "exposure ${level:-?} <= 1.5"
systemd-analyze security --offline=true --threshold=15 "$unit" >/dev/null 2>&1
check $? "and --threshold=15 agrees"

value() { sed -n "s/^$1=//p" "$unit" | tail -1; }
[ "$(value Type)" = notify ] && [ "$(value NotifyAccess)" = main ] && [ -n "$(value WatchdogSec)" ]
check $? "Type=notify, NotifyAccess=main, WatchdogSec="
[ "$(value User)" = thermlog ] && [ "$(value Group)" = thermlog ]
check $? "runs as user and group thermlog"
[ "$(value StateDirectory)" = thermlog ] && [ "$(value StateDirectoryMode)" = 0750 ] &&
	[ "$(value UMask)" = 0027 ]
check $? "state directory 0750 and umask 0027: database 0640, readable by group thermlog"
[ "$(value ConfigurationDirectory)" = thermlog ]
check $? "ConfigurationDirectory=thermlog"
# ProtectSystem=strict keeps /sys and /etc readable; nothing may hide them.
! grep -Eq '^(InaccessiblePaths|TemporaryFileSystem|TemporaryFilesystem)=.*(/sys|/etc)' "$unit"
check $? "/sys and /etc/sensors3.conf stay readable"
! grep -Eq '^ProtectClock=yes' "$unit" && grep -q '^SystemCallFilter=.*adjtimex' "$unit"
check $? "read-only adjtimex() stays allowed for the clock state"
grep -q '^RestrictAddressFamilies=.*AF_UNIX' "$unit"
check $? "AF_UNIX allowed for sd_notify"
# The sysusers.d entry creates the user and group the unit runs as.
root=$(mktemp -d)
mkdir "$root/etc" && touch "$root/etc/passwd" "$root/etc/group" "$root/etc/shadow" "$root/etc/gshadow"
systemd-sysusers --root="$root" "$sysusers" >/dev/null 2>&1 &&
	grep -q '^thermlog:x:[0-9]*:[0-9]*:.*:/usr/sbin/nologin$' "$root/etc/passwd" &&
	grep -q '^thermlog:x:' "$root/etc/group"
check $? "systemd-sysusers creates user and group thermlog"
rm -rf "$root"
echo "1..$n"
[ $failed -eq 0 ]
