/* The host's performance counters through perf_event_open(2), for the
 * native engine (gate.c): named as perf names them, opened disabled on a
 * thread, enabled at a window's start event and disabled at its stop. */
#ifndef CT_COUNTERS_H
#define CT_COUNTERS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#define COUNTERS_MAX 24

struct counter_spec {
	const char *name;	/* as given (perf's name, with :u or :k) */
	uint32_t type;		/* PERF_TYPE_* */
	uint64_t config;
	bool kernel;		/* :k: kernel mode too */
	bool hardware;		/* needs the PMU */
};

/* Parse LIST ("cycles,page-faults:k,..."): 0, or -1 with a one-line
 * message in ERR naming the bad part. */
int counters_parse(const char *list, struct counter_spec *v, unsigned *n,
		   char *err, size_t errlen);
/* The default set: the hardware events the host has (HAVE_PMU), then the
 * software ones. */
void counters_default(struct counter_spec *v, unsigned *n, bool have_pmu);
/* Does the host count hardware events for us (CACHETRACE_HOST=pmu=no
 * forces no)?  *WHY says why not. */
bool counters_pmu(const char **why);
/* Can SPEC be counted on thread TID at all: 0 or -errno. */
int counters_try(const struct counter_spec *spec, pid_t tid);

/* One thread's open counters. */
struct counter_set {
	pid_t tid;
	unsigned n;
	int fd[COUNTERS_MAX];
};

/* Open V (N of them) on TID, disabled: 0, or -errno with the name of the
 * one that failed in *WHICH. */
int counters_open(struct counter_set *s, pid_t tid,
		  const struct counter_spec *v, unsigned n,
		  const char **which);
void counters_enable(struct counter_set *s, bool on);
/* The counts since they were opened, scaled where the kernel multiplexed
 * them (*SCALED then true), into OUT. */
void counters_read(const struct counter_set *s, uint64_t *out, bool *scaled);
void counters_close(struct counter_set *s);

/* An event sampled every PERIOD on one thread: its IPs, read from the
 * kernel's ring (mapped here) whenever the thread stops. */
struct counter_sampler {
	int fd;
	void *map;
	size_t map_len;
	uint64_t lost;		/* samples the ring had no room for */
	uint64_t throttled;	/* times the kernel slowed the sampling */
};

/* 0, or -errno. */
int counters_sampler_open(struct counter_sampler *s, pid_t tid,
			  const struct counter_spec *spec, uint64_t period);
void counters_sampler_enable(struct counter_sampler *s, bool on);
/* Each sample since the last read, its IP through FN; returns how many. */
uint64_t counters_sampler_read(struct counter_sampler *s,
			       void (*fn)(void *ctx, uint64_t ip), void *ctx);
void counters_sampler_close(struct counter_sampler *s);

#endif
