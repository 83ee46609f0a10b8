#!/bin/sh
# --sample=PERIOD[:LENGTH[:WARMUP]] (issue 31), checked against counts
# worked out by hand from tests/attach/sweep.c: work() reads one byte of
# each of a 16 KiB buffer's 256 lines, 1,541 instructions a sweep
# (objdump: 6 a line, 5 a round), 20 sweeps a call.  Every model is given
# (an empty 8-way 32 KiB D1 of 64-byte lines holds the buffer): a sample
# that begins with empty caches misses each line once on the line that
# reads it (sweep.c:15), 256 D1mr, and one whose warm-up swept the buffer
# misses none.  The step and emulate engines end a warm-up and a sample
# at the instruction; the instrument engine at its next stop after it.
. "$(dirname "$0")/lib.sh"
P=sw$$
build sweep $P
./$P 10000 >ref.out || fail "the untraced run"
GEOM="--I1=32768,8,64 --D1=32768,8,64 --LL=8388608,16,64"
ANNOT=$(dirname "$CT")/cachetrace-annotate

# line_cost FILE LINE EVENT: EVENT on LINE of sweep.c's work().
line_cost() {
	c=$(col "$1" "$3")
	awk -v l="$2" -v c="${c:-1}" '
		/^fl=/ { f = ($0 ~ /sweep\.c$/); next }
		/^fn=/ { w = f && $0 == "fn=work"; next }
		/^[0-9]/ { if (w && $1 == l) { v = $(c + 1); if (v != ".") s += v } }
		END { print s + 0 }' "$1"
}
sampled() { sed -n 's/^desc: Sampled: *//p' "$1"; }

run() {	# run NAME OPTIONS...: a launched run of CALLS (10,000) calls of work()
	name=$1; shift
	"$CT" $GEOM "$@" -o $name.cg -- ./$P ${CALLS:-10000} >$name.out 2>$name.err
	rc=$?
	[ $rc -eq 0 ] || fail "$name: status $rc: $(grep -v '^==' $name.err | head -2)"
}

# The first sample 20 ms of CPU time in, of 100,000 calls (0.5 s): past
# the dynamic loader even on a loaded machine (a sample 1 ms in landed in
# it there, with three busy loops beside: its rep strings' last
# iterations, which Cachegrind counts twice, made Ir 20020, and the
# sweep's misses were not in it).
# lockstep:instrument too: its samples ended nowhere (the cap met in the
# cache was looked at only when the thread left it, and the interrupts
# meant to bring it out, every 20 us at the pace of a lead not counted
# yet, stopped it before each instruction: 0 counted in 30 s).
CALLS=100000
for e in step emulate lockstep:instrument; do
	run $e-cold --engine=$e --sample=20ms:20k --intervals=1
	[ "$(summary $e-cold.cg)" = 20000 ] && pass "$e: a sample of 20000 instructions" ||
		fail "$e: the sample's Ir $(summary $e-cold.cg), not 20000"
	[ "$(line_cost $e-cold.cg 15 D1mr)" = 256 ] &&
		pass "$e: an empty D1 misses each of the 256 lines once" ||
		fail "$e: sweep.c:15 D1mr $(line_cost $e-cold.cg 15 D1mr), not 256"
	sampled $e-cold.cg | grep -q '1 sample, 20000 instructions counted, 0 in warm-ups' &&
		pass "$e: desc: Sampled says so" ||
		fail "$e: desc: Sampled: '$(sampled $e-cold.cg)'"

	run $e-warm --engine=$e --sample=20ms:20k:5k --intervals=1
	[ "$(summary $e-warm.cg)" = 15000 ] &&
		pass "$e: the warm-up's 5000 of 20000 not counted" ||
		fail "$e: Ir $(summary $e-warm.cg) with a warm-up, not 15000"
	[ "$(line_cost $e-warm.cg 15 D1mr)" = 0 ] &&
		pass "$e: the warm-up's misses never counted" ||
		fail "$e: sweep.c:15 D1mr $(line_cost $e-warm.cg 15 D1mr) after a warm-up"
	sampled $e-warm.cg | grep -q '1 sample, 15000 instructions counted, 5000 in warm-ups' &&
		pass "$e: desc: Sampled gives the warm-up" ||
		fail "$e: desc: Sampled: '$(sampled $e-warm.cg)'"
done

# Two samples: the second finds the caches the first left (warm), or
# empty (--sample-cold).
# (No bound on the samples' time: the default one, 40%, would stretch
# the period past the program's end.)
run kept --engine=step --sample=20ms:5k --intervals=2 --sample-budget=100%
run cold --engine=step --sample=20ms:5k --intervals=2 --sample-cold \
	--sample-budget=100%
CALLS=10000
[ "$(line_cost kept.cg 15 D1mr)" = 256 ] && [ "$(line_cost cold.cg 15 D1mr)" = 512 ] &&
	pass "kept caches: 256 misses in two samples; --sample-cold: 512" ||
	fail "two samples: $(line_cost kept.cg 15 D1mr) kept, $(line_cost cold.cg 15 D1mr) cold (256, 512)"
# The LL's first references (DLu, DLmu).  A D1 of 16 lines misses on
# every line of every sweep; the 8 MiB LL holds the buffer.  In a sample
# of 5,000 instructions (about 830 reads: every line read three times or
# more) each of the 256 lines reaches LL first once: DLu 256 a sample.  In
# the first sample LL is empty: 256 misses, each at a first reference
# (DLmu 256), and the later reads hit.  In the second, kept, LL holds
# every line from the first: its 256 first references hit (DLmu 0), no
# miss; emptied (--sample-cold), it misses them all again.
GEOM="--I1=32768,8,64 --D1=1024,2,64 --LL=8388608,16,64" CALLS=100000
run llkept --engine=step --sample=20ms:5k --intervals=2 --sample-budget=100%
run llcold --engine=step --sample=20ms:5k --intervals=2 --sample-cold \
	--sample-budget=100%
GEOM="--I1=32768,8,64 --D1=32768,8,64 --LL=8388608,16,64"
for f in llkept:256:512:256 llcold:512:512:512; do
	n=${f%%:*} want=${f#*:}
	got=$(line_cost $n.cg 15 DLmr):$(line_cost $n.cg 15 DLu):$(line_cost $n.cg 15 DLmu)
	[ "$got" = "$want" ] &&
		pass "$n: sweep.c:15 DLmr:DLu:DLmu $got, as worked out" ||
		fail "$n: sweep.c:15 DLmr:DLu:DLmu $got, not $want"
done
want="LL: $(summary llkept.cg DLmu) of the $(( $(summary llkept.cg DLmr) + $(summary llkept.cg DLmw) )) data misses at a line.s first reference in its sample .*; $(summary llkept.cg DLu) first references, $(summary llkept.cg DLuf) of them to memory never touched"
grep -q "$want" llkept.err &&
	pass "the summary gives the LL's misses at first references, as the profile's totals" ||
	fail "the summary: $(grep 'LL:' llkept.err), not /$want/"
# First references to memory never touched (DLuf, touched.c): fresh.c's
# touch() reads a byte of each of the 1,024 lines of 16 pages mapped just
# before; main wrote a byte of the first PRE of them first.  A sample
# begins at touch() (an empty LL: every line a miss at its first
# reference, DLu and DLmu 1025 with ret's read of the return address, on
# the stack), and a line of a page main never wrote was never
# touched: DLuf (16 - PRE) * 64.  The pages main wrote are present (their
# other 63 lines untouched all the same: DLuf counts pages, a lower
# bound).  Where the page map cannot be read, DLuf is 0, with a note.
build fresh F$$
# fresh NAME INTERVALS 'OPTIONS' ARGS...: fresh.c's run with ARGS, sampled
# at touch() (HOSTENV: what CACHETRACE_HOST says more); touch()'s DLu,
# DLmu and DLuf in $got.
fresh() {
	name=$1 n=$2 opts=$3; shift 3
	CACHETRACE_HOST=${CACHETRACE_HOST:+$CACHETRACE_HOST${hostenv:+,}}$hostenv \
		"$CT" $GEOM $opts --start=touch --sample=1us:1M --intervals=$n \
		--sample-budget=100% -o $name.cg -- ./F$$ "$@" >/dev/null \
		2>fresh.err || fail "$name: status $?: $(head -2 fresh.err)"
	got=$(fn_cost $name.cg touch DLu):$(fn_cost $name.cg touch DLmu):$(fn_cost $name.cg touch DLuf)
}
for c in step:0:1024 emulate:0:1024 instrument:0:1024 instrument:5:704 \
	 instrument:16:0 nomap:0:0; do
	e=${c%%:*} pre=${c#*:}; pre=${pre%%:*} want=${c##*:}
	[ $e = nomap ] && hostenv=pagemap=no e=instrument || hostenv=
	fresh fresh 1 --engine=$e 3 $pre
	noted=$(grep -c "note: the target's page map cannot be read" fresh.err)
	[ "$got" = 1025:1025:$want ] && [ "$noted" = $([ -n "$hostenv" ] && echo 1 || echo 0) ] &&
		pass "untouched memory, $c: touch() DLu:DLmu:DLuf $got, as worked out" ||
		fail "untouched memory, $c: touch() DLu:DLmu:DLuf $got, not 1025:1025:$want ($noted notes)"
done
hostenv=
# Two samples over one mapping: the second's page map read again only
# where the first found pages untouched (touched.c), the 5 pages main
# wrote since among them: DLuf 704 each.  The second sample's ret reads a
# line the first left in LL (kept): a first reference, not a miss.
fresh fresh2 2 "" 1000 5 one
[ "$got" = 2050:2049:1408 ] &&
	pass "untouched memory, two samples of one mapping: DLu:DLmu:DLuf $got, as worked out" ||
	fail "untouched memory, two samples of one mapping: DLu:DLmu:DLuf $got, not 2050:2049:1408"
# The same 64 KiB at every call, given back to the kernel before each but
# the first: absent from the page map when the second sample begins, but
# present when the first ended, so touched (the whole run holds its lines:
# the second sample hits them in the LL the first left, DLmu 0): DLuf
# 1024, the first sample's only.
fresh fresh3 2 "" 1000 0 again
[ "$got" = 2050:1025:1024 ] &&
	pass "untouched memory, given back and touched again: DLu:DLmu:DLuf $got, as worked out" ||
	fail "untouched memory, given back and touched again: DLu:DLmu:DLuf $got, not 2050:1025:1024"
# 20,000 mappings: each look reads /proc/PID/maps, 20,000 lines, longer
# than a sample of 5,000 instructions; past a twentieth of the samples'
# time the looks stop, after the first four samples' (two looks each),
# with a note: DLuf counts those four's, 4 * 1024.
fresh fresh4 8 "" 1000 0 many
got=${got%%:*}:${got##*:}	# DLu:DLuf
[ "$got" = 8200:4096 ] &&
	grep -q "note: reading the target's page map took .* (200[0-9][0-9] mappings): from here .* the first 4 samples' only" fresh.err &&
	pass "untouched memory, 20,000 mappings: DLu:DLuf $got, the looks stopped after 4 samples, with a note" ||
	fail "untouched memory, 20,000 mappings: DLu:DLuf $got, not 8200:4096; $(grep note: fresh.err)"
CALLS=10000
grep -q '^desc: Cache state: *cold at every window' cold.cg &&
	pass "--sample-cold: desc: Cache state says so" ||
	fail "--sample-cold: $(grep '^desc: Cache state' cold.cg)"

# The default engine, its sample ended at its next stop after the cap.
# (Its first sample 10-30 ms in, past the dynamic loader: 1 ms in, on a
# loaded machine, it began there, and its counted part reached main's
# first sweep of the buffer, 256 D1 misses, and rep strings' last
# iterations, which Cachegrind counts twice: Ir over the steps counted.)
CALLS=100000
run inst --sample=20ms:20k:5k --intervals=3 --sample-budget=100%
CALLS=10000
n=$(summary inst.cg)
sampled inst.cg | grep -q "3 samples, $n instructions counted" &&
	pass "instrument: 3 samples, $n instructions counted, as the profile's Ir" ||
	fail "instrument: Ir $n, desc: Sampled: '$(sampled inst.cg)'"
[ "$(line_cost inst.cg 15 D1mr)" = 0 ] &&
	pass "instrument: the warm-ups' misses never counted" ||
	fail "instrument: sweep.c:15 D1mr $(line_cost inst.cg 15 D1mr) after warm-ups"
# Its statistics: cachetrace-annotate's estimates, cg_annotate unbothered.
"$ANNOT" --annotate=no inst.cg >inst.ann 2>&1
grep -q -- '-- Sampled estimates: 3 samples' inst.ann &&
	grep -qE '^[0-9.]+% \+-[0-9.]+ .* 3  .*sweep\.c:work$' inst.ann &&
	pass "cachetrace-annotate: work()'s estimates from 3 samples" ||
	fail "cachetrace-annotate: $(grep -A4 'Sampled estimates' inst.ann)"
check_annotate inst.cg "a sampled profile"
cmp -s inst.out ref.out && pass "the target's output intact" ||
	fail "the target's output: $(head -1 inst.out)"

# --sample-budget stretches the periods (a sample of 20000 steps takes
# far longer than the 1 ms of the target's CPU time that would follow it).
"$CT" $GEOM --engine=step --sample=1ms:20k --sample-budget=50% --intervals=2 \
	-o budget.cg -- ./$P 10000 >/dev/null 2>budget.err ||
	fail "--sample-budget: status $?"
grep -q 'sample-budget=50% stretched [12] periods\{0,1\}' budget.err &&
	pass "--sample-budget: $(grep -o 'sample-budget=50% stretched.*' budget.err)" ||
	fail "--sample-budget: $(grep Sampled budget.err)"
# Without the option, the bound is 40%; --sample-budget=100% is none.
grep -q 'Sampled:.* 2 samples' kept.err && ! grep -q 'sample-budget' kept.err &&
	pass "--sample-budget=100%: no bound" ||
	fail "--sample-budget=100%: $(grep Sampled kept.err)"
"$CT" $GEOM --engine=step --sample=1ms:20k --intervals=2 -o dflt.cg -- \
	./$P 10000 >/dev/null 2>dflt.err || fail "default bound: status $?"
grep -q 'sample-budget=40% stretched [12] periods\{0,1\}' dflt.err &&
	pass "the default bound: $(grep -o 'sample-budget=40% stretched.*' dflt.err)" ||
	fail "the default bound: $(grep Sampled dflt.err)"

# With --start, samples begin at the start event: never outside work(),
# each one 5000 instructions (a call runs 30,820).
run region --engine=step --start=work --sample=1ms:5k --intervals=3 \
	--sample-budget=100%
[ "$(summary region.cg)" = 15000 ] && [ "$(fn_cost region.cg work)" = 15000 ] &&
	[ "$(windows region.cg)" = 3 ] &&
	pass "--start: 3 samples of 5000, all in work()" ||
	fail "--start: Ir $(summary region.cg), work $(fn_cost region.cg work), windows $(windows region.cg)"

# Code mapped while the target ran natively between two windows (libm,
# dlopen'ed between f()'s two calls) runs from the instrument engine's
# cache, not stepped: the code ranges are read again.
build latecode L$$ -ldl
cos_cost() {	# libm's cos() by any of its names (__cos_fma: an ifunc's)
	awk '/^fn=/ { c = ($0 ~ /^fn=(__)?cos/); next }
	     /^[0-9]/ { if (c) s += $2 } END { print s + 0 }' "$1"
}
"$CT" --engine=instrument --start=f --intervals=2 -o late.cg -- ./L$$ \
	>late.out 2>late.err || fail "late code: status $?"
stepped=$(sed -n 's/.* exits, [0-9]* stops inside), \([0-9]*\) stepped.*/\1/p' late.err)
if grep -q 'note: --engine=instrument: .*single-stepped' late.err; then
	# the host refuses the code cache (CACHETRACE_HOST=inject=no...):
	# every instruction stepped, and still counted
	[ "$(windows late.cg)" = 2 ] && [ "$(cos_cost late.cg)" -gt 20000 ] &&
		pass "late code, no code cache here: cos() counted" ||
		fail "late code: $(windows late.cg) windows, cos $(cos_cost late.cg)"
else
	[ "$(windows late.cg)" = 2 ] && [ "${stepped:-99999}" -lt 100 ] &&
		[ "$(cos_cost late.cg)" -gt 20000 ] &&
		pass "late code: cos() counted, $stepped instructions stepped" ||
		fail "late code: $(windows late.cg) windows, '$stepped' stepped, cos $(cos_cost late.cg)"
fi

# A sample whose thread waits ends early: threads.c's mutex mode, main
# calling locked_work(), which waits 300 ms for the mutex another thread
# holds.  The sample begins there (--start, due at once), its thread
# uses no CPU time for 20 ms, and the sample ends then, not when the
# mutex comes: the summary says so; the target is unharmed (interrupted
# to end it, a thread stepped through a system call died of its step's
# trap).
build threads T$$
./T$$ mutex >mx.ref 2>&1
"$CT" --sample=1us:20k --start=locked_work --intervals=1 -o mx.cg -- \
	./T$$ mutex >mx.out 2>mx.err || fail "waiting thread: status $?"
grep -q 'Sampled: .*1 sample,.*; 1 ended early, their thread waiting' mx.err &&
	! grep -q 'killed by' mx.err && cmp -s mx.ref mx.out &&
	pass "a waiting thread's sample ended early, the target's output intact" ||
	fail "waiting thread: $(grep -E 'Sampled|killed|exited' mx.err), output $(head -1 mx.out)"

# A shell script that execs the program (a pyenv shim): as valgrind, the
# run is the script's unless --trace-children=yes follows the exec; the
# summary says which, and the program's profile (FILE.exec1) is sampled.
# Every 10 ms: the shell's own CPU time before its exec stays under it,
# even on a loaded machine.
printf '#!/bin/sh\nexec ./%s "$@"\n' $P >shim.sh
chmod +x shim.sh
"$CT" --sample=10ms:5k --intervals=2 --sample-budget=100% -o shim.cg -- \
	./shim.sh 10000 >shim.out 2>shim.err || fail "shim: status $?"
grep -q 'the target called exec before its first sample (--trace-children=yes follows it)' shim.err &&
	pass "an exec before the first sample: said, with the way on" ||
	fail "exec before the first sample: $(grep -E 'Traced|exec' shim.err)"
rm -f shim.*.cg*
"$CT" --trace-children=yes --sample=10ms:5k --intervals=2 \
	--sample-budget=100% -o shim.%p.cg -- ./shim.sh 10000 >shim.out \
	2>shim.err || fail "shim, --trace-children=yes: status $?"
f=$(ls shim.*.cg.exec1 2>/dev/null)
[ -n "$f" ] && sampled "$f" | grep -Eq '[1-9][0-9]* samples?, [0-9]* instructions' &&
	[ "$(line_cost "$f" 15 Ir)" -gt 0 ] && cmp -s shim.out ref.out &&
	pass "--trace-children=yes: the program's run sampled ($f)" ||
	fail "--trace-children=yes: '$f': $(sampled "$f"), $(grep -E 'Traced|exec' shim.err)"

# Bad input: one line naming the problem, a non-zero exit.
for bad in --sample=20 --sample=20:1M --sample=20ms:0 --sample=20ms:1M:x \
	   --sample=20ms:1M:1M --sample-budget=0% --sample-budget=10 \
	   --sample-budget=101% \
	   --sample=0ms:1M --sample=20ms:1.5M --duration=0s --duration=10; do
	"$CT" $bad -- ./$P 1 >/dev/null 2>bad.err
	rc=$?
	opt=${bad%%=*}
	# the usage error's line, then "Try 'cachetrace --help'"
	[ $rc = 2 ] && head -1 bad.err | grep -q "^cachetrace: $opt: " &&
		[ "$(wc -l <bad.err)" = 2 ] && grep -q "Try" bad.err &&
		pass "$bad: refused: $(head -1 bad.err)" ||
		fail "$bad: status $rc: $(cat bad.err)"
done
"$CT" --sample=20ms:1M --toggle-signal=USR2 -- ./$P 1 >/dev/null 2>bad.err &&
	fail "--sample with --toggle-signal accepted" ||
	pass "--sample with --toggle-signal: $(cat bad.err)"

# Attached to a program that runs for ever, for one second of samples:
# it lives on, free, with every sample's instructions in the profile.
./$P >/dev/null &
spid=$!
sleep 0.2
"$CT" $GEOM -p $spid --sample=2ms:50k:10k --sample-budget=100% --duration=1s \
	-o att.cg 2>att.err &
CTPID=$!
wait_ct 30
[ "$CTRC" = 0 ] && pass "--duration=1s: cachetrace ended by itself, status 0" ||
	fail "--duration=1s: status $CTRC: $(grep -v '^==' att.err | head -2)"
check_free $spid "after --duration"
k=$(sampled att.cg | sed -n 's/.*: \([0-9]*\) samples\{0,1\},.*/\1/p')
[ "${k:-0}" -ge 1 ] && [ "$(fn_cost att.cg work)" -gt 0 ] &&
	pass "attached: $k samples in a second, work() counted" ||
	fail "attached: '$(sampled att.cg)'"
grep -q 'spent in samples' att.err && pass "the summary gives the time in samples" ||
	fail "no time in samples in the summary"
kill $spid
finish
