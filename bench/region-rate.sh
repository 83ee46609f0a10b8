#!/bin/sh
# The emulate engine's pace against Cachegrind (issue 18), side by side in
# one run, pinned to one CPU:
#   region       bench/region.c: integer C (a hash table, a merge sort, a
#                tree walk), cachetrace --start=work against Cachegrind on
#                the whole program
#   region-libc  bench/region-libc.c: qsort, memcpy, snprintf, strlen,
#                strcmp (glibc's AVX2/EVEX string functions)
# For each: Cachegrind's whole-run wall time and Ir, cachetrace's wall
# time (start-up included) and the window's rate from its summary, and the
# ratio of the wall times; then cachetrace's max RSS for 1x and 10x the
# region.
#   sh bench/region-rate.sh [BUILDDIR] [ROUNDS]
set -eu
B=$(realpath "${1:-build}"); R=${2:-10}
S=$(realpath "$(dirname "$0")/..")
W=$(mktemp -d); trap 'rm -rf "$W"' EXIT
G="--I1=32768,8,64 --D1=32768,8,64 --LL=8388608,16,64"
for p in region region-libc; do
	cc -O2 -g -fno-pie -no-pie -o "$W/$p" "$S/bench/$p.c"
done
now() { date +%s.%N; }
side() {	# NAME ROUNDS
	t0=$(now)
	taskset -c 0 valgrind --tool=cachegrind $G --cache-sim=yes \
		--cachegrind-out-file="$W/vg.out" "$W/$1" "$2" >/dev/null 2>"$W/vg.err"
	t1=$(now)
	taskset -c 0 "$B/cachetrace" $G --start=work -o "$W/ct.out" \
		-- "$W/$1" "$2" >/dev/null 2>"$W/ct.err"
	t2=$(now)
	vg=$(echo "$t1 - $t0" | bc); ct=$(echo "$t2 - $t1" | bc)
	echo "$1 x$2: Cachegrind whole run $(sed -n 's/^summary: \([0-9]*\).*/\1/p' "$W/vg.out") Ir in $vg s;" \
		"cachetrace window $(sed -n 's/^summary: \([0-9]*\).*/\1/p' "$W/ct.out") Ir in $ct s" \
		"($(sed -n 's/.*Traced [0-9]* instructions in \([0-9.]* s ([0-9.]*k\/s)\).*/\1/p' "$W/ct.err"));" \
		"ratio $(echo "scale=1; $ct / $vg" | bc)x"
	grep -o 'On the real CPU most: .*' "$W/ct.err" || true
}
side region "$R"
side region "$R"
side region-libc $((R / 2))
side region-libc $((R / 2))
for r in 1 10; do
	/usr/bin/time -f "%M" -o "$W/rss" "$B/cachetrace" -q $G --start=work \
		-o "$W/ct.out" -- "$W/region" "$r" >/dev/null
	echo "region x$r: Ir $(sed -n 's/^summary: \([0-9]*\).*/\1/p' "$W/ct.out"), max RSS $(cat "$W/rss") KiB"
done
