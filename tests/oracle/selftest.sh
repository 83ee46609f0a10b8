#!/bin/sh
# Self-test of the oracle's checkers, without cachetrace: they must accept
# a Cachegrind profile compared with itself and reject it after one count
# is changed, so a passing oracle test means something.
#   selftest.sh CACHETRACE SRCDIR SCRATCH PROG     (CACHETRACE unused)
. "$(dirname "$0")/lib.sh"
oracle_init selftest "$@"

own=$(own_functions | awk '{ print $3 }' | tr '\n' ' ')
run_cachegrind vg.cg
agg() { awk -v own="$own" -f "$ORACLE_DIR/cg-aggregate.awk" "$1" | sort; }
compare() { awk -v exact="Ir Dr Dw Bc Bi" -v approx="I1mr ILmr D1mr DLmr D1mw DLmw Bcm Bim" \
	-v musthave="work" -f "$ORACLE_DIR/cg-compare.awk" "$1" "$2" >/dev/null; }
agg vg.cg >a.agg
awk_quiet() { awk "$@" >/dev/null; }
fail=0
expect() {	# WANT(0|1) WHAT COMMAND...
	want=$1; what=$2; shift 2
	"$@"; got=$?
	[ $got -eq 0 ] && got=0 || got=1
	if [ $got -ne "$want" ]; then echo "$ME: FAIL: $what"; fail=1; fi
}
expect 0 "identical profiles compare equal" compare a.agg a.agg
expect 0 "valgrind's summary adds up" awk_quiet -f "$ORACLE_DIR/cg-summary.awk" vg.cg

# The first cost line of work(): one more Ir there must be caught.
awk '/^fn=/ { f = ($0 == "fn=work") } f && /^[0-9]/ && !done { $2 = $2 + 1; done = 1 } { print }' \
	vg.cg >ir.cg
agg ir.cg >ir.agg
expect 1 "one extra Ir in work is a difference" compare a.agg ir.agg
expect 1 "a summary that no longer adds up is caught" awk_quiet -f "$ORACLE_DIR/cg-summary.awk" ir.cg

# A function missing from our side is a difference.
grep -v '^work ' a.agg >nowork.agg
expect 1 "a missing function is a difference" compare a.agg nowork.agg

# Misses: 5 counts off passes (slack), 6 plus 3% of a large count fails.
awk '$1 == "work" { $6 += 5 } { print }' a.agg >m5.agg
expect 0 "5 extra D1mr are within the slack" compare a.agg m5.agg
# Misses of 1000 against 1020 (2%) pass, against 1046 (4.6%) fail.
for v in 1000 1020 1046; do
	awk -v v=$v '$1 == "work" { $6 = v } { print }' a.agg >m$v.agg
done
expect 0 "D1mr 2% off is within the rule" compare m1000.agg m1020.agg
expect 1 "D1mr 4.6% off is caught" compare m1000.agg m1046.agg

# Lackey aggregation: the same trace twice agrees; a dropped access does not.
own_functions >ranges.txt
GLIBC_TUNABLES=$ORACLE_TUNABLES valgrind --tool=lackey --trace-mem=yes \
	--log-file=lackey.log ./"$PROG" >/dev/null 2>&1 || die "lackey failed"
awk -f "$ORACLE_DIR/lackey-agg.awk" ranges.txt lackey.log | sort >l1.agg
grep -q ' X ' l1.agg || { echo "$ME: FAIL: no own pcs in the Lackey trace"; fail=1; }
# Drop the first data access of the first own pc that makes one.
pc=$(awk '$2 != "X" { print $1; exit }' l1.agg)
awk -v pc="$pc" '/^I / { split($2, a, ","); p = tolower(a[1]); sub(/^0+/, "", p); cur = (p == pc) }
	/^ [LSM] / && cur && !done { done = 1; next } { print }' lackey.log >l2.log
awk -f "$ORACLE_DIR/lackey-agg.awk" ranges.txt l2.log | sort >l2.agg
expect 1 "a dropped access of the first function is caught" \
	test "$(cat l1.agg)" = "$(cat l2.agg)"
[ $fail -eq 0 ] && echo "$ME: $PROG: the checkers accept and reject as they should"
exit $fail
