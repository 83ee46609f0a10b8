#!/bin/bash
# cachetrace-annotate on call stacks (issue 6): stacks.sh ANNOTATE SRCDIR CASE
# The expected outputs below are worked out by hand from the inputs in
# callgrind/ (the arithmetic is in the comments of each case and in
# docs/annotate.md).  Exit 0 pass, 1 fail.
ann=$(realpath "$1") srcdir=$(realpath "$2") case=$3
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
fail=0
die() { echo "FAIL: $*"; fail=1; }
cg=$srcdir/callgrind

# same NAME EXPECTED-FILE ACTUAL-FILE
same() { diff -u "$2" "$3" > "$tmp/d" || { cat "$tmp/d"; die "$1 differs"; }; }

expect_error() {
	local name=$1 line=$2 re=$3 err rc
	shift 3
	err=$(cd "$tmp" && "$ann" "$@" "$name" 2>&1 >/dev/null); rc=$?
	[ $rc -eq 1 ] || die "$name: exit status $rc, want 1 ($err)"
	[[ $err =~ ^"$name:$line: "$re ]] ||
		die "$name: stderr '$err', want '$name:$line: $re'"
}

case $case in
callgrind-golden)
	# calls.cgout: self main 20 Ir; func1 100 Ir 5 DLmr in file1.c and
	# 50 Ir (line 51 + 2) in inl.h; func2 700 Ir 35 DLmr.  Totals 870 40.
	cd "$cg" || exit 1
	"$ann" -o "$tmp/p" calls.cgout || die "exit status $?"
	same "Cachegrind-format profile of calls.cgout" calls.expected-profile "$tmp/p"
	"$ann" --annotate=no calls.cgout > "$tmp/r" 2> "$tmp/e" || die "report: exit status $?"
	[ -s "$tmp/e" ] && die "stderr: $(cat "$tmp/e")"
	grep -qx '870 (100.0%) 40 (100.0%)  PROGRAM TOTALS' "$tmp/r" || die "totals"
	grep -qE '^< 700 \(80\.5%,  80\.5%\) 35 \(87\.5%,  87\.5%\)  file2\.c:func2$' "$tmp/r" || die "file2.c:func2"
	grep -qE '^< 120 \(13\.8%,  94\.3%\)  5 \(12\.5%, 100\.0%\)  file1\.c:$' "$tmp/r" || die "file1.c"
	grep -qE '^<  50  \(5\.7%, 100\.0%\)  0  +inl\.h:func1$' "$tmp/r" || die "inl.h:func1"
	grep -qE '^> 150 \(17\.2%,  97\.7%\)  5 \(12\.5%, 100\.0%\)  func1:$' "$tmp/r" || die "func1: (two files)"
	# Inclusive: func2 is called by main (400 10) and func1 (300 25); its
	# call to itself (100 5) is inside those.  func1's from main: 450 30.
	# main is a root: 20 + 450 + 400 = 870, 0 + 30 + 10 = 40.
	grep -B1 -A7 -- '^-- Inclusive costs' "$tmp/r" > "$tmp/incl"
	same "Inclusive costs section" calls.expected-incl "$tmp/incl"
	# Relative positions with positions: instr line; "*" and +N/-N on
	# both, a calls= target that does not move the last position.
	printf '%s\n' '# callgrind format' 'positions: instr line' 'events: Ir' \
		'fl=a.c' 'fn=f' '0x1000 5 1' '+2 +1 2' '* * 4' 'cfn=g' \
		'calls=1 0x2000 90' '-2 -1 7' '+8 * 1' 'fn=g' '0x2000 90 3' \
		'totals: 11' > "$tmp/pos.cgout"
	printf '%s\n' 'cmd:' 'events: Ir' 'fl=a.c' 'fn=f' '5 2' '6 6' \
		'fn=g' '90 3' 'summary: 11' > "$tmp/pos.expected"
	"$ann" -o "$tmp/pos.out" "$tmp/pos.cgout" || die "pos: exit status $?"
	same "relative positions" "$tmp/pos.expected" "$tmp/pos.out"
	# A Cachegrind file and a Callgrind file with the same events merge.
	printf 'cmd: x\nevents: Ir DLmr\nfl=file2.c\nfn=func2\n20 30 5\nsummary: 30 5\n' > "$tmp/cg.cgout"
	"$ann" --annotate=no calls.cgout "$tmp/cg.cgout" > "$tmp/m" || die "merge: exit status $?"
	grep -qx '900 (100.0%) 45 (100.0%)  PROGRAM TOTALS' "$tmp/m" || die "merged totals"
	;;
objects)
	# objects.cgout (ob=/cob= as cachetrace and Callgrind write them):
	# main 100 1 + memcpy 600 15 + helper 200 3 = 900 19 inclusive.
	cd "$cg" || exit 1
	"$ann" --annotate=no objects.cgout > "$tmp/r" 2> "$tmp/e" || die "exit status $?"
	[ -s "$tmp/e" ] && die "stderr: $(cat "$tmp/e")"
	grep -qx '900 (100.0%) 19 (100.0%)  PROGRAM TOTALS' "$tmp/r" || die "totals"
	grep -B1 -A6 -- '^-- Inclusive costs' "$tmp/r" > "$tmp/incl"
	same "Inclusive costs of objects.cgout" objects.expected-incl "$tmp/incl"
	# The objects name no cost: the same report without them.
	grep -v -E '^c?ob=' objects.cgout > "$tmp/noobj.cgout"
	"$ann" --annotate=no "$tmp/noobj.cgout" > "$tmp/n" || die "without ob=: exit status $?"
	same "report without ob=/cob=" <(grep -v -e '^Invocation:' -e '^Data file:' "$tmp/r") \
		<(grep -v -e '^Invocation:' -e '^Data file:' "$tmp/n")
	;;
blame)
	cd "$cg" || exit 1
	# func2's 700 Ir: main's calls 400 (57.1%), func1's 300 (42.9%), and
	# func1's share is all main's (func1 has one caller).
	"$ann" --blame=func2 calls.cgout > "$tmp/o" || die "exit status $?"
	cat > "$tmp/x" <<'E'
--------------------------------------------------------------------------------
-- Blame: the callers of func2, by Ir
--------------------------------------------------------------------------------
Ir__________

700 (100.0%)  func2
400  (57.1%)    main
300  (42.9%)    func1
300  (42.9%)      main

E
	same "--blame=func2" "$tmp/x" "$tmp/o"
	# The talk's case, by DLmr: getpos 14,000; cull 12,000 (85.7%),
	# split over cull's callers by their edges' DLmr 9,000 : 3,000.
	"$ann" --blame=getpos --event=DLmr game.cgout > "$tmp/o" || die "exit status $?"
	cat > "$tmp/x" <<'E'
--------------------------------------------------------------------------------
-- Blame: the callers of getpos, by DLmr
--------------------------------------------------------------------------------
DLmr___________

14,000 (100.0%)  getpos
12,000  (85.7%)    cull
 9,000  (64.3%)      frame_a
 9,000  (64.3%)        main
 3,000  (21.4%)      frame_b
 3,000  (21.4%)        main
 2,000  (14.3%)    physics
 2,000  (14.3%)      frame_b
 2,000  (14.3%)        main

E
	same "--blame=getpos --event=DLmr" "$tmp/x" "$tmp/o"
	# By Ir (the default event, the first): 2000 = cull 1200 + physics 800;
	# cull's 1200 split 1000 : 500 -> 800 and 400.
	"$ann" --blame=getpos game.cgout > "$tmp/o" || die "exit status $?"
	grep -qx '1,200  (60.0%)    cull' "$tmp/o" || die "Ir: cull"
	grep -qx '  800  (40.0%)      frame_a' "$tmp/o" || die "Ir: cull <- frame_a"
	grep -qx '  400  (20.0%)      frame_b' "$tmp/o" || die "Ir: cull <- frame_b"
	grep -qx '  800  (40.0%)    physics' "$tmp/o" || die "Ir: physics"
	# Threshold 20%: physics (14.3%) and frame_b under cull (21.4%)... stays.
	"$ann" --blame=getpos --event=DLmr --threshold=20 game.cgout > "$tmp/o"
	grep -q physics "$tmp/o" && die "physics shown below the threshold"
	grep -qx ' 3,000  (21.4%)      frame_b' "$tmp/o" || die "threshold 20: frame_b"
	# Context names (--separate-callers): exact, 9,000 through frame_b.
	"$ann" --blame=getpos ctx.cgout > "$tmp/o" || die "ctx: exit status $?"
	cat > "$tmp/x" <<'E'
--------------------------------------------------------------------------------
-- Blame: the callers of getpos, by DLmr
--------------------------------------------------------------------------------
DLmr___________

10,000 (100.0%)  getpos
10,000 (100.0%)    cull
 9,000  (90.0%)      frame_b
 9,000  (90.0%)        main
 1,000  (10.0%)      frame_a
 1,000  (10.0%)        main

E
	same "--blame=getpos on context names" "$tmp/x" "$tmp/o"
	"$ann" --blame=nosuch game.cgout > /dev/null 2> "$tmp/e"; rc=$?
	[ $rc -eq 1 ] || die "--blame=nosuch: status $rc"
	grep -q "no function 'nosuch'" "$tmp/e" || die "--blame=nosuch: $(cat "$tmp/e")"
	"$ann" --blame=getpos --event=Nope game.cgout > /dev/null 2>&1 && die "--event=Nope accepted"
	;;
tree)
	cd "$cg" || exit 1
	# Top down by DLmr: frame_b's 5,000 = cull 3,000 + physics 2,000.
	"$ann" --tree=callee --event=DLmr --threshold=0 game.cgout > "$tmp/o" || die "exit status $?"
	cat > "$tmp/x" <<'E'
--------------------------------------------------------------------------------
-- Call tree (callee), by DLmr
--------------------------------------------------------------------------------
DLmr___________

14,000 (100.0%)  all
14,000 (100.0%)    main
 9,000  (64.3%)      frame_a
 9,000  (64.3%)        cull
 9,000  (64.3%)          getpos
 5,000  (35.7%)      frame_b
 3,000  (21.4%)        cull
 3,000  (21.4%)          getpos
 2,000  (14.3%)        physics
 2,000  (14.3%)          getpos

E
	same "--tree=callee --event=DLmr" "$tmp/x" "$tmp/o"
	"$ann" --tree=callee --event=DLmr --threshold=20 game.cgout > "$tmp/o"
	grep -q physics "$tmp/o" && die "--threshold=20: physics shown"
	[ "$(grep -c getpos "$tmp/o")" = 2 ] || die "--threshold=20: want 2 getpos frames"
	# By Ir: main 2610 = 10 + frame_a 1050 + frame_b 1550.
	"$ann" --tree=callee game.cgout > "$tmp/o"
	grep -qx '2,610 (100.0%)    main' "$tmp/o" || die "Ir: main"
	grep -qx '1,550  (59.4%)      frame_b' "$tmp/o" || die "Ir: frame_b"
	grep -qx '1,050  (40.2%)      frame_a' "$tmp/o" || die "Ir: frame_a"
	# calls.cgout: func2's call to itself is not followed.
	"$ann" --tree=callee --threshold=0 calls.cgout > "$tmp/o"
	[ "$(grep -c func2 "$tmp/o")" = 2 ] || die "calls.cgout: want func2 under main and func1"
	grep -qx '400  (46.0%)      func2' "$tmp/o" || die "calls.cgout: main -> func2 400"
	grep -qx '300  (34.5%)        func2' "$tmp/o" || die "calls.cgout: main -> func1 -> func2 300"
	# A Cachegrind file has no calls: a warning, every function a root.
	"$ann" --tree=callee "$srcdir/golden/basic.cgout" > "$tmp/o" 2> "$tmp/e" || die "cachegrind input: status $?"
	grep -q "no call edges" "$tmp/e" || die "no warning for a Cachegrind file"
	;;
folded)
	cd "$cg" || exit 1
	# small.folded: main;a;x 30, main;a 10, main;b 50, other 10.
	"$ann" --tree=callee small.folded > "$tmp/o" || die "exit status $?"
	cat > "$tmp/x" <<'E'
--------------------------------------------------------------------------------
-- Call tree (callee), by count
--------------------------------------------------------------------------------
count_________

  100 (100.0%)  all
   90  (90.0%)    main
   50  (50.0%)      b
   40  (40.0%)      a
   30  (30.0%)        x
   10  (10.0%)    other

E
	same "--tree=callee on folded stacks" "$tmp/x" "$tmp/o"
	cat small.folded | "$ann" --folded --tree=callee > "$tmp/o2" || die "stdin: status $?"
	cmp -s "$tmp/o" "$tmp/o2" || die "--folded from stdin differs"
	# Blame on folded stacks is exact; recursion counts once: going up
	# main;r;r;g the second r is passed over (issue 26; this golden had
	# r under r, 5, before).  g 5 + 2 + 1 = 8: r 5 + 1 (main 5, h 1),
	# main 2.
	printf 'main;r;r;g 5\nmain;g 2\nh;r;g 1\nmain;a 7\n' > "$tmp/r.folded"
	"$ann" --blame=g --event=DLmr "$tmp/r.folded" > "$tmp/o" || die "blame: status $?"
	cat > "$tmp/x" <<'E'
--------------------------------------------------------------------------------
-- Blame: the callers of g, by DLmr
--------------------------------------------------------------------------------
DLmr_________

   8 (100.0%)  g
   6  (75.0%)    r
   5  (62.5%)      main
   1  (12.5%)      h
   2  (25.0%)    main

E
	same "--blame=g on folded stacks" "$tmp/x" "$tmp/o"
	# Two inputs are merged.
	"$ann" --tree=callee small.folded small.folded > "$tmp/o"
	grep -qx '  200 (100.0%)  all' "$tmp/o" || die "merged folded total"
	# Malformed folded stacks.
	printf 'a;b\n' > nocount.folded; cp nocount.folded "$tmp/"
	rm -f nocount.folded
	expect_error nocount.folded 1 "expected 'frame;frame;... COUNT', found no count" --tree=callee
	printf 'a 1\na;;b 2\n' > "$tmp/empty.folded"
	expect_error empty.folded 2 "empty frame in the stack" --tree=callee
	printf 'a 1x\n' > "$tmp/bad.folded"
	expect_error bad.folded 1 "bad count '1x'" --folded --tree=callee
	printf 'a 1' > "$tmp/trunc.folded"
	expect_error trunc.folded 1 "incomplete last line" --folded --tree=callee
	printf 'a 9223372036854775807\nb 1\n' > "$tmp/big.folded"
	expect_error big.folded 2 "counts add up to more than" --tree=callee
	printf 'a 99999999999999999999\n' > "$tmp/big2.folded"
	expect_error big2.folded 1 "count '99999999999999999999' is too large" --tree=callee
	"$ann" small.folded > /dev/null 2>&1; [ $? -eq 1 ] || die "folded input to the report: want status 1"
	"$ann" --folded small.folded 2>/dev/null; [ $? -eq 2 ] || die "--folded alone: want status 2"
	"$ann" --tree=caller small.folded 2>/dev/null; [ $? -eq 2 ] || die "--tree=caller: want status 2"
	"$ann" --diff --tree=callee a b 2>/dev/null; [ $? -eq 2 ] || die "--diff --tree: want status 2"
	;;
recursion)
	# Issue 26: blame through recursion.  recursion.cgout (its comment
	# has the program and its inclusive costs) and recursion.folded, the
	# same run as folded stacks.  Every caller above a recursion carries
	# all the cost that reached the function through it.
	cd "$cg" || exit 1
	# leaf's 500 = walk 100 + walk'2 400, all from walk (one frame: walk'2
	# is called by walk, and by itself), all from main.
	cat > "$tmp/x" <<'E'
500 (100.0%)  leaf
500 (100.0%)    walk
500 (100.0%)      main
E
	"$ann" --blame=leaf recursion.cgout | sed 1,5d | sed '$d' > "$tmp/o"
	same "--blame=leaf recursion.cgout" "$tmp/x" "$tmp/o"
	"$ann" --blame=leaf recursion.folded | sed 1,5d | sed '$d' | sed 's/^  //' > "$tmp/o"
	same "--blame=leaf recursion.folded" "$tmp/x" "$tmp/o"
	# tip's 400: main 100 directly; odd 100 + odd'2 200 = 300, which all
	# reached it from even (even'2 is called by odd and odd'2 only: that
	# value passes through them back to even), and even from main.
	cat > "$tmp/x" <<'E'
400 (100.0%)  tip
300  (75.0%)    odd
300  (75.0%)      even
300  (75.0%)        main
100  (25.0%)    main
E
	"$ann" --blame=tip recursion.cgout | sed 1,5d | sed '$d' > "$tmp/o"
	same "--blame=tip recursion.cgout" "$tmp/x" "$tmp/o"
	"$ann" --blame=tip recursion.folded | sed 1,5d | sed '$d' | sed 's/^  //' > "$tmp/o"
	same "--blame=tip recursion.folded" "$tmp/x" "$tmp/o"
	# A recursive function's cost is that of its outermost level (walk
	# 550, not walk + walk'2 = 990; odd 325; even 330), all from its
	# callers outside the recursion.
	for f in walk:550:main odd:325:even even:330:main; do
		IFS=: read -r fn v up <<< "$f"
		for input in recursion.cgout recursion.folded; do
			"$ann" --blame="$fn" "$input" | sed 1,5d | sed 's/^ *//' > "$tmp/o"
			grep -qx "$v (100.0%)  $fn" "$tmp/o" || die "--blame=$fn $input: $(head -1 "$tmp/o")"
			grep -qx "$v (100.0%)    $up" "$tmp/o" || die "--blame=$fn $input: no $up with $v"
		done
	done
	# Down, the levels show as the folded stacks name them; walk'2 keeps
	# 440 - 400 = 40 of its own.  even'2 (220 in context: odd's edge) is
	# split by its edges over its inclusive cost 220 + 110 = 330: odd'2
	# gets 220 * 320/330 = 213.3; from there a third of what reaches odd'2
	# comes back (odd'2 -> even'2 110 of 320, even'2 -> odd'2 320 of
	# 330), so tip gets 213.3 / (1 - 1/3) * 200/320 = 200: the three tip
	# frames add up to tip's 400.
	"$ann" --tree=callee --threshold=0 recursion.cgout > "$tmp/o" || die "tree: status $?"
	cat > "$tmp/x" <<'E'
--------------------------------------------------------------------------------
-- Call tree (callee), by Ir
--------------------------------------------------------------------------------
Ir____________

1,000 (100.0%)  all
1,000 (100.0%)    main
  550  (55.0%)      walk
  440  (44.0%)        walk
  400  (40.0%)          leaf
  100  (10.0%)        leaf
  330  (33.0%)      even
  325  (32.5%)        odd
  220  (22.0%)          even
  213  (21.3%)            odd
  200  (20.0%)              tip
  100  (10.0%)          tip
  100  (10.0%)      tip

E
	same "--tree=callee recursion.cgout" "$tmp/x" "$tmp/o"
	# The flame graphs are the same trees.
	"$ann" --blame=leaf --flamegraph=- recursion.cgout > "$tmp/o"
	grep -q '<title>main (500 Ir, 100.00%)</title>' "$tmp/o" || die "blame flame graph: main"
	"$ann" --flamegraph=- recursion.cgout | grep -o '<title>tip ([0-9]*' | sed 's/.*(//' |
		awk '{ s += $1 } END { exit s != 400 }' || die "flame graph: tip frames do not add up to 400"
	;;
malformed-callgrind)
	cd "$tmp" || exit 1
	h='# callgrind format\nevents: Ir\n'
	printf "${h}fl=a.c\nfn=f\ncfn=g\ncalls=1 5\nfn=g\n" > pending.cgout
	expect_error pending.cgout 7 "expected the cost line of the calls= line 6"
	printf "${h}fl=a.c\nfn=f\ncfn=g\ncalls=1 5\n" > eofcall.cgout
	expect_error eofcall.cgout 6 "unexpected end of file: the calls= line 6 has no cost line"
	printf "${h}fl=a.c\nfn=(3)\n" > undef.cgout
	expect_error undef.cgout 4 "fn=\(3\) used before any line defines it"
	printf "${h}fl=(1) a.c\nfl=(1) b.c\n" > redef.cgout
	expect_error redef.cgout 4 "compressed name redefined with another name: 'b.c'"
	printf "${h}fl=(1\n" > badcomp.cgout
	expect_error badcomp.cgout 3 "malformed compressed name '\(1'"
	printf "${h}fl=a.c\nfn=f\ncalls=1 5\n" > nocfn.cgout
	expect_error nocfn.cgout 5 "calls= line without a cfn= line before it"
	printf "${h}fl=a.c\nfn=f\ncfn=g\ncalls=x 5\n" > badcalls.cgout
	expect_error badcalls.cgout 6 "bad call count in 'calls=x 5'"
	printf "${h}fl=a.c\nfn=f\ncfn=g\ncalls=1\n" > notarget.cgout
	expect_error notarget.cgout 6 "no target position in 'calls=1'"
	printf "${h}fl=a.c\nfn=f\n3 1\n-5 1\n" > below.cgout
	expect_error below.cgout 6 "relative position '-5' goes below 0"
	printf "${h}fl=a.c\nfn=f\n0xZZ 1\n" > badpos.cgout
	expect_error badpos.cgout 5 "bad position '0xZZ'"
	printf "${h}fl=a.c\nfn=f\n99999999999 1\n" > bigline.cgout
	expect_error bigline.cgout 5 "line number 99999999999 is too large"
	printf '# callgrind format\npositions: instr line\nevents: Ir\nfl=a.c\nfn=f\n0x10\n' > onepos.cgout
	expect_error onepos.cgout 6 "2 positions expected, found 1"
	printf 'version: 2\nevents: Ir\n' > version.cgout
	expect_error version.cgout 1 "unsupported Callgrind format version '2'"
	printf "${h}fl=a.c\nfn=f\n1 3\ntotals: 5\n" > totals.cgout
	expect_error totals.cgout 6 "totals: Ir is 5 but the counts add up to 3"
	"$ann" --no-summary-check totals.cgout > /dev/null || die "--no-summary-check on totals:"
	printf "${h}summary: 2\nfl=a.c\nfn=f\n1 3\n" > summary.cgout
	expect_error summary.cgout 3 "summary: Ir is 2, less than the counts' total 3"
	printf "${h}summary: 4\nfl=a.c\nfn=f\n1 3\n" > summary-ok.cgout
	"$ann" summary-ok.cgout > /dev/null || die "summary: larger than the total is allowed"
	printf "${h}fl=a.c\nfn=f\n1 3\n" > nototals.cgout
	expect_error nototals.cgout 5 "unexpected end of file: no totals: or summary: line"
	printf "${h}fl=a.c\nfn=f\n1 3\nevents: Ir\n" > parts.cgout
	expect_error parts.cgout 6 "header line 'events: Ir' after cost lines: files with several parts are not supported"
	printf "${h}fl=a.c\nfn=f\nfoo=bar\n" > unknown.cgout
	expect_error unknown.cgout 5 "unknown line 'foo=bar'"
	printf '# callgrind format\nbogus: 1\n' > unkhdr.cgout
	expect_error unkhdr.cgout 2 "unknown header line 'bogus: 1'"
	printf "${h}1 2\n" > nofn.cgout
	expect_error nofn.cgout 3 "cost line before any fn= line"
	printf '# callgrind format\nfn=f\n' > noevents.cgout
	expect_error noevents.cgout 2 "'fn=' line before the events: line"
	printf '# callgrind format\ncreator: x\n' > eofhdr.cgout
	expect_error eofhdr.cgout 2 "unexpected end of file: no events: line"
	printf "${h}fi=a.h\n" > fifirst.cgout
	expect_error fifirst.cgout 3 "fi= line before any fn= line"
	printf "${h}fl=a.c\nfn=f\n1 2 3\n" > many.cgout
	expect_error many.cgout 5 "too many counts"
	printf "${h}fl=a.c\nfn=f\n1 2\ntotals: 2\nfn=g\n" > after.cgout
	expect_error after.cgout 7 "line after the totals: line"
	printf "${h}fl=a.c\nfn=f\n1 2\nsummary: 2\nsummary: 2\n" > twosum.cgout
	expect_error twosum.cgout 7 "second summary: line"
	printf '# callgrind format\npositions: line\npositions: line\n' > twopos.cgout
	expect_error twopos.cgout 3 "second positions: line"
	printf '# callgrind format\npositions: instr foo\n' > badpositions.cgout
	expect_error badpositions.cgout 2 "unknown position 'foo'"
	printf "${h}fl=a\x00b\n" > nul.cgout
	expect_error nul.cgout 3 "NUL byte in file name"
	# Garbage after a valid header: an error, never a crash.
	{ printf "$h"; python3 -c 'import sys,random; r=random.Random(6); sys.stdout.buffer.write(bytes(r.randrange(256) for _ in range(100000)))'; } > garbage.cgout
	err=$("$ann" garbage.cgout 2>&1 >/dev/null); rc=$?
	[ $rc -eq 1 ] && [[ $err =~ ^garbage.cgout:[0-9]+:\  ]] || die "garbage: $rc '$err'"
	;;
*)
	echo "unknown case $case"; exit 1 ;;
esac
exit $fail
