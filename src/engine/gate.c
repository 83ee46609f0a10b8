/* The native engine (--engine=native): the patent's own method.  The
 * window runs on the real CPU at full speed; the start event enables the
 * host's counters on the window's threads (perf_event_open, counters.c)
 * and the stop event disables them, so that only the window is counted,
 * callees, other libraries and the kernel's work for it (:k) included.
 *
 * - The lead (the thread at the start event) has its counters opened on
 *   it alone the first time, disabled, and kept from one window to the
 *   next (each window counted from a mark: opening and closing them costs
 *   the kernel a static key's change, an IPI to every CPU).  They are
 *   enabled just before it is let run (PTRACE_CONT) and disabled at each
 *   of its stops: what the gate adds is the kernel's return to user space
 *   and entry from it, and the stop's int3, nothing of the thread's own
 *   code.  With --threads=all the other threads are counted as they run,
 *   from the window's start to its end, never stopped; windows are one
 *   at a time.
 * - --counter-sample: a sampler on each thread too; the kernel's rings
 *   are read at each stop and every 20 ms (the loop's bounded wait), each
 *   sample's period added to its pc's row; with --call-stacks its 8 KB of
 *   stack are unwound by libdw (CFI) into a calling context.
 * - The stop event is an int3 of ours at the stop pc (the return address
 *   of the start function, or --stop), journaled like every int3 so that
 *   a guardian takes it out if cachetrace dies; a hit that is not the
 *   stop (a deeper frame's return of a recursive start function) is
 *   stepped over and the thread runs on.  A longjmp or exception past the
 *   start function's frame is seen at the next stop of the thread (a
 *   signal, its exit, the end of the run), not where it happened.
 * - Signals, system calls, forks and threads run natively; a signal is
 *   delivered with the next PTRACE_CONT.
 * - No instruction is decoded and no model is fed: each thread's counts
 *   go, when it leaves the window, into the row of the window's start pc
 *   (the profile's lines are the start events), and into the window's
 *   total for the summary (each counter per window, min/median/max over
 *   the windows). */
#include "engine.h"

#include <elfutils/libdwfl.h>
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/uio.h>

#include "callstack.h"
#include "counters.h"
#include "error.h"
#include "tracer.h"

/* A thread's counters in the window, and its sampler. */
struct gthread_counters {
	struct counter_set c;
	struct counter_sampler smp;
	bool in;		/* counted in the window under way */
};

struct gate {
	struct counter_spec spec[COUNTERS_MAX];
	unsigned n;			/* counted events */
	bool scaled;			/* the kernel multiplexed some */
	/* --call-stacks: each sample's stack unwound from its copy (libdw's
	 * unwinder, the modules of the process as of the window's start) */
	bool stacks;
	Dwfl *dwfl;
	pid_t dwfl_pid;
	const struct counter_sample *smp;	/* the one being unwound */
	pid_t smp_tid;
	uint64_t pcs[64];
	unsigned n_pcs;
	uint64_t unwound;		/* samples with more than their pc */
	/* --counter-sample: the event sampled, every PERIOD, its
	 * estimate in column N (n_ev: n + 1) */
	struct counter_spec sample;
	uint64_t period, samples, lost, throttled;
	unsigned n_ev;
	struct gthread_counters *sets;	/* one per thread in the window */
	size_t n_sets;
	uint64_t start_pc;		/* of the window under way */
	uint64_t *per_win;		/* n counts per window */
	unsigned n_win;
	const char **names;		/* the events' names (with :k) */
};

/* --counter-sample=EVENT:PERIOD into G: 0, or -1 said. */
static int parse_sample(struct tracer *tr, struct gate *g)
{
	const char *v = tr->opt.counter_sample, *colon = strrchr(v, ':');
	char *end, err[256], ev[64];
	unsigned n;
	if (!colon || colon == v || (size_t)(colon - v) >= sizeof(ev)) {
		error_usage("--counter-sample: EVENT:PERIOD (cpu-clock:100000, "
			    "cycles:100003), not '%s'", v);
		return -1;
	}
	snprintf(ev, sizeof(ev), "%.*s", (int)(colon - v), v);
	errno = 0;
	unsigned long long period = strtoull(colon + 1, &end, 10);
	if (errno || *end || !period || colon[1] == '-') {
		error_usage("--counter-sample: the period of '%s' is not a "
			    "count above 0", v);
		return -1;
	}
	struct counter_spec one[COUNTERS_MAX];
	if (counters_parse(ev, one, &n, err, sizeof(err)) < 0) {
		/* its message less its "--counters: " */
		const char *m = strchr(err, ':');
		error_usage("--counter-sample: %s", m ? m + 2 : err);
		return -1;
	}
	if (n != 1) {
		error_usage("--counter-sample: one event, not '%s'", ev);
		return -1;
	}
	int rc = counters_try(&one[0], 0);
	if (rc < 0) {
		error_msg("--counter-sample: %s cannot be sampled here (%s)",
			  one[0].name, one[0].hardware ?
			  "no hardware PMU for us" : strerror(-rc));
		return -1;
	}
	g->sample = one[0];
	g->period = period;
	g->n_ev = g->n + 1;
	return 0;
}

int gate_setup(struct tracer *tr)
{
	struct gate *g = xcalloc(1, sizeof(*g));
	tr->gate = g;
	const char *why = NULL;
	bool pmu = counters_pmu(&why);
	char err[256];
	if (tr->opt.counters) {
		if (counters_parse(tr->opt.counters, g->spec, &g->n, err,
				   sizeof(err)) < 0) {
			error_usage("%s", err);
			return 2;
		}
		/* what the host cannot give: a note, or an error when
		 * nothing would be left */
		unsigned k = 0;
		for (unsigned i = 0; i < g->n; i++) {
			int rc = counters_try(&g->spec[i], 0);
			if (rc == 0) {
				g->spec[k++] = g->spec[i];
				continue;
			}
			if (!tr->opt.quiet)
				error_msg("note: --counters: %s%s cannot be "
					  "counted here (%s)", g->spec[i].name,
					  g->spec[i].kernel ? ":k" : "",
					  g->spec[i].hardware && !pmu ? why :
					  strerror(-rc));
		}
		if (!k) {
			error_msg("--counters: none of the events can be "
				  "counted here");
			return 1;
		}
		g->n = k;
	} else {
		counters_default(g->spec, &g->n, pmu);
	}
	g->n_ev = g->n;
	if (tr->opt.counter_sample && parse_sample(tr, g) < 0)
		return 2;
	g->stacks = tr->opt.call_stacks;
	if (g->stacks && !g->period) {
		error_usage("--engine=native: --call-stacks needs "
			    "--counter-sample (the stacks are the samples')");
		return 2;
	}
	if (!tr->opt.counters && !pmu && !tr->opt.quiet)
		error_msg("note: the native engine counts software events "
			  "only: %s", why);
	g->names = xcalloc(g->n_ev, sizeof(*g->names));
	if (g->period) {
		char *s = xmalloc(strlen(g->sample.name) + 8);
		sprintf(s, "%s%s.est", g->sample.name,
			g->sample.kernel ? ":k" : "");
		g->names[g->n] = s;
	}
	for (unsigned i = 0; i < g->n; i++) {
		if (g->spec[i].kernel) {
			char *s = xmalloc(strlen(g->spec[i].name) + 3);
			sprintf(s, "%s:k", g->spec[i].name);
			g->names[i] = s;
		} else {
			g->names[i] = g->spec[i].name;
		}
	}
	free(tr->event_names);
	tr->event_names = xcalloc(g->n_ev, sizeof(char *));
	for (unsigned i = 0; i < g->n_ev; i++)
		tr->event_names[i] = g->names[i];
	tr->n_events = tr->eng.n_events = g->n_ev;
	/* the folded stacks' event: the samples' estimate unless another
	 * of ours was named */
	if (g->stacks && tr->opt.folded_out) {
		unsigned i = g->n;
		if (tr->opt.folded_event_given)
			for (i = 0; i < g->n_ev &&
			     strcmp(g->names[i], tr->opt.folded_event); i++)
				;
		if (i == g->n_ev) {
			error_usage("--folded-event: '%s' is not an event of "
				    "the native engine (%s...)",
				    tr->opt.folded_event, g->names[0]);
			return 2;
		}
		tr->folded_event = i;
	}
	tr->eng.bm_offset = g->n_ev;
	engine_new_costs(&tr->eng);
	return 0;
}

static struct gthread_counters *set_of(struct gate *g, pid_t tid)
{
	for (size_t i = 0; i < g->n_sets; i++)
		if (g->sets[i].c.tid == tid)
			return &g->sets[i];
	return NULL;
}

/* ---- a sample's stack (--call-stacks), unwound by libdw ---- */

static pid_t unw_next_thread(Dwfl *dwfl, void *arg, void **thread_argp)
{
	(void)dwfl;
	struct gate *g = arg;
	if (*thread_argp)
		return 0;
	*thread_argp = g;
	return g->smp_tid;
}

static bool unw_get_thread(Dwfl *dwfl, pid_t tid, void *arg,
			   void **thread_argp)
{
	(void)dwfl;
	(void)tid;
	*thread_argp = arg;
	return true;
}

/* The stack from the sample's copy; the rest (the code, CFI read from
 * memory, other data) from the process as it is now. */
static bool unw_memory_read(Dwfl *dwfl, Dwarf_Addr addr, Dwarf_Word *result,
			    void *arg)
{
	(void)dwfl;
	struct gate *g = arg;
	const struct counter_sample *s = g->smp;
	uint64_t sp = s->regs[7];
	if (addr >= sp && addr - sp + 8 <= s->stack_len) {
		memcpy(result, s->stack + (addr - sp), 8);
		return true;
	}
	struct iovec local = { result, 8 }, remote = { (void *)addr, 8 };
	return process_vm_readv(g->dwfl_pid, &local, 1, &remote, 1, 0) == 8;
}

static bool unw_set_registers(Dwfl_Thread *thread, void *arg)
{
	struct gate *g = arg;
	Dwarf_Word regs[17];
	for (unsigned i = 0; i < 17; i++)
		regs[i] = g->smp->regs[i];
	return dwfl_thread_state_registers(thread, 0, 17, regs);
}

static const Dwfl_Thread_Callbacks unw_callbacks = {
	.next_thread = unw_next_thread,
	.get_thread = unw_get_thread,
	.memory_read = unw_memory_read,
	.set_initial_registers = unw_set_registers,
};

static char *debuginfo_path;
static const Dwfl_Callbacks unw_proc = {
	.find_elf = dwfl_linux_proc_find_elf,
	.find_debuginfo = dwfl_standard_find_debuginfo,
	.debuginfo_path = &debuginfo_path,
};

static void unw_end(struct gate *g)
{
	if (g->dwfl)
		dwfl_end(g->dwfl);
	g->dwfl = NULL;
}

/* The process's modules as they are now (a window's start). */
static void unw_begin(struct gate *g, pid_t pid)
{
	unw_end(g);
	g->dwfl = dwfl_begin(&unw_proc);
	if (!g->dwfl)
		return;
	g->dwfl_pid = pid;
	if (dwfl_linux_proc_report(g->dwfl, pid) != 0 ||
	    dwfl_report_end(g->dwfl, NULL, NULL) != 0 ||
	    !dwfl_attach_state(g->dwfl, NULL, pid, &unw_callbacks, g)) {
		debug_msg("native: no unwinder for process %d: %s", pid,
			  dwfl_errmsg(-1));
		unw_end(g);
	}
}

static int unw_frame(Dwfl_Frame *state, void *arg)
{
	struct gate *g = arg;
	Dwarf_Addr pc;
	bool activation;
	if (!dwfl_frame_pc(state, &pc, &activation) ||
	    g->n_pcs == sizeof(g->pcs) / sizeof(g->pcs[0]))
		return DWARF_CB_ABORT;
	g->pcs[g->n_pcs++] = pc;
	return DWARF_CB_OK;
}

struct sample_ctx {
	struct tracer *tr;
	pid_t tid;
};

/* One sample: its estimate (the period) into its pc's row, and with
 * call stacks into its stack's context. */
static void sample_at(void *ctx, const struct counter_sample *smp)
{
	struct sample_ctx *c = ctx;
	struct tracer *tr = c->tr;
	struct gate *g = tr->gate;
	engine_pc_row(&tr->eng, smp->ip)[g->n] += g->period;
	if (!tr->eng.cs)
		return;
	g->pcs[0] = smp->ip;
	g->n_pcs = 1;
	if (g->dwfl && smp->has_regs && smp->stack_len) {
		g->smp = smp;
		g->smp_tid = c->tid;
		g->n_pcs = 0;
		dwfl_getthread_frames(g->dwfl, c->tid, unw_frame, g);
		if (!g->n_pcs) {
			g->pcs[0] = smp->ip;
			g->n_pcs = 1;
		}
		g->unwound += g->n_pcs > 1;
	}
	callstack_sample(tr->eng.cs, c->tid, g->pcs, g->n_pcs, g->n,
			 g->period);
}

static void read_samples(struct tracer *tr, struct gthread_counters *s)
{
	struct gate *g = tr->gate;
	if (!g->period)
		return;
	struct sample_ctx c = { tr, s->c.tid };
	g->samples += counters_sampler_read(&s->smp, sample_at, &c);
}


/* Thread TID's counters (and sampler), opened disabled the first time:
 * NULL when they cannot be (said). */
static struct gthread_counters *open_set(struct gate *g, pid_t tid)
{
	struct gthread_counters *old = set_of(g, tid);
	if (old)
		return old;
	g->sets = xreallocarray(g->sets, g->n_sets + 1, sizeof(*g->sets));
	struct gthread_counters *s = &g->sets[g->n_sets];
	const char *which = "?";
	int rc = counters_open(&s->c, tid, g->spec, g->n, &which);
	memset(&s->smp, 0, sizeof(s->smp));
	s->smp.fd = -1;
	if (rc == 0 && g->period) {
		which = g->sample.name;
		rc = counters_sampler_open(&s->smp, tid, &g->sample, g->period,
					   g->stacks ? 8192 : 0);
		if (rc < 0)
			counters_close(&s->c);
	}
	if (rc < 0) {
		errno = -rc;
		perror_msg("cannot count %s on thread %d", which, tid);
		return NULL;
	}
	g->n_sets++;
	return s;
}

/* Set S closed, and out of G's. */
static void drop_set(struct gate *g, struct gthread_counters *s)
{
	counters_close(&s->c);
	counters_sampler_close(&s->smp);
	*s = g->sets[--g->n_sets];
}

static void enable_set(struct gthread_counters *s, bool on)
{
	counters_enable(&s->c, on);
	counters_sampler_enable(&s->smp, on);
}

/* Thread TID's counts of the window from now on (its set opened the
 * first time): NULL when they cannot be had. */
static struct gthread_counters *join_set(struct gate *g, pid_t tid)
{
	struct gthread_counters *s = open_set(g, tid);
	if (s) {
		counters_mark(&s->c);
		s->in = true;
	}
	return s;
}

void gate_count_thread(struct tracer *tr, pid_t tid)
{
	struct gthread_counters *s;
	if (tr->engine == &native_engine && tr->gate &&
	    (s = join_set(tr->gate, tid)))
		enable_set(s, true);
}

static int gate_begin_window(struct tracer *tr, struct tracee *t)
{
	struct gate *g = tr->gate;
	int rc = step_join(tr, t);
	if (rc < 0)
		return rc;
	/* one window at a time (window_can_begin): T leads it */
	g->start_pc = t->regs.rip;
	if (g->stacks)
		unw_begin(g, tr->target_pid);
	/* the sets of threads gone since the last window, closed */
	for (size_t i = 0; i < g->n_sets; )
		if (tracee_find(tr, g->sets[i].c.tid))
			i++;
		else
			drop_set(g, &g->sets[i]);
	if (!join_set(g, t->tid))
		return -errno;		/* open_set's, said */
	/* --threads=all: the others counted as they run (not stopped: a
	 * thread that runs natively in a window is not ours to step) */
	for (struct tracee *o = tr->tracees; tr->opt.threads_all && o;
	     o = o->next)
		if (o != t)
			gate_count_thread(tr, o->tid);
	if (g->n_win < tr->eng.windows) {
		g->per_win = xreallocarray(g->per_win, tr->eng.windows,
					   g->n * sizeof(uint64_t));
		memset(g->per_win + (size_t)g->n_win * g->n, 0,
		       (tr->eng.windows - g->n_win) * g->n *
		       sizeof(uint64_t));
		g->n_win = tr->eng.windows;
	}
	return 0;
}

static enum verdict gate_run(struct tracer *tr, struct tracee *t)
{
	struct gate *g = tr->gate;
	/* the stop event: our int3 there, once per window */
	if (tracee_leads(t) && t->win.stop_pc && !tr->stop_bp.inserted &&
	    breakpoint_insert(t->tid, &tr->stop_bp, t->win.stop_pc) < 0) {
		t->win.fail = "the stop event's breakpoint cannot be set";
		return VERDICT_FAILED;
	}
	t->win.int3 = breakpoint_at_pc(tr, t);
	if (t->win.int3)
		return VERDICT_INT3;	/* stepped over, then here again */
	struct gthread_counters *s = set_of(g, t->tid);
	int sig = t->inject;
	t->inject = 0;
	hwbp_sync(tr, t);		/* none of ours in the window */
	if (s)
		enable_set(s, true);
	if (tracee_restart(t, PTRACE_CONT, sig) < 0)
		error_msg("cannot run thread %d", t->tid);
	return VERDICT_RUNNING;
}

/* T stopped in the window (any event): its counters off until it runs
 * again, so that the supervisor's time is not the window's. */
static void gate_stopped(struct tracer *tr, struct tracee *t)
{
	struct gthread_counters *s = set_of(tr->gate, t->tid);
	if (s) {
		enable_set(s, false);
		read_samples(tr, s);
	}
}

static bool gate_trap(struct tracer *tr, struct tracee *t)
{
	gate_stopped(tr, t);
	int code = tracee_si_code(t->tid);
	if (si_code_is_sent(code)) {
		t->inject = SIGTRAP;	/* the target's own: delivered */
		return tracee_getregs(t->tid, &t->regs) == 0;
	}
	struct user_regs_struct r;
	if (tracee_getregs(t->tid, &r) < 0)
		return false;
	/* one byte past an int3 of ours (an int3's trap, not a step's that
	 * ran a one-byte instruction there), even one taken out since the
	 * trap (the window ended meanwhile; left there, the thread ran on
	 * from the middle of the instruction): back on it */
	struct breakpoint *bp = code == SI_KERNEL ?
				breakpoint_trapped(tr, r.rip) : NULL;
	if (bp) {
		r.rip--;
		if (tracee_setregs(t->tid, &r) < 0)
			return false;
	}
	t->regs = r;
	return true;
}

/* Thread set S's counts of the window into its row and total; the set
 * stays open for the next window. */
static void finish_set(struct tracer *tr, struct gthread_counters *s)
{
	struct gate *g = tr->gate;
	uint64_t v[COUNTERS_MAX];
	if (!s->in)
		return;
	s->in = false;
	enable_set(s, false);
	read_samples(tr, s);
	counters_read(&s->c, v, &g->scaled);
	g->lost += s->smp.lost;
	g->throttled += s->smp.throttled;
	s->smp.lost = s->smp.throttled = 0;
	uint64_t *row = engine_pc_row(&tr->eng, g->start_pc);
	uint64_t *w = g->per_win + (size_t)(g->n_win - 1) * g->n;
	for (unsigned i = 0; i < g->n; i++) {
		row[i] += v[i];
		w[i] += v[i];
	}
}

static void gate_end_window(struct tracer *tr, struct tracee *t)
{
	struct gate *g = tr->gate;
	struct gthread_counters *s = set_of(g, t->tid);
	if (s)
		finish_set(tr, s);
	/* the lead's end is the window's: the other threads' too */
	for (size_t i = 0; !tr->n_active && i < g->n_sets; i++)
		finish_set(tr, &g->sets[i]);
	/* the window is over (its lead left first, TF_LEAD cleared) */
	if (!tr->n_active && tr->stop_bp.inserted &&
	    breakpoint_remove(t->tid, &tr->stop_bp) < 0)
		error_msg("cannot remove the stop event's breakpoint at 0x%"
			  PRIx64, tr->stop_bp.addr);
	step_engine.end_window(tr, t);
}

const struct engine_ops native_engine = {
	.name = "native",
	.unstepped = true,
	.begin_window = gate_begin_window,
	.run = gate_run,
	.trap = gate_trap,
	.end_window = gate_end_window,
};

bool gate_sampling(const struct tracer *tr)
{
	return tr->gate && tr->gate->period && tr->n_active &&
	       tr->engine == &native_engine;
}

void gate_poll(struct tracer *tr)
{
	struct gate *g = tr->gate;
	for (size_t i = 0; g && i < g->n_sets; i++)
		read_samples(tr, &g->sets[i]);
}

void gate_stop(struct tracer *tr, struct tracee *t)
{
	if (tr->gate && tr->engine == &native_engine && tracee_stepping(t))
		gate_stopped(tr, t);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

void gate_describe(const struct tracer *tr, FILE *f, const char *prefix)
{
	const struct gate *g = tr->gate;
	if (!g)
		return;
	fprintf(f, "%sCounters: ", prefix);
	for (unsigned i = 0; i < g->n; i++)
		fprintf(f, "%s%s", i ? "," : "", g->names[i]);
	fprintf(f, " (perf_event_open, user space unless :k, gated by the "
		"start and stop events%s)\n", g->scaled ?
		"; multiplexed by the kernel: scaled" : "");
	if (g->period && g->stacks)
		fprintf(f, "%sStacks: %" PRIu64 " of the samples unwound "
			"(libdw, from 8 KB of stack each)\n", prefix,
			g->unwound);
	if (g->period)
		fprintf(f, "%sSampled: %s%s every %" PRIu64 "%s, %" PRIu64
			" samples%s; %s per line is an estimate (samples x "
			"period)\n", prefix, g->sample.name,
			g->sample.kernel ? ":k" : "", g->period,
			/* cpu-clock, task-clock */
			!g->sample.hardware && g->sample.config <= 1 ? " ns" :
			"",
			g->samples, g->lost ? " (more lost: the kernel's ring "
			"was full)" : g->throttled ? " (the kernel throttled "
			"the sampling: fewer than the period says)" : "",
			g->names[g->n]);
	for (unsigned w = 0; g->n_win > 1 && w < g->n_win; w++) {
		fprintf(f, "%sWindow %u:", prefix, w + 1);
		for (unsigned i = 0; i < g->n; i++)
			fprintf(f, " %s %" PRIu64, g->names[i],
				g->per_win[(size_t)w * g->n + i]);
		fputc('\n', f);
	}
}

void gate_print_summary(const struct tracer *tr, FILE *f,
			const char *prefix)
{
	const struct gate *g = tr->gate;
	if (!g)
		return;
	size_t width = 0;
	for (unsigned i = 0; i < g->n_ev; i++)
		if (strlen(g->names[i]) > width)
			width = strlen(g->names[i]);
	uint64_t *v = xcalloc(g->n_win ? g->n_win : 1, sizeof(*v));
	for (unsigned i = 0; i < g->n; i++) {
		uint64_t total = tr->totals ? tr->totals[i] : 0;
		fprintf(f, "%s%-*s %15" PRIu64, prefix, (int)width + 1,
			g->names[i], total);
		if (g->n_win > 1) {
			for (unsigned w = 0; w < g->n_win; w++)
				v[w] = g->per_win[(size_t)w * g->n + i];
			qsort(v, g->n_win, sizeof(*v), cmp_u64);
			fprintf(f, "   per window: min %" PRIu64 ", median %"
				PRIu64 ", max %" PRIu64, v[0],
				v[g->n_win / 2], v[g->n_win - 1]);
		}
		fputc('\n', f);
	}
	free(v);
	if (g->period)
		fprintf(f, "%s%-*s %15" PRIu64 "   %" PRIu64 " samples of %"
			PRIu64 "%s\n", prefix, (int)width + 1, g->names[g->n],
			tr->totals ? tr->totals[g->n] : 0, g->samples,
			g->period, g->lost ? ", more lost" : g->throttled ?
			", throttled by the kernel" : "");
	if (g->scaled)
		fprintf(f, "%s(multiplexed by the kernel: counts scaled by the "
			"time each was counted)\n", prefix);
}

void gate_free(struct tracer *tr)
{
	struct gate *g = tr->gate;
	if (!g)
		return;
	while (g->n_sets)
		drop_set(g, &g->sets[g->n_sets - 1]);
	if (g->period)
		free((char *)g->names[g->n]);
	for (unsigned i = 0; i < g->n; i++)
		if (g->spec[i].kernel)
			free((char *)g->names[i]);
	unw_end(g);
	free(g->names);
	free(g->sets);
	free(g->per_win);
	free(g);
	tr->gate = NULL;
}
