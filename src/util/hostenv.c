/* CACHETRACE_HOST: the host probes' answers, forced (include/hostenv.h).
 * Each key and the values it takes; the probes live where their answers
 * are used (src/tracer/hostprobe.c, src/cachemodel). */
#include "hostenv.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const struct {
	const char *key;
	const char *values[4];
} known[] = {
	{ "hwbp", { "yes", "no" } },		  /* debug registers fire */
	{ "cpuid-step", { "precise", "late" } },  /* a step over cpuid */
	{ "cpuid-own", { "no" } },		  /* our own cpuid is not the
						   * target's CPU's */
	{ "sysfs-cache", { "no" } },		  /* /sys has no caches */
	{ "cpuid-cache", { "no" } },		  /* CPUID has no cache leaves */
	{ "native", { "no" } },			  /* no XSAVE, no W+X memory */
	{ "uc-regs", { "api" } },		  /* Unicorn's registers: no
						   * direct reads */
	{ "model-thread", { "no" } },		  /* one CPU: the models in
						   * the engine's thread */
	{ "memfd", { "no" } },			  /* no shared memory for the
						   * guardian's journal */
	{ "uc-pages", { "qemu" } },		  /* Unicorn's own page
						   * collection per store */
	{ "vvar", { "no" } },			  /* the vDSO's clock data
						   * not shared: real steps */
	{ "ring-read", { "stopped" } },		  /* one CPU: the ring read
						   * when its thread stops */
	{ "inject", { "no" } },			  /* no system calls injected
						   * into the target */
	{ "pmu", { "no" } },			  /* no hardware counters */
	{ "pagemap", { "no" } },		  /* the target's page map
						   * unread (--sample's DLuf) */
	{ "vg-cpu", { "avx2", "avx", "sse42", "baseline" } },
						  /* --cpuid=valgrind's CPU */
};

#define N_KNOWN (sizeof(known) / sizeof(known[0]))
#define N_VALUES (sizeof(known[0].values) / sizeof(known[0].values[0]))

const char *hostenv_get(const char *key, char *buf, size_t len)
{
	const char *s = getenv("CACHETRACE_HOST");
	size_t klen = strlen(key);

	while (s && *s) {
		size_t n = strcspn(s, ",");

		if (n > klen && !strncmp(s, key, klen) && s[klen] == '=') {
			size_t vlen = n - klen - 1;

			if (vlen >= len)
				vlen = len - 1;
			memcpy(buf, s + klen + 1, vlen);
			buf[vlen] = '\0';
			return buf;
		}
		s += n;
		s += *s == ',';
	}
	return NULL;
}

bool host_forced(const char *key, const char *value)
{
	char buf[32];

	return hostenv_get(key, buf, sizeof(buf)) && !strcmp(buf, value);
}

/* The answers there are, "key=a|b, ...)", at AT of ERR. */
static void list_answers(char *err, size_t len, int at)
{
	for (size_t i = 0; i < N_KNOWN; i++)
		for (unsigned j = 0; j < N_VALUES && known[i].values[j]; j++) {
			if (at < 0 || (size_t)at >= len)
				return;
			if (j)
				at += snprintf(err + at, len - (size_t)at,
					       "|%s", known[i].values[j]);
			else
				at += snprintf(err + at, len - (size_t)at,
					       "%s%s=%s", i ? ", " : "",
					       known[i].key, known[i].values[0]);
		}
	if (at >= 0 && (size_t)at < len)
		snprintf(err + at, len - (size_t)at, ")");
}

const char *hostenv_check(char *err, size_t len)
{
	const char *s = getenv("CACHETRACE_HOST");

	while (s && *s) {
		size_t n = strcspn(s, ","), k = strcspn(s, "=");
		bool ok = false;

		for (size_t i = 0; !ok && k < n && i < N_KNOWN; i++) {
			if (strlen(known[i].key) != k ||
			    strncmp(known[i].key, s, k))
				continue;
			for (unsigned j = 0; j < N_VALUES && known[i].values[j];
			     j++)
				ok |= strlen(known[i].values[j]) == n - k - 1 &&
				      !strncmp(known[i].values[j], s + k + 1,
					       n - k - 1);
		}
		if (!ok) {
			int at = snprintf(err, len, "CACHETRACE_HOST: '%.*s' "
					  "is not a forced probe answer (",
					  (int)n, s);
			list_answers(err, len, at);
			return err;
		}
		s += n;
		s += *s == ',';
	}
	return NULL;
}
