/* Forcing the answers of the host probes, for tests (CRIU's kerndat keeps
 * its answers in one place; so do we, and each can be forced).
 *
 * CACHETRACE_HOST is a comma-separated list of KEY=VALUE, for example
 * "hwbp=no,sysfs-cache=no".  The keys are listed in hostenv.c.  A forced
 * answer replaces the probe's: the tracer's experiments still run in one
 * child (they measure several things at once); a forced cache source is
 * not read. */
#ifndef CT_HOSTENV_H
#define CT_HOSTENV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The value CACHETRACE_HOST gives KEY, copied into BUF; NULL when it
 * does not name KEY. */
const char *hostenv_get(const char *key, char *buf, size_t len);
/* CACHETRACE_HOST says KEY=VALUE. */
bool host_forced(const char *key, const char *value);
/* NULL when CACHETRACE_HOST is well formed: every item KEY=VALUE with a
 * known key and one of its values; else a one-line reason in ERR. */
const char *hostenv_check(char *err, size_t len);

/* This CPU's XCR0 (xgetbv with ecx 0): only where CPUID leaf 1 says
 * OSXSAVE, else the instruction faults. */
static inline uint64_t host_xcr0(void)
{
	uint32_t lo, hi;
	__asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
	return (uint64_t)hi << 32 | lo;
}

#endif
