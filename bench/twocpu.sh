#!/bin/sh
# The instrument engine pinned to one CPU, on two (its ring read on one
# while the thread runs on the other), and Cachegrind with the branch
# predictor (the events cachetrace's default profile has), alternating,
# ROUNDS times; the least and the median wall time of each.  This host's
# noise moves single runs by 30% and more: compare medians of one run.
#   sh bench/twocpu.sh BUILDDIR ROUNDS [CT-OPTIONS] -- PROG ARGS...
# e.g. sh bench/twocpu.sh build 8 --start=work -- ./region 10
set -eu
B=$(realpath "$1"); N=$2; shift 2
ct=
while [ $# -gt 0 ] && [ "$1" != -- ]; do ct="$ct $1"; shift; done
[ "${1:-}" = -- ] && shift
[ $# -gt 0 ] || { echo "usage: $0 BUILDDIR ROUNDS [OPTIONS] -- PROG ARGS" >&2; exit 2; }
G="--I1=32768,8,64 --D1=32768,8,64 --LL=8388608,16,64"
W=$(mktemp -d); trap 'rm -rf "$W"' EXIT
for i in $(seq "$N"); do
	for c in pinned two cachegrind; do
		case $c in
		pinned) cmd="taskset -c 0 $B/cachetrace $G -o $W/p.out $ct --" ;;
		two) cmd="$B/cachetrace $G -o $W/t.out $ct --" ;;
		cachegrind) cmd="taskset -c 0 valgrind --tool=cachegrind $G --branch-sim=yes --cachegrind-out-file=$W/vg.out" ;;
		esac
		# shellcheck disable=SC2086
		/usr/bin/time -f "$c %e" -o "$W/t" $cmd "$@" >/dev/null 2>&1
		cat "$W/t" >>"$W/all"
	done
	grep -v '^desc: Engine' "$W/p.out" >"$W/a"
	grep -v '^desc: Engine' "$W/t.out" >"$W/b"
	cmp -s "$W/a" "$W/b" || echo "round $i: the two profiles differ"
done
for c in pinned two cachegrind; do
	grep "^$c " "$W/all" | cut -d' ' -f2 | sort -n |
		awk -v c="$c" '{ v[NR] = $1 } END {
			m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
			printf "%-10s least %.2f s, median %.2f s (%d runs)\n", c, v[1], m, NR }'
done
