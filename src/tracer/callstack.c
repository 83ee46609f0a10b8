/* Call stacks while stepping: a shadow stack, a calling-context tree and
 * per-(context, pc) costs, written as a Callgrind profile and as folded
 * stacks.
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
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include "config.h"

#define MAX_UNWIND 512
#define REC_LEVELS 2		/* Callgrind's --separate-recs default */
#define NO_SP UINT64_MAX	/* a frame whose slot is unknown */

/* A function: the symbol containing a pc, found once per distinct pc. */
struct func {
	uint64_t low, high;	/* [low, high); high == low + 1 when unknown */
	const char *name;
	char *own_name;		/* "0x..." for pcs without a symbol */
	char *rec_name;		/* "name'2", made when first written */
	bool plt;		/* a PLT stub: skipped */
	bool pop_on_jump;	/* _dl_runtime_resolve*: popped by its jump */
};

/* A calling context. */
struct node {
	struct node *parent;
	struct func *func;	/* NULL for the root */
	unsigned level;		/* 1, or 2 for a recursive activation */
	unsigned depth;		/* 0 for the root */
};

/* A call edge, with Callgrind's inclusive cost. */
struct edge {
	struct node *from, *to;
	uint64_t site;		/* the call instruction's pc */
	uint64_t calls;
	uint64_t *incl;		/* n_events */
};

/* One active function on the shadow stack. */
struct frame {
	struct node *node;
	struct edge *edge;	/* NULL when found by unwinding */
	uint64_t sp;		/* its return-address slot, NO_SP unknown */
	uint64_t ret;		/* the return address expected, 0 unknown */
};

/* Open addressing, keys of three words (never all zero), values any
 * pointer.  Grows at half full. */
struct hkey {
	uint64_t a, b, c;
};

struct hslot {
	struct hkey k;
	void *v;
};

struct htab {
	struct hslot *slots;
	size_t mask, used;
};

/* One stepped thread's shadow stack. */
struct thread {
	pid_t tid;
	struct frame *frames;
	uint64_t *snaps;	/* n_events per frame: totals at its call */
	size_t depth, cap;
	struct node *cur;	/* the top frame's node, or the root */
	uint64_t *total;	/* running totals of this thread's events */
	uint64_t expect_pc;	/* where its last step went; 0 unknown */
	/* Inside a skipped PLT stub: its costs go to SKIP_SITE. */
	bool skipping;
	uint64_t skip_site, skip_sp, skip_ret;
	/* (func, 0, 4) -> 1 + its activations on this stack (per thread, as
	 * Callgrind's recursion levels) */
	struct htab active;
};

struct callstack {
	unsigned n_events;
	struct symbols *syms;

	struct htab funcs;	/* (pc, 0, 1) -> func containing pc */
	struct htab nodes;	/* (parent, func, level) -> node */
	struct htab edges;	/* (from, site, target | level << 56) -> edge */
	struct htab rows;	/* (node, pc, 2) -> its n_events self costs */
	struct node root;

	/* Everything we allocate, freed at callstack_free. */
	void **allocs;
	size_t n_allocs, cap_allocs;
	uint64_t *pool;		/* counters handed out in chunks */
	size_t pool_left;

	struct thread **threads;
	size_t n_threads;
	struct thread *last;	/* the thread of the last step */

	/* The row handed out by callstack_row, added to the stepping
	 * thread's context at its callstack_step (callstack_row does not
	 * say which thread steps). */
	uint64_t *pending;
	uint64_t pending_pc;
	bool has_pending;

	bool refreshed;		/* sym_refresh done in this window */
	unw_addr_space_t as;
	unsigned long unwinds;	/* for tests and debugging */
};

static uint64_t hash3(const struct hkey *k)
{
	uint64_t h = k->a * 0x9e3779b97f4a7c15ull;
	h ^= (k->b + (h << 6) + (h >> 2)) * 0xc2b2ae3d27d4eb4full;
	h ^= (k->c + (h << 6) + (h >> 2)) * 0x165667b19e3779f9ull;
	return h ^ (h >> 29);
}

static bool key_eq(const struct hkey *x, const struct hkey *y)
{
	return x->a == y->a && x->b == y->b && x->c == y->c;
}

static struct hslot *ht_find(struct htab *t, const struct hkey *k)
{
	for (size_t i = hash3(k) & t->mask;; i = (i + 1) & t->mask) {
		struct hslot *s = &t->slots[i];
		if (!s->v || key_eq(&s->k, k))
			return s;
	}
}

static int ht_init(struct htab *t, size_t n)
{
	t->slots = calloc(n, sizeof(*t->slots));
	t->mask = n - 1;
	t->used = 0;
	return t->slots ? 0 : -1;
}

/* Store V under K (K absent); returns 0 or -1 when out of memory. */
static int ht_insert(struct htab *t, const struct hkey *k, void *v)
{
	if ((t->used + 1) * 2 > t->mask + 1) {
		struct htab n;
		if (ht_init(&n, (t->mask + 1) * 2) < 0)
			return -1;
		for (size_t i = 0; i <= t->mask; i++)
			if (t->slots[i].v)
				*ht_find(&n, &t->slots[i].k) = t->slots[i];
		n.used = t->used;
		free(t->slots);
		*t = n;
	}
	struct hslot *s = ht_find(t, k);
	s->k = *k;
	s->v = v;
	t->used++;
	return 0;
}

static void *ht_get(struct htab *t, const struct hkey *k)
{
	return ht_find(t, k)->v;
}

/* ---- allocation (rare: new functions, contexts, edges, rows) ---- */

static void *keep(struct callstack *cs, void *p)
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

static void *zalloc(struct callstack *cs, size_t size)
{
	return keep(cs, calloc(1, size));
}

/* N_EVENTS zeroed counters that never move. */
static uint64_t *counters(struct callstack *cs)
{
	if (cs->pool_left < cs->n_events) {
		size_t n = (size_t)cs->n_events * 1024;
		cs->pool = keep(cs, calloc(n, sizeof(uint64_t)));
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

/* ---- functions ---- */

static bool looks_like_plt(pid_t tid, uint64_t pc)
{
	unsigned char b[8];
	struct iovec local = { b, sizeof(b) }, remote = { (void *)pc, sizeof(b) };

	if (process_vm_readv(tid, &local, 1, &remote, 1, 0) != sizeof(b))
		return false;
	size_t i = 0;
	if (b[0] == 0xf3 && b[1] == 0x0f && b[2] == 0x1e && b[3] == 0xfa)
		i = 4;				/* endbr64 (.plt.sec) */
	if (b[i] == 0xf2)
		i++;				/* bnd */
	return b[i] == 0xff && (b[i + 1] == 0x25 || b[i + 1] == 0xa3);
}

static struct func *func_of(struct callstack *cs, pid_t tid, uint64_t pc)
{
	struct hkey k = { pc, 0, 1 };
	struct func *f = ht_get(&cs->funcs, &k);
	if (f)
		return f;

	uint64_t low, high;
	const char *name = NULL;
	int found = sym_function_range(cs->syms, pc, &low, &high, &name);
	if (found < 0 && !cs->refreshed) {
		/* Libraries loaded since the last look (the mappings are
		 * read at the exec stop): once per window. */
		char err[128];
		cs->refreshed = true;
		if (sym_refresh(cs->syms, err, sizeof(err)) == 0)
			found = sym_function_range(cs->syms, pc, &low, &high,
						   &name);
	}
	if (found == 0 && high > low) {
		/* Share one record per function. */
		struct hkey kl = { low, 0, 1 };
		f = ht_get(&cs->funcs, &kl);
		if (!f) {
			f = zalloc(cs, sizeof(*f));
			if (!f)
				return NULL;
			f->low = low;
			f->high = high;
			f->name = name;
			f->pop_on_jump = !strncmp(name, "_dl_runtime_resolve",
						  19);
			if (ht_insert(&cs->funcs, &kl, f) < 0)
				return NULL;
		}
	} else {
		f = zalloc(cs, sizeof(*f));
		if (!f || !(f->own_name = keep(cs, malloc(24))))
			return NULL;
		snprintf(f->own_name, 24, "0x%016" PRIx64, pc);
		f->name = f->own_name;
		f->low = pc;
		f->high = pc + 1;
		f->plt = looks_like_plt(tid, pc);
	}
	if (f->low != pc && ht_insert(&cs->funcs, &k, f) < 0)
		return NULL;
	if (f->low == pc && !ht_get(&cs->funcs, &k) &&
	    ht_insert(&cs->funcs, &k, f) < 0)
		return NULL;
	return f;
}

/* ---- contexts ---- */

static struct node *child_of(struct callstack *cs, struct node *parent,
			     struct func *f, unsigned level)
{
	/* Recursion folding: back to the ancestor with the same key. */
	for (struct node *a = parent; a && a->func; a = a->parent)
		if (a->func == f && a->level == level)
			return a;
	struct hkey k = { (uintptr_t)parent, (uintptr_t)f, level };
	struct node *n = ht_get(&cs->nodes, &k);
	if (n)
		return n;
	n = zalloc(cs, sizeof(*n));
	if (!n)
		return NULL;
	n->parent = parent;
	n->func = f;
	n->level = level;
	n->depth = parent->depth + 1;
	if (ht_insert(&cs->nodes, &k, n) < 0)
		return NULL;
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
	struct thread *t = zalloc(cs, sizeof(*t));
	if (!a || !t || !(t->total = counters(cs))) {
		if (a)
			cs->threads = a;
		return NULL;
	}
	cs->threads = a;
	if (ht_init(&t->active, 256) < 0)
		return NULL;
	a[cs->n_threads++] = t;
	t->tid = tid;
	t->cur = &cs->root;
	return cs->last = t;
}

/* The recursion level of a new activation of F in T. */
static unsigned level_for(struct thread *t, const struct func *f)
{
	struct hkey k = { (uintptr_t)f, 0, 4 };
	uintptr_t v = (uintptr_t)ht_get(&t->active, &k);
	unsigned active = v ? (unsigned)v - 1 : 0;
	return active + 1 < REC_LEVELS ? active + 1 : REC_LEVELS;
}

static void count_active(struct thread *t, const struct func *f, int d)
{
	struct hkey k = { (uintptr_t)f, 0, 4 };
	struct hslot *s = ht_find(&t->active, &k);
	if (s->v)
		s->v = (void *)((uintptr_t)s->v + d);
	else if (d > 0)
		(void)ht_insert(&t->active, &k, (void *)(uintptr_t)2);
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
	struct node *n = t->cur;
	if (n == &cs->root) {
		/* No stack known: the function alone is the context. */
		struct func *f = func_of(cs, t->tid, at);
		if (!f || !(n = child_of(cs, n, f, 1)))
			return;
	}
	struct hkey k = { (uintptr_t)n, at, 2 };
	struct hslot *s = ht_find(&cs->rows, &k);
	uint64_t *cost = s->v;
	if (!cost) {
		if (!(cost = counters(cs)) || ht_insert(&cs->rows, &k, cost) < 0)
			return;		/* out of memory: lost */
	}
	for (unsigned i = 0; i < cs->n_events; i++) {
		cost[i] += cs->pending[i];
		t->total[i] += cs->pending[i];
	}
}

static int push(struct callstack *cs, struct thread *t, struct node *n,
		struct edge *e, uint64_t sp, uint64_t ret)
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
	struct func *f = func_of(cs, t->tid, target);
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
	struct hkey k = { (uintptr_t)t->cur, site,
			  target | (uint64_t)level << 56 };
	struct edge *e = ht_get(&cs->edges, &k);
	if (!e) {
		struct node *to = child_of(cs, t->cur, f, level);
		e = zalloc(cs, sizeof(*e));
		if (!to || !e || !(e->incl = counters(cs)))
			return;
		e->from = t->cur;
		e->to = to;
		e->site = site;
		if (ht_insert(&cs->edges, &k, e) < 0)
			return;
	}
	e->calls++;
	push(cs, t, e->to, e, sp, ret);
}

/* ---- unwinding ---- */

struct uframe {
	uint64_t ip, sp;	/* sp: its return-address slot */
	struct func *func;
};

/* Unwind T; fills U outermost first, returns the number of frames. */
static size_t unwind(struct callstack *cs, struct thread *t, uint64_t rip,
		     struct uframe *u, size_t max)
{
	uint64_t ip[MAX_UNWIND], sp[MAX_UNWIND];
	bool sig[MAX_UNWIND];
	size_t n = 0;

	cs->unwinds++;
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
		f->func = func_of(cs, t->tid, exact ? ip[j] : ip[j] - 1);
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

/* Make T's shadow stack agree with an unwind: keep the frames that
 * match from the outermost, pop the rest, push the new ones. */
static void resync(struct callstack *cs, struct thread *t, uint64_t rip)
{
	static struct uframe u[MAX_UNWIND];
	size_t n = unwind(cs, t, rip, u, MAX_UNWIND), m = 0, j = 0;

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
		struct node *nd = child_of(cs, t->cur, u[j].func,
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
	if (!cs->pending || !cs->as ||
	    ht_init(&cs->funcs, 1024) < 0 || ht_init(&cs->nodes, 1024) < 0 ||
	    ht_init(&cs->edges, 1024) < 0 || ht_init(&cs->rows, 4096) < 0) {
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
		free(cs->threads[i]->active.slots);
	}
	free(cs->threads);
	for (size_t i = 0; i < cs->n_allocs; i++)
		free(cs->allocs[i]);
	free(cs->allocs);
	free(cs->funcs.slots);
	free(cs->nodes.slots);
	free(cs->edges.slots);
	free(cs->rows.slots);
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
		struct func *tf = func_of(cs, tid, next);
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
		struct func *tf = func_of(cs, tid, next);
		if (tf && tf->own_name)
			return;
	}
	if (f && (insn->branch == BR_JMP || insn->branch == BR_JMP_IND ||
		  insn->branch == BR_COND)) {
		struct func *tf = func_of(cs, tid, next);
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

void callstack_end(struct callstack *cs)
{
	commit(cs, cs->last);
	for (size_t i = 0; i < cs->n_threads; i++)
		end_thread(cs, cs->threads[i]);
}

/* ---- writing ---- */

/* Names of Callgrind's compression: one id per distinct string. */
struct names {
	char **s;
	size_t n, cap;
	struct htab ids;	/* (hash, n, 3) -> id: the n-th string of
				 * that hash */
};

static uint64_t str_hash(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ull;
	while (*s)
		h = (h ^ (unsigned char)*s++) * 0x100000001b3ull;
	return h | 1;
}

/* The id of S (1-based), and whether it is new; 0 when out of memory. */
static size_t name_id(struct names *nm, const char *s, bool *is_new)
{
	struct hkey k = { str_hash(s), 0, 3 };
	for (;;) {
		void *v = ht_get(&nm->ids, &k);
		if (!v)
			break;
		size_t id = (uintptr_t)v;
		if (!strcmp(nm->s[id - 1], s)) {
			*is_new = false;
			return id;
		}
		k.b++;		/* same hash, another string */
	}
	if (nm->n == nm->cap) {
		size_t c = nm->cap ? nm->cap * 2 : 64;
		char **a = realloc(nm->s, c * sizeof(*a));
		if (!a)
			return 0;
		nm->s = a;
		nm->cap = c;
	}
	char *d = strdup(s);
	if (!d)
		return 0;
	nm->s[nm->n++] = d;
	if (ht_insert(&nm->ids, &k, (void *)(uintptr_t)nm->n) < 0)
		return 0;
	*is_new = true;
	return nm->n;
}

static void names_free(struct names *nm)
{
	for (size_t i = 0; i < nm->n; i++)
		free(nm->s[i]);
	free(nm->s);
	free(nm->ids.slots);
}

static void put_name(FILE *out, struct names *nm, const char *key,
		     const char *s)
{
	bool is_new = false;
	size_t id = name_id(nm, s, &is_new);
	if (!id)
		fprintf(out, "%s=%s\n", key, s);
	else if (is_new)
		fprintf(out, "%s=(%zu) %s\n", key, id, s);
	else
		fprintf(out, "%s=(%zu)\n", key, id);
}

/* What the writer sorts: a self cost line or a call line of a function
 * (FN at LEVEL). */
struct rec {
	const char *fn;		/* display name, "name'2" for level 2 */
	const struct func *func;
	const char *file;
	unsigned line;
	bool is_call;
	const char *cfn, *cfile;	/* the callee, for calls */
	unsigned cline;
	uint64_t calls;
	const uint64_t *cost;
};

/* "name", or Callgrind's "name'2" for a recursive level. */
static const char *fn_name(struct callstack *cs, struct func *f,
			   unsigned level)
{
	if (level < 2)
		return f->name;
	if (!f->rec_name) {
		char b[512];
		snprintf(b, sizeof(b), "%s'%u", f->name, level);
		f->rec_name = keep(cs, strdup(b));
	}
	return f->rec_name ? f->rec_name : f->name;
}

static int rec_cmp(const void *pa, const void *pb)
{
	const struct rec *a = pa, *b = pb;
	int c = strcmp(a->fn, b->fn);
	if (c)
		return c;
	if (a->func != b->func)
		return a->func < b->func ? -1 : 1;
	if ((c = strcmp(a->file, b->file)))
		return c;
	if (a->line != b->line)
		return a->line < b->line ? -1 : 1;
	if (a->is_call != b->is_call)
		return a->is_call ? 1 : -1;
	if (!a->is_call)
		return 0;
	if ((c = strcmp(a->cfn, b->cfn)))
		return c;
	return strcmp(a->cfile, b->cfile);
}

static void put_costs(FILE *out, unsigned line, const uint64_t *c,
		      unsigned n)
{
	unsigned last = 1;
	for (unsigned i = 0; i < n; i++)
		if (c[i])
			last = i + 1;
	fprintf(out, "%u", line);
	for (unsigned i = 0; i < last && i < n; i++)
		fprintf(out, " %" PRIu64, c[i]);
	fputc('\n', out);
}

struct named_node {
	struct func *func;
	unsigned level;
};

/* The function a record of node N at PC belongs to. */
static struct named_node owner(struct callstack *cs, const struct node *n,
			       uint64_t pc)
{
	struct named_node r = { n->func, n->level };
	if (!r.func) {
		r.func = func_of(cs, cs->last ? cs->last->tid : 0, pc);
		r.level = 1;
	}
	return r;
}

int callstack_write_callgrind(struct callstack *cs, FILE *out,
			      const char *const *desc, const char *cmd,
			      const char *const *events)
{
	unsigned ne = cs->n_events;
	size_t n_rec = 0, cap = cs->rows.used + cs->edges.used + 1;
	struct rec *recs = calloc(cap, sizeof(*recs));
	uint64_t *sum = calloc(ne ? ne : 1, sizeof(uint64_t));
	uint64_t *acc = calloc(ne ? ne : 1, sizeof(uint64_t));
	struct names files = { 0 }, fns = { 0 };
	int ret = -1;

	commit(cs, cs->last);
	if (!recs || !sum || !acc || ht_init(&files.ids, 1024) < 0 ||
	    ht_init(&fns.ids, 1024) < 0)
		goto out;

	for (size_t i = 0; i <= cs->rows.mask; i++) {
		const struct hslot *r = &cs->rows.slots[i];
		if (!r->v)
			continue;
		const struct node *node = (const struct node *)(uintptr_t)r->k.a;
		uint64_t *cost = r->v;
		struct named_node o = owner(cs, node, r->k.b);
		if (!o.func)
			continue;
		struct src_loc loc;
		sym_lookup(cs->syms, r->k.b, &loc);
		struct rec *x = &recs[n_rec++];
		x->func = o.func;
		x->fn = fn_name(cs, o.func, o.level);
		x->file = loc.file;
		x->line = loc.line;
		x->cost = cost;
		for (unsigned e = 0; e < ne; e++)
			sum[e] += cost[e];
	}
	for (size_t i = 0; i <= cs->edges.mask; i++) {
		struct edge *ed = cs->edges.slots[i].v;
		if (!ed)
			continue;
		struct named_node o = owner(cs, ed->from, ed->site);
		if (!o.func)
			continue;
		struct src_loc loc, cloc;
		sym_lookup(cs->syms, ed->site, &loc);
		sym_lookup(cs->syms, ed->to->func->low, &cloc);
		struct rec *x = &recs[n_rec++];
		x->func = o.func;
		x->fn = fn_name(cs, o.func, o.level);
		x->file = loc.file;
		x->line = loc.line;
		x->is_call = true;
		x->cfn = fn_name(cs, ed->to->func, ed->to->level);
		x->cfile = cloc.file;
		x->cline = cloc.line;
		x->calls = ed->calls;
		x->cost = ed->incl;
	}
	qsort(recs, n_rec, sizeof(*recs), rec_cmp);

	fprintf(out, "# callgrind format\nversion: 1\ncreator: cachetrace-"
		CT_VERSION "\n");
	for (size_t i = 0; desc && desc[i]; i++)
		fprintf(out, "desc: %s\n", desc[i]);
	fprintf(out, "cmd: %s\npositions: line\nevents:", cmd ? cmd : "");
	for (unsigned e = 0; e < ne; e++)
		fprintf(out, " %s", events[e]);
	fprintf(out, "\nsummary:");
	for (unsigned e = 0; e < ne; e++)
		fprintf(out, " %" PRIu64, sum[e]);
	fprintf(out, "\n");

	const struct func *cur_func = NULL;
	const char *cur_fn = NULL, *cur_file = NULL;
	for (size_t i = 0; i < n_rec;) {
		struct rec *x = &recs[i];
		if (x->func != cur_func || !cur_fn || strcmp(x->fn, cur_fn)) {
			struct src_loc home;
			sym_lookup(cs->syms, x->func->low, &home);
			fputc('\n', out);
			put_name(out, &files, "fl", home.file);
			put_name(out, &fns, "fn", x->fn);
			cur_func = x->func;
			cur_fn = x->fn;
			cur_file = home.file;
		}
		if (strcmp(x->file, cur_file)) {
			put_name(out, &files, "fi", x->file);
			cur_file = x->file;
		}
		/* Merge the records of one position (and callee). */
		memset(acc, 0, ne * sizeof(uint64_t));
		uint64_t calls = 0;
		size_t j = i;
		while (j < n_rec && !rec_cmp(&recs[j], x)) {
			for (unsigned e = 0; e < ne; e++)
				acc[e] += recs[j].cost[e];
			calls += recs[j].calls;
			j++;
		}
		if (x->is_call) {
			put_name(out, &files, "cfi", x->cfile);
			put_name(out, &fns, "cfn", x->cfn);
			fprintf(out, "calls=%" PRIu64 " %u\n", calls, x->cline);
			put_costs(out, x->line, acc, ne);
		} else {
			bool any = false;
			for (unsigned e = 0; e < ne; e++)
				any |= acc[e] != 0;
			if (any)
				put_costs(out, x->line, acc, ne);
		}
		i = j;
	}
	fprintf(out, "\ntotals:");
	for (unsigned e = 0; e < ne; e++)
		fprintf(out, " %" PRIu64, sum[e]);
	fprintf(out, "\n");
	ret = ferror(out) ? -1 : 0;
	if (ret < 0 && !errno)
		errno = EIO;
out:
	if (ret < 0 && !errno)
		errno = ENOMEM;
	names_free(&files);
	names_free(&fns);
	free(recs);
	free(sum);
	free(acc);
	return ret;
}

/* ---- folded stacks ---- */

struct stack_line {
	char *s;
	uint64_t count;
};

static int line_cmp(const void *pa, const void *pb)
{
	const struct stack_line *a = pa, *b = pb;
	return strcmp(a->s, b->s);
}

/* "outer;...;inner" of N into a malloc'd string. */
static char *stack_string(struct callstack *cs, const struct node *n)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);
	if (!m)
		return NULL;
	const struct node *chain[1024];
	size_t d = 0;
	for (const struct node *a = n; a && a->func && d < 1024; a = a->parent)
		chain[d++] = a;
	while (d--) {
		const char *name = fn_name(cs, chain[d]->func, chain[d]->level);
		for (const char *p = name; *p; p++)
			fputc(*p == ';' ? ':' : *p, m);
		if (d)
			fputc(';', m);
	}
	if (fclose(m) != 0) {
		free(buf);
		return NULL;
	}
	return buf;
}

int callstack_write_folded(struct callstack *cs, FILE *out, unsigned event)
{
	struct stack_line *lines = NULL;
	size_t n = 0;
	int ret = -1;

	commit(cs, cs->last);
	if (event >= cs->n_events) {
		errno = EINVAL;
		return -1;
	}
	lines = calloc(cs->rows.used + 1, sizeof(*lines));
	if (!lines)
		return -1;
	for (size_t i = 0; i <= cs->rows.mask; i++) {
		const struct hslot *r = &cs->rows.slots[i];
		const uint64_t *cost = r->v;
		const struct node *node = (const struct node *)(uintptr_t)r->k.a;
		if (!cost || !cost[event] || !node->func)
			continue;
		lines[n].s = stack_string(cs, node);
		if (!lines[n].s)
			goto out;
		lines[n++].count = cost[event];
	}
	qsort(lines, n, sizeof(*lines), line_cmp);
	for (size_t i = 0; i < n;) {
		uint64_t c = 0;
		size_t j = i;
		for (; j < n && !strcmp(lines[j].s, lines[i].s); j++)
			c += lines[j].count;
		fprintf(out, "%s %" PRIu64 "\n", lines[i].s, c);
		i = j;
	}
	ret = ferror(out) ? -1 : 0;
	if (ret < 0)
		errno = EIO;
out:
	for (size_t i = 0; i < n; i++)
		free(lines[i].s);
	free(lines);
	return ret;
}
