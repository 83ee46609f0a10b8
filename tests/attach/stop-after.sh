#!/bin/sh
# --stop-after=N / --max-instructions=N: the window is exactly N
# instructions (handler() has no rep string instruction: one step is one
# instruction), in launch mode and attached.
. "$(dirname "$0")/lib.sh"
S=sa$$
build server $S
objdump -d ./$S | awk '/<handler>:/,/^$/' | grep -q 'rep' &&
	{ echo "handler has a rep instruction"; exit 1; }
vg_run ./$S -t 0 1
vg_ref one handler
check() {	# check WHAT N
	[ -s p.cg ] || { fail "$1: no profile"; return; }
	t=$(summary p.cg)
	[ "$t" -eq "$2" ] && pass "$1: summary Ir $t" ||
		fail "$1: summary Ir $t, expected $2"
	h=$(fn_cost p.cg handler)
	[ "$h" -eq "$2" ] && pass "$1: all in handler" ||
		fail "$1: handler Ir $h, expected $2"
}
for n in 1 500 1234; do
	rm -f p.cg
	"$CT" -q --start=handler --stop-after=$n -o p.cg -- ./$S -t 0 2 \
		>/dev/null 2>ct.err || { fail "launch $n: exit $?"; cat ct.err; }
	check "--stop-after=$n" $n
done
rm -f p.cg
"$CT" -q --start=handler --max-instructions=777 -o p.cg -- ./$S -t 0 2 \
	>/dev/null 2>ct.err || { fail "--max-instructions: exit $?"; cat ct.err; }
check "--max-instructions=777" 777
# Longer than the handler: the window ends at its return first.
rm -f p.cg
"$CT" -q --start=handler --stop-after=$((one + 100)) -o p.cg -- ./$S -t 0 2 \
	>/dev/null 2>ct.err || { fail "long: exit $?"; cat ct.err; }
check "--stop-after beyond the return" $one
./$S -t 10 300 >/dev/null &
spid=$!
sleep 0.2
rm -f p.cg
"$CT" -q -p $spid --start=handler --stop-after=600 --intervals=2 \
	-o p.cg 2>ct.err &
CTPID=$!
wait_ct 60 || fail "attach: hung"
[ "$CTRC" = 0 ] || { fail "attach: exit $CTRC"; cat ct.err; }
check "attach --stop-after=600 --intervals=2" 1200
wait $spid || fail "attach: server exit $?"
finish
