#!/bin/sh
# Signals that arrive while stepping are delivered unchanged and their
# handlers are traced like any code: the handler's and the region's own
# counts (Ir Dr Dw Bc Bi) equal Cachegrind's, and the program's output is
# the same as natively.
. "$(dirname "$0")/lib.sh"
command -v valgrind >/dev/null ||
	{ echo "FAIL: no valgrind: run tests/install-deps.sh"; exit 1; }
build sighandler
./sighandler > native.out || fail "native run"
GEOM="--I1=32768,8,64 --D1=32768,8,64 --LL=1048576,16,64"
valgrind --tool=cachegrind --cache-sim=yes --branch-sim=yes $GEOM \
	--cachegrind-out-file=vg.cg ./sighandler >vg.out 2>vg.err ||
	fail "valgrind run"
"$CT" -q --start=work $GEOM -o ct.cg -- ./sighandler >ct.out 2>ct.err ||
	{ fail "cachetrace run"; cat ct.err; }
cmp -s native.out ct.out && pass "output unchanged" ||
	fail "output differs: $(cat ct.out)"
# Per function: Ir Dr Dw Bc Bi (columns 1 4 7 10 12 of the 13 events).
fnsum() {	# fnsum FILE FN
	awk -v fn="$2" '
		/^fn=/ { cur = substr($0, 4) }
		/^[0-9]/ && cur == fn { for (i = 2; i <= NF; i++) s[i-1] += $i }
		END { printf "%d %d %d %d %d\n", s[1], s[4], s[7], s[10], s[12] }' "$1"
}
for fn in on_usr1 work; do
	a=$(fnsum vg.cg $fn); b=$(fnsum ct.cg $fn)
	[ "$a" = "$b" ] && [ "${a%% *}" -gt 0 ] &&
		pass "$fn: Ir Dr Dw Bc Bi = $b as Cachegrind" ||
		fail "$fn: Cachegrind '$a', cachetrace '$b'"
done
finish
