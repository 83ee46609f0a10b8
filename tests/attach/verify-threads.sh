#!/bin/sh
# --threads=all with the start function run by three threads at once
# (verify.c, which checks every value it computes): a thread stopped to
# join a window just as it trapped on the start breakpoint began its
# window one byte past the int3 (or with the debug register's trap still
# queued) and computed wrong values, one run in three to ten (found with
# issue 28's test).  Each engine and breakpoint kind, three runs
# (CACHETRACE_REPEATS, tests/run.sh: one in the suite's other passes);
# cachetrace is interrupted 0.8 s in, verify told to end once it is let
# go (SIGUSR1), and it must end "ok".
. "$(dirname "$0")/lib.sh"
. "$SRCDIR/tests/host.sh"
V=vt$$
build verify $V
for eng in emulate step; do
	for bp in $(host_bp_modes "$CT"); do
		for k in $(seq 1 "${CACHETRACE_REPEATS:-3}"); do
			./$V 60 -1 3 > v.out 2> v.err &
			vp=$!
			sleep 0.05
			"$CT" -q --engine=$eng $(bp_opt $bp) -p $vp --start=work \
				--intervals=0 --threads=all -o p.cg 2> c.err &
			cp=$!
			sleep 0.8
			kill -INT $cp 2>/dev/null
			wait $cp
			kill -USR1 $vp 2>/dev/null
			wait $vp
			rc=$?
			[ $rc -eq 0 ] && grep -q '^ok' v.out &&
				pass "$eng $bp run $k: every value right" ||
				fail "$eng $bp run $k: status $rc: $(cat v.err)"
			grep -q '^desc: Windows: *[1-9]' p.cg ||
				fail "$eng $bp run $k: no window traced: $(cat c.err)"
		done
	done
done
finish
