/* The instrument engine's proof (--engine=lockstep:instrument): what the
 * models are fed from the instrument engine's stream (its ring read by
 * account.c's block accounting, replays and string records included)
 * checked, instruction by instruction, against what the step engine
 * feeds them for the same instructions.
 *
 * - The models are wrapped (a cache model and a branch model whose ops
 *   note each call, then pass it on): every fetch, data access,
 *   conditional and indirect branch, call and return that reaches them
 *   is an event of the thread whose instruction is accounted (the
 *   engine's current thread).  These are the instrument engine's.
 * - The thread runs in the code cache one machine instruction at a time
 *   (instrument.c): where an original instruction completed, its
 *   registers before and after it, as they are at the original code, go
 *   through decode_step of a decoder of our own, and what account.c's
 *   per-instruction path would feed the models for that step is queued
 *   as the step engine's events, per thread and per stream (the cache's,
 *   the branch predictor's: the instrument engine gathers a read's
 *   conditional branches and feeds them later).  The instructions the
 *   instrument engine steps outside the cache are queued so too.
 * - The step engine's events come first (a ring is read after its
 *   instructions ran); each of the instrument engine's is compared with
 *   the head of its thread's queue.  The first difference of a window is
 *   reported in full, the window's comparison stops there, and the count
 *   of windows that diverged makes the exit status 1; so does an event
 *   left on either side at a window's end. */
#include "engine.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "tracer.h"

enum pev_what { PE_FETCH, PE_ACC, PE_COND, PE_IND, PE_CALL, PE_RET };

struct pev {
	uint64_t pc;		/* the instruction's */
	uint64_t a;		/* fetch: the length; an access: its address;
				 * a branch: taken, or where it goes */
	uint32_t size;		/* an access's */
	uint8_t what, kind;
};

/* A queue of the step engine's events. */
struct pq {
	struct pev *v;
	size_t head, tail, cap;
};

#define STREAMS 2		/* the cache's, the branch predictor's */

struct pthread_q {
	pid_t tid;
	struct pq q[STREAMS];
};

struct proof {
	struct decoder *dec;	/* the step engine's side */
	struct tracer *tr;
	struct pthread_q *th;
	size_t n_th;
	uint64_t compared;
	unsigned diverged;	/* windows */
	bool off;		/* this window diverged: no more compared */
	uint64_t pc;		/* the cache model's last fetch */
};

struct tap_cm {
	struct cache_model base;
	struct cache_model *real;
	struct proof *p;
};

struct tap_bm {
	struct branch_model base;
	struct branch_model *real;
	struct proof *p;
};

static struct pthread_q *queues(struct proof *p, pid_t tid)
{
	for (size_t i = 0; i < p->n_th; i++)
		if (p->th[i].tid == tid)
			return &p->th[i];
	p->th = xreallocarray(p->th, p->n_th + 1, sizeof(*p->th));
	struct pthread_q *q = &p->th[p->n_th++];
	memset(q, 0, sizeof(*q));
	q->tid = tid;
	return q;
}

static void put(struct pq *q, const struct pev *e)
{
	if (q->tail == q->cap) {
		if (q->head) {
			memmove(q->v, q->v + q->head,
				(q->tail - q->head) * sizeof(*q->v));
			q->tail -= q->head;
			q->head = 0;
		}
		if (q->tail == q->cap) {
			q->cap = q->cap ? 2 * q->cap : 4096;
			q->v = xreallocarray(q->v, q->cap, sizeof(*q->v));
		}
	}
	q->v[q->tail++] = *e;
}

static const char *describe(const struct pev *e, char *buf, size_t len)
{
	static const char *const kinds[] = { "load", "store", "modify",
					     "prefetch", "nt store" };
	switch (e->what) {
	case PE_FETCH:
		snprintf(buf, len, "fetch of %" PRIu64 " bytes at 0x%" PRIx64,
			 e->a, e->pc);
		break;
	case PE_ACC:
		snprintf(buf, len, "%s of %u bytes at 0x%" PRIx64 " by 0x%"
			 PRIx64, e->kind < 5 ? kinds[e->kind] : "access",
			 e->size, e->a, e->pc);
		break;
	case PE_COND:
		snprintf(buf, len, "conditional branch at 0x%" PRIx64 " %s",
			 e->pc, e->a ? "taken" : "not taken");
		break;
	default:
		snprintf(buf, len, "%s at 0x%" PRIx64 " to 0x%" PRIx64,
			 e->what == PE_IND ? "indirect branch" :
			 e->what == PE_CALL ? "call" : "return", e->pc, e->a);
		break;
	}
	return buf;
}

static void diverge(struct proof *p, pid_t tid, const struct pev *step,
		    const struct pev *inst)
{
	char a[160], b[160];
	const struct pev *at = step ? step : inst;
	struct src_loc loc = { "???", "???", 0 };
	if (p->tr->syms)
		sym_lookup(p->tr->syms, at->pc, &loc);
	error_msg("lockstep: divergence at 0x%" PRIx64 " in %s (%s:%u), "
		  "thread %d: the step engine: %s; the instrument engine: %s",
		  at->pc, loc.fn, loc.file, loc.line, tid,
		  step ? describe(step, a, sizeof(a)) : "nothing more",
		  inst ? describe(inst, b, sizeof(b)) : "nothing more");
	p->diverged++;
	p->off = true;
}

/* One event of the instrument engine's, in stream S. */
static void seen(struct proof *p, unsigned s, const struct pev *e)
{
	if (p->off)
		return;
	struct tracee *t = p->tr->eng.current;
	pid_t tid = t ? t->tid : 0;
	struct pq *q = &queues(p, tid)->q[s];
	if (q->head == q->tail) {
		diverge(p, tid, NULL, e);
		return;
	}
	const struct pev *w = &q->v[q->head++];
	if (w->what != e->what || w->pc != e->pc || w->a != e->a ||
	    (e->what == PE_ACC && (w->size != e->size || w->kind != e->kind)))
		diverge(p, tid, w, e);
	else
		p->compared++;
}

/* ---- the models, wrapped ---- */

static struct proof *cm_proof(struct cache_model *m)
{
	return ((struct tap_cm *)(void *)m)->p;
}

static struct cache_model *cm_real(const struct cache_model *m)
{
	return ((const struct tap_cm *)(const void *)m)->real;
}

static void tap_fetch_ev(struct proof *p, uint64_t pc, uint32_t size)
{
	p->pc = pc;
	seen(p, 0, &(struct pev){ .pc = pc, .a = size, .what = PE_FETCH });
}

static void tap_acc_ev(struct proof *p, const struct mem_access *a)
{
	seen(p, 0, &(struct pev){ .pc = p->pc, .a = a->addr, .size = a->size,
				  .what = PE_ACC, .kind = a->kind });
}

static void tap_fetch(struct cache_model *m, uint64_t addr, uint32_t size,
		      uint64_t *row)
{
	tap_fetch_ev(cm_proof(m), addr, size);
	cache_fetch(cm_real(m), addr, size, row);
}

static void tap_access(struct cache_model *m, const struct mem_access *a,
		       uint64_t *row)
{
	tap_acc_ev(cm_proof(m), a);
	cache_access(cm_real(m), a, row);
}

static void tap_insn(struct cache_model *m, uint64_t addr, uint32_t size,
		     const struct mem_access *acc, unsigned n, bool fetch2,
		     uint64_t *row)
{
	struct proof *p = cm_proof(m);
	tap_fetch_ev(p, addr, size);
	for (unsigned i = 0; i < n; i++)
		tap_acc_ev(p, &acc[i]);
	if (fetch2)
		tap_fetch_ev(p, addr, size);
	struct cache_model *r = cm_real(m);
	r->ops->insn(r, addr, size, acc, n, fetch2, row);
}

static void tap_insns(struct cache_model *m, const struct model_insn *v,
		      unsigned n)
{
	struct proof *p = cm_proof(m);
	for (unsigned i = 0; i < n; i++) {
		tap_fetch_ev(p, v[i].pc, v[i].len);
		for (unsigned j = 0; j < v[i].n_acc; j++)
			tap_acc_ev(p, &v[i].acc[j]);
	}
	struct cache_model *r = cm_real(m);
	r->ops->insns(r, v, n);
}

static void tap_describe(const struct cache_model *m, FILE *out)
{
	cache_describe(cm_real(m), out);
}

static void tap_set_core(struct cache_model *m, unsigned core)
{
	cache_set_core(cm_real(m), core);
}

static void tap_report(const struct cache_model *m, FILE *out,
		       const char *prefix, const struct model_resolver *res)
{
	cache_report(cm_real(m), out, prefix, res);
}

static void tap_flush(struct cache_model *m)
{
	cache_flush(cm_real(m));
}

static void tap_destroy(struct cache_model *m)
{
	cache_destroy(cm_real(m));
	free(m);
}

static struct proof *bm_proof(struct branch_model *m)
{
	return ((struct tap_bm *)(void *)m)->p;
}

static struct branch_model *bm_real(struct branch_model *m)
{
	return ((struct tap_bm *)(void *)m)->real;
}

static void tap_cond(struct branch_model *m, uint64_t pc, bool taken,
		     uint64_t *row)
{
	seen(bm_proof(m), 1, &(struct pev){ .pc = pc, .a = taken,
					    .what = PE_COND });
	branch_cond(bm_real(m), pc, taken, row);
}

static void tap_conds(struct branch_model *m, const struct model_cond *v,
		      unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		seen(bm_proof(m), 1, &(struct pev){ .pc = v[i].pc,
			.a = v[i].taken, .what = PE_COND });
	struct branch_model *r = bm_real(m);
	r->ops->conds(r, v, n);
}

static void tap_indirect(struct branch_model *m, uint64_t pc,
			 uint64_t target, uint64_t *row)
{
	seen(bm_proof(m), 1, &(struct pev){ .pc = pc, .a = target,
					    .what = PE_IND });
	branch_indirect(bm_real(m), pc, target, row);
}

static void tap_call(struct branch_model *m, uint64_t pc, uint64_t ret,
		     uint64_t *row)
{
	seen(bm_proof(m), 1, &(struct pev){ .pc = pc, .a = ret,
					    .what = PE_CALL });
	struct branch_model *r = bm_real(m);
	r->ops->call(r, pc, ret, row);
}

static void tap_ret(struct branch_model *m, uint64_t pc, uint64_t target,
		    uint64_t *row)
{
	seen(bm_proof(m), 1, &(struct pev){ .pc = pc, .a = target,
					    .what = PE_RET });
	struct branch_model *r = bm_real(m);
	r->ops->ret(r, pc, target, row);
}

static void tap_bflush(struct branch_model *m)
{
	branch_flush(bm_real(m));
}

static void tap_bdestroy(struct branch_model *m)
{
	branch_destroy(bm_real(m));
	free(m);
}

/* The ops of the wrapped models: the real ones' optional ops are ours
 * only where theirs are (account.c chooses its path by them). */
static struct cache_model_ops cm_ops;
static struct branch_model_ops bm_ops;

static struct cache_model *wrap_cache(struct proof *p, struct cache_model *real)
{
	const struct cache_model_ops *o = real->ops;
	cm_ops = (struct cache_model_ops){
		.name = o->name, .cheap = o->cheap,
		.fetch = tap_fetch, .access = tap_access,
		.insn = o->insn ? tap_insn : NULL,
		.insns = o->insns ? tap_insns : NULL,
		.describe = o->describe ? tap_describe : NULL,
		.set_core = o->set_core ? tap_set_core : NULL,
		.report = o->report ? tap_report : NULL,
		.flush = o->flush ? tap_flush : NULL,
		.destroy = tap_destroy,
	};
	struct tap_cm *m = xcalloc(1, sizeof(*m));
	m->base = *real;
	m->base.ops = &cm_ops;
	m->real = real;
	m->p = p;
	return &m->base;
}

static struct branch_model *wrap_branch(struct proof *p,
					struct branch_model *real)
{
	const struct branch_model_ops *o = real->ops;
	bm_ops = (struct branch_model_ops){
		.name = o->name, .cheap = o->cheap,
		.cond = tap_cond, .indirect = tap_indirect,
		.call = o->call ? tap_call : NULL,
		.ret = o->ret ? tap_ret : NULL,
		.conds = o->conds ? tap_conds : NULL,
		.flush = o->flush ? tap_bflush : NULL,
		.destroy = tap_bdestroy,
	};
	struct tap_bm *m = xcalloc(1, sizeof(*m));
	m->base = *real;
	m->base.ops = &bm_ops;
	m->real = real;
	m->p = p;
	return &m->base;
}

/* ---- the step engine's side ---- */

void proof_start(struct tracer *tr, const struct decode_target *target,
		 bool chase)
{
	struct engine *e = &tr->eng;
	const char *err;
	struct proof *p = xcalloc(1, sizeof(*p));
	p->tr = tr;
	p->dec = decode_new(target, &err);
	if (!p->dec)
		error_msg_and_die("cannot start the decoder: %s", err);
	decode_set_chase(p->dec, chase);
	e->cm = wrap_cache(p, e->cm);
	if (e->bm)
		e->bm = wrap_branch(p, e->bm);
	e->proof = p;
}

void proof_invalidate(struct engine *e, uint64_t start, uint64_t end)
{
	if (e->proof)
		decode_invalidate(e->proof->dec, start, end);
}

void proof_prepare(struct engine *e, uint64_t pc)
{
	const struct insn *in = decode_insn(e->proof->dec, pc, NULL);
	if (in)
		(void)decode_prepare(e->proof->dec, in);
}

/* What account.c feeds the models for IN's step EV (the pc after it
 * NEXT, its fetch LEN bytes), queued as the step engine's events of T. */
static void queue_step(struct engine *e, pid_t tid, const struct insn *in,
		       uint32_t len, uint64_t next,
		       const struct step_events *ev)
{
	struct pthread_q *th = queues(e->proof, tid);
	struct pq *c = &th->q[0], *b = &th->q[1];
	const struct branch_model_ops *bo = e->bm ? e->bm->ops : NULL;
	put(c, &(struct pev){ .pc = in->pc, .a = len, .what = PE_FETCH });
	for (unsigned i = 0; i < ev->n_acc; i++)
		put(c, &(struct pev){ .pc = in->pc, .a = ev->acc[i].addr,
				      .size = ev->acc[i].size,
				      .kind = ev->acc[i].kind,
				      .what = PE_ACC });
	if (ev->n_fetch > 1)
		put(c, &(struct pev){ .pc = in->pc, .a = len,
				      .what = PE_FETCH });
	if (bo && in->len) {
		for (unsigned i = 0; i < ev->n_cond; i++)
			put(b, &(struct pev){ .pc = in->pc,
					      .a = ev->cond_taken[i],
					      .what = PE_COND });
		if (ev->indirect)
			put(b, &(struct pev){ .pc = in->pc, .a = ev->ind_target,
					      .what = PE_IND });
	}
	if (bo && bo->call && (in->branch == BR_CALL ||
			       in->branch == BR_CALL_IND))
		put(b, &(struct pev){ .pc = in->pc, .a = in->pc + in->len,
				      .what = PE_CALL });
	else if (bo && bo->ret && in->branch == BR_RET)
		put(b, &(struct pev){ .pc = in->pc, .a = next,
				      .what = PE_RET });
	for (unsigned i = 0; i < ev->n_spec; i++) {
		put(c, &(struct pev){ .pc = ev->spec_pc[i],
				      .a = ev->spec_len[i] ? ev->spec_len[i] : 1,
				      .what = PE_FETCH });
		if (bo && i + 1 == ev->n_spec)
			put(b, &(struct pev){ .pc = ev->spec_pc[i],
					      .a = ev->spec_taken,
					      .what = PE_COND });
	}
}

void proof_step(struct engine *e, struct tracee *t,
		const struct user_regs_struct *before,
		const struct user_regs_struct *after)
{
	struct proof *p = e->proof;
	const char *err = NULL;
	struct tracee *was = e->decoding;
	e->decoding = t;
	const struct insn *in = decode_insn(p->dec, before->rip, &err);
	struct step_events ev;
	if (!in || decode_step(p->dec, in, before, after, &ev) < 0) {
		/* as engine_account_regs: the fetch alone */
		memset(&ev, 0, sizeof(ev));
		ev.n_fetch = 1;
	}
	e->decoding = was;
	if (!in)
		return;
	queue_step(e, t->tid, in, engine_fetch_len(in, after->rip),
		   after->rip, &ev);
}

void proof_fetch(struct engine *e, struct tracee *t, uint64_t pc,
		 uint32_t len)
{
	put(&queues(e->proof, t->tid)->q[0],
	    &(struct pev){ .pc = pc, .a = len, .what = PE_FETCH });
}

void proof_window_end(struct engine *e)
{
	struct proof *p = e->proof;
	if (!p)
		return;
	for (size_t i = 0; i < p->n_th; i++)
		for (unsigned s = 0; s < STREAMS; s++) {
			struct pq *q = &p->th[i].q[s];
			if (!p->off && q->head != q->tail)
				diverge(p, p->th[i].tid, &q->v[q->head], NULL);
			q->head = q->tail = 0;
		}
	p->off = false;
}

bool proof_diverged(const struct engine *e)
{
	return e->proof && e->proof->diverged;
}

void proof_describe(const struct engine *e, FILE *f, const char *prefix)
{
	const struct proof *p = e->proof;
	if (!p)
		return;
	fprintf(f, "%sLockstep: %" PRIu64 " events of the instrument engine "
		"compared with the step engine's, %u window%s diverged\n",
		prefix, p->compared, p->diverged, p->diverged == 1 ? "" : "s");
}

void proof_free(struct engine *e)
{
	struct proof *p = e->proof;
	if (!p)
		return;
	for (size_t i = 0; i < p->n_th; i++)
		for (unsigned s = 0; s < STREAMS; s++)
			free(p->th[i].q[s].v);
	free(p->th);
	decode_free(p->dec);
	free(p);
	e->proof = NULL;
}
