#!/bin/sh
# --threads=all under the emulate engine (turns of 1024 instructions,
# handed over inside the emulator) against the step engine, on tests/cachemodel/falseshare.c
# "padded": two threads each run 3000 locked increments of their own
# counter.  Their own lines (falseshare.c) must have the same Ir, Dr and Dw
# under both engines (nothing there depends on how the threads
# interleave), the emulate profile must say "Engine: emulate", and the
# program's output must be its native one.  Not compared: libc's and
# main's lines (a join that finds its thread done or not runs other code)
# and misses (a cache both threads share sees their interleaving).
#   threads.sh CACHETRACE SRCDIR SCRATCH
. "$(dirname "$0")/lib.sh"
${CC:-cc} -O2 -g -fno-pie -no-pie -pthread -o falseshare \
	"$SRCDIR/tests/cachemodel/falseshare.c" || { echo "cannot build"; exit 1; }
./falseshare padded >native.out || fail "native run"
for e in step emulate; do
	"$CT" --engine=$e --threads=all --start=work --branch-sim=no \
		-o $e.cg -- ./falseshare padded >$e.out 2>$e.err ||
		fail "$e: exit $?: $(tail -n 3 $e.err)"
	cmp -s native.out $e.out && pass "$e: output as natively" ||
		fail "$e: output $(cat $e.out), natively $(cat native.out)"
	awk -v keep="Ir Dr Dw" -f "$SRCDIR/tests/cachemodel/cg-lines.awk" $e.cg |
		grep '^[^|]*falseshare\.c|' | sort >$e.lines
done
grep -q '^desc: Engine: *emulate' emulate.cg && pass "emulate: desc: Engine: emulate" ||
	fail "emulate: $(grep '^desc: Engine' emulate.cg)"
grep -q 'Engine: emulate: [1-9][0-9]* instructions emulated' emulate.err &&
	pass "emulate: $(grep -o 'Engine: emulate: [0-9]* instructions emulated' emulate.err)" ||
	fail "emulate: $(grep -o 'Engine: .*' emulate.err)"
# A turn hands over to the other thread inside the emulator: the
# instruction at which a turn ends is not stepped on the real CPU.  Each
# worker's loop (lock add, sub, jne: ~9,000 instructions, turns of 1024)
# would otherwise put them among the real CPU's instructions (so it was:
# "mov 55, syscall 48, jne 12, sub 11, lock 8"); now only system calls,
# their restarts and the dynamic linker's xsavec/xrstor go there.
most=$(grep -o 'On the real CPU most: .*' emulate.err)
case "$most" in
*" lock "*|*" jne "*|*" sub "*) fail "emulate: a turn's end stepped on the CPU: $most" ;;
*) pass "emulate: turns hand over in the emulator ($most)" ;;
esac
# main waits in pthread_join (a futex wait) while the workers run: its
# turns are given away while they can run, rather than each being a real
# step back into the wait that the next turn's stop takes it out of (it
# was "mov 43" on the real CPU: the instruction after the syscall, which
# the kernel restarts).
given=$(sed -n 's/.*; \([0-9]*\) turns given away in a futex wait.*/\1/p' emulate.err)
[ "${given:-0}" -gt 0 ] && pass "emulate: $given turns given away in a futex wait ($most)" ||
	fail "emulate: no turn given away: $(grep -o 'Engine: .*' emulate.err)"
# worker_a's and worker_b's loops: 3000 locked adds each
n=$(grep -c '/\* LOOP-[AB] \*/' "$SRCDIR/tests/cachemodel/falseshare.c")
[ "$n" = 2 ] || fail "falseshare.c: LOOP-A/LOOP-B markers"
if [ -s step.lines ] && cmp -s step.lines emulate.lines; then
	pass "falseshare.c's lines: the same Ir, Dr, Dw ($(wc -l <step.lines) counts)"
else
	fail "falseshare.c's lines differ:"; diff step.lines emulate.lines | head -n 10
fi
finish
