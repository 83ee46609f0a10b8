#!/bin/sh
# --threads=all steps every thread: main's fa() wakes thread B, which runs
# fb() while fa waits for it; both appear, each with Cachegrind's Ir.
# With --threads=hit (the default) only fa's thread is stepped: no fb.
. "$(dirname "$0")/lib.sh"
T=ta$$
build threads $T
./$T all >native.out || fail "native run"
vg_run ./$T all
vg_ref fa fa; vg_ref fb fb
echo "Cachegrind: fa $fa Ir, fb $fb Ir"
for mode in all hit; do
	rm -f p.cg
	"$CT" -q --threads=$mode --start=fa -o p.cg -- ./$T all \
		>tgt.out 2>ct.err &
	CTPID=$!
	wait_ct 60 || fail "$mode: hung, killed after 60 s"
	[ "$CTRC" = 0 ] && pass "$mode: exit 0" ||
		{ fail "$mode: exit $CTRC"; cat ct.err; }
	cmp -s native.out tgt.out && pass "$mode: output intact" ||
		fail "$mode: output differs: $(cat tgt.out)"
	[ -s p.cg ] || { fail "$mode: no profile"; continue; }
	got=$(fn_cost p.cg fa)
	[ "$got" -eq "$fa" ] && pass "$mode: fa Ir $got" ||
		fail "$mode: fa Ir $got, expected $fa"
	got=$(fn_cost p.cg fb)
	[ $mode = all ] && exp=$fb || exp=0
	[ "$got" -eq "$exp" ] && pass "$mode: fb Ir $got" ||
		fail "$mode: fb Ir $got, expected $exp"
done
finish
