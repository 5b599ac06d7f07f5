# Debian packages the project needs; sourced by scripts/test, scripts/demo and scripts/package.
BUILD_PACKAGES=(meson ninja-build gcc pkg-config libsensors-dev libsqlite3-dev libyaml-dev
	libmicrohttpd-dev libgnutls28-dev libsystemd-dev libjs-dygraphs)
TEST_PACKAGES=(clang libclang-rt-14-dev valgrind python3 python3-numpy sqlite3 util-linux
	systemd prometheus wrk openssl chromium nodejs git)
# web: the browser test runs npm ci; Debian ships npm apart from nodejs (a nodejs from elsewhere
# that bundles npm conflicts with Debian's npm package, so only ask for it when npm is missing).
command -v npm >/dev/null 2>&1 || TEST_PACKAGES+=(npm)

# Installs the packages that are not installed yet; apt-get update only when needed.
install_packages() {
	local missing=()
	for p in "$@"; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
	done
	[ ${#missing[@]} -eq 0 ] && return 0
	if [ "$(id -u)" -ne 0 ]; then
		echo "missing packages: ${missing[*]} (run as root, or install them)" >&2
		return 1
	fi
	echo "installing: ${missing[*]}"
	apt-get update -qq || return 1
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

# arm64: the cross toolchain, the :arm64 build dependencies and qemu-user (scripts/test, scripts/package).
ARM64_PACKAGES=(gcc-aarch64-linux-gnu crossbuild-essential-arm64 qemu-user-static binfmt-support
	libc6:arm64 libsensors-dev:arm64 libsqlite3-dev:arm64 libyaml-dev:arm64
	libmicrohttpd-dev:arm64 libgnutls28-dev:arm64 libsystemd-dev:arm64)
# Debian packages: scripts/package and tests/package/check-deb.sh. dpkg-checkbuilddeps asks
# every build for build-essential without debian/control listing it; binutils brings strings.
# tests/package/build-deps.sh checks every Build-Depends is in these lists.
DEB_PACKAGES=(build-essential debhelper devscripts lintian dpkg-dev fakeroot binutils python3)
# The systemd boot test: scripts/test --system.
SYSTEM_PACKAGES=(debootstrap systemd-container util-linux curl)

# Lets dpkg install :arm64 packages (multiarch); needed once before install_packages ARM64_PACKAGES.
add_arm64_arch() {
	dpkg --print-foreign-architectures | grep -qx arm64 && return 0
	if [ "$(id -u)" -ne 0 ]; then
		echo "dpkg has no arm64 architecture (run as root: dpkg --add-architecture arm64)" >&2
		return 1
	fi
	dpkg --add-architecture arm64
}

# Registers qemu-aarch64 with binfmt_misc, so scripts can exec arm64 binaries directly. The F flag
# opens the interpreter now, which keeps it working inside other mount namespaces (unshare -m).
register_binfmt_arm64() {
	local dir=/proc/sys/fs/binfmt_misc
	[ -e "$dir/qemu-aarch64" ] && return 0
	if [ ! -e "$dir/register" ]; then
		mount -t binfmt_misc binfmt_misc "$dir" || return 1
		[ -e "$dir/qemu-aarch64" ] && return 0
	fi
	printf '%s' ':qemu-aarch64:M::\x7fELF\x02\x01\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x02\x00\xb7\x00:\xff\xff\xff\xff\xff\xff\xff\x00\xff\xff\xff\xff\xff\xff\xff\xff\xfe\xff\xff\xff:/usr/bin/qemu-aarch64-static:F' \
		>"$dir/register"
}

# Copies the source tree into DEST: the tracked and new files, not what .gitignore ignores. With
# git, as `git ls-files` lists them; without git (a minimal system, an unpacked tarball), every
# file but .git and the .gitignore patterns.
copy_source_tree() { # DEST
	local dest=$1
	if command -v git >/dev/null 2>&1 && git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
		git ls-files -z --cached --others --exclude-standard | tar --null -T - -cf - |
			tar -xf - -C "$dest"
		return
	fi
	local excludes=(--exclude=./.git) pat
	if [ -f .gitignore ]; then
		while IFS= read -r pat || [ -n "$pat" ]; do
			case $pat in '' | '#'* | '!'*) continue ;; esac
			pat=${pat%/}
			case $pat in
			/*) excludes+=("--exclude=.$pat") ;; # anchored at the top
			*) excludes+=("--exclude=$pat") ;;
			esac
		done <.gitignore
	fi
	tar "${excludes[@]}" -cf - . | tar -xf - -C "$dest"
}
