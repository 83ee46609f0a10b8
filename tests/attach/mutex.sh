#!/bin/sh
# The stepped thread blocks on a mutex that another (unstepped) thread
# holds for 300 ms: it must get the mutex and finish (no hang), and the
# window counts one work() call, as many Ir as under Cachegrind.
. "$(dirname "$0")/lib.sh"
T=mx$$
build threads $T
./$T mutex >native.out || fail "native run"
vg_run ./$T mutex
vg_ref want work
"$CT" -q --start=locked_work -o p.cg -- ./$T mutex >tgt.out 2>ct.err &
CTPID=$!
wait_ct 60 || fail "hung: killed after 60 s"
[ "$CTRC" = 0 ] && pass "exit 0" || { fail "exit $CTRC"; cat ct.err; }
cmp -s native.out tgt.out && pass "output intact" ||
	fail "output differs: $(cat tgt.out)"
if [ -s p.cg ]; then
	got=$(fn_cost p.cg work)
	[ "$got" -eq "$want" ] && pass "work Ir $got" ||
		fail "work Ir $got, expected $want"
	[ "$(fn_cost p.cg __lll_lock_wait)" -gt 0 ] &&
		pass "it waited in __lll_lock_wait (contended)" ||
		fail "no __lll_lock_wait in the window: it never blocked"
else
	fail "no profile"
fi
finish
