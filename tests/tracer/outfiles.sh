#!/bin/sh
# Only the files asked for (issues 17 and 26): --html and
# --folded-out-file turn the call stacks on, but their Callgrind file is
# written only when asked for (--call-stacks=yes, --callgrind-out-file),
# and by default beside -o's file.  Each run is made in an empty
# directory and the directory's listing is compared with the names the
# options give.  --breakpoints=sw: the start event on every host.
. "$(dirname "$0")/lib.sh"
build loop
LOOP=$W/loop
expect() { [ "$2" = "$3" ] && pass "$1: $2" || fail "$1: got '$2', want '$3'"; }

# files CASE EXPECTED OPTIONS...: run in an empty CASE/, list what is there
# (callgrind.out.<pid> and cachegrind.out.<pid> shown as .PID).
files() {
	d=$1 want=$2; shift 2
	rm -rf "$d"; mkdir "$d"
	(cd "$d" && "$CT" -q --breakpoints=sw --start=work "$@" -- "$LOOP" 1 \
		>run.out 2>run.err) || { fail "$d: cachetrace failed"; cat "$d/run.err"; }
	got=$(cd "$d" && ls -A | grep -v -x -e run.out -e run.err |
		sed 's/\.[0-9][0-9]*$/.PID/' | sort | tr '\n' ' ')
	expect "$d: files" "$got" "$want"
}
files html "p.out r.html " --html=r.html -o p.out
files html-default "cachegrind.out.PID r.html " --html=r.html
files html-stacks "callgrind.out.PID p.out r.html " --html=r.html \
	--call-stacks=yes -o p.out
files html-cgfile "c.out p.out r.html " --html=r.html \
	--callgrind-out-file=c.out -o p.out
files stacks "callgrind.out.PID p.out " --call-stacks=yes -o p.out
files html-nostacks "p.out r.html " --html=r.html --call-stacks=no -o p.out
# Issue 26: folded stacks alone need no Callgrind file; the Callgrind file
# goes beside -o's profile unless named.
files folded "f.txt p.out " --folded-out-file=f.txt -o p.out
files folded-stacks "callgrind.out.PID f.txt p.out " --folded-out-file=f.txt \
	--call-stacks=yes -o p.out
rm -rf beside-sub; mkdir beside-sub
files beside "" --call-stacks=yes -o "$W/beside-sub/p.out"
got=$(cd beside-sub && ls -A | sed 's/\.[0-9][0-9]*$/.PID/' | sort | tr '\n' ' ')
expect "beside: the Callgrind file beside -o's" "$got" "callgrind.out.PID p.out "

# The page is still made from the call-stack profile: the page of a run
# that writes the Callgrind file, the data file's name aside.
label() { sed 's/callgrind\.out\.[0-9]*/p.out/g' "$1"; }
if [ -s html/r.html ] && [ -s html-stacks/r.html ]; then
	label html/r.html >a.html; label html-stacks/r.html >b.html
	cmp -s a.html b.html && pass "the page is the one of the call-stack profile" ||
		fail "the page differs from the one with the Callgrind file written"
	cmp -s a.html html-nostacks/r.html &&
		fail "the page is the one of the flat profile"
fi
finish
