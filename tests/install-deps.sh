#!/bin/sh
# Install cachetrace's build and test dependencies from Debian 12's
# packages, only those missing.  Run as root (or through sudo).
set -eu
pkgs="meson ninja-build gcc pkg-config libcapstone-dev libdw-dev libelf-dev
libunwind-dev valgrind libc6-dbg binutils g++ clang libclang-rt-14-dev
groff-base"
missing=""
for p in $pkgs; do
	dpkg -s "$p" >/dev/null 2>&1 || missing="$missing $p"
done
if [ -n "$missing" ]; then
	echo "installing:$missing"
	apt-get update -q
	DEBIAN_FRONTEND=noninteractive apt-get install -y -q $missing
fi
