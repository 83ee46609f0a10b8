#!/bin/sh
# SIGINT/SIGTERM/SIGHUP to an attached cachetrace: while stepping (spin()
# runs for hundreds of millions of steps), while waiting for the start (spin()
# never called), and while the stepped thread sleeps in read() of an idle
# pipe (window opened in report(), which returns to fgets()). Each time:
# exit 128+signal; the server is left running, not stopped, untraced, its
# text equal to the file's, DR7 clear; it goes on answering and its whole
# output equals an untraced run's; the profile is marked partial and
# cg_annotate reads it without a warning.
. "$(dirname "$0")/lib.sh"
S=sg$$
build server $S
build_peekdr

# The request script of every case, run untraced for the reference.
printf 'h 1\nh 2\ns 7\nh 3\nh 4\n' >reqs.stepping
printf 'h 1\nh 2\nh 3\nh 4\n' >reqs.other
./$S <reqs.stepping >ref.stepping || fail "untraced run"
./$S <reqs.other >ref.other || fail "untraced run"

one() {	# one SIG CASE(stepping|waiting|blocked) EXPECTED_RC
	sig=$1; case=$2; want=$3; what="$sig $case"
	rm -f p.cg tgt.out req; mkfifo req
	./$S <req >tgt.out &
	spid=$!
	exec 3>req
	echo 'h 1' >&3; echo 'h 2' >&3
	case $case in
	blocked) region="--start=report --stop=spin" ;;
	*) region="--start=spin" ;;
	esac
	"$CT" -q -p $spid $region -o p.cg 2>ct.err &
	CTPID=$!
	wait_traced $spid || fail "$what: cachetrace never attached"
	wait_armed $spid || fail "$what: the target was never let go"
	case $case in
	stepping) echo 's 7' >&3 ;;
	blocked) echo 'h 3' >&3 ;;
	esac
	sleep 1
	kill -s $sig $CTPID
	wait_ct 30
	[ "$CTRC" = "$want" ] && pass "$what: exit $CTRC" ||
		{ fail "$what: exit $CTRC, expected $want"; cat ct.err; }
	if kill -0 $spid 2>/dev/null; then
		check_free $spid "$what"
		check_text $spid ./$S "$what"
		check_dr7 $spid "$what"
	else
		fail "$what: the server is gone"
	fi
	# It goes on answering.
	case $case in
	stepping) echo 'h 3' >&3 ;;
	waiting) echo 'h 3' >&3 ;;
	esac
	echo 'h 4' >&3
	exec 3>&-
	wait_gone $spid 20 || fail "$what: the server did not finish"
	wait $spid
	case $case in
	stepping) ref=ref.stepping ;;
	*) ref=ref.other ;;
	esac
	cmp -s $ref tgt.out && pass "$what: server output intact" ||
		fail "$what: server output differs: $(diff $ref tgt.out | head -4)"
	if [ -s p.cg ]; then
		grep -q "^desc: Partial profile: *interrupted" p.cg &&
			pass "$what: profile marked partial" ||
			fail "$what: profile not marked 'Partial profile: interrupted'"
		check_annotate p.cg "$what"
		case $case in
		stepping)
			[ "$(fn_cost p.cg spin)" -gt 0 ] &&
				pass "$what: spin was being stepped" ||
				fail "$what: no spin cost in the profile" ;;
		blocked)
			[ "$(fn_cost p.cg report)" -gt 0 ] &&
				pass "$what: report was stepped" ||
				fail "$what: no report cost in the profile" ;;
		waiting)
			[ "$(summary p.cg)" -eq 0 ] &&
				pass "$what: nothing counted" ||
				fail "$what: Ir $(summary p.cg) counted before the start" ;;
		esac
	else
		fail "$what: no profile written"
	fi
}
one INT stepping 130
one TERM waiting 143
one INT blocked 130
one HUP blocked 129
one TERM stepping 143
finish
