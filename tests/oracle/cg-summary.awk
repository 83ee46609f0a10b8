# Check that a Cachegrind-format file's summary: line equals the column
# totals of its cost lines (summed here, independently of the writer).
# Prints the differing events and exits 1 on a mismatch or a malformed file.
/^events:/ { nev = NF - 1; for (i = 2; i <= NF; i++) ev[i - 1] = $i; next }
/^summary:/ { have = 1; for (i = 2; i <= NF; i++) summ[i - 1] = $i; ns = NF - 1; next }
/^[0-9]/ {
	if (NF - 1 > nev) { printf "line %d: %d counts for %d events\n", NR, NF - 1, nev; bad = 1 }
	for (i = 2; i <= NF; i++)
		if ($i != ".")
			tot[i - 1] += $i
}
END {
	if (!nev) { print "no events: line"; exit 1 }
	if (!have) { print "no summary: line"; exit 1 }
	if (ns != nev) { printf "summary has %d counts for %d events\n", ns, nev; bad = 1 }
	for (i = 1; i <= nev; i++)
		if (summ[i] + 0 != tot[i] + 0) {
			printf "summary %s = %s, but the lines sum to %d\n", ev[i], summ[i], tot[i]
			bad = 1
		}
	exit bad
}
