#!/bin/sh
# The instrument engine over whole runs of programs no one here wrote
# (Debian's python3.11, sort, gzip): each prints what it prints natively
# and exits as natively, and most of its instructions ran from the code
# cache (the summary's Engine line).  python3.11 starts only if the cache
# gets SSE2's movsd (which Capstone names as the string instruction) and
# the glibc and CPython code around it right.
#   instrument-real.sh CACHETRACE SCRATCH
set -u
CT=$(realpath "$1"); W=$2/instrument-real
rm -rf "$W" && mkdir -p "$W" && cd "$W" || exit 1
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
pass() { echo "ok: $*"; }
seq 1 3000 | sort -R --random-source=/dev/zero >input.txt
check() {	# check NAME COMMAND...
	name=$1; shift
	env -i PATH=/usr/bin:/bin PYTHONHASHSEED=0 "$@" >native.out 2>&1
	nrc=$?
	env -i PATH=/usr/bin:/bin PYTHONHASHSEED=0 "$CT" --engine=instrument \
		-o "$name.cg" -- "$@" >"$name.out" 2>"$name.err"
	rc=$?
	[ $rc -eq $nrc ] && cmp -s native.out "$name.out" &&
		pass "$name: output and exit status $rc as natively" ||
		{ fail "$name: exit $rc (natively $nrc), output differs"; tail -n 5 "$name.out" "$name.err"; }
	line=$(grep -o 'Engine: instrument: .*' "$name.err")
	cached=$(echo "$line" | sed -n 's/Engine: instrument: \([0-9]*\) instructions from.*/\1/p')
	stepped=$(echo "$line" | sed -n 's/.*), \([0-9]*\) stepped.*/\1/p')
	[ -n "$cached" ] && [ -n "$stepped" ] &&
		[ "$cached" -gt $((stepped * 9)) ] &&
		pass "$name: $cached instructions from the cache, $stepped stepped" ||
		fail "$name: $line"
}
check python python3.11 -c 'import json; d = [{"k": i, "v": str(i)} for i in range(3000)]; print(len(json.dumps(d)), sum(x["k"] for x in json.loads(json.dumps(d))))'
check sort sort -n input.txt
check sortr sort -R --random-source=/dev/zero input.txt
check gzip gzip -6 -c input.txt
# Where two CPUs are allowed, the ring is read while its thread runs, on
# the other CPU, once its stays in the cache are long (sort -R's fill the
# ring thirty times); where one is, never.
read=$(sed -n 's/.*; \([0-9]*\)% of its records read while it ran.*/\1/p' sortr.err)
if [ "$(nproc)" -ge 2 ]; then
	[ "${read:-0}" -gt 0 ] &&
		pass "sortr: $read% of the ring read while its thread ran" ||
		fail "sortr: the ring never read while its thread ran ($(nproc) CPUs)"
else
	[ -z "$read" ] && pass "sortr: one CPU, the ring read at stops" ||
		fail "sortr: one CPU, yet the ring read while its thread ran"
fi
# Deterministic runs: the profile is the emulate engine's (which the
# suite holds to the step engine's), the string instructions' records
# (sort -R's rep movsq) included.
same() {	# same NAME COMMAND...
	name=$1; shift
	env -i PATH=/usr/bin:/bin PYTHONHASHSEED=0 ${HOSTENV:+CACHETRACE_HOST=$HOSTENV} \
		"$CT" --engine=emulate \
		-o "$name.emu.cg" \
		-- "$@" >"$name.emu.out" 2>"$name.emu.err"
	grep -v '^desc: Engine' "$name.emu.cg" >a.tmp
	grep -v '^desc: Engine' "$name.cg" >b.tmp
	cmp -s a.tmp b.tmp && [ -s a.tmp ] &&
		pass "$name: profile identical to emulate's" ||
		{ fail "$name: profile differs from emulate's"; diff a.tmp b.tmp | head -n 6; }
}
same sort sort -n input.txt
same sortr sort -R --random-source=/dev/zero input.txt
same gzip gzip -6 -c input.txt
# The ring read only when its thread stops (one CPU's way, forced): the
# same profile (both runs with the same environment: the target's stack
# moves with it).
HOSTENV=ring-read=stopped
env -i PATH=/usr/bin:/bin PYTHONHASHSEED=0 CACHETRACE_HOST=$HOSTENV \
	"$CT" --engine=instrument \
	-o sortr-stopped.cg -- sort -R --random-source=/dev/zero input.txt \
	>sortr-stopped.out 2>sortr-stopped.err
grep -q 'read while it ran' sortr-stopped.err &&
	fail "sortr-stopped: the ring read while its thread ran" ||
	pass "sortr-stopped: the ring read at stops only"
same sortr-stopped sort -R --random-source=/dev/zero input.txt
[ "$fails" -eq 0 ] && echo "instrument-real: all passed" && exit 0
exit 1
