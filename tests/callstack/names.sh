#!/bin/sh
# Whole-run call stacks name every function the flat profile names
# (issue 11): with --call-stacks=yes and no --start, libc and everything
# else the dynamic loader maps after the exec must not come out as bare
# addresses.  The flat profile of the same run is the reference: the set
# of functions it names must be the set the Callgrind file and the folded
# stacks name, and a function left as an address must be one whose pc the
# flat profile also has under fn=??? (same fl=): a pc in no symbol.
#   names.sh CACHETRACE SRCDIR SCRATCH
set -u
CT=$(realpath "$1"); SRC=$(realpath "$2")/tests; W=$3/callstack-names
rm -rf "$W"; mkdir -p "$W"; cd "$W" || exit 1
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
pass() { echo "ok: $*"; }

# The pointer-chasing program the issue was seen on.
${CC:-cc} -O2 -g -fno-pie -no-pie -o cs-names "$SRC/progs/chase.c" ||
	{ echo "cannot build chase.c"; exit 1; }
"$CT" -q --call-stacks=yes --callgrind-out-file=ct.cg \
	--folded-out-file=ct.folded -o ct.flat -- ./cs-names >ct.stdout 2>ct.stderr
rc=$?
[ $rc -eq 0 ] || { cat ct.stderr; fail "cachetrace exited with $rc"; }

hex='^0x[0-9a-f]+$'
# "file<TAB>function" of every fn= block, Callgrind's name compression
# expanded and the recursion suffix ('2) dropped.
blocks() {
	awk '
	function name(kind, s,    id) {
		if (match(s, /^\([0-9]+\)/)) {
			id = substr(s, 2, RLENGTH - 2)
			s = substr(s, RLENGTH + 1); sub(/^ /, "", s)
			if (s != "") map[kind, id] = s
			return map[kind, id]
		}
		return s
	}
	/^(fl|fi|fe|cfi|cfl)=/ { s = substr($0, index($0, "=") + 1)
		f = name("fl", s); if ($0 ~ /^fl=/) fl = f; next }
	/^(fn|cfn)=/ { s = name("fn", substr($0, index($0, "=") + 1))
		if ($0 ~ /^fn=/) { sub(/\047[0-9]+$/, "", s); print fl "\t" s } }' "$1" |
	sort -u
}
blocks ct.flat >flat.blocks
blocks ct.cg >cg.blocks
cut -f2 flat.blocks | grep -v -x '???' | sort -u >flat.names
cut -f2 cg.blocks | grep -v -E "$hex" | sort -u >cg.names
tr ';' '\n' <ct.folded | sed 's/ [0-9]*$//; s/\x27[0-9]*$//' | sort -u >folded.all
grep -v -E "$hex" folded.all >folded.names
grep -E "$hex" folded.all >folded.hex
[ "$(wc -l <flat.names)" -gt 50 ] || fail "only $(wc -l <flat.names) functions in the flat profile"

if diff flat.names cg.names >cg.diff; then
	pass "the Callgrind file names the $(wc -l <cg.names) functions the flat profile names"
else
	fail "named functions (< flat profile, > Callgrind file):"; head -20 cg.diff
fi
if diff flat.names folded.names >folded.diff; then
	pass "the folded stacks name the $(wc -l <folded.names) functions the flat profile names"
else
	fail "named functions (< flat profile, > folded stacks):"; head -20 folded.diff
fi
# An address left as a name: its file must have a pc in no symbol in the
# flat profile too.
awk -F '\t' '$2 == "???" { print $1 }' flat.blocks >flat.unnamed
awk -F '\t' -v re="$hex" '$2 ~ re' cg.blocks >cg.hex
bad=$(awk -F '\t' 'NR == FNR { u[$1] = 1; next } !($1 in u)' flat.unnamed cg.hex)
[ -z "$bad" ] && pass "$(wc -l <cg.hex) functions left as addresses, all pcs in no symbol" ||
	{ fail "functions written as addresses where the flat profile has a name:"; echo "$bad" | head -20; }
bad=$(cut -f2 cg.hex | sort -u | comm -13 - folded.hex)
[ -z "$bad" ] && pass "no other address in the folded stacks" ||
	{ fail "folded frames written as addresses:"; echo "$bad" | head -20; }

# callgrind_annotate still reads it, without a warning.
if command -v callgrind_annotate >/dev/null; then
	callgrind_annotate ct.cg >ann.out 2>ann.warn && [ ! -s ann.warn ] &&
		pass "callgrind_annotate reads the file" ||
		{ cat ann.warn; fail "callgrind_annotate on the file"; }
fi
[ "$fails" -eq 0 ] && echo "names: all passed" && exit 0
exit 1
