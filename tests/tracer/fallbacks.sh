#!/bin/sh
# What the emulate engine cannot run in Unicorn, and where it goes.
# work() (fallbacks.c) runs rdtsc 50 times and the syscall instruction 7
# times: on the real CPU, one step each, named in the summary, most
# first.  Where the CPU has AVX2 it also runs 83 VEX instructions (vpxor;
# 40 x vmovdqu, vpaddd; vmovdqu, vzeroupper): on our own CPU (native.c),
# or, forced off (CACHETRACE_HOST=native=no), on the real CPU too.  The
# counts come from the source's loops; both runs must print what the
# program prints natively and give the same profile.
. "$(dirname "$0")/lib.sh"
build fallbacks
./fallbacks >native.out || fail "native run"
if grep -qw avx2 /proc/cpuinfo; then
	natives=83
	off_line="On the real CPU most: rdtsc 50, vmovdqu 41, vpaddd 40, syscall 7, vpxor 1"
	off_real=140
	echo "note: this CPU has AVX2: work() runs 83 VEX instructions"
else
	natives=0
	off_line="On the real CPU most: rdtsc 50, syscall 7"
	off_real=57
	echo "note: this CPU has no AVX2: work() runs no VEX instruction"
fi
one() {	# one NAME EXPECTED_LINE EXPECTED_REAL EXPECTED_NATIVES [env...]
	name=$1 line=$2 real=$3 nat=$4; shift 4
	env "$@" "$CT" --engine=emulate --start=work -o "$name.cg" \
		-- ./fallbacks >"$name.out" 2>"$name.err" ||
		fail "$name: exit status $?: $(cat "$name.err")"
	cmp -s native.out "$name.out" && pass "$name: program output" ||
		fail "$name: output $(cat "$name.out"), natively $(cat native.out)"
	got=$(grep -o 'On the real CPU most: .*' "$name.err")
	[ "$got" = "$line" ] && pass "$name: $got" ||
		fail "$name: '$got', expected '$line'"
	grep -q "instructions emulated.*, $real on the real CPU" "$name.err" &&
		pass "$name: $real on the real CPU" ||
		fail "$name: $(grep -o 'Engine: .*' "$name.err")"
	if [ "$nat" -gt 0 ]; then
		grep -q "($nat of them VEX/EVEX/BMI on our own CPU)" "$name.err"
	else
		! grep -q 'of them VEX/EVEX/BMI' "$name.err"
	fi && pass "$name: $nat on our own CPU" ||
		fail "$name: $(grep -o 'Engine: .*' "$name.err"), expected $nat on our own CPU"
}
one native "On the real CPU most: rdtsc 50, syscall 7" 57 "$natives"
one forced-off "$off_line" "$off_real" 0 CACHETRACE_HOST=native=no
grep -v '^desc: Engine' native.cg >a.txt
grep -v '^desc: Engine' forced-off.cg >b.txt
cmp -s a.txt b.txt && pass "the same profile either way" ||
	fail "the profiles differ: $(diff a.txt b.txt | head -5)"
finish
