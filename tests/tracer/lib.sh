# Shared helpers for the tracer tests (sourced).
# Every script is called as: SCRIPT CACHETRACE SRCDIR SCRATCH
set -u
ME=$(basename "$0" .sh)
CT=$(realpath "$1"); SRCDIR=$(realpath "$2"); SCRATCH=$3
W=$SCRATCH/tracer-$ME
rm -rf "$W"; mkdir -p "$W"; W=$(realpath "$W"); cd "$W" || exit 1
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
pass() { echo "ok: $*"; }
finish() { [ "$fails" -eq 0 ] && echo "$ME: all passed" && exit 0; exit 1; }
build() {	# build NAME: tests/tracer/NAME.c -> ./NAME, non-PIE -O2 -g
	${CC:-cc} -O2 -g -fno-pie -no-pie -o "$1" "$SRCDIR/tests/tracer/$1.c" ||
		{ echo "cannot build $1"; exit 1; }
}
# No process of ours left: none named NAME (a name unique to this run).
no_leftover() {	# no_leftover NAME WHAT
	sleep 0.2
	if pgrep -x "$1" >/dev/null; then
		fail "$2: a '$1' process was left behind"
		pkill -9 -x "$1"
	else
		pass "$2: no process left behind"
	fi
}
