#!/bin/sh
# A whole run, function by function, against Cachegrind's (issue 32).
#   whole-run.sh CACHETRACE SRCDIR SCRATCH KIND [PROG]
# KIND: dynamic, pie or static (tests/progs/PROG.c built that way), or
# gzip (Debian's /usr/bin/gzip compressing a generated file: code nobody
# here wrote).
# cachetrace runs with --cpuid=valgrind --auxv=valgrind, the target in
# the environment valgrind gives its client (captured from /usr/bin/env
# run under valgrind, its LD_PRELOAD of valgrind's preload library
# included: cachetrace does not imitate it, the test equalises it), and
# glibc.pthread.rseq=0 on both sides (valgrind 3.19 fails rseq with
# ENOSYS).  Every named function must then be identical on Ir Dr Dw Bc Bi
# and within cg-compare.awk's bounds on misses, except the ones whose
# counts follow from a layout difference (docs/whole-runs.md lists them
# with their causes):
# - code under a symbol without a size (crt's _init, _fini, frame_dummy,
#   register_tm_clones...): Cachegrind names it ???;
# - _dl_sort_maps, _dlfo_sort_mappings: they sort by load address;
# - strcspn (ld.so's generic one): its work depends on the alignment of
#   the environment strings, which sit elsewhere on valgrind's stack.
. "$(dirname "$0")/lib.sh"
ME=whole-run
[ $# -ge 4 ] || die "usage: $ME CACHETRACE SRCDIR SCRATCH KIND [PROG]"
CACHETRACE=$(realpath "$1"); SRCDIR=$(realpath "$2"); KIND=$4; PROG=${5:-}
command -v valgrind >/dev/null 2>&1 ||
	die "valgrind not installed: run tests/install-deps.sh"
W=$3/$ME-$KIND${PROG:+-$PROG}
rm -rf "$W" && mkdir -p "$W" && W=$(realpath "$W") && cd "$W" ||
	die "cannot make $W"

case $KIND in
dynamic) flags="-fno-pie -no-pie" ;;
pie) flags="-fPIE -pie" ;;
static) flags="-static" ;;
gzip) ;;
*) die "unknown kind $KIND" ;;
esac
if [ "$KIND" = gzip ]; then
	seq 1 20000 >input
	CMD="/usr/bin/gzip -c -6 input"
	own=
	must=_dl_relocate_object
else
	# shellcheck disable=SC2086
	${CC:-cc} -O2 -g $flags -o prog "$SRCDIR/tests/progs/$PROG.c" ||
		die "cannot build $PROG"
	CMD=./prog
	own=prog
	must=main
fi

BASE="PATH=/usr/bin:/bin LC_ALL=C GLIBC_TUNABLES=glibc.pthread.rseq=0"
# shellcheck disable=SC2086
env -i $BASE valgrind -q --tool=none /usr/bin/env >client.env 2>vg.err ||
	die "valgrind --tool=none env failed: $(cat vg.err)"
grep -q '^LD_PRELOAD=' client.env ||
	die "no LD_PRELOAD in valgrind's client environment"
! grep -q ' ' client.env || die "a space in valgrind's client environment"

# shellcheck disable=SC2086
env -i $BASE valgrind -q --tool=cachegrind --cache-sim=yes --branch-sim=yes \
	$CACHE_OPTS --cachegrind-out-file=vg.cg $CMD >vg.out 2>vg.err ||
	die "Cachegrind failed: $(cat vg.err)"
# shellcheck disable=SC2046,SC2086
env -i $(cat client.env) "$CACHETRACE" -q --cpuid=valgrind --auxv=valgrind \
	$CACHE_OPTS --cache-sim=yes --branch-sim=yes -o ct.cg -- $CMD \
	>ct.out 2>ct.err || die "cachetrace failed: $(head -c 2000 ct.err)"
cmp -s vg.out ct.out || die "the program's output differs under the two"

# code under symbols without a size: Cachegrind's ???
: >skip.txt
printf '%s\n' '???' _dl_sort_maps _dlfo_sort_mappings strcspn >>skip.txt
[ -n "$own" ] && nm -S --defined-only "$own" |
	awk 'NF == 3 && ($2 == "t" || $2 == "T") { print $3 }' >>skip.txt

# every function named in either profile (a space in a name as _)
fns() { sed -n 's/^fn=//p' "$1" | tr ' ' '_'; }
all=$( { fns vg.cg; fns ct.cg; } | sort -u | grep -vxF -f skip.txt | tr '\n' ' ')
agg() { sed '/^fn=/ s/ /_/g' "$1" | awk -v own="$all" -f "$ORACLE_DIR/cg-aggregate.awk" | sort; }
agg vg.cg >vg.agg
agg ct.cg >ct.agg
if ! awk -v exact="Ir Dr Dw Bc Bi" \
	 -v approx="I1mr ILmr D1mr DLmr D1mw DLmw Bcm Bim" \
	 -v musthave="$must" -f "$ORACLE_DIR/cg-compare.awk" vg.agg ct.agg >diff.txt; then
	echo "$ME: $KIND $PROG: per-function counts differ from Cachegrind ($W):"
	cat diff.txt
	exit 1
fi
echo "$ME: $KIND $PROG: $(wc -l <vg.agg) functions agree with Cachegrind" \
	"(not compared: $(tr '\n' ' ' <skip.txt))"
