#!/bin/sh
# How fast Debian's Unicorn runs bench/region.c's window by itself, against
# cachetrace and Cachegrind in the same run (issue 18): a build of
# cachetrace with -DCT_BENCH_FLOOR (never a normal build) runs the window
# in Unicorn alone to work()'s return with no hook, an empty code hook,
# empty block and memory hooks, and block and memory hooks that feed the
# cache model (each instruction's fetch, each access), and prints the
# time; then (attrib) a code hook and memory hooks together, checking
# that QEMU reports each lean instruction's accesses (decode_lean) as
# its templates predict them, in number, order, address and size, which
# is what a block hook attributing them by counting needs (the
# instructions that differ, and those that are not lean, are listed).
# The program is linked -z now and glibc is told to pick its
# pre-AVX functions, so that Unicorn can run every instruction of the
# window itself.  Pinned to one CPU.
#   sh bench/unicorn-floor.sh [BUILDDIR] [ROUNDS]
set -eu
B=$(realpath "${1:-build}"); R=${2:-10}
S=$(realpath "$(dirname "$0")/..")
W=$(mktemp -d); trap 'rm -rf "$W"' EXIT
meson setup "$W/floor" "$S" -Dc_args=-DCT_BENCH_FLOOR >/dev/null
meson compile -C "$W/floor" cachetrace >/dev/null
cc -O2 -g -fno-pie -no-pie -Wl,-z,now -o "$W/region" "$S/bench/region.c"
export GLIBC_TUNABLES=glibc.cpu.hwcaps=-AVX512F,-AVX512VL,-AVX512BW,-AVX512DQ,-AVX512CD,-AVX2,-AVX,-BMI1,-BMI2,-FMA,-LZCNT,-MOVBE,-RTM,-XSAVEC,-AVX_Fast_Unaligned_Load
G="--I1=32768,8,64 --D1=32768,8,64 --LL=8388608,16,64"
now() { date +%s.%N; }
t0=$(now)
taskset -c 0 valgrind --tool=cachegrind $G --cachegrind-out-file="$W/vg.out" \
	"$W/region" "$R" >/dev/null 2>&1
t1=$(now)
echo "Cachegrind, whole run: $(echo "$t1 - $t0" | bc) s"
taskset -c 0 "$B/cachetrace" $G --start=work -o "$W/ct.out" -- "$W/region" "$R" \
	2>&1 >/dev/null | grep -o 'Traced .*'
for m in bare code blockmem model attrib; do
	CT_FLOOR=$m taskset -c 0 "$W/floor/cachetrace" -q $G --start=work \
		-o "$W/f.out" -- "$W/region" "$R" 2>&1 >/dev/null |
		grep -E '^(floor|attrib)'
done
