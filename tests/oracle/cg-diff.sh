#!/bin/sh
# Differential test of a whole run against valgrind's Cachegrind.
#   cg-diff.sh CACHETRACE SRCDIR SCRATCH PROG
# Runs PROG under Cachegrind and under cachetrace with the same geometry
# and, for the program's own functions (text symbols whose debug info names
# PROG.c), requires Ir Dr Dw Bc Bi identical per function and every miss
# count within the rule in cg-compare.awk (3% or 5 counts). It also checks
# our file on its own: summary: equals the column totals, and cg_annotate
# reads it without a warning.
#
# With LIBC_FNS="fn1 fn2" (the strmem test) those libc functions are
# compared the same way: GLIBC_TUNABLES (lib.sh) makes glibc choose the
# same string functions natively as under valgrind.
. "$(dirname "$0")/lib.sh"
oracle_init cg-diff "$@"

own=$(own_functions | awk '{ print $3 }' | tr '\n' ' ')
[ -n "$own" ] || die "no functions of $PROG.c found by nm -l"

# VG_OPTS, CT_OPTS: extra options of each (--vex-guest-chase=no and
# --vex-chase=no for the run without chasing)
# shellcheck disable=SC2086
run_cachegrind vg.cg ${VG_OPTS:-}
# shellcheck disable=SC2086
run_cachetrace ct.cg ${CT_OPTS:-}

fail=0
if ! awk -f "$ORACLE_DIR/cg-summary.awk" ct.cg >summary.txt; then
	echo "$ME: $PROG: our summary: line is wrong:"; cat summary.txt; fail=1
fi
awk -f "$ORACLE_DIR/cg-summary.awk" vg.cg >/dev/null ||
	die "valgrind's own summary does not add up: the checker is broken"

if ! cg_annotate ct.cg >annotate.out 2>annotate.err || [ -s annotate.err ] ||
   grep -i -q 'warning' annotate.out; then
	echo "$ME: $PROG: cg_annotate complains about our file:"
	cat annotate.err; grep -i 'warning' annotate.out; fail=1
fi

want="$own $LIBC_FNS"
awk -v own="$want" -f "$ORACLE_DIR/cg-aggregate.awk" vg.cg | sort >vg.agg
awk -v own="$want" -f "$ORACLE_DIR/cg-aggregate.awk" ct.cg | sort >ct.agg
grep -q . vg.agg || die "Cachegrind shows none of $want"
if ! awk -v exact="Ir Dr Dw Bc Bi" \
	 -v approx="I1mr ILmr D1mr DLmr D1mw DLmw Bcm Bim" \
	 -v musthave="work $LIBC_FNS" \
	 -f "$ORACLE_DIR/cg-compare.awk" vg.agg ct.agg >diff.txt; then
	echo "$ME: $PROG: per-function counts differ from Cachegrind ($W):"
	cat diff.txt
	fail=1
fi
[ $fail -eq 0 ] && echo "$ME: $PROG: $(wc -l <vg.agg) functions agree with Cachegrind"
exit $fail
