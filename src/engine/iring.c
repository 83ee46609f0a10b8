/* The instrument engine (instrument.c): its ring read and a thread's
 * state put back.  The records of the blocks that ran go from the ring
 * into the accounting (a block's plan made at its first read), a string
 * instruction's iterations are accounted as its single steps would have
 * been, and a thread stopped in the code cache is put back as it is at
 * the original instruction (the scratch registers from the slot, a
 * call's half-done push undone). */
#include "engine.h"

#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "itrans.h"
#include "tracer.h"
#include "instrument_private.h"

_Static_assert(IBLOCK_MAX <= UINT16_MAX, "a lean block's n");

/* plan_of's first drain of block ID. */
static __attribute__((noinline)) struct lean_block *
plan_new(struct inst *in, uint64_t id)
{
	unsigned ci = (unsigned)(id >> 24);
	if (ci >= in->n_caches)
		return NULL;
	struct icache *c = &in->caches[ci];
	uint32_t i = id & 0xffffff;
	const struct iblock *b = itrans_by_id(c->x, id);
	if (!b)
		return NULL;
	if (i >= c->n_plans) {
		uint32_t n = c->n_plans ? c->n_plans : 256;
		while (n <= i)
			n *= 2;
		c->plans = xreallocarray(c->plans, n, sizeof(*c->plans));
		memset(c->plans + c->n_plans, 0,
		       (n - c->n_plans) * sizeof(*c->plans));
		c->n_plans = n;
	}
	bool str = b->kind == IEND_STR;
	struct lean_block *lb = engine_lean_block(b->in, str ? 0 : b->n);
	struct lean_head *h = engine_lean_head(lb);
	h->pc = b->pc;
	engine_lean_set_str(lb, str ? b->in[0] : NULL);
	h->words = b->n_addr;
	return c->plans[i] = lb;
}

/* Block number ID's accounting, made at its first drain (its head: its
 * pc and its record's length); NULL if there is no such block. */
static inline struct lean_block *plan_of(struct inst *in, uint64_t id)
{
	unsigned ci = (unsigned)(id >> 24);
	uint32_t i = id & 0xffffff;
	if (ci < in->n_caches && i < in->caches[ci].n_plans &&
	    in->caches[ci].plans[i])
		return in->caches[ci].plans[i];
	return plan_new(in, id);
}

/* Tests only (tests/emulate/engines.sh, lockstep-instrument-selftest):
 * CACHETRACE_TEST_RING_SKEW moves the first address a drain reads from
 * the ring by 64 bytes, once, for the proof to catch.  Is it to be done
 * (TAKE: it is)? */
static bool ring_skew(bool take)
{
	static int skew = -1;
	if (skew < 0)
		skew = getenv("CACHETRACE_TEST_RING_SKEW") != NULL;
	if (take)
		skew = 0;
	return skew;
}

/* Where T's ring has records not read yet (drain_running read those
 * before). */
static uint64_t unread(const struct inst *in, const struct tracee *t)
{
	uint64_t done = in->units[t->iunit - 1].done;
	return done ? done : ring_start(in, t);
}

/* Account the records of T's ring not read yet, up to target address
 * END (the first, when none was read, entered with the thread's rsp at
 * its entry to the cache): the last instruction goes on to LAST_NEXT (0:
 * unknown, the last record is left out), and what is read is marked so.
 * Returns the words read. */
static size_t drain_from(struct tracer *tr, struct tracee *t,
			 struct inst *in, uint64_t end, uint64_t last_next)
{
	struct iunit *u = &in->units[t->iunit - 1];
	uint64_t from = unread(in, t);
	const uint64_t *w = ring_local(in, from);
	size_t n_words = (end - from) / 8, p = 0, read = 0;
	uint64_t fs = t->regs.fs_base, rsp = u->done ? 0 : t->regs.rsp;
	struct lean_run run;
	struct lean_block *b = p < n_words ? plan_of(in, w[p]) : NULL, *nb;
	uint64_t steps = t->win.steps, cached = 0;
	bool skew = ring_skew(false);
	engine_lean_run_start(&tr->eng, &run, fs);
	while (b && p + 1 + engine_lean_head(b)->words <= n_words) {
		const struct lean_head *h = engine_lean_head(b);
		/* the ring was written long ago: its lines from memory */
		__builtin_prefetch(w + p + 128);
		p += 1 + h->words;
		nb = p < n_words ? plan_of(in, w[p]) : NULL;
		if (!nb && !last_next)
			break;		/* where the last went is unknown */
		if (h->str) {
			/* the decoder's own path: its state caught up */
			const struct insn *str = engine_lean_str(b);
			engine_lean_run_end(&tr->eng, &run);
			const uint64_t *v = w + p - h->words;
			struct user_regs_struct b0, a = t->regs;
			a.rcx = v[3];
			a.rsi = v[4];
			a.rdi = v[5];
			if (h->words == 7)	/* cmps, scas: ZF after */
				a.eflags = (a.eflags & ~0x40ull) |
					   ((v[6] & 0xff) ? 0x40 : 0);
			a.rip = str->pc + str->len;
			str_before(t, str, v, &a, &b0);
			b0.rsp = rsp;
			account_string(tr, t, str, &b0, &a, true);
			engine_lean_run_start(&tr->eng, &run, fs);
		} else {
			if (__builtin_expect(skew, 0) && h->words) {
				*(uint64_t *)(uintptr_t)(w + p - h->words) += 64;
				skew = ring_skew(true);
			}
			engine_account_block(&tr->eng, t, &run, b,
					     w + p - h->words,
					     nb ? engine_lean_head(nb)->pc :
						  last_next, rsp);
			cached += h->n;
		}
		rsp = 0;
		b = nb;
		read = p;
	}
	engine_lean_run_end(&tr->eng, &run);
	in->cached += cached;
	t->win.steps += cached;
	/* The ring's bytes an instruction, lately (--sample sizes the ring
	 * by it): the sums halved as they grow, the old weighing less. */
	in->ring_bytes += 8 * read;
	in->words += read;
	in->ring_insns += t->win.steps - steps;
	if (in->ring_insns > (1u << 24)) {
		in->ring_bytes /= 2;
		in->ring_insns /= 2;
	}
	if (read)
		u->done = from + 8 * read;
	return read;
}

/* Account the records of T's ring not yet read, up to target address
 * END: the last instruction goes on to LAST_NEXT (0: unknown, the last
 * record is left out).  The ring is empty again after. */
void drain(struct tracer *tr, struct tracee *t, struct inst *in,
	   uint64_t end, uint64_t last_next)
{
	drain_from(tr, t, in, end, last_next);
	/* the stay's bytes (a full ring's too), the older weighing less */
	in->stay = (3 * in->stay + (end - ring_start(in, t))) / 4;
	ring_empty(in, t);
}

/* While T runs in the cache: its records written so far (those below the
 * cursor its blocks store after their words; x86 keeps stores in order)
 * read, all but the last, whose successor is not known yet; when at
 * least LEAST bytes are there, at most MOST.  The model sees the blocks
 * in the same order, so the profile is the one drain alone makes. */
bool drain_running(struct tracer *tr, struct tracee *t, struct inst *in,
		   uint64_t least, uint64_t most)
{
	uint64_t from = unread(in, t);
	uint64_t end = __atomic_load_n(&slot(in, t)[ISLOT_CUR / 8],
				       __ATOMIC_ACQUIRE);
	if (end < from + least)
		return false;
	if (end > from + most)
		end = from + most;
	size_t p = drain_from(tr, t, in, end, 0);
	in->words_running += p;
	return p > 0;
}

static uint64_t *gpr(struct user_regs_struct *r, unsigned num)
{
	return (uint64_t *)(void *)r + decode_gpr_slot(num);
}

/* T, out of the cache, goes on from registers R, with its own gs base:
 * false when they cannot be set. */
bool back_at(struct tracee *t, struct user_regs_struct *r)
{
	r->gs_base = t->regs.gs_base;
	t->regs = *r;
	t->in_cache = false;
	t->insn = NULL;
	return tracee_setregs(t->tid, r) == 0;
}

/* Account string instruction IN, run alone from registers B0 to A (its
 * iterations done, FINISHED when the instruction completed), as the
 * single steps of its iterations would have: the registers of each step
 * are made from B0 (decode_step reads rcx, rsi and rdi before it, the pc
 * and the flags after it). */
void account_string(struct tracer *tr, struct tracee *t,
		    const struct insn *in,
		    const struct user_regs_struct *b0,
		    const struct user_regs_struct *a, bool finished)
{
	unsigned es;
	bool si, di;
	if (!decode_string(in, &es, &si, &di))
		return;			/* itrans_solo takes no other */
	uint64_t step = (a->eflags & 0x400) ? -(uint64_t)es : es;
	uint64_t next = in->pc + in->len;
	struct user_regs_struct bk = *b0, ak;

	struct inst *ins = inst_of(tr);
	t->insn = in;
	if (!in->rep || b0->rcx == 0) {
		if (finished) {
			ins->cached++;
			ak = *a;
			ak.rip = next;
			engine_account_regs(&tr->eng, t, b0, &ak);
		}
		return;
	}
	uint64_t n = b0->rcx - a->rcx;
	ins->cached += n;
	struct decoder *d = tr->eng.dec;
	struct decode_sbstate s0, s1;
	bool s0_ok = false;
	for (uint64_t k = 0; k < n; k++) {
		if (k == 1)
			s0_ok = decode_sb_get(d, bk.fs_base, &s0);
		if (k == 2 && k + 1 < n && s0_ok &&
		    decode_sb_get(d, bk.fs_base, &s1) &&
		    !memcmp(&s0, &s1, sizeof(s0))) {
			/* the second iteration left the superblock state
			 * as it found it: the same steps until the last */
			uint64_t m = n - 1 - k;
			if (engine_account_again(&tr->eng, t, m,
						 (int64_t)step)) {
				bk.rcx -= m;
				if (si)
					bk.rsi += m * step;
				if (di)
					bk.rdi += m * step;
				k += m;
			}
		}
		ak = bk;
		ak.rcx = bk.rcx - 1;
		if (si)
			ak.rsi = bk.rsi + step;
		if (di)
			ak.rdi = bk.rdi + step;
		bool last = finished && k + 1 == n;
		ak.rip = last ? next : in->pc;
		if (last)
			ak.eflags = a->eflags;
		engine_account_regs(&tr->eng, t, &bk, &ak);
		bk = ak;
		bk.rip = in->pc;
	}
}

/* B0: the registers before string instruction IN, whose rcx, rsi and rdi
 * before it are V, from A after it (its direction too: the flag DF in
 * both, from where rdi or rsi went). */
void str_before(const struct tracee *t, const struct insn *in,
		const uint64_t *v, struct user_regs_struct *a,
		struct user_regs_struct *b0)
{
	*b0 = *a;
	b0->rcx = v[0];
	b0->rsi = v[1];
	b0->rdi = v[2];
	b0->rip = in->pc;
	b0->fs_base = t->regs.fs_base;
	bool down = a->rdi != v[2] ? a->rdi < v[2] : a->rsi < v[1];
	if (down) {
		a->eflags |= 0x400;
		b0->eflags |= 0x400;
	} else {
		a->eflags &= ~0x400ull;
		b0->eflags &= ~0x400ull;
	}
}

/* The registers an exit's stub keeps in the slot, back in R (POS: where
 * the thread stands in it). */
static void restore_stub(struct inst *in, const struct tracee *t,
			 const struct ipos *pos, struct user_regs_struct *r)
{
	if (pos->xrax)
		r->rax = slot(in, t)[ISLOT_XRAX / 8];
	if (pos->xrcx)
		r->rcx = slot(in, t)[ISLOT_XRCX / 8];
	if (pos->xr11)
		r->r11 = slot(in, t)[ISLOT_XR11 / 8];
}

/* T left string instruction B (itrans_solo) with registers A: the
 * blocks' records before it accounted, then its iterations, when BEGUN,
 * from rcx, rsi and rdi as its prologue kept them (FINISHED: it
 * completed). */
void leave_solo(struct tracer *tr, struct tracee *t, struct inst *in,
		const struct iblock *b, const struct user_regs_struct *a,
		bool begun, bool finished)
{
	drain(tr, t, in, slot(in, t)[ISLOT_CUR / 8], b->pc);
	if (!begun)
		return;
	struct user_regs_struct b0, after = *a;
	str_before(t, b->in[0], slot(in, t) + ISLOT_SRCX / 8, &after, &b0);
	account_string(tr, t, b->in[0], &b0, &after, finished);
}

/* T's registers R, where it stands in the cache (*POS, located from R's
 * pc; false when in no block), put back as they are at the original
 * instruction POS->pc: the scratch registers from the slot, a call's
 * half-done push undone.  *BASE: where its block's record begins (a
 * string instruction alone has none). */
bool put_back(struct tracee *t, struct inst *in,
	      struct user_regs_struct *r, struct ipos *pos,
	      uint64_t *base)
{
	struct itrans *cx = cache_at(in, r->rip);
	if (!cx || !itrans_locate(cx, r->rip, pos)) {
		error_msg("error: thread %d stopped at 0x%llx, in the code "
			  "cache but in no block", t->tid, r->rip);
		return false;
	}
	const struct iblock *b = pos->b;
	*base = 0;
	if (b->kind != IEND_SOLO) {
		uint64_t rec = 8 * (1 + (uint64_t)b->n_addr);
		uint64_t *rt = gpr(r, b->rt);
		*base = pos->rt_live ? *rt :
			pos->rt_bumped ? *rt - rec :
			pos->cur_bumped ? slot(in, t)[ISLOT_CUR / 8] - rec :
			slot(in, t)[ISLOT_CUR / 8];
		if (pos->rt_spilled)
			*rt = slot(in, t)[ISLOT_ST / 8];
		if (pos->rs_spilled && pos->rs >= 0)
			*gpr(r, (unsigned)pos->rs) = slot(in, t)[ISLOT_SS / 8];
		if (pos->rsp_pushed)
			r->rsp += 8;
		if (pos->rax_spilled)
			r->rax = slot(in, t)[ISLOT_RAX / 8];
		if (pos->rcx_spilled)
			r->rcx = slot(in, t)[ISLOT_RCX / 8];
		if (pos->prcx_spilled)
			r->rcx = slot(in, t)[ISLOT_PRCX / 8];
		if (pos->rsp_popped)
			r->rsp -= 8;
	}
	restore_stub(in, t, pos, r);
	return true;
}
