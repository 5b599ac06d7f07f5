#!/usr/bin/env bash
# The system's thermlog paths, which no test may touch: every daemon a test starts keeps its
# socket, database and state in its own scratch directory.
#   scripts/system-paths.sh snapshot FILE       records what is there now
#   scripts/system-paths.sh check FILE RESULTS  compares with FILE, writes one result line
#                                                (count-tests.py JSON) to RESULTS, exits 1 on a change
set -uo pipefail
PATHS=(/run/thermlog /var/lib/thermlog /etc/thermlog)

list() {
	local p
	for p in "${PATHS[@]}"; do
		if [ -e "$p" ]; then
			find "$p" -printf '%p %y %s %T@\n' 2>/dev/null | sort
		else
			echo "$p absent"
		fi
	done
}

case ${1:-} in
snapshot)
	list >"$2"
	;;
check)
	now=$(mktemp)
	list >"$now"
	name="system paths / no test created or changed anything under ${PATHS[*]}"
	if diff -u "$2" "$now" >"$now.diff"; then
		printf '{"name": "%s", "result": "OK"}\n' "$name" >"$3"
		rc=0
	else
		echo "scripts/system-paths.sh: the tests changed system paths:" >&2
		cat "$now.diff" >&2
		printf '{"name": "%s", "result": "FAIL"}\n' "$name" >"$3"
		rc=1
	fi
	rm -f "$now" "$now.diff"
	exit $rc
	;;
*)
	echo "usage: scripts/system-paths.sh snapshot FILE | check FILE RESULTS" >&2
	exit 2
	;;
esac
