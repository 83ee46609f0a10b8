#!/bin/sh
# --engine=native (issue 30): the window runs natively, the host's
# counters gated by the start and stop events.  Software counters, on
# every host: a window's fresh pages counted exactly while the program
# touches many more outside it (launched, attached, in intervals, in a
# recursion whose window is the outermost call, with the thread it
# starts under --threads=all); a window's task-clock against the
# target's own CPU clock; cpu-clock samples of the window only, the hot
# function's share.  Hardware counters: the note where the host has no
# PMU (forced, and natural where it has none); where it has one,
# instructions against the step engine's Ir.
. "$(dirname "$0")/lib.sh"
${CC:-cc} -O2 -g -fno-pie -no-pie -pthread -o gated "$SRCDIR/tests/tracer/gated.c" ||
	{ echo "cannot build gated"; exit 1; }
N="--engine=native"
# field FILE EVENT: EVENT's total in the profile's summary
field() {
	awk -v e="$2" '/^events:/ { for (i = 2; i <= NF; i++) col[$i] = i - 1 }
		/^summary:/ { print $(col[e] + 1) }' "$1"
}
# run NAME OPTIONS... -- ARGS...: cachetrace on ./gated
run() {
	n=$1; shift
	"$CT" $N -o "$n.cg" "$@" >"$n.out" 2>"$n.err"
	echo $? >"$n.rc"
}
ok_run() {	# ok_run NAME: exit 0, the target's output ends with done
	[ "$(cat "$1.rc")" = 0 ] && [ "$(tail -n 1 "$1.out")" = done ] &&
		pass "$1: exit 0, the target ran to its end" ||
		{ fail "$1: exit $(cat "$1.rc")"; cat "$1.err"; }
}

# 1. Launched: 123 pages in the window, 4000 outside.
run pages --start=window -- ./gated pages 123
ok_run pages
[ "$(field pages.cg page-faults)" = 123 ] && [ "$(field pages.cg minor-faults)" = 123 ] &&
	[ "$(field pages.cg major-faults)" = 0 ] &&
	pass "pages: page-faults 123, minor 123, major 0 (4000 outside)" ||
	fail "pages: page-faults $(field pages.cg page-faults), minor $(field pages.cg minor-faults)"
grep -q '^desc: Counters: task-clock,page-faults,minor-faults,major-faults,context-switches,cpu-migrations (perf_event_open' pages.cg &&
	pass "pages: desc: Counters" || fail "pages: no desc: Counters line"
grep -q '^events: task-clock page-faults minor-faults major-faults context-switches cpu-migrations$' pages.cg &&
	pass "pages: the events line" || fail "pages: $(grep ^events: pages.cg)"
grep -q '^==[0-9]*== page-faults *123$' pages.err &&
	pass "pages: the summary" || { fail "pages: the summary"; cat pages.err; }
grep -q '^fn=window$' pages.cg && pass "pages: counted at the start event's function" ||
	fail "pages: $(grep ^fn= pages.cg)"
cg_annotate pages.cg >pages.ann 2>&1 && grep -q 'window' pages.ann &&
	pass "pages: cg_annotate reads it" || { fail "pages: cg_annotate"; head pages.ann; }

# 2. Three windows: each its own count, per window in desc: lines and the
# summary's min/median/max.
run three --start=window --intervals=3 -- ./gated pages 10 300 20
ok_run three
[ "$(field three.cg page-faults)" = 330 ] &&
	grep -q '^desc: Window 1: .* page-faults 10 ' three.cg &&
	grep -q '^desc: Window 2: .* page-faults 300 ' three.cg &&
	grep -q '^desc: Window 3: .* page-faults 20 ' three.cg &&
	pass "three: 10, 300, 20 pages, 330 in all" ||
	{ fail "three: $(grep '^desc: Window' three.cg)"; }
grep -q '^==[0-9]*== page-faults *330   per window: min 10, median 20, max 300$' three.err &&
	pass "three: min/median/max" || { fail "three: summary"; grep page-faults three.err; }

# 3. A recursion 40 deep, 2 pages a level: the window ends at the
# outermost return, not at the first return of a deeper call.
run deep --start=deep -- ./gated deep 40
ok_run deep
[ "$(field deep.cg page-faults)" = 80 ] && pass "deep: 80 page-faults" ||
	fail "deep: $(field deep.cg page-faults) page-faults, expected 80"

# 4. task-clock: 150 ms of CPU in the window between 450 ms before and
# after; the target's own CPU clock of it as the reference.
run spin --start=timed -- ./gated spin 150
ok_run spin
tc=$(field spin.cg task-clock)
own=$(awk '$1 == "timed" { print $2 }' spin.out)
if [ -n "$tc" ] && [ -n "$own" ] &&
   awk -v a="$tc" -v b="$own" 'BEGIN { d = a - b; if (d < 0) d = -d;
	exit !(d <= b * 0.05 + 2e6) }'; then
	pass "spin: task-clock $tc ns, the target's own clock $own ns"
else
	fail "spin: task-clock '$tc', the target's clock '$own'"
fi

# 5. cpu-clock sampled every 0.1 ms: only the window's lines (none of
# spin(), which runs as long outside it), hot() about 9/10 of it (9 times
# cold()'s iterations of the same loop; perf record's share natively,
# measured here: 90%).
run hot --start=work --counter-sample=cpu-clock:100000 -- ./gated hot
[ "$(cat hot.rc)" = 0 ] && pass "hot: exit 0" || { fail "hot: exit $(cat hot.rc)"; cat hot.err; }
grep -q '^events: .* cpu-clock.est$' hot.cg && pass "hot: the estimate's event" ||
	fail "hot: $(grep ^events: hot.cg)"
est() {	# est FN: FN's cpu-clock.est, its lines summed
	awk -v f="$1" '/^fn=/ { in_fn = ($0 == "fn=" f) } in_fn && /^[0-9]/ { s += $NF }
		END { print s + 0 }' hot.cg
}
h=$(est hot) c=$(est cold) s=$(est spin)
[ "$s" = 0 ] && ! grep -q '^fn=spin$' hot.cg && pass "hot: no sample outside the window" ||
	fail "hot: spin() has $s"
awk -v h="$h" -v c="$c" 'BEGIN { exit !(h + c > 0 && h / (h + c) > 0.8 && h / (h + c) < 0.97) }' &&
	pass "hot: hot() $h ns, cold() $c ns estimated" ||
	fail "hot: hot() $h, cold() $c"
grep -Eq '^desc: Sampled: cpu-clock every 100000 ns, [1-9][0-9]* samples' hot.cg &&
	pass "hot: $(grep '^desc: Sampled' hot.cg | cut -c 7-60)..." || fail "hot: no desc: Sampled"

# 5a. The same with call stacks, unwound by libdw from each sample's copy
# of the stack: the folded stacks put hot() under work() under main(),
# and add up to the flat profile's estimate.
run hcs --start=work --counter-sample=cpu-clock:100000 --call-stacks=yes \
	--folded-out-file=hcs.folded -- ./gated hot
[ "$(cat hcs.rc)" = 0 ] && pass "stacks: exit 0" || { fail "stacks: exit $(cat hcs.rc)"; cat hcs.err; }
tot=$(awk '{ s += $NF } END { print s + 0 }' hcs.folded)
wh=$(awk '/;main;work;hot [0-9]*$/ { s += $NF } END { print s + 0 }' hcs.folded)
[ "$tot" = "$(field hcs.cg cpu-clock.est)" ] && [ "$tot" -gt 0 ] &&
	awk -v a="$wh" -v t="$tot" 'BEGIN { exit !(a > 0.8 * t) }' &&
	pass "stacks: main;work;hot has $wh ns of $tot" ||
	{ fail "stacks: main;work;hot $wh of $tot (flat $(field hcs.cg cpu-clock.est))"; head hcs.folded; }
grep -Eq '^desc: Stacks: [1-9][0-9]* of the samples unwound' hcs.cg &&
	pass "stacks: $(grep '^desc: Stacks:' hcs.cg | cut -c 7-)" || fail "stacks: no desc: Stacks line"

# 5b. A long window sampled every 50 us: more samples than the kernel's
# ring holds (32k), read as the window runs; their estimate is the
# window's task-clock (user-space time: the loop makes no system call).
# Not every 20 us: an AMD EPYC KVM guest's timer then fired late, the
# estimate 0.70 to 0.89 of the task-clock under the suite's load (none
# lost); every 50 us, 0.99 there.
run long --start=busy --counter-sample=cpu-clock:50000 -- ./gated busy 4000000000
ok_run long
tc=$(field long.cg task-clock) e=$(field long.cg cpu-clock.est)
n=$(sed -n 's/^desc: Sampled: .* \([0-9]*\) samples.*/\1/p' long.cg)
[ -n "$n" ] && [ "$n" -gt 32768 ] &&
	awk -v a="$e" -v b="$tc" 'BEGIN { exit !(a > 0.8 * b && a < 1.1 * b) }' &&
	! grep -q 'lost\|throttled' long.cg &&
	pass "long: $n samples, estimate $e ns, task-clock $tc ns" ||
	fail "long: $n samples, estimate '$e', task-clock '$tc': $(grep '^desc: Sampled' long.cg)"

# 6. Attached (-p) while it sleeps, the window later: 77 pages.
./gated sleep 1 77 >att.out 2>&1 &
tpid=$!
sleep 0.3
"$CT" $N -p $tpid --start=window -o att.cg 2>att.err
rc=$?
wait $tpid
trc=$?
[ $rc = 0 ] && [ $trc = 0 ] && [ "$(field att.cg page-faults)" = 77 ] &&
	pass "attached: 77 page-faults, the target went on to its end" ||
	{ fail "attached: exit $rc, target $trc, page-faults $(field att.cg page-faults)"; cat att.err; }

# 6b. A toggle window (--toggle-signal) of a spinning thread: its
# task-clock is CPU time inside the two signals (at most their distance
# in wall time), and not nothing (the thread's part is read when the
# window ends as it runs natively).
./gated spin 2000 >tg.out 2>&1 &
tpid=$!
sleep 0.2
"$CT" $N -p $tpid --toggle-signal=SIGUSR2 -o tg.cg 2>tg.err &
cpid=$!
i=0
# attached (cachetrace's handler of the signal is in place before that)
while [ $i -lt 200 ] && ! grep -q 'TracerPid:.*[1-9]' /proc/$tpid/status; do
	sleep 0.05; i=$((i + 1))
done
sleep 0.2
t0=$(date +%s%N)
kill -USR2 $cpid
sleep 0.8
kill -USR2 $cpid
t1=$(date +%s%N)
wait $cpid
rc=$?
kill $tpid 2>/dev/null
wait $tpid 2>/dev/null
tc=$(field tg.cg task-clock)
[ $rc = 0 ] && [ -n "$tc" ] && [ "$tc" -gt 100000000 ] && [ "$tc" -le $((t1 - t0 + 50000000)) ] &&
	pass "toggle: task-clock $tc ns between two signals $((t1 - t0)) ns apart" ||
	{ fail "toggle: exit $rc, task-clock '$tc', signals $((t1 - t0)) ns apart"; cat tg.err; }

# 7. Threads: the window starts a thread that writes 200 pages; with
# --threads=all its counters are the window's too.  The thread's stack
# and its start add a few faults of their own (<= 24).
run th1 --start=window_thread -- ./gated thread 50 200
run thall --start=window_thread --threads=all -- ./gated thread 50 200
ok_run th1
ok_run thall
a=$(field th1.cg page-faults) b=$(field thall.cg page-faults)
[ -n "$a" ] && [ "$a" -ge 50 ] && [ "$a" -le 74 ] && pass "thread, hit: $a page-faults (50 its own)" ||
	fail "thread, hit: $a page-faults"
[ -n "$b" ] && [ "$b" -ge 250 ] && [ "$b" -le 274 ] && pass "thread, all: $b page-faults (50 + 200)" ||
	fail "thread, all: $b page-faults"

# 8. Hardware counters: none where the host has no PMU (forced here).
CACHETRACE_HOST=pmu=no run nopmu --start=window -- ./gated pages 5
grep -qx 'cachetrace: note: the native engine counts software events only: forced by CACHETRACE_HOST' nopmu.err &&
	[ "$(field nopmu.cg page-faults)" = 5 ] &&
	pass "no PMU (forced): $(grep note: nopmu.err)" ||
	{ fail "no PMU (forced)"; cat nopmu.err; }
CACHETRACE_HOST=pmu=no run alone --counters=instructions --start=window -- ./gated pages 5
[ "$(cat alone.rc)" = 1 ] && grep -q 'note: --counters: instructions cannot be counted here (forced by CACHETRACE_HOST)' alone.err &&
	grep -q 'cachetrace: --counters: none of the events can be counted here' alone.err && [ ! -e alone.cg ] &&
	pass "no PMU, instructions alone: exit 1, $(tail -n 1 alone.err)" ||
	{ fail "no PMU, instructions alone: exit $(cat alone.rc)"; cat alone.err; }
CACHETRACE_HOST=pmu=no run mixed --counters=instructions,page-faults --start=window -- ./gated pages 6
[ "$(cat mixed.rc)" = 0 ] && [ "$(field mixed.cg page-faults)" = 6 ] &&
	grep -q '^events: page-faults$' mixed.cg &&
	pass "no PMU, instructions and page-faults: the note, page-faults counted" ||
	{ fail "no PMU, mixed"; cat mixed.err; }
if "$CT" --check | grep -q '^counters: *a hardware PMU'; then
	# 9. Where there is a PMU: instructions in a window of a plain
	# loop (no rep string: the CPU retires one, Cachegrind counts each
	# iteration) against the step engine's Ir; the gate adds the stop
	# event's int3 (it retires) and nothing else in user space.
	run hw --counters=instructions --start=window -- ./gated pages 64
	"$CT" --engine=step -q --start=window -o ir.cg -- ./gated pages 64 >/dev/null 2>&1
	i=$(field hw.cg instructions) ir=$(sed -n 's/^summary: \([0-9]*\).*/\1/p' ir.cg)
	[ -n "$i" ] && [ -n "$ir" ] && [ $((i - ir)) -ge 0 ] && [ $((i - ir)) -le 2 ] &&
		pass "PMU: instructions $i, the step engine's Ir $ir" ||
		fail "PMU: instructions '$i', Ir '$ir'"
else
	run natural --start=window -- ./gated pages 5
	grep -q 'note: the native engine counts software events only: ' natural.err &&
		pass "no PMU here: $(grep note: natural.err)" ||
		{ fail "no PMU here: no note"; cat natural.err; }
fi
# 10. What the window cannot be asked for.
for o in --call-stacks=yes --trace-mem=t --max-instructions=5 "--counters=" "--counter-sample=cpu-clock" "--counter-sample=cpu-clock:0" "--counter-sample=nope:10" "--counter-sample=cpu-clock,task-clock:1000"; do
	"$CT" $N "$o" --start=window -o bad.cg -- ./gated pages 1 >bad.out 2>bad.err
	rc=$?
	[ $rc = 2 ] && [ "$(grep -v '^Try' bad.err | grep -vc '^cachetrace: note:')" = 1 ] && [ ! -e bad.cg ] &&
		pass "$o: $(grep -v "^cachetrace: note:" bad.err | head -n 1)" ||
		{ fail "$o: exit $rc"; cat bad.err; }
done
"$CT" --counters=page-faults --start=window -o bad.cg -- ./gated pages 1 >bad.out 2>bad.err
[ $? = 2 ] && grep -q -- '--counters needs --engine=native' bad.err &&
	pass "--counters without the native engine: $(head -n 1 bad.err)" ||
	fail "--counters without the native engine: $(cat bad.err)"
finish
