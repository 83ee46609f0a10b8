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

#include "modelq.h"
#include "tracer.h"

#include <capstone/capstone.h>
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "error.h"

bool is_mm_syscall(unsigned long long nr)
{
	return nr == SYS_mmap || nr == SYS_munmap || nr == SYS_mprotect ||
	       nr == SYS_brk || nr == SYS_mremap || nr == SYS_shmat ||
	       nr == SYS_shmdt || nr == SYS_pkey_mprotect ||
	       nr == SYS_madvise || nr == SYS_remap_file_pages;
}

/* System call R (its registers before it), one of is_mm_syscall's, may
 * have unmapped, replaced or reprotected code: what the decoders hold of
 * its range goes (a JIT's W^X rewrite of code at the same address, a
 * dlclose and a dlopen there; the instrument engine's blocks follow the
 * decoder's generation).  A new mapping replaces nothing but at a fixed
 * address; brk maps no code. */
static void mm_invalidate(struct engine *e, const struct user_regs_struct *r)
{
	uint64_t lo = r->rdi, len = r->rsi;
	switch (r->rax) {
	case SYS_brk:
		return;
	case SYS_mmap:
		if (!(r->r10 & MAP_FIXED))
			return;
		break;
	case SYS_munmap:
	case SYS_mprotect:
	case SYS_pkey_mprotect:
	case SYS_madvise:
	case SYS_mremap:
	case SYS_remap_file_pages:
		break;
	default:		/* shmat, shmdt: their range is the kernel's */
		lo = 0;
		len = UINT64_MAX;
		break;
	}
	uint64_t hi = len > UINT64_MAX - lo ? UINT64_MAX : lo + len;
	e->code.stale = true;
	decode_invalidate(e->dec, lo, hi);
	proof_invalidate(e, lo, hi);
}

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
	if (e->proof)
		proof_prepare(e, pc);
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

uint32_t engine_fetch_len(const struct insn *in, uint64_t next)
{
	/* An instruction of unknown length: it fell through (or we cannot
	 * tell), so its length is where the pc went, within x86's 15. */
	if (in->len)
		return in->len;
	uint64_t d = next - in->pc;
	return d >= 1 && d <= 15 ? (uint32_t)d : 1;
}

uint64_t *engine_pc_row(struct engine *e, uint64_t pc)
{
	return flat_row(e, pc);
}

static void count_pending(struct engine *e);

struct cost_table *engine_costs(struct engine *e)
{
	count_pending(e);
	return e->costs;
}

struct cost_table *engine_swap_costs(struct engine *e, struct cost_table *c)
{
	struct cost_table *old = engine_costs(e);
	if (!c && e->spare) {
		c = e->spare;
		e->spare = NULL;
	}
	e->costs = c ? c : costs_new(e->n_events);
	if (e->row_cache)
		memset(e->row_cache, 0, ENGINE_ROW_CACHE *
		       sizeof(*e->row_cache));
	e->row_gen++;		/* every insn.user is stale */
	if (!e->row_gen)
		e->row_gen = 1;
	return old;
}

void engine_drop_costs(struct engine *e, struct cost_table *c)
{
	if (!c)
		return;
	if (e->spare || costs_n_events(c) != e->n_events) {
		costs_free(c);
		return;
	}
	costs_clear(c);
	e->spare = c;
}

void engine_new_costs(struct engine *e)
{
	struct cost_table *old = engine_swap_costs(e, NULL);
	if (old)
		costs_free(old);
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

/* T's accesses go to its core in the model: the record carries it. */
static inline void engine_switch_core(struct engine *e, struct tracee *t)
{
	e->current = t;
}

static void model_core(struct engine *e, unsigned core)
{
	if (e->model_core != core + 1) {	/* 0: none yet */
		cache_set_core(e->cm, core);
		e->model_core = core + 1;
	}
}

/* VEX's "&&" merge (src/decode/chase.c): the instructions of the merged
 * second block that did not run, which Cachegrind counts anyway: a fetch
 * each, into its own pc's row, and the Bc of the last (its jcc). */
static __attribute__((noinline)) void	/* rare: off the hot path */
account_vex_speculation(struct engine *e, const uint64_t *pc,
			const uint8_t *len, unsigned n, bool taken)
{
	for (unsigned i = 0; i < n; i++) {
		struct insn in = { .pc = pc[i], .len = len[i] };
		uint64_t *row = engine_row(e, &in);
		cache_fetch(e->cm, in.pc, in.len ? in.len : 1, row);
		if (e->trace_mem)
			trace_fetch(e->trace_mem, &in);
		if (e->bm && i + 1 == n)
			branch_cond(e->bm, in.pc, taken, row + e->bm_offset);
		engine_commit(e, &in);
	}
}

/* The fetches and accesses one model op at a time, each into the
 * --trace-mem stream when there is one. */
static __attribute__((noinline)) void	/* not Cachegrind's model */
account_accesses(struct engine *e, const struct insn *in, uint32_t len,
		 const struct step_events *ev, uint64_t *row)
{
	cache_fetch(e->cm, in->pc, len, row);
	if (e->trace_mem)
		trace_fetch(e->trace_mem, in);
	for (unsigned i = 0; i < ev->n_acc; i++) {
		cache_access(e->cm, &ev->acc[i], row);
		if (e->trace_mem)
			trace_access(e->trace_mem, &ev->acc[i]);
	}
	if (ev->n_fetch > 1) {
		/* A rep string instruction's final rcx == 0 check, which
		 * Cachegrind counts as one more execution. */
		cache_fetch(e->cm, in->pc, len, row);
		if (e->trace_mem)
			trace_fetch(e->trace_mem, in);
	}
}

/* What the models make of one instruction IN (length LEN, on model core
 * CORE, NEXT the pc after it), whose events are EV, into ROW (NULL: its
 * own): the same in this thread and in the model queue's (modelq.h),
 * which rebuilds EV from its record. */
static inline __attribute__((always_inline)) void
account(struct engine *e, const struct insn *in, uint32_t len,
	unsigned core, uint64_t next, const struct step_events *ev,
	uint64_t *row)
{
	model_core(e, core);
	if (!row)
		row = engine_row(e, in);
	if (e->cm->ops->insn && !e->trace_mem)
		/* Cachegrind's model: one call for the instruction. */
		e->cm->ops->insn(e->cm, in->pc, len, ev->acc, ev->n_acc,
				 ev->n_fetch > 1, row);
	else
		account_accesses(e, in, len, ev, row);
	if (e->bm && !e->bm->ops->call && !e->bm->ops->ret) {
		/* Cachegrind's predictor (no return stack) on a path of its
		 * own: one block with the branch below measured 3-4% slower
		 * on bench/region.c. */
		uint64_t *brow = row + e->bm_offset;
		if (in->len) {
			for (unsigned i = 0; i < ev->n_cond; i++)
				branch_cond(e->bm, in->pc, ev->cond_taken[i],
					    brow);
			if (ev->indirect)
				branch_indirect(e->bm, in->pc, ev->ind_target,
						brow);
		}
	} else if (e->bm && in->len) {
		uint64_t *brow = row + e->bm_offset;
		for (unsigned i = 0; i < ev->n_cond; i++)
			branch_cond(e->bm, in->pc, ev->cond_taken[i], brow);
		if (ev->indirect)
			branch_indirect(e->bm, in->pc, ev->ind_target, brow);
		if ((in->branch == BR_CALL || in->branch == BR_CALL_IND) &&
		    e->bm->ops->call)
			e->bm->ops->call(e->bm, in->pc, in->pc + in->len, brow);
		else if (in->branch == BR_RET && e->bm->ops->ret)
			e->bm->ops->ret(e->bm, in->pc, next, brow);
	}
	engine_commit(e, in);
	if (ev->n_spec)
		account_vex_speculation(e, ev->spec_pc, ev->spec_len,
					ev->n_spec, ev->spec_taken);
}

void engine_account_rec(struct engine *e, const struct model_rec *r,
			const struct mem_access *acc,
			const struct model_spec *spec)
{
	/* The consumer has time to spare: the record back into events. */
	struct step_events ev;
	ev.n_fetch = r->n_fetch;
	ev.n_cond = r->n_cond;
	memcpy(ev.cond_taken, r->cond, sizeof(ev.cond_taken));
	ev.indirect = r->indirect;
	ev.ind_target = r->ind_target;
	ev.n_acc = r->n_acc;
	memcpy(ev.acc, acc, r->n_acc * sizeof(*acc));
	ev.n_spec = r->n_spec;
	ev.spec_taken = r->spec_taken;
	if (r->n_spec) {
		memcpy(ev.spec_pc, spec->pc, sizeof(ev.spec_pc));
		memcpy(ev.spec_len, spec->len, sizeof(ev.spec_len));
	}
	account(e, r->in, r->len, r->core, r->next, &ev, NULL);
}

bool engine_models_costly(const struct engine *e)
{
	return !e->cm->ops->cheap || (e->bm && !e->bm->ops->cheap) ||
	       e->trace_mem;
}

void engine_models_sync(struct engine *e)
{
	if (e->q)
		modelq_drain(e->q);
}

/* The record of IN, whose events are EV. */
static inline __attribute__((always_inline)) void
fill_rec(struct model_rec *r, const struct insn *in,
	 const struct step_events *ev, uint64_t next, uint32_t len,
	 unsigned core, unsigned units)
{
	r->in = in;
	r->next = next;
	r->ind_target = ev->ind_target;
	r->len = len;
	r->core = (uint16_t)core;
	r->n_fetch = ev->n_fetch;
	r->n_cond = ev->n_cond;
	memcpy(r->cond, ev->cond_taken, sizeof(r->cond));
	r->indirect = ev->indirect;
	r->n_acc = (uint8_t)ev->n_acc;
	r->n_spec = ev->n_spec;
	r->spec_taken = ev->spec_taken;
	r->units = (uint8_t)units;
}

/* --stop-watch: the decoder knows every access, so the stop watchpoint
 * costs no debug register. */
static void watch_accesses(struct engine *e, struct tracee *t,
			   const struct step_events *ev)
{
	for (unsigned i = 0; i < ev->n_acc; i++) {
		const struct mem_access *a = &ev->acc[i];
		if (a->addr < e->swatch_hi && a->addr + a->size > e->swatch_lo &&
		    (e->swatch_rw || a->kind == ACC_WRITE ||
		     a->kind == ACC_MODIFY || a->kind == ACC_NT_WRITE))
			t->win.watch_hit = true;
	}
}

/* IN's events EV (length LEN, the pc after it NEXT) into the models, or
 * their record into the queue: ROW is IN's row, NULL with the queue. */
static inline __attribute__((always_inline)) void
account_events(struct engine *e, struct tracee *t, const struct insn *in,
	       uint32_t len, uint64_t next, const struct step_events *ev,
	       uint64_t *row)
{
	if (e->swatch_hi)
		watch_accesses(e, t, ev);
	if (e->q_on) {
		unsigned units = 3 + ev->n_acc + (ev->n_spec ? 2 : 0);
		struct {
			struct model_rec r;
			struct mem_access acc[DECODE_MAX_ACCESSES];
			struct model_spec spec;
		} __attribute__((aligned(16))) rec;
		fill_rec(&rec.r, in, ev, next, len, t->core, units);
		memcpy(rec.acc, ev->acc, ev->n_acc * sizeof(ev->acc[0]));
		if (ev->n_spec) {
			struct model_spec *sp = (struct model_spec *)
						(rec.acc + ev->n_acc);
			memcpy(sp->pc, ev->spec_pc, sizeof(sp->pc));
			memcpy(sp->len, ev->spec_len, sizeof(sp->len));
		}
		modelq_put(e->q, &rec, units);
	} else {
		account(e, in, len, t->core, next, ev, row);
	}
}

/* One more instruction of T's window. */
static inline __attribute__((always_inline)) void
count_step(struct engine *e, struct tracee *t)
{
	e->steps++;
	t->win.steps++;
	if (e->progress && (e->steps & 4095) == 0)
		engine_progress(e, false);
}

void engine_account_regs(struct engine *e, struct tracee *t,
			 const struct user_regs_struct *before,
			 const struct user_regs_struct *after)
{
	const struct insn *in = t->insn;
	struct step_events *ev = &e->ev;

	engine_switch_core(e, t);
	/* Looked up first: its loads overlap the decoder's work. */
	uint64_t *row = e->q_on ? NULL : engine_row(e, in);
	int rc = decode_step(e->dec, in, before, after, ev);
	uint32_t len = engine_fetch_len(in, after->rip);
	if (rc < 0) {
		/* The vector registers could not be read (thread dying):
		 * count the fetch, nothing else. */
		memset(ev, 0, sizeof(*ev));
		ev->n_fetch = 1;
	}
	account_events(e, t, in, len, after->rip, ev, row);
	if (e->cs)
		callstack_step(e->cs, t->tid, in, before, after);
	count_step(e, t);
	if (*decode_volatile_pages(e->dec))
		for (unsigned i = 0; i < ev->n_acc; i++)
			if (ev->acc[i].kind != ACC_READ &&
			    decode_volatile_page(e->dec, ev->acc[i].addr))
				tracee_mem_changed();	/* a JIT's store */
	if (in->id == X86_INS_SYSCALL && is_mm_syscall(before->rax))
		mm_invalidate(e, before);	/* last: IN may go with it */
}

bool engine_account_again(struct engine *e, struct tracee *t, uint64_t n,
			  int64_t step)
{
	const struct insn *in = t->insn;
	if (e->cs || e->ev.n_spec || e->ev.n_fetch != 1)
		return false;
	struct step_events ev = e->ev;
	uint64_t *row = e->q_on ? NULL : engine_row(e, in);
	for (uint64_t k = 0; k < n; k++) {
		for (unsigned j = 0; j < ev.n_acc; j++)
			ev.acc[j].addr += (uint64_t)step;
		account_events(e, t, in, in->len, in->pc, &ev, row);
		count_step(e, t);
	}
	return true;
}

/* A lean step's record (modelq.h): the instruction (its low bit set),
 * the pc after it, then its accesses' addresses when it has some. */
struct lean_rec {
	uintptr_t in;
	uint64_t next;
	uint64_t addr[2];
};

/* engine_account_leans where the cache model takes runs of instructions
 * (insns) and the branch model runs of conditional branches (conds), with
 * nothing else to feed: account() for those, each model called once for
 * the run (twice around VEX's merged instructions, which go in order). */
static void account_leans_runs(struct engine *e, struct tracee *t,
			       const struct lean_step *s, unsigned n,
			       uint64_t fs)
{
	struct step_events *ev = &e->ev;
	struct cache_model *cm = e->cm;
	struct branch_model *bm = e->bm;
	struct model_insn mi[ENGINE_LEAN_RUN];
	struct model_cond mc[ENGINE_LEAN_RUN];
	struct mem_access acc[2 * ENGINE_LEAN_RUN];
	unsigned k = 0, kc = 0;
	model_core(e, t->core);
	for (unsigned i = 0; i < n; i++) {
		const struct insn *in = s[i].in;
		uint64_t *row = insn_row(e, in);
		decode_step_lean(e->dec, in, s[i].l, s[i].addr, fs, s[i].rsp,
				 s[i].next, ev);
		struct model_insn *m = &mi[k];
		m->pc = in->pc;
		m->row = row;
		m->acc = &acc[2 * k];
		m->len = in->len;
		m->n_acc = ev->n_acc;
		acc[2 * k] = ev->acc[0];
		acc[2 * k + 1] = ev->acc[1];
		k++;
		if (bm) {
			uint64_t *brow = row + e->bm_offset;
			if (ev->n_cond) {
				mc[kc].pc = in->pc;
				mc[kc].row = brow;
				mc[kc++].taken = ev->cond_taken[0];
			}
			if (ev->indirect)
				branch_indirect(bm, in->pc, ev->ind_target,
						brow);
		}
		if (ev->n_spec || i + 1 == n) {
			cm->ops->insns(cm, mi, k);
			if (kc)
				bm->ops->conds(bm, mc, kc);
			k = kc = 0;
		}
		if (ev->n_spec)
			account_vex_speculation(e, ev->spec_pc, ev->spec_len,
						ev->n_spec, ev->spec_taken);
	}
}

/* engine_account_leans one step at a time, for any models, the queue,
 * --trace-mem and --stop-watch. */
static void account_leans_each(struct engine *e, struct tracee *t,
			       const struct lean_step *s, unsigned n,
			       uint64_t fs)
{
	struct step_events *ev = &e->ev;
	for (unsigned i = 0; i < n; i++) {
		const struct insn *in = s[i].in;
		const struct decode_lean *l = s[i].l;
		uint64_t *row = e->q_on ? NULL : engine_row(e, in);
		bool plain = decode_step_lean(e->dec, in, l, s[i].addr, fs,
					      s[i].rsp, s[i].next, ev);
		if (e->q_on && plain && !t->core && !e->swatch_hi) {
			/* The model thread rebuilds these events from the
			 * templates (engine_account_lean_rec). */
			struct lean_rec rec __attribute__((aligned(16)));
			rec.in = (uintptr_t)in | 1;
			rec.next = s[i].next;
			rec.addr[0] = s[i].addr[0];
			rec.addr[1] = s[i].addr[1];
			modelq_put(e->q, &rec, l->n_acc ? 2 : 1);
		} else {
			account_events(e, t, in, in->len, s[i].next, ev, row);
		}
	}
}

/* Can account_leans_runs take the steps? */
static inline bool leans_runs_ok(const struct engine *e)
{
	return !e->q_on && !e->cs && !e->swatch_hi && !e->trace_mem &&
	       e->cm->ops->insns && (!e->bm || e->bm->ops->conds);
}

static inline void count_leans(struct engine *e, unsigned n)
{
	uint64_t before = e->steps;
	e->steps += n;
	if (e->progress && (before >> 12) != (e->steps >> 12))
		engine_progress(e, false);
}

void engine_account_leans(struct engine *e, struct tracee *t,
			  const struct lean_step *s, unsigned n, uint64_t fs)
{
	engine_switch_core(e, t);
	if (leans_runs_ok(e) && n <= ENGINE_LEAN_RUN)
		account_leans_runs(e, t, s, n, fs);
	else
		account_leans_each(e, t, s, n, fs);
	count_leans(e, n);
}


/* ---- blocks of lean instructions (engine.h) ---- */

/* The addresses of a lean block through fs that replays from its code
 * at most (more: through MI). */
#define LEAN_FS_MAX 64

/* The successors a lean block remembers at most. */
#define LEAN_SUCC_MAX 8

/* Superblock states by number (a block's entry and exits): a replay
 * compares and copies four bytes, not thirty-two.  At most SB_MAX
 * (then no more blocks memo new states). */
#define SB_NONE UINT32_MAX
#define SB_MAX (1u << 20)

static uint64_t sb_hash(const struct decode_sbstate *s)
{
	return hash_pair(hash_pair(s->w[0], s->w[1]),
			 hash_pair(s->w[2], s->w[3]));
}

static uint64_t sb_hash_of(const void *ctx, uint32_t i)
{
	const struct engine *e = ctx;
	return sb_hash(&e->sbs[i]);
}

/* S's number, or SB_NONE (OK false: no state; or too many). */
static uint32_t sb_number(struct engine *e, bool ok,
			  const struct decode_sbstate *s)
{
	if (!ok)
		return SB_NONE;
	struct hashtab_probe p;
	for (uint32_t i = hashtab_first(&e->sb_tab, sb_hash(s), &p);
	     i != HASHTAB_NONE; i = hashtab_next(&e->sb_tab, &p))
		if (!memcmp(&e->sbs[i], s, sizeof(*s)))
			return i;
	if (e->n_sbs == SB_MAX)
		return SB_NONE;
	if (e->n_sbs == e->cap_sbs) {
		e->cap_sbs = e->cap_sbs ? 2 * e->cap_sbs : 256;
		e->sbs = xreallocarray(e->sbs, e->cap_sbs, sizeof(*e->sbs));
	}
	e->sbs[e->n_sbs] = *s;
	hashtab_insert(&e->sb_tab, &p, e->n_sbs, sb_hash_of, e);
	return e->n_sbs++;
}

/* The decoder's state now, numbered. */
static uint32_t sb_now(struct engine *e, uint64_t fs)
{
	struct decode_sbstate s;
	bool ok = decode_sb_get(e->dec, fs, &s);
	return sb_number(e, ok, &s);
}

/* How block B ended, from one superblock state, going to NEXT: the
 * state after it and its last instruction's events. */
struct lean_succ {
	uint64_t next;
	uint32_t runs;		/* replays not yet in the rows */
	uint32_t exit;		/* its number */
	uint8_t n_acc;
	bool cond, taken, indirect;
};

/* A lean block is three parts around the pointer to it, what a replay
 * reads on the two cache lines after it: MI | struct lean_cold | struct
 * lean_block (a line) | its second successor, its code (lean_compile's)
 * | ACC | SEG | IN | L. */
struct lean_cold {
	const struct insn *str;	/* iring.c's (engine_lean_str) */
	unsigned n_addr;
	uint32_t mid;		/* MEMO's state before the last step */
	struct lean_succ *more;	/* successors past the second */
	struct lean_memo *alt;	/* LEAN_ALT memos of other entry states,
				 * N_ALT of them, the latest first */
	unsigned n_alt;
	struct mem_access *acc;
	uint64_t *seg;		/* per address: fs_base's mask, or 0 */
	const struct insn **in;
	const struct decode_lean **l;
} __attribute__((aligned(64)));

struct lean_block {
	struct lean_head head;	/* its engine's (engine.h): pc, its n */
	uint64_t *brow;		/* its branch events' row */
	/* Replays.  MEMO: from VEX's superblock state ENTRY, the steps but
	 * the last made the events MI says (their n_acc: a dead pop's load
	 * may go) and left the state MID; from MID, the last one going to
	 * a successor's NEXT made its events (n_succ of them, the latest
	 * first: S0, then S1 after this, then the cold part's MORE) */
	struct lean_succ s0;
	uint32_t entry;
	uint32_t row_gen;	/* of the rows in MI */
	uint32_t pend;		/* its place in engine.pend + 1, or 0 */
	bool fs_any : 1;	/* an access through fs */
	bool lean_ok : 1;	/* a model's code can describe it: replays
				 * need neither MI nor ACC */
	bool coded : 1;		/* its code (after S1) made, with MI's
				 * n_acc now (lean_compile) */
	bool memo : 1;
	bool ready : 1;		/* lean_ok and memo (and coded) */
	uint8_t n_succ;
	uint16_t last_off;	/* the last instruction's pc - head.pc */
};

/* Where S1 and the code lie after a block. */
#define LEAN_S1 64
#define LEAN_CODE (LEAN_S1 + sizeof(struct lean_succ))

_Static_assert(sizeof(struct lean_block) == 64,
	       "a lean block's replay reads one line, then S1 and its code");

static inline struct lean_cold *cold(const struct lean_block *b)
{
	return (struct lean_cold *)(uintptr_t)b - 1;
}

static inline struct model_insn *lb_mi(const struct lean_block *b)
{
	return (struct model_insn *)(void *)cold(b) - b->head.n;
}

static inline uint8_t *lb_code(const struct lean_block *b)
{
	return (uint8_t *)(uintptr_t)b + LEAN_CODE;
}

/* Room for B's successors past the two in its lines, to N (allocated
 * the first time more than two are wanted). */
static void succ_room(struct lean_block *b, unsigned n)
{
	struct lean_cold *c = cold(b);
	if (n > 2 && !c->more)
		c->more = xcalloc(LEAN_SUCC_MAX - 2, sizeof(*c->more));
}

/* Successor I of B's. */
static inline struct lean_succ *succ_at(struct lean_block *b, unsigned i)
{
	if (i == 0)
		return &b->s0;
	if (i == 1)
		return (struct lean_succ *)(void *)((char *)b + LEAN_S1);
	return &cold(b)->more[i - 2];
}

/* A block's memo from another entry state than its ENTRY (the prefix's
 * n_acc the same): blocks entered in several (python3's: the VEX
 * superblock they sit in) replay from each.  Their runs are counted
 * before they are put aside. */
#define LEAN_ALT 7
struct lean_memo {
	uint32_t entry, mid;
	unsigned n_succ;
	struct lean_succ succ[LEAN_SUCC_MAX];
};

/* The bytes before a block of N instructions (MI, its cold part). */
static size_t lean_prefix(unsigned n)
{
	return ((n * sizeof(struct model_insn) + 63) & ~(size_t)63) +
	       sizeof(struct lean_cold);
}

/* MI's n_acc of instruction I (its code made again for it). */
static inline void set_n_acc(struct lean_block *b, unsigned i, unsigned n)
{
	struct model_insn *mi = lb_mi(b);
	if (mi[i].n_acc != n) {
		b->coded = false;
		cold(b)->n_alt = 0;	/* (made with the old) */
	}
	mi[i].n_acc = n;
}

struct lean_block *engine_lean_block(const struct insn *const *in,
				     unsigned n)
{
	/* One allocation, what a replay reads first: a block's run should
	 * touch few lines (python3's runs go through tens of thousands). */
	unsigned n_addr = 0;
	for (unsigned i = 0; i < n; i++)
		n_addr += decode_lean(in[i])->n_acc;
	size_t code = (MODEL_LEAN_CODE_MAX(n, n_addr) + 7) & ~(size_t)7;
	size_t pre = lean_prefix(n);
	size_t sz = pre + LEAN_CODE + code +
		    (n_addr + 1) * (sizeof(struct mem_access) + 8) +
		    n * (sizeof(*in) + sizeof(struct decode_lean *));
	char *base = xzalloc_lines(sz);
	struct lean_block *b = (struct lean_block *)(void *)(base + pre);
	struct lean_cold *c = cold(b);
	b->head.n = (uint16_t)n;
	c->n_addr = n_addr;
	c->mid = SB_NONE;
	b->entry = SB_NONE;
	c->acc = (struct mem_access *)(void *)(lb_code(b) + code);
	c->seg = (uint64_t *)(c->acc + n_addr + 1);
	c->in = (const struct insn **)(c->seg + n_addr + 1);
	c->l = (const struct decode_lean **)(c->in + n);
	struct model_insn *mi = lb_mi(b);
	/* the instructions one after the other, sizes below 256 (its code
	 * made with the prefix's n_acc, block_prefix) */
	b->lean_ok = n > 0;
	unsigned k = 0;
	for (unsigned i = 0; i < n; i++) {
		const struct decode_lean *l = decode_lean(in[i]);
		c->in[i] = in[i];
		c->l[i] = l;
		mi[i].pc = in[i]->pc;
		mi[i].len = in[i]->len;
		mi[i].n_acc = l->n_acc;
		mi[i].acc = &c->acc[k];
		if (!in[i]->len || in[i]->len > 15 ||
		    (i && in[i]->pc != in[i - 1]->pc + in[i - 1]->len) ||
		    in[i]->pc - in[0]->pc > UINT16_MAX)
			b->lean_ok = false;
		for (unsigned j = 0; j < l->n_acc; j++, k++) {
			c->acc[k].size = l->acc[j].size;
			c->acc[k].kind = l->acc[j].kind;
			c->seg[k] = l->acc[j].seg == 1 ? ~0ull : 0;
			b->fs_any |= l->acc[j].seg == 1;
			if (!l->acc[j].size || l->acc[j].size > 255 ||
			    l->acc[j].kind > ACC_NT_WRITE)
				b->lean_ok = false;
		}
	}
	/* (through fs: the addresses copied, fs_base added) */
	if (b->fs_any && n_addr > LEAN_FS_MAX)
		b->lean_ok = false;
	b->head.pc = n ? in[0]->pc : 0;
	b->last_off = n ? (uint16_t)(in[n - 1]->pc - in[0]->pc) : 0;
	return b;
}

const struct insn *engine_lean_str(const struct lean_block *b)
{
	return cold(b)->str;
}

void engine_lean_set_str(struct lean_block *b, const struct insn *str)
{
	cold(b)->str = str;
	b->head.str = str != NULL;
}

/* B's replays, counted in its rows: a successor's are the prefix's
 * references and that successor's last instruction's. */
static void count_block(struct engine *e, struct lean_block *b)
{
	struct model_insn *mi = lb_mi(b), *m = &mi[b->head.n - 1];
	uint32_t n_acc = m->n_acc;
	for (unsigned i = 0; i < b->n_succ; i++) {
		struct lean_succ *sc = succ_at(b, i);
		if (!sc->runs)
			continue;
		m->n_acc = sc->n_acc;
		e->cm->ops->count_refs(e->cm, mi, b->head.n, sc->runs);
		if (sc->cond && e->bm && e->bm->ops->count_conds)
			e->bm->ops->count_conds(e->bm, b->brow, sc->runs);
		sc->runs = 0;
	}
	m->n_acc = n_acc;
	struct lean_block *moved = e->pend[--e->n_pend];
	e->pend[b->pend - 1] = moved;
	moved->pend = b->pend;
	b->pend = 0;
}

static void count_pending(struct engine *e)
{
	while (e->n_pend)
		count_block(e, e->pend[e->n_pend - 1]);
}

/* B replayed, its references not counted: a pending block. */
static inline void pend_block(struct engine *e, struct lean_block *b,
			      struct lean_succ *sc)
{
	if (__builtin_expect(sc->runs == UINT32_MAX, 0))
		count_block(e, b);	/* (its count full) */
	sc->runs++;
	if (b->pend)
		return;
	if (e->n_pend == e->pend_cap) {
		e->pend_cap = e->pend_cap ? 2 * e->pend_cap : 256;
		e->pend = xreallocarray(e->pend, e->pend_cap,
					 sizeof(*e->pend));
	}
	e->pend[e->n_pend++] = b;
	b->pend = e->n_pend;
}

void engine_lean_block_free(struct engine *e, struct lean_block *b)
{
	if (!b)
		return;
	if (b->pend)
		count_block(e, b);
	free(cold(b)->more);
	free(cold(b)->alt);
	free((char *)b - lean_prefix(b->head.n));
}

/* B's instruction I's addresses, as decode_step_lean takes them. */
static void block_addrs(const struct lean_block *b, unsigned i, uint64_t *a)
{
	const struct mem_access *acc = lb_mi(b)[i].acc;
	for (unsigned j = 0; j < cold(b)->l[i]->n_acc; j++)
		a[j] = acc[j].addr;
}

/* The branch model's conditional branches held back by R (its state is
 * its own: the cache model's calls need not wait for it). */
static void run_conds(struct engine *e, struct lean_run *r)
{
	if (r->n_cond && r->bc_later)
		e->bm->ops->conds_uncounted(e->bm, r->cond, r->n_cond);
	else if (r->n_cond)
		e->bm->ops->conds(e->bm, r->cond, r->n_cond);
	r->n_cond = 0;
}

/* The decoder's superblock state made R's again, and R's conds sent:
 * before anything else uses the decoder or the branch model. */
static void run_sync(struct engine *e, struct lean_run *r)
{
	if (r->sb_ahead)
		decode_sb_set(e->dec, r->fs, &e->sbs[r->sb]);
	r->sb_ahead = false;
	if (e->bm)
		run_conds(e, r);
}

void engine_lean_run_start(struct engine *e, struct lean_run *r,
			   uint64_t fs)
{
	r->fs = fs;
	r->sb = sb_now(e, fs);
	r->sb_ahead = false;
	r->n_cond = 0;
	/* (what leans_runs_ok reads is set for the window) */
	r->lean = leans_runs_ok(e) && e->cm->ops->lean_uncounted;
	/* R's conds are replays' alone: their blocks pend, their Bc
	 * counted with their references (count_block) */
	r->bc_later = e->bm && e->bm->ops->conds_uncounted &&
		      e->cm->ops->insns_uncounted;
}

void engine_lean_run_end(struct engine *e, struct lean_run *r)
{
	run_sync(e, r);
}

/* engine_account_block where account_leans_runs cannot go: the steps one
 * by one. */
static void block_each(struct engine *e, struct tracee *t,
		       const struct lean_block *b, uint64_t next, uint64_t fs,
		       uint64_t rsp)
{
	struct lean_step s[ENGINE_LEAN_RUN];
	const struct lean_cold *c = cold(b);
	unsigned k = 0, n = b->head.n;
	for (unsigned i = 0; i < n; i++) {
		s[k].in = c->in[i];
		s[k].l = c->l[i];
		s[k].next = i + 1 < n ? c->in[i + 1]->pc : next;
		s[k].rsp = i ? 0 : rsp;
		block_addrs(b, i, s[k].addr);
		if (++k == ENGINE_LEAN_RUN || i + 1 == n) {
			account_leans_each(e, t, s, k, fs);
			k = 0;
		}
	}
}

/* The steps of B but the last from R's superblock state, through the
 * decoder: MI's n_acc set, and B's ENTRY and MID recorded when they make
 * a replay.  Returns the first instruction the models have not had. */
static unsigned block_prefix(struct engine *e, struct tracee *t,
			     struct lean_run *r, struct lean_block *b,
			     uint64_t rsp)
{
	struct step_events *ev = &e->ev;
	struct decoder *d = e->dec;
	struct lean_cold *c = cold(b);
	struct model_insn *mi = lb_mi(b);
	unsigned last = b->head.n - 1, from = 0;
	uint64_t a[2];
	/* With RSP, a first step that lost its superblock reads the stack
	 * (decode_called_directly): not a replay's */
	bool memo = !rsp && r->sb != SB_NONE;
	b->entry = r->sb;
	b->n_succ = 0;
	for (unsigned i = 0; i < last; i++) {
		const struct insn *in = c->in[i];
		block_addrs(b, i, a);
		decode_step_lean(d, in, c->l[i], a, r->fs, i ? 0 : rsp,
				 c->in[i + 1]->pc, ev);
		if (!ev->n_spec && !ev->n_cond && !ev->indirect) {
			set_n_acc(b, i, ev->n_acc);
			continue;
		}
		/* not a template's: never seen (they end blocks) */
		memo = false;
		if (i > from)
			e->cm->ops->insns(e->cm, mi + from, i - from);
		account_events(e, t, in, in->len, c->in[i + 1]->pc, ev,
			       mi[i].row);
		from = i + 1;
	}
	c->mid = memo ? sb_now(e, r->fs) : SB_NONE;
	b->memo = c->mid != SB_NONE;
	if (b->memo && b->lean_ok && !b->coded && e->cm->ops->lean_compile) {
		/* its code with the prefix's n_acc, the last instruction's
		 * the most it has (a replay says how many) */
		struct model_insn *m = &mi[last];
		uint32_t n_acc = m->n_acc;
		struct model_lean ml = { b->head.pc, mi, b->head.n };
		m->n_acc = c->l[last]->n_acc;
		b->lean_ok = b->coded =
			e->cm->ops->lean_compile(e->cm, &ml, lb_code(b));
		m->n_acc = n_acc;
	}
	b->ready = b->lean_ok && b->memo && b->coded;
	return from;
}

/* The rest of a replay of B going to SC: its branch, R's state after. */
static inline __attribute__((always_inline)) void
replay_end(struct engine *e, struct lean_run *r, struct lean_block *b,
	   const struct lean_succ *sc, uint64_t next)
{
	struct branch_model *bm = e->bm;
	uint64_t last_pc = b->head.pc + b->last_off;
	if (bm && sc->cond) {
		if (r->n_cond == ENGINE_LEAN_RUN)
			run_conds(e, r);
		struct model_cond *c = &r->cond[r->n_cond++];
		c->pc = last_pc;
		c->row = b->brow;
		c->taken = sc->taken;
	}
	if (bm && sc->indirect) {
		run_conds(e, r);
		branch_indirect(bm, last_pc, next, b->brow);
	}
	/* the decoder's state stays behind R's until run_sync */
	r->sb = sc->exit;
	r->sb_ahead = true;
	count_leans(e, b->head.n);
}

/* B's successor to NEXT past its first two, or NULL. */
static __attribute__((noinline)) struct lean_succ *
succ_more(struct lean_block *b, uint64_t next)
{
	for (unsigned i = 2; i < b->n_succ; i++)
		if (succ_at(b, i)->next == next)
			return succ_at(b, i);
	return NULL;
}

/* B's successor to NEXT, or NULL: the first two inline. */
static inline struct lean_succ *succ_of(struct lean_block *b, uint64_t next)
{
	if (b->n_succ && b->s0.next == next)
		return &b->s0;
	if (b->n_succ > 1 && succ_at(b, 1)->next == next)
		return succ_at(b, 1);
	return b->n_succ > 2 ? succ_more(b, next) : NULL;
}

/* B's rows, of the cost table now. */
static void block_rows(struct engine *e, struct lean_block *b)
{
	struct model_insn *mi = lb_mi(b);
	for (unsigned i = 0; i < b->head.n; i++)
		mi[i].row = insn_row(e, cold(b)->in[i]);
	if (b->head.n)
		b->brow = mi[b->head.n - 1].row + e->bm_offset;
	b->row_gen = e->row_gen;
}

static __attribute__((noinline)) void
account_block(struct engine *e, struct tracee *t, struct lean_run *r,
	      struct lean_block *b, const uint64_t *w, uint64_t next,
	      uint64_t rsp);

/* B's memo (no runs pending) into M, or from it. */
static void memo_out(struct lean_block *b, struct lean_memo *m)
{
	m->entry = b->entry;
	m->mid = cold(b)->mid;
	m->n_succ = b->n_succ;
	for (unsigned i = 0; i < b->n_succ; i++)
		m->succ[i] = *succ_at(b, i);
}

static void memo_in(struct lean_block *b, const struct lean_memo *m)
{
	struct lean_cold *c = cold(b);
	succ_room(b, m->n_succ);
	b->entry = m->entry;
	c->mid = m->mid;
	b->n_succ = (uint8_t)m->n_succ;
	for (unsigned i = 0; i < m->n_succ; i++)
		*succ_at(b, i) = m->succ[i];
}

/* B's memo put aside (the latest first), before it is made again from
 * another entry state. */
static void memo_keep(struct lean_block *b)
{
	struct lean_cold *c = cold(b);
	if (!c->alt)
		c->alt = xcalloc(LEAN_ALT, sizeof(*c->alt));
	if (c->n_alt < LEAN_ALT)
		c->n_alt++;
	memmove(&c->alt[1], &c->alt[0], (c->n_alt - 1) * sizeof(*c->alt));
	memo_out(b, &c->alt[0]);
}

/* B's memo put aside from entry state SB made its own again (its runs
 * counted first); false if there is none. */
static bool memo_swap(struct engine *e, struct lean_block *b, uint32_t sb)
{
	struct lean_cold *c = cold(b);
	for (unsigned i = 0; i < c->n_alt; i++) {
		if (c->alt[i].entry != sb)
			continue;
		if (b->pend)
			count_block(e, b);
		struct lean_memo m = c->alt[i];
		memmove(&c->alt[i], &c->alt[i + 1],
			(--c->n_alt - i) * sizeof(*c->alt));
		memo_keep(b);
		memo_in(b, &m);
		return true;
	}
	return false;
}

/* A replay of B to SC from W, its addresses (fs_base added). */
static inline __attribute__((always_inline)) void
replay(struct engine *e, struct tracee *t, struct lean_run *r,
       struct lean_block *b, const uint64_t *w, struct lean_succ *sc,
       uint64_t next)
{
	engine_switch_core(e, t);
	model_core(e, t->core);
	if (b->row_gen != e->row_gen)	/* a table's first run of B */
		block_rows(e, b);
	e->cm->ops->lean_uncounted(e->cm, b->head.pc, lb_code(b), lb_mi(b), w,
				   sc->n_acc);
	pend_block(e, b, sc);
	replay_end(e, r, b, sc, next);
}

/* A replay of B through fs: its addresses copied, fs_base added. */
static __attribute__((noinline)) void
replay_fs(struct engine *e, struct tracee *t, struct lean_run *r,
	  struct lean_block *b, const uint64_t *w, struct lean_succ *sc,
	  uint64_t next)
{
	uint64_t fsw[LEAN_FS_MAX];
	const struct lean_cold *c = cold(b);
	for (unsigned k = 0; k < c->n_addr; k++)
		fsw[k] = w[k] + (r->fs & c->seg[k]);
	replay(e, t, r, b, fsw, sc, next);
}

void engine_account_block(struct engine *e, struct tracee *t,
			  struct lean_run *r, struct lean_block *b,
			  const uint64_t *w, uint64_t next, uint64_t rsp)
{
	/* The replay of most runs, small: the whole block from W, its code
	 * alone (lean_uncounted) */
	struct lean_succ *sc;
	if (r->lean && b->ready && b->entry == r->sb && !rsp &&
	    (sc = succ_of(b, next))) {
		if (b->fs_any)
			replay_fs(e, t, r, b, w, sc, next);
		else
			replay(e, t, r, b, w, sc, next);
		return;
	}
	account_block(e, t, r, b, w, next, rsp);
}

/* engine_account_block's other runs: a replay through MI (a block not
 * lean_ok, models without lean_uncounted), the decoder's. */
static void account_block(struct engine *e, struct tracee *t,
			  struct lean_run *r, struct lean_block *b,
			  const uint64_t *w, uint64_t next, uint64_t rsp)
{
	struct lean_cold *c = cold(b);
	struct model_insn *mi = lb_mi(b);
	engine_switch_core(e, t);
	bool runs = leans_runs_ok(e);
	bool hit = false;
	if (runs && b->memo && !rsp && r->sb != SB_NONE && r->sb != b->entry &&
	    memo_swap(e, b, r->sb)) {
		/* entered as before in that state: its memo again */
		engine_account_block(e, t, r, b, w, next, rsp);
		return;
	}
	if (runs) {
		model_core(e, t->core);
		if (b->row_gen != e->row_gen)
			block_rows(e, b);
		hit = b->memo && !rsp && r->sb != SB_NONE &&
		      r->sb == b->entry;
	}
	if (b->fs_any)
		for (unsigned k = 0; k < c->n_addr; k++)
			c->acc[k].addr = w[k] + (r->fs & c->seg[k]);
	else
		for (unsigned k = 0; k < c->n_addr; k++)
			c->acc[k].addr = w[k];
	if (!runs) {
		run_sync(e, r);
		block_each(e, t, b, next, r->fs, rsp);
		r->sb = sb_now(e, r->fs);
		count_leans(e, b->head.n);
		return;
	}
	unsigned last = b->head.n - 1, from = 0;
	struct model_insn *m = &mi[last];
	struct branch_model *bm = e->bm;
	struct lean_succ *sc;
	if (hit && (sc = succ_of(b, next))) {
		m->n_acc = sc->n_acc;
		if (e->cm->ops->insns_uncounted) {
			e->cm->ops->insns_uncounted(e->cm, mi, b->head.n);
			pend_block(e, b, sc);
		} else {
			e->cm->ops->insns(e->cm, mi, b->head.n);
		}
		replay_end(e, r, b, sc, next);
		return;
	}
	/* B's successors and its prefix's n_acc may change: its replays
	 * counted with the ones they had */
	if (b->pend)
		count_block(e, b);
	if (hit) {
		run_sync(e, r);
		decode_sb_set(e->dec, r->fs, &e->sbs[c->mid]);
	} else {
		run_sync(e, r);
		if (b->memo && !rsp && r->sb != SB_NONE)
			memo_keep(b);	/* (another entry state's) */
		from = block_prefix(e, t, r, b, rsp);
	}
	/* (B's instructions are at its end: a replay does not read them) */
	const struct insn *in = c->in[last];
	struct step_events *ev = &e->ev;
	uint64_t a[2];
	block_addrs(b, last, a);
	decode_step_lean(e->dec, in, c->l[last], a, r->fs, last ? 0 : rsp,
			 next, ev);
	m->n_acc = ev->n_acc;
	e->cm->ops->insns(e->cm, mi + from, b->head.n - from);
	if (bm) {
		uint64_t *brow = m->row + e->bm_offset;
		if (ev->n_cond) {
			struct model_cond mc = { in->pc, brow,
						 ev->cond_taken[0] };
			bm->ops->conds(bm, &mc, 1);
		}
		if (ev->indirect)
			branch_indirect(bm, in->pc, ev->ind_target, brow);
	}
	if (ev->n_spec)
		account_vex_speculation(e, ev->spec_pc, ev->spec_len,
					ev->n_spec, ev->spec_taken);
	r->sb = sb_now(e, r->fs);
	if (b->memo && r->sb != SB_NONE && !ev->n_spec && ev->n_cond <= 1) {
		/* the latest successor first: a loop's back edge stays */
		succ_room(b, b->n_succ + 1u);
		if (b->n_succ < LEAN_SUCC_MAX)
			b->n_succ++;
		for (unsigned i = b->n_succ - 1; i > 0; i--)
			*succ_at(b, i) = *succ_at(b, i - 1);
		sc = &b->s0;
		sc->next = next;
		sc->runs = 0;
		sc->exit = r->sb;
		sc->n_acc = ev->n_acc;
		sc->cond = ev->n_cond;
		sc->taken = ev->n_cond && ev->cond_taken[0];
		sc->indirect = ev->indirect;
	}
	count_leans(e, b->head.n);
}

unsigned engine_account_lean_rec(struct engine *e, const void *rec)
{
	const struct lean_rec *r = rec;
	const struct insn *in = (const struct insn *)(r->in & ~(uintptr_t)1);
	const struct decode_lean *l = decode_lean(in);
	struct step_events ev;
	decode_lean_events(in, l, r->addr, r->next, &ev);
	account(e, in, in->len, 0, r->next, &ev, NULL);
	return l->n_acc ? 2 : 1;
}

void engine_account(struct engine *e, struct tracee *t,
		    const struct user_regs_struct *after)
{
	if (e->proof)
		proof_step(e, t, &t->regs, after);
	engine_account_regs(e, t, &t->regs, after);
	t->regs = *after;
}

void engine_moved(struct engine *e, struct tracee *t,
		  const struct user_regs_struct *after)
{
	engine_models_sync(e);
	if (e->cs)
		callstack_step(e->cs, t->tid, NULL, &t->regs, after);
	t->regs = *after;
}

void engine_account_fetch_only(struct engine *e, struct tracee *t)
{
	const struct insn *in = t->insn;
	if (e->proof)
		proof_fetch(e, t, in->pc, in->len ? in->len : 1);
	engine_models_sync(e);
	engine_switch_core(e, t);
	model_core(e, t->core);
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
	modelq_free(e->q);
	e->q = NULL;
	e->q_on = false;
	free(e->unknown_seen);
	free(e->scratch);
	free(e->row_cache);
	e->row_cache = NULL;
	/* the blocks still pending: their replays go with the table */
	for (unsigned i = 0; i < e->n_pend; i++) {
		e->pend[i]->pend = 0;
		for (unsigned j = 0; j < e->pend[i]->n_succ; j++)
			succ_at(e->pend[i], j)->runs = 0;
	}
	free(e->pend);
	e->pend = NULL;
	e->n_pend = e->pend_cap = 0;
	free(e->sbs);
	e->sbs = NULL;
	e->n_sbs = e->cap_sbs = 0;
	hashtab_free(&e->sb_tab);
	if (e->costs)
		costs_free(e->costs);
	costs_free(e->spare);
	e->spare = NULL;
	e->unknown_seen = NULL;
	e->scratch = NULL;
	e->costs = NULL;
}
