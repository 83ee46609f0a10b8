#!/bin/sh
# Issue 10, 1: attach cycles with --breakpoints=hw and =sw, alternating, to
# an 8-thread target whose threads all call handle_request in a hot loop:
# the target must survive every one (a thread caught just past our int3
# used to resume mid-instruction and die of SIGILL).
. "$(dirname "$0")/lib.sh"
. "$SRCDIR/tests/host.sh"
hw=hw
if ! host_hwbp "$CT"; then
	# The debug registers do not fire here: --breakpoints=hw is refused
	# at once (never a wait), and the cycles are int3 + int3 fallback.
	echo "note: the debug registers do not fire on this host: the hw cycles test the fallback (default breakpoints, int3)"
	start_target mt 8 || finish
	timeout 20 "$CT" $G -p "$TP" --start=handle_request \
		--breakpoints=hw -o hw.cg 2>hw.err
	rc=$?
	expect "--breakpoints=hw here: exit" "$rc" 1
	grep -q "breakpoints=hw: .*do not fire" hw.err &&
		pass "--breakpoints=hw: $(cat hw.err)" ||
		{ fail "--breakpoints=hw: message"; cat hw.err; }
	[ ! -e hw.cg ] && pass "--breakpoints=hw: no profile" ||
		fail "--breakpoints=hw: a profile"
	hw=
else
	start_target mt 8 || finish
fi
deaths=0 bad=0
for i in $(seq 30); do
	bp=${hw:+--breakpoints=hw}; [ $((i % 2)) -eq 0 ] && bp=--breakpoints=sw
	timeout 60 "$CT" $G -p "$TP" --start=handle_request $bp \
		-o "w$i.cg" 2>> ct.err || bad=$((bad + 1))
	alive "$TP" || { deaths=$((deaths + 1)); break; }
	grep -q "^summary:" "w$i.cg" 2>/dev/null || bad=$((bad + 1))
done
expect "deaths in 30 attach cycles" "$deaths" 0
expect "failed attach cycles" "$bad" 0
expect "the target is left running" "$(traced_state "$TP")" running
stop_target || fail "the target died"
finish
