#!/usr/bin/env bash
# Builds (if needed) and runs the libFuzzer target NAME for SECONDS on its seed corpus
# (tests/fuzz/corpus-NAME, read only: new inputs go to a temporary directory).
# usage: tests/fuzz/run-fuzz.sh NAME SECONDS [BUILD_DIR]     (BUILD_DIR default: build-fuzz)
# Exit status: 0 no crash found, 1 a crash (the reproducer is kept and named), 2 usage/build error.
set -uo pipefail
if [ $# -lt 2 ] || ! [[ $2 =~ ^[0-9]+$ ]]; then
	echo "usage: $0 NAME SECONDS [BUILD_DIR]" >&2
	exit 2
fi
name=$1 seconds=$2
top=$(cd "$(dirname "$0")/../.." && pwd)
build=${3:-$top/build-fuzz}
corpus=$top/tests/fuzz/corpus-$name

if [ ! -d "$build" ]; then
	CC=clang meson setup "$build" "$top" -Dfuzz=true >/dev/null || exit 2
fi
ninja -C "$build" "tests/fuzz/fuzz-$name" >/dev/null || exit 2
target=$build/tests/fuzz/fuzz-$name
[ -d "$corpus" ] || { echo "no seed corpus $corpus" >&2; exit 2; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir "$work/corpus" "$work/artifacts"
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
# -rss_limit_mb and -timeout turn memory blowups and hangs into findings too.
dict=$top/tests/fuzz/$name.dict
dict_arg=()
[ -f "$dict" ] && dict_arg=(-dict="$dict")
"$target" "${dict_arg[@]}" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=1024 -max_len=65536 \
	-print_final_stats=1 -artifact_prefix="$work/artifacts/" "$work/corpus" "$corpus" \
	>"$work/log" 2>&1
rc=$?
runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$work/log")
if [ $rc -ne 0 ]; then
	tail -n 40 "$work/log" >&2
	keep=$build/fuzz-$name-artifacts
	mkdir -p "$keep" && cp "$work"/artifacts/* "$keep"/ 2>/dev/null
	echo "fuzz-$name: FAILED after ${runs:-?} runs; reproducers in $keep" >&2
	exit 1
fi
echo "fuzz-$name: ${runs:-?} runs in ${seconds}s, no crash"
