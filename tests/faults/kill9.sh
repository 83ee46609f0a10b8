#!/bin/sh
# Issue 10, 4: kill -9 of cachetrace.  A launched target dies with it of
# SIGKILL (PTRACE_O_EXITKILL), never of a SIGTRAP from a trap flag or an
# int3 left behind; in every phase (waiting for the start, stepping).
. "$(dirname "$0")/lib.sh"
. "$SRCDIR/tests/host.sh"
BP_MODES=$(host_bp_modes "$CT")
for phase in waiting stepping; do
	for bp in $BP_MODES; do
		if [ $phase = waiting ]; then start=handle_request; else start=work; fi
		# loop: work() every 10 ms; waiting: a start never reached
		[ $phase = waiting ] && start=work_exit
		./reaper "$CT" $G --start=$start --intervals=0 $(bp_opt $bp) \
			-o k.cg -- ./"$T" loop > /dev/null 2> reap.txt &
		R=$!
		sleep 1.5
		C=$(pgrep -P $R)
		kill -9 "$C"
		wait $R
		fate=$(grep -v '^cmd' reap.txt | awk '{print $2, $3}')
		expect "$phase/$bp: the launched target's fate" "$fate" "signal 9"
	done
done
finish
