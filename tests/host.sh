# What the host gives, as the tests must know it (sourced): the answers of
# cachetrace's own probes (cachetrace --check), forced or not
# (CACHETRACE_HOST).  A test that needs a hardware feature the probe says
# is absent tests the fallback instead, and says so in its output.

# host_hwbp CACHETRACE: the debug registers fire here (exit 0) or not (1).
host_hwbp() {
	"$1" --check 2>/dev/null | grep -q '^hardware breakpoints: *fire'
}

# The breakpoint modes to test here: "hw sw" where the debug registers
# fire, else "auto sw": auto is no --breakpoints option at all, which this
# host turns into an int3 with a note (the fallback is what is tested, and
# the test says so).
host_bp_modes() {
	if host_hwbp "$1"; then
		echo "hw sw"
	else
		echo "note: the debug registers do not fire on this host: the hw runs test the fallback (no --breakpoints: an int3)" >&2
		echo "auto sw"
	fi
}
# bp_opt MODE: the option for a mode of host_bp_modes.
bp_opt() {
	[ "$1" = auto ] || echo "--breakpoints=$1"
}
