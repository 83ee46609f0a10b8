#!/bin/sh
# A newline in a program argument or in a source file's name must not
# inject lines into the profile (issue 10, item 11): the cmd: and fl=
# lines carry it as the two characters backslash-n (src/report/cgout.c),
# the profile has exactly the program's own functions and file, the
# summary equals the column totals, and valgrind's cg_annotate and
# cachetrace-annotate both read it, cachetrace-annotate also back through
# --output-profile unchanged.
#   escape.sh CACHETRACE ANNOTATE SCRATCH
set -u
CT=$(realpath "$1"); ANN=$(realpath "$2"); W=$3/report-escape
rm -rf "$W"; mkdir -p "$W"; cd "$W" || exit 1
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
pass() { echo "ok: $*"; }
nl='
'
# The source file's name holds a newline and a would-be fn= line.
src="esc${nl}fn=evil.c"
cat >"$src" <<'C'
int work(int n) { int s = 0; for (int i = 0; i < n; i++) s += i; return s; }
int main(int argc, char **argv) { (void)argv; return work(argc * 10) == 1; }
C
${CC:-cc} -O1 -g -fno-pie -no-pie -fno-inline -o prog "$src" ||
	{ echo "cannot build"; exit 1; }
arg="x${nl}fl=evil.c${nl}fn=evil${nl}1 1000000"
"$CT" -q --start=work -o p.cg -- ./prog "$arg" >ct.out 2>ct.err ||
	{ cat ct.err; fail "cachetrace exited with $?"; }
[ -s p.cg ] || { fail "no profile"; exit 1; }

grep -qx 'cmd: ./prog x\\nfl=evil.c\\nfn=evil\\n1 1000000' p.cg &&
	pass "cmd: on one line, newlines as backslash-n" ||
	fail "cmd: line: $(grep -n '^cmd:' p.cg)"
grep -q '^fl=.*esc\\nfn=evil\.c$' p.cg &&
	pass "fl= on one line, newline as backslash-n" ||
	fail "fl= lines: $(grep '^fl=' p.cg | tr '\n' '|')"
grep -q -e '^fn=evil' -e '^fl=evil' p.cg &&
	fail "injected lines: $(grep -n -e '^fn=evil' -e '^fl=evil' p.cg)" ||
	pass "no injected fl=/fn= lines"
fns=$(sed -n 's/^fn=//p' p.cg | sort -u | tr '\n' ' ')
[ "$fns" = "work " ] && pass "functions: work" || fail "functions: '$fns'"
# Every line is a header, a name or "LINE COUNT...": nothing else got in.
bad=$(grep -v -E '^(desc: |cmd: |events: |summary: |fl=|fn=|[0-9]+( [0-9]+)*$)' p.cg)
[ -z "$bad" ] && pass "every line well formed" || fail "stray lines: $bad"
sum=$(awk '/^[0-9]/ { s += $2 } END { print s + 0 }' p.cg)
tot=$(sed -n 's/^summary: \([0-9]*\).*/\1/p' p.cg)
[ "$sum" = "$tot" ] && [ "$tot" -gt 0 ] && [ "$tot" -lt 1000000 ] &&
	pass "summary $tot = the column total" ||
	fail "summary '$tot', column total $sum"

if cg_annotate p.cg >cg.txt 2>cg.err && [ ! -s cg.err ]; then
	grep -q "$(printf '%s' "$tot" | sed ':a;s/\B[0-9]\{3\}\>/,&/;ta') .*PROGRAM TOTALS" cg.txt &&
		pass "cg_annotate reads it, totals $tot" ||
		fail "cg_annotate totals: $(grep 'PROGRAM TOTALS' cg.txt)"
else
	fail "cg_annotate: $(head -3 cg.err)"
fi
if "$ANN" p.cg >ann.txt 2>ann.err; then
	grep -q 'work' ann.txt && pass "cachetrace-annotate reads it" ||
		fail "cachetrace-annotate shows no work()"
else
	fail "cachetrace-annotate: $(head -3 ann.err)"
fi
if "$ANN" --output-profile=back.cg p.cg >/dev/null 2>ann.err; then
	grep -v -e '^desc:' -e '^cmd:' p.cg >a; grep -v -e '^desc:' -e '^cmd:' back.cg >b
	cmp -s a b && grep -qx 'cmd: ./prog x\\nfl=evil.c\\nfn=evil\\n1 1000000' back.cg &&
		pass "cachetrace-annotate writes it back unchanged" ||
		fail "written back differently: $(diff a b | head -5)"
else
	fail "cachetrace-annotate --output-profile: $(head -3 ann.err)"
fi
[ "$fails" -eq 0 ] && echo "escape: all passed" && exit 0
exit 1
