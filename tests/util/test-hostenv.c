/* CACHETRACE_HOST: host_forced matches whole KEY=VALUE items only, and
 * hostenv_check rejects unknown keys, unknown values and items without
 * '='. */
#include "hostenv.h"

#include <stdlib.h>

#include "testutil.h"

int main(void)
{
	char err[256] = "";

	unsetenv("CACHETRACE_HOST");
	CHECK(!host_forced("sysfs-cache", "no"));
	CHECK(hostenv_check(err, sizeof(err)) == NULL);

	setenv("CACHETRACE_HOST", "sysfs-cache=no,cpuid-cache=no", 1);
	CHECK(host_forced("sysfs-cache", "no"));
	CHECK(host_forced("cpuid-cache", "no"));
	CHECK(!host_forced("sysfs-cache", "n"));
	CHECK(!host_forced("sysfs", "no"));
	CHECK(!host_forced("hwbp", "no"));
	CHECK(hostenv_check(err, sizeof(err)) == NULL);

	setenv("CACHETRACE_HOST", "cpuid-cache=no", 1);
	CHECK(!host_forced("sysfs-cache", "no"));
	CHECK(host_forced("cpuid-cache", "no"));

	setenv("CACHETRACE_HOST", "", 1);
	CHECK(!host_forced("sysfs-cache", "no"));
	CHECK(hostenv_check(err, sizeof(err)) == NULL);

	/* A misspelt key would test the real host instead: an error. */
	setenv("CACHETRACE_HOST", "sysfs-cache=no,sysfs-cahce=no", 1);
	CHECK(host_forced("sysfs-cache", "no"));
	CHECK(hostenv_check(err, sizeof(err)) != NULL);
	CHECK(strstr(err, "'sysfs-cahce=no'") != NULL, "%s", err);
	setenv("CACHETRACE_HOST", "sysfs-cache=yes", 1);
	CHECK(hostenv_check(err, sizeof(err)) != NULL);
	setenv("CACHETRACE_HOST", "cpuid-cache", 1);
	CHECK(hostenv_check(err, sizeof(err)) != NULL);
	CHECK(strchr(err, '\n') == NULL);
	return test_summary("test-hostenv");
}
