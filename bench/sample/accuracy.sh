#!/bin/sh
# bench/sample/accuracy.sh BUILD [PROG...]: --sample's accuracy and cost
# (issue 31).  For each program: its native time; Cachegrind's whole run;
# cachetrace's full profile of the whole run (the default engine); and
# cachetrace --sample at the default settings (5ms: 200k instructions every
# 5 ms of CPU time, 50k of them warm-up; SAMPLE=... another), kept caches
# and --sample-cold.  compare.py sets each sampled profile against the full
# one.  Geometry fixed (I1, D1 32K 8-way, LL 8M 16-way).  Programs:
# phases (bench/sample/phases.c), python3 json, xz -3, sqlite
# (bench/sample/sqlite-load.c).  Run by hand: bench/README.md has the
# figures.
set -u
B=$(realpath "$1"); shift
CT=$B/cachetrace
D=$(dirname "$(realpath "$0")")
W=${W:-/tmp/ct-sample-bench}
mkdir -p "$W" && cd "$W" || exit 1
GEOM="--I1=32768,8,64 --D1=32768,8,64 --LL=8388608,16,64"
S=${SAMPLE:-5ms}	# the --sample setting: a period alone, the defaults
# (REUSE=1: the full profiles of an earlier run are kept)
cc -O2 -g -o phases "$D/phases.c" || exit 1
cc -O2 -g -o sqlite-load "$D/sqlite-load.c" $(pkg-config --cflags --libs sqlite3) || exit 1
[ -f xz.in ] || head -c 12000000 /usr/lib/x86_64-linux-gnu/libc.so.6 /usr/bin/* 2>/dev/null |
	head -c 12000000 >xz.in
cat >jsonbench.py <<'PY'
import json
d = [{'k': i, 'v': str(i) * 5, 'l': list(range(i % 10))} for i in range(150000)]
s = json.dumps(d)
print(len(json.loads(s)))
PY
cmd() {
	case $1 in
	phases) echo "./phases 8" ;;
	json) echo "/usr/bin/python3 jsonbench.py" ;;
	xz) echo "xz -3 -c -T1 xz.in" ;;
	sqlite) echo "./sqlite-load 200000" ;;
	esac
}
secs() { /usr/bin/time -f %e -o t.txt "$@" >/dev/null 2>&1; cat t.txt; }
for p in ${*:-phases json xz sqlite}; do
	c=$(cmd $p)
	export PYTHONHASHSEED=0
	nat=$(secs $c)
	if [ -z "${REUSE:-}" ] || [ ! -s $p.full.cg ]; then
		cg=$(secs valgrind --tool=cachegrind --cache-sim=yes $GEOM \
			--cachegrind-out-file=$p.vg.cg $c)
		full=$(secs "$CT" -q $GEOM -o $p.full.cg -- $c)
	else
		cg=- full=-
	fi
	warm=$(secs "$CT" $GEOM --sample=$S -o $p.warm.cg -- $c)
	cold=$(secs "$CT" -q $GEOM --sample=$S --sample-cold -o $p.cold.cg -- $c)
	echo "== $p, --sample=$S: native $nat s, Cachegrind $cg s, cachetrace" \
	     "full $full s, sampled $warm s (--sample-cold $cold s)"
	sed -n 's/^desc: Sampled: *//p' $p.warm.cg
	echo "-- kept caches (default), the estimates (weighted samples):"
	python3 "$D/compare.py" $p.full.cg $p.warm.cg --estimates
	echo "-- the same, the profile's raw counts:"
	python3 "$D/compare.py" $p.full.cg $p.warm.cg | tail -1
	echo "-- --sample-cold, the estimates:"
	python3 "$D/compare.py" $p.full.cg $p.cold.cg --estimates | tail -1
done
