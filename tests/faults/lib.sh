# Shared helpers of the fault-injection tests (sourced, POSIX sh).
# Every script is called as: SCRIPT CACHETRACE SRCDIR SCRATCH
# Each case asserts the target's fate and cachetrace's exit status.
set -u
ME=$(basename "$0" .sh)
CT=$(realpath "$1"); SRCDIR=$(realpath "$2"); SCRATCH=$3
W=$SCRATCH/faults-$ME
rm -rf "$W"; mkdir -p "$W"; W=$(realpath "$W"); cd "$W" || exit 1
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
pass() { echo "ok: $*"; }
finish() { [ "$fails" -eq 0 ] && echo "$ME: all passed" && exit 0; exit 1; }
# expect WHAT GOT WANT
expect() { if [ "$2" = "$3" ]; then pass "$1: $2"; else fail "$1: got '$2', want '$3'"; fi; }
# The target (tests/faults/target.c) under a name of this run's own, so
# that pgrep finds only ours; the reaper (reaper.c) sees orphans' fates.
T=ftarget$$
cc -O2 -g -fno-pie -no-pie -pthread -o "$T" "$SRCDIR/tests/faults/target.c" ||
	{ echo "cannot build the target"; exit 1; }
cc -O2 -o reaper "$SRCDIR/tests/faults/reaper.c" ||
	{ echo "cannot build the reaper"; exit 1; }
G="-q --I1=32768,8,64 --D1=32768,8,64 --LL=1048576,16,64"
# start_target MODE ARGS...: a background target; sets TP, waits "ready".
start_target() {
	rm -f target.out
	./"$T" "$@" > target.out 2>&1 &
	TP=$!
	for i in $(seq 50); do
		grep -q ready target.out 2>/dev/null && return 0
		sleep 0.1
	done
	fail "the target did not start"
	return 1
}
# alive PID: still running (not a zombie).
alive() {
	st=$(awk '/^State:/{print $2}' "/proc/$1/status" 2>/dev/null)
	[ -n "$st" ] && [ "$st" != Z ] && [ "$st" != X ]
}
# stop_target: end the background target; says how it had fared.
stop_target() {
	if alive "$TP"; then
		kill -9 "$TP" 2>/dev/null; wait "$TP" 2>/dev/null
		return 0
	fi
	wait "$TP" 2>/dev/null; echo "target ended: status $?"
	return 1
}
# wait_traced PID: until a tracer has PID (10 s at most).
wait_traced() {
	for i in $(seq 1 100); do
		t=$(awk '/^TracerPid:/{print $2}' "/proc/$1/status" 2>/dev/null)
		[ -n "$t" ] && [ "$t" != 0 ] && return 0
		sleep 0.05
	done
	return 1
}
# traced_state PID: "t" when a thread of PID is in a ptrace stop.
traced_state() {
	for s in /proc/$1/task/*/status; do
		awk '/^State:/{print $2}' "$s" 2>/dev/null
	done | grep -q t && echo stopped || echo running
}
