# What the host gives, as the tests must know it (sourced): the answers of
# cachetrace's own probes (cachetrace --check), forced or not
# (CACHETRACE_HOST).  A test that needs a hardware feature the probe says
# is absent tests the fallback instead, and says so in its output.

# host_hwbp CACHETRACE: the debug registers fire here (exit 0) or not (1).
host_hwbp() {
	"$1" --check 2>/dev/null | grep -q '^hardware breakpoints: *fire'
}
