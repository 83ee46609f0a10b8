#!/bin/sh
# An attached CPython loop in a toggle window (issue 19): Debian's
# /usr/bin/python3 runs loop.py (a dict-and-string loop) for 8 s;
# cachetrace attaches with -p PID --toggle-signal=SIGUSR2; one SIGUSR2 to
# cachetrace opens the window, another closes it WINDOW seconds later.  Prints the
# window's instructions and rate, the real steps and the pages, and the
# target's own last line (it must finish and print: it ran on unharmed).
#   sh bench/cpython/window.sh [BUILDDIR] [WINDOW] [-- cachetrace options]
set -eu
B=$(realpath "${1:-build}"); WIN=${2:-2}
[ $# -ge 2 ] && shift 2 || shift $#
[ "${1:-}" = "--" ] && shift
S=$(realpath "$(dirname "$0")")
W=$(mktemp -d); trap 'rm -rf "$W"' EXIT
/usr/bin/python3 "$S/loop.py" 8 >"$W/py.out" &
P=$!
sleep 0.5
"$B/cachetrace" "$@" -p "$P" --toggle-signal=SIGUSR2 -o "$W/ct.out" 2>"$W/ct.err" &
C=$!
# attached (its TracerPid), then a moment for the breakpoint-free arming
i=0
until grep -q '^TracerPid:[[:space:]]*[1-9]' /proc/$P/status 2>/dev/null; do
	i=$((i + 1)); [ $i -lt 100 ] || { echo "never attached"; exit 1; }
	sleep 0.05
done
sleep 0.5
kill -USR2 "$C"; sleep "$WIN"; kill -USR2 "$C"
wait "$P" || echo "python3 exited with $?"
wait "$C" || echo "cachetrace exited with $?"
grep -E 'Traced|Engine:|real CPU' "$W/ct.err" | sed 's/^==[0-9]*== //'
echo "target: $(tail -1 "$W/py.out")"
