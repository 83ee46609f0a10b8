#!/bin/sh
# --trace-children=yes (launch): a program that forks, parent and child
# each calling work() once, gives two profiles named by -o's %p, each with
# work's Ir under Cachegrind (which follows forks too); a program that
# execs the server: handler, absent from the first image, is found in the
# new one. -o without %p is an error then.
. "$(dirname "$0")/lib.sh"
need --trace-children
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
one=$(fn_cost vg.out handler)
./$S -t 0 2 >native.out
"$CT" -q --trace-children=yes --start=handler -o 'cg.%p' -- \
	./$F exec ./$S -t 0 2 >tgt.out 2>ct.err &
CTPID=$!
wait_ct 60 || fail "exec: hung"
[ "$CTRC" = 0 ] && pass "exec: exit 0" || { fail "exec: exit $CTRC"; cat ct.err; }
pid=$(awk '$1 == "exec" { print $2 }' tgt.out)
sed 1d tgt.out | cmp -s native.out - && pass "exec: output intact" ||
	fail "exec: output differs: $(cat tgt.out)"
if [ -n "$pid" ] && [ -s cg.$pid ]; then
	got=$(fn_cost cg.$pid handler)
	[ "$got" -eq "$one" ] && pass "exec: handler Ir $got in the new image" ||
		fail "exec: handler Ir $got, expected $one"
else
	fail "exec: no profile cg.$pid: $(ls cg.* 2>/dev/null)"
fi

"$CT" -q --trace-children=yes --start=work -o single.cg -- ./$F \
	>tgt.out 2>ct.err </dev/null
rc=$?
{ [ $rc -eq 1 ] || [ $rc -eq 2 ]; } && [ "$(wc -l <ct.err)" -le 2 ] &&
	grep -q '%p' ct.err && pass "-o without %p: $(head -1 ct.err)" ||
	fail "-o without %p: exit $rc, message: $(cat ct.err)"
[ -s tgt.out ] && fail "-o without %p: the program ran anyway"
finish
