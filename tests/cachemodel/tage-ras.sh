#!/bin/sh
# tage's return-address stack on a real run, against the program's shape.
#   tage-ras.sh CACHETRACE SRCDIR SCRATCH
# tests/progs/recurse.c's work() calls fib(15) (at most 15 frames deep)
# and pong(40), which recurses through ping/pong down to ping(0): 41 pong
# and 41 ping frames, 82 calls deep.  Unwinding them with a stack of R
# entries (R < 82) predicts R returns and finds the stack empty for the
# other 82 - R; work's own return (its call came before the region) is
# one more: Brm = 83 - R.  With R = 128 only work's return misses.
ME=tage-ras
[ $# -ge 3 ] || { echo "usage: $ME CACHETRACE SRCDIR SCRATCH" >&2; exit 1; }
CACHETRACE=$(realpath "$1"); SRCDIR=$(realpath "$2"); SCRATCH=$3
die() { echo "$ME: $*" >&2; exit 1; }
W=$SCRATCH/$ME
rm -rf "$W" && mkdir -p "$W" || die "cannot make $W"
cd "$W" || die "cannot cd to $W"
${CC:-cc} -O2 -g -fno-pie -no-pie -o recurse "$SRCDIR/tests/progs/recurse.c" ||
	die "cannot build recurse.c"
fail=0
br0=
for r in 16 32 128; do
	"$CACHETRACE" -q --start=work --branch-model=tage --branch-opts=ras=$r \
		-o ras$r.out -- ./recurse >/dev/null 2>ras$r.err ||
		die "cachetrace failed: $(head -c 500 ras$r.err)"
	set -- $(awk '/^events:/ { for (i = 2; i <= NF; i++) ix[$i] = i }
		/^summary:/ { print $ix["Br"], $ix["Brm"] }' ras$r.out)
	want=$((83 - r)); [ $r -ge 82 ] && want=1
	if [ "$2" != "$want" ]; then
		echo "$ME: ras=$r: Brm $2, want $want (Br $1)"; fail=1
	fi
	[ -z "$br0" ] && br0=$1
	if [ "$1" != "$br0" ]; then
		echo "$ME: ras=$r: Br $1, but $br0 with another stack size"; fail=1
	fi
done
[ "$br0" -gt 83 ] 2>/dev/null || { echo "$ME: only $br0 returns counted"; fail=1; }
[ $fail -eq 0 ] && echo "$ME: Brm = 83 - R for R = 16, 32; 1 for 128 ($br0 returns)"
exit $fail
