#!/bin/bash
# Time cachetrace-annotate against valgrind's cg_annotate on the generated
# profile, in the same run, and the HTML report against the text report:
# bench/annotate/run.sh BUILDDIR
build=${1:-build}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
here=$(dirname "$0")
python3 "$here/gen-profile.py" > "$tmp/big.cgout"
size=$(stat -c %s "$tmp/big.cgout")
measure() {	# name cmd...: wall seconds and max RSS (KiB)
	local name=$1; shift
	/usr/bin/time -f "%e %M" -o "$tmp/t" "$@" > "$tmp/$name.out" 2>/dev/null
	read -r secs rss < "$tmp/t"
	echo "$name $secs $rss"
}
echo "profile: $size bytes"
measure cachetrace-annotate "$build/cachetrace-annotate" "$tmp/big.cgout"
measure cachetrace-annotate-merge "$build/cachetrace-annotate" --output-profile="$tmp/m" "$tmp/big.cgout"
measure cg_annotate cg_annotate --auto=yes "$tmp/big.cgout"
# The HTML report (issue 13): written, alternating with the text report,
# then opened in headless Chromium (html-open.py).
for round in 1 2 3; do
	measure "text-$round" "$build/cachetrace-annotate" "$tmp/big.cgout"
	measure "html-$round" "$build/cachetrace-annotate" --html="$tmp/big.html" "$tmp/big.cgout"
done
python3 "$here/html-open.py" "$tmp/big.html"
