#!/bin/bash
# cachetrace-annotate tests that run the binary: cases.sh ANNOTATE SRCDIR CASE
# Exit 0 pass, 1 fail (with what differed).
ann=$(realpath "$1") srcdir=$(realpath "$2") case=$3
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
fail=0
die() { echo "FAIL: $*"; fail=1; }

# expect_error NAME LINE REGEX: run on $tmp/NAME, want status 1 and
# exactly "NAME:LINE: ..." matching REGEX on stderr.
expect_error() {
	local name=$1 line=$2 re=$3 err rc
	err=$(cd "$tmp" && "$ann" "$name" 2>&1 >/dev/null); rc=$?
	[ $rc -eq 1 ] || die "$name: exit status $rc, want 1 ($err)"
	[[ $err =~ ^"$name:$line: "$re ]] ||
		die "$name: stderr '$err', want '$name:$line: $re'"
}

case $case in
golden)
	cp -r "$srcdir/golden" "$tmp/g"
	cd "$tmp/g" || exit 1
	touch -d 2020-01-01 src/a.c && touch -d 2021-01-01 basic.cgout
	"$ann" --context=1 basic.cgout > out 2> err || die "exit status $?"
	diff -u basic.expected out || die "output differs from basic.expected"
	[ -s err ] && die "unexpected stderr: $(cat err)"
	;;
badness)
	# Hand-checked values in badness.cgout's comment: below 1 they rank.
	cd "$srcdir/golden" || exit 1
	"$ann" --badness --annotate=no --threshold=0 badness.cgout > "$tmp/out" \
		2> "$tmp/err" || die "exit status $?"
	diff -u badness.expected "$tmp/out" || die "output differs from badness.expected"
	[ -s "$tmp/err" ] && die "unexpected stderr: $(cat "$tmp/err")"
	;;
newer)
	cp -r "$srcdir/golden" "$tmp/g"
	cd "$tmp/g" || exit 1
	touch -d 2020-01-01 basic.cgout && touch -d 2021-01-01 src/a.c
	"$ann" basic.cgout > out || die "exit status $?"
	grep -qxF "@ Source file 'src/a.c' is newer than the profile data." out ||
		die "no newer-source warning"
	grep -q "^@@ WARNING" out || die "no warning banner"
	;;
include)
	mkdir -p "$tmp/d1/src" "$tmp/d2/src" "$tmp/run"
	cp "$srcdir/golden/src/a.c" "$tmp/d1/src/a.c"
	printf 'one\nint work(void) { return 0; }\nthree\n' > "$tmp/d2/src/b.c"
	cp "$srcdir/golden/basic.cgout" "$tmp/run/"
	cd "$tmp/run" || exit 1
	"$ann" -I ../d1 --include=../d2 basic.cgout > out || die "exit status $?"
	grep -qxF -- "-- Annotated source file: ../d1/src/a.c" out || die "a.c not found in -I ../d1"
	grep -qxF -- "-- Annotated source file: ../d2/src/b.c" out || die "b.c not found in --include=../d2"
	grep -q "could not be found" out && die "files reported missing"
	# b.c line 2 holds work's 100 Ir (50.0%), 50 Dr, 5 DLmr.
	grep -qE '^100 \(50\.0%\) 50 \(61\.0%\) 5 \(62\.5%\)  int work' out ||
		die "b.c line 2 not annotated with 100 50 5"
	"$ann" basic.cgout > out2
	grep -A3 "could not be found" out2 | grep -qx "src/a.c" || die "a.c not listed as missing"
	;;
stdin)
	cd "$srcdir/golden" || exit 1
	"$ann" --output-profile=- basic.cgout > "$tmp/f" || die "file"
	"$ann" --output-profile=- < basic.cgout > "$tmp/s" || die "stdin"
	cat basic.cgout | "$ann" --output-profile=- - > "$tmp/p" || die "pipe"
	cmp -s "$tmp/f" "$tmp/s" && cmp -s "$tmp/f" "$tmp/p" || die "stdin profile differs"
	cat basic.cgout | "$ann" --annotate=no - > "$tmp/r" || die "report"
	grep -qx "Data file:        <stdin>" "$tmp/r" || die "no '<stdin>' data file"
	grep -q "200 (100.0%) 82 (100.0%) 8 (100.0%)  PROGRAM TOTALS" "$tmp/r" || die "totals"
	printf 'cmd: x\nevents: Ir\nfl=a\nfn=f\n1 1\n' | "$ann" - 2> "$tmp/e" >/dev/null
	grep -q '^<stdin>:5: unexpected end of file: no summary: line' "$tmp/e" ||
		die "stdin error: $(cat "$tmp/e")"
	# A terminal on standard input (a pseudo-terminal here): no FILE is
	# an error at once, not a silent wait; - reads the terminal (to ^D).
	python3 - "$ann" basic.cgout <<'E' || die "terminal on standard input"
import os, pty, select, sys, time
ann, prof = sys.argv[1], sys.argv[2]

def run(args, feed=b''):
    """ANN ARGS on a new pseudo-terminal: (exit status, output), or
    (None, output) when it still runs after 10 s."""
    pid, fd = pty.fork()
    if pid == 0:
        os.execv(ann, [ann] + args)
    os.write(fd, feed)
    out, end = b'', time.time() + 10
    while True:
        if select.select([fd], [], [], 0.1)[0]:
            try:
                out += os.read(fd, 65536)
            except OSError:      # EIO: the child is gone
                pass
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            while select.select([fd], [], [], 0.1)[0]:
                try:
                    data = os.read(fd, 65536)
                except OSError:
                    break
                if not data:
                    break
                out += data
            os.close(fd)
            return os.waitstatus_to_exitcode(status), out.decode()
        if time.time() > end:
            os.kill(pid, 9)
            os.waitpid(pid, 0)
            os.close(fd)
            return None, out.decode()

bad = []
rc, out = run(['--annotate=no'])
want = ('cachetrace-annotate: no profile given (a file, or - for standard '
        'input); see --help\r\n')
if rc != 2 or out != want:
    bad.append('no FILE: status %s, output %r; want 2, %r' % (rc, out, want))
rc, out = run(['--tree=callee'])
if rc != 2 or out != want:
    bad.append('--tree=callee, no FILE: status %s, output %r' % (rc, out))
data = open(prof, 'rb').read()
rc, out = run(['--annotate=no', '-'], data + b'\x04')
if rc != 0 or '200 (100.0%) 82 (100.0%) 8 (100.0%)  PROGRAM TOTALS' not in out:
    bad.append('-: status %s, output %r' % (rc, out[-300:]))
for b in bad:
    print('FAIL:', b)
sys.exit(1 if bad else 0)
E
	;;
merge)
	cd "$srcdir/merge" || exit 1
	"$ann" --output-profile="$tmp/m" m1.cgout m2.cgout || die "exit status $?"
	diff -u merged.expected "$tmp/m" || die "merged profile differs"
	printf 'cmd: x\nevents: Ir Dw\nsummary: 0 0\n' > "$tmp/other.cgout"
	"$ann" m1.cgout "$tmp/other.cgout" > /dev/null 2> "$tmp/e"
	[ $? -eq 1 ] || die "merging different events: want status 1"
	grep -q "^$tmp/other.cgout:2: event 2 is 'Dw', in the first input it is 'Dr'" "$tmp/e" ||
		die "events mismatch: $(cat "$tmp/e")"
	# The report of the merge: f is 18 Ir of 22.
	"$ann" --annotate=no m1.cgout m2.cgout > "$tmp/r"
	grep -qx "Files merged:     m1.cgout, m2.cgout" "$tmp/r" || die "Files merged line"
	grep -qE '^> +18 \(81\.8%, +81\.8%\) +2 \(33\.3%, +33\.3%\)  f:x\.c$' "$tmp/r" ||
		die "merged f line: $(grep 'f:x' "$tmp/r")"
	;;
diff)
	cd "$srcdir/merge" || exit 1
	"$ann" --diff --mod-filename='s/v[0-9]/vN/' --mod-funcname='s/T\.[0-9]+/T.N/' \
		--output-profile="$tmp/d" d1.cgout d2.cgout || die "exit status $?"
	diff -u diff.expected "$tmp/d" || die "diffed profile differs"
	"$ann" --diff --mod-filename='s/v[0-9]/vN/' --mod-funcname='s/T\.[0-9]+/T.N/' \
		--annotate=no d1.cgout d2.cgout > "$tmp/r"
	grep -qx "Files compared:   d2.cgout - d1.cgout" "$tmp/r" || die "Files compared line"
	grep -qE '^> +-10 \(-71\.4%, +71\.4%\)' "$tmp/r" || die "main -10 line: $(grep main: "$tmp/r")"
	# Without the rewrites nothing lines up: four functions.
	"$ann" --diff --output-profile=- d1.cgout d2.cgout | grep -c '^fn=' | grep -qx 5 ||
		die "unmodified diff should have 5 fn= lines"
	"$ann" --diff d1.cgout 2>/dev/null; [ $? -eq 2 ] || die "--diff with one file: want status 2"
	"$ann" --mod-filename='x/a/b/' d1.cgout 2>/dev/null; [ $? -eq 2 ] || die "bad s///: want 2"
	;;
malformed)
	cd "$tmp" || exit 1
	hdr='cmd: ./p\nevents: Ir Dr\n'
	printf "${hdr}fl=a.c\nfn=f\n1 2 3\n2 4" > trunc.cgout
	expect_error trunc.cgout 6 "incomplete last line"
	printf "${hdr}fl=a.c\nfn=f\n1 2 3x\n" > badcount.cgout
	expect_error badcount.cgout 5 "bad count '3x'"
	printf "${hdr}fl=a.c\nfn=f\n1 99999999999999999999\n" > big.cgout
	expect_error big.cgout 5 "count '99999999999999999999' is too large"
	printf "${hdr}fl=a.c\n1 2 3\n" > nofn.cgout
	expect_error nofn.cgout 4 "counts before any fn= line"
	printf "${hdr}1 2 3\n" > nofl.cgout
	expect_error nofl.cgout 3 "counts before any fl= and fn= line"
	printf "${hdr}fn=f\n" > fnfirst.cgout
	expect_error fnfirst.cgout 3 "fn= line before any fl= line"
	printf "${hdr}fl=a.c\nfn=f\n# comment\n\n1 2 3 4\n" > many.cgout
	expect_error many.cgout 7 "too many counts"
	printf "${hdr}fl=a.c\nfn=f\n1 2 3\n2 1 .\nsummary: 3 4\n" > summ.cgout
	expect_error summ.cgout 7 "summary: Dr is 4 but the counts add up to 3"
	"$ann" --no-summary-check summ.cgout > /dev/null || die "--no-summary-check"
	printf "${hdr}fl=a.c\nfn=f\n1 2 3\n" > nosumm.cgout
	expect_error nosumm.cgout 5 "unexpected end of file: no summary: line"
	printf "${hdr}fl=a.c\nfn=f\nsummary: 0 0\n1 2\n" > after.cgout
	expect_error after.cgout 6 "line after the summary: line"
	printf "cmd: x\nevents: Ir Ir\n" > dup.cgout
	expect_error dup.cgout 2 "event 'Ir' appears twice"
	printf "events: Ir\n" > nocmd.cgout
	expect_error nocmd.cgout 1 "expected a desc: or cmd: line"
	printf "${hdr}fl=a\x00b\n" > nul.cgout
	expect_error nul.cgout 3 "NUL byte in file name"
	printf "${hdr}fl=a.c\nfn=f\n1 -\n" > minus.cgout
	expect_error minus.cgout 5 "bad count '-'"
	printf "${hdr}fl=a.c\nfn=f\n1x 2\n" > badline.cgout
	expect_error badline.cgout 5 "malformed line '1x 2'"
	: > empty.cgout
	expect_error empty.cgout 0 "unexpected end of file: no cmd: line"
	# Binary garbage: deterministic bytes, with and without newlines.
	python3 -c 'import sys,random; r=random.Random(4); sys.stdout.buffer.write(bytes(r.randrange(256) for _ in range(100000)))' > garbage.cgout
	err=$("$ann" garbage.cgout 2>&1 >/dev/null); rc=$?
	[ $rc -eq 1 ] && [[ $err =~ ^garbage.cgout:[0-9]+:\  ]] || die "garbage: $rc '$err'"
	# A 2 GiB line, streamed: the error must come after reading about 1 MiB.
	err=$(set +o pipefail; head -c 2147483648 /dev/zero | tr '\0' a | timeout 20 "$ann" - 2>&1 >/dev/null); rc=$?
	[ $rc -eq 1 ] || die "2 GiB line: exit status $rc"
	[[ $err =~ ^"<stdin>:1: line longer than 1048576 bytes" ]] || die "2 GiB line: '$err'"
	;;
sampled)
	# A sampled profile's statistics (cachetrace --sample), worked by
	# hand: 4 samples of 10 Ir each.  f's Ir 1 2 3 2: share 8/40 = 20%,
	# residuals m - 0.2 a = -1 0 1 0, s^2 = 2/3, half width
	# 1.96 sqrt(s^2 / 4) / 10 = 8.00%; g's 9 8 7 8: 80% +-8.00.  f's D1
	# misses 2 0 2 0 of 10 accesses each: 10%, residuals 1 -1 1 -1,
	# s^2 = 4/3, 1.96 sqrt(1/3) / 10 = 11.32%; g has no access: none.
	cd "$tmp" || exit 1
	T=$(printf '\t')
	{ printf 'cmd: ./p\nevents: Ir Dr D1mr\n'
	  printf 'fl=a.c\nfn=f\n1 8 40 4\nfn=g\n2 32\nsummary: 40 40 4\n'
	  printf '# cachetrace-samples: 4 40 400 share D1\n'
	  printf '# cachetrace-sample%sa.c%sf%s4%s8 40 18 400 80%s4 40 8 400 40\n' \
		"$T" "$T" "$T" "$T" "$T"
	  printf '# cachetrace-sample%sa.c%sg%s4%s32 40 258 400 320%s0 0 0 0 0\n' \
		"$T" "$T" "$T" "$T" "$T"
	} > s.cgout
	"$ann" --annotate=no s.cgout > out 2> err || die "exit status $?"
	[ -s err ] && die "unexpected stderr: $(cat err)"
	grep -qx -- '-- Sampled estimates: 4 samples, 95% intervals from the spread between them' out ||
		die "no Sampled estimates section"
	grep -qE '^80\.00% \+-8\.00 +\. +4  a\.c:g$' out || die "g's estimates: $(grep 'a.c:g$' out)"
	grep -qE '^20\.00% \+-8\.00 +10\.00% \+-11\.32 +4  a\.c:f$' out ||
		die "f's estimates: $(grep 'a.c:f$' out)"
	[ "$(grep -n 'a\.c:g$' out | cut -d: -f1)" -lt "$(grep -n 'a\.c:f$' out | tail -1 | cut -d: -f1)" ] ||
		die "g (80%) not before f (20%)"
	"$ann" --html=s.html s.cgout > /dev/null || die "--html: exit status $?"
	grep -q '<td>20.00% &plusmn;8.00</td><td>10.00% &plusmn;11.32</td><td>4</td>' s.html ||
		die "the HTML report lacks f's estimates"
	# cg_annotate skips them (comments)
	cg_annotate s.cgout > cg.out 2>&1 || die "cg_annotate: $(head -3 cg.out)"
	grep -qi warn cg.out && die "cg_annotate warns: $(grep -i warn cg.out)"
	sed 's/8 40 18 400 80/8 40 x 400 80/' s.cgout > bad.cgout
	expect_error bad.cgout 10 "malformed sample statistics: a ratio's sums"
	;;
*)
	echo "unknown case $case"; exit 1 ;;
esac
exit $fail
