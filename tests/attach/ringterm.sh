#!/bin/sh
# A signal to an attached cachetrace while the instrument engine's thread
# runs in its code cache.  The signal is often acted on at the thread's
# next stop, which is the ring guard's SIGSEGV (the probe at a block's
# start) when the ring fills: the stop of every thread at the release then
# took it for a signal to deliver at the detach, and the server died
# (status 139; 3 runs in 15 with everything on one CPU, before 2fffc94).
# It is ours: the server must live on, each time, everything
# on one CPU as there.
. "$(dirname "$0")/lib.sh"
S=rt$$
build server $S
printf 'h 1\ns 7\nh 3\n' >reqs
./$S <reqs >ref || fail "untraced run"

# Twelve times; once each signal in the suite's other passes
# (CACHETRACE_REPEATS=1, tests/run.sh).
sigs="TERM INT HUP TERM INT HUP TERM INT HUP TERM INT HUP"
[ "${CACHETRACE_REPEATS:-3}" -lt 3 ] && sigs="TERM INT HUP"
for sig in $sigs; do
	what="$sig in the cache"
	rm -f p.cg tgt.out req; mkfifo req
	taskset -c 0 ./$S <req >tgt.out &
	spid=$!
	exec 3>req
	echo 'h 1' >&3
	taskset -c 0 "$CT" -q --engine=instrument -p $spid --start=spin \
		-o p.cg 2>ct.err &
	CTPID=$!
	wait_traced $spid || fail "$what: cachetrace never attached"
	wait_armed $spid || fail "$what: the target was never let go"
	echo 's 7' >&3
	sleep 0.3
	kill -s $sig $CTPID
	wait_ct 30
	server_free $spid "$what"
	server_finish $spid ref "$what" 20
	[ "$(fn_cost p.cg spin)" -gt 0 ] 2>/dev/null &&
		pass "$what: spin was counted" ||
		fail "$what: no spin cost in the profile"
done
finish
