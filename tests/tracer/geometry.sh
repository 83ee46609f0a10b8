#!/bin/sh
# Where the default cache geometry comes from (issue 17, item 3): /sys,
# else CPUID, else Cachegrind's defaults, each path forced through
# CACHETRACE_HOST so that every host tests all three; the profile's
# "desc: Geometry:" line and the note name the source; --model=host
# follows the same chain and fails with a message naming both sources;
# cg_annotate and cachetrace-annotate read the profile.  Nothing here
# depends on the machine's caches: only the defaults' numbers are
# compared.
#   geometry.sh CACHETRACE SRCDIR SCRATCH ANNOTATE
ANN=$(realpath "$4")	# before lib.sh changes directory
. "$(dirname "$0")/lib.sh"
build loop
SYSFS=/sys/devices/system/cpu/cpu0/cache

# run NAME [OPTION...]: cachetrace on ./loop into NAME.cg, stderr in
# NAME.err (a start event that never fires here still writes the desc:
# lines, which are all this test reads).
run() {
	n=$1; shift
	"$CT" --start=work "$@" -o "$n.cg" -- ./loop 1 >"$n.out" 2>"$n.err"
}
geometry() { sed -n 's/^desc: Geometry: *//p' "$1.cg"; }
note() { sed -n 's/^cachetrace: note: //p' "$1.err"; }	# all the notes

# The host as it is: /sys where it has the caches, else CPUID.
run host || fail "default: exit $?: $(cat host.err)"
g=$(geometry host)
if [ -r $SYSFS/index0/size ]; then
	[ "$g" = "$SYSFS" ] && pass "default: from $SYSFS" ||
		fail "default: Geometry '$g' though $SYSFS exists"
	note host | grep -q 'no cache information' &&
		fail "default: a note about $SYSFS: $(note host)"
else
	case $g in
	"CPUID "*|"Cachegrind's defaults") pass "default, no $SYSFS here: $g" ;;
	*) fail "default, no $SYSFS here: Geometry '$g'" ;;
	esac
	note host | grep -q "^no cache information in $SYSFS" &&
		pass "default: the note says $SYSFS has nothing" ||
		fail "default: note '$(note host)'"
fi

# /sys forced away: CPUID on any Intel or AMD CPU.
CACHETRACE_HOST=sysfs-cache=no run nosys || fail "sysfs-cache=no: exit $?"
g=$(geometry nosys)
case $(sed -n 's/^vendor_id[^:]*: //p;T;q' /proc/cpuinfo) in
GenuineIntel) want="CPUID leaf 4" ;;
AuthenticAMD|HygonGenuine) want="CPUID leaf 0x8000001D|CPUID 0x80000005/6" ;;
*) want="CPUID .*|Cachegrind's defaults" ;;
esac
echo "$g" | grep -Eqx "$want" && pass "sysfs-cache=no: Geometry $g" ||
	fail "sysfs-cache=no: Geometry '$g', want $want"
note nosys | grep -q "^no cache information in $SYSFS (CACHETRACE_HOST=sysfs-cache=no): the caches are from $g" &&
	pass "sysfs-cache=no: the note names $g" ||
	fail "sysfs-cache=no: note '$(note nosys)'"

# Neither: Cachegrind's defaults, in the desc: lines and the note.
CACHETRACE_HOST=sysfs-cache=no,cpuid-cache=no run none ||
	fail "both no: exit $?"
head -4 none.cg >none.head
cat >none.want <<'EOF'
desc: I1 cache:         32768 B, 64 B, 8-way associative
desc: D1 cache:         32768 B, 64 B, 8-way associative
desc: LL cache:         8388608 B, 64 B, 16-way associative
desc: Geometry:         Cachegrind's defaults
EOF
cmp -s none.head none.want && pass "both no: Cachegrind's defaults" ||
	{ fail "both no: desc lines:"; cat none.head; }
note none | grep -q "nor in CPUID: using Cachegrind's defaults I1 32768,8,64 D1 32768,8,64 LL 8388608,16,64" &&
	pass "both no: the note says so" || fail "both no: note '$(note none)'"

# Given geometry is "given", and makes no note; part of it names both.
CACHETRACE_HOST=sysfs-cache=no,cpuid-cache=no run given \
	--I1=32768,8,64 --D1=32768,8,64 --LL=1048576,16,64 ||
	fail "given: exit $?"
[ "$(geometry given)" = given ] && pass "given: Geometry given" ||
	fail "given: Geometry '$(geometry given)'"
# (Other notes, e.g. of the host's debug registers, are not ours.)
note given | grep -q -e 'cache information' -e 'LL cache' &&
	fail "given: note '$(note given)'"
CACHETRACE_HOST=sysfs-cache=no,cpuid-cache=no run part --LL=1048576,16,64 ||
	fail "--LL only: exit $?"
[ "$(geometry part)" = "--LL given, the rest from Cachegrind's defaults" ] &&
	pass "--LL only: $(geometry part)" ||
	fail "--LL only: Geometry '$(geometry part)'"

# --model=host: the same chain, and an error naming both when neither.
for h in "" sysfs-cache=no; do
	CACHETRACE_HOST=$h run model-host --model=host ||
		{ fail "--model=host ($h): exit $?: $(cat model-host.err)"; continue; }
	g=$(geometry model-host)
	grep -q '^desc: L1D cache: ' model-host.cg &&
		[ -n "$g" ] && [ "$g" != "Cachegrind's defaults" ] &&
		pass "--model=host (${h:-as the host is}): levels from $g" ||
		fail "--model=host ($h): Geometry '$g', $(grep -c '^desc: L' model-host.cg) levels"
done
CACHETRACE_HOST=sysfs-cache=no,cpuid-cache=no run model-none --model=host
rc=$?
[ $rc -eq 1 ] && grep -q "no cache information in $SYSFS nor in CPUID: give --model=hier --cache=" model-none.err &&
	pass "--model=host with neither: exit 1, names both" ||
	fail "--model=host with neither: exit $rc: $(cat model-none.err)"

# Both annotators read a profile with the Geometry line.
for p in nosys none; do
	cg_annotate $p.cg >$p.ann 2>$p.ann.err && [ ! -s $p.ann.err ] &&
		grep -q "^Geometry: " $p.ann && pass "cg_annotate reads $p.cg" ||
		fail "cg_annotate on $p.cg: $(head -3 $p.ann.err)"
	"$ANN" $p.cg >$p.ct.ann 2>$p.ct.ann.err && grep -q "Geometry: " $p.ct.ann &&
		pass "cachetrace-annotate reads $p.cg" ||
		fail "cachetrace-annotate on $p.cg: $(head -3 $p.ct.ann.err)"
	# Our desc: lines in the column of Cachegrind's own (issue 26,
	# item 14: Geometry: and Region: were one short of "I1 cache:").
	for a in $p.ann $p.ct.ann; do
		w=$(sed -n 's/^\(I1 cache\|Geometry\|Region\|Windows\|Command\):\( *\).*/\1:\2/p' $a |
			awk '{ print length($0) }' | sort -u)
		[ "$w" = 18 ] && pass "$a: the metadata values in one column" ||
			fail "$a: metadata value columns $(echo $w): $(head -12 $a)"
	done
done
finish
