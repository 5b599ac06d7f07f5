#!/usr/bin/env bash
# scripts/packages.sh installs what the package build needs on a fresh Debian: every
# Build-Depends of debian/control, build-essential (dpkg-checkbuilddeps requires it of every
# build, without it being listed) and the tools scripts/package and tests/package/check-deb.sh
# run. Reads the lists only; installs nothing.
# usage: build-deps.sh SOURCE_ROOT   (TAP)
. "$(dirname "$0")/../lib/tap.sh"
cd "$1" || exit 1
. scripts/packages.sh

listed=" ${BUILD_PACKAGES[*]} ${DEB_PACKAGES[*]} "
in_lists() { case $listed in *" $1 "*) return 0 ;; esac; return 1; }

# Build-Depends: the field and its continuation lines; each entry without its version,
# architecture qualifier (:native) and alternatives after the first.
deps=$(awk '/^Build-Depends:/ { on = 1; sub(/^Build-Depends:/, ""); print; next }
	on && /^[ \t]/ { print; next } { on = 0 }' debian/control |
	tr ',' '\n' | sed 's/|.*//; s/(.*)//; s/\[.*\]//; s/:[a-z]*//; s/[[:space:]]//g' | grep -v '^$')
check $([ -n "$deps" ]; echo $?) "debian/control has Build-Depends" "$deps"
for dep in $deps; do
	pkg=$dep
	# Virtual names debhelper provides (debhelper(7)): the compat level, its own sequences.
	case $dep in
	debhelper-compat | dh-sequence-installsysusers) pkg=debhelper ;;
	esac
	in_lists "$pkg"
	check $? "Build-Depends $dep: scripts/packages.sh installs $pkg" "lists:$listed"
done
in_lists build-essential
check $? "build-essential (dpkg-checkbuilddeps asks every build for it)" "lists:$listed"
# The programs scripts/package and check-deb.sh run, by the package that ships each.
for tool in dpkg-buildpackage:dpkg-dev dpkg-parsechangelog:dpkg-dev lintian:lintian \
	fakeroot:fakeroot strings:binutils; do
	in_lists "${tool#*:}"
	check $? "${tool%%:*} (${tool#*:}) is installed for the package stage" "lists:$listed"
done
tap_done
