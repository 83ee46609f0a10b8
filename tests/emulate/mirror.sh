#!/bin/sh
# The emulator's copy of the target's memory (issue 27, item 5): read
# ahead where first touches run on in address order, and bounded by
# --mirror-budget (the clean pages read first dropped, read again when
# used).  pages.c's window touches 24 MiB: under the step engine (no
# copy: the oracle), emulated without a bound and emulated within 4 MiB,
# the profiles are the same but for the Engine line, the program's output
# is the native one, and the bounded run dropped pages.
#   mirror.sh CACHETRACE SRCDIR SCRATCH
. "$(dirname "$0")/lib.sh"
cc -O2 -g -fno-pie -no-pie -o pages "$SRCDIR/tests/emulate/pages.c" ||
	{ echo "FAIL: cannot build pages.c"; exit 1; }
./pages > native.out || fail "native run: exit $?"
G="--I1=32768,8,64 --D1=32768,8,64 --LL=8388608,16,64"
run() {	# run NAME OPTIONS...
	n=$1; shift
	"$CT" $G --start=work -o "$n.cg" "$@" -- ./pages > "$n.out" 2> "$n.err" ||
		fail "$n: exit $?: $(tail -3 "$n.err")"
	cmp -s native.out "$n.out" && pass "$n: the program's output is the native one" ||
		fail "$n: output $(cat "$n.out"), natively $(cat native.out)"
	grep -v '^desc: Engine:' "$n.cg" > "$n.body"
}
run step --engine=step
run whole --engine=emulate --mirror-budget=0
run bounded --engine=emulate --mirror-budget=4M
for n in whole bounded; do
	cmp -s step.body $n.body && pass "$n: the step engine's profile" ||
		fail "$n: the profile differs from the step engine's"
done
d=$(sed -n 's/.* \([0-9][0-9]*\) dropped past the mirror budget.*/\1/p' bounded.err)
[ -n "$d" ] && [ "$d" -gt 0 ] && pass "bounded: $d pages dropped past 4 MiB" ||
	fail "bounded: nothing dropped: $(grep Engine: bounded.err)"
grep -q 'dropped past' whole.err && fail "whole: pages dropped without a bound"
r=$(sed -n 's/.*; \([0-9][0-9]*\) pages read.*/\1/p' whole.err)
[ -n "$r" ] && [ "$r" -ge 6144 ] && pass "whole: $r pages read" ||
	fail "whole: $(grep Engine: whole.err)"
"$CT" --mirror-budget=12q --start=work -- ./pages > /dev/null 2> bad.err
[ $? -eq 2 ] && grep -q "^cachetrace: --mirror-budget: '12q' is not a size" bad.err &&
	pass "--mirror-budget=12q: bad usage" || fail "--mirror-budget=12q: $(cat bad.err)"
finish
