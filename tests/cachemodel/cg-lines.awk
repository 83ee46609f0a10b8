# Per source line counts of a Cachegrind-format file, one "FILE|FN|LINE
# EVENT COUNT" line per non-zero count, with event names mapped through
#   awk -v map="LLImr=ILmr LLmr=DLmr LLmw=DLmw" -v keep="Ir Dr ..." -f cg-lines.awk FILE
# keep: the events printed (after mapping).  Counts of one line that appear
# under several fn= blocks are summed.
BEGIN {
	n = split(map, m, " ")
	for (i = 1; i <= n; i++) {
		split(m[i], kv, "=")
		rename[kv[1]] = kv[2]
	}
	n = split(keep, k, " ")
	for (i = 1; i <= n; i++)
		wanted[k[i]] = 1
}
/^events:/ {
	ne = NF - 1
	for (i = 2; i <= NF; i++)
		ev[i - 1] = ($i in rename) ? rename[$i] : $i
	next
}
/^fl=/ { fl = substr($0, 4); file = fl; next }
/^(fi|fe)=/ { file = substr($0, 4); next }
/^fn=/ { fn = substr($0, 4); file = fl; next }
/^[0-9]/ {
	for (i = 2; i <= NF; i++)
		if ((ev[i - 1] in wanted) && $i != 0)
			sum[file "|" fn "|" $1 " " ev[i - 1]] += $i
	next
}
END {
	for (key in sum)
		print key, sum[key]
}
