#!/bin/sh
# Issue 10, 3: children forked while int3s are in the text (windows with
# --breakpoints=sw, no --trace-children) must not inherit them: each child
# calls the start function and must exit normally; the windows go on.
. "$(dirname "$0")/lib.sh"
"$CT" $G --start=handle_request --breakpoints=sw --intervals=0 -o f.cg \
	-- ./"$T" fork 3 > f.out 2> f.err
expect "cachetrace's status" $? 0
expect "the children's fates" "$(grep -c 'child exit 7' f.out)" 3
expect "windows (the parent's 3 calls)" \
	"$(awk '/^desc: Windows:/{print $3}' f.cg)" 3
# posix_spawn is a vfork: the int3 is out of the shared text while the
# child runs, back in after (the parent's later calls still hit it).
"$CT" $G --start=handle_request --breakpoints=sw --intervals=0 -o v.cg \
	-- ./"$T" spawn 3 > v.out 2> v.err
expect "spawn: cachetrace's status" $? 0
expect "spawn: the children's fates" "$(grep -c 'child exit 0' v.out)" 3
expect "spawn: windows (the parent's 3 calls)" \
	"$(awk '/^desc: Windows:/{print $3}' v.cg)" 3
finish
