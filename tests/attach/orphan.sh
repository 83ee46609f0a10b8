#!/bin/sh
# A target whose process group becomes orphaned while cachetrace is
# attached.  cachetrace holds an attached target in a job-control stop of
# its own (the guardian's hold, src/tracer/guard.c); the kernel sends
# SIGHUP and SIGCONT to a group that becomes orphaned with a stopped
# member, and SIGHUP's default action ends the process.  Without us the
# group has no stopped member and gets no SIGHUP: the target (verify.c,
# in a group of its own in a session of its own, its parent the session's
# leader) lives on when that parent exits, and must do so attached.
# Before, it died of SIGHUP (status 129) at once.
. "$(dirname "$0")/lib.sh"
V=vo$$
build verify $V
# The session's leader: forks the target into a group of its own, writes
# its pid, exits on SIGUSR1 (the target's new parent is then outside the
# session: its group is orphaned).
cat > leader.py <<'EOF'
import os, signal, sys
signal.pthread_sigmask(signal.SIG_BLOCK, [signal.SIGUSR1])
pid = os.fork()
if pid == 0:
    os.setpgid(0, 0)
    out = os.open(sys.argv[2], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    os.dup2(out, 1)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, [signal.SIGUSR1])
    os.execv(sys.argv[1], [sys.argv[1], "60", "-1", "1"])
with open(sys.argv[3] + ".tmp", "w") as f:
    f.write("%d\n" % pid)
os.rename(sys.argv[3] + ".tmp", sys.argv[3])
signal.sigwait([signal.SIGUSR1])
EOF
setsid python3 leader.py ./$V t.out t.pid &
for i in $(seq 1 100); do [ -s t.pid ] && break; sleep 0.1; done
tgt=$(cat t.pid 2>/dev/null)
[ -n "$tgt" ] || { fail "the session's leader never started the target"; finish; }
lp=$(proc_field "$tgt" PPid)
"$CT" -p "$tgt" --start=work --intervals=0 -o p.cg 2>ct.err &
CTPID=$!
wait_traced "$tgt" || fail "cachetrace never attached"
sleep 0.3	# windows run
kill -USR1 "$lp"
for i in $(seq 1 50); do
	[ "$(proc_field "$tgt" PPid)" != "$lp" ] && break
	sleep 0.1
done
# Orphaned: its new parent is in another session.
np=$(proc_field "$tgt" PPid)
sid=$(ps -o sid= -p "$tgt" | tr -d ' ')
psid=$(ps -o sid= -p "$np" | tr -d ' ')
[ -n "$np" ] && [ "$np" != "$lp" ] && [ -n "$sid" ] && [ "$sid" != "$psid" ] &&
	pass "the target's group is orphaned (its parent now $np, session $psid, not $sid)" ||
	fail "the target's group was not orphaned: parent '$np', sessions '$sid' '$psid'"
sleep 0.3
st=$(proc_field "$tgt" State)
case "$st" in
R|S|D|t) pass "attached, the target lives on (state $st)" ;;
*) fail "the target died when its group was orphaned: state '$st'" ;;
esac
# (Where the host gives no shared memory for a guardian, --check, there
# is no hold: nothing stopped, no SIGHUP, nothing to say.)
if "$CT" --check 2>/dev/null | grep -q '^kill -9 safety: *no guardian'; then
	grep -q "group became orphaned" ct.err &&
		fail "no guardian, no hold: yet a note" ||
		pass "no guardian on this host, no hold: no SIGHUP to drop"
else
	grep -q "note: process $tgt's group became orphaned while cachetrace held it stopped" ct.err &&
		pass "cachetrace says so" ||
		fail "no note: $(grep -v 'debug registers' ct.err | head -2)"
fi
kill -INT "$CTPID"
wait_ct 30
[ "$CTRC" = 130 ] && pass "cachetrace interrupted: status 130" ||
	fail "cachetrace's status $CTRC: $(tail -2 ct.err)"
grep -q '^desc: Windows: *[1-9]' p.cg && pass "windows were traced" ||
	fail "no window in the profile"
check_free "$tgt" "after the detach"
kill -USR1 "$tgt" 2>/dev/null
for i in $(seq 1 50); do kill -0 "$tgt" 2>/dev/null || break; sleep 0.1; done
grep -q '^ok [1-9]' t.out && pass "the target ended ok: $(cat t.out)" ||
	fail "the target's output: '$(cat t.out)'"
finish
