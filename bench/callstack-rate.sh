#!/bin/sh
# Stepping rate of cachetrace with --call-stacks=yes against the same run
# without it: bench/work.c, whole run (the dynamic loader's start-up too),
# cache and branch simulation on, alternating runs so that both see the
# same machine; the median ratio of REPEATS pairs.  Then the same with
# --start=work (one window).  First, the module's own cost per step on
# synthetic steps (tests/callstack/test-callstack --bench), without ptrace.
#   sh bench/callstack-rate.sh [BUILDDIR] [ROUNDS] [REPEATS]
set -eu
B=$(realpath "${1:-build}"); R=${2:-20}
W=$(mktemp -d); trap 'rm -rf "$W"' EXIT
cc -O2 -g -fno-pie -no-pie -o "$W/work" "$(dirname "$0")/work.c"
rate() { sed -n 's/.*(\([0-9.]*\)k steps\/s).*/\1/p'; }
ct() {
	"$B/cachetrace" -o "$W/cg.out" --I1=32768,8,64 --D1=32768,8,64 \
		--LL=1048576,16,64 --callgrind-out-file="$W/callgrind.out" \
		--folded-out-file="$W/folded" "$@" 2>&1 | rate
}
"$B/tests/callstack/test-callstack" --bench 5000000
for region in "" "--start=work"; do
	echo "${region:-whole run}:"
	echo "round plain(k/s) call-stacks(k/s) ratio"
	for i in $(seq "${3:-3}"); do
		plain=$(ct $region -- "$W/work" "$R")
		cs=$(ct $region --call-stacks=yes -- "$W/work" "$R")
		echo "$i $plain $cs $(echo "scale=3; $cs / $plain" | bc)"
	done | tee "$W/ratios"
	echo "median ratio: $(awk '{ print $4 }' "$W/ratios" | sort -n |
		awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }')"
done
