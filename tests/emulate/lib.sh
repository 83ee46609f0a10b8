# Shared helpers for the emulate suite's scripts (sourced).  Every script
# is called as: SCRIPT CACHETRACE SRCDIR SCRATCH, and works in
# SCRATCH/NAME (NAME: the script's own, without .sh), made afresh.
set -u
ME=$(basename "$0" .sh)
CT=$(realpath "$1"); SRCDIR=$(realpath "$2"); W=$3/$ME
rm -rf "$W" && mkdir -p "$W" && W=$(realpath "$W") && cd "$W" || exit 1
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
pass() { echo "ok: $*"; }
finish() {
	[ "$fails" -eq 0 ] && echo "$ME: all passed" && exit 0
	exit 1
}
