#!/bin/sh
# The target is killed (SIGKILL) in the middle of a window: cachetrace
# writes the profile so far, marked partial, and exits 0 (attach mode).
. "$(dirname "$0")/lib.sh"
S=kl$$
build server $S
rm -f req; mkfifo req
./$S <req >tgt.out &
spid=$!
exec 3>req
echo 'h 1' >&3
"$CT" -q -p $spid --start=spin -o p.cg 2>ct.err &
CTPID=$!
wait_traced $spid || fail "cachetrace never attached"
wait_armed $spid || fail "the target was never let go"
echo 's 1' >&3
wait_stepping $spid || fail "spin was never stepped"
sleep 0.5
kill -9 $spid
wait_ct 30
[ "$CTRC" = 0 ] && pass "exit 0" ||
	{ fail "exit $CTRC, expected 0"; cat ct.err; }
exec 3>&-
wait $spid 2>/dev/null
if [ -s p.cg ]; then
	grep -q '^desc: Partial profile: ' p.cg &&
		pass "profile marked partial: $(grep '^desc: Partial' p.cg)" ||
		fail "profile not marked partial"
	[ "$(fn_cost p.cg spin)" -gt 0 ] && pass "spin counted" ||
		fail "no spin cost in the profile"
	check_annotate p.cg "profile"
else
	fail "no profile written"
fi
finish
