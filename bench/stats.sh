#!/usr/bin/env bash
# Runs bench-stats over 1 month, 1 year and 3 years of one-minute samples of 25 channels and
# prints each run's figures (CPU and wall time, ratios, identical-answer checks).
# usage: bench/stats.sh [BUILD_DIR]     (default: build; the databases go to $TMPDIR or /tmp)
set -euo pipefail
build=${1:-build}
bench=$build/bench/bench-stats
[ -x "$bench" ] || { echo "no $bench: build first (ninja -C $build)" >&2; exit 2; }
tmp=${TMPDIR:-/tmp}
for days in 30 365 1095; do
	echo "=== $days days"
	"$bench" --days "$days" --channels 25 --db "$tmp/thermlog-bench-stats-$days.db"
done
