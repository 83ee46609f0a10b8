#!/bin/sh
# Issue 17: what the host gives, probed (cachetrace --check), each answer
# forced both ways (CACHETRACE_HOST), and the fallbacks each answer leads
# to, on any host:
# - --check: one line per thing, exit 0 here, 1 when ptrace is refused (a
#   seccomp filter, as a container's, made by tests/tracer/seccomp-deny.c);
# - process_vm_readv/writev refused: the step engine runs the window, with
#   a note, and the profile is the emulate engine's;
# - no debug registers (forced): --start falls back to an int3 with a note,
#   --breakpoints=hw and --start-watch are one-line errors, at once;
# - a host whose single step over cpuid traps late (imitated: cachetrace
#   steps cpuid on the CPU again and one step more is taken unseen): the
#   landing check ends the window with an error naming the pc;
# - a bad CACHETRACE_HOST is a one-line error.
. "$(dirname "$0")/lib.sh"
build seccomp-deny
${CC:-cc} -O2 -g -fno-pie -no-pie -o cpuid "$SRCDIR/tests/progs/cpuid.c" ||
	{ echo "cannot build cpuid.c"; exit 1; }
./cpuid >native.out || { echo "cpuid.c fails natively"; exit 1; }
G="--I1=32768,8,64 --D1=32768,8,64 --LL=8388608,16,64"

# --check as it is here: every line, exit 0.
"$CT" --check >check.out 2>check.err
rc=$?
[ $rc = 0 ] && pass "--check: exit 0" || fail "--check: exit $rc"
for what in "ptrace:" "process_vm_readv:" "hardware breakpoints:" \
	    "single steps:" "cache geometry:" "emulator:" "vector code:" \
	    "CPU pinning:"; do
	grep -q "^$what " check.out && pass "--check: $(grep "^$what" check.out)" ||
		fail "--check: no '$what' line"
done
[ "$(tail -n 1 check.out)" = "cachetrace can trace on this host" ] &&
	pass "--check: verdict" || fail "--check: verdict '$(tail -n 1 check.out)'"
[ -s check.err ] && fail "--check wrote to stderr: $(cat check.err)"

# Each forced answer, both ways.
forced() {	# forced VALUE PATTERN
	CACHETRACE_HOST=$1 "$CT" --check >f.out 2>&1
	grep -q "$2" f.out && pass "CACHETRACE_HOST=$1: '$2'" ||
		{ fail "CACHETRACE_HOST=$1: no '$2'"; cat f.out; }
}
forced hwbp=no '^hardware breakpoints: *do not fire (forced)'
forced hwbp=yes '^hardware breakpoints: *fire (forced): --start uses the debug'
forced cpuid-step=late '^single steps: *cpuid one instruction late (forced)'
forced cpuid-step=precise '^single steps: *.*cpuid precise\|^single steps: *precise over cpuid'
forced native=no '^vector code: *(forced) each VEX, EVEX and BMI instruction is a real step'
forced inject=no '^code cache: *(forced) no system call is injected into a target: the emulate engine'
forced pmu=no '^counters: *(forced) no hardware PMU (perf_event_paranoid [-0-9]*): --engine=native counts the software events'
forced uc-regs=api '^emulator: *Unicorn .* runs the self-test program; its registers are read through its API (CACHETRACE_HOST=uc-regs=api)'
# The natural answer on Debian's Unicorn 2.0.1: QEMU's register array
# found in place (the layout this build of cachetrace was proven on; the
# API is the fallback for another Unicorn).
# (The suite's second pass forces the API: CACHETRACE_HOST=...uc-regs=api.)
if echo ",${CACHETRACE_HOST:-}," | grep -q ',uc-regs=api,'; then
	grep -q "^emulator: .*its registers are read through its API (CACHETRACE_HOST=uc-regs=api)" check.out
elif dpkg-query -W -f '${Version}' libunicorn2 2>/dev/null | grep -q '^2\.0\.1'; then
	grep -q "^emulator: .*its registers are read in place (QEMU's register array, found and proven)" check.out
else
	grep -q '^emulator: .*its registers are read' check.out
fi && pass "--check: the emulator's registers" ||
	fail "--check: $(grep '^emulator:' check.out)"
# The natural answer: the self-test (vpaddd) runs where the CPU has AVX.
if grep -qw avx /proc/cpuinfo; then
	grep -q '^vector code: *VEX, EVEX and BMI instructions run on cachetrace.s own CPU' check.out
else
	grep -q '^vector code: *this CPU has no AVX' check.out
fi && pass "--check: the vector code line for this CPU" ||
	fail "--check: $(grep '^vector code:' check.out)"

# Bad input: one line, exit 2.
for bad in hwbp=maybe nosuch=1 hwbp; do
	CACHETRACE_HOST=$bad "$CT" --check >b.out 2>b.err
	rc=$?
	[ $rc = 2 ] && [ "$(wc -l <b.err)" = 1 ] && [ ! -s b.out ] &&
		grep -q "CACHETRACE_HOST: '$bad'" b.err &&
		pass "CACHETRACE_HOST=$bad: $(cat b.err)" ||
		{ fail "CACHETRACE_HOST=$bad: exit $rc"; cat b.err; }
done
"$CT" --check -- ./cpuid >b.out 2>b.err
[ $? = 2 ] && pass "--check with a program: exit 2" ||
	fail "--check with a program"

# ptrace refused: --check says so and exits 1; a run is one line, exit 1.
# (LeakSanitizer stops the world with ptrace: under the filter it would
# abort the sanitizer build at exit.)
nolsan="env ASAN_OPTIONS=${ASAN_OPTIONS:-}:detect_leaks=0"
$nolsan ./seccomp-deny ptrace "$CT" --check >np.out 2>&1
rc=$?
[ $rc = 1 ] && pass "ptrace refused: --check exit 1" ||
	fail "ptrace refused: --check exit $rc"
grep -q "^ptrace: *refused (Operation not permitted)" np.out &&
	pass "ptrace refused: $(grep '^ptrace:' np.out)" ||
	{ fail "ptrace refused: no line"; cat np.out; }
grep -q "^cachetrace cannot trace on this host: ptrace is refused" np.out &&
	pass "ptrace refused: verdict" || fail "ptrace refused: verdict"
$nolsan ./seccomp-deny ptrace "$CT" -q $G -o np.cg -- ./cpuid >np.run 2>np.err
rc=$?
[ $rc = 1 ] && [ "$(wc -l <np.err)" = 1 ] && [ ! -e np.cg ] &&
	pass "ptrace refused: a run: $(cat np.err)" ||
	{ fail "ptrace refused: a run: exit $rc"; cat np.err; }

# process_vm_readv/writev refused: the step engine, the same profile.
./seccomp-deny process_vm "$CT" --check >pv.out 2>&1
grep -q "^process_vm_readv: *refused" pv.out &&
	pass "process_vm refused: $(grep '^process_vm_readv:' pv.out)" ||
	fail "process_vm refused: --check says '$(grep '^process_vm' pv.out)'"
# (the default engine, emulate, whatever the suite's CACHETRACE_ENGINE)
CACHETRACE_ENGINE=emulate \
./seccomp-deny process_vm "$CT" $G --start=work -o pv.cg -- ./cpuid \
	>pv.run 2>pv.err
rc=$?
[ $rc = 0 ] && pass "process_vm refused: a run: exit 0" ||
	{ fail "process_vm refused: a run: exit $rc"; cat pv.err; }
grep -q "note: process_vm_readv/writev are refused.*step engine" pv.err &&
	pass "process_vm refused: the note" || fail "process_vm refused: no note"
# (the step engine's profile has no "desc: Engine:" line)
! grep -q "^desc: Engine:" pv.cg && grep -q "Engine: step\|by the step engine" pv.err &&
	pass "process_vm refused: the step engine" ||
	fail "process_vm refused: $(grep '^desc: Engine' pv.cg)"
CACHETRACE_ENGINE=emulate \
./seccomp-deny none "$CT" $G --start=work -o ok.cg -- ./cpuid >ok.run 2>ok.err
grep -q "^desc: Engine: *emulate" ok.cg || fail "no filter: not the emulate engine"
grep -v '^desc: Engine' pv.cg >a.tmp; grep -v '^desc: Engine' ok.cg >b.tmp
cmp -s a.tmp b.tmp && pass "process_vm refused: the profile is emulate's" ||
	fail "process_vm refused: the profile differs from emulate's"
./seccomp-deny process_vm "$CT" -q --engine=emulate $G -o pe.cg -- ./cpuid \
	>pe.run 2>pe.err
rc=$?
[ $rc = 1 ] && grep -q "engine=emulate: process_vm_readv/writev are refused" pe.err &&
	pass "process_vm refused: --engine=emulate: $(cat pe.err)" ||
	{ fail "process_vm refused: --engine=emulate: exit $rc"; cat pe.err; }

# The default engine (no --engine, no CACHETRACE_ENGINE): instrument, or
# emulate for a run it cannot take from its cache (a note when the host
# or the target is why), the same profile either way.
dflt() {	# dflt TAG [command prefix...] -- [cachetrace options...]
	tag=$1; shift
	pre=
	while [ "$1" != -- ]; do pre="$pre $1"; shift; done
	shift
	# shellcheck disable=SC2086
	env -u CACHETRACE_ENGINE -u CACHETRACE_HOST $pre "$CT" $G --start=work -o "$tag.cg" "$@" \
		-- ./cpuid >"$tag.run" 2>"$tag.err"
	echo $? >"$tag.rc"
}
engine_of() { sed -n 's/^desc: Engine: *//p' "$1.cg"; }
dflt d0 --
dflt d1 CACHETRACE_HOST=inject=no --
dflt d2 ./seccomp-deny none --
dflt d3 -- --call-stacks=yes --callgrind-out-file=d3.callgrind
# (notes other than the host's own debug registers': on a host where they
# never fire the start is an int3, with its note)
other_notes() { grep "note:" "$1" | grep -v "debug registers do not fire"; }
[ "$(cat d0.rc) $(engine_of d0)" = "0 instrument" ] &&
	! other_notes d0.err && pass "default: the instrument engine, no note" ||
	{ fail "default: exit $(cat d0.rc), engine '$(engine_of d0)'"; cat d0.err; }
grep -v '^desc: Engine' d0.cg >d0.tmp
for t in d1 d2 d3; do
	grep -v '^desc: Engine' $t.cg >$t.tmp
	[ "$(cat $t.rc) $(engine_of $t)" = "0 emulate" ] && cmp -s d0.tmp $t.tmp &&
		pass "default $t: the emulate engine, the same profile" ||
		{ fail "default $t: exit $(cat $t.rc), engine '$(engine_of $t)'"; tail -n 3 $t.err; }
done
grep -q "^cachetrace: note: the instrument engine cannot run here: system calls are not injected: forced by CACHETRACE_HOST; the emulate engine runs the windows$" d1.err &&
	pass "default, no injection: $(grep note: d1.err)" ||
	{ fail "default, no injection: no note"; cat d1.err; }
grep -q "^cachetrace: note: the instrument engine cannot run here: the target has a seccomp filter.*; the emulate engine runs the windows$" d2.err &&
	pass "default, a seccomp filter: the note" ||
	{ fail "default, a seccomp filter: no note"; cat d2.err; }
! other_notes d3.err && pass "default, call stacks: no note" ||
	{ fail "default, call stacks: a note"; cat d3.err; }

# No debug registers (forced): int3 with a note; explicit hw and data
# watches refused at once.
CACHETRACE_HOST=hwbp=no "$CT" $G --start=work -o hw.cg -- ./cpuid \
	>hw.run 2>hw.err
rc=$?
[ $rc = 0 ] && grep -q "note: the debug registers do not fire (CACHETRACE_HOST=hwbp=no): --start=work is an int3" hw.err &&
	pass "hwbp=no: --start: the int3 note" ||
	{ fail "hwbp=no: --start: exit $rc"; cat hw.err; }
grep -q "^fn=work" hw.cg && cmp -s native.out hw.run &&
	pass "hwbp=no: --start: work profiled, output intact" ||
	fail "hwbp=no: --start: no work in the profile"
for opt in "--start=work --breakpoints=hw" "--start-watch=out"; do
	# shellcheck disable=SC2086
	CACHETRACE_HOST=hwbp=no timeout 20 "$CT" $opt -o x.cg -- ./cpuid \
		>x.run 2>x.err
	rc=$?
	[ $rc = 1 ] && [ "$(wc -l <x.err)" = 1 ] && [ ! -e x.cg ] &&
		[ ! -s x.run ] && grep -q "do not fire" x.err &&
		pass "hwbp=no: $opt: $(cat x.err)" ||
		{ fail "hwbp=no: $opt: exit $rc"; cat x.err; }
done

# A late step over cpuid, imitated on any host: the window ends with an
# error naming cpuid's pc, the profile is partial, the exit status 1.
pc=$(objdump -d --no-show-raw-insn cpuid |
	awk '/<work>:/ { f = 1 } f && /\tcpuid/ { sub(/:.*/, ""); gsub(/ /, ""); print; exit }')
[ -n "$pc" ] || fail "no cpuid in work()"
for e in step emulate lockstep; do
	CACHETRACE_CPUID_ON_CPU=1 CACHETRACE_HOST=cpuid-step=late \
	timeout 60 "$CT" --engine=$e $G --start=work -o late.cg -- ./cpuid \
		>late.run 2>late.err
	rc=$?
	[ $rc = 1 ] && pass "late cpuid step ($e): exit 1" ||
		fail "late cpuid step ($e): exit $rc"
	grep -q "error: the step over 0x$pc in work (cpuid) landed at" late.err &&
		pass "late cpuid step ($e): the error names 0x$pc" ||
		{ fail "late cpuid step ($e): no error naming 0x$pc"; cat late.err; }
	grep -q "^desc: Partial profile: *a single step ran instructions unseen" late.cg &&
		pass "late cpuid step ($e): partial profile" ||
		fail "late cpuid step ($e): not marked partial"
	cmp -s native.out late.run && pass "late cpuid step ($e): output intact" ||
		fail "late cpuid step ($e): output differs"
done
# Without the imitation, cpuid is executed by cachetrace: no error, and
# every engine agrees.
for e in step emulate lockstep; do
	"$CT" --engine=$e $G --start=work -o c.$e.cg -- ./cpuid >c.run 2>c.err
	rc=$?
	[ $rc = 0 ] && ! grep -q error c.err && cmp -s native.out c.run &&
		pass "cpuid in the window ($e): exit 0, output intact" ||
		{ fail "cpuid in the window ($e): exit $rc"; cat c.err; }
done
grep -v '^desc: Engine' c.step.cg >a.tmp; grep -v '^desc: Engine' c.emulate.cg >b.tmp
cmp -s a.tmp b.tmp && pass "cpuid in the window: step and emulate identical" ||
	fail "cpuid in the window: the engines differ"
# The counts of work(), by hand: every instruction of work() once, the
# loop's body 299 times more (300 iterations), cpuid one Ir; one store per
# register after each cpuid (4 x 300) and the push of rbx (cpuid clobbers
# it): Dw 1201; pop, ret and the load of out[0][0]: Dr 3.  A step that
# trapped late would lose 300 Ir and 300 Dw.
objdump -d --no-show-raw-insn cpuid | awk '/<work>:/ { f = 1; next }
	f && /^$/ { exit }
	f && match($0, /^ *[0-9a-f]+:\t/) { pc[n++] = $1; ins[n - 1] = $0 }
	END {
		for (i = 0; i < n; i++) if (ins[i] ~ /\tjne/) { j = i; t = ins[i] }
		sub(/.*jne +/, "", t); sub(/ .*/, "", t)
		for (i = 0; i < n; i++) if (pc[i] == t ":") s = i
		print n + 299 * (j - s + 1)
	}' >ir.want
want=$(cat ir.want)
# work_counts PROFILE: work()'s "Ir Dr Dw".
work_counts() {
	awk '/^fn=/ { f = ($0 == "fn=work") } f && /^[0-9]/ { ir += $2; dr += $5; dw += $8 }
		END { print ir, dr, dw }' "$1"
}
got=$(work_counts c.emulate.cg)
[ "$got" = "$want 3 1201" ] && pass "cpuid in the window: work Ir Dr Dw $got" ||
	fail "cpuid in the window: work Ir Dr Dw '$got', want '$want 3 1201'"
# cachetrace's own cpuid not the CPU's (as under valgrind, forced): a
# note, and the target's cpuid runs on the CPU.  Where this host's step
# over cpuid is precise (--check says), work() has the counts by hand;
# where it is late, the landing check ends the window with its error.
precise=no
"$CT" --check 2>&1 | grep -Eq "^single steps: *(precise over cpuid|cpuid precise)" &&
	precise=yes
for e in step instrument; do
	CACHETRACE_HOST=cpuid-own=no timeout 60 "$CT" --engine=$e $G \
		--start=work -o own.cg -- ./cpuid >own.run 2>own.err
	rc=$?
	[ "$(grep -c "note: cachetrace's own cpuid is not the CPU's" own.err)" = 1 ] &&
		pass "cpuid-own=no ($e): one note" ||
		{ fail "cpuid-own=no ($e): no note, or several"; cat own.err; }
	if [ $precise = yes ]; then
		got=$(work_counts own.cg)
		[ $rc = 0 ] && cmp -s native.out own.run &&
			[ "$got" = "$want 3 1201" ] &&
			pass "cpuid-own=no ($e): exit 0, work Ir Dr Dw $got" ||
			fail "cpuid-own=no ($e): exit $rc, work '$got', want '$want 3 1201'"
	else
		[ $rc = 1 ] && grep -q "error: the step over 0x$pc in work (cpuid) landed at" own.err &&
			pass "cpuid-own=no ($e): late step: the window ends with its error" ||
			{ fail "cpuid-own=no ($e): exit $rc"; cat own.err; }
	fi
done
finish
