#!/bin/sh
# Issue 10, 2 and 6: every signal whose default action would kill
# cachetrace ends the run cleanly: the attached target is released
# (running, not stopped, no int3, no trap flag), the profile so far is
# written, the exit status is 128+N.  SIGPIPE is a write error, never a
# death that leaves the target stopped; -o FIFO without a reader never
# freezes the target.
. "$(dirname "$0")/lib.sh"
. "$SRCDIR/tests/host.sh"
BP_MODES=$(host_bp_modes "$CT")
start_target loop || finish
# A background job of a script starts with SIGINT and SIGQUIT ignored:
# cachetrace handles them all the same.
for sig in QUIT USR1 USR2 ALRM TERM HUP INT XCPU PROF; do
	for bp in $BP_MODES; do
		"$CT" $G -p "$TP" --start=work --intervals=0 $(bp_opt $bp) \
			-o s.cg 2> s.err &
		C=$!
		# attached, and a few of its windows run
		wait_traced "$TP" || fail "SIG$sig/$bp: never attached"
		sleep 0.2
		kill -$sig $C
		wait $C
		rc=$?
		num=$(for i in $(seq 1 64); do [ "$(kill -l $i 2>/dev/null)" = $sig ] && echo $i; done)
		expect "SIG$sig/$bp: cachetrace's status" $rc $((128 + num))
		alive "$TP" || { fail "SIG$sig/$bp: the target died"; break 2; }
		expect "SIG$sig/$bp: the target" "$(traced_state "$TP")" running
		grep -q "^desc: Partial profile: *interrupted" s.cg ||
			fail "SIG$sig/$bp: no partial profile"
	done
done
# SIGPIPE: the profile goes to a closed pipe after the target is released.
# The pipeline's status is true's: cachetrace's goes through a file.
sh -c "\"$CT\" $G -p $TP --start=work --intervals=3 -o -; echo \$? > p.rc" \
	2> p.err | true
expect "SIGPIPE: cachetrace's status (a write error)" "$(cat p.rc)" 1
grep -q "Broken pipe" p.err || fail "SIGPIPE: no write error reported"
alive "$TP" || fail "SIGPIPE: the target died"
expect "SIGPIPE: the target" "$(traced_state "$TP")" running
# -o FIFO: nobody reads until the windows are done; the target runs on.
mkfifo fifo
"$CT" $G -p "$TP" --start=work --intervals=3 -o fifo 2> f.err &
C=$!
sleep 2
alive "$TP" || fail "FIFO: the target died"
expect "FIFO, no reader yet: the target" "$(traced_state "$TP")" running
cat fifo > f.cg
wait $C
expect "FIFO: cachetrace's status" $? 0
grep -q "^summary:" f.cg || fail "FIFO: no profile came through"
stop_target || fail "the target died"
finish
