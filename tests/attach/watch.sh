#!/bin/sh
# Data watchpoints: --start-watch=counter begins after the instruction that
# writes counter (set_counter is that store and a ret: only the ret is
# counted), so before() is not counted and after() is, in full. The
# window ends at --stop=tail (tail not counted), or after the store of
# --stop-watch=done (set_done's store counted, its ret not; no tail).
# Expected Ir from Cachegrind on the same binary.
. "$(dirname "$0")/lib.sh"
P=wa$$
build watch $P
n=$(objdump -d --no-show-raw-insn ./$P |
	awk '/<set_counter>:/ { f = 1; next } f && /^$/ { exit }
		f && /:\t/ && !/nop/ { n++ } END { print n }')
[ "$n" = 2 ] || { echo "set_counter is $n instructions, not 2"; exit 1; }
./$P >native.out
vg_run ./$P
vg_ref after after

run() {	# run WHAT OPTIONS...
	what=$1; shift
	rm -f p.cg
	"$CT" -q "$@" -o p.cg -- ./$P >tgt.out 2>ct.err &
	CTPID=$!
	wait_ct 60 || fail "$what: hung"
	[ "$CTRC" = 0 ] && pass "$what: exit 0" ||
		{ fail "$what: exit $CTRC"; cat ct.err; }
	cmp -s native.out tgt.out && pass "$what: output intact" ||
		fail "$what: output differs"
	[ -s p.cg ] || fail "$what: no profile"
}
expect() {	# expect WHAT FN IR
	got=$(fn_cost p.cg $2)
	[ "$got" -eq "$3" ] && pass "$1: $2 Ir $got" ||
		fail "$1: $2 Ir $got, expected $3"
}

. "$SRCDIR/tests/host.sh"
if ! host_hwbp "$CT"; then
	# No debug register fires here (or CACHETRACE_HOST=hwbp=no): every
	# data start event is refused at once, with the reason, before the
	# program runs; never a wait for a trap that cannot come.
	echo "note: the debug registers do not fire on this host: testing the fallback (--start-watch refused)"
	for w in counter counter:4:w; do
		rm -f p.cg
		start=$(date +%s)
		"$CT" -q --start-watch=$w --stop=tail -o p.cg -- ./$P \
			>tgt.out 2>ct.err
		rc=$? secs=$(( $(date +%s) - start ))
		[ $rc = 1 ] && pass "--start-watch=$w: exit 1" ||
			fail "--start-watch=$w: exit $rc"
		[ "$(wc -l <ct.err)" = 1 ] &&
		    grep -q "start-watch needs a hardware watchpoint.*do not fire" ct.err &&
			pass "--start-watch=$w: one line: $(cat ct.err)" ||
			{ fail "--start-watch=$w: message"; cat ct.err; }
		[ $secs -le 5 ] && pass "--start-watch=$w: refused at once" ||
			fail "--start-watch=$w: took $secs s"
		[ ! -e p.cg ] && [ ! -s tgt.out ] &&
			pass "--start-watch=$w: no profile, the program not run" ||
			fail "--start-watch=$w: a profile or the program's output"
	done
	# --stop-watch needs no debug register: it still ends a window.
	run "stop-watch (sw)" --start=main --stop-watch=done
	expect "stop-watch (sw)" after "$after"
	expect "stop-watch (sw)" set_done 1
	expect "stop-watch (sw)" tail 0
	finish
fi

run "start-watch" --start-watch=counter --stop=tail
expect "start-watch" before 0
expect "start-watch" set_counter 1
expect "start-watch" after "$after"
expect "start-watch" tail 0
w=$(windows p.cg)
[ "$w" = 1 ] && pass "start-watch: Windows: 1" || fail "start-watch: Windows: '$w'"

run "start-watch :w" --start-watch=counter:4:w --stop=tail
expect "start-watch :w" set_counter 1
expect "start-watch :w" after "$after"

run "stop-watch" --start-watch=counter --stop-watch=done
expect "stop-watch" set_counter 1
expect "stop-watch" after "$after"
expect "stop-watch" set_done 1
expect "stop-watch" tail 0
finish
