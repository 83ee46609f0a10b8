#!/bin/sh
# No profile in the source tree (issue 17: two callgrind.out.PID files
# left at the root by a run made there were committed).  .gitignore keeps
# them out of `git add -A`; this catches a forced add, and a test that
# writes one into the source tree.
#   tree-clean.sh SRCDIR
cd "$1" || exit 1
git rev-parse --git-dir >/dev/null 2>&1 || { echo "not a git checkout"; exit 77; }
pat='cachegrind.out.* callgrind.out.* *.folded'
bad=$(git ls-files -- $(for p in $pat; do printf ':(glob)**/%s ' "$p"; done) |
	grep -v '^tests/annotate/')
left=$(ls -d $pat 2>/dev/null)
[ -z "$bad" ] || echo "FAIL: profiles committed: $bad"
[ -z "$left" ] || echo "FAIL: profiles left at the source root: $left"
[ -z "$bad$left" ] && echo "tree-clean: no profile in the source tree" && exit 0
exit 1
