#!/bin/sh
# --cache-state (issue 26, item 16): every window starts empty with
# --cache-state=cold, so three windows of the same call count exactly three
# times one window, event by event; with warm (the default) the later
# windows find work()'s 16 KB of data in a 32 KB D1 and miss less.  The
# geometry is given, so no host's caches matter.  --breakpoints=sw: the
# start event on every host.
. "$(dirname "$0")/lib.sh"
build loop
G="--breakpoints=sw --I1=32768,8,64 --D1=32768,8,64 --LL=8388608,16,64"
run() {	# run NAME OPTIONS...: ./loop 3 (work() three times) into NAME.cg
	n=$1; shift
	"$CT" -q $G --start=work "$@" -o "$n.cg" -- ./loop 3 >"$n.out" 2>"$n.err" ||
		fail "$n: exit $?: $(cat "$n.err")"
}
summary() { sed -n 's/^summary: //p' "$1.cg"; }
run one
run cold --intervals=3 --cache-state=cold
run warm --intervals=3
three=$(summary one | awk '{ for (i = 1; i <= NF; i++) $i *= 3; print }')
[ -n "$three" ] && [ "$(summary cold)" = "$three" ] &&
	pass "cold: 3 windows = 3 x one window, every event ($three)" ||
	fail "cold: '$(summary cold)', 3 x one window '$three'"
# Events: Ir I1mr ILmr Dr D1mr ... (the cachegrind model's order).
d1mr() { awk -v f="$2" '{ print $f }' <<E
$(summary "$1")
E
}
cw=$(d1mr cold 5) ww=$(d1mr warm 5) ci=$(d1mr cold 2) wi=$(d1mr warm 2)
[ "$ww" -lt "$cw" ] && [ "$wi" -lt "$ci" ] &&
	pass "warm: D1mr $ww < $cw, I1mr $wi < $ci (cold)" ||
	fail "warm: D1mr $ww, I1mr $wi; cold: D1mr $cw, I1mr $ci"
[ "$(sed -n 's/^summary: \([0-9]*\) .*/\1/p' warm.cg)" = "$(sed -n 's/^summary: \([0-9]*\) .*/\1/p' cold.cg)" ] &&
	pass "warm and cold: the same Ir" || fail "Ir differs"
grep -qx 'desc: Cache state: *cold at every window (--cache-state=cold)' cold.cg &&
	pass "cold: the profile says so" || fail "cold: $(grep -i 'cache state' cold.cg)"
grep -qx 'desc: Cache state: *cold at the first window, then kept (--cache-state=warm)' warm.cg &&
	pass "warm: the profile says so" || fail "warm: $(grep -i 'cache state' warm.cg)"
# The other models forget too: hier with tage, and jaguar (its own
# levels, the same on every host; two cores, coherence records).
for m in "--model=hier --branch-model=tage" "--model=jaguar"; do
	g=$G; [ "$m" = --model=jaguar ] && g=--breakpoints=sw
	for c in one cold; do
		opt=; [ $c = cold ] && opt="--intervals=3 --cache-state=cold"
		"$CT" -q $g $m --start=work $opt -o "m$c.cg" -- ./loop 3 \
			>/dev/null 2>m.err || fail "$m $c: $(cat m.err)"
	done
	three=$(summary mone | awk '{ for (i = 1; i <= NF; i++) $i *= 3; print }')
	[ -n "$three" ] && [ "$(summary mcold)" = "$three" ] &&
		pass "$m cold: 3 windows = 3 x one window" ||
		fail "$m cold: '$(summary mcold)', 3 x one window '$three'"
done
"$CT" -q --cache-state=cold -o x.cg -- ./loop 1 >x.out 2>x.err
[ $? -eq 2 ] && grep -q "^cachetrace: --cache-state needs a start event" x.err &&
	pass "--cache-state without a start event: bad usage" ||
	fail "--cache-state without a start: $(cat x.err)"
"$CT" -q --start=work --cache-state=tepid -o x.cg -- ./loop 1 >x.out 2>x.err
[ $? -eq 2 ] && grep -q "^cachetrace: --cache-state: warm or cold, not 'tepid'" x.err &&
	pass "--cache-state=tepid: bad usage" || fail "--cache-state=tepid: $(cat x.err)"
finish
