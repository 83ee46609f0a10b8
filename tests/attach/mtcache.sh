#!/bin/sh
# Several threads in the instrument engine's code cache at once
# (--threads=all, tests/attach/mtcache.c): four workers born inside the
# window run calls, returns, calls through pointers and a switch on data
# of their own, each meeting blocks first that the others then run.
# - Their functions' Ir, Dr and Dw are Cachegrind's: nothing there
#   depends on how the threads interleave (misses do: the caches are
#   shared, and are not compared).
# - The output is the native one.
# - The workers ran from the cache, together: under 1% of the window
#   stepped, and the summary's count of threads in the cache at once is
#   the four workers'.
# The same with --threads=hit, --intervals=0 and --start=work: four
# windows at once, each a worker's, their stop the same return address.
# (kill9.sh kills cachetrace while several threads run in the cache.)
# Where the host gives no code cache (--check; the suite's third pass
# forces it with CACHETRACE_HOST=inject=no), the default engine's note
# and its fallback's counts, over fewer rounds.
. "$(dirname "$0")/lib.sh"
T=mt$$
build mtcache $T
rounds=300000 eng=--engine=instrument cache=yes
if "$CT" --check 2>/dev/null | grep -q '^code cache: .*no system call is injected'
then
	rounds=3000 eng= cache=no
fi
./$T $rounds >native.out || fail "native run"
valgrind --tool=cachegrind --cache-sim=yes --branch-sim=no \
	--cachegrind-out-file=vg.out ./$T $rounds >vg.stdout 2>vg.err ||
	{ fail "valgrind: $(tail -n 2 vg.err)"; finish; }
vg_ref work work
for mode in all hit; do
	case $mode in
	all) opts="--threads=all --start=run_all" n=4 ;;
	hit) opts="--threads=hit --intervals=0 --start=work" n=4 ;;
	esac
	"$CT" $eng $opts -o $mode.cg -- ./$T $rounds >$mode.out 2>$mode.err ||
		fail "$mode: exit $?: $(tail -n 3 $mode.err)"
	cmp -s native.out $mode.out && pass "$mode: output as natively" ||
		fail "$mode: output differs: $(head -n 2 $mode.out)"
	for fn in work op_sum op_store op_switch op_nested; do
		for ev in Ir Dr Dw; do
			want=$(fn_cost vg.out $fn $ev)
			got=$(fn_cost $mode.cg $fn $ev)
			# (Ir above 0: a function inlined or renamed
			# would compare two zeros)
			[ "$ev" != Ir ] || [ "$want" -gt 0 ] ||
				fail "Cachegrind: $fn Ir $want"
			[ "$got" = "$want" ] &&
				pass "$mode: $fn $ev $got, as Cachegrind" ||
				fail "$mode: $fn $ev $got, Cachegrind $want"
		done
	done
	if [ $cache = no ]; then
		grep -q 'note: the instrument engine cannot run here' \
			$mode.err && pass "$mode: no code cache here: the note" ||
			fail "$mode: no note: $(head -n 2 $mode.err)"
		continue
	fi
	line=$(grep -o 'Engine: instrument: .*' $mode.err)
	cached=$(echo "$line" | sed -n 's/^Engine: instrument: \([0-9]*\) instructions from the code cache.*/\1/p')
	stepped=$(echo "$line" | sed -n 's/.*), \([0-9]*\) stepped.*/\1/p')
	together=$(echo "$line" | sed -n 's/.*; \([0-9]*\) threads in it at once.*/\1/p')
	if [ -n "$cached" ] && [ -n "$stepped" ] &&
	   [ "$stepped" -lt $(( (cached + stepped) / 100 )) ]; then
		pass "$mode: from the cache: $cached, stepped: $stepped"
	else
		fail "$mode: not from the cache: $line"
	fi
	[ "${together:-0}" -ge $n ] &&
		pass "$mode: $together threads in the cache at once" ||
		fail "$mode: threads in the cache at once: '${together:-}' ($line)"
done
finish
