#!/bin/sh
# sh bench/unicorn-memhook/run.sh: build and run memhook.c on code.s in a
# scratch directory; compare each access's rip with objdump's listing.
set -eu
D=$(realpath "$(dirname "$0")")
W=$(mktemp -d); trap 'rm -rf "$W"' EXIT
cd "$W"
cc -c "$D/code.s" -o code.o
objcopy -O binary -j .text code.o code.bin
objdump -d -M intel code.o | grep -E '^ +[0-9a-f]+:'
cc -O1 -o memhook "$D/memhook.c" -lunicorn
./memhook
