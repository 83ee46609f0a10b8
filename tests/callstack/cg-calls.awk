# Call edges of a Callgrind-format profile: one line per caller -> callee
# pair, "CALLER CALLEE CALLS INCL_EV1", summed over call sites and files.
# Names are expanded from the "(id) name" compression of the format.
# Used on Callgrind's file and on ours alike.
function name(kind, s,    id) {
	if (match(s, /^\([0-9]+\)/)) {
		id = substr(s, 2, RLENGTH - 2)
		s = substr(s, RLENGTH + 1)
		sub(/^ /, "", s)
		if (s != "")
			map[kind, id] = s
		return map[kind, id]
	}
	return s
}
/^fn=/ { fn = name("fn", substr($0, 4)); next }
/^cfn=/ { cfn = name("fn", substr($0, 5)); next }
/^(fl|fi|fe|cfi|cfl)=/ { next }
/^calls=/ { split(substr($0, 7), a, " "); calls = a[1]; pending = 1; next }
pending && /^[-+*0-9]/ {
	k = fn SUBSEP cfn
	n[k] += calls
	inc[k] += ($2 == "" ? 0 : $2)
	pending = 0
	next
}
END {
	for (k in n) {
		split(k, p, SUBSEP)
		print p[1], p[2], n[k], inc[k]
	}
}
