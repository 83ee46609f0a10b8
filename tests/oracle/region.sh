#!/bin/sh
# Region test: cachetrace --start=START [--stop=STOP] against Cachegrind.
#   region.sh CACHETRACE SRCDIR SCRATCH PROG START [STOP]
# START/STOP: symbol, 0xADDR, PROG.c:LINE, or lib.so:symbol (START only);
# and two forms this script turns into cachetrace's syntax once PROG is
# built: @addr:SYM (SYM's address as 0xADDR) and @insn:SYM:K (SYM+OFF, OFF
# the offset of SYM's K-th instruction, K from 0, from objdump).
#
# Expected counts, per own function of PROG (nm -l -S):
# - Which functions run inside the region, and how much of each, comes from
#   a Lackey trace of the whole run cut at the region's bounds
#   (region-window.awk; the default stop is the start function's return,
#   found through its return-address slot, so recursion is handled).
# - A function that runs only inside the region must have exactly
#   Cachegrind's whole-run Ir Dr Dw Bc Bi.
# - A function only partly inside (the caller of --stop's location, the
#   outer frames of a recursion) must have the Lackey window's Ir, Dr (L+M),
#   Dw (S), and Bc/Bi from objdump's branch classes of the pcs it ran;
#   Bc/Bi are only compared when the same derivation over the whole run
#   gives Cachegrind's counts for that function (checked here each time).
# - A function that runs only outside the region must be absent.
# Misses are not compared: the region starts with cold caches.
# With REGION_LIBC_FNS="fn ...": library functions that run only inside
# the region (qsort's helpers) must have Cachegrind's whole-run Ir Dr Dw
# Bc Bi.  With chasing (valgrind's default, and cachetrace's
# --vex-chase=yes) VEX merges "A && B" branch pairs: glibc 2.36 msort.c:62
# (three jcc, executed 249 + 1684 + 1550 = 3483 times by Lackey's trace)
# gets 2640 Bc with chasing and 3483 without (src/decode/chase.c).
# For lib.so:symbol the window starts at symbol@plt in PROG: the PLT stub
# and the lazy binding are libc/ld.so code, so the program's functions get
# the same counts either way.
. "$(dirname "$0")/lib.sh"
START=$5; STOP=${6:-}
[ -n "$START" ] || { echo "region: no START" >&2; exit 1; }
TESTTAG=$(printf '%s' "$START-$STOP" | tr -c 'A-Za-z0-9_' '_')
oracle_init region "$1" "$2" "$3" "$4"

own_functions >ranges.txt
[ -s ranges.txt ] || die "no functions of $PROG.c found by nm -l"
objdump -d --no-show-raw-insn "$PROG" >prog.dis
awk 'match($0, /^ *[0-9a-f]+:\t/) {
	pc = $1; sub(/:$/, "", pc)
	n = split(substr($0, RLENGTH + 1), w, /[ \t]+/)
	i = 1
	while (i < n && w[i] ~ /^(rep|repz|repe|repnz|repne|notrack|bnd|lock|data16|cs|ds|addr32)$/) {
		if (w[i] ~ /^rep/) rep = 1
		i++
	}
	m = w[i]; op = w[i + 1]
	if (rep && m ~ /^(movs|stos|lods|cmps|scas|ins|outs)/) print pc, "R"
	else if (m ~ /^j/ && m !~ /^jmp/) print pc, "C"
	else if (m ~ /^loop/) print pc, "C"
	else if (m ~ /^(jmp|call)/ && op ~ /^\*/) print pc, "I"
	rep = 0
}' prog.dis >classes.txt

# meta LOC: turn the @ forms into cachetrace locations.
meta() {
	case $1 in
	@addr:*)
		a=$(nm --defined-only "$PROG" | awk -v s="${1#@addr:}" '$3 == s { print $1; exit }')
		[ -n "$a" ] && printf '0x%x\n' $((0x$a)) ;;
	@insn:*)
		r=${1#@insn:}; sym=${r%:*}; k=${r##*:}
		awk -v s="<$sym>:" -v k="$k" '
			$2 == s { on = 1; base = $1; n = 0; next }
			on && /^$/ { exit }
			on && match($0, /^ *[0-9a-f]+:\t/) {
				if (n++ == k) {
					pc = $1; sub(/:$/, "", pc)
					printf "%s+%d\n", substr(s, 2, length(s) - 3), hv(pc) - hv(base); exit
				}
			}
			function hv(x,    i, v) { v = 0; for (i = 1; i <= length(x); i++) v = v * 16 + index("0123456789abcdef", substr(x, i, 1)) - 1; return v }' prog.dis ;;
	*)	echo "$1" ;;
	esac
}
START=$(meta "$START"); [ -n "$START" ] || die "cannot resolve the start location"
if [ -n "$STOP" ]; then
	STOP=$(meta "$STOP"); [ -n "$STOP" ] || die "cannot resolve the stop location"
fi

# resolve LOC: print the address (hex) where the Lackey window starts/ends.
resolve() {
	case $1 in
	0x*)	echo "$1" ;;
	*.c:*)	objdump --dwarf=decodedline "$PROG" |
		awk -v f="${1%%:*}" -v l="${1##*:}" '
			($1 == f || substr($1, length($1) - length(f)) == "/" f) && $2 == l && $NF == "x" {
				v = $3; sub(/^0x/, "", v)
				if (best == "" || length(v) < length(best) || (length(v) == length(best) && v < best)) best = v
			}
			END { if (best != "") print best }' ;;
	*:*)	sym=${1#*:}
		awk -v s="<$sym@plt>:" '$2 == s { print $1 }' prog.dis ;;
	*)	sym=${1%%+*}
		off=0; [ "$sym" = "$1" ] || off=${1#*+}
		a=$(nm --defined-only "$PROG" | awk -v s="$sym" '$3 == s { print $1; exit }')
		[ -n "$a" ] && printf '%x\n' $((0x$a + off)) ;;
	esac
}
wstart=$(resolve "$START"); [ -n "$wstart" ] || die "cannot resolve $START in $PROG"
wstop=
if [ -n "$STOP" ]; then
	wstop=$(resolve "$STOP"); [ -n "$wstop" ] || die "cannot resolve $STOP in $PROG"
fi

# shellcheck disable=SC2086
GLIBC_TUNABLES=$ORACLE_TUNABLES valgrind --tool=lackey --trace-mem=yes \
	--log-file=lackey.log ./"$PROG" >vg.stdout 2>vg.stderr ||
	die "valgrind lackey failed: $(cat vg.stderr)"
awk -v start="$wstart" -v stop="$wstop" -f "$ORACLE_DIR/region-window.awk" \
	ranges.txt classes.txt lackey.log | sort >window.txt
grep -q '^W ' window.txt || die "the region [$START, ${STOP:-return}) runs none of $PROG.c in the Lackey trace"

own=$(awk '{ printf "%s ", $3 }' ranges.txt)
run_cachegrind vg.cg
awk -v own="$own" -f "$ORACLE_DIR/cg-aggregate.awk" vg.cg | sort >vg.agg

# Expected aggregate (cg-aggregate's columns; "-" for the uncompared misses).
awk 'FILENAME == ARGV[1] { cg[$1] = $0; next }
     $1 == "F" { full[$2] = $0; next }
     $1 == "W" { win[$2] = $0; next }
     END {
	for (f in full) {
		split(full[f], F, " ")
		if (!(f in cg)) { printf "oracle: %s runs in Lackey but not in Cachegrind\n", f > "/dev/stderr"; bad = 1; continue }
		split(cg[f], C, " ")
		# self-check: Lackey sees what Cachegrind counts
		if (F[3] != C[2] || F[4] != C[5] || F[5] != C[8]) {
			printf "oracle: %s Lackey Ir/Dr/Dw %s/%s/%s, Cachegrind %s/%s/%s\n", f, F[3], F[4], F[5], C[2], C[5], C[8] > "/dev/stderr"
			bad = 1
		}
		if (!(f in win)) { print f > "absent.txt"; continue }
		split(win[f], Wn, " ")
		if (Wn[3] == F[3]) {	# wholly inside: Cachegrind is the oracle
			print cg[f]
			continue
		}
		bc = Wn[6]; bi = Wn[7]
		if (F[8] > 0 || F[6] != C[11] || F[7] != C[13]) { bc = "?"; bi = "?" }
		print f, Wn[3], "-", "-", Wn[4], "-", "-", Wn[5], "-", "-", bc, "-", bi, "-"
	}
	exit bad
     }' vg.agg window.txt >expected.agg 2>oracle.err ||
	die "the Lackey-based oracle disagrees with Cachegrind: $(cat oracle.err)"
if [ -n "${REGION_LIBC_FNS:-}" ]; then
	awk -v own="$REGION_LIBC_FNS" -f "$ORACLE_DIR/cg-aggregate.awk" vg.cg | sort >libc.agg
	for f in $REGION_LIBC_FNS; do
		grep -q "^$f " libc.agg || die "Cachegrind shows no $f"
	done
	awk '{ print $1, $2, "-", "-", $5, "-", "-", $8, "-", "-", $11, "-", $13, "-" }' \
		libc.agg >>expected.agg
	own="$own $REGION_LIBC_FNS"
fi
sort -o expected.agg expected.agg
absent=$(cat absent.txt 2>/dev/null | tr '\n' ' ')

set -- --start="$START"
[ -n "$STOP" ] && set -- "$@" --stop="$STOP"
run_cachetrace ct.cg "$@"
awk -v own="$own" -f "$ORACLE_DIR/cg-aggregate.awk" ct.cg | sort >ct.agg

fail=0
if ! awk -f "$ORACLE_DIR/cg-summary.awk" ct.cg >summary.txt; then
	echo "$ME: $PROG $*: our summary: line is wrong:"; cat summary.txt; fail=1
fi
case $START in *:*|0x*) must= ;; *) must=${START%%+*} ;; esac
must="$must ${REGION_LIBC_FNS:-}"
if ! awk -v exact="Ir Dr Dw Bc Bi" -v absent="$absent" -v musthave="$must" \
	 -f "$ORACLE_DIR/cg-compare.awk" expected.agg ct.agg >diff.txt; then
	echo "$ME: $PROG $*: per-function counts differ ($W):"
	cat diff.txt
	fail=1
fi
[ $fail -eq 0 ] && echo "$ME: $PROG $*: $(wc -l <expected.agg) functions as expected, absent: ${absent:-none}"
exit $fail
