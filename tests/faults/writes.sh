#!/bin/sh
# Issue 10, 8, 9 and 11: a write that fails is a non-zero exit and never a
# truncated file; a bad option never touches an existing profile; bad
# output names are refused before anything runs; profiles get the umask's mode,
# created safely (temporary + rename), and no file leaks into the target.
. "$(dirname "$0")/lib.sh"
run() { "$CT" $G --start=work "$@" -- ./"$T" exit 0 > /dev/null 2> w.err; }
run -o /dev/full
expect "-o /dev/full: status" $? 1
# The option first (issue 26, item 7).
grep -q "^cachetrace: -o: cannot write /dev/full: No space left" w.err ||
	fail "-o /dev/full: message: $(cat w.err)"
run --trace-mem=/dev/full -o t.cg
expect "--trace-mem=/dev/full: status" $? 1
grep -q "^cachetrace: --trace-mem: cannot write /dev/full: No space left" w.err ||
	fail "--trace-mem=/dev/full: message: $(cat w.err)"
run --call-stacks=yes --callgrind-out-file=/dev/full -o c.cg
expect "--callgrind-out-file=/dev/full: status" $? 1
run --call-stacks=yes --callgrind-out-file=c.callgrind \
	--folded-out-file=/dev/full -o c.cg
expect "--folded-out-file=/dev/full: status" $? 1
# A full filesystem: the old profile stays whole, no temporary file left.
mkdir full
if unshare -m sh -c "mount -t tmpfs -o size=8k tmpfs full &&
	echo old > full/p.cg && dd if=/dev/zero of=full/fill bs=1k count=8 \
		2>/dev/null; \"$CT\" $G --start=work -o full/p.cg -- ./$T exit 0 \
		> /dev/null 2> full.err; echo \$? > full.rc; cat full/p.cg > \
		full.after; ls -A full > full.ls"; then
	expect "full tmpfs: status" "$(cat full.rc)" 1
	expect "full tmpfs: the old profile" "$(cat full.after)" old
	expect "full tmpfs: files left" "$(tr '\n' ' ' < full.ls)" "fill p.cg "
else
	fail "cannot mount a tmpfs (the test runs as root)"
fi
# The annotator's outputs likewise (issue 26: it wrote them with fopen, a
# failed write left a truncated file): /dev/full, then a full tmpfs.
ANN=$(dirname "$CT")/cachetrace-annotate
run -o a.cg
for o in "-o /dev/full" "--html=/dev/full" "--flamegraph=/dev/full"; do
	"$ANN" $o a.cg > /dev/null 2> a.err
	expect "annotate $o: status" $? 1
	grep -q "^cachetrace-annotate: ${o%%[= ]*}: cannot write /dev/full" a.err ||
		fail "annotate $o: $(cat a.err)"
done
mkdir afull
if unshare -m sh -c "mount -t tmpfs -o size=8k tmpfs afull &&
	echo old > afull/r.html && dd if=/dev/zero of=afull/fill bs=1k count=8 \
		2>/dev/null; \"$ANN\" --html=afull/r.html a.cg \
		> /dev/null 2> afull.err; echo \$? > afull.rc; cat afull/r.html > \
		afull.after; ls -A afull > afull.ls"; then
	expect "annotate --html, full tmpfs: status" "$(cat afull.rc)" 1
	expect "annotate --html, full tmpfs: the old page" "$(cat afull.after)" old
	expect "annotate --html, full tmpfs: files left" "$(tr '\n' ' ' < afull.ls)" "fill r.html "
else
	fail "cannot mount a tmpfs (the test runs as root)"
fi
# A typo in --start: the existing profile is untouched.
echo keep > keep.cg
"$CT" $G --start=wrok -o keep.cg -- ./"$T" exit 0 > /dev/null 2> typo.err
expect "--start typo: status" $? 1
expect "--start typo: the existing profile" "$(cat keep.cg)" keep
# Bad names are refused before the target is started.
# /proc: access() says yes to root, the file cannot be made (issue 26).
for bad in "--callgrind-out-file=$W" "-o $W/nodir/p.cg" "-o /proc/p.cg" \
	   "--html=/proc/r.html" "--folded-out-file=/proc/f.txt"; do
	"$CT" $G --start=work $bad -- ./"$T" exit 0 > out.txt 2> bad.err
	expect "$bad: status" $? 1
	[ -s out.txt ] && fail "$bad: the target ran"
	grep -q "^cachetrace: ${bad%%[= ]*}: cannot write" bad.err ||
		fail "$bad: message: $(cat bad.err)"
done
"$CT" $G --start=work --folded-event=bogus --folded-out-file=f.txt -- \
	./"$T" exit 0 > out.txt 2> bad.err
expect "--folded-event=bogus: status (bad usage)" $? 2
[ -s out.txt ] && fail "--folded-event=bogus: the target ran"
# The umask's mode (issue 26: 0600 whatever the umask); a symlink at the
# name is replaced, its target untouched.
echo secret > victim
ln -s victim link.cg
(umask 022 && run -o link.cg)
expect "profile over a symlink: status" $? 0
expect "the symlink's target" "$(cat victim)" secret
expect "the profile's mode under umask 022" "$(stat -c %a link.cg)" 644
(umask 027 && run -o link.cg --html=r.html)
expect "the profile's mode under umask 027" "$(stat -c %a link.cg)" 640
expect "the HTML page's mode under umask 027" "$(stat -c %a r.html)" 640
[ -L link.cg ] && fail "the symlink was followed"
expect "temporary files left" "$(ls -A | grep -c '^\.')" 0
# No file of cachetrace's is open in the launched target.
cat > fds.sh <<'EOS'
ls -l /proc/$$/fd | grep -c 'trace.txt\|\.cg'
EOS
"$CT" $G --trace-mem=trace.txt -o fd.cg -- /bin/sh fds.sh > fds.out 2>&1
expect "cachetrace's files open in the target" "$(cat fds.out)" 0
# A newline in an argument does not inject lines into the profile.
"$CT" $G --start=work -o nl.cg -- ./"$T" exit 0 "$(printf 'x\nfl=evil.c')" \
	> /dev/null 2>&1
grep -q "^fl=evil.c" nl.cg && fail "a newline in cmd: injected a line"
cg_annotate nl.cg > /dev/null 2>&1 || fail "cg_annotate rejects nl.cg"
finish
