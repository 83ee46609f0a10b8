#!/bin/sh
# Launch mode: ASLR off by default (two runs print the same stack and mmap
# addresses), on with --aslr=on (they differ, as native runs do here).
. "$(dirname "$0")/lib.sh"
# Without ASLR on the host --aslr=on cannot be told from off: that is a
# test machine that cannot check the option, a failure, not a skip.
[ "$(cat /proc/sys/kernel/randomize_va_space)" != 0 ] ||
	{ fail "ASLR is disabled on this system (kernel.randomize_va_space=0)"; finish; }
P=sl$$
build stackaddr $P
./$P >n1; ./$P >n2
cmp -s n1 n2 &&
	{ fail "native runs print the same addresses: no ASLR here"; finish; }
run() {	# run OUT OPTIONS...
	o=$1; shift
	"$CT" -q "$@" --start=marker -o p.cg -- ./$P >$o 2>ct.err ||
		{ fail "exit $? with $*"; cat ct.err; }
	grep -q '^stack 0x' $o || fail "no address printed: $(cat $o)"
}
run d1; run d2
cmp -s d1 d2 && pass "default: same addresses: $(cat d1)" ||
	fail "default: addresses differ: $(cat d1) / $(cat d2)"
run o1 --aslr=off; run o2 --aslr=off
cmp -s o1 o2 && pass "--aslr=off: same addresses" ||
	fail "--aslr=off: addresses differ: $(cat o1) / $(cat o2)"
run r1 --aslr=on; run r2 --aslr=on
cmp -s r1 r2 && fail "--aslr=on: same addresses: $(cat r1)" ||
	pass "--aslr=on: addresses differ: $(cat r1) / $(cat r2)"
finish
