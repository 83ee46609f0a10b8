#!/bin/sh
# The target's main thread leaves (pthread_exit) while cachetrace holds it
# in a window of its worker (leader.c).  Its leader is then a zombie the
# kernel reports only after the others are reaped and that cannot be
# seized: cachetrace must not wait on it forever (it hung so in a step
# over our int3), and its guardian, when the tracer is killed, must take
# back the one live thread (it listed the zombie again and again, 4096
# "threads taken back").  Each time the worker finishes and prints "ok".
. "$(dirname "$0")/lib.sh"
L=ld$$
build leader $L
for how in int kill9; do
	./$L 2.5 0.6 > l.out 2> l.err &
	lp=$!
	"$CT" -q -p $lp --start=work --intervals=0 -o p.cg 2> c.err &
	cp=$!
	CTPID=$cp
	wait_traced $lp || fail "$how: never attached"
	sleep 1.2	# the leader has left; windows of the worker run
	case $how in
	int)
		kill -INT $cp ;;
	kill9)
		# the tracer process itself (the front's child)
		tp=$(pgrep -P $cp | head -n 1)
		[ -n "$tp" ] && kill -9 "$tp" || fail "$how: no tracer process" ;;
	esac
	wait $lp
	rc=$?
	# cachetrace ends once the target has: never a wait on the zombie
	for i in $(seq 1 100); do
		kill -0 $cp 2>/dev/null || break
		sleep 0.1
	done
	if kill -0 $cp 2>/dev/null; then
		fail "$how: cachetrace still runs 10 s after the target ended"
		pkill -9 -P $cp; kill -9 $cp
	fi
	wait $cp
	[ $rc -eq 0 ] && grep -qx ok l.out &&
		pass "$how: the worker finished, status 0" ||
		fail "$how: status $rc: $(cat l.err) $(head -n 3 c.err)"
	# The guardian's count, where the host gives it one (--check; the
	# suite's second pass has none: the kernel's detach is all there is).
	if [ $how = kill9 ] && ! "$CT" --check 2>/dev/null |
		grep -q '^kill -9 safety: *no guardian'; then
		grep -q 'guard: .* 1 thread taken back' c.err &&
			pass "$how: the guardian took back the one live thread" ||
			fail "$how: $(grep guard: c.err)"
	fi
done
finish
