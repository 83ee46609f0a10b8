/* CACHETRACE_HOST=KEY=VALUE,...: forced answers of the host probes.
 * Read at each call, not cached: the probes run a few times per run and a
 * test may change the variable between calls of the unit under test. */
#include "hostenv.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define HOSTENV_VAR "CACHETRACE_HOST"

/* Every key some probe reads; hostenv.h says what each one means. */
static const char *const known_keys[] = {
	"sysfs-cache", "cpuid-cache", "hwbp", "cpuid-step",
};

/* Does the item S (LEN bytes, no comma) equal "KEY=VALUE"? */
static int item_is(const char *s, size_t len, const char *key,
		   const char *value)
{
	size_t kl = strlen(key), vl = strlen(value);

	return len == kl + 1 + vl && !memcmp(s, key, kl) && s[kl] == '=' &&
	       !memcmp(s + kl + 1, value, vl);
}

int host_forced(const char *key, const char *value)
{
	const char *s = getenv(HOSTENV_VAR);

	while (s && *s) {
		size_t len = strcspn(s, ",");

		if (item_is(s, len, key, value))
			return 1;
		s += len + (s[len] == ',');
	}
	return 0;
}

int host_forced_check(char *err, size_t errlen)
{
	const char *s = getenv(HOSTENV_VAR);

	while (s && *s) {
		size_t len = strcspn(s, ","), klen = strcspn(s, "=,");
		size_t i, n = sizeof(known_keys) / sizeof(known_keys[0]);

		for (i = 0; i < n; i++)
			if (klen == strlen(known_keys[i]) &&
			    !memcmp(s, known_keys[i], klen))
				break;
		if (klen >= len || i == n) {
			snprintf(err, errlen, HOSTENV_VAR ": '%.*s' is not "
				 "KEY=VALUE with a known KEY (sysfs-cache, "
				 "cpuid-cache, hwbp, cpuid-step)",
				 (int)(len > 40 ? 40 : len), s);
			return -1;
		}
		s += len + (s[len] == ',');
	}
	return 0;
}
