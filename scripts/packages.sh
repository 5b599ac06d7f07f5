# Debian packages the project needs; sourced by scripts/test and scripts/demo.
BUILD_PACKAGES=(meson ninja-build gcc pkg-config libsensors-dev libsqlite3-dev libyaml-dev
	libmicrohttpd-dev libsystemd-dev libjs-dygraphs)
TEST_PACKAGES=(clang libclang-rt-14-dev valgrind python3 python3-numpy sqlite3 util-linux
	systemd prometheus wrk openssl chromium nodejs)
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
