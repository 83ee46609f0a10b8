#!/bin/sh
# Issue 10, 5: a start address that is not the start of an instruction,
# or not code (an address or a data symbol's name), or not mapped, is
# refused (an int3 there would corrupt the
# target; a debug register there would never fire and cachetrace would
# wait forever); the attached target is left untouched and running.
. "$(dirname "$0")/lib.sh"
. "$SRCDIR/tests/host.sh"
BP_MODES=$(host_bp_modes "$CT")
data=0x$(nm "$T" | awk '$3 == "table" {print $1}')
start_target loop || finish
for bp in $BP_MODES; do
	for loc in handle_request+2 "$data" 0x10 table stdout; do
		timeout 20 "$CT" $G -p "$TP" --start="$loc" $(bp_opt $bp) \
			-o b.cg 2> b.err
		expect "$bp --start=$loc: status" $? 1
		[ -s b.err ] || fail "$bp --start=$loc: no message"
		# A data symbol by name is refused as data, not "not found"
		# (issue 26, item 4).
		case $loc in table|stdout)
			grep -q "^cachetrace: --start: '$loc' in [^ ]* is a data symbol, not code" b.err ||
				fail "--start=$loc: $(cat b.err)";;
		esac
		[ -e b.cg ] && fail "$bp --start=$loc: a profile was written"
		alive "$TP" || { fail "$bp --start=$loc: the target died"; break 2; }
		expect "$bp --start=$loc: the target" "$(traced_state "$TP")" running
	done
done
stop_target || fail "the target died"
# Launched, an instruction boundary inside the function works.
off=$(objdump -d --no-show-raw-insn "$T" | awk '/<handle_request>:/{f=1;next}
	f && /^ +[0-9a-f]+:/ {n++; if (n == 2) {sub(":", "", $1); print $1; exit}}')
base=$(nm "$T" | awk '$3 == "handle_request" {print $1}')
"$CT" $G --start=handle_request+$((0x$off - 0x$base)) --breakpoints=sw \
	-o ok.cg -- ./"$T" exit 0 > /dev/null 2> ok.err
expect "handle_request+$((0x$off - 0x$base)) (a boundary): status" $? 0
finish
