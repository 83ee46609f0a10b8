/* --sample=PERIOD[:LENGTH[:WARMUP]] (issue 31): the target runs
 * natively, and every PERIOD of its CPU time a window of LENGTH
 * instructions is simulated, the first WARMUP of them only warming the
 * caches and the predictor (not counted).
 *
 * The period is the target's CPU time (the process's CPU-time clock,
 * every thread's time summed), not wall time: a server waiting for
 * requests is not sampled while it waits, and a sample's own time (the
 * target slowed by the engine) does not count towards the next one.  The
 * next sample is due about PERIOD after the last one ended (jittered).
 * Samples taken so land in each function in proportion to its time, not
 * its instructions: the statistics weigh them back (fold).
 *
 * Without --start a sample begins wherever the thread that ran most since
 * the last one stands (as --toggle-signal's windows do); with --start,
 * at the first start event once one is due, ended by the stop event or
 * LENGTH, whichever comes first.
 *
 * The warm-up's costs go to a table of their own, thrown away when it
 * ends: its misses warm the models and are never counted.  The step and
 * emulate engines end a warm-up or a sample at the instruction; the
 * instrument engine at its next stop past it, which its ring, sized for
 * what is left, and our interrupt (poke) bring near: the counts say what
 * was simulated. */
#include "tracer.h"

#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "costs.h"
#include "error.h"
#include "hashtab.h"

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

/* PERIOD, drawn from [PERIOD / 2, 3 PERIOD / 2): samples a fixed period
 * apart fall on the same points of a program whose phases repeat at a
 * multiple of it, and miss the others for good (bench/sample's phases
 * program: its stream() had 17% of the data accesses and no sample).  A
 * fixed seed: the same draws every run. */
static uint64_t jittered(struct sample_state *s, uint64_t period)
{
	s->rng ^= s->rng << 13;
	s->rng ^= s->rng >> 7;
	s->rng ^= s->rng << 17;
	double u = (double)(s->rng >> 11) / 9007199254740992.0;	/* [0, 1) */
	return period / 2 + (uint64_t)(u * (double)period);
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
	s->rng = 0x9e3779b97f4a7c15ull;
	s->due = s->last_cpu + jittered(s, tr->opt.sample_period_ns);
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

/* The lead of the sample in progress, or NULL. */
static struct tracee *sample_lead(struct tracer *tr)
{
	struct tracee *lead = tr->tracees;
	while (lead && !tracee_leads(lead))
		lead = lead->next;
	return lead;
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
 * its next run ends the sample if it is past it.  Not under
 * lockstep:instrument, whose lead stops at every instruction and meets
 * its cap there (instrument.c): interrupted every 20 us, it stopped
 * before completing any, again and again.  Returns the wait (us), or -1. */
static long poke(struct tracer *tr, uint64_t now)
{
	struct sample_state *s = &tr->smp;
	struct tracee *lead = sample_lead(tr);
	if (!lead || !lead->in_cache || tracee_stopped(lead) ||
	    tracee_ending(lead) || tr->eng.proof) {
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

/* A sample's lead that runs no instruction of its own for a while (a
 * main thread in pthread_join, a server between requests) would hold its
 * window open for as long as it waits, and no other sample would come:
 * its thread's CPU time is looked at every 2 periods (20 ms at least),
 * and a sample whose lead used none meanwhile ends.
 * Returns the wait (us) until the next look, or -1. */
static long stalled(struct tracer *tr, uint64_t now)
{
	struct sample_state *s = &tr->smp;
	struct tracee *lead = sample_lead(tr);
	if (!lead || tracee_ending(lead))
		return -1;
	uint64_t every = 2 * tr->opt.sample_period_ns;
	if (every < 20000000)
		every = 20000000;
	if (s->stall_at && now >= s->stall_at) {
		uint64_t cpu = thread_cpu_ns(tr->target_pid, lead->tid);
		if (cpu && cpu == s->stall_cpu) {
			debug_msg("sample: thread %d waits: its sample ends",
				  lead->tid);
			s->stalls++;
			s->stall_at = 0;
			/* Stopped, it leaves now; in the code cache, at our
			 * interrupt; stepped through a system call, when
			 * that returns (an interrupt then would leave the
			 * step's trap to kill it): the next sample need not
			 * wait for it. */
			window_end(tr, lead, NULL);
			return -1;
		}
		s->stall_cpu = cpu;
		s->stall_at = now + every;
	}
	if (!s->stall_at) {
		s->stall_cpu = thread_cpu_ns(tr->target_pid, lead->tid);
		s->stall_at = now + every;
	}
	return (long)((s->stall_at - now + 999) / 1000);
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
		return min_wait(wait, min_wait(poke(tr, now),
					       stalled(tr, now)));
	if (!tr->opt.sample_len || window_all_done(tr))
		return wait;
	if (s->is_due) {
		/* Its thread is on its way to our stop, or (--start) the
		 * start event will come; else that thread is gone before it
		 * stopped: another is chosen. */
		bool coming = tr->opt.start;
		for (struct tracee *t = tr->tracees; t; t = t->next)
			coming |= tracee_wants_window(t);
		if (coming)
			return wait;
	}
	uint64_t cpu = target_cpu_ns(tr);
	s->last_cpu = cpu;
	if (!s->is_due && cpu < s->due) {
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

/* ---- the samples' statistics, per function ----
 * Each sample's counted part goes to a table of its own, added to the
 * profile's when it ends; its rows, summed per function, give each
 * function's RATIOS (m over a) in that sample, and their sums over the
 * samples (of m, a, m*m, a*a, m*a) the spread a confidence interval
 * needs (the ratio estimator's variance). */
enum { R_SHARE, R_D1, R_LL, R_I1, R_BR, R_LLLO, R_LLHI, R_N };
static const char *const ratio_name[R_N] = { "share", "D1", "LL", "I1",
					      "Bm", "LLlo", "LLhi" };
/* Each ratio's events, by name: m's, then a's ("@": the sample's Ir; a
 * leading "-": subtracted).  LLlo and LLhi bound the LL rate: every
 * reference at its line's first reference in the sample (DLu, DLmu:
 * decided by the LL state earlier samples left, cachegrind.c) a hit, or
 * every one a miss; but those to memory never touched before the sample
 * (DLuf, touched.c) misses in both. */
#define RATIO_EVS 4
static const char *const ratio_ev[R_N][2][RATIO_EVS] = {
	{ { "Ir" }, { "@" } },
	{ { "D1mr", "D1mw" }, { "Dr", "Dw" } },
	{ { "DLmr", "DLmw" }, { "Dr", "Dw" } },
	{ { "I1mr" }, { "Ir" } },
	{ { "Bcm", "Bim" }, { "Bc", "Bi" } },
	{ { "DLmr", "DLmw", "-DLmu", "DLuf" }, { "Dr", "Dw" } },
	{ { "DLmr", "DLmw", "-DLmu", "DLu" }, { "Dr", "Dw" } },
};

struct sfn {
	uint64_t n;			/* samples it ran in */
	double sum[R_N][5];		/* m, a, m*m, a*a, m*a */
	double cur[R_N][2];		/* this sample's m and a */
	bool touched;
};

struct sample_stats {
	int ev[R_N][2][RATIO_EVS];	/* event indexes; -1: none, -2: @ */
	bool neg[R_N][2][RATIO_EVS];	/* subtracted */
	bool have[R_N];
	struct strintern names;		/* "file\tfn" -> function id */
	struct sfn *fn;
	uint32_t n_fn, cap_fn;
	struct { uint64_t pc; uint32_t id; } *pcs;	/* pc -> function */
	uint32_t n_pcs, cap_pcs;
	struct hashtab pc_map;
	uint32_t *touched;
	uint32_t n_touched;
	double n, t1, t2;		/* samples, sum of Ir, of Ir*Ir */
	int cest[4][3];			/* the cycle estimate's events */
	int ir;				/* Ir's index; -1: none */
};

/* The cycles a sample's counts stand for, as the Cachegrind manual puts
 * them: an instruction 1, an L1 miss 10, an LL miss 200, a mispredicted
 * branch 20 (its 10 to 30).  Events by name; -1: absent. */
static const char *const cest_ev[4][3] = {
	{ "Ir", NULL, NULL },
	{ "I1mr", "D1mr", "D1mw" },
	{ "ILmr", "DLmr", "DLmw" },
	{ "Bcm", "Bim", NULL },
};
static const double cest_cost[4] = { 1, 10, 200, 20 };

static uint64_t pc_hash_of(const void *ctx, uint32_t i)
{
	const struct sample_stats *st = ctx;
	return hash_u64(st->pcs[i].pc);
}

/* The index of event NAME, -1 when the model has none (or no NAME). */
static int event_index(const struct tracer *tr, const char *name)
{
	for (unsigned e = 0; name && e < tr->n_events; e++)
		if (!strcmp(tr->event_names[e], name))
			return (int)e;
	return -1;
}

static struct sample_stats *stats_of(struct tracer *tr)
{
	struct sample_state *s = &tr->smp;
	if (s->stats)
		return s->stats;
	struct sample_stats *st = s->stats = xcalloc(1, sizeof(*st));
	for (unsigned r = 0; r < R_N; r++) {
		st->have[r] = true;
		for (unsigned k = 0; k < 2; k++)
			for (unsigned j = 0; j < RATIO_EVS; j++) {
				const char *name = ratio_ev[r][k][j];
				st->neg[r][k][j] = name && name[0] == '-';
				if (st->neg[r][k][j])
					name++;
				int idx = name && !strcmp(name, "@") ? -2 :
					  event_index(tr, name);
				st->ev[r][k][j] = idx;
				if (name && idx == -1)
					st->have[r] = false;
			}
	}
	for (unsigned k = 0; k < 4; k++)
		for (unsigned j = 0; j < 3; j++)
			st->cest[k][j] = event_index(tr, cest_ev[k][j]);
	st->ir = event_index(tr, "Ir");
	return st;
}

/* The function PC is in (resolved once). */
static uint32_t fn_of(struct tracer *tr, struct sample_stats *st, uint64_t pc)
{
	struct hashtab_probe p;
	for (uint32_t i = hashtab_first(&st->pc_map, hash_u64(pc), &p);
	     i != HASHTAB_NONE; i = hashtab_next(&st->pc_map, &p))
		if (st->pcs[i].pc == pc)
			return st->pcs[i].id;
	struct src_loc loc;
	sym_lookup(tr->syms, pc, &loc);
	char *key = xasprintf("%s\t%s", loc.file ? loc.file : "???",
			      loc.fn ? loc.fn : "???");
	for (char *c = key; *c; c++)
		if (*c == '\n')
			*c = ' ';
	bool is_new;
	uint32_t id = strintern_id(&st->names, key, strlen(key), &is_new);
	free(key);
	if (is_new) {
		if (st->n_fn == st->cap_fn) {
			st->cap_fn = st->cap_fn ? 2 * st->cap_fn : 256;
			st->fn = xreallocarray(st->fn, st->cap_fn, sizeof(*st->fn));
			st->touched = xreallocarray(st->touched, st->cap_fn,
					       sizeof(*st->touched));
		}
		memset(&st->fn[st->n_fn++], 0, sizeof(*st->fn));
	}
	if (st->n_pcs == st->cap_pcs) {
		st->cap_pcs = st->cap_pcs ? 2 * st->cap_pcs : 1024;
		st->pcs = xreallocarray(st->pcs, st->cap_pcs, sizeof(*st->pcs));
	}
	st->pcs[st->n_pcs].pc = pc;
	st->pcs[st->n_pcs].id = id;
	hashtab_insert(&st->pc_map, &p, st->n_pcs++, pc_hash_of, st);
	return id;
}

static double ev_sum(const uint64_t *row, const int *ev, const bool *neg)
{
	double v = 0;
	for (unsigned j = 0; j < RATIO_EVS; j++)
		if (ev[j] >= 0)
			v += neg[j] ? -(double)row[ev[j]] : (double)row[ev[j]];
	return v;
}

/* Sample table C's costs go to the profile's table and the statistics. */
static void fold(struct tracer *tr, struct cost_table *c)
{
	struct sample_state *s = &tr->smp;
	struct sample_stats *st = stats_of(tr);
	unsigned ne = tr->n_events;
	int ir = st->ir;
	double total = 0, cyc[4] = { 0, 0, 0, 0 };
	st->n_touched = 0;
	for (size_t i = 0; i < costs_count(c); i++) {
		uint64_t pc = costs_pc_at(c, i);
		const uint64_t *row = costs_row_at(c, i);
		uint64_t *to = costs_row(s->kept, pc);
		for (unsigned e = 0; e < ne; e++)
			to[e] += row[e];
		uint32_t id = fn_of(tr, st, pc);
		struct sfn *f = &st->fn[id];
		if (!f->touched) {
			f->touched = true;
			memset(f->cur, 0, sizeof(f->cur));
			st->touched[st->n_touched++] = id;
		}
		for (unsigned r = 0; r < R_N; r++) {
			if (!st->have[r])
				continue;
			f->cur[r][0] += ev_sum(row, st->ev[r][0],
					       st->neg[r][0]);
			f->cur[r][1] += ev_sum(row, st->ev[r][1],
					       st->neg[r][1]);
		}
		if (ir >= 0)
			total += (double)row[ir];
		for (unsigned k = 0; k < 4; k++)
			for (unsigned j = 0; j < 3; j++)
				if (st->cest[k][j] >= 0)
					cyc[k] += (double)row[st->cest[k][j]];
	}
	/* The sample's weight: the instructions a cycle the model estimates
	 * for it.  Samples land in proportion to the target's time, so one
	 * whose code runs slowly (missing) is taken more often than its
	 * instructions deserve; weighted so, each counts in proportion to
	 * its instructions, as in a profile of the whole run. */
	double cycles = 0;
	for (unsigned k = 0; k < 4; k++)
		cycles += cest_cost[k] * cyc[k];
	double w = cycles > 0 && total > 0 ? total / cycles : 1;
	st->n++;
	st->t1 += w * total;
	st->t2 += w * total * w * total;
	for (uint32_t k = 0; k < st->n_touched; k++) {
		struct sfn *f = &st->fn[st->touched[k]];
		f->touched = false;
		if (f->cur[R_SHARE][0] > 0)
			f->n++;
		f->cur[R_SHARE][1] = total;
		for (unsigned r = 0; r < R_N; r++) {
			double m = w * f->cur[r][0], a = w * f->cur[r][1];
			f->sum[r][0] += m;
			f->sum[r][1] += a;
			f->sum[r][2] += m * m;
			f->sum[r][3] += a * a;
			f->sum[r][4] += m * a;
		}
	}
}

/* The model counts DLuf: a look at the target's memory at each sample's
 * start and end says which it never touched (touched.c). */
static bool wants_touched(const struct tracer *tr)
{
	return tr->opt.cfg.first_refs && event_index(tr, "DLuf") >= 0;
}

void sample_begin(struct tracer *tr, struct tracee *t)
{
	struct sample_state *s = &tr->smp;
	struct engine *e = &tr->eng;
	if (!tr->opt.sample_len)
		return;
	s->is_due = false;
	s->n++;
	s->began = wall_ns();
	s->stall_at = 0;
	s->from = s->phase_steps = t->win.steps;
	s->phase_t = wall_ns();
	s->poke_at = 0;
	/* the warm-up's table, or the sample's */
	s->kept = engine_swap_costs(e, NULL);
	cache_begin_sample(e->cm, wants_touched(tr) ?
			   touched_snapshot(tr, t->tid, false) : NULL);
	s->warming = tr->opt.sample_warmup > 0;
	e->sample_cap = s->from + (s->warming ? tr->opt.sample_warmup :
				   tr->opt.sample_len);
}

bool sample_warmed(struct tracer *tr, struct tracee *t)
{
	struct sample_state *s = &tr->smp;
	struct engine *e = &tr->eng;
	if (!s->warming || !engine_at_sample_cap(e, t) ||
	    engine_at_stop_event(t))
		return false;
	/* The warm-up's costs go; the sample's table from here, to LENGTH
	 * from the sample's first instruction. */
	engine_drop_costs(e, engine_swap_costs(e, NULL));
	s->warming = false;
	s->warm += t->win.steps - s->from;
	e->sample_cap = s->from + tr->opt.sample_len;
	s->from = s->phase_steps = t->win.steps;
	s->phase_t = wall_ns();
	s->poke_at = 0;
	return true;
}

void sample_end(struct tracer *tr, struct tracee *lead)
{
	struct sample_state *s = &tr->smp;
	struct engine *e = &tr->eng;
	if (!tr->opt.sample_len || !s->kept)
		return;
	if (wants_touched(tr))
		touched_snapshot(tr, lead->tid, true);	/* what it touched */
	if (s->warming) {
		s->warm += lead->win.steps - s->from;	/* ended in it */
	} else {
		s->counted += lead->win.steps - s->from;
		fold(tr, engine_costs(e));
	}
	engine_drop_costs(e, engine_swap_costs(e, s->kept));
	s->kept = NULL;
	s->warming = false;
	e->sample_cap = 0;
	s->last_cpu = target_cpu_ns(tr);
	uint64_t gap = jittered(s, tr->opt.sample_period_ns);
	if (tr->opt.sample_budget) {
		/* --sample-budget=B%: the native run between two samples at
		 * least (100 - B) / B times this one's wall time */
		uint64_t took = wall_ns() - s->began;
		uint64_t need = took * (100 - tr->opt.sample_budget) /
				tr->opt.sample_budget;
		if (need > gap) {
			gap = need;
			s->stretched++;
		}
	}
	s->due = s->last_cpu + gap;
}

struct cost_table *sample_costs(struct tracer *tr)
{
	struct sample_state *s = &tr->smp;
	struct engine *e = &tr->eng;
	if (!s->kept)
		return engine_costs(e);
	if (!s->warming) {
		/* a sample in progress: what it counted so far, as one */
		fold(tr, engine_costs(e));
		costs_free(engine_swap_costs(e, NULL));
	}
	return s->kept;
}

void sample_write_stats(struct tracer *tr, FILE *f)
{
	const struct sample_stats *st = tr->smp.stats;
	if (!tr->opt.sample_len || !st)
		return;
	fprintf(f, "# cachetrace-samples: %.0f %.17g %.17g", st->n, st->t1,
		st->t2);
	for (unsigned r = 0; r < R_N; r++)
		if (st->have[r])
			fprintf(f, " %s", ratio_name[r]);
	fputc('\n', f);
	for (uint32_t i = 0; i < st->n_fn; i++) {
		const struct sfn *fn = &st->fn[i];
		fprintf(f, "# cachetrace-sample\t%s\t%" PRIu64,
			st->names.str[i], fn->n);
		for (unsigned r = 0; r < R_N; r++) {
			if (!st->have[r])
				continue;
			fputc('\t', f);
			for (unsigned k = 0; k < 5; k++)
				fprintf(f, "%s%.17g", k ? " " : "",
					r == R_SHARE && k == 1 ? st->t1 :
					r == R_SHARE && k == 3 ? st->t2 :
					fn->sum[r][k]);
		}
		fputc('\n', f);
	}
}

static int by_ir(const void *a, const void *b, void *ctx)
{
	const struct sample_stats *st = ctx;
	double x = st->fn[*(const uint32_t *)a].sum[R_SHARE][0];
	double y = st->fn[*(const uint32_t *)b].sum[R_SHARE][0];
	return x < y ? 1 : x > y ? -1 : 0;
}

void sample_print_support(struct tracer *tr, FILE *f, const char *prefix)
{
	struct sample_stats *st = tr->smp.stats;
	if (!tr->opt.sample_len || !st || !st->n_fn)
		return;
	uint32_t *ord = xcalloc(st->n_fn, sizeof(*ord));
	for (uint32_t i = 0; i < st->n_fn; i++)
		ord[i] = i;
	qsort_r(ord, st->n_fn, sizeof(*ord), by_ir, st);
	fprintf(f, "%sSamples behind the top functions' estimates:", prefix);
	for (uint32_t k = 0; k < st->n_fn && k < 5; k++) {
		const char *name = strchr(st->names.str[ord[k]], '\t');
		fprintf(f, "%s %s %" PRIu64, k ? "," : "", name + 1,
			st->fn[ord[k]].n);
	}
	fprintf(f, " (of %.0f)\n", st->n);
	free(ord);
	/* The LL bounds of all that was sampled: the profile's totals (the
	 * samples' counted parts) through the ratios' own events. */
	const uint64_t *tot = tr->totals;
	if (!st->have[R_LLHI] || !tot)
		return;
	double m = ev_sum(tot, st->ev[R_LL][0], st->neg[R_LL][0]);
	double a = ev_sum(tot, st->ev[R_LL][1], st->neg[R_LL][1]);
	double lo = ev_sum(tot, st->ev[R_LLLO][0], st->neg[R_LLLO][0]);
	double hi = ev_sum(tot, st->ev[R_LLHI][0], st->neg[R_LLHI][0]);
	int uf = event_index(tr, "DLuf");
	double fresh = uf >= 0 ? (double)tot[uf] : 0;
	if (a > 0)
		fprintf(f, "%sLL: %.0f of the %.0f data misses at a line's first "
			"reference in its sample (which the LL state earlier "
			"samples left decides, stale); %.0f first references, "
			"%.0f of them to memory never touched before (misses in "
			"any run): the LL miss rate lies between %.4f%% and "
			"%.4f%% (the others as misses none or all)\n", prefix,
			m - lo + fresh, m, hi - lo + fresh, fresh, 100 * lo / a,
			100 * hi / a);
}

void sample_free(struct tracer *tr)
{
	touched_free(tr);
	struct sample_stats *st = tr->smp.stats;
	if (!st)
		return;
	strintern_free(&st->names);
	hashtab_free(&st->pc_map);
	free(st->fn);
	free(st->pcs);
	free(st->touched);
	free(st);
	tr->smp.stats = NULL;
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
	fprintf(f, " of the target's CPU time, %" PRIu64 " instructions, "
		"the first %" PRIu64 " a warm-up%s: %" PRIu64 " sample%s, %"
		PRIu64 " instructions counted, %" PRIu64 " in warm-ups (not "
		"counted)", o->sample_len, o->sample_warmup,
		o->cold_windows ? ", caches emptied at each" : "", s->n,
		s->n == 1 ? "" : "s", s->counted, s->warm);
	if (!desc && run > 0)
		fprintf(f, "; %.1f%% of the run's %.2f s spent in samples",
			100.0 * tr->eng.t_stepping / run, run);
	if (!desc && s->stalls)
		fprintf(f, "; %" PRIu64 " ended early, their thread waiting",
			s->stalls);
	if (o->sample_budget)
		fprintf(f, "; --sample-budget=%u%% stretched %" PRIu64
			" period%s", o->sample_budget, s->stretched,
			s->stretched == 1 ? "" : "s");
	fputc('\n', f);
}
