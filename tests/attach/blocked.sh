#!/bin/sh
# A toggle window that begins while the target waits in a system call
# (nanosleep; once the attach has interrupted it, the kernel's
# restart_syscall) and ends before the call returns: the thread runs no
# instruction in it.  cachetrace says so, naming the call, rather than
# showing an empty window silently; the target is unharmed (its sleep
# finishes, its output is whole, it exits 0), and cachetrace exits 0.
. "$(dirname "$0")/lib.sh"
S=bl$$
build sleeper $S
./$S 3 >tgt.out &
spid=$!
sleep 0.2
"$CT" -p $spid --toggle-signal=SIGUSR2 -o p.cg 2>ct.err &
CTPID=$!
wait_traced $spid || fail "never attached"
wait_armed $spid || fail "the target was never let go"
kill -USR2 $CTPID
sleep 1
kill -USR2 $CTPID
wait_ct 30 || fail "cachetrace did not end after the second SIGUSR2"
[ "$CTRC" = 0 ] && pass "exit 0" || { fail "exit $CTRC"; cat ct.err; }
grep -Eq "note: thread $spid ran no instruction in window 1: it spent the window in the system call it was waiting in when the window began \((clock_)?nanosleep|restart_syscall: a sleep or wait resumed after an interruption\)" ct.err &&
	pass "$(grep -o 'note: thread.*' ct.err)" ||
	{ fail "no note naming the system call"; cat ct.err; }
grep -q 'Traced 0 instructions' ct.err && pass "0 instructions" ||
	fail "$(grep -o 'Traced .*' ct.err)"
wait $spid; rc=$?
[ $rc -eq 0 ] && pass "target exit 0" || fail "target exit $rc"
[ "$(cat tgt.out)" = "$(printf 'waiting\ndone')" ] && pass "target output whole" ||
	fail "target output: $(cat tgt.out)"
finish
