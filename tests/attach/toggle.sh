#!/bin/sh
# --toggle-signal=SIGUSR2 -p PID, no --start: the first SIGUSR2 to
# cachetrace starts tracing whatever the server does, the second stops it.
# One window with some handler cost; the server is unharmed and its whole
# output equals an untraced run's.
. "$(dirname "$0")/lib.sh"
S=tg$$
build server $S
build_peekdr
./$S -t 10 300 >ref.out &
ref=$!
./$S -t 10 300 >tgt.out &
spid=$!
sleep 0.2
# -d: its "window 1 begins" line says when the window runs.
"$CT" -q -d -p $spid --toggle-signal=SIGUSR2 -o p.cg 2>ct.err &
CTPID=$!
wait_traced $spid || fail "never attached"
wait_armed $spid || fail "the target was never let go"
kill -USR2 $CTPID
# The second signal half a second into the window, not after the first
# signal: a tracer slow to begin it (the emulator's first window under a
# loaded CI) took both together and traced nothing.
for i in $(seq 1 300); do
	grep -q 'debug: window 1 begins' ct.err && break
	sleep 0.1
done
sleep 0.5
kill -USR2 $CTPID
wait_ct 30 || fail "cachetrace did not end after the second SIGUSR2"
[ "$CTRC" = 0 ] && pass "exit 0" || { fail "exit $CTRC"; cat ct.err; }
if kill -0 $spid 2>/dev/null; then
	check_free $spid "after toggling"
	check_text $spid ./$S "after toggling"
	check_dr7 $spid "after toggling"
else
	fail "the server ended before we could check it"
fi
wait $spid; rc=$?
[ $rc -eq 0 ] && pass "server exit 0" || fail "server exit $rc"
wait $ref
cmp -s ref.out tgt.out && pass "server output intact" ||
	fail "server output differs: $(diff ref.out tgt.out | head -4)"
if [ -s p.cg ]; then
	w=$(windows p.cg)
	[ "$w" = 1 ] && pass "Windows: 1" || fail "Windows: '$w', expected 1"
	t=$(summary p.cg)
	[ "$t" -gt 0 ] && pass "summary Ir $t" || fail "empty profile"
	[ "$(fn_cost p.cg handler)" -gt 0 ] && pass "handler counted" ||
		fail "no handler cost (the server runs handler every 10 ms)"
	check_annotate p.cg "profile"
else
	fail "no profile"
fi
finish
