#!/usr/bin/env bash
# Browser test of the dashboard: starts `thermlogd --demo` on loopback port 0 with a temporary
# database and drives Debian's chromium against it with playwright-core (dashboard.test.js); a
# second daemon with a bearer token (on the fixture board) serves the sign-in test.
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
	# npm's report goes to stderr: stdout is TAP.
	(cd "$here" && npm ci --no-audit --no-fund --loglevel=error >&2) || {
		echo "not ok 1 - npm ci in $here"
		echo "1..1"
		exit 1
	}
fi

tmp=$(mktemp -d /tmp/thermlog-browser.XXXXXX)
pid=
token_pid=
cleanup() {
	for p in $pid $token_pid; do
		if kill -0 "$p" 2>/dev/null; then
			kill "$p"
			wait "$p" 2>/dev/null || true
		fi
	done
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

# A second daemon with a bearer token, on the fixture board, for the sign-in form. Port 0: it
# binds a free port and logs it ("http: serving ... (port N)").
token=browser-test-token-0123456789
# Its runs socket in the scratch directory: a test never touches /run/thermlog.
printf 'http:\n  token: %s\nruns:\n  socket: %s/token.sock\n' "$token" "$tmp" >"$tmp/token.yaml"
: >"$tmp/token.stderr" # there before the loop below reads it
"$thermlogd" -c "$tmp/token.yaml" --db "$tmp/token.db" --sysfs-root "$here/../fixtures/rock5c" \
	--interval 1s --listen 127.0.0.1:0 >"$tmp/token.stdout" 2>"$tmp/token.stderr" &
token_pid=$!
port=
for _ in $(seq 1 300); do
	port=$(sed -n 's/.*http: serving .* (port \([1-9][0-9]*\))$/\1/p' "$tmp/token.stderr")
	if [ -n "$port" ] || ! kill -0 "$token_pid" 2>/dev/null; then
		break
	fi
	sleep 0.1
done
token_url=
# Ready once the first cycle is stored (the API answers 503 before).
if [ -n "$port" ] && /usr/bin/python3 - "$port" "$token" <<'EOF'
import sys, time, urllib.request
req = urllib.request.Request(f"http://127.0.0.1:{sys.argv[1]}/api/v1/channels",
                             headers={"Authorization": "Bearer " + sys.argv[2]})
for _ in range(100):
    try:
        with urllib.request.urlopen(req, timeout=2) as r:
            if r.status == 200:
                sys.exit(0)
    except Exception:
        pass
    time.sleep(0.1)
sys.exit(1)
EOF
then
	token_url="http://127.0.0.1:$port/"
fi
if [ -z "$token_url" ]; then
	echo "not ok 1 - thermlogd with a token did not answer"
	sed 's/^/#   /' "$tmp/token.stderr" | tail -5
	echo "1..1"
	exit 1
fi
echo "# daemon with a token at $token_url"

mkdir -p "$outdir/screenshots"
rc=0
node "$here/dashboard.test.js" "$url" "$outdir/screenshots" "$tmp/chromium-profile" "$token_url" "$token" || rc=$?
if [ $rc -ne 0 ]; then
	echo "# daemon log (last lines):"
	tail -20 "$tmp/stderr" | sed 's/^/#   /'
	echo "# daemon with a token, log (last lines):"
	tail -10 "$tmp/token.stderr" | sed 's/^/#   /'
fi
exit $rc
