# Expected per-function counts of a region, from a Lackey trace of the
# whole run.
#   awk -v start=HEX [-v stop=HEX] -f region-window.awk RANGES CLASSES TRACE
# RANGES: "start size name" (hex, nm -S) of the program's own functions.
# CLASSES: "pc class" from objdump: C conditional branch (jcc, jrcxz,
#   loop*), I indirect jump or call, R rep-prefixed string instruction
#   (Cachegrind's branch count for those is not derived here).
# The region starts at the first execution of `start`. With `stop` it ends
# just before the first execution of `stop`. Without, it ends after the
# start function returns to its caller: the call that entered it stored
# the return address (the last 8-byte store before entry); the region ends
# after the instruction that loads those 8 bytes back (the ret). That is
# the outermost return even when the function recurses, since inner calls
# store their return addresses deeper in the stack.
# Prints for every own function run inside the region (W) and in the whole
# run (F): "W|F name Ir Dr Dw Bc Bi REP", with Dr = L + M (a modify is one
# read, as in Cachegrind), Dw = S, REP = executions of class R pcs.
function hexval(s,    i, v, c) {
	v = 0
	s = tolower(s)
	sub(/^0x/, "", s)
	for (i = 1; i <= length(s); i++) {
		c = index("0123456789abcdef", substr(s, i, 1))
		if (c == 0)
			return -1
		v = v * 16 + c - 1
	}
	return v
}
BEGIN {
	vstart = hexval(start)
	vstop = stop == "" ? -1 : hexval(stop)
	state = 0	# 0 before, 1 inside, 2 ending after this insn, 3 after
}
FILENAME == ARGV[1] {
	nr++
	lo[nr] = hexval($1); hi[nr] = lo[nr] + hexval($2); nm[nr] = $3
	next
}
FILENAME == ARGV[2] { cls[hexval($1)] = $2; next }
/^I  *[0-9a-fA-F]+,[0-9]+$/ {
	split($2, a, ",")
	v = hexval(a[1])
	if (state == 0 && v == vstart)
		state = 1
	else if (state == 1 && v == vstop)
		state = 3
	else if (state == 2)
		state = 3
	fn = ""
	for (r = 1; r <= nr; r++)
		if (v >= lo[r] && v < hi[r]) {
			fn = nm[r]
			break
		}
	inwin = (state == 1)
	if (fn != "") {
		add(fn, 1, inwin)
		if (cls[v] == "C") add(fn, 4, inwin)
		if (cls[v] == "I") add(fn, 5, inwin)
		if (cls[v] == "R") add(fn, 6, inwin)
	}
	next
}
/^ [LSM] [0-9a-fA-F]+,[0-9]+$/ {
	split($2, a, ",")
	if (state == 0 && $1 == "S" && a[2] == 8)
		retslot = hexval(a[1])
	if (state == 1 && stop == "" && $1 == "L" && a[2] == 8 && hexval(a[1]) == retslot)
		state = 2
	if (fn != "")
		add(fn, $1 == "S" ? 3 : 2, inwin)
	next
}
function add(f, k, w) {
	full[f, k]++; infull[f] = 1
	if (w) { win[f, k]++; inw[f] = 1 }
}
END {
	for (f in inw)
		print "W", f, win[f, 1] + 0, win[f, 2] + 0, win[f, 3] + 0, win[f, 4] + 0, win[f, 5] + 0, win[f, 6] + 0
	for (f in infull)
		print "F", f, full[f, 1] + 0, full[f, 2] + 0, full[f, 3] + 0, full[f, 4] + 0, full[f, 5] + 0, full[f, 6] + 0
}
