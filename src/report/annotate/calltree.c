/* Call graphs from Callgrind call edges, call trees built from them or from
 * folded stacks, and their text rendering (flamegraph.c draws the SVG).
 *
 * Inclusive cost of a function f (an owner: fi=/fe= pieces count as f):
 * if f has callers other than itself, the sum of the inclusive costs of
 * those calls (what callgrind_annotate --inclusive=yes shows, less f's
 * calls to itself, which are already inside); otherwise (a root) its self
 * cost plus its calls to others.
 *
 * Trees from a graph: the graph only knows pairs (caller, callee), so a
 * frame's share of a function's cost is split over the next level in
 * proportion to the edges' costs of the chosen event: down, child g of f
 * in context gets v * cost(f->g) / incl(f) (the rest is f's own); up
 * (blame), caller c of f gets v * cost(c->f) / sum of f's incoming costs.
 * Calls of f to itself are left out of both.  One level is exact, deeper
 * levels assume every caller's calls cost alike.  Callgrind's
 * context-sensitive names (--separate-callers=N: "f'c1'c2") make the
 * graph itself context-sensitive, so the split is exact as deep as the
 * contexts go; frames are shown under the base name, with siblings of the
 * same base name merged into one frame (its members).
 *
 * Recursion (issue 26): value is never lost on the way.  A function
 * already on the path is not entered again as a frame; the value that
 * flows to it passes through it to its own neighbours, as if the
 * recursion were collapsed, until it reaches functions off the path
 * (flow()).  Up, "on the path" is by base name: the frame's own members
 * (f'2 calling f) and any frame below, so that recursion levels
 * ("f'2", "f'3", as Callgrind's --separate-recs and cachetrace name
 * them) and mutual recursion (a -> b -> a'2) hand the whole value to the
 * callers outside the recursion: each caller above it carries all the
 * cost that reached FUNC through it.  --blame=f counts f's outermost
 * level only: a recursion level's inclusive cost is inside it.  Down, it
 * is by function, so the tree shows f -> f'2 as the folded stacks do;
 * f'2's calls to itself are left out, and a cycle (a'2 -> b'2 -> a'2)
 * hands what its members call to the frame.
 *
 * Folded stacks are exact.  Their blame tree counts FUNC's outermost
 * frame in each stack (by base name) and passes over, going up, a frame
 * whose base name is already on the reversed path. */
#include "calltree.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "report.h"

/* ---- the call graph ----------------------------------------------------- */

static int add_val(int64_t *dst, int64_t v)
{
	return __builtin_add_overflow(*dst, prof_val(v), dst);
}

static void csr(uint32_t n, uint32_t m, const uint32_t *key,
		uint32_t **start, uint32_t **items)
{
	*start = xcalloc(n + 2, sizeof(**start));
	*items = xcalloc(m + 1, sizeof(**items));
	for (uint32_t i = 0; i < m; i++)
		(*start)[key[i] + 1]++;
	for (uint32_t i = 0; i < n; i++)
		(*start)[i + 1] += (*start)[i];
	uint32_t *fill = xcalloc(n + 1, sizeof(*fill));
	memcpy(fill, *start, n * sizeof(*fill));
	for (uint32_t i = 0; i < m; i++)
		(*items)[fill[key[i]]++] = i;
	free(fill);
}

int cgraph_build(struct cgraph *g, const struct profile *p)
{
	unsigned ne = p->n_events;
	uint32_t n = p->n_fn, m = p->n_call;
	int rc = 0;

	memset(g, 0, sizeof(*g));
	g->p = p;
	g->self = xcalloc((size_t)n * ne + 1, sizeof(*g->self));
	g->incl = xcalloc((size_t)n * ne + 1, sizeof(*g->incl));
	g->called = xcalloc(n + 1, sizeof(*g->called));
	for (uint32_t i = 0; i < p->n_cc; i++) {
		int64_t *dst = g->self + (size_t)p->fn[p->cc[i].fn].owner * ne;
		const int64_t *row = prof_cc_counts(p, i);
		for (unsigned e = 0; e < ne; e++)
			rc |= add_val(&dst[e], row[e]);
	}
	uint32_t *key = xcalloc(m + 1, sizeof(*key));
	for (uint32_t i = 0; i < m; i++)
		key[i] = p->call[i].caller;
	csr(n, m, key, &g->out_start, &g->out_edge);
	for (uint32_t i = 0; i < m; i++)
		key[i] = p->call[i].callee;
	csr(n, m, key, &g->in_start, &g->in_edge);
	free(key);

	for (uint32_t i = 0; i < m; i++) {
		const struct prof_call *c = &p->call[i];
		if (c->caller == c->callee)
			continue;
		g->called[c->callee] = true;
		int64_t *dst = g->incl + (size_t)c->callee * ne;
		const int64_t *row = prof_call_counts(p, i);
		for (unsigned e = 0; e < ne; e++)
			rc |= add_val(&dst[e], row[e]);
	}
	for (uint32_t f = 0; f < n; f++) {
		if (g->called[f] || p->fn[f].owner != f)
			continue;
		int64_t *dst = g->incl + (size_t)f * ne;
		memcpy(dst, g->self + (size_t)f * ne, ne * sizeof(*dst));
		for (uint32_t k = g->out_start[f]; k < g->out_start[f + 1]; k++) {
			const struct prof_call *c = &p->call[g->out_edge[k]];
			if (c->callee == f)
				continue;
			const int64_t *row = prof_call_counts(p, g->out_edge[k]);
			for (unsigned e = 0; e < ne; e++)
				rc |= add_val(&dst[e], row[e]);
		}
	}
	return rc ? -1 : 0;
}

void cgraph_free(struct cgraph *g)
{
	free(g->self);
	free(g->incl);
	free(g->called);
	free(g->out_start);
	free(g->out_edge);
	free(g->in_start);
	free(g->in_edge);
	memset(g, 0, sizeof(*g));
}

size_t cgraph_base_len(const char *name)
{
	const char *q = strchr(name, '\'');
	return q && q > name ? (size_t)(q - name) : strlen(name);
}

/* Is NAME a recursion level ("f'2", "f'3'caller": a call of f while f is
 * running, as Callgrind's --separate-recs and cachetrace name them)? */
static bool is_rec_level(const char *name)
{
	size_t n = cgraph_base_len(name);

	if (name[n] != '\'' || (unsigned)(name[n + 1] - '0') > 9)
		return false;
	for (n++; (unsigned)(name[n] - '0') <= 9; n++)
		;
	return !name[n] || name[n] == '\'';
}

/* ---- trees -------------------------------------------------------------- */

static uint64_t hash_child(uint32_t parent, const char *s, size_t n)
{
	return hash_u64(hash_fnv1a(HASH_FNV1A_INIT ^ parent, s, n));
}

static uint64_t node_hash(const void *ctx, uint32_t i)
{
	const struct ctree *t = ctx;
	return hash_child(t->n[i].parent, t->n[i].name, strlen(t->n[i].name));
}

static uint32_t new_node(struct ctree *t, uint32_t parent, const char *s,
			 size_t n)
{
	if (t->n_nodes == t->cap) {
		t->cap = t->cap ? t->cap * 2 : 256;
		t->n = xreallocarray(t->n, t->cap, sizeof(*t->n));
	}
	uint32_t id = t->n_nodes++;
	struct ctree_node *x = &t->n[id];
	x->name = xmalloc(n + 1);
	memcpy(x->name, s, n);
	x->name[n] = '\0';
	x->self = x->val = 0;
	x->parent = parent;
	x->child = x->last = x->next = CT_NONE;
	x->depth = parent == CT_NONE ? 0 : t->n[parent].depth + 1;
	if (parent != CT_NONE) {
		struct ctree_node *p = &t->n[parent];
		if (p->last == CT_NONE)
			p->child = id;
		else
			t->n[p->last].next = id;
		p->last = id;
	}
	return id;
}

/* The child of PARENT called S (N bytes), created if new; CT_NONE when the
 * tree is full. */
static uint32_t child(struct ctree *t, uint32_t parent, const char *s,
		      size_t n)
{
	struct hashtab_probe p;
	for (uint32_t i = hashtab_first(&t->map, hash_child(parent, s, n), &p);
	     i != HASHTAB_NONE; i = hashtab_next(&t->map, &p)) {
		const struct ctree_node *x = &t->n[i];
		if (x->parent == parent && !strncmp(x->name, s, n) &&
		    !x->name[n])
			return i;
	}
	if (t->n_nodes >= CTREE_MAX_NODES) {
		t->truncated = true;
		return CT_NONE;
	}
	uint32_t id = new_node(t, parent, s, n);
	hashtab_insert(&t->map, &p, id, node_hash, t);
	return id;
}

void ctree_init(struct ctree *t, const char *root)
{
	memset(t, 0, sizeof(*t));
	new_node(t, CT_NONE, root, strlen(root));
	/* The map holds the root too (entries are dense); no lookup has
	 * CT_NONE for a parent. */
	hashtab_add(&t->map, node_hash(t, 0), 0, node_hash, t);
}

void ctree_free(struct ctree *t)
{
	for (uint32_t i = 0; i < t->n_nodes; i++)
		free(t->n[i].name);
	free(t->n);
	hashtab_free(&t->map);
	memset(t, 0, sizeof(*t));
}

/* ---- trees from a call graph -------------------------------------------- */

struct member {
	const char *key;	/* base name */
	size_t klen;
	uint32_t fn;
	double v;
};

struct gbuild {
	struct ctree *t;
	const struct cgraph *g;
	unsigned ev;
	bool up;
	double min_val;
	/* Down: per function, frames of it above.  Up: per base name (BASE),
	 * frames of it below, this one included. */
	uint32_t *onpath;
	uint32_t *base;		/* per function, its base name's id */
	double *group;		/* per base name: expand()'s sums, else 0 */
	double *div;		/* per function, what its value is split by */
	/* flow()'s scratch: per function, its index in the flow + 1 (else
	 * 0); by index, the function, its own value and what passes through
	 * it; the edges between them by target (IN from EIN). */
	uint32_t *local, *through, *ein, *row, *unknown;
	double *own, *x, *a, *y;
	struct flow_edge {
		uint32_t from;
		double q;	/* the share of FROM's value */
	} *in;
	size_t in_cap;
};

/* flow() passes value through at most FLOW_MAX_THROUGH functions on the
 * path at a time (CPython's interpreter through Callgrind, by the default
 * threshold: up to 46, 8 on average), in at most FLOW_MAX_SWEEPS sweeps;
 * beyond them, value stays with the frame.  After FLOW_DIRECT_AFTER
 * sweeps, a system of up to FLOW_MAX_DIRECT unknowns is solved directly
 * (round a cycle, a sweep only shrinks the error by the share of value
 * that comes back: CPython's need hundreds). */
#define FLOW_MAX_THROUGH 128u
#define FLOW_MAX_SWEEPS 1000u
#define FLOW_DIRECT_AFTER 8u
#define FLOW_MAX_DIRECT 64u

static int cmp_member(const void *a, const void *b)
{
	const struct member *x = a, *y = b;
	size_t n = x->klen < y->klen ? x->klen : y->klen;
	int c = memcmp(x->key, y->key, n);
	if (!c)
		c = (x->klen > y->klen) - (x->klen < y->klen);
	if (!c)
		c = (x->fn > y->fn) - (x->fn < y->fn);
	return c;
}

static double cost(const struct gbuild *b, const int64_t *row)
{
	return (double)prof_val(row[b->ev]);
}

/* Append FN with W to V; with P, its name as the key (else the caller
 * fills it in later). */
static void add_member(struct member **v, size_t *n, size_t *cap,
		       const struct profile *p, uint32_t fn, double w)
{
	if (*n == *cap) {
		*cap = *cap ? *cap * 2 : 16;
		*v = xreallocarray(*v, *cap, sizeof(**v));
	}
	(*v)[(*n)++] = (struct member){ NULL, 0, fn, w };
	if (p) {
		const char *name = p->fns.str[p->fn[fn].name];
		(*v)[*n - 1].key = name;
		(*v)[*n - 1].klen = cgraph_base_len(name);
	}
}

/* Is F on the path: up, its base name; down, F itself. */
static bool on_path(const struct gbuild *b, uint32_t f)
{
	return b->onpath[b->up ? b->base[f] : f] > 0;
}

/* Solve flow()'s system for X (K functions, their edges by target in
 * B->in from B->ein) by Gaussian elimination, when at most
 * FLOW_MAX_DIRECT of them have edges in (the unknowns; the others' x is
 * their own value).  The matrix, I - Q^T with Q substochastic, is
 * diagonally dominant by columns: no pivoting is needed, and a pivot of
 * zero is a closed cycle (value that enters it never leaves), whose x
 * then is 0.  Returns false when there are too many unknowns. */
static bool flow_direct(struct gbuild *b, uint32_t k)
{
	const uint32_t *ein = b->ein;
	uint32_t n = 0, *row = b->row;
	double *a = b->a, *y = b->y, *x = b->x;

	for (uint32_t i = 0; i < k; i++)
		if (ein[i] < ein[i + 1]) {
			if (n == FLOW_MAX_DIRECT)
				return false;
			row[n++] = i;
		}
	memset(a, 0, (size_t)n * n * sizeof(*a));
	for (uint32_t r = 0; r < n; r++) {
		uint32_t i = row[r];
		a[(size_t)r * n + r] = 1;
		y[r] = b->own[i];
		b->unknown[i] = r + 1;
	}
	for (uint32_t r = 0; r < n; r++)
		for (uint32_t e = ein[row[r]]; e < ein[row[r] + 1]; e++) {
			uint32_t j = b->in[e].from, u = b->unknown[j];
			if (u)
				a[(size_t)r * n + u - 1] -= b->in[e].q;
			else
				y[r] += b->own[j] * b->in[e].q;
		}
	for (uint32_t j = 0; j < n; j++) {
		double piv = a[(size_t)j * n + j];
		if (!(piv > 1e-12))
			continue;
		for (uint32_t i = j + 1; i < n; i++) {
			double f = a[(size_t)i * n + j] / piv;
			if (f == 0)
				continue;
			for (uint32_t c = j; c < n; c++)
				a[(size_t)i * n + c] -= f * a[(size_t)j * n + c];
			y[i] -= f * y[j];
		}
	}
	for (uint32_t j = n; j-- > 0;) {
		double piv = a[(size_t)j * n + j], v = y[j];
		for (uint32_t c = j + 1; c < n; c++)
			v -= a[(size_t)j * n + c] * y[c];
		y[j] = piv > 1e-12 ? v / piv : 0;
	}
	for (uint32_t r = 0; r < n; r++) {
		x[row[r]] = y[r];
		b->unknown[row[r]] = 0;
	}
	return true;
}

/* The next level of the frame M[0..NM) (its members and their shares),
 * appended to NEXT.  A member's value goes to its neighbours (up, its
 * callers; down, its callees) in proportion to their edges' costs, calls
 * to itself left out; down, the part of its inclusive cost that is in no
 * call stays with the frame.  A neighbour already on the path (another
 * member of this frame, or recursion back into a frame on the path) is no
 * new frame: the value passes through it to its own neighbours, and so on
 * until it reaches functions off the path, or a function with none (a
 * root, up: it stays with the frame).  What passes through each function
 * solves a linear system (round a cycle, a geometric series): Gauss-Seidel
 * sweeps to 1e-13 of the frame's value, or flow_direct(). */
static void flow(struct gbuild *b, const struct member *m, size_t nm,
		 struct member **next, size_t *nn, size_t *cap)
{
	const struct cgraph *g = b->g;
	const struct profile *p = g->p;
	const uint32_t *start = b->up ? g->in_start : g->out_start;
	const uint32_t *edge = b->up ? g->in_edge : g->out_edge;
	uint32_t *fn = b->through, *ein = b->ein, k = 0;
	double *x = b->x, *own = b->own, total = 0;

	/* The functions in the flow: the members, then the functions on the
	 * path that value reaches from them. */
	for (size_t i = 0; i < nm; i++) {
		uint32_t f = m[i].fn;
		if (!b->local[f]) {
			fn[k] = f;
			own[k] = 0;
			b->local[f] = ++k;
		}
		own[b->local[f] - 1] += m[i].v;
		total += fabs(m[i].v);
	}
	for (uint32_t i = 0, k0 = k; i < k; i++)
		for (uint32_t e = start[fn[i]]; e < start[fn[i] + 1]; e++) {
			const struct prof_call *c = &p->call[edge[e]];
			uint32_t h = b->up ? c->caller : c->callee;
			if (c->caller != c->callee && !b->local[h] &&
			    on_path(b, h) && k - k0 < FLOW_MAX_THROUGH) {
				fn[k] = h;
				own[k] = 0;
				b->local[h] = ++k;
			}
		}

	/* x[i] = own[i] + the sum over j of x[j] * cost(j -> i) / div[j],
	 * over the edges between functions of the flow, kept by target i
	 * in b->in (counted, then filled from ein[i + 1]). */
	memset(ein, 0, (k + 2) * sizeof(*ein));
	for (uint32_t i = 0; i < k; i++)
		for (uint32_t e = start[fn[i]];
		     b->div[fn[i]] > 0 && e < start[fn[i] + 1]; e++) {
			const struct prof_call *c = &p->call[edge[e]];
			uint32_t h = b->up ? c->caller : c->callee;
			if (c->caller != c->callee && b->local[h])
				ein[b->local[h] + 1]++;
		}
	for (uint32_t i = 0; i < k; i++)
		ein[i + 2] += ein[i + 1];
	if (ein[k + 1] > b->in_cap) {
		b->in_cap = ein[k + 1];
		b->in = xreallocarray(b->in, b->in_cap, sizeof(*b->in));
	}
	for (uint32_t i = 0; i < k; i++) {
		double d = b->div[fn[i]];
		for (uint32_t e = start[fn[i]]; d > 0 && e < start[fn[i] + 1];
		     e++) {
			const struct prof_call *c = &p->call[edge[e]];
			uint32_t h = b->up ? c->caller : c->callee;
			if (c->caller != c->callee && b->local[h])
				b->in[ein[b->local[h]]++] = (struct flow_edge){
					i, cost(b, prof_call_counts(p, edge[e])) / d };
		}
	}
	/* Filled: i's edges are now from ein[i] to ein[i + 1].  Without a
	 * cycle, a few sweeps settle it (the order is mostly the flow's). */
	memcpy(x, own, k * sizeof(*x));
	for (uint32_t sweep = 0; ein[k] && sweep < FLOW_MAX_SWEEPS; sweep++) {
		double delta = 0;
		for (uint32_t i = 0; i < k; i++) {
			if (ein[i] == ein[i + 1])
				continue;
			double v = own[i];
			for (uint32_t e = ein[i]; e < ein[i + 1]; e++)
				v += x[b->in[e].from] * b->in[e].q;
			delta += fabs(v - x[i]);
			x[i] = v;
		}
		if (!(delta > total * 1e-13))
			break;
		if (sweep == FLOW_DIRECT_AFTER && flow_direct(b, k))
			break;
	}
	/* What each passes on to the functions off the path. */
	for (uint32_t i = 0; i < k; i++) {
		double d = b->div[fn[i]];
		if (d <= 0 || !(x[i] > 0))
			continue;
		for (uint32_t e = start[fn[i]]; e < start[fn[i] + 1]; e++) {
			const struct prof_call *c = &p->call[edge[e]];
			uint32_t h = b->up ? c->caller : c->callee;
			if (c->caller == c->callee || on_path(b, h))
				continue;
			double w = x[i] * cost(b, prof_call_counts(p, edge[e])) / d;
			if (w > 0)
				add_member(next, nn, cap, NULL, h, w);
		}
	}
	for (uint32_t i = 0; i < k; i++)
		b->local[fn[i]] = 0;
}

/* Give NODE (frames M[0..NM), their shares of its count) its children. */
static void expand(struct gbuild *b, uint32_t node, struct member *m,
		   size_t nm)
{
	const struct profile *p = b->g->p;
	struct member *next = NULL;
	size_t nn = 0, cap = 0;

	if (b->t->n[node].depth + 1 >= CTREE_MAX_DEPTH) {
		b->t->truncated = true;
		return;
	}
	for (size_t i = 0; i < nm; i++)
		b->onpath[b->up ? b->base[m[i].fn] : m[i].fn]++;
	flow(b, m, nm, &next, &nn, &cap);
	/* Leave out the groups (by base name) under the threshold before
	 * sorting: most are, in a big graph. */
	for (size_t i = 0; i < nn; i++)
		b->group[b->base[next[i].fn]] += next[i].v;
	size_t kept = 0;
	for (size_t i = 0; i < nn; i++) {
		double tot = b->group[b->base[next[i].fn]];
		if (tot >= b->min_val && tot > 0) {
			const char *name = p->fns.str[p->fn[next[i].fn].name];
			next[kept] = next[i];
			next[kept].key = name;
			next[kept++].klen = cgraph_base_len(name);
		}
	}
	for (size_t i = 0; i < kept; i++)
		b->group[b->base[next[i].fn]] = 0;
	for (size_t i = kept; i < nn; i++)
		b->group[b->base[next[i].fn]] = 0;
	nn = kept;
	if (nn)
		qsort(next, nn, sizeof(*next), cmp_member);
	for (size_t i = 0; i < nn;) {
		size_t j = i, o = i;
		double tot = 0;
		/* Merge the group's entries per function. */
		for (; j < nn && next[j].klen == next[i].klen &&
		       !memcmp(next[j].key, next[i].key, next[i].klen); j++) {
			tot += next[j].v;
			if (j > i && next[j].fn == next[o].fn)
				next[o].v += next[j].v;
			else if (j > i)
				next[++o] = next[j];
		}
		if (tot >= b->min_val && tot > 0) {
			uint32_t c = child(b->t, node, next[i].key,
					   next[i].klen);
			if (c != CT_NONE) {
				b->t->n[c].val = llround(tot);
				expand(b, c, next + i, o + 1 - i);
			}
		}
		i = j;
	}
	for (size_t i = 0; i < nm; i++)
		b->onpath[b->up ? b->base[m[i].fn] : m[i].fn]--;
	free(next);
}

/* The blame tree of the functions M[0..NM) (FUNC's), into B->t. */
static void blame_from_graph(struct gbuild *b, struct member *m, size_t nm,
			     double min_frac)
{
	size_t kept = 0;
	double tot = 0;

	/* A recursion level's cost is inside its outer level's. */
	for (size_t i = 0; i < nm; i++)
		if (!is_rec_level(m[i].key))
			m[kept++] = m[i];
	if (kept)
		nm = kept;
	for (size_t i = 0; i < nm; i++)
		tot += m[i].v;
	b->t->n[0].val = llround(tot);
	b->min_val = min_frac * fabs(tot);
	qsort(m, nm, sizeof(*m), cmp_member);
	expand(b, 0, m, nm);
}

/* The top-down tree of the roots M[0..NM), into B->t. */
static void tree_from_graph(struct gbuild *b, struct member *m, size_t nm,
			    double min_frac)
{
	const struct profile *p = b->g->p;
	struct ctree *t = b->t;

	/* The root is the program; its children are the roots. */
	int64_t tot = 0;
	for (uint32_t i = 0; i < p->n_cc; i++)
		if (__builtin_add_overflow(tot,
					   prof_val(prof_cc_counts(p, i)[b->ev]),
					   &tot))
			tot = INT64_MAX;
	t->n[0].val = tot;
	b->min_val = min_frac * fabs((double)tot);
	if (nm)
		qsort(m, nm, sizeof(*m), cmp_member);
	for (size_t i = 0; i < nm;) {
		size_t j = i;
		double v = 0;
		while (j < nm && m[j].klen == m[i].klen &&
		       !memcmp(m[j].key, m[i].key, m[i].klen))
			v += m[j++].v;
		if (v >= b->min_val) {
			uint32_t c = child(t, 0, m[i].key, m[i].klen);
			if (c != CT_NONE) {
				t->n[c].val = llround(v);
				expand(b, c, m + i, j - i);
			}
		}
		i = j;
	}
}

int ctree_from_graph(struct ctree *t, const struct cgraph *g, unsigned ev,
		     const char *func, double min_frac)
{
	const struct profile *p = g->p;
	unsigned ne = p->n_events;
	struct gbuild b = { .t = t, .g = g, .ev = ev, .up = func != NULL };
	struct member *m = NULL;
	size_t nm = 0, cap = 0;
	bool full = func && strchr(func, '\'');

	for (uint32_t f = 0; f < p->n_fn; f++) {
		if (p->fn[f].owner != f)
			continue;
		const char *name = p->fns.str[p->fn[f].name];
		double v = cost(&b, g->incl + (size_t)f * ne);
		if (func) {
			size_t n = full ? strlen(name) : cgraph_base_len(name);
			if (strlen(func) != n || strncmp(name, func, n))
				continue;
		} else if (g->called[f] || v <= 0) {
			continue;
		}
		add_member(&m, &nm, &cap, p, f, v);
	}
	if (func && !nm) {
		free(m);
		return -1;
	}
	/* Up, a function's value is split over its callers by their calls'
	 * costs; down, over its callees by its inclusive cost (the rest is
	 * its own), or their calls' costs if more. */
	b.div = xcalloc(p->n_fn + 1, sizeof(*b.div));
	for (uint32_t i = 0; i < p->n_call; i++) {
		const struct prof_call *c = &p->call[i];
		if (c->caller != c->callee)
			b.div[b.up ? c->callee : c->caller] +=
				cost(&b, prof_call_counts(p, i));
	}
	for (uint32_t f = 0; f < p->n_fn && !b.up; f++)
		b.div[f] = fmax(b.div[f], cost(&b, g->incl + (size_t)f * ne));
	struct strintern bases = { 0 };
	b.base = xcalloc(p->n_fn + 1, sizeof(*b.base));
	for (uint32_t f = 0; f < p->n_fn; f++) {
		const char *name = p->fns.str[p->fn[f].name];
		b.base[f] = strintern_id(&bases, name, cgraph_base_len(name),
					 NULL);
	}
	b.group = xcalloc((size_t)bases.n + 1, sizeof(*b.group));
	b.onpath = xcalloc((size_t)(b.up ? bases.n : p->n_fn) + 1,
			   sizeof(*b.onpath));
	strintern_free(&bases);
	b.local = xcalloc(p->n_fn + 1, sizeof(*b.local));
	b.through = xcalloc(p->n_fn + 1, sizeof(*b.through));
	b.ein = xcalloc(p->n_fn + 2, sizeof(*b.ein));
	b.own = xcalloc(p->n_fn + 1, sizeof(*b.own));
	b.x = xcalloc(p->n_fn + 1, sizeof(*b.x));
	b.row = xcalloc(p->n_fn + 1, sizeof(*b.row));
	b.unknown = xcalloc(p->n_fn + 1, sizeof(*b.unknown));
	b.a = xcalloc(FLOW_MAX_DIRECT * FLOW_MAX_DIRECT, sizeof(*b.a));
	b.y = xcalloc(FLOW_MAX_DIRECT, sizeof(*b.y));
	if (func)
		blame_from_graph(&b, m, nm, min_frac);
	else
		tree_from_graph(&b, m, nm, min_frac);
	free(b.onpath);
	free(b.base);
	free(b.group);
	free(b.div);
	free(b.local);
	free(b.through);
	free(b.ein);
	free(b.own);
	free(b.x);
	free(b.row);
	free(b.unknown);
	free(b.a);
	free(b.y);
	free(b.in);
	free(m);
	return 0;
}

/* ---- folded stacks ------------------------------------------------------ */

bool ctree_is_folded(const char *data, size_t len)
{
	static const char *const keys[] = {
		"desc:", "cmd:", "events:", "version:", "creator:", "pid:",
		"thread:", "part:", "positions:", "event:", "#",
	};
	const char *end = data + len;

	while (data < end && (*data == '\n' || *data == ' ' || *data == '\t'))
		data++;
	for (size_t i = 0; i < sizeof(keys) / sizeof(*keys); i++) {
		size_t n = strlen(keys[i]);
		if ((size_t)(end - data) >= n && !memcmp(data, keys[i], n))
			return false;
	}
	return data < end;
}

static int fold_fail(struct prof_error *err, const char *name,
		     unsigned long long line, const char *fmt, ...) CT_FMT(4, 5);
static int fold_fail(struct prof_error *err, const char *name,
		     unsigned long long line, const char *fmt, ...)
{
	va_list ap;

	err->name = name;
	err->line = line;
	va_start(ap, fmt);
	vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
	va_end(ap);
	return -1;
}

static int fold_line(struct ctree *t, const char *s, const char *end,
		     const char *name, unsigned long long ln,
		     struct prof_error *err)
{
	const char *e = end;

	while (e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r'))
		e--;
	if (e == s)
		return 0;
	if (memchr(s, '\0', e - s))
		return fold_fail(err, name, ln, "NUL byte in a stack");
	const char *c = e;
	while (c > s && c[-1] != ' ' && c[-1] != '\t')
		c--;
	if (c == s)
		return fold_fail(err, name, ln, "expected 'frame;frame;... "
				 "COUNT', found no count");
	uint64_t v = 0;
	for (const char *q = c; q < e; q++) {
		if ((unsigned)(*q - '0') > 9)
			return fold_fail(err, name, ln, "bad count '%.*s'",
					 (int)(e - c > 40 ? 40 : e - c), c);
		if (__builtin_mul_overflow(v, 10, &v) ||
		    __builtin_add_overflow(v, *q - '0', &v) || v > INT64_MAX)
			return fold_fail(err, name, ln, "count '%.*s' is too "
					 "large", (int)(e - c > 40 ? 40 : e - c),
					 c);
	}
	const char *se = c;
	while (se > s && (se[-1] == ' ' || se[-1] == '\t'))
		se--;
	if (se == s)
		return fold_fail(err, name, ln, "empty stack");
	int64_t sum;
	if (__builtin_add_overflow(t->n[0].self, (int64_t)v, &sum))
		return fold_fail(err, name, ln, "counts add up to more than "
				 "%lld", (long long)INT64_MAX);
	uint32_t node = 0;
	for (const char *f = s; f <= se;) {
		const char *fe = memchr(f, ';', se - f);
		if (!fe)
			fe = se;
		if (fe == f)
			return fold_fail(err, name, ln, "empty frame in the "
					 "stack");
		if (t->n[node].depth + 1 >= CTREE_MAX_DEPTH)
			return fold_fail(err, name, ln, "stack deeper than %u "
					 "frames", CTREE_MAX_DEPTH - 1);
		node = child(t, node, f, fe - f);
		if (node == CT_NONE)
			return fold_fail(err, name, ln, "more than %u distinct "
					 "frames", CTREE_MAX_NODES);
		f = fe + 1;
	}
	t->n[node].self += (int64_t)v;
	t->n[0].self = sum;
	return 0;
}

int ctree_read_folded(struct ctree *t, const char *data, size_t len,
		      const char *name, struct prof_error *err)
{
	unsigned long long ln = 0;
	/* The root's self is the running total until ctree_finish_folded. */
	while (len) {
		const char *nl = memchr(data, '\n', len);
		ln++;
		if (!nl)
			return fold_fail(err, name, ln, "incomplete last line "
					 "(no newline at end of file)");
		if ((size_t)(nl - data) > PROF_MAX_LINE)
			return fold_fail(err, name, ln, "line longer than %u "
					 "bytes", PROF_MAX_LINE);
		if (fold_line(t, data, nl, name, ln, err))
			return -1;
		len -= nl + 1 - data;
		data = nl + 1;
	}
	return 0;
}

void ctree_finish_folded(struct ctree *t)
{
	t->n[0].self = 0;
	/* Children always come after their parents. */
	for (uint32_t i = t->n_nodes; i-- > 0;) {
		t->n[i].val += t->n[i].self;
		if (i)
			t->n[t->n[i].parent].val += t->n[i].val;
	}
}

/* Is frame NAME FUNC?  By base name, or by the whole name when FUNC has a
 * context ("f'2"). */
static bool frame_is(const char *name, const char *func, size_t flen,
		     bool full)
{
	size_t n = full ? strlen(name) : cgraph_base_len(name);
	return n == flen && !memcmp(name, func, n);
}

int ctree_reverse(struct ctree *t, const struct ctree *fwd, const char *func)
{
	struct strintern bases = { 0 };
	bool full = strchr(func, '\'') != NULL, found = false;
	size_t flen = strlen(func);
	uint32_t *base = xcalloc(fwd->n_nodes + 1, sizeof(*base));
	uint32_t *path = xcalloc(CTREE_MAX_DEPTH + 1, sizeof(*path));

	strintern_id(&bases, func, cgraph_base_len(func), NULL);
	for (uint32_t i = 1; i < fwd->n_nodes; i++) {
		const char *name = fwd->n[i].name;
		base[i] = strintern_id(&bases, name, cgraph_base_len(name), NULL);
	}
	for (uint32_t i = 1; i < fwd->n_nodes; i++) {
		const struct ctree_node *x = &fwd->n[i];
		if (!frame_is(x->name, func, flen, full))
			continue;
		/* Only the outermost FUNC of a stack: the rest is inside. */
		uint32_t a = x->parent;
		while (a && !frame_is(fwd->n[a].name, func, flen, full))
			a = fwd->n[a].parent;
		if (a)
			continue;
		found = true;
		t->n[0].val += x->val;
		/* Up the stack, a frame whose base name is already on the
		 * reversed path (recursion) is passed over. */
		uint32_t node = 0, depth = 0;
		path[depth++] = 0;	/* FUNC's base name, id 0 */
		for (a = x->parent; a; a = fwd->n[a].parent) {
			uint32_t k = 0;
			while (k < depth && path[k] != base[a])
				k++;
			if (k < depth)
				continue;
			path[depth++] = base[a];
			node = child(t, node, fwd->n[a].name,
				     cgraph_base_len(fwd->n[a].name));
			if (node == CT_NONE)
				break;
			t->n[node].val += x->val;
		}
	}
	strintern_free(&bases);
	free(base);
	free(path);
	return found ? 0 : -1;
}

/* ---- text --------------------------------------------------------------- */

static const struct ctree *sort_tree;
static bool sort_by_name;

static int cmp_child(const void *a, const void *b)
{
	const struct ctree_node *x = &sort_tree->n[*(const uint32_t *)a];
	const struct ctree_node *y = &sort_tree->n[*(const uint32_t *)b];
	if (!sort_by_name && x->val != y->val)
		return x->val > y->val ? -1 : 1;
	return strcmp(x->name, y->name);
}

/* Reorder every node's children: by count, or by name. */
void ctree_sort_children(struct ctree *t, bool by_name)
{
	uint32_t *buf = xcalloc(t->n_nodes + 1, sizeof(*buf));

	sort_tree = t;
	sort_by_name = by_name;
	for (uint32_t i = 0; i < t->n_nodes; i++) {
		uint32_t n = 0;
		for (uint32_t c = t->n[i].child; c != CT_NONE; c = t->n[c].next)
			buf[n++] = c;
		if (n < 2)
			continue;
		qsort(buf, n, sizeof(*buf), cmp_child);
		t->n[i].child = buf[0];
		for (uint32_t k = 0; k + 1 < n; k++)
			t->n[buf[k]].next = buf[k + 1];
		t->n[buf[n - 1]].next = CT_NONE;
		t->n[i].last = buf[n - 1];
	}
	free(buf);
}

static void pct(char *buf, int64_t v, int64_t total)
{
	if (!total)
		strcpy(buf, "(n/a)");
	else
		sprintf(buf, "(%.1f%%)", (double)v * 100.0 / (double)total);
}

static bool shown(const struct ctree *t, uint32_t i, double min)
{
	return i == 0 || fabs((double)t->n[i].val) >= min;
}

/* Depth-first order of the shown nodes. */
static uint32_t *preorder(const struct ctree *t, double min, uint32_t *n)
{
	uint32_t *out = xcalloc(t->n_nodes + 1, sizeof(*out));
	uint32_t *stack = xcalloc(t->n_nodes + 1, sizeof(*stack));
	uint32_t sp = 0;

	*n = 0;
	stack[sp++] = 0;
	while (sp) {
		uint32_t i = stack[--sp];
		out[(*n)++] = i;
		/* Push children in reverse so the first pops first. */
		uint32_t k = sp;
		for (uint32_t c = t->n[i].child; c != CT_NONE; c = t->n[c].next)
			if (shown(t, c, min))
				stack[sp++] = c;
		for (uint32_t a = k, b = sp - 1; sp && a < b; a++, b--) {
			uint32_t x = stack[a];
			stack[a] = stack[b];
			stack[b] = x;
		}
	}
	free(stack);
	return out;
}

void ctree_print(FILE *out, struct ctree *t, const char *title,
		 const char *event, double threshold, bool percent)
{
	static const char fancy[] = "----------------------------------------"
				    "----------------------------------------";
	int64_t total = t->n[0].val;
	double min = threshold / 100.0 * fabs((double)total);
	char cnt[32], pc[32];
	int cw = strlen(event), pw = 0;
	uint32_t n;

	ctree_sort_children(t, false);
	uint32_t *ord = preorder(t, min, &n);
	for (uint32_t k = 0; k < n; k++) {
		int l = report_commify(cnt, t->n[ord[k]].val);
		pct(pc, t->n[ord[k]].val, total);
		if (percent && (int)strlen(pc) > pw)
			pw = strlen(pc);
		if (l > cw)
			cw = l;
	}
	fprintf(out, "%s\n-- %s\n%s\n", fancy, title, fancy);
	fprintf(out, "%s", event);
	for (int l = strlen(event); l < cw + (percent ? pw + 1 : 0); l++)
		fputc('_', out);
	fputs("\n\n", out);
	for (uint32_t k = 0; k < n; k++) {
		const struct ctree_node *x = &t->n[ord[k]];
		report_commify(cnt, x->val);
		fprintf(out, "%*s", cw, cnt);
		if (percent) {
			pct(pc, x->val, total);
			fprintf(out, " %*s", pw, pc);
		}
		fprintf(out, "  %*s%s\n", (int)(2 * x->depth), "", x->name);
	}
	if (t->truncated)
		fprintf(out, "(the tree was cut at %u frames or %u levels)\n",
			CTREE_MAX_NODES, CTREE_MAX_DEPTH);
	fputc('\n', out);
	free(ord);
}
