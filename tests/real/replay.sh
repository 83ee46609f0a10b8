#!/bin/sh
# Exact replay check of the cache model (issue 11).
#   replay.sh CACHETRACE SRCDIR SCRATCH PROG REPLAY
# PROG is tests/progs/PROG.c, REPLAY the replay binary (replay.c).
# 1. Lackey's access stream of a whole run, replayed through our
#    Cachegrind model, must give Cachegrind's own totals of the same
#    program exactly (Ir I1mr ILmr Dr D1mr DLmr Dw D1mw DLmw): both tools
#    run the same code under the same valgrind, so the stream is the same
#    one Cachegrind simulated, and every miss count is a deterministic
#    function of it.  The one known difference between the two streams:
#    Cachegrind clamps the accesses of VEX's dirty helpers (fxsave,
#    xsave: above 32 bytes) to 16 bytes, Lackey prints their real size, so
#    the replay clamps those (replay.c --clamp16).  The valgrind runs go
#    without GLIBC_TUNABLES: ld.so's parser of it takes a few more or fewer
#    instructions depending on where valgrind put the environment
#    (measured: _dl_tunable_set_hwcaps +24 Ir with a longer
#    --cachegrind-out-file name), and the two runs must be the same run.
# 2. cachetrace's own --trace-mem stream of a run, replayed, must give
#    the totals of the profile that same run wrote (no clamping: our model
#    takes whole accesses).
. "$(dirname "$0")/../oracle/lib.sh"
[ $# -eq 5 ] || { echo "usage: replay.sh CACHETRACE SRCDIR SCRATCH PROG REPLAY" >&2; exit 1; }
REPLAY=$(realpath "$5")
oracle_init replay "$1" "$2" "$3" "$4"
ORACLE_DIR=$(realpath "$SRCDIR/tests/oracle")
I1=32768,8,64 D1=32768,8,64 LL=1048576,16,64
EV="Ir I1mr ILmr Dr D1mr DLmr Dw D1mw DLmw"

# summary FILE: the totals of a Cachegrind-format file, in EV's order.
summary() {
	awk -v want="$EV" '/^events:/ { for (i = 2; i <= NF; i++) col[$i] = i - 1 }
	     /^summary:/ { n = split(want, w, " ")
		line = ""
		for (k = 1; k <= n; k++)
			line = line ((k > 1) ? " " : "") ((w[k] in col) ? $(col[w[k]] + 1) : "-")
		print line }' "$1"
}

env -u GLIBC_TUNABLES valgrind -q --tool=lackey --trace-mem=yes \
	--log-file=lackey.txt ./"$PROG" $PROG_ARGS >lk.stdout 2>lk.stderr || die "lackey failed"
# shellcheck disable=SC2086
env -u GLIBC_TUNABLES valgrind -q --tool=cachegrind --cache-sim=yes $CACHE_OPTS \
	--cachegrind-out-file=vg.cg ./"$PROG" $PROG_ARGS >vg.stdout 2>vg.stderr ||
	die "cachegrind failed: $(cat vg.stderr)"
"$REPLAY" --clamp16 "$I1" "$D1" "$LL" lackey.txt >replay-lackey.txt ||
	die "replay of Lackey's stream failed"
run_cachetrace ct.cg --trace-mem="$W/ct.trace"
"$REPLAY" "$I1" "$D1" "$LL" ct.trace >replay-ct.txt || die "replay of our stream failed"

fail=0
want=$(summary vg.cg); got=$(sed -n 2p replay-lackey.txt)
if [ "$want" != "$got" ]; then
	echo "$ME: $PROG: Lackey's stream replayed differs from Cachegrind's totals ($W):"
	echo "  events     $EV"; echo "  cachegrind $want"; echo "  replay     $got"
	fail=1
fi
want=$(summary ct.cg); got=$(sed -n 2p replay-ct.txt)
if [ "$want" != "$got" ]; then
	echo "$ME: $PROG: our --trace-mem stream replayed differs from our profile's totals ($W):"
	echo "  events     $EV"; echo "  profile    $want"; echo "  replay     $got"
	fail=1
fi
[ $fail -eq 0 ] && echo "$ME: $PROG: both streams replay to the exact totals ($(summary vg.cg))"
exit $fail
