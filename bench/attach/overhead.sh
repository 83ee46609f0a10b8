#!/bin/sh
# The cost of an attached, waiting cachetrace on a target's native phase.
# usage: sh bench/attach/overhead.sh [BUILDDIR] [PAIRS]
# One target process runs PAIRS pairs of 2-second arithmetic phases: one
# phase alone, one with `cachetrace -p PID --start=event` attached and its
# breakpoint armed (hardware, then int3 if --breakpoints exists), in
# alternation so that drift hits both alike. Prints each phase's time and
# the ratios attached/alone of the sums and of the fastest phases (the
# machine is shared: the minimum is the figure least hit by other loads);
# fails when the ratio of the minima is above 1.02. Also prints the CPU
# time (clock ticks) cachetrace itself used, attached, through the phase.
set -u
B=${1:-build}; PAIRS=${2:-5}
CT=$(realpath "$B/cachetrace")
SRC=$(dirname "$(realpath "$0")")
W=$(mktemp -d); cd "$W" || exit 1
P=oh$$
cc -O2 -g -fno-pie -no-pie -o $P "$SRC/longphase.c" || exit 1
trap 'pkill -9 -x $P; rm -rf "$W"' EXIT
mkfifo req

tracer() { awk '$1 == "TracerPid:" { print $2 }' /proc/$1/status; }
phase() {	# phase: one "r", its time in us on stdout
	n=$(wc -l <out)
	echo r >&3
	while [ "$(wc -l <out)" -le "$n" ]; do sleep 0.05; done
	tail -n 1 out
}

modes=hw
"$CT" --help 2>&1 | grep -q -- '--breakpoints' && modes="hw sw"
./$P <req >out &
tp=$!
exec 3>req
while ! grep -q calibrated out; do sleep 0.1; done
status=0
for mode in $modes; do
	bp=""; [ $mode = sw ] && bp=--breakpoints=sw
	alone=0; attached=0; amin=0; bmin=0
	for i in $(seq 1 "$PAIRS"); do
		a=$(phase)
		"$CT" -q -p $tp $bp --start=event -o /dev/null 2>ct.err &
		ct=$!
		while [ "$(tracer $tp)" = 0 ]; do sleep 0.05; done
		sleep 1		# armed
		b=$(phase)
		# Its CPU time while waiting (clock ticks): immune to the noise.
		ticks=$(awk '{ print $14 + $15 }' /proc/$ct/stat)
		kill -INT $ct; wait $ct
		while [ "$(tracer $tp)" != 0 ]; do sleep 0.05; done
		echo "$mode pair $i: alone $a us, attached $b us," \
			"cachetrace used $ticks ticks"
		alone=$((alone + a)); attached=$((attached + b))
		{ [ $amin = 0 ] || [ $a -lt $amin ]; } && amin=$a
		{ [ $bmin = 0 ] || [ $b -lt $bmin ]; } && bmin=$b
	done
	s=$(echo "$attached $alone" | awk '{ printf "%.4f", $1 / $2 }')
	r=$(echo "$bmin $amin" | awk '{ printf "%.4f", $1 / $2 }')
	echo "$mode: attached/alone = $s (sums), $r (fastest phases)," \
		"$PAIRS pairs; load $(cut -d' ' -f1-3 /proc/loadavg)"
	awk -v r=$r 'BEGIN { exit !(r <= 1.02) }' || status=1
done
echo e >&3
exec 3>&-
wait $tp
exit $status
