#!/bin/sh
# --cpuid=valgrind: the target's cpuid and xgetbv answer as under valgrind.
#   cpuid-vg.sh CACHETRACE SRCDIR SCRATCH cpuidvg
# tests/progs/cpuidvg.c prints what the CPU answers (cpuid leaves, vendor,
# brand, xgetbv(0)) and whether an xsave of every component stays inside
# the size leaf 0xd gives.
# - Its output under valgrind (--tool=none, the oracle) and under
#   cachetrace --cpuid=valgrind, a whole run with each engine, must be
#   identical, and the profile must say so in a desc: line.
# - --cpuid=host (and no --cpuid) must print what the program prints
#   natively on the same CPU.
# - Each of valgrind's four CPUs, forced (CACHETRACE_HOST=vg-cpu=), must
#   show the identity VEX's sources give it in their comments (the
#   cpuinfo of the machine each was taken from): vendor, largest leaf,
#   family/model/stepping in leaf 1's eax, brand, OSXSAVE, and xgetbv 7.
# - Under vg-cpu=sse42 (fxsave in the loader), lockstep:instrument finds
#   the instrument engine's events the step engine's.
# - Bad uses: --cpuid=other, --engine=native --cpuid=valgrind,
#   --auxv=valgrind with -p.
. "$(dirname "$0")/lib.sh"
oracle_init cpuid-vg "$@"

fail=0
bad() { echo "$ME: FAIL: $*"; fail=1; }

valgrind -q --tool=none ./"$PROG" >vg.out 2>vg.err ||
	die "valgrind failed: $(cat vg.err)"
grep -q '^brand: ' vg.out || die "the program printed no brand under valgrind"
for eng in instrument emulate step; do
	"$CACHETRACE" -q --engine=$eng --cpuid=valgrind -o ct.$eng.cg -- \
		./"$PROG" >ct.$eng.out 2>ct.$eng.err ||
		{ bad "$eng: cachetrace failed: $(head -c 500 ct.$eng.err)"; continue; }
	if ! cmp -s vg.out ct.$eng.out; then
		bad "$eng: the program saw another CPU than under valgrind:"
		diff vg.out ct.$eng.out | head -20
	fi
	grep -q "^desc: CPUID: *valgrind 3.19's on this host, " ct.$eng.cg ||
		bad "$eng: no desc: CPUID: line"
done

# The host's answers are per CPU (APIC ids): both runs on CPU 0.
cpu0() { taskset -c 0 "$@"; }
cpu0 ./"$PROG" >native.out 2>&1 || die "$PROG fails natively"
cpu0 "$CACHETRACE" -q --cpuid=host -o host.cg -- ./"$PROG" >host.out 2>&1 ||
	bad "--cpuid=host: cachetrace failed"
cmp -s native.out host.out ||
	{ bad "--cpuid=host: not the host's answers:"; diff native.out host.out | head; }
grep -q "^desc: CPUID: *this host's, " host.cg ||
	bad "--cpuid=host: no desc: CPUID: line"

# forced CPU, vendor/max leaf, leaf 1 eax, brand, xgetbv (- for none)
while read -r cpu vendor max eax xgetbv brand; do
	CACHETRACE_HOST=vg-cpu=$cpu "$CACHETRACE" -q \
		--cpuid=valgrind -o f.cg -- ./"$PROG" >f.$cpu.out 2>&1 ||
		{ bad "vg-cpu=$cpu: cachetrace failed"; continue; }
	grep -qx "vendor: $vendor, max leaf $max" f.$cpu.out ||
		bad "vg-cpu=$cpu: not $vendor, max leaf $max: $(grep vendor f.$cpu.out)"
	grep -q "^00000001\.0: $eax " f.$cpu.out ||
		bad "vg-cpu=$cpu: leaf 1's eax is not $eax"
	[ "$(sed -n 's/^brand: *//p' f.$cpu.out)" = "$brand" ] ||
		bad "vg-cpu=$cpu: brand is not '$brand': $(grep brand f.$cpu.out)"
	if [ "$xgetbv" = - ]; then
		grep -qx "no OSXSAVE" f.$cpu.out || bad "vg-cpu=$cpu: OSXSAVE shown"
	else
		grep -qx "xgetbv(0): 00000000 $xgetbv" f.$cpu.out ||
			bad "vg-cpu=$cpu: xgetbv(0) is not $xgetbv"
		grep -qx "xsave: within the 832 bytes of leaf 0xd" f.$cpu.out ||
			bad "vg-cpu=$cpu: xsave went past leaf 0xd's 832 bytes"
	fi
done <<'TABLE'
avx2 GenuineIntel 0xd 000306c3 00000007 Intel(R) Core(TM) i7-4910MQ CPU @ 2.90GHz
avx GenuineIntel 0xd 000206a7 00000007 Intel(R) Core(TM) i5-2300 CPU @ 2.80GHz
sse42 GenuineIntel 0xb 00020652 - Intel(R) Core(TM) i5 CPU         670  @ 3.47GHz
baseline AuthenticAMD 0x1 00000f5a - AMD Opteron (tm) Processor 848
TABLE

# A CPU without XSAVE: glibc's loader saves the registers with fxsave
# (_dl_runtime_resolve_fxsave), whose accesses are VEX's sequence (the
# step engine's); the instrument engine logged its operand's 512 bytes
# until its events were checked here against the step engine's, one
# instruction at a time.
CACHETRACE_HOST=vg-cpu=sse42 "$CACHETRACE" -q --engine=lockstep:instrument \
	--cpuid=valgrind -o li.cg -- ./"$PROG" >li.out 2>li.err ||
	bad "vg-cpu=sse42, lockstep:instrument: status $?: $(grep -m1 'divergence' li.err)"

"$CACHETRACE" -q --cpuid=intel -- ./"$PROG" >/dev/null 2>bad.err
rc=$?
{ [ $rc -eq 2 ] && grep -q -- "--cpuid: host or valgrind, not 'intel'" bad.err; } ||
	bad "--cpuid=intel: exit $rc, $(cat bad.err)"
"$CACHETRACE" -q --engine=native --cpuid=valgrind -- ./"$PROG" >/dev/null 2>bad.err
rc=$?
{ [ $rc -eq 2 ] && grep -q -- "--cpuid=valgrind" bad.err; } ||
	bad "--engine=native --cpuid=valgrind: exit $rc, $(cat bad.err)"

"$CACHETRACE" -q --auxv=valgrind --start=main -p $$ >/dev/null 2>bad.err
rc=$?
{ [ $rc -eq 2 ] && grep -q -- "--auxv=valgrind needs a program to launch" bad.err; } ||
	bad "--auxv=valgrind -p: exit $rc, $(cat bad.err)"

[ $fail -eq 0 ] && echo "$ME: the program sees valgrind's CPU ($(sed -n 's/^brand: //p' vg.out)) with every engine"
exit $fail
