#!/usr/bin/env bash
# Dependency step shared by `make build`, `make demo` and `make test`.
#
# Checks that the Debian packages pyvisor needs to build and test are
# installed.  As root, installs the missing ones with apt-get and creates the
# unprivileged test user the integration tests run pyvisor as.  As another
# user, prints the exact install command and fails.
set -euo pipefail

PACKAGES=(
	cmake gcc make pkg-config
	libseccomp-dev libjansson-dev libssl-dev libmagic-dev libcmocka-dev
	python3 python3-pandas python3-matplotlib python3-numpy
	libpython3.11-testsuite
)
TEST_USER=pyvisor-test

missing=()
for pkg in "${PACKAGES[@]}"; do
	status=$(dpkg-query -W -f='${db:Status-Status}' "$pkg" 2>/dev/null || true)
	if [ "$status" != "installed" ]; then
		missing+=("$pkg")
	fi
done

if [ "${#missing[@]}" -gt 0 ]; then
	if [ "$(id -u)" -ne 0 ]; then
		echo "deps: missing Debian packages: ${missing[*]}" >&2
		echo "deps: install them with:" >&2
		echo "  sudo apt-get install -y --no-install-recommends ${missing[*]}" >&2
		exit 1
	fi
	echo "deps: installing ${missing[*]}" >&2
	install() {
		DEBIAN_FRONTEND=noninteractive apt-get install -y \
			--no-install-recommends "${missing[@]}"
	}
	# Only refresh the package lists when the install cannot proceed
	# without them (fresh image, stale lists).
	if ! install; then
		echo "deps: install failed, running apt-get update and retrying" >&2
		apt-get update
		install
	fi
fi

if [ "$(id -u)" -eq 0 ] && ! getent passwd "$TEST_USER" >/dev/null; then
	echo "deps: creating unprivileged test user $TEST_USER" >&2
	useradd --system --no-create-home --shell /usr/sbin/nologin "$TEST_USER"
fi

echo "deps: ok" >&2
