#!/bin/sh
# Per-instruction differential test against valgrind's Lackey.
#   lackey-diff.sh CACHETRACE SRCDIR SCRATCH PROG
# Runs `valgrind --tool=lackey --trace-mem=yes` and `cachetrace
# --trace-mem=FILE` on PROG and, for every pc inside the program's own
# functions (nm -l -S: symbols whose debug info names PROG.c), requires the
# same execution count and the same multiset of (kind, size) data accesses
# summed over the run; accesses to the executable's own LOAD segments
# (globals, .rodata: at the same addresses natively and under valgrind,
# since the program is non-PIE) must also have the same addresses.
# Mismatching pcs are listed with their disassembly.
#
# Lackey instruments the same VEX IR as Cachegrind, so its accesses are
# Cachegrind's, with the quirks seen here (3.19, on tests/progs):
# - a load and a store of the same address and size in one instruction are
#   one M (Cachegrind: one Dr): inc/add/neg/shl/or on memory;
# - locked read-modify-writes and xchg with memory are a VEX compare-and-swap
#   and show as one L of the operand size, no S or M (Cachegrind: one Dr);
# - rep string instructions show one "I" line per iteration plus the final
#   check (Cachegrind's Ir: count + 1; 1 for count 0), each element's load
#   and store on its own lines;
# - 32-byte ymm loads and stores are one L/S of size 32, straddling or not;
# - vpgatherdd shows one 4-byte L per element, at the element's address.
# None of these needed an exception in the comparison: our trace must
# show exactly what Lackey shows.
. "$(dirname "$0")/lib.sh"
oracle_init lackey-diff "$@"

own_functions >ranges.txt
[ -s ranges.txt ] || die "no functions of $PROG.c found by nm -l"

# shellcheck disable=SC2086
GLIBC_TUNABLES=$ORACLE_TUNABLES valgrind --tool=lackey --trace-mem=yes \
	--log-file=lackey.log ./"$PROG" $PROG_ARGS >vg.stdout 2>vg.stderr ||
	die "valgrind failed: $(cat vg.stderr)"
# shellcheck disable=SC2086
GLIBC_TUNABLES=$ORACLE_TUNABLES "$CACHETRACE" --trace-mem=ct.trace \
	$CACHE_OPTS -o ct.cg -q -- ./"$PROG" $PROG_ARGS >ct.stdout 2>ct.stderr ||
	die "cachetrace failed (exit $?): $(head -c 2000 ct.stderr)"
[ -s ct.trace ] || die "cachetrace wrote no trace"

# The executable's LOAD segments, "lo-hi" in hex.
segs=$(readelf -lW "$PROG" | awk '$1 == "LOAD" {
	printf "%x-%x ", strtonum_hex($3), strtonum_hex($3) + strtonum_hex($6) }
	function strtonum_hex(s,    i, v) {
		v = 0; s = tolower(s); sub(/^0x/, "", s)
		for (i = 1; i <= length(s); i++) v = v * 16 + index("0123456789abcdef", substr(s, i, 1)) - 1
		return v }')
[ -n "$segs" ] || die "no LOAD segments in $PROG"
awk -v segs="$segs" -f "$ORACLE_DIR/lackey-agg.awk" ranges.txt lackey.log | sort >vg.agg
awk -v segs="$segs" -f "$ORACLE_DIR/lackey-agg.awk" ranges.txt ct.trace | sort >ct.agg
grep -q ' X ' vg.agg || die "Lackey shows no instruction of $PROG.c"

objdump -d --no-show-raw-insn "$PROG" >prog.dis

# Join on (pc, kind, size, addr); print "pc kind size addr valgrind ours"
# where they differ.
awk 'FNR == NR { v[$1 " " $2 " " $3 " " $4] = $5; next }
     { o[$1 " " $2 " " $3 " " $4] = $5 }
     END {
	for (k in v) if (!(k in o) || o[k] != v[k]) print k, v[k], (k in o) ? o[k] : 0
	for (k in o) if (!(k in v)) print k, 0, o[k]
     }' vg.agg ct.agg | sort >diff.txt

if [ -s diff.txt ]; then
	echo "$ME: $PROG: $(awk '{print $1}' diff.txt | sort -u | wc -l) pcs differ from Lackey ($W):"
	printf '%-8s %-4s %5s %-10s %8s %8s  %s\n' pc kind size addr valgrind ours instruction
	awk 'FNR == NR {
		if (match($0, /^ *[0-9a-f]+:\t/)) {
			pc = $1; sub(/:$/, "", pc); t = substr($0, RLENGTH + 1)
			gsub(/\t/, " ", t); dis[pc] = t
		}
		next
	     }
	     { k = ($2 == "X") ? "exec" : $2
	       printf "%-8s %-4s %5s %-10s %8s %8s  %s\n", $1, k, $3, $4, $5, $6, dis[$1] }' \
		prog.dis diff.txt | head -n 60
	exit 1
fi
echo "$ME: $PROG: $(grep -c ' X ' vg.agg) pcs agree with Lackey"
exit 0
