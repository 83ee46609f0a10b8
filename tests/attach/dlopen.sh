#!/bin/bash
# --start=libfoo.so:foo_work in a library the program dlopen()s later
# (issue 11): cachetrace breaks on the dynamic loader's hook and resolves
# again at each load.  Launched and attached (-p), with debug registers and
# with int3s: foo_work's Ir/Dr/Dw/Bc/Bi (and its callees') equal
# Cachegrind's on the same run, the library's functions are named; a
# library never loaded leaves the target unharmed and the profile says the
# start was never reached; a library dlclose'd before the end keeps its
# names; a forked child unharmed; other threads loading and unloading libraries meanwhile.
. "$(dirname "$0")/lib.sh"
. "$SRCDIR/tests/host.sh"
BP_MODES=$(host_bp_modes "$CT")
command -v valgrind >/dev/null || { echo "valgrind is needed"; exit 1; }
CACHE_OPTS="--I1=32768,8,64 --D1=32768,8,64 --LL=1048576,16,64"
AGG=$SRCDIR/tests/oracle/cg-aggregate.awk
FUNCS="foo_work foo_helper add_one twice"

${CC:-cc} -shared -fPIC -O2 -g -o libfoo.so "$SRCDIR/tests/attach/dlopen-lib.c" ||
	{ echo "cannot build libfoo.so"; exit 1; }
DRV=dldrv$$
${CC:-cc} -O2 -g -o "$DRV" "$SRCDIR/tests/attach/dlopen-main.c" -ldl ||
	{ echo "cannot build the driver"; exit 1; }
THR=dlthr$$
${CC:-cc} -O2 -g -pthread -o "$THR" "$SRCDIR/tests/attach/dlopen-threads.c" -ldl ||
	{ echo "cannot build the threaded driver"; exit 1; }
NAMES="$DRV $THR"

valgrind -q --tool=cachegrind --cache-sim=yes --branch-sim=yes $CACHE_OPTS \
	--cachegrind-out-file=cg.out ./"$DRV" ./libfoo.so >vg.stdout 2>vg.stderr ||
	{ echo "valgrind failed: $(cat vg.stderr)"; exit 1; }
EXPECT=$(cat vg.stdout)
# Ir Dr Dw Bc Bi of each function (misses differ: the window starts cold).
counts() {
	awk -v own="$FUNCS" -f "$AGG" "$1" | awk '{ print $1, $2, $5, $8, $11, $13 }' | sort
}
counts cg.out >cg.counts
[ "$(wc -l <cg.counts)" -eq 4 ] || fail "Cachegrind has no cost for some of $FUNCS"

# check WHAT PROFILE: counts equal Cachegrind's, names and file named.
check() {
	counts "$2" >"$2.counts"
	if cmp -s cg.counts "$2.counts"; then
		pass "$1: Ir Dr Dw Bc Bi of $FUNCS equal Cachegrind's"
	else
		fail "$1: counts differ from Cachegrind's:"; diff cg.counts "$2.counts"
	fi
	for f in $FUNCS; do
		grep -qx "fn=$f" "$2" || fail "$1: fn=$f is not named in the profile"
	done
	grep -q "^fl=.*dlopen-lib.c" "$2" || fail "$1: the library's source file is not named"
	grep -q "^desc: Partial" "$2" && fail "$1: partial profile: $(grep '^desc: Partial' "$2")"
	grep -qx "fn=???" "$2" && fail "$1: a pc is unnamed"
	return 0
}

# launch WHAT OUT OPTIONS... -- DRIVER-ARGS...: cachetrace -o OUT launches
# the driver; exit status 0 and the target's output as under Cachegrind.
launch() {
	what=$1; out=$2; shift 2
	"$CT" -o "$out" "$@" >"$out.stdout" 2>"$out.stderr"
	rc=$?
	[ $rc -eq 0 ] || fail "$what: exit status $rc: $(head -c 500 "$out.stderr")"
	[ "$(cat "$out.stdout")" = "$EXPECT" ] || fail "$what: the target's output changed"
}

for bp in $BP_MODES; do
	launch "launched, $bp" launch.$bp $(bp_opt $bp) \
		--start=libfoo.so:foo_work $CACHE_OPTS -- ./"$DRV" ./libfoo.so
	grep -q "waiting for a library to be loaded" launch.$bp.stderr ||
		fail "launched, $bp: no note that cachetrace waits for the library"
	check "launched, $bp" launch.$bp

	rm -f go.$bp
	./"$DRV" ./libfoo.so go.$bp >attach.$bp.stdout 2>&1 &
	DPID=$!
	for i in $(seq 1 100); do grep -q ready attach.$bp.stdout && break; sleep 0.1; done
	"$CT" -p $DPID $(bp_opt $bp) --start=libfoo.so:foo_work $CACHE_OPTS \
		-o attach.$bp 2>attach.$bp.stderr &
	CTPID=$!
	for i in $(seq 1 100); do
		grep -q "waiting for a library" attach.$bp.stderr && break; sleep 0.1
	done
	grep -q "waiting for a library to be loaded" attach.$bp.stderr ||
		fail "attached, $bp: no note that cachetrace waits for the library"
	touch go.$bp
	wait_ct 120 || fail "attached, $bp: cachetrace hung"
	[ "$CTRC" = 0 ] || fail "attached, $bp: exit status $CTRC: $(head -c 500 attach.$bp.stderr)"
	wait $DPID; rc=$?
	[ $rc -eq 0 ] || fail "attached, $bp: the target exited with $rc"
	grep -q "^result $(awk '$1 == "result" { print $2 }' vg.stdout) libm" attach.$bp.stdout ||
		fail "attached, $bp: the target's output changed: $(cat attach.$bp.stdout)"
	check "attached, $bp" attach.$bp
done

# dlclose'd before the end (--intervals=0: traced until the target exits,
# and a dlopen of libm after may map over its addresses): its pcs keep the
# names they had when the loader was about to unload it.
for bp in $BP_MODES; do
	launch "dlclose'd, $bp" close.$bp $(bp_opt $bp) --intervals=0 \
		--start=libfoo.so:foo_work $CACHE_OPTS -- ./"$DRV" ./libfoo.so - close
	check "dlclose'd, $bp" close.$bp
done

# A fork before the dlopen: the child's copy of the text loses our int3s
# (with sw the one on the loader's hook: the child's own dlopen would die
# of SIGTRAP), the parent is traced as before.
for bp in $BP_MODES; do
	out=fork.$bp
	"$CT" $(bp_opt $bp) --start=libfoo.so:foo_work $CACHE_OPTS -o $out \
		-- ./"$DRV" ./libfoo.so - fork >$out.stdout 2>$out.stderr
	rc=$?
	[ $rc -eq 0 ] || fail "fork, $bp: exit status $rc: $(head -c 500 $out.stderr)"
	grep -qx "child status 0" $out.stdout ||
		fail "fork, $bp: the child's dlopen failed: $(cat $out.stdout)"
	grep -q "^result $(awk '$1 == "result" { print $2 }' vg.stdout) libm" $out.stdout ||
		fail "fork, $bp: the target's output changed: $(cat $out.stdout)"
	check "fork, $bp" $out
done

# Threads: two dlopen/dlclose libm in a loop while a third loads libfoo
# (hook hits in several threads at once; with int3s each stepped over with
# the others stopped, and the start's int3 set from a stopped thread).
for bp in $BP_MODES; do
	timeout 120 "$CT" $(bp_opt $bp) --start=libfoo.so:foo_work $CACHE_OPTS \
		-o thr.$bp -- ./"$THR" ./libfoo.so >thr.$bp.stdout 2>thr.$bp.stderr
	rc=$?
	[ $rc -eq 0 ] || fail "threads, $bp: exit status $rc: $(head -c 500 thr.$bp.stderr)"
	grep -q "^result $(awk '$1 == "result" { print $2 }' vg.stdout)$" thr.$bp.stdout ||
		fail "threads, $bp: the target's output changed: $(cat thr.$bp.stdout)"
	counts thr.$bp | grep '^foo_work ' >thr.$bp.counts
	if grep -qxF -f thr.$bp.counts cg.counts && [ -s thr.$bp.counts ]; then
		pass "threads, $bp: foo_work's Ir Dr Dw Bc Bi equal Cachegrind's"
	else
		fail "threads, $bp: foo_work $(cat thr.$bp.counts), Cachegrind: $(grep '^foo_work ' cg.counts)"
	fi
done

# A library never loaded: the note, the target unharmed, the profile says
# the start was never reached.
for bp in $BP_MODES; do
	launch "never loaded, $bp" never.$bp $(bp_opt $bp) \
		--start=libnever.so:foo_work -- ./"$DRV" ./libfoo.so
	grep -q "note: libnever.so:foo_work is not in .* waiting for a library" never.$bp.stderr ||
		fail "never loaded, $bp: no 'not in' note: $(head -c 500 never.$bp.stderr)"
	grep -qx "desc: Partial profile:  *the target exited before the start event" never.$bp ||
		fail "never loaded, $bp: the profile does not say the start was never reached"
	[ $fails -eq 0 ] && pass "never loaded, $bp: noted, target unharmed, start never reached"
done
finish
