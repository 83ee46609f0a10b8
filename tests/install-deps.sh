#!/bin/sh
# Install cachetrace's build and test dependencies from Debian 12's
# packages, only those missing.  Works as root (a fresh Debian often has no
# sudo) and as a user with sudo: `sh tests/install-deps.sh`, or through
# `sudo sh tests/install-deps.sh`.  Every tool a test uses is here: a test
# never skips for a missing tool, it fails.
set -eu
# build: meson ninja-build gcc pkg-config and the libraries (libunicorn-dev
# for the emulated windows); tests: valgrind (the oracle, cg_annotate,
# callgrind_annotate), libc6-dbg (libc line numbers), binutils (nm,
# objdump, readelf, addr2line, strip), g++ (a C++ tracee), clang and its
# libFuzzer runtime (the parser fuzz test), python3 (the annotator's
# cross-checks), chromium (the flame graph and the HTML report rendered
# and read back, tests/annotate/chromium.py), libxml2-utils
# (xmllint on the SVG), procps (pgrep, pkill), groff-base (the man-page
# check), strace (the order of cachetrace's own system calls,
# tests/tracer/terminal.py), libsqlite3-dev zlib1g-dev libpng-dev libxml2-dev (the libraries
# of tests/real's drivers).
pkgs="meson ninja-build gcc pkg-config libcapstone-dev libdw-dev libelf-dev
libunwind-dev libunicorn-dev valgrind libc6-dbg binutils g++ clang
libsqlite3-dev zlib1g-dev libpng-dev libxml2-dev
libclang-rt-14-dev python3 chromium libxml2-utils procps
groff-base strace xz-utils perl gzip"
missing=""
for p in $pkgs; do
	dpkg-query -W -f '${Status}\n' "$p" 2>/dev/null |
		grep -q 'install ok installed' || missing="$missing $p"
done
[ -n "$missing" ] || exit 0
# Root needs no sudo (and may not have it); anyone else goes through sudo.
if [ "$(id -u)" -eq 0 ]; then
	as_root=
elif command -v sudo >/dev/null; then
	as_root=sudo
else
	echo "install-deps.sh: not root and no sudo: run it as root" >&2
	exit 1
fi
echo "installing:$missing"
$as_root apt-get update -q
# shellcheck disable=SC2086
$as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q $missing
