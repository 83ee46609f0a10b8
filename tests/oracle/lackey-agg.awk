# Aggregate a Lackey-format access trace ("I  0401000,3", " L addr,size",
# " S ...", " M ...") per pc, for the pcs inside the given functions.
#   awk [-v segs="LO-HI ..."] -f lackey-agg.awk RANGES TRACE
# RANGES: lines "start size name" in hex (nm -S). Every other line of a
# valgrind log (==pid== banners) is ignored. A data line belongs to the
# last "I" line before it. Prints, one per line (sort them to compare):
#   pc X 0 COUNT            the instruction at pc ran COUNT times
#   pc KIND SIZE ADDR COUNT it made COUNT accesses of KIND (L S M), SIZE
#                           and, when the address lies in one of `segs` (the
#                           executable's own LOAD segments, hex: at the same
#                           place natively and under valgrind, non-PIE), at
#                           ADDR; else ADDR is "-" (stack, heap, libraries
#                           are elsewhere under valgrind)
# pcs are printed as lower-case hex without leading zeros.
function hexval(s,    i, v, c) {
	v = 0
	s = tolower(s)
	for (i = 1; i <= length(s); i++) {
		c = index("0123456789abcdef", substr(s, i, 1))
		if (c == 0)
			return -1
		v = v * 16 + c - 1
	}
	return v
}
function norm(s) {
	s = tolower(s)
	sub(/^0x/, "", s)
	sub(/^0+/, "", s)
	return s == "" ? "0" : s
}
BEGIN {
	ns = split(segs, sg, " ")
	for (i = 1; i <= ns; i++) {
		split(sg[i], b, "-")
		slo[i] = hexval(b[1]); shi[i] = hexval(b[2])
	}
}
FNR == NR {
	nr++
	lo[nr] = hexval($1)
	hi[nr] = lo[nr] + hexval($2)
	next
}
/^I  *[0-9a-fA-F]+,[0-9]+$/ {
	split($2, a, ",")
	pc = norm(a[1])
	v = hexval(pc)
	cur = ""
	for (r = 1; r <= nr; r++)
		if (v >= lo[r] && v < hi[r]) {
			cur = pc
			break
		}
	if (cur != "")
		cnt[cur, "X", 0, "-"]++
	next
}
/^ [LSM] [0-9a-fA-F]+,[0-9]+$/ {
	if (cur == "")
		next
	split($2, a, ",")
	ad = "-"
	if (ns) {
		v = hexval(a[1])
		for (i = 1; i <= ns; i++)
			if (v >= slo[i] && v < shi[i]) {
				ad = norm(a[1])
				break
			}
	}
	cnt[cur, $1, a[2], ad]++
	next
}
END {
	for (k in cnt) {
		split(k, p, SUBSEP)
		print p[1], p[2], p[3], p[4], cnt[k]
	}
}
