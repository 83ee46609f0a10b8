#!/bin/sh
# The supervisor's own instructions and D1 misses, counted by Cachegrind
# run on cachetrace (valgrind's simulated caches: the same count on any
# host, where wall times here move 30% between runs of one command).
# Two whole runs under the default engine: bench/sample/sqlite-load.c 2000
# (SQLite, 34.3M instructions traced) and python3 running
# bench/cpython/loop.py for ten rounds (~74M; python3's hash seed fixed).
# Prints, per build, the supervisor's Ir and D1 misses for each.  ~3
# minutes a build, the two runs side by side.
#   sh bench/supervisor-cg.sh BUILDDIR [BUILDDIR...]
set -eu
[ $# -gt 0 ] || { echo "usage: $0 BUILDDIR [BUILDDIR...]" >&2; exit 2; }
S=$(realpath "$(dirname "$0")/..")
W=$(mktemp -d); trap 'rm -rf "$W"' EXIT
cc -O2 -g -o "$W/sqlite-load" "$S/bench/sample/sqlite-load.c" \
	$(pkg-config --cflags --libs sqlite3)
# (the environment's $_, the path of the command, would move the
# target's stack from one build to the next)
# cg NAME CMD...: CMD under Cachegrind, its stderr in $W/NAME
cg() {
	n=$1; shift
	env -u _ PYTHONHASHSEED=0 valgrind --tool=cachegrind --cache-sim=yes \
		--cachegrind-out-file=/dev/null "$@" >/dev/null 2>"$W/$n"
	awk '/ I +refs:/ { ir = $NF } / D1 +misses:/ { d1 = $4 }
	     END { printf "%s Ir, %s D1 misses", ir, d1 }' "$W/$n"
}
for b in "$@"; do
	ct="$(realpath "$b")/cachetrace"
	(cg sq.err "$ct" -o /dev/null -- "$W/sqlite-load" 2000 >"$W/sq") &
	py=$(cg py.err "$ct" -o /dev/null -- "$(readlink -f /usr/bin/python3)" \
		"$S/bench/cpython/loop.py" 0 10)
	wait
	echo "$b: sqlite-load 2000: $(cat "$W/sq"); python3 loop: $py"
done
