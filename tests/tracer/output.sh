#!/bin/sh
# Output naming and streams: -o - keeps the profile alone on stdout (the
# target's stdout goes to stderr); %p is the target's pid; the default name
# is cachegrind.out.<pid>; --cachegrind-out-file is the same as -o; the
# exit status is the target's.
. "$(dirname "$0")/lib.sh"
build loop

# Only lines of the Cachegrind format on stdout.
"$CT" -q --start=work -o - -- ./loop 2 >prof.txt 2>err.txt
rc=$?
[ $rc -eq 0 ] && pass "-o -: exit 0" || fail "-o -: exit $rc"
bad=$(grep -Evc '^(desc: |cmd: |events: |fl=|fn=|summary: |[0-9]+( [0-9]+)*$)' prof.txt)
[ "$bad" -eq 0 ] && pass "-o -: stdout holds only the profile" ||
	{ fail "-o -: $bad foreign lines on stdout"; grep -Ev '^(desc|cmd|events|fl=|fn=|summary|[0-9])' prof.txt | head; }
grep -q '^checksum ' err.txt && pass "-o -: target stdout on stderr" ||
	fail "-o -: the target's output is not on stderr"
grep -q '^fn=work$' prof.txt && pass "-o -: work profiled" ||
	fail "-o -: no fn=work"
grep -q '^summary: ' prof.txt || fail "-o -: no summary line"

# %p and the default name use the target's pid, which is a child of ours:
# exactly one new file, named after a pid that is not ours.
rm -f cachegrind.out.* out.*.cg
"$CT" -q --start=work -o 'out.%p.cg' -- ./loop 1 >/dev/null 2>&1 ||
	fail "%p: cachetrace failed"
set -- out.*.cg
[ $# -eq 1 ] && [ -f "$1" ] && pass "%p: wrote $1" || fail "%p: files: $*"
pid=${1#out.}; pid=${pid%.cg}
case $pid in ''|*[!0-9]*) fail "%p: '$pid' is not a pid" ;; esac
"$CT" -q --start=work -- ./loop 1 >/dev/null 2>&1 || fail "default: failed"
set -- cachegrind.out.*
[ $# -eq 1 ] && [ -f "$1" ] && pass "default name: $1" ||
	fail "default name: files: $*"
OUTVAR=abc "$CT" -q --start=work --cachegrind-out-file='q.%q{OUTVAR}' \
	-- ./loop 1 >/dev/null 2>&1
[ -f q.abc ] && pass "%q{VAR}" || fail "%q{VAR}: no q.abc"

# The exit status is the target's.
printf 'int main(void){return 3;}\n' > three.c
${CC:-cc} -O2 -g -no-pie -o three three.c
"$CT" -q -o three.cg -- ./three >/dev/null 2>&1
rc=$?
[ $rc -eq 3 ] && pass "exit status passed on" || fail "exit status $rc, not 3"

# The summary on stderr: "I refs:" equals the Ir total of the file.
"$CT" --start=work -o sum.cg -- ./loop 2 >/dev/null 2>err.txt
irs=$(sed -n 's/.*I *refs: *\([0-9,]*\).*/\1/p' err.txt | tr -d ,)
tot=$(sed -n 's/^summary: \([0-9]*\).*/\1/p' sum.cg)
[ -n "$irs" ] && [ "$irs" = "$tot" ] && pass "summary I refs = file total ($tot)" ||
	fail "summary I refs '$irs' vs file total '$tot'"
grep -q 'Branches:' err.txt && pass "summary has branches" ||
	fail "summary lacks Branches:"
grep -Eq 'Traced [0-9]+ instructions in [0-9.]+ s \([0-9.]+k/s\) by the (emulate|step|lockstep|instrument) engine' err.txt && pass "stepping rate printed" ||
	fail "no stepping rate line"
# The live progress line: on a terminal only, and not with -q.  script(1)
# gives cachetrace a pseudo-terminal; main() steps ~1.5 s (the step
# engine: emulated it takes milliseconds) so a refresh
# (every 0.25 s) must happen.
if command -v script >/dev/null; then
	script -qec "'$CT' --engine=step --start=main -o pty.cg -- ./loop 6" /dev/null \
		>pty.txt 2>&1
	grep -aEq 'cachetrace: [0-9]+ instructions, [0-9.]+k/s, [0-9.]+ s, in (work|main)' pty.txt &&
		pass "progress line on a terminal" ||
		{ fail "no progress line on a terminal"; cat -A pty.txt | head -5; }
	script -qec "'$CT' -q --start=main -o pty.cg -- ./loop 6" /dev/null \
		>pty.txt 2>&1
	grep -aq 'k/s, ' pty.txt && fail "-q: progress line still shown" ||
		pass "-q silences the progress line and summary"
	"$CT" --start=main -o pty.cg -- ./loop 6 >/dev/null 2>nontty.txt
	grep -q 'instructions, ' nontty.txt &&
		fail "progress line written to a non-terminal" ||
		pass "no progress line when stderr is not a terminal"
fi
"$CT" --help | grep -q -- '--start=LOC' && pass "--help" || fail "--help"
"$CT" --version | grep -Eq '^cachetrace [0-9]' && pass "--version" ||
	fail "--version"
finish
