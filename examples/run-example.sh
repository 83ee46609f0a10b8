#!/bin/sh
# Build the example, profile compute() with cachetrace, print the annotated
# profile.  Run from the source tree after `meson compile -C build`.
set -eu
cd "$(dirname "$0")/.."
out=${TMPDIR:-/tmp}/cachetrace-example
mkdir -p "$out"
${CC:-cc} -O2 -g -fno-pie -no-pie -o "$out/matrix" examples/matrix.c
build/cachetrace --start=compute --I1=32768,8,64 --D1=32768,8,64 \
	--LL=8388608,16,64 -o "$out/cachegrind.out.example" -- "$out/matrix"
if [ -x build/cachetrace-annotate ]; then
	build/cachetrace-annotate "$out/cachegrind.out.example"
else
	cg_annotate "$out/cachegrind.out.example" "$PWD/examples/matrix.c"
fi
