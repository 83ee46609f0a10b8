# Shared helpers for the attach tests (sourced).
# Every script is called as: SCRIPT CACHETRACE SRCDIR SCRATCH
set -u
ME=$(basename "$0" .sh)
CT=$(realpath "$1"); SRCDIR=$(realpath "$2"); SCRATCH=$3
W=$SCRATCH/attach-$ME
rm -rf "$W"; mkdir -p "$W"; W=$(realpath "$W"); cd "$W" || exit 1
fails=0
NAMES=""	# process names private to this run, checked by finish
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
pass() { echo "ok: $*"; }
# No test skips: an option cachetrace has is tested, and one it lost is a
# failure of the test that uses it (issue 10).

# build SRC NAME [CFLAGS...]: tests/attach/SRC.c -> ./NAME, non-PIE -O2 -g.
# NAME is private to this run (contains $$) so pgrep sees only ours.
build() {
	src=$1; name=$2; shift 2
	${CC:-cc} -O2 -g -fno-pie -no-pie -o "$name" \
		"$SRCDIR/tests/attach/$src.c" "$@" -lpthread ||
		{ echo "cannot build $src"; exit 1; }
	NAMES="$NAMES $name"
}

# Kill every process of ours still there; report (and fail) if any.
cleanup() {
	for n in $NAMES; do pkill -9 -x "$n" 2>/dev/null; done
	[ -n "${CTPID:-}" ] && kill -9 "$CTPID" 2>/dev/null
	return 0
}
finish() {
	sleep 0.2
	for n in $NAMES; do
		if pgrep -x "$n" >/dev/null; then
			fail "a '$n' process was left behind"
			pkill -9 -x "$n"
		fi
	done
	cleanup
	[ "$fails" -eq 0 ] && echo "$ME: all passed" && exit 0
	exit 1
}
trap 'cleanup' EXIT
trap '' PIPE	# a write to a dead server's pipe must not kill the test

# proc_field PID FIELD: a field of /proc/PID/status (State, TracerPid).
proc_field() {
	awk -v f="$2:" '$1 == f { print $2 }' "/proc/$1/status" 2>/dev/null
}
# wait_traced PID: until cachetrace has seized it (10 s at most).
wait_traced() {
	for i in $(seq 1 100); do
		t=$(proc_field "$1" TracerPid)
		[ -n "$t" ] && [ "$t" != 0 ] && return 0
		sleep 0.1
	done
	return 1
}
# wait_armed PID: cachetrace stops every thread while it attaches and
# arms its start event, then lets them go: until no thread of PID is in a
# ptrace stop (the start event is armed; symbols may take seconds to load
# under ASan).
wait_armed() {
	for i in $(seq 1 300); do
		grep -qs "^State:.*t (tracing stop)" /proc/"$1"/task/*/status ||
			return 0
		sleep 0.1
	done
	return 1
}
# wait_stepping PID: until a thread of PID is seen in a ptrace stop (a
# window is being stepped).
wait_stepping() {
	for i in $(seq 1 300); do
		grep -qs "^State:.*t (tracing stop)" /proc/"$1"/task/*/status &&
			return 0
		sleep 0.05
	done
	return 1
}
# wait_exit PID SECONDS: until the process is gone (not a child of ours).
wait_gone() {
	for i in $(seq 1 $(($2 * 10))); do
		kill -0 "$1" 2>/dev/null || return 0
		sleep 0.1
	done
	return 1
}
# wait_ct SECONDS: wait for cachetrace ($CTPID) to exit, status in $CTRC;
# kill it and return 1 when it hangs.
wait_ct() {
	for i in $(seq 1 $(($1 * 10))); do
		kill -0 "$CTPID" 2>/dev/null || break
		sleep 0.1
	done
	if kill -0 "$CTPID" 2>/dev/null; then
		kill -9 "$CTPID"; wait "$CTPID"; CTRC=hung; CTPID=""; return 1
	fi
	wait "$CTPID"; CTRC=$?; CTPID=""
	return 0
}

# The target is unharmed: running or sleeping (not stopped), not traced.
check_free() {	# check_free PID WHAT
	st=$(proc_field "$1" State); tp=$(proc_field "$1" TracerPid)
	case "$st" in
	R|S|D) pass "$2: target state $st" ;;
	*) fail "$2: target state '$st', expected R or S" ;;
	esac
	[ "$tp" = 0 ] && pass "$2: TracerPid 0" ||
		fail "$2: TracerPid '$tp' after cachetrace exited"
}

# server_free PID WHAT: cachetrace gone, the server (server.c) lives on,
# free.
server_free() {
	if kill -0 "$1" 2>/dev/null; then
		check_free "$1" "$2"
	else
		fail "$2: the server is gone"
	fi
}

# server_finish PID REF WHAT SECS: its last request ('h 3') on fd 3, which
# closes; it must end within SECS with status 0 and REF's output (tgt.out).
server_finish() {
	echo 'h 3' >&3
	exec 3>&-
	wait_gone "$1" "$4" || fail "$3: the server did not finish"
	wait "$1"
	rc=$?
	[ $rc -eq 0 ] && cmp -s "$2" tgt.out && pass "$3: server output intact" ||
		fail "$3: the server's status $rc, output: $(diff "$2" tgt.out | head -3)"
}

# The target's .text in memory equals the file's (no int3 left behind).
check_text() {	# check_text PID BINARY WHAT
	set -- "$1" "$2" "$3" $(readelf -SW "$2" |
		awk '$2 == ".text" { print $4, $5, $6 }')
	addr=$((0x$4)); off=$((0x$5)); size=$((0x$6))
	dd if="$2" of=text.file bs=4096 iflag=skip_bytes,count_bytes \
		skip=$off count=$size 2>/dev/null
	dd if="/proc/$1/mem" of=text.mem bs=4096 iflag=skip_bytes,count_bytes \
		skip=$addr count=$size 2>/dev/null
	if [ "$(stat -c %s text.mem)" -ne "$size" ]; then
		fail "$3: cannot read the target's text"
	elif cmp -s text.file text.mem; then
		pass "$3: text intact ($size bytes)"
	else
		fail "$3: text differs from the file: $(cmp -l text.file text.mem |
			head -3 | tr '\n' ' ')"
	fi
}

# Every thread's DR7 is 0 (tests/attach/peekdr.c attaches briefly).
check_dr7() {	# check_dr7 PID WHAT
	if out=$("$PEEKDR" "$1" 2>&1); then
		pass "$2: DR7 clear in every thread"
	else
		fail "$2: $out"
	fi
}
build_peekdr() {
	${CC:-cc} -O2 -o peekdr "$SRCDIR/tests/attach/peekdr.c" ||
		{ echo "cannot build peekdr"; exit 1; }
	PEEKDR=$W/peekdr
}

# Profile readers. col FILE EVENT: the column of EVENT in events: (1-based).
col() {
	awk -v e="$2" '/^events:/ { for (i = 2; i <= NF; i++) if ($i == e)
		{ print i - 1; exit } }' "$1"
}
# fn_cost FILE FN [EVENT]: FN's total EVENT (default Ir) over all files.
fn_cost() {
	c=$(col "$1" "${3:-Ir}")
	awk -v f="$2" -v c="${c:-1}" '
		/^fl=/ { cur = ""; next }
		/^fn=/ { cur = substr($0, 4); next }
		/^[0-9]/ { if (cur == f) { v = $(c + 1); if (v != ".") s += v } }
		END { print s + 0 }' "$1"
}
# summary FILE [EVENT]
summary() {
	c=$(col "$1" "${2:-Ir}")
	awk -v c="${c:-1}" '/^summary:/ { v = $(c + 1); print (v == "." ? 0 : v + 0) }' "$1"
}
windows() { sed -n 's/^desc: Windows: *//p' "$1"; }
# cg_annotate reads it without a warning.
check_annotate() {	# check_annotate FILE WHAT
	if cg_annotate "$1" >ann.txt 2>ann.err && ! grep -qi warn ann.err ann.txt
	then pass "$2: cg_annotate reads it"
	else fail "$2: cg_annotate: $(head -3 ann.err)"
	fi
}
# vg_run BINARY-AND-ARGS... : run under Cachegrind (no cache sim), the
# output in vg.out; then fn_cost vg.out FN.
vg_run() {
	valgrind --tool=cachegrind --cache-sim=no --branch-sim=no \
		--cachegrind-out-file=vg.out "$@" >vg.stdout 2>vg.err ||
		{ echo "valgrind failed"; cat vg.err; exit 1; }
}
# vg_ref VAR FN: VAR = FN's Ir in vg.out, which must be above 0, else the
# test fails here: our counts compared with an empty reference (a function
# renamed or inlined, a valgrind run that counted nothing) would pass.
vg_ref() {
	eval "$1=\$(fn_cost vg.out $2)"
	eval "v=\$$1"
	case $v in
	''|*[!0-9]*|0) fail "valgrind's reference: $2 Ir '$v', not above 0"
		finish ;;
	esac
}
