#!/bin/sh
# man-check.sh BINARY PAGE OTHER [OPTION...]: PAGE formats without a groff
# warning, and it names exactly the long options BINARY --help lists, plus
# the OPTIONs given (accepted spellings that --help leaves out).  Example
# lines that start with the command OTHER (the other front end) are its
# options, not BINARY's, and are left out.
# Exit 0 pass, 1 fail, 77 without groff.
bin=$1 page=$2 other=$3
shift 3
command -v groff >/dev/null || { echo "FAIL: no groff (tests/install-deps.sh installs groff-base)"; exit 1; }
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
fail=0

groff -man -Tutf8 -ww -z "$page" 2> "$tmp/warn"
if [ -s "$tmp/warn" ]; then
	echo "FAIL: groff warnings on $page:"; cat "$tmp/warn"; fail=1
fi

longopts() { grep -o -- '--[A-Za-z0-9][-A-Za-z0-9]*' | sort -u; }
"$bin" --help | longopts > "$tmp/help" || { echo "FAIL: $bin --help"; exit 1; }
for o in "$@"; do echo "$o"; done >> "$tmp/help"
sort -u -o "$tmp/help" "$tmp/help"
# Plain text, one long line per paragraph: no hyphenation splits a name.
groff -man -Tascii -P-cbou -rLL=2000n -rHY=0 "$page" |
	grep -v "^ *$other " | longopts > "$tmp/man"
missing=$(comm -23 "$tmp/help" "$tmp/man")
extra=$(comm -13 "$tmp/help" "$tmp/man")
[ -z "$missing" ] || { echo "FAIL: in --help, not in $page:" $missing; fail=1; }
[ -z "$extra" ] || { echo "FAIL: in $page, not in --help:" $extra; fail=1; }
[ $fail = 0 ] && echo "$page: $(wc -l < "$tmp/man") long options, as --help"
exit $fail
