#!/bin/sh
# Stepping rate of cachetrace against the raw PTRACE_SINGLESTEP+GETREGS
# loop (bench/raw-step.c) on the same program, whole run, both pinned to one
# CPU, alternating runs so that both see the same machine.  Then the
# supervisor's memory: max RSS after runs of 1x and 3x the steps of the
# same code (it must follow the distinct pcs, not the steps).
#   sh bench/step-rate.sh [BUILDDIR] [ROUNDS]
set -eu
B=$(realpath "${1:-build}"); R=${2:-20}
W=$(mktemp -d); trap 'rm -rf "$W"' EXIT
cc -O2 -g -fno-pie -no-pie -o "$W/work" "$(dirname "$0")/work.c"
rate() { sed -n 's/.*(\([0-9.]*\)k steps\/s).*/\1/p; s/.*: \([0-9.]*\)k steps\/s$/\1/p'; }
echo "round raw-step(k/s) cachetrace(k/s) ratio"
for i in 1 2 3; do
	raw=$("$B/bench/raw-step" "$W/work" "$R" 2>&1 | rate)
	ct=$("$B/cachetrace" -o "$W/cg.out" --I1=32768,8,64 --D1=32768,8,64 \
		--LL=1048576,16,64 -- "$W/work" "$R" 2>&1 | rate)
	echo "$i $raw $ct $(echo "scale=3; $ct / $raw" | bc)"
done
for r in "$R" $((R * 3)); do
	/usr/bin/time -f "%M" -o "$W/rss" "$B/cachetrace" -q -o "$W/cg.out" \
		--I1=32768,8,64 --D1=32768,8,64 --LL=1048576,16,64 \
		-- "$W/work" "$r" >/dev/null
	steps=$(sed -n 's/^summary: \([0-9]*\).*/\1/p' "$W/cg.out")
	pcs=$(grep -c '^[0-9]' "$W/cg.out")
	echo "rounds $r: Ir $steps, cost lines $pcs, max RSS $(cat "$W/rss") KiB"
done
