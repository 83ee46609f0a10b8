#!/bin/sh
# Bad input: a one-line error naming the problem, exit status 1 or 2, no
# process left behind, and no crash.
. "$(dirname "$0")/lib.sh"
# A name of our own, so that the leftover check sees only our processes.
P=bi$$
build loop && mv loop $P
cp $P ${P}s && strip ${P}s
printf '#!/bin/sh\necho hi\n' > noexec.sh && chmod -x noexec.sh

expect_error() {	# expect_error WHAT REGEX CMD...
	what=$1; re=$2; shift 2
	"$@" >out.txt 2>err.txt </dev/null
	rc=$?
	if [ "$rc" -ne 1 ] && [ "$rc" -ne 2 ]; then
		fail "$what: exit status $rc, expected 1 or 2"; return
	fi
	lines=$(wc -l <err.txt)
	if [ "$lines" -lt 1 ] || [ "$lines" -gt 2 ]; then
		fail "$what: expected a one-line error, got $lines lines:"
		cat err.txt; return
	fi
	if ! head -n 1 err.txt | grep -Eq "$re"; then
		fail "$what: message does not match /$re/:"; cat err.txt; return
	fi
	pass "$what: $(head -n 1 err.txt)"
}

expect_error "missing program" "nosuchprog.*(No such file|not found)" \
	"$CT" -q -- ./nosuchprog
expect_error "not executable" "noexec.sh.*not executable" \
	"$CT" -q -- ./noexec.sh
expect_error "directory" "is a directory" "$CT" -q -- /tmp
expect_error "no program" "no program" "$CT" -q
expect_error "unknown option" "unknown option" "$CT" --frobnicate -- ./$P
expect_error "unknown engine" "engine: instrument, emulate, step, lockstep, lockstep:instrument or native, not 'fast'" \
	"$CT" -q --engine=fast -- ./$P 1
expect_error "unknown CACHETRACE_ENGINE" \
	"CACHETRACE_ENGINE: instrument, emulate, step, lockstep, lockstep:instrument or native, not 'fast'" \
	env CACHETRACE_ENGINE=fast "$CT" -q -- ./$P 1
expect_error "unknown start symbol" \
	"'wrok' not found in $P.*did you mean 'work'" \
	"$CT" -q --start=wrok -- ./$P 1
no_leftover $P "unknown start symbol"
expect_error "unknown library symbol" "nosuchfunc.*not found" \
	"$CT" -q --start=libc.so.6:nosuchfunc -- ./$P 1
no_leftover $P "unknown library symbol"
expect_error "stripped binary" "symbol" \
	"$CT" -q --start=work -- ./${P}s 1
no_leftover ${P}s "stripped binary"
expect_error "bad geometry: sets" "power of two" \
	"$CT" -q --D1=3072,1,64 -- ./$P 1
expect_error "bad geometry: line" "line" \
	"$CT" -q --I1=32768,8,8 -- ./$P 1
expect_error "bad geometry: assoc" "assoc" \
	"$CT" -q --LL=1024,32,64 -- ./$P 1
expect_error "bad geometry: syntax" "D1" "$CT" -q --D1=32k -- ./$P 1
expect_error "bad yes/no" "yes or no" "$CT" -q --cache-sim=maybe -- ./$P
expect_error "unwritable output" "cannot write.*nodir/out" \
	"$CT" -q -o "$W/nodir/out" -- ./$P 1
no_leftover $P "unwritable output"
expect_error "bad %-sequence" "%" "$CT" -q -o 'out.%z' -- ./$P 1
no_leftover $P "bad %-sequence"
expect_error "--stop without --start" "needs --start" \
	"$CT" -q --stop=work -- ./$P 1
finish
