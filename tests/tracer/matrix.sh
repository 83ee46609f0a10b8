#!/bin/sh
# The bundled example end to end, against numbers worked out by hand, and
# its profile through both annotators.
#
# m is 256x256 doubles (2 KiB rows).  D1 = 32 KiB, 8-way, 64 B lines: 64
# sets.  By rows, each 64 B line is missed once: 256*256*8/64 = 8192 misses
# (8193 if m is not 64-byte aligned: its rows then straddle one more line).
# By columns, element (i,j) is in line i*32 + j/8 (m aligned), so one column
# touches 256 lines in only 2 sets (16 ways): every access misses, 65536.
# Each function's ret misses once more: the 512 KiB sweep evicted the line
# holding its return address.
. "$(dirname "$0")/lib.sh"
cp "$SRCDIR/examples/matrix.c" .
${CC:-cc} -O2 -g -fno-pie -no-pie -o matrix matrix.c || exit 1
"$CT" -q --start=compute --I1=32768,8,64 --D1=32768,8,64 \
	--LL=8388608,16,64 -o m.cg -- ./matrix >out.txt 2>err.txt ||
	{ fail "cachetrace failed"; cat err.txt; }
[ "$(cat out.txt)" = "33423360" ] && pass "program output" ||
	fail "program output $(cat out.txt)"
addr=$(nm matrix | awk '$3 == "m" { print $1 }')
rows_want=8192
[ $((0x$addr % 64)) -ne 0 ] && rows_want=8193
d1mr() {	# D1mr (5th event) of function $1, on line $2 or all lines
	awk -v fn="$1" -v ln="${2:-}" '/^fn=/ { cur = substr($0, 4) }
		/^[0-9]/ && cur == fn && (ln == "" || $1 == ln) { s += $6 }
		END { print s + 0 }' m.cg
}
# The two "s += m[i][j];" lines: sum_rows's first, sum_cols's second.
lr=$(grep -n 's += m\[i\]\[j\];' matrix.c | sed -n 1p | cut -d: -f1)
lc=$(grep -n 's += m\[i\]\[j\];' matrix.c | sed -n 2p | cut -d: -f1)
check() {	# check WHAT GOT WANT
	[ "$2" -eq "$3" ] && pass "$1 = $3" || fail "$1 = $2, want $3"
}
check "sum_rows D1mr on line $lr" "$(d1mr sum_rows "$lr")" $rows_want
check "sum_cols D1mr on line $lc" "$(d1mr sum_cols "$lc")" 65536
check "sum_rows D1mr" "$(d1mr sum_rows)" $((rows_want + 1))
check "sum_cols D1mr" "$(d1mr sum_cols)" 65537
grep -q '^fn=main$' m.cg && fail "main is outside the region but profiled" ||
	pass "only the region"

# Both annotators read it and find the source lines.
ANN=$(dirname "$CT")/cachetrace-annotate
if [ -x "$ANN" ]; then
	"$ANN" m.cg >ann.txt 2>ann.err || { fail "cachetrace-annotate failed"; cat ann.err; }
	grep -Eq '65,536.*s \+= m\[i\]\[j\];' ann.txt &&
		pass "cachetrace-annotate shows the source line with its misses" ||
		{ fail "cachetrace-annotate: no annotated source line"; head -60 ann.txt; }
fi
if command -v cg_annotate >/dev/null; then
	cg_annotate m.cg "$W/matrix.c" >cg.txt 2>cg.err && ! grep -qi warn cg.err ||
		{ fail "cg_annotate failed"; cat cg.err; }
	grep -Eq '65,536.*s \+= m\[i\]\[j\];' cg.txt &&
		pass "cg_annotate shows the source line with its misses" ||
		{ fail "cg_annotate: no annotated source line"; head -40 cg.txt; }
fi
finish
