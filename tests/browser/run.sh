#!/usr/bin/env bash
# Browser test of the dashboard: starts `thermlogd --demo` on a free loopback port with a temporary
# database and drives Debian's chromium against it with playwright-core (dashboard.test.js).
# usage: run.sh THERMLOGD OUTDIR   (screenshots go to OUTDIR/screenshots)
set -euo pipefail

thermlogd=$1
outdir=$2
here=$(cd "$(dirname "$0")" && pwd)

for tool in /usr/bin/chromium node npm; do
	if ! command -v "$tool" >/dev/null; then
		echo "1..0 # SKIP $tool is not installed (scripts/test installs chromium and nodejs)"
		exit 0
	fi
done

# playwright-core pinned by package-lock.json; it never downloads a browser itself.
export PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1
if [ ! -f "$here/node_modules/playwright-core/package.json" ]; then
	(cd "$here" && npm ci --no-audit --no-fund --loglevel=error) || {
		echo "not ok 1 - npm ci in $here"
		echo "1..1"
		exit 1
	}
fi

tmp=$(mktemp -d /tmp/thermlog-browser.XXXXXX)
pid=
cleanup() {
	if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
		kill "$pid"
		wait "$pid" 2>/dev/null || true
	fi
	rm -rf "$tmp"
}
trap cleanup EXIT

# Port 0: the daemon binds a free port and prints it in the URL.
url=
"$thermlogd" --demo --db "$tmp/demo.db" --listen 127.0.0.1:0 >"$tmp/stdout" 2>"$tmp/stderr" &
pid=$!
for _ in $(seq 1 300); do
	if url=$(grep -m1 -o 'http://127\.0\.0\.1:[0-9]*/' "$tmp/stdout"); then
		break
	fi
	if ! kill -0 "$pid" 2>/dev/null; then
		sed 's/^/#   /' "$tmp/stderr" | tail -5
		break
	fi
	sleep 0.1
done
if [ -z "$url" ]; then
	echo "not ok 1 - thermlogd --demo printed no URL"
	echo "1..1"
	exit 1
fi
echo "# demo at $url"

mkdir -p "$outdir/screenshots"
rc=0
node "$here/dashboard.test.js" "$url" "$outdir/screenshots" "$tmp/chromium-profile" || rc=$?
if [ $rc -ne 0 ]; then
	echo "# daemon log (last lines):"
	tail -20 "$tmp/stderr" | sed 's/^/#   /'
fi
exit $rc
