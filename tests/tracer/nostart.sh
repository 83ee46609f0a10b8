#!/bin/sh
# A start event that never comes (issue 17), or fewer times than
# --intervals asks (issue 26): the target never calls the
# start function, nothing is traced, and every count of the summary is 0
# (it printed "Branches: 2 (1 cond + 1 ind)" under "I refs: 0", Cachegrind's
# cg_fini showing a zero branch count as 1).  --breakpoints=sw: hardware
# breakpoints do not fire on every host, and the run must reach its exit.
. "$(dirname "$0")/lib.sh"
build loop

# loop 0: main never calls work().
"$CT" --breakpoints=sw --start=work -o p.out -- ./loop 0 >run.out 2>run.err
rc=$?
[ $rc -eq 0 ] && pass "exit 0" || { fail "exit $rc"; cat run.err; }
grep -q 'exited before the start event' run.err &&
	pass "says the start event never came" || fail "no word of the start event"
# The summary's counts and rates, the ==PID== prefix aside.
sed -n 's/^==[0-9]*== //p' run.err | sed -n '/^I   refs:/,/^Mispred rate:/p' >summary
grep -q '^I   refs: *0$' summary && pass "I refs 0" || fail "I refs: $(grep 'I   refs' summary)"
grep -q '^Branches: *0  (0 cond + 0 ind)$' summary && pass "Branches 0" ||
	fail "$(grep Branches summary)"
nonzero=$(sed 's/^[^:]*://' summary | grep -o '[0-9][0-9.,]*' | grep -v -x -e 0 -e '0\.0*' | sort -u | tr '\n' ' ')
[ -z "$nonzero" ] && pass "every count and rate is 0 ($(wc -l <summary) lines)" ||
	fail "non-zero numbers in the summary: $nonzero"
grep -q '^summary: 0\( 0\)*$' p.out && pass "the profile's summary is 0" ||
	fail "profile: $(grep '^summary' p.out)"

# --toggle-signal and no signal ever sent: the warning names the signal and
# who must receive it (it said "--start=(null)"; a user who signalled the
# target instead of cachetrace saw only that).
"$CT" --toggle-signal=SIGUSR2 -o t.out -- ./loop 0 >run.out 2>run.err
rc=$?
[ $rc -eq 0 ] && pass "toggle: exit 0" || { fail "toggle: exit $rc"; cat run.err; }
grep -q 'exited before a window began (--toggle-signal=SIGUSR2: signal cachetrace, not the target)' run.err &&
	pass "toggle: the warning names the signal" ||
	fail "toggle: $(grep warning run.err)"
grep -q 'null' run.err && fail "toggle: (null) in: $(grep null run.err)" ||
	pass "toggle: no (null)"

# --intervals=3 and work() called once: the profile says it is partial,
# as the summary does (issue 26, item 2: only stderr said so).
"$CT" --breakpoints=sw --start=work --intervals=3 -o i.out -- ./loop 1 \
	>run.out 2>run.err
rc=$?
[ $rc -eq 0 ] && pass "intervals: exit 0" || { fail "intervals: exit $rc"; cat run.err; }
grep -q 'partial profile: the target exited before all the windows were traced' run.err &&
	pass "intervals: the summary says partial" || fail "intervals: $(tail -3 run.err)"
grep -qx 'desc: Partial profile: *the target exited before all the windows were traced' i.out &&
	pass "intervals: so does the profile" ||
	fail "intervals: the profile's desc: $(grep '^desc: [PW]' i.out)"
grep -qx 'desc: Windows: *1' i.out && pass "intervals: Windows: 1" ||
	fail "intervals: $(grep '^desc: Windows' i.out)"
finish
