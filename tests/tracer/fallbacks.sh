#!/bin/sh
# The emulate engine's summary names what ran on the real CPU, by
# mnemonic, most first: work() runs rdtsc 50 times and the syscall
# instruction 7 times (the loops' counts), and nothing else Unicorn cannot
# run.
. "$(dirname "$0")/lib.sh"
build fallbacks
"$CT" --engine=emulate --start=work -o p.cg -- ./fallbacks >out.txt 2>err.txt ||
	fail "exit status $?: $(cat err.txt)"
grep -q '^1$' out.txt && pass "program output" || fail "output: $(cat out.txt)"
line=$(grep -o 'On the real CPU most: .*' err.txt)
[ "$line" = "On the real CPU most: rdtsc 50, syscall 7" ] &&
	pass "summary: $line" || fail "summary: '$line'"
grep -q 'instructions emulated, 57 on the real CPU' err.txt &&
	pass "57 on the real CPU" ||
	fail "count: $(grep -o 'Engine: .*' err.txt)"
finish
