#!/bin/sh
# A whole run's call tree has one root (issue 17): the dynamic loader's
# entry, which Callgrind shows at the top with 100% inclusive, calling
# _dl_start, _dl_init and the program's _start.  Our tree split into two
# bare-address roots (the entry, and _dl_start_user after _dl_start
# returned) once an unwind had dropped the entry's frame.
# Checks, on `callgrind_annotate --inclusive=yes` of our file: the largest
# inclusive cost is exactly the total and none is above it; the top
# function is the one Callgrind's file has at the top; the root calls what
# Callgrind's calls, once each.
#   root.sh CACHETRACE SRCDIR SCRATCH
set -u
CT=$(realpath "$1"); SRC=$(realpath "$2")/tests; W=$3/callstack-root
rm -rf "$W"; mkdir -p "$W"; cd "$W" || exit 1
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
pass() { echo "ok: $*"; }
command -v valgrind >/dev/null && command -v callgrind_annotate >/dev/null ||
	{ echo "no valgrind: run tests/install-deps.sh"; exit 77; }

${CC:-cc} -O2 -g -fno-pie -no-pie -o cs-root "$SRC/progs/array.c" ||
	{ echo "cannot build array.c"; exit 1; }
"$CT" -q --call-stacks=yes --callgrind-out-file=ct.cg -o ct.flat \
	-- ./cs-root >ct.stdout 2>ct.stderr || { cat ct.stderr; fail "cachetrace failed"; }
valgrind -q --tool=callgrind --callgrind-out-file=vg.cg ./cs-root \
	>vg.stdout 2>vg.stderr || { cat vg.stderr; fail "callgrind failed"; }

# "IR NAME OBJECT" of each function, largest inclusive first, and the total.
incl() {
	callgrind_annotate --inclusive=yes --threshold=100 "$1" | awk '
	/PROGRAM TOTALS/ { gsub(",", "", $1); print "TOTAL", $1; next }
	/^ *[0-9][0-9,]* +\(.*\) .*\[.*\]$/ { ir = $1; gsub(",", "", ir)
		fn = $0; sub(/^[^)]*\) +/, "", fn); ob = fn
		sub(/ \[.*$/, "", fn); sub(/^.*:/, "", fn)
		sub(/^.*\[/, "", ob); sub(/\]$/, "", ob); print ir, fn, ob }'
}
incl ct.cg >ct.incl
incl vg.cg >vg.incl
total=$(awk '$1 == "TOTAL" { print $2 }' ct.incl)
max=$(awk '$1 != "TOTAL" && $1 > m { m = $1 } END { print m + 0 }' ct.incl)
[ -n "$total" ] && [ "$max" = "$total" ] &&
	pass "the largest inclusive Ir is the total, $total (100%)" ||
	fail "largest inclusive Ir $max, total $total"
at100=$(awk -v t="$total" '$1 != "TOTAL" && $1 == t' ct.incl | wc -l)
[ "$at100" -eq 1 ] && pass "one function at 100%" ||
	fail "$at100 functions at 100%: $(awk -v t="$total" '$1 == t' ct.incl | tr '\n' ';')"

# The top function.  Callgrind names a function without a symbol by its
# offset in its object, we by its address: a bare ld.so entry is then
# e_entry of the interpreter for Callgrind and AT_BASE + e_entry for us
# (cachetrace runs the target without ASLR, as setarch -R does).
set -- $(awk '$1 != "TOTAL" { print $2, $3; exit }' ct.incl); ct_fn=$1 ct_ob=$2
set -- $(awk '$1 != "TOTAL" { print $2, $3; exit }' vg.incl); vg_fn=$1 vg_ob=$2
interp=$(readelf -lW cs-root | sed -n 's/.*interpreter: \([^]]*\)].*/\1/p')
entry=$(readelf -hW "$interp" | awk '/Entry point/ { print $4 }')
base=$(setarch "$(uname -m)" -R env LD_SHOW_AUXV=1 ./cs-root | awk '/^AT_BASE:/ { print $2 }')
[ "$ct_ob" = "$vg_ob" ] && [ "$(realpath "$ct_ob")" = "$(realpath "$interp")" ] &&
	pass "the top function is in the loader, $ct_ob" ||
	fail "top function objects: ours $ct_ob, Callgrind's $vg_ob (loader $interp)"
hex='^0x[0-9a-f]+$'
if echo "$vg_fn$ct_fn" | grep -q -E '^0x[0-9a-f]+0x[0-9a-f]+$'; then
	[ $((vg_fn)) -eq $((entry)) ] && [ $((ct_fn)) -eq $((base + entry)) ] &&
		pass "the top function is the loader's entry ($vg_fn for Callgrind, $ct_fn for us)" ||
		fail "top: ours $ct_fn, Callgrind's $vg_fn; loader entry $entry at base $base"
else
	[ "$ct_fn" = "$vg_fn" ] && pass "the top function is $ct_fn" ||
		fail "top: ours $ct_fn, Callgrind's $vg_fn"
fi

# What the root calls, and how often: Callgrind's root calls _dl_start,
# _dl_init and (below main), once each.
calls() { awk -f "$SRC/callstack/cg-calls.awk" "$1" | awk -v r="$2" '$1 == r { $1 = ""; $NF = ""; print }' | sort; }
calls ct.cg "$ct_fn" >ct.root
calls vg.cg "$vg_fn" >vg.root
[ -s vg.root ] && cmp -s ct.root vg.root &&
	pass "the root calls $(tr '\n' ' ' <ct.root)as Callgrind's" ||
	{ fail "the root's calls (< ours, > Callgrind's):"; diff ct.root vg.root; }
[ "$fails" -eq 0 ] && echo "root: all passed" && exit 0
exit 1
