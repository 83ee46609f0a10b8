#!/bin/bash
# Build the readers (Cachegrind, Callgrind, folded stacks) and the call
# trees with clang's libFuzzer, ASan and UBSan, and fuzz them for a bounded
# time (FUZZ_SECONDS, default 60), seeded with the test inputs.
# fuzz.sh SRCROOT [SECONDS].  Exit 1 on any crash, leak or sanitizer
# report, and when clang or its fuzzer runtime (tests/install-deps.sh) is
# missing: never a skip.
root=$1 secs=${2:-${FUZZ_SECONDS:-60}}
command -v clang >/dev/null || { echo "FAIL: no clang"; exit 1; }
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
echo 'int LLVMFuzzerTestOneInput(const char *d, unsigned long n) { return 0; }' > "$tmp/probe.c"
clang -fsanitize=fuzzer "$tmp/probe.c" -o "$tmp/probe" 2>/dev/null ||
	{ echo "FAIL: clang has no libFuzzer runtime (libclang-rt-14-dev)"; exit 1; }
clang -g -O1 -std=gnu11 -D_GNU_SOURCE -fsanitize=fuzzer,address,undefined \
	-fno-sanitize-recover=all -I"$root/include" -I"$root/src/report/annotate" \
	"$root/tests/annotate/fuzz_parser.c" "$root/src/report/annotate/profile.c" \
	"$root/src/report/annotate/profread.c" \
	"$root/src/report/annotate/profread_cg.c" \
	"$root/src/report/annotate/sampled.c" \
	"$root/src/report/annotate/calltree.c" \
	"$root/src/report/annotate/flamegraph.c" \
	"$root/src/util/error.c" "$root/src/util/hashtab.c" \
	-lm -o "$tmp/fuzz" || exit 1
mkdir "$tmp/corpus"
cp "$root"/tests/annotate/golden/*.cgout "$root"/tests/annotate/merge/*.cgout \
	"$root"/tests/annotate/callgrind/*.cgout "$root"/tests/annotate/callgrind/*.folded \
	"$tmp/corpus/"
cd "$tmp" || exit 1
# Every CPU fuzzes (libFuzzer's fork mode), for SECONDS of CPU time in all.
cpus=$(nproc)
./fuzz -fork="$cpus" -max_total_time=$(( (secs + cpus - 1) / cpus )) \
	-max_len=65536 -timeout=10 -rss_limit_mb=2048 corpus > log 2>&1
rc=$?
tail -n 15 log
# libFuzzer's status for a crash is 77, which meson would call a skip.
[ $rc -eq 0 ] || { echo "FAIL: the fuzzer stopped with status $rc"; exit 1; }
