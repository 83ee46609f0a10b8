#!/bin/sh
# An instruction that faults where our own CPU runs it for the emulate
# engine (native.c: VEX code) goes to the thread's real CPU, which raises
# the signal in the thread: the program prints what it prints natively
# ("caught SIGFPE" / "caught SIGSEGV") and exits 0, and cachetrace, its
# MXCSR restored after the thread's unmasked division by zero, finishes
# the run and writes the profile.
. "$(dirname "$0")/lib.sh"
build native-fault
for mode in fpe segv; do
	./native-fault $mode >native-$mode.out
	"$CT" --engine=emulate --start=work -o $mode.cg -- ./native-fault $mode \
		>$mode.out 2>$mode.err
	rc=$?
	[ $rc -eq 0 ] && pass "$mode: exit 0" ||
		fail "$mode: exit $rc: $(tail -3 $mode.err)"
	cmp -s native-$mode.out $mode.out &&
		pass "$mode: output '$(cat $mode.out)' as natively" ||
		fail "$mode: output '$(cat $mode.out)', natively '$(cat native-$mode.out)'"
	grep -q '^summary:' $mode.cg && pass "$mode: profile written" ||
		fail "$mode: no profile"
done
finish
