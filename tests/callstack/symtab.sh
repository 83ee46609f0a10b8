#!/bin/sh
# Functions only the ELF symbol table knows (issue 17): crti's _init and
# _fini and crtstuff's frame_dummy, register_tm_clones,
# deregister_tm_clones and __do_global_dtors_aux have symbols without a
# size; valgrind 3.19 leaves their pcs unnamed (??? in Cachegrind's file,
# bare addresses in Callgrind's), and so did we.  They are named from the
# symbol table now.  The expected names of the program's own functions:
# those of its sized function symbols that Cachegrind's file of the same
# program names (_start as "(below main)"), and every sizeless function
# symbol of the program (each runs in a normal exit), read with readelf.
# The flat profile names them all; in the Callgrind file the executable's
# functions are exactly those, none a bare address.
#   symtab.sh CACHETRACE SRCDIR SCRATCH
set -u
CT=$(realpath "$1"); SRC=$(realpath "$2")/tests; W=$3/callstack-symtab
rm -rf "$W"; mkdir -p "$W"; cd "$W" || exit 1
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
pass() { echo "ok: $*"; }
command -v valgrind >/dev/null || { echo "no valgrind: run tests/install-deps.sh"; exit 77; }

${CC:-cc} -O2 -g -fno-pie -no-pie -o cs-symtab "$SRC/progs/array.c" ||
	{ echo "cannot build array.c"; exit 1; }
exe=$(realpath cs-symtab)
"$CT" -q --call-stacks=yes --callgrind-out-file=ct.cg -o ct.flat \
	-- ./cs-symtab >ct.stdout 2>ct.stderr || { cat ct.stderr; fail "cachetrace failed"; }
valgrind -q --tool=cachegrind --cache-sim=no --cachegrind-out-file=vg.flat \
	./cs-symtab >vg.stdout 2>vg.stderr || { cat vg.stderr; fail "cachegrind failed"; }

# The program's defined function symbols (.symtab and .dynsym), sized and
# sizeless; _start is "(below main)" in both tools' files.
readelf -sW cs-symtab | awk '$4 == "FUNC" && $7 != "UND" && $8 != "" {
	n = $8; sub(/@.*/, "", n); if (n == "_start") n = "(below main)"
	print ($3 == 0 ? "sizeless" : "sized") "\t" n }' | sort -u >elf.syms
awk -F '\t' '$1 == "sized" { print $2 }' elf.syms | sort -u >elf.sized
awk -F '\t' '$1 == "sizeless" { print $2 }' elf.syms | sort -u >elf.sizeless
[ "$(wc -l <elf.sizeless)" -ge 5 ] ||
	fail "only $(wc -l <elf.sizeless) sizeless function symbols: $(tr '\n' ' ' <elf.sizeless)"
sed -n 's/^fn=//p' vg.flat | sort -u >vg.names
sed -n 's/^fn=//p' ct.flat | sort -u >ct.names
comm -12 elf.sized vg.names | cat - elf.sizeless | sort -u >want
echo "expected: $(tr '\n' ';' <want)"
echo "Cachegrind names of them: $(comm -12 want vg.names | tr '\n' ';')"

miss=$(comm -23 want ct.names | tr '\n' ' ')
[ -z "$miss" ] && pass "the flat profile names the program's $(wc -l <want) functions" ||
	fail "the flat profile lacks: $miss"

# "function<TAB>object" of each fn= block of the Callgrind file (name
# compression undone).
awk '
function name(kind, s,    id) {
	if (match(s, /^\([0-9]+\)/)) {
		id = substr(s, 2, RLENGTH - 2); s = substr(s, RLENGTH + 1)
		sub(/^ /, "", s); if (s != "") map[kind, id] = s
		return map[kind, id]
	}
	return s
}
/^ob=/ { ob = name("ob", substr($0, 4)); next }
/^cob=/ { name("ob", substr($0, 5)); next }
/^cfn=/ { name("fn", substr($0, 5)); next }
/^fn=/ { fn = name("fn", substr($0, 4)); sub(/\047[0-9]+$/, "", fn)
	print fn "\t" ob }' ct.cg | sort -u >ct.objects
awk -F '\t' -v exe="$exe" '$2 == exe { print $1 }' ct.objects | sort -u >ct.exe
hex=$(grep -E '^0x[0-9a-f]+$' ct.exe | tr '\n' ' ')
[ -z "$hex" ] && pass "no bare address among the executable's functions" ||
	fail "the executable's functions left as addresses: $hex"
if cmp -s ct.exe want; then
	pass "the Callgrind file's functions of the executable are the expected $(wc -l <want)"
else
	fail "the executable's functions (< Callgrind file, > expected):"
	diff ct.exe want
fi
[ "$fails" -eq 0 ] && echo "symtab: all passed" && exit 0
exit 1
