#!/bin/sh
# Bad input with -p: no such pid, not a number, a zombie, permission
# denied (cachetrace run as nobody against root's server), already traced
# (tests/attach/peekdr --hold), start symbol not found. Each: a one-line
# error saying why, exit 1 or 2; the server is left untouched: running,
# untraced, its text intact, answering, its output the untraced run's.
. "$(dirname "$0")/lib.sh"
S=bp$$; Z=bz$$
build server $S
build_peekdr
cp /bin/sleep $Z; NAMES="$NAMES $Z"

expect_error() {	# expect_error WHAT REGEX CMD...
	what=$1; re=$2; shift 2
	"$@" >out.txt 2>err.txt </dev/null
	rc=$?
	if [ "$rc" -ne 1 ] && [ "$rc" -ne 2 ]; then
		fail "$what: exit status $rc, expected 1 or 2: $(cat err.txt)"
		return
	fi
	lines=$(wc -l <err.txt)
	if [ "$lines" -lt 1 ] || [ "$lines" -gt 2 ]; then
		fail "$what: expected a one-line error, got $lines lines:"
		cat err.txt; return
	fi
	if ! head -n 1 err.txt | grep -Eiq -- "$re"; then
		fail "$what: message does not match /$re/: $(cat err.txt)"
		return
	fi
	pass "$what: $(head -n 1 err.txt)"
}
untouched() {	# untouched WHAT REQUEST
	check_free $spid "$1"
	check_text $spid ./$S "$1"
	echo "h $2" >&3
}

printf 'h 1\nh 2\nh 3\nh 4\nh 5\nh 6\n' | ./$S >ref.out
rm -f req; mkfifo req
./$S <req >tgt.out &
spid=$!
exec 3>req
echo 'h 1' >&3

true & dead=$!; wait $dead
expect_error "no such pid" "$dead.*(no such|not exist)|(no such|not exist).*$dead" \
	"$CT" -q -p $dead --start=handler
expect_error "pid not a number" "-p.*12x|12x.*(pid|number)" "$CT" -q -p 12x --start=handler
expect_error "pid 0" "pid|number" "$CT" -q -p 0 --start=handler

sh -c "./$Z 0 & exec ./$Z 30" & zparent=$!
zombie=""
for i in $(seq 1 50); do
	zombie=$(pgrep -P $zparent -x $Z)
	[ -n "$zombie" ] && [ "$(proc_field $zombie State)" = Z ] && break
	sleep 0.1
done
if [ -n "$zombie" ] && [ "$(proc_field $zombie State)" = Z ]; then
	expect_error "zombie" "zombie" "$CT" -q -p $zombie --start=main
else
	fail "could not make a zombie"
fi
kill $zparent; wait $zparent 2>/dev/null
# The zombie, now init's, is reaped by it.
for i in $(seq 1 50); do pgrep -x $Z >/dev/null || break; sleep 0.1; done

untouched "after the pid errors" 2
expect_error "permission denied" \
	"(permission|not permitted).*(root|CAP_SYS_PTRACE|ptrace_scope)" \
	setpriv --reuid=65534 --regid=65534 --clear-groups \
	"$CT" -q -o /tmp/never.cg -p $spid --start=handler
untouched "after permission denied" 3

"$PEEKDR" --hold $spid >hold.out 2>&1 & holder=$!
if wait_traced $spid; then
	expect_error "already traced" "(already|traced|debugger).*$holder|$holder.*(trac|debug)" \
		"$CT" -q -p $spid --start=handler
	kill $holder; wait $holder 2>/dev/null
	for i in $(seq 1 30); do
		[ "$(proc_field $spid TracerPid)" = 0 ] && break; sleep 0.1
	done
	untouched "after already traced" 4
else
	fail "peekdr --hold could not attach: $(cat hold.out)"
	kill $holder
fi

expect_error "unknown start symbol" "nosuchfn.*not found.*$S" \
	"$CT" -q -p $spid --start=nosuchfn
untouched "after unknown symbol" 5
expect_error "unknown library symbol" "nosuchfn.*not found.*libc" \
	"$CT" -q -p $spid --start=libc.so.6:nosuchfn
untouched "after unknown library symbol" 6
exec 3>&-
wait_gone $spid 10 || fail "the server did not end at EOF"
wait $spid
cmp -s ref.out tgt.out && pass "server output intact" ||
	fail "server output differs: $(diff ref.out tgt.out | head -4)"
finish
