#!/bin/sh
# A whole run, function by function, against Cachegrind's (issue 32).
#   whole-run.sh CACHETRACE SRCDIR SCRATCH dynamic|pie|static PROG
#   whole-run.sh CACHETRACE SRCDIR SCRATCH real COMMAND...
# dynamic, pie, static: tests/progs/PROG.c built that way; real: a
# command of Debian's (gzip, xz, perl...: code nobody here wrote), run
# where a file "input" holds 20,000 numbered lines.
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
[ $# -ge 5 ] || die "usage: $ME CACHETRACE SRCDIR SCRATCH KIND PROG|COMMAND..."
CACHETRACE=$(realpath "$1"); SRCDIR=$(realpath "$2"); SCRATCH=$3; KIND=$4
shift 4
PROG=$1
command -v valgrind >/dev/null 2>&1 ||
	die "valgrind not installed: run tests/install-deps.sh"
# The programs run in a directory whose name has the same length on every
# machine: its name is in PWD, and the environment's strings sit on the
# stack, their alignment depending on every string's length (string
# routines take other paths at other alignments).
W=$SCRATCH/$ME-$KIND-$(basename "$PROG")
rm -rf "$W" && mkdir -p "$W" && W=$(realpath "$W") ||
	die "cannot make $W"
R=$(mktemp -d /tmp/cachetrace-whole-run.XXXXXX) || die "cannot make a run directory"
trap 'rm -rf "$R"' EXIT
cd "$R" || die "cannot cd to $R"

case $KIND in
dynamic) flags="-fno-pie -no-pie" ;;
pie) flags="-fPIE -pie" ;;
static) flags="-static" ;;
real) ;;
*) die "unknown kind $KIND" ;;
esac
seq 1 20000 >input
if [ "$KIND" = real ]; then
	command -v "$PROG" >/dev/null || die "no $PROG here"
	own=
	must=_dl_relocate_object
else
	# shellcheck disable=SC2086
	${CC:-cc} -O2 -g $flags -o prog "$SRCDIR/tests/progs/$PROG.c" ||
		die "cannot build $PROG"
	set -- ./prog
	own=prog
	must=main
fi

BASE="PATH=/usr/bin:/bin LC_ALL=C GLIBC_TUNABLES=glibc.pthread.rseq=0"
BASE="$BASE PERL_HASH_SEED=0 PERL_PERTURB_KEYS=0 PYTHONHASHSEED=0"
# shellcheck disable=SC2086
env -i $BASE valgrind -q --tool=none /usr/bin/env >client.env 2>vg.err ||
	die "valgrind --tool=none env failed: $(cat vg.err)"
grep -q '^LD_PRELOAD=' client.env ||
	die "no LD_PRELOAD in valgrind's client environment"
! grep -q ' ' client.env || die "a space in valgrind's client environment"

# shellcheck disable=SC2086
env -i $BASE valgrind -q --tool=cachegrind --cache-sim=yes --branch-sim=yes \
	$CACHE_OPTS --cachegrind-out-file=vg.cg "$@" >vg.out 2>vg.err ||
	die "Cachegrind failed: $(cat vg.err)"
# shellcheck disable=SC2046,SC2086
env -i $(cat client.env) "$CACHETRACE" -q --cpuid=valgrind --auxv=valgrind \
	$CACHE_OPTS --cache-sim=yes --branch-sim=yes -o ct.cg -- "$@" \
	>ct.out 2>ct.err || die "cachetrace failed: $(head -c 2000 ct.err)"
cmp -s vg.out ct.out || die "the program's output differs under the two"
grep -q "^desc: Auxv: *as valgrind 3.19 passes it on" ct.cg ||
	die "no desc: Auxv: line in our profile"

# code under symbols without a size: Cachegrind's ???
: >skip.txt
printf '%s\n' '???' _dl_sort_maps _dlfo_sort_mappings strcspn >>skip.txt
# crt's, in every program; without a symbol table, from .dynsym
printf '%s\n' _init _fini frame_dummy register_tm_clones \
	deregister_tm_clones __do_global_dtors_aux >>skip.txt
[ -n "$own" ] && nm -S --defined-only "$own" |
	awk 'NF == 3 && ($2 == "t" || $2 == "T") { print $3 }' >>skip.txt

# every function named in either profile (a space in a name as _)
fns() { sed -n 's/^fn=//p' "$1" | tr ' ' '_'; }
all=$( { fns vg.cg; fns ct.cg; } | sort -u | grep -vxF -f skip.txt | tr '\n' ' ')
agg() { sed '/^fn=/ s/ /_/g' "$1" | awk -v own="$all" -f "$ORACLE_DIR/cg-aggregate.awk" | sort; }
agg vg.cg >vg.agg
agg ct.cg >ct.agg
# Misses: within 15% or 16 counts per function.  Every mapping sits
# elsewhere under valgrind (ld.so at 0x4000000, the stack at
# 0x1fff000000, its own brk), so other lines share sets; a layout change
# alone moves them that much (docs/whole-runs.md: two cachetrace runs of
# xz -3 with --aslr=yes, lzma_code's D1mr 97 and 83).
cp vg.cg ct.cg vg.agg ct.agg client.env skip.txt "$W"/ 2>/dev/null
cp vg.cg ct.cg vg.agg ct.agg client.env skip.txt "$W"/
if ! awk -v exact="Ir Dr Dw Bc Bi" -v pct=15 -v slack=16 \
	 -v approx="I1mr ILmr D1mr DLmr D1mw DLmw Bcm Bim" \
	 -v musthave="$must" -f "$ORACLE_DIR/cg-compare.awk" vg.agg ct.agg >diff.txt; then
	echo "$ME: $KIND $*: per-function counts differ from Cachegrind ($W):"
	cat diff.txt
	cp diff.txt "$W"/
	cp diff.txt "$W"/
	exit 1
fi
echo "$ME: $KIND $*: $(wc -l <vg.agg) functions agree with Cachegrind" \
	"(not compared: $(tr '\n' ' ' <skip.txt))"
