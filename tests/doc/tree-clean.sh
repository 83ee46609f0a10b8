#!/bin/sh
# No profile in the source tree (issue 17: two callgrind.out.PID files
# left at the root by a run made there were committed; later a profile and
# its stderr were committed at the root as s.cg and s.err).  .gitignore
# keeps the usual names out of `git add -A`; this catches a forced add, a
# profile under any name (a tracked file with a profile's `events:` and
# `summary:` lines), and a test that writes one into the source tree.
#   tree-clean.sh SRCDIR
cd "$1" || exit 1
git rev-parse --git-dir >/dev/null 2>&1 || { echo "FAIL: $1 is not a git checkout"; exit 1; }
pat='cachegrind.out.* callgrind.out.* *.folded'
named=$(git ls-files -- $(for p in $pat; do printf ':(glob)**/%s ' "$p"; done))
# Profiles by content: both header lines of the format.  Fixtures of the
# annotator's tests are the only profiles that belong in the tree.
content=$(git grep -l -E '^events: ' | while read -r f; do
	grep -q '^summary: \|^totals: ' "$f" && echo "$f"; done)
bad=$(printf '%s\n%s\n' "$named" "$content" | grep -v '^tests/annotate/' |
	grep . | sort -u | tr '\n' ' ')
left=$(ls -d $pat 2>/dev/null)
[ -z "$bad" ] || echo "FAIL: profiles committed: $bad"
[ -z "$left" ] || echo "FAIL: profiles left at the source root: $left"
[ -z "$bad$left" ] && echo "tree-clean: no profile in the source tree" && exit 0
exit 1
