/* The stepping engine: what happens at every single-step trap.
 *
 * Per trap: the instruction at the old pc was decoded before the step
 * (decode cache, so a lookup); its accesses are computed from the
 * registers before the step and its branch outcome from the pc after; the
 * I-fetch, the data accesses in order and the branch outcomes go into the
 * models, which add into the pc's cost row.  Nothing is allocated per
 * step. */
#include "tracer.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <time.h>
#include <unistd.h>

#include "error.h"

double now_seconds(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int engine_begin(struct engine *e, struct tracee *t)
{
	if (ptrace(PTRACE_GETREGS, t->tid, NULL, &e->regs) < 0)
		return -errno;
	e->stepped = t;
	t->flags |= TF_STEPPING;
	e->t_start = e->t_last_progress = now_seconds();
	tracee_pin(t->tid);
	return 0;
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

int engine_prepare(struct engine *e)
{
	const char *err = NULL;
	e->insn = decode_insn(e->dec, e->regs.rip, &err);
	if (!e->insn) {
		error_msg("cannot decode the instruction at 0x%llx: %s",
			  e->regs.rip, err ? err : "unknown error");
		return -1;
	}
	if (e->insn->unknown)
		report_unknown(e, e->insn);
	/* A gather clears its mask as it goes: its vector state must be
	 * read before the step.  A no-op for other instructions; on failure
	 * decode_step reads the state after the step. */
	(void)decode_prepare(e->dec, e->insn);
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

void engine_account(struct engine *e, const struct user_regs_struct *after)
{
	const struct insn *in = e->insn;
	struct step_events ev;
	uint64_t *row = costs_row(e->costs, in->pc);

	int r = decode_step(e->dec, in, &e->regs, after, &ev);
	if (r < 0) {
		/* The vector registers could not be read (thread dying):
		 * count the fetch, nothing else. */
		memset(&ev, 0, sizeof(ev));
		ev.n_fetch = 1;
	}
	cache_fetch(e->cm, in->pc, in->len, row);
	if (e->trace_mem)
		trace_fetch(e->trace_mem, in);
	for (unsigned i = 0; i < ev.n_acc; i++) {
		cache_access(e->cm, &ev.acc[i], row);
		if (e->trace_mem)
			trace_access(e->trace_mem, &ev.acc[i]);
	}
	if (ev.n_fetch > 1) {
		/* A rep string instruction's final rcx == 0 check, which
		 * Cachegrind counts as one more execution. */
		cache_fetch(e->cm, in->pc, in->len, row);
		if (e->trace_mem)
			trace_fetch(e->trace_mem, in);
	}
	if (e->bm) {
		uint64_t *brow = row + e->bm_offset;
		for (unsigned i = 0; i < ev.n_cond; i++)
			branch_cond(e->bm, in->pc, ev.cond_taken[i], brow);
		if (ev.indirect)
			branch_indirect(e->bm, in->pc, ev.ind_target, brow);
		if ((in->branch == BR_CALL || in->branch == BR_CALL_IND) &&
		    e->bm->ops->call)
			e->bm->ops->call(e->bm, in->pc, in->pc + in->len, brow);
		else if (in->branch == BR_RET && e->bm->ops->ret)
			e->bm->ops->ret(e->bm, in->pc, after->rip, brow);
	}
	e->regs = *after;
	e->steps++;
	if (e->progress && (e->steps & 4095) == 0)
		engine_progress(e, false);
}

void engine_account_fetch_only(struct engine *e)
{
	const struct insn *in = e->insn;
	uint64_t *row = costs_row(e->costs, in->pc);
	cache_fetch(e->cm, in->pc, in->len, row);
	if (e->trace_mem)
		trace_fetch(e->trace_mem, in);
	e->steps++;
}

bool engine_at_stop(const struct engine *e)
{
	if (e->max_steps && e->steps >= e->max_steps)
		return true;
	if (e->stop_on_return)
		return e->regs.rip == e->stop_pc && e->regs.rsp > e->entry_sp;
	return e->stop_pc && e->regs.rip == e->stop_pc;
}

void engine_progress(struct engine *e, bool force)
{
	double t = now_seconds();
	if (!force && t - e->t_last_progress < 0.25)
		return;
	e->t_last_progress = t;
	double el = t - e->t_start;
	struct src_loc loc = { "???", "???", 0 };
	if (e->syms)
		sym_lookup(e->syms, e->regs.rip, &loc);
	char line[160];
	int n = snprintf(line, sizeof(line),
			 "cachetrace: %" PRIu64 " instructions, %.1fk steps/s, "
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

void engine_end(struct engine *e)
{
	if (e->stepped) {
		tracee_unpin(e->stepped->tid);
		e->stepped->flags &= ~TF_STEPPING;
		e->stepped = NULL;
	}
	if (e->progress && e->progress_width) {
		fprintf(stderr, "\r%*s\r", e->progress_width, "");
		e->progress_width = 0;
	}
}
