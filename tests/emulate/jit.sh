#!/bin/sh
# Code rewritten between two windows, natively (tests/progs/jit.c with
# --start=run_it --intervals=3: a JIT's W^X rewrite of jitted() before
# each call): every engine must run and count the code as it is at each
# window, not as it was decoded or translated at the first.  jitted()'s
# counts, by hand (jit.c): Ir 16,000, Dr 12,000, Dw 2,000; the program's
# output as natively (the instrument engine ran its stale copy: 30000
# where 2033000 is right).
#   jit.sh CACHETRACE SRCDIR SCRATCH
set -u
CT=$(realpath "$1"); SRCDIR=$(realpath "$2"); W=$3/jit
rm -rf "$W"; mkdir -p "$W"; cd "$W" || exit 1
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
${CC:-cc} -O2 -g -o jit "$SRCDIR/tests/progs/jit.c" || { echo "cannot build"; exit 1; }
./jit >ref || fail "native run"
for e in instrument step emulate; do
	"$CT" -q --engine=$e --start=run_it --intervals=3 -o $e.cg -- ./jit \
		>$e.out 2>$e.err || fail "$e: status $?: $(head -2 $e.err)"
	got=$(awk '/^fn=jitted$/ { f = 1; next } /^fn=/ { f = 0 }
		f && /^[0-9]/ { ir += $2; dr += $5; dw += $8 }
		END { print ir + 0, dr + 0, dw + 0 }' $e.cg)
	[ "$got" = "16000 12000 2000" ] && echo "ok: $e: jitted's Ir Dr Dw $got" ||
		fail "$e: jitted's Ir Dr Dw '$got', not '16000 12000 2000'"
	cmp -s ref $e.out && echo "ok: $e: the output as natively" ||
		fail "$e: output '$(cat $e.out)', natively '$(cat ref)'"
	grep -q '^events: Ir I1mr ILmr Dr D1mr DLmr Dw' $e.cg ||
		fail "$e: not the event order the counts above read"
done
# Written into a writable and executable page with no system call, in
# the window: SSE stores, then AVX ones (which the emulate engine runs on
# the real CPU: Unicorn ran its stale translation, 58000 printed).
for how in rwx avx; do
	./jit $how >ref.$how || fail "$how: native run"
	if [ "$(cat ref.$how)" = "no rwx" ]; then
		echo "ok: $how: this host refuses writable and executable memory"
		continue
	fi
	for e in instrument step emulate; do
		"$CT" -q --engine=$e --start=work_rwx -o $how-$e.cg -- ./jit $how \
			>$how-$e.out 2>$how-$e.err ||
			fail "$how $e: status $?: $(head -2 $how-$e.err)"
		got=$(awk '/^fn=\?\?\?$/ { f = 1; next } /^fn=/ { f = 0 }
			f && /^[0-9]/ { ir += $2; dr += $5; dw += $8 }
			END { print ir + 0, dr + 0, dw + 0 }' $how-$e.cg)
		[ "$got" = "16000 12000 2000" ] &&
			echo "ok: $how $e: the page's Ir Dr Dw $got" ||
			fail "$how $e: the page's Ir Dr Dw '$got', not '16000 12000 2000'"
		cmp -s ref.$how $how-$e.out && echo "ok: $how $e: the output as natively" ||
			fail "$how $e: output '$(cat $how-$e.out)', natively '$(cat ref.$how)'"
	done
done
[ $fails -eq 0 ] && echo "jit: all passed"
exit $((fails != 0))
