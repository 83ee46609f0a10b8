#!/bin/sh
# Issue 10, 7: a launched target that ends inside the window gives its
# status to cachetrace (exit 3 -> 3, abort -> 134, SIGSEGV -> 139, kill -9
# -> 137), and the summary says how it ended.
. "$(dirname "$0")/lib.sh"
check() {	# check WHAT WANT_STATUS WANT_SUMMARY ARGS...
	what=$1 want=$2 summ=$3; shift 3
	"$CT" --I1=32768,8,64 --D1=32768,8,64 --LL=1048576,16,64 \
		--start=work -o e.cg -- ./"$T" "$@" > /dev/null 2> e.err
	expect "$what: cachetrace's status" $? "$want"
	grep -q "$summ" e.err || fail "$what: the summary does not say '$summ'"
	grep -q "^summary:" e.cg || fail "$what: no profile"
}
check "exit(3) in the window" 3 "The target exited with status 3" exit 3
check "abort() in the window" 134 "killed by signal 6" abort
check "SIGSEGV in the window" 139 "killed by signal 11" segv
check "exit(0) after the window" 0 "exited with status 0" exit 0
# kill -9 of the target while it is stepped (work() every 10 ms).
"$CT" $G --start=work --intervals=0 -o k.cg -- ./"$T" loop > k.out 2> k.err &
C=$!
sleep 1
pkill -9 -x "$T"
wait $C
expect "target killed by SIGKILL: cachetrace's status" $? 137
finish
