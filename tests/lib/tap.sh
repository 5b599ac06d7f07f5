# TAP for the shell tests, as tests/lib/thermlog_test.py's Tap does for the Python ones:
#   . "$(dirname "$0")/../lib/tap.sh"
#   check STATUS DESCRIPTION [DETAIL]   (DETAIL shown on failure, its first lines and its end)
#   tap_done                            (the plan; exits 1 when a check failed)
n=0
failed=0
check() {
	n=$((n + 1))
	if [ "$1" -eq 0 ]; then
		echo "ok $n - $2"
		return 0
	fi
	echo "not ok $n - $2"
	failed=1
	[ -n "${3:-}" ] || return 0
	printf '%s\n' "$3" | awk '{ line[NR] = $0 }
		END { for (i = 1; i <= NR; i++)
			if (NR <= 20 || i <= 6 || i > NR - 14) print "#   " line[i]
			else if (i == 7) print "#   ... (" NR - 20 " lines left out)" }'
}
tap_done() {
	echo "1..$n"
	exit $failed
}
