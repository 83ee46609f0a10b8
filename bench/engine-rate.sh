#!/bin/sh
# The emulate engine against the step engine, same run, same machine,
# alternating, both pinned to one CPU (taskset -c 0): wall time of the
# whole cachetrace run and the instructions per second it reports, on
#   work      bench/work.c, whole run (ROUNDS rounds, ~112k instructions each)
#   progs     tests/progs array chase qsort strmem, whole runs
#   sqlite    tests/real/sqlite.c's work() (SQLite + zlib), --start=work
#   avx2      tests/progs/avx2.c (-mavx2: the AVX loop runs on the CPU)
# then a ~10M-instruction region of ordinary C (work.c, --start=main) under
# emulate alone, and the supervisor's max RSS after 1x and 3x the rounds.
#   sh bench/engine-rate.sh [BUILDDIR] [ROUNDS]
set -eu
B=$(realpath "${1:-build}"); R=${2:-20}
S=$(realpath "$(dirname "$0")/..")
W=$(mktemp -d); trap 'rm -rf "$W"' EXIT
G="--I1=32768,8,64 --D1=32768,8,64 --LL=1048576,16,64"
cc -O2 -g -fno-pie -no-pie -o "$W/work" "$S/bench/work.c"
for p in array chase qsort strmem; do
	cc -O2 -g -fno-pie -no-pie -o "$W/$p" "$S/tests/progs/$p.c"
done
cc -O2 -g -fno-pie -no-pie -mavx2 -o "$W/avx2" "$S/tests/progs/avx2.c"
# shellcheck disable=SC2046
cc -O2 -g -fno-pie -no-pie -o "$W/sqlite" "$S/tests/real/sqlite.c" \
	$(pkg-config --cflags --libs sqlite3 zlib)
now() { date +%s.%N; }
# one ENGINE ARGS...: "seconds instructions"
one() {
	e=$1; shift
	t0=$(now)
	# shellcheck disable=SC2086
	taskset -c 0 "$B/cachetrace" --engine="$e" $G -o "$W/cg.$e" "$@" \
		>/dev/null 2>"$W/err.$e"
	t1=$(now)
	echo "$(echo "$t1 - $t0" | bc) $(sed -n 's/^summary: \([0-9]*\).*/\1/p' "$W/cg.$e")"
}
side() {	# NAME ARGS...
	name=$1; shift
	for i in 1 2; do
		s=$(one step "$@"); m=$(one emulate "$@")
		ts=${s% *}; tm=${m% *}; n=${s#* }
		[ "$n" = "${m#* }" ] || echo "$name: the engines counted $n and ${m#* } Ir" >&2
		echo "$name $i: Ir $n, step $ts s, emulate $tm s, ratio $(echo "scale=1; $ts / $tm" | bc)x; $(grep -o 'Engine: .*' "$W/err.emulate" | sed 's/; .*//')"
	done
}
side work -- "$W/work" "$R"
for p in array chase qsort strmem; do side "$p" -- "$W/$p"; done
side sqlite --start=work -- "$W/sqlite"
side avx2 -- "$W/avx2"
big=$((R * 90 / 20))
m=$(one emulate --start=main -- "$W/work" "$big")
echo "work, $big rounds, --start=main, emulate: ${m#* } Ir in ${m% *} s"
for r in "$R" $((R * 3)); do
	/usr/bin/time -f "%M" -o "$W/rss" "$B/cachetrace" -q $G -o "$W/cg.out" \
		-- "$W/work" "$r" >/dev/null
	echo "emulate, rounds $r: Ir $(sed -n 's/^summary: \([0-9]*\).*/\1/p' "$W/cg.out"), cost lines $(grep -c '^[0-9]' "$W/cg.out"), max RSS $(cat "$W/rss") KiB"
done
