#!/bin/sh
# Issue 10, 1: attach cycles with --breakpoints=hw and =sw, alternating, to
# an 8-thread target whose threads all call handle_request in a hot loop:
# the target must survive every one (a thread caught just past our int3
# used to resume mid-instruction and die of SIGILL).
. "$(dirname "$0")/lib.sh"
start_target mt 8 || finish
deaths=0 bad=0
for i in $(seq 30); do
	bp=hw; [ $((i % 2)) -eq 0 ] && bp=sw
	timeout 60 "$CT" $G -p "$TP" --start=handle_request --breakpoints=$bp \
		-o "w$i.cg" 2>> ct.err || bad=$((bad + 1))
	alive "$TP" || { deaths=$((deaths + 1)); break; }
	grep -q "^summary:" "w$i.cg" 2>/dev/null || bad=$((bad + 1))
done
expect "deaths in 30 attach cycles" "$deaths" 0
expect "failed attach cycles" "$bad" 0
expect "the target is left running" "$(traced_state "$TP")" running
stop_target || fail "the target died"
finish
