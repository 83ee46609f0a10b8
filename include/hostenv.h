/* CACHETRACE_HOST: the answers of the host probes, forced for tests (as
 * CRIU's kerndat answers can be).  The variable is a comma-separated list
 * of KEY=VALUE, e.g. CACHETRACE_HOST=sysfs-cache=no,cpuid-cache=no; a
 * probe whose key is absent asks the host.
 *
 * Keys: sysfs-cache=no (act as if /sys/devices/system/cpu/cpu0/cache did
 * not exist), cpuid-cache=no (act as if CPUID had no cache leaves),
 * hwbp=no (hardware breakpoints never fire), cpuid-step=late (a
 * single-step over cpuid lands one instruction late). */
#ifndef CT_HOSTENV_H
#define CT_HOSTENV_H

#include <stddef.h>

/* 1 when CACHETRACE_HOST holds KEY=VALUE, else 0. */
int host_forced(const char *key, const char *value);

/* 0 when every item of CACHETRACE_HOST (unset or empty: none) is
 * KEY=VALUE with a known KEY; else -1 and a one-line message in ERR. */
int host_forced_check(char *err, size_t errlen);

#endif
