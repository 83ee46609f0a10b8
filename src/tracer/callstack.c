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

#define MAX_UNWIND 512
#define REC_LEVELS 2		/* Callgrind's --separate-recs default */
#define NO_SP UINT64_MAX	/* a frame whose slot is unknown */

/* One active function on the shadow stack. */
struct frame {
	struct cs_node *node;
	struct cs_edge *edge;	/* NULL when found by unwinding */
	uint64_t sp;		/* its return-address slot, NO_SP unknown */
	uint64_t ret;		/* the return address expected, 0 unknown */
};

/* A pc's function, as the funcs map holds it. */
struct pc_func {
	uint64_t pc;
	struct cs_func *func;
};

/* A function active on a thread's stack, and how many times. */
struct activation {
	const struct cs_func *func;
	unsigned count;
};

/* One stepped thread's shadow stack. */
struct thread {
	pid_t tid;
	struct frame *frames;
	uint64_t *snaps;	/* n_events per frame: totals at its call */
	size_t depth, cap;
	struct cs_node *cur;	/* the top frame's node, or the root */
	uint64_t *total;	/* running totals of this thread's events */
	uint64_t expect_pc;	/* where its last step went; 0 unknown */
	/* Inside a skipped PLT stub: its costs go to SKIP_SITE. */
	bool skipping;
	uint64_t skip_site, skip_sp, skip_ret;
	/* The activations of each function on this stack (per thread, as
	 * Callgrind's recursion levels), found through ACTIVE_MAP by func. */
	struct activation *active;
	uint32_t n_active, cap_active;
	struct hashtab active_map;
};

struct callstack {
	unsigned n_events;
	struct symbols *syms;

	/* Each table: entries in first-seen order, found through its map
	 * (hashtab.h).  Records that others point to are allocated one by
	 * one and never move; the arrays hold pointers to them. */
	struct pc_func *pc_funcs;	/* pc -> the function containing it */
	uint32_t n_pc_funcs, cap_pc_funcs;
	struct hashtab pc_func_map;
	uint32_t n_funcs;		/* cs_func ids handed out */
	struct cs_node **nodes;		/* (parent, func, level) -> node */
	uint32_t n_nodes, cap_nodes;
	struct hashtab node_map;
	struct cs_edge **edges;		/* (from, site, target, level) */
	uint32_t n_edges, cap_edges;
	struct hashtab edge_map;
	struct cs_row *rows;		/* (node, pc) -> self costs */
	uint32_t n_rows, cap_rows;
	struct hashtab row_map;
	struct cs_node root;
	struct callprof view;		/* handed out by callstack_profile */

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
	/* Pcs in no module to pass over before the next sym_refresh for
	 * one, and the gap, doubled by each refresh that finds none. */
	uint32_t unmapped_skip, unmapped_gap;
	unw_addr_space_t as;
	unsigned long unwinds;	/* for tests and debugging */
};

/* Append one element to a growing array (rare: new records). */
#define APPEND(arr, n, cap) \
	(((n) == (cap) ? (void)((cap) = (cap) ? (cap) * 2 : 256, \
		(arr) = xreallocarray((arr), (cap), sizeof(*(arr)))) : (void)0), \
	 &(arr)[(n)++])

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

static struct cs_func *func_at(const struct callstack *cs, uint64_t pc)
{
	struct hashtab_probe p;
	for (uint32_t i = hashtab_first(&cs->pc_func_map, hash_u64(pc), &p);
	     i != HASHTAB_NONE; i = hashtab_next(&cs->pc_func_map, &p))
		if (cs->pc_funcs[i].pc == pc)
			return cs->pc_funcs[i].func;
	return NULL;
}

static uint64_t pc_func_hash(const void *ctx, uint32_t i)
{
	const struct callstack *cs = ctx;
	return hash_u64(cs->pc_funcs[i].pc);
}

/* PC (not in the map yet) is in F. */
static void func_at_add(struct callstack *cs, uint64_t pc, struct cs_func *f)
{
	*APPEND(cs->pc_funcs, cs->n_pc_funcs, cs->cap_pc_funcs) =
		(struct pc_func){ pc, f };
	hashtab_add(&cs->pc_func_map, hash_u64(pc), cs->n_pc_funcs - 1,
		    pc_func_hash, cs);
}

static struct cs_func *new_func(struct callstack *cs)
{
	struct cs_func *f = zalloc(cs, sizeof(*f));
	if (f)
		f->id = cs->n_funcs++;
	return f;
}

/* Whether to re-read the mappings for PC, in no known function: once a
 * window (the mappings are read at the exec stop), and whenever PC is in
 * no known module (a library mapped since: in a whole run libc and all
 * the dynamic loader maps after the exec), backing off while that finds
 * nothing (code in no file: a JIT's). */
static bool want_refresh(struct callstack *cs, uint64_t pc)
{
	if (!sym_module_name(cs->syms, pc)) {
		if (!cs->unmapped_skip)
			return true;
		cs->unmapped_skip--;
	}
	return !cs->refreshed;
}

static void refreshed(struct callstack *cs, uint64_t pc)
{
	cs->refreshed = true;
	if (sym_module_name(cs->syms, pc)) {
		cs->unmapped_gap = 0;
	} else {
		cs->unmapped_gap = cs->unmapped_gap ? cs->unmapped_gap * 2 : 1;
		cs->unmapped_skip = cs->unmapped_gap;
	}
}

/* The name of the function at LOW as the flat profile has it (display
 * version, "(below main)"), so that the profiles of one run agree. */
static const char *flat_name(struct callstack *cs, uint64_t low)
{
	struct src_loc loc;
	sym_lookup(cs->syms, low, &loc);
	return loc.fn;
}

static struct cs_func *func_of(struct callstack *cs, pid_t tid, uint64_t pc)
{
	struct cs_func *f = func_at(cs, pc);
	if (f)
		return f;

	uint64_t low, high;
	const char *name = NULL;
	int found = sym_function_range(cs->syms, pc, &low, &high, NULL);
	if (found < 0 && want_refresh(cs, pc)) {
		char err[128];
		if (sym_refresh(cs->syms, err, sizeof(err)) == 0)
			found = sym_function_range(cs->syms, pc, &low, &high,
						   NULL);
		refreshed(cs, pc);
	}
	if (found == 0 && high > low) {
		name = flat_name(cs, low);
		/* Share one record per function. */
		f = func_at(cs, low);
		if (!f) {
			f = new_func(cs);
			if (!f)
				return NULL;
			f->low = low;
			f->high = high;
			f->name = name;
			f->pop_on_jump = !strncmp(name, "_dl_runtime_resolve",
						  19);
			if (low != pc)
				func_at_add(cs, low, f);
		}
	} else {
		f = new_func(cs);
		if (!f || !(f->own_name = keep(cs, malloc(24))))
			return NULL;
		snprintf(f->own_name, 24, "0x%016" PRIx64, pc);
		f->name = f->own_name;
		f->low = pc;
		f->high = pc + 1;
		f->plt = looks_like_plt(tid, pc);
	}
	func_at_add(cs, pc, f);
	return f;
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
	struct cs_node *n = zalloc(cs, sizeof(*n));
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
	struct thread *t = zalloc(cs, sizeof(*t));
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
		struct cs_func *f = func_of(cs, t->tid, at);
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
	struct cs_func *f = func_of(cs, t->tid, target);
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
		e = zalloc(cs, sizeof(*e));
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
		struct cs_func *tf = func_of(cs, tid, next);
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
		struct cs_func *tf = func_of(cs, tid, next);
		if (tf && tf->own_name)
			return;
	}
	if (f && (insn->branch == BR_JMP || insn->branch == BR_JMP_IND ||
		  insn->branch == BR_COND)) {
		struct cs_func *tf = func_of(cs, tid, next);
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

/* Name F, a function that was a pc in no known symbol when first seen,
 * if a symbol covers its pc now.  A function found twice (as a bare pc and
 * by its symbol in a later window, or at two of its pcs) becomes one: F
 * takes the id, name and range of the record at the symbol's address, so
 * the writers merge them. */
static void name_late_func(struct callstack *cs, struct cs_func *f)
{
	uint64_t low, high;
	if (!f->own_name || f->plt ||
	    sym_function_range(cs->syms, f->low, &low, &high, NULL) < 0 ||
	    high <= low)
		return;
	const char *name = flat_name(cs, low);
	f->own_name = NULL;
	struct cs_func *first = func_at(cs, low);
	if (first && first->own_name)
		name_late_func(cs, first);	/* the bare pc is the entry */
	if (!first) {
		func_at_add(cs, low, f);
	} else if (first != f && !first->own_name) {
		f->id = first->id;
		name = first->name;
	}
	f->low = low;
	f->high = high;
	f->name = name;
	f->pop_on_jump = !strncmp(name, "_dl_runtime_resolve", 19);
}

/* Name every function still a bare pc: a library mapped after the
 * window's one sym_refresh (in a whole run, libc and all that the dynamic
 * loader maps after the exec) is known now, as the flat profile, which
 * resolves its pcs at the end, knows it.  Idempotent. */
static void name_late_funcs(struct callstack *cs)
{
	for (uint32_t i = 0; i < cs->n_pc_funcs; i++)
		if (cs->pc_funcs[i].pc == cs->pc_funcs[i].func->low)
			name_late_func(cs, cs->pc_funcs[i].func);
}

const struct callprof *callstack_profile(struct callstack *cs)
{
	commit(cs, cs->last);
	name_late_funcs(cs);
	/* Costs found with no stack are charged to the function of their pc,
	 * found now, while the target is still attached. */
	pid_t tid = cs->last ? cs->last->tid : 0;
	for (uint32_t i = 0; i < cs->n_rows; i++) {
		struct cs_row *r = &cs->rows[i];
		r->owner = r->node->func ? r->node->func : func_of(cs, tid, r->pc);
	}
	for (uint32_t i = 0; i < cs->n_edges; i++) {
		struct cs_edge *e = cs->edges[i];
		e->owner = e->from->func ? e->from->func
					 : func_of(cs, tid, e->site);
	}
	cs->view = (struct callprof){
		.n_events = cs->n_events, .syms = cs->syms,
		.rows = cs->rows, .n_rows = cs->n_rows,
		.edges = cs->edges, .n_edges = cs->n_edges,
		.n_funcs = cs->n_funcs,
	};
	return &cs->view;
}
