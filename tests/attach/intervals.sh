#!/bin/sh
# --intervals in launch mode: N windows of handler() in one profile, Ir N x
# one call under Cachegrind; --intervals=0 traces every call to the end.
. "$(dirname "$0")/lib.sh"
S=iv$$
build server $S
./$S -t 0 5 >native.out
vg_run ./$S -t 0 1
vg_ref one handler
for n in 1 3 0; do
	rm -f p.cg
	"$CT" -q --start=handler --intervals=$n -o p.cg -- ./$S -t 0 5 \
		>tgt.out 2>ct.err || { fail "$n: exit $?"; cat ct.err; }
	cmp -s native.out tgt.out || fail "$n: output differs"
	[ $n = 0 ] && k=5 || k=$n
	w=$(windows p.cg)
	[ "$w" = $k ] && pass "--intervals=$n: Windows: $k" ||
		fail "--intervals=$n: Windows: '$w', expected $k"
	h=$(fn_cost p.cg handler)
	[ "$h" -eq $((k * one)) ] && pass "--intervals=$n: handler Ir $h" ||
		fail "--intervals=$n: handler Ir $h, expected $k x $one"
done
finish
