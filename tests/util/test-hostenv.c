/* CACHETRACE_HOST: host_forced matches whole KEY=VALUE items only, and
 * host_forced_check rejects unknown keys and items without '='. */
#include "hostenv.h"

#include <stdlib.h>

#include "testutil.h"

int main(void)
{
	char err[256] = "";

	unsetenv("CACHETRACE_HOST");
	CHECK(!host_forced("sysfs-cache", "no"));
	CHECK(host_forced_check(err, sizeof(err)) == 0);

	setenv("CACHETRACE_HOST", "sysfs-cache=no,cpuid-cache=no", 1);
	CHECK(host_forced("sysfs-cache", "no"));
	CHECK(host_forced("cpuid-cache", "no"));
	CHECK(!host_forced("sysfs-cache", "n"));
	CHECK(!host_forced("sysfs", "no"));
	CHECK(!host_forced("hwbp", "no"));
	CHECK(host_forced_check(err, sizeof(err)) == 0);

	setenv("CACHETRACE_HOST", "hwbp=no,cpuid-step=late,", 1);
	CHECK(host_forced("hwbp", "no"));
	CHECK(host_forced("cpuid-step", "late"));
	CHECK(!host_forced("sysfs-cache", "no"));
	CHECK(host_forced_check(err, sizeof(err)) == 0);

	setenv("CACHETRACE_HOST", "", 1);
	CHECK(!host_forced("sysfs-cache", "no"));
	CHECK(host_forced_check(err, sizeof(err)) == 0);

	setenv("CACHETRACE_HOST", "sysfs-cache=no,sysfs-cahce=no", 1);
	CHECK(host_forced("sysfs-cache", "no"));
	CHECK(host_forced_check(err, sizeof(err)) == -1);
	CHECK_STR(err, "CACHETRACE_HOST: 'sysfs-cahce=no' is not KEY=VALUE "
		  "with a known KEY (sysfs-cache, cpuid-cache, hwbp, "
		  "cpuid-step)");

	setenv("CACHETRACE_HOST", "hwbp", 1);
	CHECK(host_forced_check(err, sizeof(err)) == -1);
	CHECK_STR(err, "CACHETRACE_HOST: 'hwbp' is not KEY=VALUE with a known "
		  "KEY (sysfs-cache, cpuid-cache, hwbp, cpuid-step)");
	return test_summary("test-hostenv");
}
