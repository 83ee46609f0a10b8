# Shared helpers for the oracle scripts (sourced, POSIX sh).
#
# Every script is called as: SCRIPT CACHETRACE SRCDIR SCRATCH PROG [ARGS...]
#   CACHETRACE  the cachetrace binary under test
#   SRCDIR      the project's source root (tests/progs/PROG.c lives there)
#   SCRATCH     a scratch directory; the script works in SCRATCH/<name>
#   PROG        the test program's name (tests/progs/PROG.c)
# Exit status: 0 pass, 1 fail (also without valgrind), 77 skipped (the CPU
# cannot run the program: no AVX2).

# Cachegrind's geometry for every comparison: explicit, because
# Cachegrind's CPUID auto-detection is wrong on this machine (DESIGN.md).
CACHE_OPTS="--I1=32768,8,64 --D1=32768,8,64 --LL=1048576,16,64"

# glibc picks its string functions by CPUID, and valgrind shows the client a
# different CPU (no AVX-512, no RTM), so natively libc runs other code than
# under valgrind. On a CPU with RTM glibc also sets Prefer_No_VZEROUPPER,
# which turns the AVX2 string functions into SSE2 ones once RTM is masked:
# that preference is masked too. Pinning the choice and the rep movsb/stosb thresholds with
# tunables on both sides makes libc's string functions the same code.
ORACLE_TUNABLES="glibc.cpu.hwcaps=-AVX512F,-AVX512VL,-AVX512BW,-AVX512DQ,-AVX512CD,-AVX512ER,-AVX512PF,-RTM,-Prefer_No_VZEROUPPER:glibc.cpu.x86_rep_movsb_threshold=4096:glibc.cpu.x86_rep_stosb_threshold=4096:glibc.cpu.x86_non_temporal_threshold=1048576"

ORACLE_DIR=$(realpath "$(dirname "$0")")

die() { echo "$ME: $*" >&2; exit 1; }
skip() { echo "$ME: SKIP: $*" >&2; exit 77; }

# oracle_init NAME "$@": parse the common arguments, make the work dir,
# build the program; fail without valgrind, skip when the CPU cannot run
# the program (exit 77 natively: no AVX2 on this host).
oracle_init() {
	ME=$1; shift
	[ $# -ge 4 ] || die "usage: $ME CACHETRACE SRCDIR SCRATCH PROG [ARGS...]"
	CACHETRACE=$(realpath "$1"); SRCDIR=$(realpath "$2"); SCRATCH=$3; PROG=$4
	shift 4
	PROG_ARGS="$*"
	# valgrind is installed by tests/install-deps.sh: missing, it fails
	command -v valgrind >/dev/null 2>&1 ||
		die "valgrind not installed: run tests/install-deps.sh"
	[ -x "$CACHETRACE" ] || die "no cachetrace binary at $CACHETRACE"
	SRC=$SRCDIR/tests/progs/$PROG.c
	[ -f "$SRC" ] || die "no test program $SRC"
	W=$SCRATCH/$ME-$PROG${TESTTAG:+-$TESTTAG}
	rm -rf "$W" && mkdir -p "$W" || die "cannot make $W"
	W=$(realpath "$W")
	# Per-program flags: a line "oracle-cflags: ..." in the source.
	xflags=$(sed -n 's/.*oracle-cflags: *\([^*]*\).*/\1/p' "$SRC" | head -n 1)
	# shellcheck disable=SC2086
	${CC:-cc} -O2 -g -fno-pie -no-pie $xflags -o "$W/$PROG" "$SRC" ||
		die "cannot build $SRC"
	(cd "$W" && GLIBC_TUNABLES=$ORACLE_TUNABLES ./"$PROG" $PROG_ARGS >native.out 2>&1)
	rc=$?
	[ $rc -eq 77 ] && skip "$PROG cannot run on this machine"
	[ $rc -eq 0 ] || die "$PROG fails natively (exit $rc)"
	cd "$W" || die "cannot cd to $W"
}

# The program's own functions: text symbols whose debug info names PROG.c
# (nm -l), independent of both profiles. Prints "start size name" (hex).
own_functions() {
	nm -l -S --defined-only "$PROG" |
		awk -v f="/$PROG.c:" '($3 == "t" || $3 == "T") && index($5, f) { print $1, $2, $4 }'
}

run_cachegrind() {	# OUT [extra valgrind options]
	out=$1; shift
	# shellcheck disable=SC2086
	GLIBC_TUNABLES=$ORACLE_TUNABLES valgrind -q --tool=cachegrind \
		--cache-sim=yes --branch-sim=yes $CACHE_OPTS "$@" \
		--cachegrind-out-file="$out" ./"$PROG" $PROG_ARGS >vg.stdout 2>vg.stderr ||
		die "valgrind failed: $(cat vg.stderr)"
}

run_cachetrace() {	# OUT [extra cachetrace options]
	out=$1; shift
	# shellcheck disable=SC2086
	GLIBC_TUNABLES=$ORACLE_TUNABLES "$CACHETRACE" "$@" $CACHE_OPTS \
		--cache-sim=yes --branch-sim=yes -o "$out" -q -- ./"$PROG" $PROG_ARGS \
		>ct.stdout 2>ct.stderr ||
		die "cachetrace $* failed (exit $?): $(head -c 2000 ct.stderr)"
	[ -s "$out" ] || die "cachetrace wrote no profile $out"
}
