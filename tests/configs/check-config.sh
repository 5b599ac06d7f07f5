#!/usr/bin/env bash
# thermlog check-config: output and exit status for valid, invalid and missing files, with the
# file given as an argument or through -c before or after the command.
# usage: check-config.sh THERMLOG SOURCE_ROOT
set -u
thermlog=$1
root=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
n=0 failed=0

check() { # what, want_status, want_stdout, want_stderr, command...
	local what=$1 want_rc=$2 want_out=$3 want_err=$4
	shift 4
	n=$((n + 1))
	"$@" >"$tmp/out" 2>"$tmp/err"
	local rc=$?
	if [ "$rc" = "$want_rc" ] && [ "$(cat "$tmp/out")" = "$want_out" ] &&
		[ "$(cat "$tmp/err")" = "$want_err" ]; then
		echo "ok $n - $what"
	else
		failed=$((failed + 1))
		echo "not ok $n - $what"
		echo "#   want status $want_rc, stdout '$want_out', stderr '$want_err'"
		echo "#   got  status $rc, stdout '$(cat "$tmp/out")', stderr '$(cat "$tmp/err")'"
	fi
}

printf 'interval: 500ms\nhttp:\n  listen: 127.0.0.1\n' >"$tmp/bad.yaml"
bad_err="$tmp/bad.yaml:1:11: interval: '500ms' is below the minimum of 1s
$tmp/bad.yaml:3:11: listen: '127.0.0.1': expected ADDRESS:PORT, e.g. 127.0.0.1:9470"

check "the shipped example is valid" 0 "configuration OK" "" \
	"$thermlog" check-config "$root/etc/thermlog.yaml"
check "-c before the command" 0 "configuration OK" "" \
	"$thermlog" -c "$root/etc/thermlog.yaml" check-config
check "-c after the command" 0 "configuration OK" "" \
	"$thermlog" check-config --config "$root/etc/thermlog.yaml"
check "every error, exit 2" 2 "" "$bad_err" "$thermlog" check-config "$tmp/bad.yaml"
check "the argument wins over -c" 2 "" "$bad_err" \
	"$thermlog" -c "$root/etc/thermlog.yaml" check-config "$tmp/bad.yaml"
check "missing file, exit 2" 2 "" \
	"$tmp/none.yaml:1:1: could not read the configuration: No such file or directory" \
	"$thermlog" check-config "$tmp/none.yaml"
check "two files is a usage error" 2 "" "usage: thermlog check-config [FILE]" \
	bash -c '"$1" check-config a b 2>&1 >/dev/null | head -n1 >&2; exit "${PIPESTATUS[0]}"' _ "$thermlog"

echo "1..$n"
[ "$failed" -eq 0 ]
