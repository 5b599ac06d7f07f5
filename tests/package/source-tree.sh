#!/usr/bin/env bash
# scripts/package copies the source tree with copy_source_tree (scripts/packages.sh): without git
# on PATH (a minimal Debian system) the copy holds the same files as with git, and nothing that
# .gitignore ignores (build directories, dist/, node_modules).
# usage: source-tree.sh SOURCE_ROOT   (TAP)
set -u
. "$(dirname "$0")/../lib/tap.sh"
cd "$1" || exit 1
tmp=$(mktemp -d "${TMPDIR:-/tmp}/thermlog-source-tree.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
. scripts/packages.sh
# A PATH with tar and nothing else: no git.
mkdir "$tmp/bin" "$tmp/nogit"
ln -s "$(command -v tar)" "$tmp/bin/tar"
(PATH=$tmp/bin copy_source_tree "$tmp/nogit")
check $? "copy_source_tree runs without git on PATH"
got=$(cd "$tmp/nogit" && find . ! -type d | sed 's|^\./||' | LC_ALL=C sort)
for f in meson.build scripts/package debian/rules src/daemon/demo.c web/app.js; do
	printf '%s\n' "$got" | grep -qx "$f"
	check $? "the copy without git holds $f"
done
bad=$(printf '%s\n' "$got" | grep -E '^(build[^/]*|dist|node_modules|tests/browser/node_modules|\.git)(/|$)')
check "$([ -z "$bad" ] && echo 0 || echo 1)" "the copy without git leaves out .git and what .gitignore ignores" "$bad"
if command -v git >/dev/null && git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
	mkdir "$tmp/git"
	copy_source_tree "$tmp/git"
	want=$(cd "$tmp/git" && find . ! -type d | sed 's|^\./||' | LC_ALL=C sort)
	[ "$got" = "$want" ]
	check $? "the copy without git equals the copy git lists ($(printf '%s\n' "$want" | wc -l) files)" \
		"$(diff <(printf '%s\n' "$want") <(printf '%s\n' "$got"))"
fi
tap_done
