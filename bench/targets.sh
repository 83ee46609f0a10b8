#!/bin/sh
# The emulate engine's targets (issues 18 and 19), side by side in one run
# against valgrind's Cachegrind on the whole program, and optionally
# against another build of cachetrace (BASE), alternating ROUNDS times:
#   region       bench/region.c x10, --start=work (integer C, no libc)
#   region-libc  bench/region-libc.c x4, --start=work (qsort, snprintf,
#                memcpy, strlen, strcmp: glibc's AVX2 or EVEX functions)
#   avx2         the same where the host has AVX-512, with glibc told to
#                pick the functions of an AVX2-only host (GLIBC_TUNABLES)
#   threads      bench/threads.c 200, --threads=all --start=work, not
#                pinned; then the same on a model of two cores
#                (--model=jaguar --cores=2, no Cachegrind equivalent)
#   cpython      bench/cpython/window.sh: an attached python3 loop, a 2 s
#                toggle window
# Every cachetrace and Cachegrind run but the threaded ones is pinned to
# one CPU.  Wall times of the whole command, start-up included; the
# window's own rate from the summary's "Traced" line.
#   sh bench/targets.sh [BUILDDIR] [BASE_BUILDDIR] [ROUNDS]
set -eu
B=$(realpath "${1:-build}"); BASE=${2:-}; N=${3:-2}
[ -n "$BASE" ] && BASE=$(realpath "$BASE")
S=$(realpath "$(dirname "$0")/..")
W=$(mktemp -d); trap 'rm -rf "$W"' EXIT
G="--I1=32768,8,64 --D1=32768,8,64 --LL=8388608,16,64"
for p in region region-libc threads; do
	cc -O2 -g -fno-pie -no-pie -pthread -o "$W/$p" "$S/bench/$p.c"
done
now() { date +%s.%N; }
ir() { sed -n 's/^summary: \([0-9]*\).*/\1/p' "$1"; }
rate() { sed -n 's/.*Traced [0-9]* instructions in [0-9.]* s (\([0-9.]*\)k\/s).*/\1/p' "$1"; }
ct() {	# ct NAME BUILD PIN OPTIONS -- PROG ARGS
	name=$1 bin=$2/cachetrace pin=$3; shift 3
	t0=$(now)
	if [ "$pin" = pin ]; then
		taskset -c 0 "$bin" "$@" >/dev/null 2>"$W/ct.err"
	else
		"$bin" "$@" >/dev/null 2>"$W/ct.err"
	fi
	t1=$(now)
	w=$(echo "$t1 - $t0" | bc)
	printf "  %s %.2f s (%s Ir, window %sk/s, %sx)" "$name" "$w" \
		"$(ir "$W/ct.out")" "$(rate "$W/ct.err")" \
		"$(echo "scale=1; $w / $VG" | bc)"
}
side() {	# side LABEL PIN CT-OPTIONS -- PROG ARGS
	label=$1 pin=$2; shift 2
	for i in $(seq "$N"); do
		# the program and its arguments: after the "--"
		prog=$(for a in "$@"; do echo "$a"; done | sed -n '/^--$/,$p' | sed 1d | tr '\n' ' ')
		t0=$(now)
		# shellcheck disable=SC2086
		taskset -c 0 valgrind --tool=cachegrind $G --cache-sim=yes \
			--cachegrind-out-file="$W/vg.out" $prog >/dev/null 2>"$W/vg.err"
		t1=$(now)
		VG=$(echo "$t1 - $t0" | bc)
		printf "%s: Cachegrind %.2f s (%s Ir)" "$label" "$VG" "$(ir "$W/vg.out")"
		[ -n "$BASE" ] && ct base "$BASE" "$pin" -o "$W/ct.out" "$@"
		ct now "$B" "$pin" -o "$W/ct.out" "$@"
		echo
	done
	grep -o 'On the real CPU most: .*' "$W/ct.err" || true
	grep -o 'Engine: .*' "$W/ct.err" || true
}
side "region x10" pin $G --start=work -- "$W/region" 10
side "region-libc x4" pin $G --start=work -- "$W/region-libc" 4
if grep -qw avx512f /proc/cpuinfo; then
	export GLIBC_TUNABLES=glibc.cpu.hwcaps=-AVX512F,-AVX512VL,-AVX512BW,-AVX512DQ,-AVX512CD
	side "region-libc x4, AVX2 functions" pin $G --start=work -- "$W/region-libc" 4
	unset GLIBC_TUNABLES
else
	echo "(no AVX-512 here: region-libc above ran glibc's AVX2 functions)"
fi
side "threads 200" nopin $G --threads=all --start=work -- "$W/threads" 200
for i in $(seq "$N"); do
	VG=1
	printf "threads 200, --model=jaguar --cores=2:"
	[ -n "$BASE" ] && ct base "$BASE" nopin -o "$W/ct.out" --model=jaguar \
		--cores=2 --threads=all --start=work -- "$W/threads" 200
	ct now "$B" nopin -o "$W/ct.out" --model=jaguar --cores=2 \
		--threads=all --start=work -- "$W/threads" 200
	echo " (the x column: seconds)"
done
grep -o 'Engine: .*' "$W/ct.err" || true
for i in $(seq "$N"); do
	[ -n "$BASE" ] && { echo "cpython, base:"; sh "$S/bench/cpython/window.sh" "$BASE" 2; }
	echo "cpython, now:"; sh "$S/bench/cpython/window.sh" "$B" 2
done
