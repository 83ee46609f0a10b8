#!/bin/sh
# Call stacks against valgrind's Callgrind on one program of this
# directory: inclusive costs per function of the program and call counts
# and inclusive costs per caller -> callee pair, both files read by
# valgrind's own callgrind_annotate / the same awk; then the folded
# stacks: no cost lost, no frame left behind (CHECKS below per program).
# threads runs with --threads=all: two threads stepped in one window.
#   oracle.sh CACHETRACE SRCDIR SCRATCH PROGRAM
set -u
CT=$(realpath "$1"); SRC=$(realpath "$2")/tests/callstack; P=$4
W=$3/callstack-$P
rm -rf "$W"; mkdir -p "$W"; cd "$W" || exit 1
# Never skips: a missing valgrind (tests/install-deps.sh) is a failure.
command -v valgrind >/dev/null && command -v callgrind_annotate >/dev/null ||
	{ echo "FAIL: no valgrind/callgrind_annotate: run tests/install-deps.sh"; exit 1; }
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
pass() { echo "ok: $*"; }

# A name no other test uses, so that leftovers are ours.
exe=cs-$P
case $P in
exception) ${CXX:-g++} -O2 -g -fno-pie -no-pie -o $exe "$SRC/$P.cc" ;;
*) ${CC:-cc} -O2 -g -fno-pie -no-pie -pthread -o $exe "$SRC/$P.c" ;;
esac || { echo "cannot build $P"; exit 1; }

# glibc must pick the same string functions under valgrind's CPUID as
# natively (as tests/oracle/lib.sh does); no lazy binding in the window,
# whose resolver differs between the two (xsave / xsavec).
GLIBC_TUNABLES="glibc.cpu.hwcaps=-AVX512F,-AVX512VL,-AVX512BW,-AVX512DQ,-AVX512CD,-AVX512ER,-AVX512PF,-RTM,-Prefer_No_VZEROUPPER:glibc.cpu.x86_rep_movsb_threshold=4096:glibc.cpu.x86_rep_stosb_threshold=4096:glibc.cpu.x86_non_temporal_threshold=1048576"
LD_BIND_NOW=1
export GLIBC_TUNABLES LD_BIND_NOW
valgrind -q --tool=callgrind --cache-sim=yes --branch-sim=yes --demangle=no \
	--callgrind-out-file=vg.cg ./$exe >vg.stdout 2>vg.stderr ||
	{ cat vg.stderr; echo "callgrind failed"; exit 1; }
opts=
[ "$P" = threads ] && opts=--threads=all
"$CT" -q --start=work $opts --call-stacks=yes --callgrind-out-file=ct.cg \
	--folded-out-file=ct.folded -o ct.flat -- ./$exe >ct.stdout 2>ct.stderr
rc=$?
[ $rc -eq 0 ] || { cat ct.stderr; fail "cachetrace exited with $rc"; }
# An instruction the decoder cannot follow is a failure of this test,
# not a reason to skip it.
grep -q "cannot decode" ct.stderr && fail "the decoder cannot follow $P"
cmp -s vg.stdout ct.stdout || fail "the program printed something else"

# The program's own functions, except those that run outside work().
funcs=$(nm --defined-only $exe | awk '$2 ~ /^[tT]$/ { print $3 }' |
	grep -v -x -e main -e _start -e _init -e _fini -e frame_dummy \
		-e register_tm_clones -e deregister_tm_clones \
		-e __do_global_dtors_aux -e _dl_relocate_static_pie |
	tr '\n' ' ')
[ -n "$funcs" ] || fail "no functions found in $exe"

# file:function lines of callgrind_annotate --inclusive=yes: "fn Ir".
inclusive() {
	callgrind_annotate --inclusive=yes --threshold=100 "$1" 2>"$1.warn" |
	awk -v P="$funcs" '
	BEGIN { n = split(P, a, " "); for (i = 1; i <= n; i++) p[a[i]] = 1 }
	/^ *[0-9][0-9,]* / {
		l = $0; sub(/ \[[^]]*\]$/, "", l)
		m = split(l, w, " "); fn = w[m]; sub(/^.*:/, "", fn)
		f = fn; sub(/\047[0-9]+$/, "", f)
		if (f in p) { x = $1; gsub(",", "", x); print fn, x }
	}' | sort
}
edges() {
	awk -f "$SRC/cg-calls.awk" "$1" | awk -v P="$funcs" '
	BEGIN { n = split(P, a, " "); for (i = 1; i <= n; i++) p[a[i]] = 1 }
	{ c = $1; d = $2; sub(/\047[0-9]+$/, "", c); sub(/\047[0-9]+$/, "", d) }
	(c in p) || ((d in p) && d != "work")' | sort
}
inclusive vg.cg >vg.incl
inclusive ct.cg >ct.incl
edges vg.cg >vg.edges
edges ct.cg >ct.edges
grep -q "^work " vg.incl || fail "work() not in Callgrind's profile"
if [ "$P" = threads ]; then
	# valgrind has no clone3: glibc's pthread_create takes its clone()
	# fallback there; pthread_join waits or not as the threads ran.
	# Compare work() without those two.
	net() { awk '$1 == "work" && $2 ~ /^pthread_(create|join)/ { s += $4 } END { print s + 0 }' "$1.edges"; }
	vw=$(awk '$1 == "work" { print $2 }' vg.incl)
	cw=$(awk '$1 == "work" { print $2 }' ct.incl)
	[ $((cw - $(net ct))) = $((vw - $(net vg))) ] &&
		pass "work's inclusive Ir without pthread_create/join as Callgrind's" ||
		fail "work without pthread_create/join: $((cw - $(net ct))), Callgrind $((vw - $(net vg)))"
	for f in vg ct; do
		grep -v '^work ' $f.incl >$f.i && mv $f.i $f.incl
		grep -v -E '^work pthread_(create|join)' $f.edges >$f.e &&
			mv $f.e $f.edges
	done
fi
if [ "$P" = exception ]; then
	# Callgrind takes the landing pad's entry from libgcc for a call
	# (another object) and never pops it, so its work.cold chains grow
	# with every throw; its call counts per callee still hold.
	for f in vg ct; do
		awk '$2 !~ /cold/ { n[$2] += $3 } END { for (k in n) print k, n[k] }' \
			$f.edges | sort >$f.e && mv $f.e $f.edges
		: >$f.incl
	done
	what="callees: calls"
fi
if [ "$P" = signal ]; then
	# Callgrind keeps a handler's costs out of the interrupted calls'
	# inclusive costs and treats the handler's return into the
	# sigreturn trampoline as a call; we keep the handler under the
	# frames it interrupted (docs/callstacks.md).  So: work() and
	# work -> raise are ours = Callgrind's + the handler's, and our
	# handler is Callgrind's without the trampoline.
	get() { awk -v k="$2" '$1 == k { print $2 }' "$1"; }
	vh=$(get vg.incl handler); vw=$(get vg.incl work)
	vt=$(awk '$1 == "handler" && $2 ~ /^0x/ { s += $4 } END { print s + 0 }' vg.edges)
	vr=$(awk '$1 == "work" && $2 == "raise" { print $4 }' vg.edges)
	cr=$(awk '$1 == "work" && $2 == "raise" { print $4 }' ct.edges)
	[ "$(get ct.incl work)" = $((vw + vh)) ] && [ "$cr" = $((vr + vh)) ] &&
		[ "$(get ct.incl handler)" = $((vh - vt)) ] &&
		pass "work, work -> raise and handler as Callgrind's with the handler moved" ||
		fail "signal: work $(get ct.incl work) (Callgrind $vw + handler $vh), work -> raise $cr (Callgrind $vr), handler $(get ct.incl handler) (Callgrind $vh - $vt)"
	for f in vg ct; do
		grep -v -E '^(work|handler) ' $f.incl >$f.i && mv $f.i $f.incl
		grep -v -E '^(work raise|handler 0x[0-9a-f]*) ' $f.edges >$f.e &&
			mv $f.e $f.edges
	done
fi
[ -s ct.cg.warn ] && { cat ct.cg.warn; fail "callgrind_annotate warns about our file"; }
if [ ! -s ct.incl ] && [ "$P" = exception ]; then
	:
elif diff vg.incl ct.incl >incl.diff; then
	pass "inclusive Ir of $(wc -l <ct.incl) functions as Callgrind's"
else
	fail "inclusive Ir per function (< Callgrind, > ours):"; cat incl.diff
fi
if diff vg.edges ct.edges >edges.diff; then
	pass "$(wc -l <ct.edges) ${what:-caller -> callee pairs: calls and inclusive Ir} as Callgrind's"
else
	fail "call edges 'caller callee calls Ir' (< Callgrind, > ours):"; cat edges.diff
fi

# Nothing lost: the folded Ir, the callgrind totals and the flat summary.
flat=$(sed -n 's/^summary: \([0-9]*\).*/\1/p' ct.flat)
tot=$(sed -n 's/^totals: \([0-9]*\).*/\1/p' ct.cg)
fold=$(awk '{ s += $NF } END { print s + 0 }' ct.folded)
[ "$flat" = "$tot" ] && [ "$flat" = "$fold" ] &&
	pass "Ir $flat in the flat, callgrind and folded files" ||
	fail "Ir: flat $flat, callgrind totals $tot, folded $fold"

# Stacks relative to work(): PREFIX is what is above it (main's callers).
# A frame may hold a space ("(below main)", as Callgrind names _start):
# the count is after the last one; ct.stacks has "stack<TAB>count".
sed 's/ \([0-9]*\)$/\t\1/' ct.folded >ct.stacks
prefix=$(awk -F '\t' '$1 ~ /;work$/ { sub(/work$/, "", $1); print $1; exit }' ct.stacks)
[ -n "$prefix" ] || fail "no stack ends in work"
stack_is() {	# stack_is FN "work;...;FN": FN's stacks are exactly that
	got=$(awk -F '\t' -v f="$1" '{ n = split($1, s, ";"); if (s[n] == f) print $1 }' ct.stacks | sort -u)
	[ "$got" = "$prefix$2" ] && pass "$1 only under $2" ||
		fail "$1: stacks '$got', expected '$prefix$2'"
}
no_stack() {	# no_stack REGEX WHAT
	if grep -E -q "$1" ct.folded; then
		fail "$2:"; grep -E "$1" ct.folded | head -5
	else
		pass "$2"
	fi
}
max_below_work() {	# at most N frames below work() in any stack
	deep=$(awk -F '\t' -v p="$prefix" '{ s = $1; if (index(s, p) == 1) s = substr(s, length(p) + 1); else { print 999; next } print split(s, a, ";") - 1 }' ct.stacks | sort -n | tail -1)
	[ "$deep" -le "$1" ] && pass "stacks at most $1 frames below work ($deep)" ||
		fail "a stack $deep frames below work (at most $1 expected), or not under work"
}
no_stack ';work;(.*;)?work(;| )' "work() never sits above itself"
case $P in
calls)
	stack_is d8 "work;d1;d2;d3;d4;d5;d6;d7;d8"
	no_stack "fib'2;fib'2|pong'2;ping'2;pong'2" "recursion folded: bounded stacks"
	max_below_work 12 ;;
longjmp)
	stack_is after_jump "work;after_jump"
	no_stack 'down[0-9].*after_jump|after_jump;' "after_jump never under the frames left by longjmp"
	max_below_work 6 ;;
exception)
	# The catch block is in work.cold, entered by a jump to its start
	# (a tail call, as for Callgrind).
	stack_is _ZL11after_catchl "work;work.cold;_ZL11after_catchl"
	no_stack '_ZL4mid.*after_catch|after_catchl;' "after_catch never under the frames the exception left"
	max_below_work 16 ;;
threads)
	stack_is leaf_m "work;leaf_m"
	got=$(awk -F '\t' '$1 ~ /leaf_w$/ { print $1 }' ct.stacks)
	[ "$got" = "clone3;start_thread;worker;leaf_w" ] &&
		pass "the second thread's stack is its own" ||
		fail "leaf_w: stacks '$got', expected clone3;start_thread;worker;leaf_w"
	no_stack 'work;.*(worker|leaf_w)|worker;.*(work|leaf_m)' "no thread's frames on the other's stack" ;;
signal)
	stack_is after_signal "work;after_signal"
	no_stack 'handler.*after_signal|after_signal;' "after_signal never under the handler"
	grep -E -q ";work;raise;.*;handler;in_handler " ct.folded &&
		pass "the handler runs under raise()" ||
		fail "in_handler not under work;raise;...;handler"
	max_below_work 8 ;;
esac

[ "$fails" -eq 0 ] && echo "$P: all passed" && exit 0
exit 1
