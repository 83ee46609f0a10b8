#!/bin/sh
# readme-check.sh CACHETRACE README: the README's option table names each
# option in one row only, and every option of the README's cachetrace
# command lines (the usage examples, indented four spaces) is one that
# `cachetrace --help` lists (issue 26: --max-instructions was listed
# twice; the hierarchy example lacked the options it described).
ct=$1 readme=$2
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
fail=0
opts() { grep -o -- '--[A-Za-z0-9][-A-Za-z0-9]*' | sort -u; }
"$ct" --help | opts > "$tmp/help"

# The table: rows "| `--opt=...` `--other` | meaning |", first cell only.
grep '^| `-' "$readme" | cut -d'|' -f2 | while read -r cell; do
	echo "$cell" | opts
done | sort | uniq -d > "$tmp/dup"
[ -s "$tmp/dup" ] && { echo "FAIL: options in two rows of the table:" $(cat "$tmp/dup"); fail=1; }
rows=$(grep -c '^| `-' "$readme")

# The examples: "    cachetrace ..." and their "      --..." continuations.
awk '/^    cachetrace / { on = 1; print; next }
     on && /^      / { print; next } { on = 0 }' "$readme" | opts > "$tmp/ex"
bad=$(comm -23 "$tmp/ex" "$tmp/help")
[ -n "$bad" ] && { echo "FAIL: README examples use options --help lacks:" $bad; fail=1; }
[ $fail = 0 ] && echo "README: $rows option rows, $(wc -l < "$tmp/ex") example options, all known"
exit $fail
