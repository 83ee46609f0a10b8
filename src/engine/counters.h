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
	uint64_t base[COUNTERS_MAX][3];	/* count, enabled, running */
};

/* Open V (N of them) on TID, disabled: 0, or -errno with the name of the
 * one that failed in *WHICH. */
int counters_open(struct counter_set *s, pid_t tid,
		  const struct counter_spec *v, unsigned n,
		  const char **which);
void counters_enable(struct counter_set *s, bool on);
/* The counts from here on are the ones counters_read gives: the set
 * stays open from one window to the next (opening and closing counters
 * costs the kernel a static key's change on every CPU). */
void counters_mark(struct counter_set *s);
/* The counts since counters_mark, scaled where the kernel multiplexed
 * them (*SCALED then true), into OUT. */
void counters_read(const struct counter_set *s, uint64_t *out, bool *scaled);
void counters_close(struct counter_set *s);

/* An event sampled every PERIOD on one thread: its IPs (and, for call
 * stacks, its registers and a copy of its stack), read from the kernel's
 * ring (mapped here). */
struct counter_sample {
	uint64_t ip;
	bool has_regs;
	uint64_t regs[17];	/* DWARF's order: rax rdx rcx rbx rsi rdi rbp
				 * rsp r8..r15 rip */
	const uint8_t *stack;	/* a copy of the stack from regs[7] up */
	uint64_t stack_len;
};

struct counter_sampler {
	int fd;
	void *map;
	size_t map_len;
	uint8_t *rec;		/* a record, put together (the ring wraps) */
	size_t rec_cap;
	uint64_t lost;		/* samples the ring had no room for */
	uint64_t throttled;	/* times the kernel slowed the sampling */
};

/* STACK_BYTES of the user stack with each sample (0: the IP alone).
 * 0, or -errno. */
int counters_sampler_open(struct counter_sampler *s, pid_t tid,
			  const struct counter_spec *spec, uint64_t period,
			  unsigned stack_bytes);
void counters_sampler_enable(struct counter_sampler *s, bool on);
/* Each sample since the last read through FN; returns how many. */
uint64_t counters_sampler_read(struct counter_sampler *s,
			       void (*fn)(void *ctx,
					  const struct counter_sample *smp),
			       void *ctx);
void counters_sampler_close(struct counter_sampler *s);

#endif
