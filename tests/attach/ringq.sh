#!/bin/sh
# The ring guard's SIGSEGV still queued for a thread that cachetrace has
# put back at its original code: our interrupt stopped the thread after
# the probe's fault but before it took the signal (the kernel reports an
# interrupt first).  The signal then came at the thread's next run, as a
# fault of the program's own, or after a kill -9 of cachetrace, and the
# target died of it (tests/attach/kill9.sh, 1 trial in 174).  No test can
# time that race: CACHETRACE_TEST_RING_QUEUED ends every ring fault in
# that state.  It must be dropped by cachetrace (the profile as without the
# hook, the target's output intact) and by the guardian when cachetrace
# is killed right there (CACHETRACE_FAULT=kill@ringq:N).
# And the ordinary case: the thread held in the guard's delivery stop
# while cachetrace drains the ring, cachetrace killed then
# (kill@ringdrain:N): the guardian finds it at the probe and runs it on.
. "$(dirname "$0")/lib.sh"
# Where the host gives no code cache (--check; the suite's third pass
# forces it with CACHETRACE_HOST=inject=no) there is no ring: the
# instrument engine's windows are stepped, which the hook leaves alone.
if "$CT" --check 2>/dev/null | grep -q '^code cache: .*no system call is injected'; then
	R=rf$$
	build ringfill $R
	./$R >ref || fail "untraced run"
	CACHETRACE_TEST_RING_QUEUED=1 "$CT" --engine=instrument \
		--start=fill --max-instructions=200000 -o q.cg -- ./$R >q.out \
		2>q.err || fail "no code cache: status $?"
	grep -q 'single-stepped' q.err && cmp -s ref q.out &&
		[ "$(summary q.cg)" = 200000 ] &&
		pass "no code cache here: no ring, the window stepped, the target intact" ||
		fail "no code cache: $(head -2 q.err), Ir $(summary q.cg)"
	finish
fi
R=rf$$
build ringfill $R
./$R >ref || fail "untraced run"

# Launched: fill()'s 50M instructions fill the ring time and again.
"$CT" --engine=instrument --start=fill -o plain.cg -- ./$R >plain.out \
	2>plain.err || fail "plain run: status $?"
CACHETRACE_TEST_RING_QUEUED=1 "$CT" --engine=instrument --start=fill \
	-o queued.cg -- ./$R >queued.out 2>queued.err ||
	fail "queued run: status $?"
stops=$(sed -n 's/.*(.* exits, \([0-9]*\) stops inside).*/\1/p' queued.err)
[ "${stops:-0}" -ge 5 ] && pass "$stops ring faults, each left queued" ||
	fail "the ring was not filled: '$stops' stops inside"
grep -q 'killed by signal' queued.err &&
	fail "queued: $(grep 'killed by signal' queued.err)"
cmp -s ref queued.out && pass "the target's output intact" ||
	fail "the target's output: $(head -2 queued.out)"
grep -v '^desc\|^cmd' plain.cg >plain.rows
grep -v '^desc\|^cmd' queued.cg >queued.rows
[ -s plain.rows ] && cmp -s plain.rows queued.rows &&
	pass "the profile is the plain run's" ||
	fail "the profiles differ: $(diff plain.rows queued.rows | head -3)"

# Attached, cachetrace killed with the signal queued (at the 1st, 3rd and
# 8th ring fault): the guardian drops it, the server lives on.
S=rq$$
build server $S
printf 'h 1\ns 7\nh 3\n' >reqs
./$S <reqs >sref || fail "untraced server run"
for how in queued drain; do
for n in 1 3 8; do
	what="killed at ring fault $n ($how)"
	rm -f req tgt.out; mkfifo req
	./$S <req >tgt.out &
	spid=$!
	exec 3>req
	echo 'h 1' >&3
	if [ $how = queued ]; then
		CACHETRACE_TEST_RING_QUEUED=1 CACHETRACE_FAULT=kill@ringq:$n \
			"$CT" -q --engine=instrument -p $spid --start=spin \
			-o p.cg 2>ct.err &
	else
		CACHETRACE_FAULT=kill@ringdrain:$n "$CT" -q \
			--engine=instrument -p $spid --start=spin -o p.cg \
			2>ct.err &
	fi
	CTPID=$!
	wait_traced $spid || fail "$what: cachetrace never attached"
	wait_armed $spid || fail "$what: the target was never let go"
	echo 's 7' >&3
	wait_ct 60
	[ "$CTRC" = 137 ] && pass "$what: cachetrace was killed there" ||
		fail "$what: cachetrace's status $CTRC"
	for i in $(seq 1 50); do
		[ "$(proc_field $spid TracerPid)" = 0 ] && break
		sleep 0.1
	done
	server_free $spid "$what"
	grep -q 'guard: cachetrace ended without releasing' ct.err &&
		pass "$what: the guardian released it" ||
		fail "$what: no word from the guardian: $(head -2 ct.err)"
	server_finish $spid sref "$what" 60
done
done
finish
