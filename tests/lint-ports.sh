#!/bin/sh
# No test may choose a port and hope it is still free when its server binds it: servers bind
# port 0 and report the port, or get a listening socket. Flags free_port() calls and
# listen/--listen values with a computed port in the test scripts.
# usage: lint-ports.sh SOURCE_ROOT   (TAP)
root=${1:-.}
cd "$root/tests" || exit 1
hits=$(grep -rnE 'free_port\(\)|listen[^0-9]*127\.0\.0\.1:(\{|%d|\$)|listen[^0-9]*0\.0\.0\.0:(\{|%d|\$)' \
	--include='*.py' --include='*.sh' . |
	grep -v -e '^\./lib/thermlog_test\.py:[0-9]*:def free_port' -e '^\./lint-ports\.sh:')
if [ -z "$hits" ]; then
	echo "ok 1 - no test picks a port number before its server binds it"
else
	echo "not ok 1 - tests pick a port and hope it stays free (bind port 0 or pass a socket):"
	printf '%s\n' "$hits" | sed 's/^/#   /'
fi
echo "1..1"
[ -z "$hits" ]
