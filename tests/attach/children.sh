#!/bin/sh
# --trace-children=yes (launch): a program that forks, parent and child
# each calling work() once, gives two profiles named by -o's %p, each with
# work's Ir under Cachegrind (which follows forks too); a program that
# execs the server: handler, absent from the first image, is found in the
# new one, also in a vfork child; an image that never reached --start
# leaves no profile, only a note. -o without %p is an error then.
. "$(dirname "$0")/lib.sh"
F=fk$$; S=fs$$
build forker $F
build server $S
valgrind --tool=cachegrind --cache-sim=no --branch-sim=no \
	--cachegrind-out-file=vg.%p ./$F >vg.stdout 2>vg.err || exit 1
vgp=$(awk '$1 == "parent" { print $2 }' vg.stdout)
vgc=$(awk '$1 == "child" { print $2 }' vg.stdout)
wp=$(fn_cost vg.$vgp work); wc=$(fn_cost vg.$vgc work)
echo "Cachegrind: parent work $wp Ir, child work $wc Ir"

"$CT" -q --trace-children=yes --start=work -o 'cg.%p' -- ./$F \
	>tgt.out 2>ct.err &
CTPID=$!
wait_ct 60 || fail "fork: hung"
[ "$CTRC" = 0 ] && pass "fork: exit 0" || { fail "fork: exit $CTRC"; cat ct.err; }
pp=$(awk '$1 == "parent" { print $2 }' tgt.out)
cp=$(awk '$1 == "child" { print $2 }' tgt.out)
[ "$(sed 's/ [0-9]* work / work /' tgt.out | sort)" = \
  "$(sed 's/ [0-9]* work / work /' vg.stdout | sort)" ] &&
	pass "fork: output intact" || fail "fork: output differs: $(cat tgt.out)"
for who in parent child; do
	[ $who = parent ] && { pid=$pp; want=$wp; } || { pid=$cp; want=$wc; }
	if [ -n "$pid" ] && [ -s cg.$pid ]; then
		got=$(fn_cost cg.$pid work)
		[ "$got" -eq "$want" ] && pass "fork: $who profile cg.$pid: work Ir $got" ||
			fail "fork: $who profile cg.$pid: work Ir $got, expected $want"
		check_annotate cg.$pid "fork: $who"
	else
		fail "fork: no profile cg.$pid for the $who: $(ls cg.* 2>/dev/null)"
	fi
done
rm -f cg.*

vg_run ./$S -t 0 1
vg_ref one handler
./$S -t 0 2 >native.out
"$CT" -q --trace-children=yes --start=handler -o 'cg.%p' -- \
	./$F exec ./$S -t 0 2 >tgt.out 2>ct.err &
CTPID=$!
wait_ct 60 || fail "exec: hung"
[ "$CTRC" = 0 ] && pass "exec: exit 0" || { fail "exec: exit $CTRC"; cat ct.err; }
pid=$(awk '$1 == "exec" { print $2 }' tgt.out)
sed 1d tgt.out | cmp -s native.out - && pass "exec: output intact" ||
	fail "exec: output differs: $(cat tgt.out)"
# The new image's profile: named from cg.PID (the name after an exec is
# cachetrace's choice), its cmd: the exec'd command.
new=$(grep -l "^cmd: ./$S -t 0 2\$" cg.$pid* 2>/dev/null)
if [ -n "$pid" ] && [ -n "$new" ] && [ "$(echo "$new" | wc -l)" = 1 ]; then
	got=$(fn_cost $new handler)
	[ "$got" -eq "$one" ] &&
		pass "exec: handler Ir $got in the new image's $new" ||
		fail "exec: handler Ir $got in $new, expected $one"
	check_annotate $new "exec"
else
	fail "exec: not one profile of the new image: '$new' in $(ls cg.* 2>/dev/null)"
fi

# The same whole (no --start): the first image ran from the instrument
# engine's code cache when it called exec; the new image's run starts
# with none (cachetrace crashed in its first read of the ring: the old
# image's accounting was kept for the new one's blocks).
rm -f cg.*
"$CT" -q --trace-children=yes -o 'cg.%p' -- ./$F exec ./$S -t 0 2 \
	>tgt.out 2>ct.err &
CTPID=$!
wait_ct 60 || fail "exec, whole runs: hung"
[ "$CTRC" = 0 ] && pass "exec, whole runs: exit 0" ||
	fail "exec, whole runs: exit $CTRC: $(head -3 ct.err)"
pid=$(awk '$1 == "exec" { print $2 }' tgt.out)
sed 1d tgt.out | cmp -s native.out - && pass "exec, whole runs: output intact" ||
	fail "exec, whole runs: output differs: $(cat tgt.out)"
new=$(grep -l "^cmd: ./$S -t 0 2\$" cg.$pid* 2>/dev/null)
if [ -n "$pid" ] && [ -s cg.$pid ] && [ -n "$new" ]; then
	got=$(fn_cost $new handler)
	[ "$got" -eq $((2 * one)) ] &&
		pass "exec, whole runs: handler Ir $got (two requests) in $new" ||
		fail "exec, whole runs: handler Ir $got in $new, expected $((2 * one))"
else
	fail "exec, whole runs: profiles $(ls cg.* 2>/dev/null)"
fi

# vfork, then exec in the child: the child's new image has handler.
rm -f cg.*
"$CT" --trace-children=yes --start=handler -o 'cg.%p' -- \
	./$F vfork ./$S -t 0 2 >tgt.out 2>ct.err &
CTPID=$!
wait_ct 60 || fail "vfork: hung"
[ "$CTRC" = 0 ] && pass "vfork: exit 0" || { fail "vfork: exit $CTRC"; cat ct.err; }
pid=$(awk '$1 == "vforked" { print $2 }' tgt.out)
sed '$d' tgt.out | cmp -s native.out - && pass "vfork: output intact" ||
	fail "vfork: output differs: $(cat tgt.out)"
new=$(grep -l "^cmd: ./$S -t 0 2\$" cg.$pid* 2>/dev/null)
if [ -n "$pid" ] && [ -n "$new" ] && [ "$(echo "$new" | wc -l)" = 1 ]; then
	got=$(fn_cost $new handler)
	[ "$got" -eq "$one" ] && pass "vfork: handler Ir $got in $new" ||
		fail "vfork: handler Ir $got in $new, expected $one"
else
	fail "vfork: not one profile of the child's image: '$new' in $(ls cg.* 2>/dev/null)"
fi
# The parent and the child's first image never reached --start: no
# empty profiles of them (issue 26), and a note for each.
[ "$(ls cg.* | wc -l)" = 1 ] && pass "vfork: no profile of the images that never started" ||
	fail "vfork: profiles $(ls cg.*), expected only $new"
n=$(grep -c "^cachetrace: note: process [0-9]* (.*): the target .* before the start event: no profile written" ct.err)
[ "$n" = 2 ] && pass "vfork: a note for each image without a window" ||
	fail "vfork: $n notes: $(cat ct.err)"

"$CT" -q --trace-children=yes --start=work -o single.cg -- ./$F \
	>tgt.out 2>ct.err </dev/null
rc=$?
{ [ $rc -eq 1 ] || [ $rc -eq 2 ]; } && [ "$(wc -l <ct.err)" -le 2 ] &&
	grep -q '%p' ct.err && pass "-o without %p: $(head -1 ct.err)" ||
	fail "-o without %p: exit $rc, message: $(cat ct.err)"
[ -s tgt.out ] && fail "-o without %p: the program ran anyway"
finish
