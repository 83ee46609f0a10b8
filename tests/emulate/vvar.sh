#!/bin/sh
# The vDSO's clock data shared with the emulator (src/engine/emumem.c,
# emumem_share_vvar): clock.c reads the monotonic clock 500 times in its
# window.  Shared, the clock is right (never back, the real-time clock
# within a second of time(2)) and no read of [vvar] is a real step: at
# most one per call is left (rdtscp, or the system call where the host's
# clock source is not the TSC).  Not shared (CACHETRACE_HOST=vvar=no:
# every vvar read a real step, as before) and under lockstep (which never
# shares: the clock moves between the two reads it compares), right too.
#   vvar.sh CACHETRACE SRCDIR SCRATCH
. "$(dirname "$0")/lib.sh"
cc -O2 -g -fno-pie -no-pie -o clock "$SRCDIR/tests/emulate/clock.c" ||
	{ echo "FAIL: cannot build clock.c"; exit 1; }
N=500
run() {	# run NAME [ENV] OPTIONS... (CALLS: the window's reads, else N)
	n=$1 env=$2; shift 2
	env $env "$CT" --start=work -o "$n.cg" "$@" -- ./clock ${CALLS:-$N} \
		> "$n.out" 2> "$n.err" || fail "$n: exit $?: $(tail -3 "$n.err")"
	[ "$(cat "$n.out")" = "bad 0" ] && pass "$n: the clock held" ||
		fail "$n: $(cat "$n.out")"
}
real() { sed -n 's/.*, \([0-9][0-9]*\) on the real CPU.*/\1/p' "$1.err"; }
run shared CACHETRACE_HOST= --engine=emulate
run apart CACHETRACE_HOST=vvar=no --engine=emulate
# lockstep over 10 reads and at most 30,000 instructions: each is
# stepped, and where the clock source is kvm-clock its version moves under
# the steps and the vDSO reads again (a 2-vCPU KVM guest: 4k-49k
# instructions over 10 reads, 581k under the suite's load, 834k over 30)
CALLS=10 run lockstep CACHETRACE_HOST= --engine=lockstep \
	--max-instructions=30000
r=$(real shared)
[ -n "$r" ] && [ "$r" -le $((N + 100)) ] &&
	pass "shared: $r instructions on the real CPU for $N calls" ||
	fail "shared: ${r:-?} instructions on the real CPU for $N calls"
grep -q 'Lockstep: [1-9][0-9]* instructions compared, 0 divergences' \
	lockstep.err && pass "lockstep: $(grep -o 'Lockstep: .*' lockstep.err)" ||
	fail "lockstep: $(grep -o 'Lockstep: .*' lockstep.err)"
finish
