#!/usr/bin/env bash
# The page size of new databases, before (4 KiB) and after (2 KiB, the store's default), in one
# run: store-wear's bytes per cycle for both, then bench-lifetime (3 years) and bench-stats
# (3 years, 25 channels) on a database of each page size, alternating, with the CPU figures
# side by side.
# usage: bench/pages.sh [BUILD_DIR]     (default: build; the databases go to $TMPDIR or /tmp)
set -euo pipefail
build=${1:-build}
for b in store-wear bench-lifetime bench-stats; do
	[ -x "$build/bench/$b" ] || { echo "no $build/bench/$b: build first (ninja -C $build)" >&2; exit 2; }
done
tmp=${TMPDIR:-/tmp}
"$build/bench/store-wear"
declare -A life stats
for size in 4096 0; do
	name=$([ "$size" = 0 ] && echo 2048 || echo "$size")
	echo "=== bench-lifetime, $name-byte pages"
	out=$("$build/bench/bench-lifetime" --page-size "$size" --db "$tmp/thermlog-pages-life.db")
	echo "$out"
	life[$name]=$(sed -n 's/^thermlog lifetime --json (merged days) *\([0-9.]*\) ms$/\1/p' <<<"$out")
	echo "=== bench-stats --days 1095 --channels 25, $name-byte pages"
	out=$("$build/bench/bench-stats" --days 1095 --channels 25 --page-size "$size" \
		--db "$tmp/thermlog-pages-stats.db")
	echo "$out"
	stats[$name]=$(awk '/^thermlog stats, whole history/ { print $(NF - 1) }' <<<"$out")
done
echo "=== before (4 KiB pages) / after (2 KiB pages), CPU ms"
echo "thermlog lifetime --json, 3 years:        ${life[4096]} / ${life[2048]}"
echo "thermlog stats, 3 years x 25 channels:    ${stats[4096]} / ${stats[2048]}"
