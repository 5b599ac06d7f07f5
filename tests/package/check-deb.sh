#!/bin/sh
# The contents and maintainer scripts of a built package (scripts/package), without installing
# it: files where systemd and the programs look, the conffile, shlibs Depends, the order of the
# postinst steps (user, then state directory, then start), purge-only deletion, lintian.
# usage: check-deb.sh PACKAGE.deb   (TAP)
deb=$1
tmp=$(mktemp -d "${TMPDIR:-/tmp}/thermlog-deb.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
. "$(dirname "$0")/../lib/tap.sh"

dpkg-deb -e "$deb" "$tmp/control" && dpkg-deb -x "$deb" "$tmp/root"
check $? "unpack $deb"
files=$(cd "$tmp/root" && find . ! -type d | sed 's/^\.//' | sort)
for f in /usr/bin/thermlogd /usr/bin/thermlog /lib/systemd/system/thermlogd.service \
	/lib/systemd/system/thermlogd.socket /usr/lib/sysusers.d/thermlog.conf \
	/usr/lib/tmpfiles.d/thermlog.conf /etc/thermlog/thermlog.yaml \
	/usr/share/man/man8/thermlogd.8.gz /usr/share/man/man1/thermlog.1.gz \
	/usr/share/man/man5/thermlog.yaml.5.gz /usr/share/man/man5/thermlog-campaign.5.gz \
	/usr/share/doc/thermlog/copyright /usr/share/doc/thermlog/CAMPAIGN.md \
	/usr/share/doc/thermlog/API.md /usr/share/doc/thermlog/DAEMON.md \
	/usr/share/doc/thermlog/FLEET.md /usr/share/doc/thermlog/LIFETIME.md \
	/usr/share/doc/thermlog/RUNS.md /usr/share/doc/thermlog/THROTTLE.md \
	/usr/share/doc/thermlog/REPORT.md; do
	printf '%s\n' "$files" | grep -qx "$f"
	check $? "contains $f" "$files"
done
# The man pages are filled in (no @VERSION@ or @SYSCONFDIR@ left) and name the docs they point
# at by their installed path, which the package holds.
for page in man8/thermlogd.8 man1/thermlog.1 man5/thermlog.yaml.5 man5/thermlog-campaign.5; do
	text=$(gzip -dc "$tmp/root/usr/share/man/$page.gz")
	! printf '%s\n' "$text" | grep -q '@[A-Z]*@'
	check $? "$page has no @PLACEHOLDER@ left" "$(printf '%s\n' "$text" | grep '@[A-Z]*@')"
	for doc in $(printf '%s\n' "$text" | grep -o '/usr/share/doc/thermlog/[A-Z]*\.md' | sort -u); do
		[ -f "$tmp/root$doc" ]
		check $? "$page points at $doc, which the package holds"
	done
done
grep -qx 'ExecStart=/usr/bin/thermlogd --debugfs-root /run/thermlog/debugfs' "$tmp/root/lib/systemd/system/thermlogd.service"
check $? "the unit starts /usr/bin/thermlogd"
grep -qx 'Environment=GLIBC_TUNABLES=glibc.malloc.tcache_count=0' "$tmp/root/lib/systemd/system/thermlogd.service"
check $? "the unit turns glibc's per-thread malloc cache off"
grep -qx '/etc/thermlog/thermlog.yaml' "$tmp/control/conffiles"
check $? "/etc/thermlog/thermlog.yaml is a conffile" "$(cat "$tmp/control/conffiles" 2>&1)"
conf=$(strings "$tmp/root/usr/bin/thermlog" | grep -m1 '^/etc/thermlog/thermlog.yaml$')
check $? "thermlog reads /etc/thermlog/thermlog.yaml" "$conf"
depends=$(dpkg-deb -f "$deb" Depends)
case $depends in *libsqlite3-0*libyaml* | *libyaml*libsqlite3-0*) st=0 ;; *) st=1 ;; esac
check $st "Depends from shlibs: $depends" "$depends"

# postinst: sysusers before tmpfiles (the directory's owner) before starting the service.
post=$tmp/control/postinst
line() { grep -n "$1" "$post" | head -1 | cut -d: -f1; }
u=$(line 'systemd-sysusers.*thermlog.conf')
t=$(line 'systemd-tmpfiles.*--create thermlog.conf')
e=$(line "deb-systemd-helper enable 'thermlogd.service'")
s=$(line "deb-systemd-invoke \$_dh_action 'thermlogd.service'")
[ -n "$u" ] && [ -n "$t" ] && [ -n "$e" ] && [ -n "$s" ] && [ "$u" -lt "$t" ] && [ "$t" -lt "$s" ]
check $? "postinst: sysusers ($u), tmpfiles ($t), enable ($e), start ($s) in that order" "$(cat "$post")"
grep -q 'if \[ -d /run/systemd/system \]' "$post"
check $? "postinst starts the service only when systemd runs"
# The socket is enabled again on upgrade only if the admin enabled it (was-enabled), never started.
grep -q "was-enabled 'thermlogd.socket'" "$post" && ! grep -q "invoke.*'thermlogd.socket'" "$post"
check $? "the socket is neither enabled nor started on install" "$(grep -n socket "$post")"
grep -q "deb-systemd-invoke stop 'thermlogd.service'" "$tmp/control/prerm"
check $? "prerm stops the service on remove" "$(cat "$tmp/control/prerm")"
awk '/"\$1" = "purge"/ { p = 1 } p && /rm -rf \/var\/lib\/thermlog/ { found = 1 } /^fi/ { p = 0 }
	END { exit !found }' "$tmp/control/postrm"
check $? "postrm deletes /var/lib/thermlog on purge only" "$(cat "$tmp/control/postrm")"
[ "$(grep -c 'rm -rf /var/lib/thermlog' "$tmp/control/postrm")" -eq 1 ]
check $? "... and nowhere else"

if command -v lintian >/dev/null; then
	out=$(lintian --fail-on error,warning "$deb" 2>&1)
	check $? "lintian: no errors or warnings" "$out"
fi
tap_done
