#!/usr/bin/env bash
# thermlog report's HTML in Debian's chromium (tests/browser/report.test.js over playwright-core,
# as the dashboard test drives it): one board, two boards, an empty window and the capacitor
# design review (--lifetime), seeded by
# seed.py in a scratch directory. usage: browser.sh THERMLOG OUTDIR (screenshots in OUTDIR)
set -euo pipefail

thermlog=$1
outdir=$2
here=$(cd "$(dirname "$0")" && pwd)
browser=$here/../browser

for tool in /usr/bin/chromium node npm; do
	if ! command -v "$tool" >/dev/null; then
		echo "1..0 # SKIP $tool is not installed (scripts/test installs chromium and nodejs)"
		exit 0
	fi
done
export PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1
if [ ! -f "$browser/node_modules/playwright-core/package.json" ]; then
	(cd "$browser" && npm ci --no-audit --no-fund --loglevel=error >&2) || {
		echo "not ok 1 - npm ci in $browser"
		echo "1..1"
		exit 1
	}
fi

tmp=$(mktemp -d /tmp/thermlog-report-browser.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
/usr/bin/python3 "$here/seed.py" "$thermlog" "$tmp" >/dev/null
tl() { "$thermlog" -c "$tmp/thermlog.yaml" --db "$tmp/a.db" "$@"; }
tl report --over 25m -o "$tmp/board.html"
tl report --over 25m --compare "$tmp/b.db" -o "$tmp/two-boards.html"
tl report --from 2027-01-01 --to 2027-01-02 -o "$tmp/empty-window.html"
tl report --over 25m --lifetime -o "$tmp/lifetime.html"
mkdir -p "$outdir"
node "$browser/report.test.js" "$outdir" "$tmp/chromium-profile" \
	"$tmp/board.html" "$tmp/two-boards.html" "$tmp/empty-window.html" "$tmp/lifetime.html"
