#!/usr/bin/env bash
# thermlog check-config: output and exit status for valid, invalid and missing files, with the
# file given as an argument or through -c before or after the command.
# The whole-configuration rules (token, TLS files) give the same verdict in thermlog
# check-config, thermlogd --check-config and at the daemon's start.
# usage: check-config.sh THERMLOG SOURCE_ROOT THERMLOGD
set -u
thermlog=$1
root=$2
thermlogd=$3
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

# Configurations the parser accepts key by key but the daemon cannot run with: every path
# says so with the same message and exit status 2 (a configuration error).
policy() { # name, yaml, message
	printf '%s' "$2" >"$tmp/$1.yaml"
	local want="$tmp/$1.yaml:$3"
	check "$1: check-config refuses" 2 "" "$want" "$thermlog" check-config "$tmp/$1.yaml"
	refused "$1: thermlogd --check-config refuses" "$want" "$thermlogd" --check-config -c "$tmp/$1.yaml"
	# The daemon refuses before it opens the database or binds a port.
	refused "$1: the daemon refuses to start" "$want" timeout 20 "$thermlogd" -c "$tmp/$1.yaml" \
		--db "$tmp/$1.db" --sysfs-root "$root/tests/fixtures/rock5c"
	[ ! -e "$tmp/$1.db" ] || echo "# $1: the daemon created its database before refusing"
}
refused() { # what, message, command...: status 2 and the message among the daemon's log lines
	local what=$1 want=$2
	shift 2
	n=$((n + 1))
	"$@" >"$tmp/out" 2>"$tmp/err"
	local rc=$?
	if [ "$rc" = 2 ] && grep -qxF -- "error:   $want" "$tmp/err" && [ ! -s "$tmp/out" ]; then
		echo "ok $n - $what"
	else
		failed=$((failed + 1))
		echo "not ok $n - $what"
		echo "#   want status 2 and 'error:   $want'; got status $rc, stdout '$(cat "$tmp/out")', stderr:"
		sed 's/^/#   /' "$tmp/err"
	fi
}
printf 'short-token\n' >"$tmp/short.token"
printf '0123456789abcdef-good\n' >"$tmp/good.token"
printf -- '-----BEGIN CERTIFICATE-----\n' >"$tmp/cert.pem"
policy no-token 'http:
  listen: 0.0.0.0:9
' "2:11: http.listen: '0.0.0.0:9' is not a loopback address, so a token is required: set http.token or http.token_file (or listen on 127.0.0.1 behind an SSH tunnel or a reverse proxy)"
policy short-token 'http:
  listen: 127.0.0.1:9
  token: abc123
' "3:10: http.token: the token has 6 characters, at least 16 are required (e.g. \`openssl rand -hex 32\`)"
policy short-token-file "http:
  listen: 127.0.0.1:9
  token_file: $tmp/short.token
" "3:15: http.token_file: the token has 11 characters, at least 16 are required (e.g. \`openssl rand -hex 32\`)"
policy missing-token-file "http:
  listen: 0.0.0.0:9
  token_file: $tmp/none.token
" "3:15: http.token_file: cannot read '$tmp/none.token': No such file or directory"
policy missing-tls-cert "http:
  listen: 127.0.0.1:9
  token_file: $tmp/good.token
  tls_cert: $tmp/none.pem
  tls_key: $tmp/cert.pem
" "4:13: http.tls_cert: cannot read '$tmp/none.pem': No such file or directory"
policy missing-tls-key "http:
  listen: 127.0.0.1:9
  tls_cert: $tmp/cert.pem
  tls_key: $tmp/none.key
" "4:12: http.tls_key: cannot read '$tmp/none.key': No such file or directory"
printf 'http:\n  listen: 0.0.0.0:9470\n  token_file: %s\n' "$tmp/good.token" >"$tmp/fine.yaml"
check "a token file of 21 characters off loopback is fine" 0 "configuration OK" "" \
	"$thermlog" check-config "$tmp/fine.yaml"

# runs: the socket path and the fast interval are checked where they are written.
printf 'runs:\n  socket: thermlog.sock\n  interval: 500ms\n' >"$tmp/runs.yaml"
runs_err="$tmp/runs.yaml:2:11: socket: expected an absolute path of at most 107 bytes, got 'thermlog.sock'
$tmp/runs.yaml:3:13: interval: '500ms' is below the minimum of 1s"
check "bad runs keys are named by line (thermlog)" 2 "" "$runs_err" \
	"$thermlog" check-config "$tmp/runs.yaml"
check "bad runs keys are named by line (thermlogd)" 2 "" "error: configuration rejected:
$(printf '%s\n' "$runs_err" | sed 's/^/error:   /')" \
	"$thermlogd" --check-config -c "$tmp/runs.yaml"

# A capacitor's in_service before 1990 (a typo?) or in the future is a warning, not an error.
printf 'capacitors:\n  - {name: a, sensor: s, rated_life_h: 1, rated_temp_c: 105, in_service: 1925-06-01}\n' \
	>"$tmp/dates.yaml"
dates_warn="warning: $tmp/dates.yaml:2:74: capacitor 'a': in_service 1925-06-01 is before 1990: if the year is a typo, the part's age and its calendar cap are wrong"
check "in_service before 1990 is a warning (thermlog)" 0 "configuration OK" "$dates_warn" \
	"$thermlog" check-config "$tmp/dates.yaml"
check "in_service before 1990 is a warning (thermlogd)" 0 "configuration OK" "$dates_warn" \
	"$thermlogd" --check-config -c "$tmp/dates.yaml"

echo "1..$n"
[ "$failed" -eq 0 ]
