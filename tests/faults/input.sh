#!/bin/sh
# Bad input (issue 10): one line naming the problem, a non-zero exit,
# nothing started.
. "$(dirname "$0")/lib.sh"
bad() {	# bad STATUS PATTERN ARGS...
	want=$1 pat=$2; shift 2
	"$CT" "$@" > out.txt 2> err.txt
	rc=$?
	expect "$*: status" $rc "$want"
	grep -q -- "$pat" err.txt || fail "$*: message lacks '$pat': $(head -1 err.txt)"
	[ -s out.txt ] && fail "$*: the target ran: $(head -2 out.txt)"
}
bad 2 "is not a count" --intervals=" -1" --start=work -- ./"$T" exit 0
bad 2 "leading 0" --intervals=010 --start=work -- ./"$T" exit 0
bad 2 "too large" --intervals=4294967296 --start=work -- ./"$T" exit 0
bad 2 "too large" --cores=4294967297 -- ./"$T" exit 0
bad 2 "is not a count" --max-instructions=0x10 -- ./"$T" exit 0
bad 2 "^cachetrace: -o: needs a value" -o
bad 2 "^cachetrace: --start: needs a value" --start
# Issue 26, item 7: every option found wrong before anything runs is bad
# usage (status 2), its message naming the option first.
bad 2 "^cachetrace: --I1: line size 63 is not a power of two" --I1=32768,8,63 -- ./"$T" exit 0
bad 2 "^cachetrace: --I1: size 30000 is not a multiple" --I1=30000,8,64 -- ./"$T" exit 0
bad 2 "^cachetrace: --D1: size 64 is not larger than the line size" --D1=64,8,64 -- ./"$T" exit 0
bad 2 "^cachetrace: --D1: .* size must not be 0" --D1=0,8,64 -- ./"$T" exit 0
bad 2 "^cachetrace: -o: '': no file name given" -o '' -- ./"$T" exit 0
bad 2 "^cachetrace: -o: 'x.%z': expected p, q{VAR}, n or % after %" -o x.%z -- ./"$T" exit 0
bad 2 "^cachetrace: --callgrind-out-file: 'c.%q': expected '{'" --callgrind-out-file=c.%q -- ./"$T" exit 0
bad 2 "^cachetrace: --model: unknown cache model 'nosuch' (known: cachegrind hier host jaguar)" --model=nosuch -- ./"$T" exit 0
bad 2 "^cachetrace: --branch-model: unknown branch model 'nope'" --branch-model=nope -- ./"$T" exit 0
bad 2 "^cachetrace: --cache is an option of --model=hier" --cache=L1:32k:8:64 -- ./"$T" exit 0
bad 2 "^cachetrace: --cores: jaguar has 8 cores, not 16" --model=jaguar --cores=16 -- ./"$T" exit 0
bad 2 "^cachetrace: --folded-event: needs --folded-out-file" --folded-event=Dr --call-stacks=yes -- ./"$T" exit 0
bad 2 "^cachetrace: --call-stacks=no: --folded-out-file needs the call stacks" --folded-out-file=f.txt --call-stacks=no -- ./"$T" exit 0
# Item 3: a geometry the model would not use is refused, not ignored.
bad 2 "^cachetrace: --I1: --model=hier with --cache simulates the levels of --cache" \
	--model=hier --cache=L1I:32k:8:64,L1D:32k:8:64,L2:1M:8:64 --I1=65536,8,64 -- ./"$T" exit 0
bad 2 "^cachetrace: --LL: --model=jaguar simulates its own levels" --model=jaguar --LL=8388608,16,64 -- ./"$T" exit 0
bad 2 "^cachetrace: --D1: --model=host simulates this host's own levels" --model=host --D1=32768,8,64 -- ./"$T" exit 0
# Item 8: -h is --help; a misspelt option gets the nearest names.
"$CT" -h > out.txt 2> err.txt
expect "-h: status" $? 0
grep -q "^usage: cachetrace" out.txt || fail "-h: no usage: $(head -2 out.txt err.txt)"
bad 2 "^cachetrace: unknown option '--strat=compute'; did you mean '--start'?" --strat=compute -- ./"$T" exit 0
bad 2 "^cachetrace: unknown option '--intervls=2'; did you mean '--intervals'?" --intervls=2 -- ./"$T" exit 0
bad 2 "^cachetrace: unknown option '--cahce=L1:32k:8:64'; did you mean '--cache'?" --cahce=L1:32k:8:64 -- ./"$T" exit 0
bad 2 "^cachetrace: unknown option '--zzzzzzzz'$" --zzzzzzzz -- ./"$T" exit 0

bad 1 "kernel thread" -p 2 --start=main
sh -c "exec \"$CT\" -p \$\$ --start=main" > out.txt 2> err.txt
expect "-p own pid: status" $? 1
grep -q "cachetrace itself" err.txt || fail "-p own pid: $(cat err.txt)"
# A 32-bit ELF (its header is enough: nothing runs).
printf '\177ELF\001\001\001\000\000\000\000\000\000\000\000\000\002\000\003\000' > elf32
chmod +x elf32
bad 1 "32-bit" -- ./elf32
# An empty PATH element is the current directory.
mkdir -p bin && cp "$T" bin/mytool
(cd bin && PATH=:/nonexistent "$CT" $G -o ../p.cg -- mytool exit 0 \
	> ../p.out 2>&1)
expect "PATH=:/x mytool: status" $? 0
finish
