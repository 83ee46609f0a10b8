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
}
bad 2 "is not a count" --intervals=" -1" --start=work -- ./"$T" exit 0
bad 2 "leading 0" --intervals=010 --start=work -- ./"$T" exit 0
bad 2 "too large" --intervals=4294967296 --start=work -- ./"$T" exit 0
bad 2 "too large" --cores=4294967297 -- ./"$T" exit 0
bad 2 "is not a count" --max-instructions=0x10 -- ./"$T" exit 0
bad 2 "option -o needs a value" -o
bad 2 "option --start needs a value" --start
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
