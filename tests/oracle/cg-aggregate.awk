# Sum a Cachegrind-format profile per function.
#   awk -v own="fn1 fn2 ..." -f cg-aggregate.awk FILE
# Prints one line per function in `own` that has a cost centre in FILE:
#   fn Ir I1mr ILmr Dr D1mr DLmr Dw D1mw DLmw Bc Bcm Bi Bim
# The columns are mapped by name from the file's events: line, so the order
# of events in FILE does not matter; an event the file lacks is printed as
# "-". A function is keyed by fn= alone, whatever the fl=/fi=/fe= file
# (inlined header code such as AVX intrinsics is part of its function).
# `.` and missing trailing counts are zero (Cachegrind's format).
BEGIN {
	nwant = split("Ir I1mr ILmr Dr D1mr DLmr Dw D1mw DLmw Bc Bcm Bi Bim", want, " ")
	n = split(own, o, " ")
	for (i = 1; i <= n; i++)
		isown[o[i]] = 1
}
/^events:/ {
	nev = NF - 1
	for (i = 2; i <= NF; i++)
		col[$i] = i - 1
	next
}
/^fn=/ { fn = substr($0, 4); next }
/^[0-9]/ {
	if (!(fn in isown))
		next
	seen[fn] = 1
	for (i = 2; i <= NF && i - 1 <= nev; i++)
		if ($i != ".")
			sum[fn, i - 1] += $i
}
END {
	for (f in seen) {
		line = f
		for (k = 1; k <= nwant; k++) {
			if (want[k] in col)
				line = line " " (sum[f, col[want[k]]] + 0)
			else
				line = line " -"
		}
		print line
	}
}
