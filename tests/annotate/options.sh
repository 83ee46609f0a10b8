#!/bin/bash
# The annotator's command line, as the hand parser before getopt_long took
# it: options.sh ANNOTATE SRCDIR.  Each case: exit status, first stderr line.
ann=$(realpath "$1") srcdir=$(realpath "$2")
cd "$srcdir/golden" || exit 1
fail=0

# want RC STDERR-REGEX ARGS...: run with basic.cgout on stdin.
want() {
	local rc=$1 re=$2 err got
	shift 2
	err=$("$ann" "$@" < basic.cgout 2>&1 >/dev/null | head -n1)
	"$ann" "$@" < basic.cgout > /dev/null 2>&1; got=$?
	if [ "$got" != "$rc" ] || ! [[ $err =~ $re ]]; then
		echo "FAIL: $*: status $got, stderr '$err'; want $rc, '$re'"
		fail=1
	fi
}
u='^cachetrace-annotate: unknown option'
want 0 '^$' --threshold=0.5 --sort=DLmr:1,Ir --show=Ir,DLmr basic.cgout
want 0 '^$' basic.cgout --context=1 --annotate --auto=yes -I. -I . --include=. --include .
want 0 '^$' --show-percs --show-percs=no --no-show-percs --percent=yes -
want 0 '^$' --no-annotate --annotate=no -o - -- basic.cgout
want 0 '^$' --output-profile=- --no-summary-check -
want 0 '^$' -h
want 0 '^$' --help
want 0 '^$' --version
want 2 "$u '-hx'" -hx
want 2 "$u '-ofoo'" -ofoo basic.cgout
want 2 "$u '--thr=0.5'" --thr=0.5 basic.cgout
want 2 "$u '--show'" --show Ir basic.cgout
want 2 "$u '--auto'" --auto basic.cgout
want 2 "$u '--help=x'" --help=x
want 2 "$u '--no'" --no
want 2 "$u '-x'" basic.cgout -x
want 2 ': --annotate: expected yes or no, not .on.' --annotate=on
want 2 ': --percent: expected yes or no, not ..$' --percent=
want 2 ': --threshold: .101. is not a percentage' --threshold=101
want 2 ': --context: bad number .-1.' --context=-1
want 2 ': -I needs a directory' -I
want 2 ': --include needs a directory' --include
want 2 ': -o needs a file name' -o
want 2 ': --blame needs a function name' --blame=
want 2 ': --tree: expected callee, not .caller.' --tree=caller
want 2 ': --diff needs exactly two files' --diff basic.cgout
want 2 ': standard input \(-\) can be read only once' - -
want 1 ': -h: No such file or directory' -- -h
# Every bad usage exits 2, its message lower case and the option first
# (issue 26): empty values, an empty event in a list, sorting on Badness,
# a regular expression's error.
want 2 '^cachetrace-annotate: --output-profile needs a file name$' --output-profile= basic.cgout
want 2 '^cachetrace-annotate: -o needs a file name$' -o '' basic.cgout
want 2 '^cachetrace-annotate: --event needs an event name$' --event= --tree=callee basic.cgout
want 2 '^cachetrace-annotate: --event needs an event name$' --event= --html=- basic.cgout
want 2 '^cachetrace-annotate: --include needs a directory$' --include= basic.cgout
want 2 '^cachetrace-annotate: -I needs a directory$' -I '' basic.cgout
want 2 "^cachetrace-annotate: --sort: empty event name in ''\$" --sort= basic.cgout
want 2 "^cachetrace-annotate: --show: empty event name in 'Ir,,Dr'\$" --show=Ir,,Dr basic.cgout
want 2 "^cachetrace-annotate: --show: empty event name in 'Ir,'\$" --show=Ir, basic.cgout
want 2 '^cachetrace-annotate: --sort: Badness cannot be sorted on$' --sort=Badness basic.cgout
want 2 "^cachetrace-annotate: --mod-filename: 's/\(/x/': unmatched \( or " --mod-filename='s/(/x/' basic.cgout
want 2 "^cachetrace-annotate: --mod-funcname: 's/a/b/x': unknown flag 'x'\$" --mod-funcname=s/a/b/x basic.cgout
want 2 '^cachetrace-annotate: --flamegraph needs a file name$' --flamegraph=
want 2 '^cachetrace-annotate: --html needs a file name$' --html=
want 2 '^cachetrace-annotate: --folded needs --tree' --folded
want 2 '^cachetrace-annotate: --html cannot be used with' --html=- --blame=f
want 2 '^cachetrace-annotate: --tree, --blame and --flamegraph cannot be used with' --tree=callee -o -
want 2 '^cachetrace-annotate: --context: bad number .1x.$' --context=1x
want 2 "^cachetrace-annotate: --sort: '5:3' is not a percentage" --sort=Ir:5:3
want 2 "^cachetrace-annotate: --sort: event 'Ir' given twice\$" --sort=Ir,Ir
# --help is printed as written (fputs): no printf escape in it (it said
# PCT%%), and it names -o FILE.
help=$("$ann" --help)
case $help in *%%*) echo "FAIL: --help has a literal %%"; fail=1 ;; esac
grep -q -- '-o FILE' <<< "$help" || { echo "FAIL: --help does not name -o FILE"; fail=1; }
# An event that is not in the profile: its events listed (issue 26).
ev="is not in the profile's events: Ir Dr DLmr\$"
want 1 "^cachetrace-annotate: --sort: event 'Foo' $ev" --sort=Foo
want 1 "^cachetrace-annotate: --sort: event 'Nope' $ev" --sort=Ir:1,Nope:2
want 1 "^cachetrace-annotate: --show: event 'Nope' $ev" --show=Ir,Nope
want 1 "^cachetrace-annotate: --event: event 'Nope' $ev" --html=- --event=Nope
cs=$srcdir/callgrind/calls.cgout
ev="is not in the profile's events: Ir DLmr\$"
want 1 "^cachetrace-annotate: --event: event 'Nope' $ev" --tree=callee --event=Nope "$cs"
want 1 "^cachetrace-annotate: --event: event 'Nope' $ev" --blame=func2 --event=Nope "$cs"
want 1 "^cachetrace-annotate: --sort: event 'Nope' $ev" --blame=func2 --sort=Nope "$cs"
exit $fail
