#!/bin/sh
# Attach to a running server with -p, trace three handler() calls
# (--intervals=3), detach. The server carries on: its output equals an
# untraced run's, it is left running, untraced, with its text and DR7
# clean. The profile holds exactly three calls of handler: its Ir is 3x
# one call's Ir under valgrind's Cachegrind, and nothing else was counted.
. "$(dirname "$0")/lib.sh"
S=as$$
build server $S
build_peekdr

vg_run ./$S -t 0 1
vg_ref one handler
[ "$one" -gt 0 ] || { echo "no handler cost from Cachegrind"; exit 1; }
echo "Cachegrind: one handler call = $one Ir"

# The same 400 requests, traced and untraced, side by side (4 s each).
./$S -t 10 400 >ref.out &
ref=$!
./$S -t 10 400 >tgt.out &
spid=$!
sleep 0.3
"$CT" -q -p $spid --start=handler --intervals=3 -o p.cg >ct.out 2>ct.err &
CTPID=$!
wait_ct 60
[ "$CTRC" = 0 ] && pass "cachetrace exit 0" ||
	{ fail "cachetrace exit $CTRC, expected 0"; cat ct.err; }
if kill -0 $spid 2>/dev/null; then
	check_free $spid "after detach"
	check_text $spid ./$S "after detach"
	check_dr7 $spid "after detach"
else
	fail "the server ended before we could check it (cachetrace too slow?)"
fi
wait $spid; rc=$?
[ $rc -eq 0 ] && pass "server exit 0" || fail "server exit $rc"
wait $ref
cmp -s ref.out tgt.out && pass "server output equals the untraced run's" ||
	fail "server output differs: $(diff ref.out tgt.out | head -5)"

if [ -s p.cg ]; then
	w=$(windows p.cg)
	[ "$w" = 3 ] && pass "Windows: 3" || fail "Windows: '$w', expected 3"
	got=$(fn_cost p.cg handler)
	[ "$got" -eq $((3 * one)) ] && pass "handler Ir $got = 3 x $one" ||
		fail "handler Ir $got, expected 3 x $one = $((3 * one))"
	tot=$(summary p.cg)
	[ "$tot" -eq $((3 * one)) ] && pass "summary Ir $tot: handler only" ||
		fail "summary Ir $tot, expected $((3 * one)) (handler only)"
	grep -q '^desc: Partial' p.cg && fail "profile marked partial" ||
		pass "profile not partial"
	check_annotate p.cg "profile"
else
	fail "no profile p.cg"
fi

# A server that exits while traced (--intervals=0: windows until its
# end): cachetrace says so and ends with 0, and its guardian leaves
# quietly.  It used to report that cachetrace "ended without releasing"
# the process, which had exited.
./$S -t 5 100 >end.out &
spid=$!
sleep 0.1
"$CT" -q -p $spid --start=handler --intervals=0 -o end.cg 2>end.err &
CTPID=$!
wait_ct 60
wait $spid
[ "$CTRC" = 0 ] && pass "a server that exits while traced: cachetrace exit 0" ||
	fail "a server that exits while traced: cachetrace exit $CTRC: $(cat end.err)"
grep -q '^desc: Windows: *[1-9]' end.cg &&
	pass "a server that exits while traced: its windows are in the profile" ||
	fail "a server that exits while traced: no window in the profile"
sleep 0.5	# the guardian, which writes to the same stderr, has read the end
grep -q 'guard' end.err &&
	fail "a server that exits while traced: the guardian spoke: $(grep guard end.err)" ||
	pass "a server that exits while traced: the guardian leaves quietly"
finish
