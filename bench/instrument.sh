#!/bin/sh
# The instrument engine (issue 29) side by side with Cachegrind's whole
# run and the emulate engine, in one run, ROUNDS times:
#   region       bench/region.c x10, --start=work (integer C, no libc)
#   region-libc  bench/region-libc.c x4, --start=work (glibc's AVX2/EVEX
#                string functions, qsort, snprintf)
#   python json  a whole run of python3.11 over 20,000 dicts
#                (PYTHONHASHSEED=0, a clean environment)
#   windows      bench/windows.c: 2,000 windows of ~20 instructions
#                (--intervals=2000): a window's fixed cost
#   cpython      bench/cpython/window.sh: an attached python3 loop, a 2 s
#                toggle window, each engine
#   native       windows x2000 under --engine=native: a window's cost
# Pinned to one CPU but the attached one and instrument2 (the instrument
# engine let use two CPUs: its ring read on one while the thread runs on
# the other).  Wall times of the whole command, then its user+sys time;
# "x" is the ratio to Cachegrind's time in the same round (instrument2's:
# to Cachegrind's with --branch-sim=yes, the same events as cachetrace's).
#   sh bench/instrument.sh [BUILDDIR] [ROUNDS]
set -eu
B=$(realpath "${1:-build}"); N=${2:-2}
S=$(realpath "$(dirname "$0")/..")
W=$(mktemp -d); trap 'rm -rf "$W"' EXIT
G="--I1=32768,8,64 --D1=32768,8,64 --LL=8388608,16,64"
for p in region region-libc windows; do
	cc -O2 -g -fno-pie -no-pie -o "$W/$p" "$S/bench/$p.c"
done
mkdir "$W/py"	# alone in its directory, which python lists
cat >"$W/py/pyjson.py" <<'EOF'
import json
d = [{"k%d" % i: i, "v": [i, i * 2, str(i)]} for i in range(20000)]
print(len(json.loads(json.dumps(d))))
EOF
now() { date +%s.%N; }
secs() { echo "$2 - $1" | bc; }
# timed CMD...: run it, its user+sys seconds in $W/cpu (this host's
# noise moves wall times more than CPU times); 0 without /usr/bin/time
timed() {
	if [ -x /usr/bin/time ]; then
		/usr/bin/time -o "$W/cpu.t" -f "%U %S" "$@"
		rc=$?
		tail -n 1 "$W/cpu.t" | awk '{ print $1 + $2 }' >"$W/cpu"
		return $rc
	fi
	echo 0 >"$W/cpu"
	"$@"
}
ir() { sed -n 's/^summary: \([0-9]*\).*/\1/p' "$1"; }
# run LABEL CT-OPTIONS -- PROG ARGS: Cachegrind, then each engine
run() {
	label=$1; shift
	prog=$(for a in "$@"; do echo "$a"; done | sed -n '/^--$/,$p' | sed 1d |
		tr '\n' ' ')
	for i in $(seq "$N"); do
		t0=$(now)
		# shellcheck disable=SC2086
		timed env -i PATH=/usr/bin:/bin PYTHONHASHSEED=0 taskset -c 0 \
			valgrind --tool=cachegrind $G --cache-sim=yes \
			--cachegrind-out-file="$W/vg.out" $prog >/dev/null 2>&1
		vg=$(secs "$t0" "$(now)")
		vgc=$(cat "$W/cpu")
		printf "%s: Cachegrind %.2f s (%s Ir)" "$label" "$vg" "$(ir "$W/vg.out")"
		cpus="Cachegrind $vgc s"
		# Cachegrind with the branch predictor too: the events
		# cachetrace's default profile has; the "x" of instrument2
		t0=$(now)
		# shellcheck disable=SC2086
		timed env -i PATH=/usr/bin:/bin PYTHONHASHSEED=0 taskset -c 0 \
			valgrind --tool=cachegrind $G --cache-sim=yes \
			--branch-sim=yes --cachegrind-out-file="$W/vgb.out" \
			$prog >/dev/null 2>&1
		vgb=$(secs "$t0" "$(now)")
		printf ", with --branch-sim=yes %.2f s" "$vgb"
		cpus="$cpus, with --branch-sim=yes $(cat "$W/cpu") s"
		# instrument2: not pinned (the ring read on the other CPU
		# while the thread runs, where two are allowed)
		for e in emulate instrument instrument2; do
			pin="taskset -c 0"; base=$vg
			[ $e = instrument2 ] && pin= && base=$vgb
			t0=$(now)
			# shellcheck disable=SC2086
			timed env -i PATH=/usr/bin:/bin PYTHONHASHSEED=0 \
				$pin "$B/cachetrace" --engine=${e%2} $G \
				-o "$W/$e.out" "$@" >/dev/null 2>"$W/$e.err"
			t=$(secs "$t0" "$(now)")
			c=$(cat "$W/cpu")
			# (ratios rounded, not cut: bc's scale truncates)
			printf ", %s %.2f s (%.2fx)" "$e" "$t" \
				"$(echo "scale=3; $t / $base" | bc)"
			cpus="$cpus, $e $c s ($(printf %.2f "$(echo "scale=3; $c / ($vgc + 0.001)" | bc)")x)"
		done
		echo
		echo "  CPU time: $cpus"
		if ! cmp -s "$W/emulate.out" "$W/instrument.out"; then
			grep -v '^desc: Engine' "$W/emulate.out" >"$W/a"
			grep -v '^desc: Engine' "$W/instrument.out" >"$W/b"
			cmp -s "$W/a" "$W/b" && echo "  profiles identical" ||
				echo "  profiles differ"
		fi
		grep -v '^desc: Engine' "$W/instrument.out" >"$W/a"
		grep -v '^desc: Engine' "$W/instrument2.out" >"$W/b"
		cmp -s "$W/a" "$W/b" ||
			echo "  instrument and instrument2 profiles differ"
	done
	grep -o 'Engine: instrument.*' "$W/instrument.err" || true
	grep -o 'Engine: instrument.*' "$W/instrument2.err" || true
	grep -o 'Stepped most.*' "$W/instrument.err" || true
}
run "region x10" --start=work -- "$W/region" 10
run "region-libc x4" --start=work -- "$W/region-libc" 4
run "python json (whole run)" -- python3.11 "$W/py/pyjson.py"
run "windows x2000" --start=work --intervals=2000 -- "$W/windows" 2000
# The native engine (issue 30): nothing simulated, the host's counters
# gated at each window's start and stop: what a window costs the target.
t0=$(now)
taskset -c 0 "$W/windows" 2000 >/dev/null
t_alone=$(secs "$t0" "$(now)")
t0=$(now)
taskset -c 0 "$B/cachetrace" -q --engine=native -o /dev/null --start=work \
	--intervals=2000 -- "$W/windows" 2000 >/dev/null
t_nat=$(secs "$t0" "$(now)")
printf "windows x2000, native engine: %.2f s, the program alone %.2f s: %.0f us a window\n" \
	"$t_nat" "$t_alone" "$(echo "($t_nat - $t_alone) * 1000000 / 2000" | bc)"
for e in emulate instrument; do
	echo "cpython attached, $e:"
	sh "$S/bench/cpython/window.sh" "$B" 2 -- --engine=$e |
		grep -E 'Traced|target'
done
