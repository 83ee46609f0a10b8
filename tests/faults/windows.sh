#!/bin/sh
# Issue 10, 10: a thread's own exit (pthread_exit) ends its window only,
# later windows go on; the target's raise(SIGTRAP) inside a window reaches
# its handler; a longjmp out of the start function ends the window.
. "$(dirname "$0")/lib.sh"
windows() { awk '/^desc: Windows:/{print $3}' "$1"; }
"$CT" $G --start=work_exit --intervals=3 -o t.cg -- ./"$T" threadexit 3 \
	> t.out 2> t.err
expect "pthread_exit: status" $? 0
expect "pthread_exit: windows" "$(windows t.cg)" 3
grep -q "Partial" t.cg && fail "pthread_exit: the profile is partial"
"$CT" $G --start=work -o r.cg -- ./"$T" raise > r.out 2> r.err
expect "raise(SIGTRAP) in the window: status" $? 0
expect "raise(SIGTRAP): the handler ran" "$(cat r.out)" "traps 1"
"$CT" $G --start=work --intervals=3 -o j.cg -- ./"$T" longjmp > j.out 2> j.err
expect "longjmp out of work: status" $? 0
expect "longjmp: the program" "$(cat j.out)" "jumps 3"
expect "longjmp: windows" "$(windows j.cg)" 3
grep -q "Partial" j.cg && fail "longjmp: the profile is partial"
# The three windows hold three calls of work (each one handle_request).
expect "longjmp: calls of handle_request in the windows" \
	"$(awk '/^fn=handle_request/{f=1;next} /^fn=/{f=0} f && /^[0-9]/ \
		{n++} END {print (n > 0) ? "some" : "none"}' j.cg)" some
finish
