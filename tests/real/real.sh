#!/bin/sh
# Real-library oracle: a driver over a Debian library nobody here wrote,
# under Cachegrind and under cachetrace --start=work, same geometry.
#   real.sh CACHETRACE SRCDIR SCRATCH DRIVER
# DRIVER is tests/real/DRIVER.c; its "real-pkg:" line names the pkg-config
# package it links (non-PIE -O2 -g).  Its work() does the library work;
# with the argument 0 main skips work().
#
# Which functions are compared (a rule independent of both profiles'
# shapes): every function with Ir > 0 in Cachegrind's run of the driver
# and Ir = 0 (absent) in Cachegrind's run with work() skipped: those run
# only inside work(), so Cachegrind's whole-run count is work()'s count,
# and cachetrace's --start=work profile must have it exactly, on
# Ir Dr Dw Bc Bi.  (A function also run outside work() cannot be compared
# per function without a window oracle: tests/oracle/region.sh does that.)
#
# Cachegrind runs with valgrind's default settings, chasing included:
# cachetrace follows VEX's superblocks (--vex-chase=yes, its default;
# src/decode/chase.c), where the "A && B" idiom of two conditional
# branches sharing a destination runs the second block speculatively (its
# Ir counted although it did not run, the first branch's Bc gone).
# VG_CHASE=--vex-guest-chase=no CT_OPTS=--vex-chase=no compares without
# chasing on both sides.  LD_BIND_NOW=1 on both sides: lazy binding
# inside work() would run ld.so's resolver at different first calls.
#
# Every function that still differs must be listed in known-differences.txt
# ("DRIVER FUNCTION reason"); an unlisted difference fails, and so does a
# listed function that no longer differs (the list cannot rot).
. "$(dirname "$0")/../oracle/lib.sh"
ME=real
ORACLE_DIR=$(realpath "$(dirname "$0")/../oracle")
[ $# -eq 4 ] || die "usage: $ME CACHETRACE SRCDIR SCRATCH DRIVER"
CACHETRACE=$(realpath "$1"); SRCDIR=$(realpath "$2"); SCRATCH=$3; PROG=$4
command -v valgrind >/dev/null 2>&1 || die "valgrind not installed: run tests/install-deps.sh"
SRC=$SRCDIR/tests/real/$PROG.c
KNOWN=$SRCDIR/tests/real/known-differences.txt
[ -f "$SRC" ] || die "no driver $SRC"
pkg=$(sed -n 's/.*real-pkg: *\([^ *]*\).*/\1/p' "$SRC" | head -n 1)
flags=$(pkg-config --cflags --libs "$pkg") ||
	die "pkg-config $pkg failed: run tests/install-deps.sh"
W=$SCRATCH/real-$PROG
rm -rf "$W" && mkdir -p "$W" && W=$(realpath "$W") && cd "$W" || die "cannot make $W"
# shellcheck disable=SC2086
${CC:-cc} -O2 -g -fno-pie -no-pie -o "$PROG" "$SRC" $flags || die "cannot build $SRC"
export LD_BIND_NOW=1
GLIBC_TUNABLES=$ORACLE_TUNABLES ./"$PROG" >native.out 2>&1 || die "$PROG fails natively"

vg() {	# OUT ARGS...
	out=$1; shift
	# shellcheck disable=SC2086
	GLIBC_TUNABLES=$ORACLE_TUNABLES valgrind -q --tool=cachegrind \
		${VG_CHASE:-} --cache-sim=yes --branch-sim=yes $CACHE_OPTS \
		--cachegrind-out-file="$out" ./"$PROG" "$@" >vg.stdout 2>vg.stderr ||
		die "valgrind failed: $(cat vg.stderr)"
}
vg vg.cg
vg vg0.cg 0
# shellcheck disable=SC2086
run_cachetrace ct.cg --start=work ${CT_OPTS:-}
cmp -s native.out ct.stdout || die "the traced run printed other output"

# Functions with Ir > 0 in a profile.
ran() {
	awk '/^events:/ { for (i = 2; i <= NF; i++) if ($i == "Ir") c = i }
	     /^fn=/ { f = substr($0, 4) }
	     /^[0-9]/ { if ($c != "." && $c > 0) s[f] = 1 }
	     END { for (f in s) print f }' "$1" | LC_ALL=C sort
}
ran vg.cg >vg.fns
ran vg0.cg >vg0.fns
LC_ALL=C comm -23 vg.fns vg0.fns >inside.fns
grep -qx work inside.fns || die "work() not in Cachegrind's profile"
own=$(tr '\n' ' ' <inside.fns)
awk -v own="$own" -f "$ORACLE_DIR/cg-aggregate.awk" vg.cg | sort >vg.agg
awk -v own="$own" -f "$ORACLE_DIR/cg-aggregate.awk" ct.cg | sort >ct.agg
awk -v exact="Ir Dr Dw Bc Bi" -v musthave="work" \
	-f "$ORACLE_DIR/cg-compare.awk" vg.agg ct.agg >diff.txt
[ $? -le 1 ] || die "cg-compare.awk failed"
# The functions that differ, and those listed for this driver.
awk 'NR > 1 { print $1 }' diff.txt | LC_ALL=C sort -u >differ.fns
awk -v d="$PROG" '!/^#/ && $1 == d { print $2 }' "$KNOWN" | LC_ALL=C sort -u >listed.fns
# "varies:" entries differ from run to run (a library seeds a hash from the
# clock): allowed to differ, never stale.
awk -v d="$PROG" '!/^#/ && $1 == d && $3 == "varies:" { print $2 }' "$KNOWN" |
	LC_ALL=C sort -u >varies.fns
fail=0
unlisted=$(LC_ALL=C comm -23 differ.fns listed.fns)
stale=$(LC_ALL=C comm -13 differ.fns listed.fns | LC_ALL=C comm -23 - varies.fns)
if [ -n "$unlisted" ]; then
	echo "$ME: $PROG: functions differ from Cachegrind and are not in known-differences.txt ($W):"
	for f in $unlisted; do awk -v f="$f" 'NR == 1 || $1 == f' diff.txt; done
	fail=1
fi
if [ -n "$stale" ]; then
	echo "$ME: $PROG: listed in known-differences.txt but identical now: $stale"
	fail=1
fi
n=$(wc -l <inside.fns); nd=$(wc -l <differ.fns)
nl=$(wc -l <listed.fns)
echo "$ME: $PROG: $((n - nd))/$n functions run only inside work() identical on Ir Dr Dw Bc Bi; $nd differ ($nl listed)"
exit $fail
