#!/bin/sh
# Source file names as Cachegrind writes them (issue 11), in the flat
# profile and the Callgrind file of one whole run of a threaded program
# (glibc's nptl, libc, ld.so).  Cachegrind joins DW_AT_comp_dir, the line
# table's directory and the file name, so a glibc file whose directory is
# the comp dir again comes out as "./nptl/./nptl/pthread_join_common.c":
# that doubled form is Cachegrind's, and what a reader of both profiles
# needs to line them up.  The check: every file of ours whose base name
# Cachegrind also has is one of Cachegrind's paths of that base name.
#   paths.sh CACHETRACE SRCDIR SCRATCH
set -u
CT=$(realpath "$1"); SRC=$(realpath "$2")/tests/callstack; W=$3/callstack-paths
rm -rf "$W"; mkdir -p "$W"; cd "$W" || exit 1
command -v valgrind >/dev/null ||
	{ echo "FAIL: no valgrind: run tests/install-deps.sh"; exit 1; }
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
pass() { echo "ok: $*"; }

${CC:-cc} -O2 -g -fno-pie -no-pie -pthread -o cs-paths "$SRC/threads.c" ||
	{ echo "cannot build threads.c"; exit 1; }
# The same string functions and binding as under valgrind (oracle.sh).
GLIBC_TUNABLES="glibc.cpu.hwcaps=-AVX512F,-AVX512VL,-AVX512BW,-AVX512DQ,-AVX512CD,-AVX512ER,-AVX512PF,-RTM,-Prefer_No_VZEROUPPER:glibc.cpu.x86_rep_movsb_threshold=4096:glibc.cpu.x86_rep_stosb_threshold=4096:glibc.cpu.x86_non_temporal_threshold=1048576"
LD_BIND_NOW=1
export GLIBC_TUNABLES LD_BIND_NOW
valgrind -q --tool=cachegrind --cache-sim=no --cachegrind-out-file=vg.out \
	./cs-paths >vg.stdout 2>vg.stderr ||
	{ cat vg.stderr; echo "cachegrind failed"; exit 1; }
"$CT" -q --threads=all --call-stacks=yes --callgrind-out-file=ct.cg \
	-o ct.flat -- ./cs-paths >ct.stdout 2>ct.stderr ||
	{ cat ct.stderr; fail "cachetrace failed"; }

# The file names of a profile, Callgrind's "(id) name" compression undone.
files() {
	sed -n 's/^\(fl\|fi\|fe\|cfi\|cfl\)=\(([0-9]*) \?\)\?//p' "$1" |
		grep -v -x -e '' -e '???' | sort -u
}
files vg.out >vg.files
grep -q '/pthread_join_common\.c$' vg.files ||
	fail "Cachegrind's profile has no pthread_join_common.c"
for f in ct.flat ct.cg; do
	files $f >$f.files
	bad=$(awk 'function base(p) { sub(/.*\//, "", p); return p }
		NR == FNR { vg[base($0)] = vg[base($0)] " " $0; next }
		(base($0) in vg) && index(vg[base($0)] " ", " " $0 " ") == 0 {
			print $0 " (Cachegrind:" vg[base($0)] ")" }' vg.files $f.files)
	shared=$(awk 'function base(p) { sub(/.*\//, "", p); return p }
		NR == FNR { vg[base($0)] = 1; next } base($0) in vg' vg.files $f.files | wc -l)
	[ "$shared" -gt 50 ] || fail "$f: only $shared files shared with Cachegrind"
	[ -z "$bad" ] && pass "$f: $shared files named as Cachegrind names them" ||
		{ fail "$f: files named otherwise than Cachegrind does:"; echo "$bad" | head -20; }
done
vg=$(grep '/pthread_join_common\.c$' vg.files)
ct=$(grep '/pthread_join_common\.c$' ct.cg.files)
[ "$ct" = "$vg" ] && pass "pthread_join_common.c as Cachegrind writes it: $vg" ||
	fail "pthread_join_common.c: '$ct', Cachegrind '$vg'"
[ "$fails" -eq 0 ] && echo "paths: all passed" && exit 0
exit 1
