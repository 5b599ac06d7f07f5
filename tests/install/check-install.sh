#!/bin/sh
# meson install puts each file where the programs look for it: the configuration path compiled
# into thermlog and thermlogd (meson's sysconfdir), the unit's ExecStart, the sysusers.d and
# tmpfiles.d entries, the man pages. Installs into a DESTDIR under a temp dir.
# usage: check-install.sh BUILD_DIR   (TAP)
build=$1
tmp=$(mktemp -d "${TMPDIR:-/tmp}/thermlog-install.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
n=0
failed=0
check() { # condition-status, description, detail
	n=$((n + 1))
	if [ "$1" -eq 0 ]; then
		echo "ok $n - $2"
	else
		echo "not ok $n - $2"
		[ -n "$3" ] && printf '%s\n' "$3" | sed 's/^/#   /'
		failed=1
	fi
}

out=$(meson install -C "$build" --no-rebuild --destdir "$tmp/root" 2>&1)
check $? "meson install --destdir" "$out"
files=$(cd "$tmp/root" && find . -type f -o -type l | sed 's/^\.//' | sort)

printf '%s\n' "$files" | grep -q '/bin/thermlog$'
check $? "thermlog is installed" "$files"
daemon=$(printf '%s\n' "$files" | grep '/bin/thermlogd$')
check $? "thermlogd is installed" "$files"

# The path the programs read: thermlog names it in --help, thermlogd in --help as well.
cli_conf=$("$build/src/thermlog" --help 2>&1 | sed -n 's/.*--config FILE.*(default \([^)]*\)).*/\1/p')
daemon_help=$("$build/src/thermlogd" --help 2>&1)
case $daemon_help in
*"$cli_conf"*) same=0 ;;
*) same=1 ;;
esac
check $same "thermlogd and thermlog read the same configuration path ($cli_conf)" "$daemon_help"
[ -n "$cli_conf" ] && [ -f "$tmp/root$cli_conf" ]
check $? "the default configuration is installed where the programs read it ($cli_conf)" "$files"

unit=$(printf '%s\n' "$files" | grep '/thermlogd\.service$')
check $? "thermlogd.service is installed" "$files"
exec_start=$(sed -n 's/^ExecStart=//p' "$tmp/root$unit" 2>/dev/null)
[ -n "$exec_start" ] && [ "${exec_start%% *}" = "$daemon" ]
check $? "ExecStart=$exec_start is the installed thermlogd ($daemon)"
# debugfs is root only: the NPU's and RGA's load files, read-only, where --debugfs-root points
[ "${exec_start#* }" = "--debugfs-root /run/thermlog/debugfs" ] &&
	grep -qx 'BindReadOnlyPaths=-/sys/kernel/debug/rknpu/load:/run/thermlog/debugfs/rknpu/load' "$tmp/root$unit" &&
	grep -qx 'BindReadOnlyPaths=-/sys/kernel/debug/rkrga/load:/run/thermlog/debugfs/rkrga/load' "$tmp/root$unit" &&
	[ "$(grep -c '^BindReadOnlyPaths=\|^BindPaths=' "$tmp/root$unit")" = 2 ]
check $? "the unit binds exactly rknpu/load and rkrga/load read-only where --debugfs-root reads" \
	"$(grep -n 'Bind\|ExecStart' "$tmp/root$unit")"
[ -n "$unit" ] && grep -q "^# Configuration $cli_conf," "$tmp/root$unit"
check $? "the unit names the configuration path" "$(grep '^# Configuration' "$tmp/root$unit" 2>/dev/null)"

printf '%s\n' "$files" | grep -q '/sysusers\.d/thermlog\.conf$'
check $? "sysusers.d entry for user thermlog" "$files"
tmpfiles=$(printf '%s\n' "$files" | grep '/tmpfiles\.d/thermlog\.conf$')
check $? "tmpfiles.d entry" "$files"
[ -n "$tmpfiles" ] && grep -q '^d /var/lib/thermlog 0750 thermlog thermlog' "$tmp/root$tmpfiles"
check $? "tmpfiles.d creates /var/lib/thermlog 0750 thermlog:thermlog" "$(cat "$tmp/root$tmpfiles" 2>/dev/null)"
for page in man1/thermlog.1 man5/thermlog.yaml.5 man5/thermlog-campaign.5 man8/thermlogd.8; do
	m=$(printf '%s\n' "$files" | grep "/man/$page\$")
	check $? "man page $page" "$files"
	[ -n "$m" ] && grep -q "$cli_conf" "$tmp/root$m"
	check $? "$page names $cli_conf" ""
done
echo "1..$n"
exit $failed
