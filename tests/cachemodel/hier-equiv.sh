#!/bin/sh
# hier configured as Cachegrind's I1/D1/LL gives Cachegrind's counts.
#   hier-equiv.sh CACHETRACE SRCDIR SCRATCH PROG [POLICY]
# Runs PROG (tests/progs/PROG.c, built as tests/oracle/lib.sh builds it)
# twice natively under cachetrace, --model=cachegrind and --model=hier
# with --cache=I1:32k:8:64,D1:32k:8:64,LL:1M:16:64 (POLICY, e.g. incl,
# added to every level; default nine, which is what Cachegrind's model
# is), and requires every count of every source line identical, hier's
# LLImr LLmr LLmw read as Cachegrind's ILmr DLmr DLmw.  Both runs are
# native with ASLR off, so the addresses are the same.
# Exit 0 pass, 1 fail, 77 when PROG cannot run here.
ME=hier-equiv
[ $# -ge 4 ] || { echo "usage: $ME CACHETRACE SRCDIR SCRATCH PROG [POLICY]" >&2; exit 1; }
CACHETRACE=$(realpath "$1"); SRCDIR=$(realpath "$2"); SCRATCH=$3; PROG=$4
POLICY=${5:-nine}
HERE=$(realpath "$(dirname "$0")")
die() { echo "$ME: $PROG: $*" >&2; exit 1; }
SRC=$SRCDIR/tests/progs/$PROG.c
[ -f "$SRC" ] || die "no test program $SRC"
W=$SCRATCH/$ME-$PROG-$POLICY
rm -rf "$W" && mkdir -p "$W" || die "cannot make $W"
W=$(realpath "$W")
xflags=$(sed -n 's/.*oracle-cflags: *\([^*]*\).*/\1/p' "$SRC" | head -n 1)
# shellcheck disable=SC2086
${CC:-cc} -O2 -g -fno-pie -no-pie $xflags -o "$W/$PROG" "$SRC" || die "cannot build $SRC"
cd "$W" || die "cannot cd to $W"
./"$PROG" >native.out 2>&1
rc=$?
[ $rc -eq 77 ] && { echo "$ME: SKIP: $PROG cannot run here" >&2; exit 77; }
[ $rc -eq 0 ] || die "fails natively (exit $rc)"

GEOM="--I1=32768,8,64 --D1=32768,8,64 --LL=1048576,16,64"
SPEC="I1:32k:8:64:i:$POLICY,D1:32k:8:64:d:$POLICY,LL:1M:16:64:$POLICY"
# shellcheck disable=SC2086
"$CACHETRACE" -q --start=work $GEOM --model=cachegrind -o cg.out -- ./"$PROG" \
	>cg.stdout 2>cg.stderr || die "cachegrind model run failed: $(head -c 1000 cg.stderr)"
"$CACHETRACE" -q --start=work --model=hier --cache="$SPEC" -o hier.out -- ./"$PROG" \
	>hier.stdout 2>hier.stderr || die "hier run failed: $(head -c 1000 hier.stderr)"

EVENTS="Ir I1mr ILmr Dr D1mr DLmr Dw D1mw DLmw Bc Bcm Bi Bim"
awk -v keep="$EVENTS" -f "$HERE/cg-lines.awk" cg.out | sort >cg.lines
awk -v keep="$EVENTS" -v map="LLImr=ILmr LLmr=DLmr LLmw=DLmw" \
	-f "$HERE/cg-lines.awk" hier.out | sort >hier.lines
[ "$(grep -c ' Ir ' cg.lines)" -ge 5 ] || die "the cachegrind profile has almost no lines"
grep -q ' Dr ' cg.lines || die "no data accesses at all: nothing compared"
if ! diff cg.lines hier.lines >diff.txt; then
	echo "$ME: $PROG ($POLICY): per-line counts differ (< cachegrind, > hier; $W):"
	head -n 40 diff.txt
	exit 1
fi
echo "$ME: $PROG ($POLICY): $(wc -l <cg.lines) line counts identical"
