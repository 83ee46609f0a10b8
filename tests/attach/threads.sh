#!/bin/sh
# Two threads take turns calling work(), 3 calls each: every one of the 6
# hits is caught, with hardware breakpoints (per thread, set in threads
# that exist at attach and in threads created later) and with int3:
# --intervals=6 gives 6 windows whose work Ir equals Cachegrind's work Ir
# for the whole run, and nothing but work is counted.
. "$(dirname "$0")/lib.sh"
. "$SRCDIR/tests/host.sh"
BP_MODES=$(host_bp_modes "$CT")
T=th$$
build threads $T
./$T alt 3 >native.out || fail "native run"
vg_run ./$T alt 3
vg_ref want work
echo "Cachegrind: work over 6 calls = $want Ir"

check_profile() {	# check_profile FILE WHAT
	[ -s "$1" ] || { fail "$2: no profile"; return; }
	w=$(windows "$1")
	[ "$w" = 6 ] && pass "$2: Windows: 6" || fail "$2: Windows: '$w', expected 6"
	got=$(fn_cost "$1" work)
	[ "$got" -eq "$want" ] && pass "$2: work Ir $got" ||
		fail "$2: work Ir $got, expected $want"
	tot=$(summary "$1")
	[ "$tot" -eq "$want" ] && pass "$2: summary Ir $tot: work only" ||
		fail "$2: summary Ir $tot, expected $want (work only)"
}

for bp in $BP_MODES; do
	what="launch $(bp_opt $bp)"
	"$CT" -q $(bp_opt $bp) --start=work --intervals=6 -o p.cg \
		-- ./$T alt 3 >tgt.out 2>ct.err &
	CTPID=$!
	wait_ct 120 || fail "$what: hung, killed after 120 s"
	[ "$CTRC" = 0 ] && pass "$what: exit 0" ||
		{ fail "$what: exit $CTRC"; cat ct.err; }
	cmp -s native.out tgt.out && pass "$what: output intact" ||
		fail "$what: output differs: $(cat tgt.out)"
	check_profile p.cg "$what"
	rm -f p.cg
done

for bp in $BP_MODES; do
	what="attach $(bp_opt $bp)"
	rm -f req p.cg; mkfifo req
	./$T alt 3 -w <req >tgt.out &
	tpid=$!
	exec 3>req
	for i in $(seq 1 50); do grep -q ready tgt.out && break; sleep 0.1; done
	"$CT" -q -p $tpid $(bp_opt $bp) --start=work --intervals=6 \
		-o p.cg 2>ct.err &
	CTPID=$!
	wait_traced $tpid || fail "$what: never attached"
	wait_armed $tpid || fail "$what: the target was never let go"
	echo go >&3
	exec 3>&-
	wait_ct 120 || fail "$what: hung, killed after 120 s"
	[ "$CTRC" = 0 ] && pass "$what: exit 0" ||
		{ fail "$what: exit $CTRC"; cat ct.err; }
	wait_gone $tpid 20 || fail "$what: the target did not finish"
	wait $tpid
	{ echo ready; cat native.out; } | cmp -s - tgt.out &&
		pass "$what: output intact" ||
		fail "$what: output differs: $(cat tgt.out)"
	check_profile p.cg "$what"
done

# A thread made inside a window has its creator's own CPUs after it,
# not the one its creator was pinned to for the window, every engine.
B=bn$$
build born $B
./$B >born.ref || fail "born: native run"
for e in instrument step emulate; do
	"$CT" -q --engine=$e --start=work -o born.cg -- ./$B >born.out \
		2>born.err || fail "born $e: status $?: $(head -2 born.err)"
	cmp -s born.ref born.out &&
		pass "born $e: the new thread's CPUs as natively: $(cat born.out)" ||
		fail "born $e: the new thread's $(cat born.out), natively $(cat born.ref)"
done
finish
