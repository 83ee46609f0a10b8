/* The accounting shared by the engines: what one executed instruction
 * feeds the models.
 *
 * Per instruction: the instruction at the old pc was decoded before the step
 * (decode cache, so a lookup); its accesses are computed from the
 * registers before the step and its branch outcome from the pc after; the
 * I-fetch, the data accesses in order and the branch outcomes go into the
 * models, which add into the pc's cost row.  Nothing is allocated per
 * step. */
#include "engine.h"

#include "tracer.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "error.h"

double now_seconds(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static bool unknown_already_reported(struct engine *e, uint64_t pc)
{
	for (size_t i = 0; i < e->n_unknown_seen; i++)
		if (e->unknown_seen[i] == pc)
			return true;
	e->unknown_seen = xreallocarray(e->unknown_seen,
					e->n_unknown_seen + 1, sizeof(pc));
	e->unknown_seen[e->n_unknown_seen++] = pc;
	return false;
}

static void report_unknown(struct engine *e, const struct insn *in)
{
	if (unknown_already_reported(e, in->pc))
		return;
	struct src_loc loc = { "???", "???", 0 };
	if (e->syms)
		sym_lookup(e->syms, in->pc, &loc);
	error_msg("warning: instruction at 0x%" PRIx64 " in %s (%s) is not in "
		  "the decoder's table: counted for Ir only", in->pc, loc.fn,
		  in->text);
}

int engine_prepare(struct engine *e, struct tracee *t)
{
	return engine_prepare_at(e, t, t->regs.rip);
}

int engine_prepare_at(struct engine *e, struct tracee *t, uint64_t pc)
{
	const char *err = NULL;
	t->insn = decode_insn(e->dec, pc, &err);
	if (!t->insn) {
		error_msg("cannot decode the instruction at 0x%" PRIx64 " in "
			  "thread %d: %s", pc, t->tid,
			  err ? err : "unknown error");
		return -1;
	}
	if (t->insn->unknown)
		report_unknown(e, t->insn);
	/* A gather clears its mask as it goes: its vector state must be
	 * read before the step.  A no-op for other instructions; on failure
	 * decode_step reads the state after the step. */
	(void)decode_prepare(e->dec, t->insn);
	return 0;
}

static void trace_fetch(FILE *f, const struct insn *in)
{
	fprintf(f, "I  %08" PRIx64 ",%u\n", in->pc, in->len);
}

static void trace_access(FILE *f, const struct mem_access *a)
{
	char c;
	switch (a->kind) {
	case ACC_READ:
		c = 'L';
		break;
	case ACC_WRITE:
	case ACC_NT_WRITE:
		c = 'S';
		break;
	case ACC_MODIFY:
		c = 'M';
		break;
	default:
		return;		/* prefetch: Lackey sees no access either */
	}
	fprintf(f, " %c %08" PRIx64 ",%u\n", c, a->addr, a->size);
}

/* PC's flat row: a direct-mapped cache of rows in front of the cost
 * table's map (rows never move; the cache is emptied with the table). */
static uint64_t *flat_row(struct engine *e, uint64_t pc)
{
	if (!e->row_cache)
		e->row_cache = xcalloc(ENGINE_ROW_CACHE, sizeof(*e->row_cache));
	size_t i = (size_t)((pc ^ (pc >> 12)) & (ENGINE_ROW_CACHE - 1));
	if (e->row_cache[i].pc != pc || !e->row_cache[i].row) {
		e->row_cache[i].pc = pc;
		e->row_cache[i].row = costs_row(e->costs, pc);
	}
	return e->row_cache[i].row;
}

void engine_new_costs(struct engine *e)
{
	if (e->costs)
		costs_free(e->costs);
	e->costs = costs_new(e->n_events);
	free(e->row_cache);
	e->row_cache = NULL;
	e->row_gen++;		/* every insn.user is stale */
	if (!e->row_gen)
		e->row_gen = 1;	/* 0 is a new record's */
}

/* INSN's flat row, kept in the decoder's record (insn.user) while the
 * cost table lasts. */
static inline __attribute__((always_inline)) uint64_t *
insn_row(struct engine *e, const struct insn *in)
{
	if (in->user_gen == e->row_gen && in->user)
		return in->user;
	struct insn *w = (struct insn *)in;	/* insn.user is ours */
	w->user = flat_row(e, in->pc);
	w->user_gen = e->row_gen;
	return w->user;
}

/* The row the models add into for INSN: the pc's flat row, or, with call
 * stacks, a zeroed scratch row that engine_commit adds to both the flat row
 * and the context's row. */
static inline __attribute__((always_inline)) uint64_t *
engine_row(struct engine *e, const struct insn *in)
{
	if (!e->cs)
		return insn_row(e, in);
	memset(e->scratch, 0, e->n_events * sizeof(*e->scratch));
	return e->scratch;
}

static void commit_cs(struct engine *e, const struct insn *in)
{
	uint64_t *row = insn_row(e, in);
	uint64_t *crow = callstack_row(e->cs, in->pc);
	for (unsigned i = 0; i < e->n_events; i++) {
		row[i] += e->scratch[i];
		crow[i] += e->scratch[i];
	}
}

static inline __attribute__((always_inline)) void
engine_commit(struct engine *e, const struct insn *in)
{
	if (e->cs)
		commit_cs(e, in);
}

static void engine_switch_core(struct engine *e, struct tracee *t)
{
	if (e->current == t)
		return;
	if (!e->current || e->current->core != t->core)
		cache_set_core(e->cm, t->core);
	e->current = t;
}

/* VEX's "&&" merge (src/decode/chase.c): the instructions of the merged
 * second block that did not run, which Cachegrind counts anyway: a fetch
 * each, into its own pc's row, and the Bc of the last (its jcc). */
static void account_vex_speculation(struct engine *e,
				    const struct step_events *ev)
{
	for (unsigned i = 0; i < ev->n_spec; i++) {
		struct insn sp = { .pc = ev->spec_pc[i], .len = ev->spec_len[i] };
		uint64_t *row = engine_row(e, &sp);
		cache_fetch(e->cm, sp.pc, sp.len ? sp.len : 1, row);
		if (e->trace_mem)
			trace_fetch(e->trace_mem, &sp);
		if (e->bm && i + 1 == ev->n_spec)
			branch_cond(e->bm, sp.pc, ev->spec_taken,
				    row + e->bm_offset);
		engine_commit(e, &sp);
	}
}

void engine_account_regs(struct engine *e, struct tracee *t,
			 const struct user_regs_struct *before,
			 const struct user_regs_struct *after)
{
	const struct insn *in = t->insn;
	struct step_events *ev = &e->ev;

	engine_switch_core(e, t);
	uint64_t *row = engine_row(e, in);
	int r = decode_step(e->dec, in, before, after, ev);
	/* An instruction of unknown length: it fell through (or we cannot
	 * tell), so its length is where the pc went, within x86's 15. */
	uint32_t len = in->len;
	if (!len) {
		uint64_t d = after->rip - in->pc;
		len = d >= 1 && d <= 15 ? (uint32_t)d : 1;
	}
	if (r < 0) {
		/* The vector registers could not be read (thread dying):
		 * count the fetch, nothing else. */
		memset(ev, 0, sizeof(*ev));
		ev->n_fetch = 1;
	}
	cache_fetch(e->cm, in->pc, len, row);
	if (e->trace_mem)
		trace_fetch(e->trace_mem, in);
	for (unsigned i = 0; i < ev->n_acc; i++) {
		const struct mem_access *a = &ev->acc[i];
		cache_access(e->cm, a, row);
		if (e->trace_mem)
			trace_access(e->trace_mem, a);
		/* --stop-watch: the decoder knows every access, so the
		 * stop watchpoint costs no debug register. */
		if (e->swatch_hi && a->addr < e->swatch_hi &&
		    a->addr + a->size > e->swatch_lo &&
		    (e->swatch_rw || a->kind == ACC_WRITE ||
		     a->kind == ACC_MODIFY || a->kind == ACC_NT_WRITE))
			t->win.watch_hit = true;
	}
	if (ev->n_fetch > 1) {
		/* A rep string instruction's final rcx == 0 check, which
		 * Cachegrind counts as one more execution. */
		cache_fetch(e->cm, in->pc, len, row);
		if (e->trace_mem)
			trace_fetch(e->trace_mem, in);
	}
	if (e->bm && in->len) {
		uint64_t *brow = row + e->bm_offset;
		for (unsigned i = 0; i < ev->n_cond; i++)
			branch_cond(e->bm, in->pc, ev->cond_taken[i], brow);
		if (ev->indirect)
			branch_indirect(e->bm, in->pc, ev->ind_target, brow);
		if ((in->branch == BR_CALL || in->branch == BR_CALL_IND) &&
		    e->bm->ops->call)
			e->bm->ops->call(e->bm, in->pc, in->pc + in->len, brow);
		else if (in->branch == BR_RET && e->bm->ops->ret)
			e->bm->ops->ret(e->bm, in->pc, after->rip, brow);
	}
	engine_commit(e, in);
	account_vex_speculation(e, ev);
	if (e->cs)
		callstack_step(e->cs, t->tid, in, before, after);
	e->steps++;
	t->win.steps++;
	if (e->progress && (e->steps & 4095) == 0)
		engine_progress(e, false);
}

void engine_account(struct engine *e, struct tracee *t,
		    const struct user_regs_struct *after)
{
	engine_account_regs(e, t, &t->regs, after);
	t->regs = *after;
}

void engine_moved(struct engine *e, struct tracee *t,
		  const struct user_regs_struct *after)
{
	if (e->cs)
		callstack_step(e->cs, t->tid, NULL, &t->regs, after);
	t->regs = *after;
}

void engine_account_fetch_only(struct engine *e, struct tracee *t)
{
	const struct insn *in = t->insn;
	engine_switch_core(e, t);
	uint64_t *row = engine_row(e, in);
	cache_fetch(e->cm, in->pc, in->len ? in->len : 1, row);
	engine_commit(e, in);
	if (e->trace_mem)
		trace_fetch(e->trace_mem, in);
	e->steps++;
}

bool engine_at_stop(const struct engine *e, const struct tracee *t)
{
	return engine_at_stop_regs(e, t, &t->regs);
}

void engine_progress(struct engine *e, bool force)
{
	double t = now_seconds();
	if (!force && t - e->t_last_progress < 0.25)
		return;
	e->t_last_progress = t;
	double el = e->t_stepping + (t - e->t_start);
	struct src_loc loc = { "???", "???", 0 };
	if (e->syms && e->current)
		sym_lookup(e->syms, e->current->regs.rip, &loc);
	char line[160];
	int n = snprintf(line, sizeof(line),
			 "cachetrace: %" PRIu64 " instructions, %.1fk/s, "
			 "%.1f s, in %.40s", e->steps,
			 el > 0 ? e->steps / el / 1000 : 0.0, el, loc.fn);
	if (n < 0)
		return;
	if (n >= (int)sizeof(line))
		n = sizeof(line) - 1;
	fprintf(stderr, "\r%s%*s", line,
		e->progress_width > n ? e->progress_width - n : 0, "");
	e->progress_width = n;
}

void engine_clear_progress(struct engine *e)
{
	if (e->progress && e->progress_width) {
		fprintf(stderr, "\r%*s\r", e->progress_width, "");
		e->progress_width = 0;
	}
}

void engine_free(struct engine *e)
{
	free(e->unknown_seen);
	free(e->scratch);
	free(e->row_cache);
	e->row_cache = NULL;
	if (e->costs)
		costs_free(e->costs);
	e->unknown_seen = NULL;
	e->scratch = NULL;
	e->costs = NULL;
}
