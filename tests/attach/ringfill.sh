#!/bin/sh
# The instrument engine's ring, full: the block about to write past it
# leaves the code cache through its fill exit, a system call's stop (as
# every exit is), is read, and runs again.  A fault on a guard page did
# this before; a fault's stop that cachetrace had not collected when it
# was killed became a SIGSEGV delivered to the target, which died of it
# (tests/attach/kill9.sh, 1 run in 3 under ASan, once a loop stayed in the
# cache).  Here:
# - launched, fill()'s 50M instructions fill the ring time and again: the
#   profile is the emulate engine's, the target's output intact;
# - attached, cachetrace killed while it reads the ring at a fill
#   (CACHETRACE_FAULT=kill@ringdrain:N): the guardian runs the thread on;
# - attached, cachetrace killed with the thread standing in a stop it has
#   not collected (kill@parked:N; spin() has no exit, so the stop is a
#   fill): the server lives on.  With the guard page's fault it died of
#   SIGSEGV every time.
# - attached under --engine=lockstep:instrument, cachetrace killed with
#   the thread one byte past one of its int3s in the code cache
#   (kill@proof:N): the guardian puts the byte back and the thread on it.
#   Before it knew those int3s, the thread ran on from the byte after
#   (a wrong result or a crash, 10 kills in 16).
. "$(dirname "$0")/lib.sh"
# Where the host gives no code cache (--check; the suite's third pass
# forces it with CACHETRACE_HOST=inject=no) there is no ring: the
# instrument engine's windows are stepped, and the target is intact.
if "$CT" --check 2>/dev/null | grep -q '^code cache: .*no system call is injected'; then
	R=rf$$
	build ringfill $R
	./$R >ref || fail "untraced run"
	"$CT" --engine=instrument --start=fill --max-instructions=200000 \
		-o q.cg -- ./$R >q.out 2>q.err || fail "no code cache: status $?"
	grep -q 'single-stepped' q.err && cmp -s ref q.out &&
		[ "$(summary q.cg)" = 200000 ] &&
		pass "no code cache here: no ring, the window stepped, the target intact" ||
		fail "no code cache: $(head -2 q.err), Ir $(summary q.cg)"
	finish
fi
R=rf$$
build ringfill $R
./$R >ref || fail "untraced run"

"$CT" --engine=instrument --start=fill -o inst.cg -- ./$R >inst.out \
	2>inst.err || fail "instrument run: status $?"
"$CT" --engine=emulate --start=fill -o emu.cg -- ./$R >emu.out 2>emu.err ||
	fail "emulate run: status $?"
fills=$(sed -n 's/.* \([0-9]*\) ring fills, .*/\1/p' inst.err)
stops=$(sed -n 's/.* exits, \([0-9]*\) stops inside.*/\1/p' inst.err)
# 50M instructions, 5M records of a block of 10 with two accesses (24
# bytes): 120 MB through a 4 MiB ring.
[ "${fills:-0}" -ge 20 ] && [ "$stops" = 0 ] &&
	pass "$fills ring fills, each an exit, no stop inside" ||
	fail "ring fills '$fills', stops inside '$stops'"
cmp -s ref inst.out && pass "the target's output intact" ||
	fail "the target's output: $(head -2 inst.out)"
grep -v '^desc\|^cmd' inst.cg >inst.rows
grep -v '^desc\|^cmd' emu.cg >emu.rows
[ -s inst.rows ] && cmp -s inst.rows emu.rows &&
	pass "the profile is the emulate engine's" ||
	fail "the profiles differ: $(diff inst.rows emu.rows | head -3)"

S=rq$$
build server $S
printf 'h 1\ns 7\nh 3\n' >reqs
./$S <reqs >sref || fail "untraced server run"
for site in ringdrain parked proof; do
for n in 1 3 8; do
	eng=instrument
	[ $site = proof ] && eng=lockstep:instrument n=$((n * 700))
	what="killed at kill@$site:$n"
	rm -f req tgt.out; mkfifo req
	./$S <req >tgt.out &
	spid=$!
	exec 3>req
	echo 'h 1' >&3
	CACHETRACE_FAULT=kill@$site:$n "$CT" -q --engine=$eng \
		-p $spid --start=spin -o p.cg 2>ct.err &
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
	# (it detaches the threads first, then says so)
	for i in $(seq 1 50); do
		grep -q 'guard: cachetrace ended without releasing' ct.err &&
			break
		sleep 0.1
	done
	grep -q 'guard: cachetrace ended without releasing' ct.err &&
		pass "$what: the guardian released it" ||
		fail "$what: no word from the guardian: $(head -2 ct.err)"
	server_finish $spid sref "$what" 60
done
done

# Attached again after a session whose int3 made handler's page the
# server's own copy (restored since, the file's bytes): still code the
# cache may copy (it was stepped whole, the window 1,800x slower).
./$S -t 20 400 >tgt.out &
spid=$!
sleep 0.3
"$CT" -q --engine=instrument -p $spid --start=handler --breakpoints=sw \
	--intervals=2 -o a1.cg 2>a1.err ||
	fail "first attach: status $?: $(head -2 a1.err)"
"$CT" --engine=instrument -p $spid --start=handler --intervals=2 -o a2.cg \
	2>a2.err ||
	fail "second attach: status $?: $(head -2 a2.err)"
n=$(sed -n 's/.*Engine: instrument: \([0-9]*\) instructions from the code cache.*/\1/p' a2.err)
st=$(sed -n 's/.*stops inside), \([0-9]*\) stepped.*/\1/p' a2.err)
[ "${n:-0}" -gt 0 ] && [ "${st:-1}" -lt 10 ] &&
	pass "attached again: $n from the cache, $st stepped" ||
	fail "attached again: '$n' from the cache, '$st' stepped"
kill $spid 2>/dev/null
wait $spid 2>/dev/null
finish
