/* Call stacks while stepping: a shadow stack, a calling-context tree and
 * per-(context, pc) costs, which src/report/callgrind.c writes as a
 * Callgrind profile and as folded stacks (include/callprof.h).
 *
 * The rules, chosen so that our files read like Callgrind's (default
 * options: --separate-recs=2, --skip-plt=yes, no --separate-callers):
 *
 * - A function is its ELF symbol (entry address); a pc in no symbol is a
 *   function of its own, named by its address.
 * - Recursion: an activation of F while F is already active is "F'2", as
 *   Callgrind names it; deeper levels stay "F'2".  A context node is
 *   (parent node, function, level); a call of (F, level) whose chain
 *   already holds (F, level) goes back to that ancestor node, so a chain
 *   holds each (function, level) at most once and the tree stays bounded.
 * - Calls: call instructions, and (as Callgrind) jumps to the entry of a
 *   function, or out of the current function into another one's entry
 *   (tail calls).  A call to a PLT stub (no symbol, starts with an
 *   indirect jmp) is skipped: the stub's costs go to the call site, and its
 *   jump out (to the target, or to the dynamic resolver) is the call.
 *   Leaving a _dl_runtime_resolve* by its final jump pops it first, so the
 *   resolved function is called from the original caller (Callgrind's
 *   pop-on-jump).
 * - Returns pop every frame whose return-address slot is below the new
 *   rsp (tail-called frames go with their caller); a step that leaves the
 *   current function with rsp above the top frame's slot pops likewise
 *   (longjmp, exceptions: Callgrind's rule at the next block).  A
 *   return to an address other than the expected one, a pc that leaves the
 *   current function without a call or jump to an entry (sigreturn), or a
 *   pc other than the one the last step led to (signal handler entry: the
 *   engine steps no instruction for it) makes us unwind the thread again
 *   with libunwind and keep the frames that still match (function and
 *   return-address slot), from the outermost inwards.
 * - Inclusive costs are Callgrind's: per call edge (caller context, call
 *   site, callee context), the cost between the call and its return (or
 *   the window's end), summed over calls; nested recursive calls are
 *   therefore counted once per active call, as in Callgrind.  Frames found
 *   by unwinding were not called in the window: they carry no edge.
 * - Threads have a shadow stack and running totals each; the context tree
 *   is shared (Callgrind's --separate-threads=no).
 *
 * Per step: callstack_row hands out a zeroed pending row (it is not told
 * the thread); callstack_step adds it into the thread's (context, pc) row
 * and running totals (one hash lookup), compares a few registers with the
 * top frame, and does one more hash lookup per call. */
#include "callstack.h"

#include <errno.h>
#include <inttypes.h>
#include <libunwind-ptrace.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include "error.h"
#include "hashtab.h"
#include "callstack_private.h"

/* The keys of the maps, hashed for a lookup and for rehashing. */
static uint64_t node_key(const struct cs_node *parent, const struct cs_func *f,
			 unsigned level)
{
	return hash_pair(hash_pair((uintptr_t)parent, (uintptr_t)f), level);
}

static uint64_t node_hash(const void *ctx, uint32_t i)
{
	const struct cs_node *n = ((const struct callstack *)ctx)->nodes[i];
	return node_key(n->parent, n->func, n->level);
}

static uint64_t edge_key(const struct cs_node *from, uint64_t site,
			 uint64_t target, unsigned level)
{
	return hash_pair(hash_pair((uintptr_t)from, site),
			 target ^ (uint64_t)level << 56);
}

static uint64_t edge_hash(const void *ctx, uint32_t i)
{
	const struct cs_edge *e = ((const struct callstack *)ctx)->edges[i];
	return edge_key(e->from, e->site, e->target, e->to->level);
}

static uint64_t row_key(const struct cs_node *n, uint64_t pc)
{
	return hash_pair((uintptr_t)n, pc);
}

static uint64_t row_hash(const void *ctx, uint32_t i)
{
	const struct cs_row *r = &((const struct callstack *)ctx)->rows[i];
	return row_key(r->node, r->pc);
}

static uint64_t activation_hash(const void *ctx, uint32_t i)
{
	return hash_u64((uintptr_t)((const struct thread *)ctx)->active[i].func);
}

/* ---- allocation (rare: new functions, contexts, edges, rows) ---- */

void *cs_keep(struct callstack *cs, void *p)
{
	if (!p)
		return NULL;
	if (cs->n_allocs == cs->cap_allocs) {
		size_t n = cs->cap_allocs ? cs->cap_allocs * 2 : 256;
		void **a = realloc(cs->allocs, n * sizeof(*a));
		if (!a) {
			free(p);
			return NULL;
		}
		cs->allocs = a;
		cs->cap_allocs = n;
	}
	cs->allocs[cs->n_allocs++] = p;
	return p;
}

void *cs_zalloc(struct callstack *cs, size_t size)
{
	return cs_keep(cs, calloc(1, size));
}

/* N_EVENTS zeroed counters that never move. */
static uint64_t *counters(struct callstack *cs)
{
	if (cs->pool_left < cs->n_events) {
		size_t n = (size_t)cs->n_events * 1024;
		cs->pool = cs_keep(cs, calloc(n, sizeof(uint64_t)));
		if (!cs->pool) {
			cs->pool_left = 0;
			return NULL;
		}
		cs->pool_left = n;
	}
	uint64_t *c = cs->pool;
	cs->pool += cs->n_events;
	cs->pool_left -= cs->n_events;
	return c;
}

/* ---- contexts ---- */

static struct cs_node *child_of(struct callstack *cs, struct cs_node *parent,
				struct cs_func *f, unsigned level)
{
	/* Recursion folding: back to the ancestor with the same key. */
	for (struct cs_node *a = parent; a && a->func; a = a->parent)
		if (a->func == f && a->level == level)
			return a;
	struct hashtab_probe p;
	for (uint32_t i = hashtab_first(&cs->node_map, node_key(parent, f, level),
					&p);
	     i != HASHTAB_NONE; i = hashtab_next(&cs->node_map, &p)) {
		struct cs_node *n = cs->nodes[i];
		if (n->parent == parent && n->func == f && n->level == level)
			return n;
	}
	struct cs_node *n = cs_zalloc(cs, sizeof(*n));
	if (!n)
		return NULL;
	n->parent = parent;
	n->func = f;
	n->level = level;
	n->depth = parent->depth + 1;
	*APPEND(cs->nodes, cs->n_nodes, cs->cap_nodes) = n;
	hashtab_insert(&cs->node_map, &p, cs->n_nodes - 1, node_hash, cs);
	return n;
}

/* ---- the shadow stacks ---- */

static struct thread *thread_of(struct callstack *cs, pid_t tid)
{
	if (cs->last && cs->last->tid == tid)
		return cs->last;
	for (size_t i = 0; i < cs->n_threads; i++)
		if (cs->threads[i]->tid == tid)
			return cs->last = cs->threads[i];
	struct thread **a = realloc(cs->threads,
				    (cs->n_threads + 1) * sizeof(*a));
	struct thread *t = cs_zalloc(cs, sizeof(*t));
	if (!a || !t || !(t->total = counters(cs))) {
		if (a)
			cs->threads = a;
		return NULL;
	}
	cs->threads = a;
	a[cs->n_threads++] = t;
	t->tid = tid;
	t->cur = &cs->root;
	return cs->last = t;
}

/* F's activation record in T, NULL (and P set for inserting) if none. */
static struct activation *activation_of(struct thread *t,
					const struct cs_func *f,
					struct hashtab_probe *p)
{
	for (uint32_t i = hashtab_first(&t->active_map, hash_u64((uintptr_t)f),
					p);
	     i != HASHTAB_NONE; i = hashtab_next(&t->active_map, p))
		if (t->active[i].func == f)
			return &t->active[i];
	return NULL;
}

/* The recursion level of a new activation of F in T. */
static unsigned level_for(struct thread *t, const struct cs_func *f)
{
	struct hashtab_probe p;
	const struct activation *a = activation_of(t, f, &p);
	unsigned active = a ? a->count : 0;
	return active + 1 < REC_LEVELS ? active + 1 : REC_LEVELS;
}

static void count_active(struct thread *t, const struct cs_func *f, int d)
{
	struct hashtab_probe p;
	struct activation *a = activation_of(t, f, &p);
	if (a) {
		a->count += d;
	} else if (d > 0) {
		*APPEND(t->active, t->n_active, t->cap_active) =
			(struct activation){ f, 1 };
		hashtab_insert(&t->active_map, &p, t->n_active - 1,
			       activation_hash, t);
	}
}

/* Add the pending row into T's current context (at the PLT call site
 * while a stub is skipped), and into T's running totals. */
static void commit(struct callstack *cs, struct thread *t)
{
	if (!cs->has_pending)
		return;
	cs->has_pending = false;
	if (!t)
		return;
	uint64_t at = t->skipping ? t->skip_site : cs->pending_pc;
	struct cs_node *n = t->cur;
	if (n == &cs->root) {
		/* No stack known: the function alone is the context. */
		struct cs_func *f = cs_func_of(cs, t->tid, at);
		if (!f || !(n = child_of(cs, n, f, 1)))
			return;
	}
	struct hashtab_probe p;
	uint64_t *cost = NULL;
	for (uint32_t i = hashtab_first(&cs->row_map, row_key(n, at), &p);
	     i != HASHTAB_NONE; i = hashtab_next(&cs->row_map, &p)) {
		if (cs->rows[i].node == n && cs->rows[i].pc == at) {
			cost = cs->rows[i].cost;
			break;
		}
	}
	if (!cost) {
		if (!(cost = counters(cs)))
			return;		/* out of memory: lost */
		*APPEND(cs->rows, cs->n_rows, cs->cap_rows) =
			(struct cs_row){ .node = n, .pc = at, .cost = cost };
		hashtab_insert(&cs->row_map, &p, cs->n_rows - 1, row_hash, cs);
	}
	for (unsigned i = 0; i < cs->n_events; i++) {
		cost[i] += cs->pending[i];
		t->total[i] += cs->pending[i];
	}
}

static int push(struct callstack *cs, struct thread *t, struct cs_node *n,
		struct cs_edge *e, uint64_t sp, uint64_t ret)
{
	if (t->depth == t->cap) {
		size_t c = t->cap ? t->cap * 2 : 256;
		struct frame *f = realloc(t->frames, c * sizeof(*f));
		if (!f)
			return -1;
		t->frames = f;
		uint64_t *s = realloc(t->snaps, c * cs->n_events * sizeof(*s));
		if (!s)
			return -1;
		t->snaps = s;
		t->cap = c;
	}
	struct frame *f = &t->frames[t->depth];
	f->node = n;
	f->edge = e;
	f->sp = sp;
	f->ret = ret;
	if (e)
		memcpy(&t->snaps[t->depth * cs->n_events], t->total,
		       cs->n_events * sizeof(uint64_t));
	count_active(t, n->func, 1);
	t->depth++;
	t->cur = n;
	return 0;
}

static void pop(struct callstack *cs, struct thread *t)
{
	struct frame *f = &t->frames[--t->depth];
	if (f->edge) {
		const uint64_t *s = &t->snaps[t->depth * cs->n_events];
		for (unsigned i = 0; i < cs->n_events; i++)
			f->edge->incl[i] += t->total[i] - s[i];
	}
	count_active(t, f->node->func, -1);
	t->cur = t->depth ? t->frames[t->depth - 1].node : &cs->root;
}

static struct frame *top(struct thread *t)
{
	return t->depth ? &t->frames[t->depth - 1] : NULL;
}

/* A call from T's current context at SITE to TARGET, with the new
 * frame's return-address slot at SP. */
static void call(struct callstack *cs, struct thread *t, uint64_t site,
		 uint64_t target, uint64_t sp, uint64_t ret)
{
	struct cs_func *f = cs_func_of(cs, t->tid, target);
	if (!f)
		return;
	if (f->plt) {
		t->skipping = true;
		t->skip_site = site;
		t->skip_sp = sp;
		t->skip_ret = ret;
		return;
	}
	unsigned level = level_for(t, f);
	struct hashtab_probe p;
	struct cs_edge *e = NULL;
	for (uint32_t i = hashtab_first(&cs->edge_map,
					edge_key(t->cur, site, target, level), &p);
	     i != HASHTAB_NONE; i = hashtab_next(&cs->edge_map, &p)) {
		struct cs_edge *x = cs->edges[i];
		if (x->from == t->cur && x->site == site &&
		    x->target == target && x->to->level == level) {
			e = x;
			break;
		}
	}
	if (!e) {
		struct cs_node *to = child_of(cs, t->cur, f, level);
		e = cs_zalloc(cs, sizeof(*e));
		if (!to || !e || !(e->incl = counters(cs)))
			return;
		e->from = t->cur;
		e->to = to;
		e->site = site;
		e->target = target;
		/* child_of may have grown the node map, not this one. */
		*APPEND(cs->edges, cs->n_edges, cs->cap_edges) = e;
		hashtab_insert(&cs->edge_map, &p, cs->n_edges - 1, edge_hash,
			       cs);
	}
	e->calls++;
	push(cs, t, e->to, e, sp, ret);
}

/* ---- unwinding ---- */

struct uframe {
	uint64_t ip, sp;	/* sp: its return-address slot */
	struct cs_func *func;
};

/* Unwind T; fills U outermost first, returns the number of frames. */
static size_t unwind(struct callstack *cs, struct thread *t, uint64_t rip,
		     struct uframe *u, size_t max)
{
	uint64_t ip[MAX_UNWIND], sp[MAX_UNWIND];
	bool sig[MAX_UNWIND];
	size_t n = 0;

	cs->unwinds++;
	if (cs->sync)
		cs->sync(cs->sync_ctx, t->tid);
	void *upt = _UPT_create(t->tid);
	unw_cursor_t c;
	if (upt && unw_init_remote(&c, cs->as, upt) == 0) {
		do {
			unw_word_t i, s;
			if (unw_get_reg(&c, UNW_REG_IP, &i) < 0 ||
			    unw_get_reg(&c, UNW_REG_SP, &s) < 0 || !i)
				break;
			ip[n] = i;
			sp[n] = s;
			sig[n] = unw_is_signal_frame(&c) > 0;
			n++;
		} while (n < max && unw_step(&c) > 0);
	}
	if (upt)
		_UPT_destroy(upt);
	if (n == 0) {
		ip[0] = rip;
		sig[0] = false;
		n = 1;
	}
	/* Frame j's return-address slot is 8 below its caller's sp. */
	for (size_t j = 0; j < n; j++) {
		struct uframe *f = &u[n - 1 - j];
		f->ip = ip[j];
		f->sp = j + 1 < n ? sp[j + 1] - 8 : NO_SP;
		/* A return address may be just past its function's end; the
		 * trampoline of a signal frame and the pc it interrupted are
		 * exact. */
		bool exact = !j || sig[j] || sig[j - 1];
		f->func = cs_func_of(cs, t->tid, exact ? ip[j] : ip[j] - 1);
	}
	/* Frames past a thread's real outermost one (clone3 has no end
	 * marker in its CFI) come out as pcs in no function: drop them. */
	size_t drop = 0;
	while (drop + 1 < n && (!u[drop].func || u[drop].func->own_name))
		drop++;
	if (drop) {
		memmove(u, u + drop, (n - drop) * sizeof(*u));
		n -= drop;
		u[0].sp = NO_SP;
	}
	return n;
}

/* F is a thread's bottom frame found by the first unwind in code
 * without a symbol. */
static bool bare_root(const struct frame *f)
{
	return !f->edge && f->sp == NO_SP && f->node->func->own_name;
}

/* Make T's shadow stack agree with an unwind: keep the frames that
 * match from the outermost, pop the rest, push the new ones. */
static void resync(struct callstack *cs, struct thread *t, uint64_t rip)
{
	static struct uframe u[MAX_UNWIND];
	size_t n = unwind(cs, t, rip, u, MAX_UNWIND), m = 0, j = 0;

	/* A bare root (the code the thread began in, without a symbol: the
	 * dynamic loader's _start in a whole run) is the bottom of the
	 * stack for good, as Callgrind's first function is: no unwind
	 * shows it again once its code has called on (unwind drops it as
	 * a pc in no function) or jumped away (to the program's _start,
	 * with the stack reset).  Popping it split the run into roots whose
	 * inclusive costs did not add up (issue 17).  An unwind that finds
	 * only bare code finds the root's own code (_dl_start_user after
	 * _dl_start returned). */
	if (t->depth && bare_root(&t->frames[0])) {
		m = 1;
		if (n == 1 && (!u[0].func || u[0].func->own_name))
			j = 1;
	}
	while (m < t->depth && j < n) {
		const struct frame *f = &t->frames[m];
		if (u[j].func && f->node->func == u[j].func &&
		    (f->sp == u[j].sp || f->sp == NO_SP || u[j].sp == NO_SP)) {
			m++;
			j++;
		} else if (m + 1 < t->depth && t->frames[m + 1].sp == f->sp &&
			   f->sp != NO_SP) {
			m++;	/* tail-called from: the unwinder cannot see it */
		} else {
			break;
		}
	}
	while (t->depth > m)
		pop(cs, t);
	for (; j < n; j++) {
		if (!u[j].func)
			continue;
		struct cs_node *nd = child_of(cs, t->cur, u[j].func,
					   level_for(t, u[j].func));
		/* The frame returns to where its caller was unwound. */
		if (!nd || push(cs, t, nd, NULL, u[j].sp,
				j ? u[j - 1].ip : 0) < 0)
			break;
	}
	t->skipping = false;
	t->expect_pc = rip;
}

/* ---- the API ---- */

struct callstack *callstack_new(unsigned n_events, struct symbols *syms)
{
	struct callstack *cs = calloc(1, sizeof(*cs));
	if (!cs)
		return NULL;
	cs->n_events = n_events;
	cs->syms = syms;
	cs->pending = calloc(n_events ? n_events : 1, sizeof(uint64_t));
	cs->as = unw_create_addr_space(&_UPT_accessors, 0);
	if (!cs->pending || !cs->as) {
		callstack_free(cs);
		return NULL;
	}
	/* Without it an unwind costs ~1 ms instead of ~20 us. */
	unw_set_caching_policy(cs->as, UNW_CACHE_GLOBAL);
	return cs;
}

void callstack_free(struct callstack *cs)
{
	if (!cs)
		return;
	if (cs->as)
		unw_destroy_addr_space(cs->as);
	for (size_t i = 0; i < cs->n_threads; i++) {
		free(cs->threads[i]->frames);
		free(cs->threads[i]->snaps);
		free(cs->threads[i]->active);
		hashtab_free(&cs->threads[i]->active_map);
	}
	free(cs->threads);
	for (size_t i = 0; i < cs->n_allocs; i++)
		free(cs->allocs[i]);
	free(cs->allocs);
	free(cs->pc_funcs);
	hashtab_free(&cs->pc_func_map);
	free(cs->nodes);
	hashtab_free(&cs->node_map);
	free(cs->edges);
	hashtab_free(&cs->edge_map);
	free(cs->rows);
	hashtab_free(&cs->row_map);
	free(cs->pending);
	free(cs);
}

static void end_thread(struct callstack *cs, struct thread *t)
{
	while (t->depth)
		pop(cs, t);
	t->skipping = false;
	t->expect_pc = 0;
}

int callstack_begin(struct callstack *cs, pid_t tid,
		    const struct user_regs_struct *regs)
{
	commit(cs, cs->last);
	struct thread *t = thread_of(cs, tid);
	if (!t)
		return -ENOMEM;
	cs->refreshed = false;
	end_thread(cs, t);
	resync(cs, t, regs->rip);
	return t->depth > 1 ? 0 : -1;
}

uint64_t *callstack_row(struct callstack *cs, uint64_t pc)
{
	/* Not followed by a step (the thread exited): the last thread's. */
	commit(cs, cs->last);
	memset(cs->pending, 0, cs->n_events * sizeof(uint64_t));
	cs->pending_pc = pc;
	cs->has_pending = true;
	return cs->pending;
}

/* Frames whose return-address slot is below SP are gone; *RET is the
 * return address of the outermost of them. */
static bool pop_below(struct callstack *cs, struct thread *t, uint64_t sp,
		      uint64_t *ret)
{
	bool popped = false;
	struct frame *f;
	while ((f = top(t)) && f->sp != NO_SP && f->sp < sp) {
		*ret = f->ret;
		pop(cs, t);
		popped = true;
	}
	return popped;
}

static bool in_func(const struct frame *f, uint64_t pc)
{
	return f && pc >= f->node->func->low && pc < f->node->func->high;
}

void callstack_step(struct callstack *cs, pid_t tid, const struct insn *insn,
		    const struct user_regs_struct *before,
		    const struct user_regs_struct *after)
{
	struct thread *t = thread_of(cs, tid);
	if (!t) {
		cs->has_pending = false;
		return;
	}
	uint64_t pc = before->rip, next = after->rip, ret = 0;
	/* A thread not seen stepping yet, or one that moved without us. */
	bool lost = !t->depth || (t->expect_pc && pc != t->expect_pc);
	commit(cs, t);
	t->expect_pc = next;
	if (lost || !insn) {
		/* No instruction: a signal handler's entry. */
		resync(cs, t, next);
		return;
	}
	switch (insn->branch) {
	case BR_CALL:
	case BR_CALL_IND:
		if (next == pc + insn->len)
			return;		/* call next; pop: gets the pc */
		call(cs, t, t->skipping ? t->skip_site : pc, next, after->rsp,
		     pc + insn->len);
		return;
	case BR_RET:
		t->skipping = false;
		if (!pop_below(cs, t, after->rsp, &ret) || ret != next)
			resync(cs, t, next);
		return;
	default:
		break;
	}
	struct frame *f = top(t);
	if (!t->skipping && in_func(f, next) && next != f->node->func->low)
		return;				/* the common case */
	/* Leaving the function with rsp above the frame (longjmp, an
	 * exception's landing pad): checked only when the pc leaves, as
	 * Callgrind does at the next block, so that the instructions after
	 * the stack switch stay with the function that made it. */
	if (f && f->sp != NO_SP && after->rsp > f->sp) {
		/* longjmp, an exception's landing pad */
		pop_below(cs, t, after->rsp, &ret);
		t->skipping = false;
		if (!in_func(top(t), next))
			resync(cs, t, next);
		return;
	}
	if (t->skipping) {
		struct cs_func *tf = cs_func_of(cs, tid, next);
		if (tf && tf->own_name)
			return;			/* still in the PLT */
		t->skipping = false;
		if (tf && tf->low == next)
			call(cs, t, t->skip_site, next, t->skip_sp,
			     t->skip_ret);
		else
			resync(cs, t, next);
		return;
	}
	if (f && f->node->func->own_name) {
		/* Code without symbols: follow it without unwinding. */
		struct cs_func *tf = cs_func_of(cs, tid, next);
		if (tf && tf->own_name)
			return;
	}
	if (f && (insn->branch == BR_JMP || insn->branch == BR_JMP_IND ||
		  insn->branch == BR_COND)) {
		struct cs_func *tf = cs_func_of(cs, tid, next);
		if (tf && tf->low == next) {
			/* A tail call; the resolver's jump is its return. */
			uint64_t sp = f->sp, site = pc, r = f->ret;
			if (f->node->func->pop_on_jump && f->edge) {
				site = f->edge->site;
				pop(cs, t);
			}
			call(cs, t, site, next, sp, r);
			return;
		}
	}
	resync(cs, t, next);		/* sigreturn, or code we cannot follow */
}

void callstack_sample(struct callstack *cs, pid_t tid, const uint64_t *pcs,
		      unsigned n, unsigned event, uint64_t cost)
{
	commit(cs, cs->last);
	struct thread *t = thread_of(cs, tid);
	if (!t || !n || event >= cs->n_events)
		return;
	static struct uframe u[MAX_UNWIND];
	size_t m = n < MAX_UNWIND ? n : MAX_UNWIND;
	for (size_t j = 0; j < m; j++) {
		struct uframe *f = &u[m - 1 - j];
		f->ip = pcs[j];
		f->sp = NO_SP;
		/* a return address may be just past its function's end */
		f->func = cs_func_of(cs, tid, j ? pcs[j] - 1 : pcs[j]);
	}
	/* outermost pcs in no function (past the thread's first frame) */
	size_t drop = 0;
	while (drop + 1 < m && (!u[drop].func || u[drop].func->own_name))
		drop++;
	/* T's frames kept as far as they are this sample's outermost ones
	 * (their edges then keep adding up the inclusive costs), the rest
	 * popped; the sample's own pushed, each by a call from the frame
	 * below at the return address it left there. */
	size_t keep = 0;
	while (keep < t->depth && drop + keep < m &&
	       t->frames[keep].node->func == u[drop + keep].func)
		keep++;
	while (t->depth > keep)
		pop(cs, t);
	t->skipping = false;
	for (size_t j = drop + keep; j < m; j++) {
		struct cs_func *f = u[j].func;
		if (!f)
			continue;
		if (!t->depth) {
			struct cs_node *nd = child_of(cs, t->cur, f,
						      level_for(t, f));
			if (!nd || push(cs, t, nd, NULL, NO_SP, 0) < 0)
				break;
			continue;
		}
		/* called from the frame below, whose pc is the return
		 * address: the call instruction just before it */
		call(cs, t, u[j - 1].ip - 1, f->low, NO_SP, u[j - 1].ip);
		t->skipping = false;	/* a PLT stub is no frame */
	}
	uint64_t *row = callstack_row(cs, pcs[0]);
	row[event] += cost;
	commit(cs, t);
}

void callstack_end(struct callstack *cs)
{
	commit(cs, cs->last);
	for (size_t i = 0; i < cs->n_threads; i++)
		end_thread(cs, cs->threads[i]);
}

const struct callprof *callstack_profile(struct callstack *cs)
{
	commit(cs, cs->last);
	cs_name_late_funcs(cs);
	/* Costs found with no stack are charged to the function of their pc,
	 * found now, while the target is still attached. */
	pid_t tid = cs->last ? cs->last->tid : 0;
	for (uint32_t i = 0; i < cs->n_rows; i++) {
		struct cs_row *r = &cs->rows[i];
		r->owner = r->node->func ? r->node->func : cs_func_of(cs, tid, r->pc);
	}
	for (uint32_t i = 0; i < cs->n_edges; i++) {
		struct cs_edge *e = cs->edges[i];
		e->owner = e->from->func ? e->from->func
					 : cs_func_of(cs, tid, e->site);
	}
	cs->view = (struct callprof){
		.n_events = cs->n_events, .syms = cs->syms,
		.rows = cs->rows, .n_rows = cs->n_rows,
		.edges = cs->edges, .n_edges = cs->n_edges,
		.n_funcs = cs->n_funcs,
	};
	return &cs->view;
}

void callstack_set_sync(struct callstack *cs, void (*sync)(void *ctx, pid_t tid),
			void *ctx)
{
	cs->sync = sync;
	cs->sync_ctx = ctx;
}
