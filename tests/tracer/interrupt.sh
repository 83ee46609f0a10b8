#!/bin/sh
# SIGINT/SIGTERM/SIGHUP to cachetrace: it stops tracing, removes its
# breakpoint, detaches, writes the profile so far marked partial, exits
# 128+signal; the target carries on to its normal end with its normal output.
. "$(dirname "$0")/lib.sh"
# The four cases run at once, each in a directory of its own with a
# target under a name of its own (for the process checks): each waits
# seconds for its target's end, and not one after another.
build loop
./loop 200 0 > native-stepping.out || fail "native run"
./loop 40 0 > native-waiting.out || fail "native run"

one() {	# one N SIG WHEN(stepping|waiting) EXPECTED_RC
	n=$1; sig=$2; when=$3; want=$4
	P=int$$-$n
	mkdir c$n && cd c$n || { fail "no directory c$n"; return; }
	cp ../loop $P && cp ../native-$when.out . || { fail "no copies"; return; }
	if [ "$when" = stepping ]; then
		# The whole run is the window: 200 calls 20 ms apart take
		# 4 s at least under any engine, so a signal after 1 s lands
		# inside it.
		"$CT" -q -o p.cg -- ./$P 200 20 >tgt.out 2>err.txt &
	else
		# The start function never runs before 2 s of sleeps.
		"$CT" -q -o p.cg --start=work --stop=main -- ./$P 40 100 \
			>tgt.out 2>err.txt &
	fi
	ct=$!
	sleep 1
	kill -s "$sig" $ct
	wait $ct
	rc=$?
	[ $rc -eq "$want" ] && pass "$sig $when: exit $rc" ||
		{ fail "$sig $when: exit $rc, expected $want"; cat err.txt; }
	# The target runs on without us: wait for it to finish.
	for i in $(seq 1 100); do
		pgrep -x $P >/dev/null || break
		sleep 0.1
	done
	if pgrep -x $P >/dev/null; then
		fail "$sig $when: target still running or stopped after 10 s"
		pkill -9 -x $P
	fi
	cmp -s native-$when.out tgt.out && pass "$sig $when: target output intact" ||
		fail "$sig $when: target output differs: $(cat tgt.out)"
	grep -q '^desc: Partial profile: *interrupted' p.cg &&
		pass "$sig $when: profile marked partial" ||
		fail "$sig $when: profile not marked partial"
	if command -v cg_annotate >/dev/null; then
		cg_annotate p.cg >ann.txt 2>ann.err && ! grep -qi warn ann.err &&
			pass "$sig $when: cg_annotate reads it" ||
			{ fail "$sig $when: cg_annotate failed"; cat ann.err; }
	fi
}
n=0
for c in "INT stepping 130" "TERM stepping 143" "HUP waiting 129" \
	"INT waiting 130"; do
	n=$((n + 1))
	# shellcheck disable=SC2086
	( one $n $c ) > case$n.txt 2>&1 &
done
wait
for n in 1 2 3 4; do
	cat case$n.txt
	fails=$((fails + $(grep -c '^FAIL' case$n.txt)))
done
finish
