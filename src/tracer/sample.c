/* --sample=PERIOD:LENGTH[:WARMUP] (issue 31): the target runs natively,
 * and every PERIOD of its CPU time a window of LENGTH instructions is
 * simulated, the first WARMUP of them only warming the caches and the
 * predictor.
 *
 * The period is the target's CPU time (the process's CPU-time clock,
 * every thread's time summed), not wall time: a server waiting for
 * requests is not sampled while it waits, and a sample's own time (the
 * target slowed by the engine) does not count towards the next one.  The
 * next sample is due PERIOD after the last one ended.  Samples taken so
 * see each function in proportion to the CPU time it takes, not to its
 * instructions: the profile's shares are shares of the samples.
 *
 * Without --start a sample begins wherever the thread that ran most since
 * the last one stands (as --toggle-signal's windows do); with --start,
 * at the first start event once one is due, ended by the stop event or
 * LENGTH, whichever comes first.
 *
 * The warm-up's costs go to a table of their own, thrown away when it
 * ends: its misses warm the models and are never counted.  The step and
 * emulate engines end a warm-up or a sample at the instruction; the
 * instrument engine at its next exit from the code cache (or the ring's
 * next fill, in a loop that never leaves it), a few instructions to a
 * few hundred thousand more: the counts say what was simulated. */
#include "tracer.h"

#include <dirent.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "costs.h"
#include "error.h"

static uint64_t ns_of(const struct timespec *ts)
{
	return (uint64_t)ts->tv_sec * 1000000000u + (uint64_t)ts->tv_nsec;
}

static uint64_t wall_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ns_of(&ts);
}

/* The CPU time of thread TID so far (/proc's schedstat), 0 when unknown. */
static uint64_t thread_cpu_ns(pid_t pid, pid_t tid)
{
	char path[80], buf[96];
	snprintf(path, sizeof(path), "/proc/%d/task/%d/schedstat", pid, tid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n = fd < 0 ? -1 : read(fd, buf, sizeof(buf) - 1);
	if (fd >= 0)
		close(fd);
	if (n <= 0)
		return 0;
	buf[n] = 0;
	return strtoull(buf, NULL, 10);
}

/* The target's CPU time so far: its process clock where the kernel
 * gives it, else the sum of utime and stime in /proc (clock ticks). */
static uint64_t target_cpu_ns(struct tracer *tr)
{
	struct sample_state *s = &tr->smp;
	struct timespec ts;
	if (s->clock_ok && clock_gettime(s->clock, &ts) == 0)
		return ns_of(&ts);
	char buf[64];
	const char *f = proc_stat_fields(tr->target_pid, buf, sizeof(buf));
	unsigned long long ut = 0, st = 0;
	if (!f || sscanf(f, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u "
			 "%llu %llu", &ut, &st) != 2)
		return s->last_cpu;
	return (ut + st) * (1000000000u / (uint64_t)sysconf(_SC_CLK_TCK));
}

void sample_arm(struct tracer *tr)
{
	struct sample_state *s = &tr->smp;
	s->t0 = wall_ns();
	if (tr->opt.duration_ns)
		s->deadline = s->t0 + tr->opt.duration_ns;
	if (!tr->opt.sample_len)
		return;
	s->clock_ok = clock_getcpuclockid(tr->target_pid, &s->clock) == 0;
	s->last_cpu = target_cpu_ns(tr);
	s->due = s->last_cpu + tr->opt.sample_period_ns;
	for (struct tracee *t = tr->tracees; t; t = t->next)
		t->sample_cpu = thread_cpu_ns(tr->target_pid, t->tid);
}

bool sample_due(const struct tracer *tr)
{
	return !tr->opt.sample_len || tr->smp.is_due;
}

/* The thread that ran most since the last sample (the first when none
 * did), its clock read again for the next time. */
static struct tracee *busiest(struct tracer *tr)
{
	struct tracee *best = NULL;
	uint64_t most = 0;
	for (struct tracee *t = tr->tracees; t; t = t->next) {
		uint64_t now = thread_cpu_ns(tr->target_pid, t->tid);
		uint64_t ran = now > t->sample_cpu ? now - t->sample_cpu : 0;
		t->sample_cpu = now;
		if (!best || ran > most)
			best = t, most = ran;
	}
	return best;
}

static long min_wait(long a, long b)
{
	return a < 0 || (b >= 0 && b < a) ? b : a;
}

/* A sample's lead running free in the instrument engine's code cache
 * meets its cap only when it leaves the cache, which a loop may not do
 * for a ring's worth of records (a million instructions or more, a
 * millisecond): it is interrupted when, at the pace it has gone so far
 * (a billion a second before it has any), it would be at the cap, and
 * its next run ends the sample if it is past it.  Returns the wait (us),
 * or -1. */
static long poke(struct tracer *tr, uint64_t now)
{
	struct sample_state *s = &tr->smp;
	struct tracee *lead = tr->tracees;
	while (lead && !tracee_leads(lead))
		lead = lead->next;
	if (!lead || !lead->in_cache || tracee_stopped(lead) ||
	    tracee_ending(lead)) {
		s->poke_at = 0;
		return -1;
	}
	uint64_t cap = tr->eng.sample_cap, done = lead->win.steps;
	if (!s->poke_at || now >= s->poke_at) {
		if (s->poke_at)
			tracee_interrupt(lead->tid);
		double pace = done > s->phase_steps && now > s->phase_t ?
			(double)(done - s->phase_steps) / (double)(now -
			s->phase_t) : 1.0;	/* instructions a ns */
		double dt = cap > done ? (double)(cap - done) / pace : 0;
		s->poke_at = now + (dt < 20000 ? 20000 : (uint64_t)dt);
	}
	return (long)((s->poke_at - now + 999) / 1000);
}

long sample_tick(struct tracer *tr, bool *expired)
{
	struct sample_state *s = &tr->smp;
	uint64_t now = wall_ns();
	long wait = -1;
	*expired = false;
	if (tr->opt.duration_ns) {
		if (now >= s->deadline) {
			*expired = true;
			return -1;
		}
		wait = (long)((s->deadline - now + 999) / 1000);
	}
	if (tr->opt.sample_len && tr->n_active)
		return min_wait(wait, poke(tr, now));
	if (!tr->opt.sample_len || s->is_due || window_all_done(tr))
		return wait;
	uint64_t cpu = target_cpu_ns(tr);
	s->last_cpu = cpu;
	if (cpu < s->due) {
		/* No sooner than the CPU time left could have been spent,
		 * every thread on a CPU of its own. */
		unsigned n = 0;
		for (struct tracee *t = tr->tracees; t; t = t->next)
			n++;
		long cpus = sysconf(_SC_NPROCESSORS_ONLN);
		if (cpus > 0 && n > (unsigned)cpus)
			n = (unsigned)cpus;
		long us = (long)((s->due - cpu) / (n ? n : 1) / 1000);
		us = us < 100 ? 100 : us > 1000000 ? 1000000 : us;
		return min_wait(wait, us);
	}
	s->is_due = true;
	if (tr->opt.start)
		return wait;	/* at the next start event */
	struct tracee *t = busiest(tr);
	if (!t)
		return wait;
	if (tracee_stopped(t)) {
		tracer_restart(tr, t, window_begin_thread(tr, t));
	} else {
		t->flags |= TF_WANT_WINDOW;
		tracee_interrupt(t->tid);
	}
	return wait;
}

void sample_begin(struct tracer *tr, struct tracee *t)
{
	struct sample_state *s = &tr->smp;
	struct engine *e = &tr->eng;
	if (!tr->opt.sample_len)
		return;
	s->is_due = false;
	s->n++;
	s->from = s->phase_steps = t->win.steps;
	s->phase_t = wall_ns();
	s->poke_at = 0;
	if (tr->opt.sample_warmup) {
		s->kept = engine_swap_costs(e, NULL);
		s->warming = true;
		e->sample_cap = s->from + tr->opt.sample_warmup;
	} else {
		e->sample_cap = s->from + tr->opt.sample_len;
	}
}

/* The warm-up's costs go; the profile's table is back. */
static void end_warmup(struct tracer *tr, struct tracee *t)
{
	struct sample_state *s = &tr->smp;
	costs_free(engine_swap_costs(&tr->eng, s->kept));
	s->kept = NULL;
	s->warming = false;
	s->warm += t->win.steps - s->from;
	s->from = t->win.steps;
}

bool sample_warmed(struct tracer *tr, struct tracee *t)
{
	struct sample_state *s = &tr->smp;
	struct engine *e = &tr->eng;
	if (!s->warming || !e->sample_cap || t->win.steps < e->sample_cap ||
	    engine_at_stop_event(t))
		return false;
	end_warmup(tr, t);
	e->sample_cap = s->from + tr->opt.sample_len;
	s->phase_steps = t->win.steps;
	s->phase_t = wall_ns();
	s->poke_at = 0;
	return true;
}

void sample_end(struct tracer *tr, struct tracee *lead)
{
	struct sample_state *s = &tr->smp;
	if (!tr->opt.sample_len)
		return;
	if (s->warming)
		end_warmup(tr, lead);	/* ended in its warm-up */
	else
		s->counted += lead->win.steps - s->from;
	tr->eng.sample_cap = 0;
	s->last_cpu = target_cpu_ns(tr);
	s->due = s->last_cpu + tr->opt.sample_period_ns;
}

static void print_period(FILE *f, uint64_t ns)
{
	if (ns % 1000000000u == 0)
		fprintf(f, "%" PRIu64 " s", ns / 1000000000u);
	else if (ns % 1000000u == 0)
		fprintf(f, "%" PRIu64 " ms", ns / 1000000u);
	else
		fprintf(f, "%" PRIu64 " us", ns / 1000u);
}

void sample_describe(const struct tracer *tr, FILE *f, const char *prefix,
		     bool desc)
{
	const struct sample_state *s = &tr->smp;
	const struct options *o = &tr->opt;
	if (!o->sample_len)
		return;
	double run = (double)(wall_ns() - s->t0) / 1e9;
	fprintf(f, desc ? "%s%-18severy " : "%s%s every ", prefix, "Sampled:");
	print_period(f, o->sample_period_ns);
	fprintf(f, " of the target's CPU time, %" PRIu64 " instructions "
		"after a warm-up of %" PRIu64 "%s: %" PRIu64 " sample%s, %"
		PRIu64 " instructions counted, %" PRIu64 " in warm-ups (not "
		"counted)", o->sample_len, o->sample_warmup,
		o->cold_windows ? ", caches emptied at each" : "", s->n,
		s->n == 1 ? "" : "s", s->counted, s->warm);
	if (!desc && run > 0)
		fprintf(f, "; %.1f%% of the run's %.2f s spent in samples",
			100.0 * tr->eng.t_stepping / run, run);
	fputc('\n', f);
}
