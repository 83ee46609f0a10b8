#!/bin/sh
# --threads=all side by side, in one run, ROUNDS times: bench/threads.c
# (two threads of integer work, 200 rounds, started and joined by work())
# and tests/attach/mtcache.c (four threads of calls, returns, calls
# through pointers and a switch), each under Cachegrind's whole run, the
# emulate engine and the instrument engine, with the default model, and
# threads.c also with --model=jaguar --cores=2 (turns of 64 instructions).
# Wall time of
# the whole command, then its user+sys time; "x": the ratio to
# Cachegrind's wall time in the same round.
#   sh bench/threads.sh [BUILDDIR] [ROUNDS]
set -eu
B=$(realpath "${1:-build}"); N=${2:-1}
S=$(realpath "$(dirname "$0")/..")
W=$(mktemp -d); trap 'rm -rf "$W"' EXIT
cc -O2 -g -fno-pie -no-pie -pthread -o "$W/threads" "$S/bench/threads.c"
cc -O2 -g -fno-pie -no-pie -pthread -o "$W/mtcache" "$S/tests/attach/mtcache.c"
cd "$W"
t() {	# t CMD...: "wall user+sys" of CMD
	/usr/bin/time -f "%e %U %S" -o tm "$@" >/dev/null 2>err ||
		{ echo "failed: $*" >&2; tail -n 3 err >&2; exit 1; }
	awk '{ printf "%.2f %.2f", $1, $2 + $3 }' tm
}
row() {	# row NAME START JAGUAR(yes|no) PROGRAM ARGS...
	name=$1 start=$2 jag=$3; shift 3
	cg=$(t valgrind --tool=cachegrind --cachegrind-out-file=/dev/null "$@")
	cgw=${cg% *}
	models=""
	[ "$jag" = yes ] && models="--model=jaguar --cores=2"
	for m in "" ${models:+"$models"}; do
		for e in emulate instrument; do
			# shellcheck disable=SC2086
			r=$(t "$B/cachetrace" --engine=$e --threads=all \
				--start=$start $m -o /dev/null -- "$@")
			ins=$(sed -n 's/.*Traced \([0-9]*\) instructions.*/\1/p' err)
			printf '%-8s %-22s %-10s %11s  cg %s  %s  x%.1f\n' \
				"$name" "${m:-cachegrind}" $e "$ins" "$cg" "$r" \
				"$(echo "${r% *} $cgw" | awk '{ print $1 / $2 }')"
		done
	done
}
for i in $(seq 1 "$N"); do
	row threads work yes ./threads 200
	row mtcache run_all no ./mtcache
done
