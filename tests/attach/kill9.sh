#!/bin/sh
# Issue 28: kill -9 of cachetrace never harms an attached target.  verify
# (verify.c) checks its own computation and dies of any stray signal; it
# is attached in every engine and breakpoint kind and phase (waiting for
# the start with the breakpoint armed; a loop of windows; one long window;
# --threads=all with three threads; --sample's windows), and then:
#   - cachetrace, the process the shell started, is killed by SIGKILL at a
#     random moment (at least 100 kills): its tracer releases the target
#     in order (a partial profile is written);
#   - the tracer crashes (CACHETRACE_FAULT: abort() or a faulting
#     instruction at a random event): its crash handler releases it;
#   - the tracer itself is killed by SIGKILL (the OOM killer's way) while
#     it emulates a long window, or halfway through writing the emulator's
#     memory and registers back (CACHETRACE_FAULT=kill@wb): the guardian
#     process releases it, the write-back redone from its journal; or
#     while the instrument engine's thread runs in its code cache: the
#     guardian runs it out of the cache; or while the native engine's
#     windows run with its stop event's int3 in the target.
# Every time, verify must run to its end and print "ok" (exit 0), never
# stopped, never killed, and once let go every thread must have its own
# CPUs again (not the tracer's, to which a window pins it).  Trials run
# three at a time (run_trials).
. "$(dirname "$0")/lib.sh"
. "$SRCDIR/tests/host.sh"
V=vf$$
build verify $V
BP_MODES=$(host_bp_modes "$CT")
KILLS=${CACHETRACE_KILLS:-80}

# trial N ENGINE BP PHASE KIND: one target, one cachetrace, one death.
trial() {
	n=$1 eng=$2 bp=$3 ph=$4 kind=$5
	# Random numbers from /dev/urandom: the kill time (ms) and the
	# crash's event.
	r=$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')
	threads=1 phase_at=-1 opts="--start=work --intervals=0"
	case $ph in
	waiting) opts="--start=phase"; phase_at=30 ;;	# never reached
	long) opts="--start=phase"; phase_at=0 ;;
	threads) opts="--start=work --intervals=0 --threads=all"; threads=3 ;;
	toggle) opts="--toggle-signal=SIGUSR2" ;;	# no breakpoint at all
	# samples of 50,000 instructions (10,000 a warm-up) every 2 ms of
	# the target's CPU time: windows begun wherever it stands
	sampled) opts="--sample=2ms:50k:10k --sample-budget=100%" ;;
	esac
	ms=$((100 + r % 500))
	[ "$kind" = worker ] && ms=$((150 + r % 200))
	# (sampled: past the first sample, whose calls injected to map the
	# rings and caches are single steps: a trap taken just before the
	# kill is the limitation the README states; the later samples take
	# none, their stops system calls and interrupts.  So from the moment
	# the code cache is mapped in the target, whenever that is: under
	# the sanitizer, attaching alone may take half a second.)
	[ "$kind" = worker ] && [ "$ph" = sampled ] && ms=$((200 + r % 300))
	env=""
	[ "$kind" = abort ] && env="CACHETRACE_FAULT=abort:$((1 + r % 400))"
	[ "$kind" = trap ] && env="CACHETRACE_FAULT=trap:$((1 + r % 400))"
	# (write-backs: one a window; under the sanitizer pass, three trials
	# at a time, a trial's loop has made fewer than 300 in one CI run)
	[ "$kind" = wb ] && env="CACHETRACE_FAULT=kill@wb:$((1 + r % 100))"
	# (a toggle window's first entry into the code cache injects about
	# 40 calls: the rings, the caches)
	[ "$kind" = inject ] && env="CACHETRACE_FAULT=kill@inject:$((1 + r % 30))"
	# The target loops until told (SIGUSR1) once it is let go, so that
	# every kill lands while it still loops: one that lands while the
	# target's exit is stepped (its system calls, an xsavec: the
	# instrument engine steps them) is the limitation --check states (a
	# trap taken in the tracer's last microseconds: with a fixed 0.6 s
	# run the target died of that step's SIGTRAP in 5 of 330 such trials
	# of the sanitizer build, where attaching alone had taken most of
	# it).  60 s: a bound, never reached but by a failure.
	./$V 60 $phase_at $threads > v$n.out 2> v$n.err &
	vp=$!
	aff=$(proc_field $vp Cpus_allowed_list)
	sleep 0.05
	env $env "$CT" -q --engine=$eng $(bp_opt $bp) -p $vp $opts \
		-o p$n.cg > /dev/null 2> c$n.err &
	cp=$!
	if [ "$ph" = sampled ] && [ "$kind" = worker ]; then
		for k in $(seq 1 200); do
			grep -q 'cachetrace-code' /proc/$vp/maps 2>/dev/null && break
			sleep 0.05
		done
	fi
	if [ "$ph" = toggle ]; then
		# the window opened once attached: it runs until the kill
		wait_traced $vp
		sleep 0.1
		kill -USR2 $cp 2>/dev/null
	fi
	sleep $(awk -v m=$ms 'BEGIN { printf "%.3f", m / 1000 }')
	case $kind in
	front) kill -9 $cp 2>/dev/null ;;
	worker) kill -9 $(pgrep -P $cp) 2>/dev/null ;;
	esac
	# Once let go (by the tracer or its guardian), every thread has its
	# own CPUs again: none left pinned to the tracer's (checked while
	# the target still runs; the kernel lets the threads go at the
	# tracer's death and the guardian takes them back, so a pin is a
	# harm only if it lasts: 1 s at most).  A crash (abort, trap) comes
	# at an event of the first 400, a kill at once: cachetrace gone, no
	# tracer is left.
	pinned=
	for k in $(seq 1 50); do
		pinned=
		for s in /proc/$vp/task/*/status; do
			a=$(awk '$1 == "Cpus_allowed_list:" { print $2 }' "$s" 2>/dev/null)
			[ -n "$a" ] && [ "$a" != "$aff" ] && pinned="$pinned $a"
		done
		[ -z "$pinned" ] && [ "$(proc_field $vp TracerPid)" = 0 ] && break
		sleep 0.02
	done
	if kill -0 $vp 2>/dev/null; then
		echo checked > t$n.aff
		# on its own again: it computes a while, then ends
		sleep 0.2
		kill -USR1 $vp 2>/dev/null
	else
		pinned=		# it ended: nothing left to check
	fi
	wait $vp
	rc=$?
	wait $cp 2>/dev/null
	what="$kind $eng $bp $ph after ${ms}ms${env:+ ($env)}"
	if [ -n "$pinned" ]; then
		echo "FAIL: $what: a thread left on CPUs$pinned, not its own $aff" > t$n.res
	elif [ $rc -eq 0 ] && grep -q '^ok [1-9]' v$n.out; then
		echo "ok: $what" > t$n.res
	else
		echo "FAIL: $what: the target's status $rc: $(cat v$n.err) [cachetrace: $(tr '\n' ' ' < c$n.err)]" > t$n.res
	fi
}

: > trials.list
batch() {	# batch TRIAL-ARGS...: one more trial for run_trials
	echo "$*" >> trials.list
}
# The trials in three lanes, each its third of the list one after the
# other (not three, then three more once the slowest of the three ends).
run_trials() {
	for lane in 0 1 2; do
		(
		n=0
		while read -r args; do
			n=$((n + 1))
			[ $((n % 3)) -eq $lane ] || continue
			# shellcheck disable=SC2086
			trial $n $args
		done < trials.list
		) &
	done
	wait
}
# The front killed: every engine, breakpoint kind and phase, KILLS times
# in all.
i=0
while [ $i -lt "$KILLS" ]; do
	for eng in emulate step instrument native; do
		for bp in $BP_MODES; do
			for ph in waiting loop long threads sampled; do
				[ $i -lt "$KILLS" ] || break
				# (--sample: not with the native engine)
				[ $eng = native ] && [ $ph = sampled ] && continue
				batch $eng $bp $ph front
				i=$((i + 1))
			done
		done
	done
done
# The tracer crashes.
for eng in emulate step instrument native; do
	for bp in $BP_MODES; do
		for kind in abort trap; do
			batch $eng $bp loop $kind
			batch $eng $bp threads $kind
		done
	done
done
# Where the host gives no shared memory for the guardian (--check; the
# suite's second pass forces it with CACHETRACE_HOST=memfd=no) there is no
# guardian and nothing above changes; the tracer's own SIGKILL is then the
# documented limitation, not tried.
if "$CT" --check 2>/dev/null | grep -q '^kill -9 safety: *no guardian'; then
	pass "no guardian on this host ($("$CT" --check | sed -n 's/^kill -9 safety: *no guardian (\([^)]*\)).*/\1/p')): the kills of the front and the crashes above are what keeps the target safe"
	run_trials
	cat t*.res
	bad=$(cat t*.res | grep -c '^FAIL')
	[ "$bad" -eq 0 ] && pass "$(ls t*.res | wc -l) trials ($KILLS kills of cachetrace), the target unharmed in each" ||
		fail "$bad trials harmed the target"
	finish
fi
# The tracer itself killed while it emulates one long window (the target
# stopped all along: nothing left uncollected), and halfway through a
# write-back of the emulator's memory and registers, the memory written,
# the registers not: the guardian writes it all again.
for bp in $BP_MODES; do
	for k in 1 2 3; do
		batch emulate $bp long worker
		batch emulate $bp loop wb
	done
	# The instrument engine's thread runs free in the code cache: the
	# guardian runs it to the cache's next exit and on from there (the
	# toggle window's thread meets the ring's guard often: a SIGSEGV
	# held at its probe when the tracer died was sent again, 3 kills in
	# 75, before the guardian knew it for ours).  And killed at one of
	# the system calls it injects to map its rings and caches
	# (kill@inject), the thread stopped after the call with our
	# registers: the guardian puts its own back.
	for k in 1 2 3; do
		batch instrument $bp long worker
		batch instrument $bp toggle worker
		batch instrument $bp toggle inject
	done
	# Sampled (--sample): killed in a sample or between two, the target
	# running natively there.  (Not where no call can be injected, as
	# CACHETRACE_HOST=inject=no says: the emulate engine then runs the
	# windows, and steps.)
	if ! echo ",${CACHETRACE_HOST:-}," | grep -q ',inject=no,'; then
		batch instrument $bp sampled worker
		batch instrument $bp sampled worker
	fi
	# The native engine's long window runs natively with its stop
	# event's int3 in the target: the guardian takes it out.  (Not a
	# loop of windows: its start and stop int3s are hit thousands of
	# times a second, and a trap taken in the tracer's last
	# microseconds is beyond any guardian, --check says.)
	batch native $bp long worker
	batch native $bp long worker
done
run_trials
total=$(ls t*.res | wc -l)
cat t*.res
# redone KIND: how many trials of KIND the guardian redid a write-back in
redone() {
	k=0
	for f in $(grep -l "^ok: $1 " t*.res); do
		n=${f#t}; n=${n%.res}
		grep -q 'guard: .* [1-9][0-9]* records\{0,1\} of a write-back redone' c$n.err &&
			k=$((k + 1))
	done
	echo $k
}
redone=$(redone wb)
[ "$redone" -gt 0 ] && pass "$redone write-backs cut halfway were redone by the guardian" ||
	fail "no write-back was redone (the kill@wb trials did not cut one)"
ran=$(cat c*.err | grep -c 'guard: .* [1-9][0-9]* threads\{0,1\} run out of the code cache')
inj=$(redone inject)
if echo ",${CACHETRACE_HOST:-}," | grep -q ',inject=no,'; then
	pass "no system call injected (CACHETRACE_HOST=inject=no): no kill@inject"
else
	[ "$inj" -gt 0 ] && pass "$inj kills after an injected call: the guardian put the thread's registers back" ||
		fail "no kill@inject trial was killed at an injected call"
fi
if echo ",${CACHETRACE_HOST:-}," | grep -q ',inject=no,'; then
	# no code cache: the instrument engine's windows were stepped
	[ "$ran" -eq 0 ] && pass "no code cache (CACHETRACE_HOST=inject=no): the guardian found no thread in one" ||
		fail "the guardian ran threads out of a code cache that cannot exist"
else
	[ "$ran" -gt 0 ] && pass "$ran times the guardian ran the instrument engine's thread out of its code cache" ||
		fail "the guardian never found a thread in the code cache"
fi
bad=$(cat t*.res | grep -c '^FAIL')
[ "$bad" -eq 0 ] && pass "$total trials ($KILLS kills of cachetrace), the target unharmed in each" ||
	fail "$bad of $total trials harmed the target"
aff=$(ls t*.aff 2>/dev/null | wc -l)
[ "$aff" -gt 0 ] && pass "$aff trials checked every thread's CPUs after the kill" ||
	fail "no trial could check the threads' CPUs after the kill"
finish
