#!/bin/sh
# Whole-run call stacks name every function the flat profile names
# (issue 11): with --call-stacks=yes and no --start, libc and everything
# else the dynamic loader maps after the exec must not come out as bare
# addresses.  The flat profile of the same run is the reference: the set
# of functions it names must be the set the Callgrind file and the folded
# stacks name, and a function left as an address must be one whose pc the
# flat profile also has under fn=??? (same fl=): a pc in no symbol.  Each
# function sits in its object (ob=, cob=) as valgrind's Callgrind puts it,
# and callgrind_annotate reads the file without a warning.
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
# Callgrind's name compression undone: name(kind, "(id) name" or "(id)").
names_awk='
function name(kind, s,    id) {
	if (match(s, /^\([0-9]+\)/)) {
		id = substr(s, 2, RLENGTH - 2)
		s = substr(s, RLENGTH + 1); sub(/^ /, "", s)
		if (s != "") map[kind, id] = s
		return map[kind, id]
	}
	return s
}'
# "file<TAB>function" of every fn= block, the recursion suffix ('2)
# dropped.
blocks() {
	awk "$names_awk"'
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

# The object file of each function (ob=, and cob= for callees, the
# caller's object when absent), as valgrind's Callgrind writes it for the
# same program: "function<TAB>object" of fn= blocks and of call targets.
objects() {
	awk "$names_awk"'
	function val(l) { return substr(l, index(l, "=") + 1) }
	/^ob=/ { ob = name("ob", val($0)); next }
	/^cob=/ { cob = name("ob", val($0)); next }
	/^fn=/ { fn = name("fn", val($0)); sub(/\047[0-9]+$/, "", fn)
		print fn "\t" (ob == "" ? "(none)" : ob); cob = ""; next }
	/^cfn=/ { c = name("fn", val($0)); sub(/\047[0-9]+$/, "", c)
		print c "\t" (cob != "" ? cob : ob == "" ? "(none)" : ob)
		cob = ""; next }' "$1" | grep -v -E "^0x[0-9a-f]+\s" | sort -u
}
objects ct.cg >ct.objects
grep -q '	(none)$' ct.objects && fail "functions with no ob=: $(grep -c '	(none)$' ct.objects)"
# A name may be in two objects (brk in ld.so and in libc), and a run
# under valgrind calls a few functions in another one (its ld.so's
# strcspn): each (function, object) of ours whose function Callgrind has
# must be one of Callgrind's.
if command -v valgrind >/dev/null; then
	valgrind -q --tool=callgrind --callgrind-out-file=vg.cg ./cs-names \
		>vg.stdout 2>vg.stderr || { cat vg.stderr; fail "callgrind failed"; }
	objects vg.cg >vg.objects
	awk -F '\t' 'NR == FNR { o[$1] = o[$1] "\t" $2 "\t"; next }
		($1 in o) { n++; if (index(o[$1], "\t" $2 "\t") == 0)
			print $1 ": ours " $2 ", Callgrind" o[$1] }
		END { print n + 0 >"objects.shared" }' vg.objects ct.objects >objects.diff
	shared=$(cat objects.shared)
	[ "$shared" -gt 50 ] && [ ! -s objects.diff ] &&
		pass "$shared functions in the objects Callgrind puts them in" ||
		{ fail "objects ($shared functions shared with Callgrind):"; head -10 objects.diff; }
else
	fail "no valgrind: run tests/install-deps.sh"
fi

# callgrind_annotate still reads it, without a warning.
if command -v callgrind_annotate >/dev/null; then
	callgrind_annotate ct.cg >ann.out 2>ann.warn && [ ! -s ann.warn ] &&
		pass "callgrind_annotate reads the file" ||
		{ cat ann.warn; fail "callgrind_annotate on the file"; }
fi
[ "$fails" -eq 0 ] && echo "names: all passed" && exit 0
exit 1
