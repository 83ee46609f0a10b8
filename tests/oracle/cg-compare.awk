# Compare two per-function aggregates from cg-aggregate.awk.
#   awk -v exact="Ir Dr Dw Bc Bi" -v approx="I1mr ..." -v absent="fn ..." \
#       -v musthave="fn ..." -f cg-compare.awk EXPECTED OURS
# exact:  events that must be identical per function.
# approx: events that must agree within max(SLACK, PCT% of the larger
#         count), per function (-v pct= -v slack=: 3 and 5 unless given). Why not exact: valgrind runs the program
#         with another stack (and so heap-break and environment) address,
#         with its preload library mapped and with a different startup path
#         through ld.so, so the lines of stack and libc data fall into other
#         cache sets, the caches and the branch predictor hold different
#         state when a function starts, and miss counts drift by a little.
#         Counts of the program's global arrays are otherwise identical.
#         An expected count of "?" is not compared.
# absent: functions that must not appear in OURS at all.
# musthave: functions that must appear in both (so an empty run fails).
# Exit 0 when everything agrees; else prints a table of differences, exits 1.
BEGIN {
	PCT = pct ? pct : 3; SLACK = slack ? slack : 5
	split("Ir I1mr ILmr Dr D1mr DLmr Dw D1mw DLmw Bc Bcm Bi Bim", name, " ")
	for (k = 1; k <= 13; k++)
		idx[name[k]] = k + 1
	ne = split(exact, ex, " ")
	na = split(approx, ap, " ")
	nab = split(absent, ab, " ")
	nm = split(musthave, mh, " ")
	bad = 0
}
FNR == 1 { file++ }
{
	fns[$1] = 1
	if (file == 1) { inexp[$1] = 1; for (i = 2; i <= NF; i++) e[$1, i] = $i }
	else { inours[$1] = 1; for (i = 2; i <= NF; i++) g[$1, i] = $i }
}
function row(f, ev, a, b, rule) {
	if (!bad)
		printf "%-28s %-5s %12s %12s %10s  %s\n", "function", "event", "valgrind", "ours", "diff", "rule"
	bad++
	printf "%-28s %-5s %12s %12s %10s  %s\n", f, ev, a, b, \
		(a ~ /^[0-9]+$/ && b ~ /^[0-9]+$/) ? b - a : "", rule
}
END {
	for (i = 1; i <= nab; i++)
		if (ab[i] in inours)
			row(ab[i], "-", "absent", "present", "must be outside the region")
	for (i = 1; i <= nm; i++)
		if (!(mh[i] in inexp) || !(mh[i] in inours))
			row(mh[i], "-", (mh[i] in inexp) ? "present" : "absent", \
			    (mh[i] in inours) ? "present" : "absent", "must be in both")
	for (f in fns) {
		skipit = 0
		for (i = 1; i <= nab; i++)
			if (ab[i] == f)
				skipit = 1
		if (skipit)
			continue
		if (!(f in inexp) || !(f in inours)) {
			row(f, "-", (f in inexp) ? "present" : "absent", \
			    (f in inours) ? "present" : "absent", "function in one profile only")
			continue
		}
		for (k = 1; k <= ne; k++) {
			c = idx[ex[k]]
			if (e[f, c] == "?")	# the oracle cannot tell
				continue
			if (e[f, c] != g[f, c])
				row(f, ex[k], e[f, c], g[f, c], "exact")
		}
		for (k = 1; k <= na; k++) {
			c = idx[ap[k]]
			a = e[f, c]; b = g[f, c]
			if (b == "-") { row(f, ap[k], a, b, "event missing"); continue }
			m = a > b ? a : b
			tol = PCT * m / 100
			if (tol < SLACK)
				tol = SLACK
			d = a - b
			if (d < 0)
				d = -d
			if (d > tol)
				row(f, ap[k], a, b, sprintf("|diff| <= %.0f", tol))
		}
	}
	exit bad ? 1 : 0
}
