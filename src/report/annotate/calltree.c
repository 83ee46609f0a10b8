/* Call graphs from Callgrind call edges, call trees built from them or from
 * folded stacks, and their text and SVG renderings.
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
 * in context gets v * cost(f->g) / incl(f); up (blame), caller c of f gets
 * v * cost(c->f) / sum of f's incoming costs.  One level is exact, deeper
 * levels assume every caller's calls cost alike.  Callgrind's
 * context-sensitive names (--separate-callers=N: "f'c1'c2") make the
 * graph itself context-sensitive, so the split is exact as deep as the
 * contexts go; frames are shown under the base name, with siblings of the
 * same base name merged.  A function already on the path (recursion) is
 * not entered again. */
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
	uint32_t *onpath;	/* per function: frames of it above */
};

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

static void add_member(struct member **v, size_t *n, size_t *cap,
		       const struct profile *p, uint32_t fn, double w)
{
	if (*n == *cap) {
		*cap = *cap ? *cap * 2 : 16;
		*v = xreallocarray(*v, *cap, sizeof(**v));
	}
	const char *name = p->fns.str[p->fn[fn].name];
	(*v)[(*n)++] = (struct member){ name, cgraph_base_len(name), fn, w };
}

/* Give NODE (frames M[0..NM), their shares of its count) its children. */
static void expand(struct gbuild *b, uint32_t node, struct member *m,
		   size_t nm)
{
	const struct cgraph *g = b->g;
	const struct profile *p = g->p;
	unsigned ne = p->n_events;
	struct member *next = NULL;
	size_t nn = 0, cap = 0;

	if (b->t->n[node].depth + 1 >= CTREE_MAX_DEPTH) {
		b->t->truncated = true;
		return;
	}
	for (size_t i = 0; i < nm; i++)
		b->onpath[m[i].fn]++;
	for (size_t i = 0; i < nm; i++) {
		uint32_t f = m[i].fn;
		const uint32_t *start = b->up ? g->in_start : g->out_start;
		const uint32_t *edge = b->up ? g->in_edge : g->out_edge;
		double d = b->up ? 0 : cost(b, g->incl + (size_t)f * ne), sum = 0;
		for (uint32_t k = start[f]; k < start[f + 1]; k++) {
			const struct prof_call *c = &p->call[edge[k]];
			if (c->caller != c->callee)
				sum += cost(b, prof_call_counts(p, edge[k]));
		}
		if (sum > d)
			d = sum;
		if (d <= 0)
			continue;
		for (uint32_t k = start[f]; k < start[f + 1]; k++) {
			const struct prof_call *c = &p->call[edge[k]];
			uint32_t h = b->up ? c->caller : c->callee;
			if (c->caller == c->callee || b->onpath[h])
				continue;
			double w = m[i].v * cost(b, prof_call_counts(p, edge[k])) / d;
			if (w > 0)
				add_member(&next, &nn, &cap, p, h, w);
		}
	}
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
		b->onpath[m[i].fn]--;
	free(next);
}

int ctree_from_graph(struct ctree *t, const struct cgraph *g, unsigned ev,
		     const char *func, double min_frac)
{
	const struct profile *p = g->p;
	unsigned ne = p->n_events;
	struct gbuild b = { t, g, ev, func != NULL, 0, NULL };
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
	b.onpath = xcalloc(p->n_fn + 1, sizeof(*b.onpath));
	if (func) {
		double tot = 0;
		for (size_t i = 0; i < nm; i++)
			tot += m[i].v;
		t->n[0].val = llround(tot);
		b.min_val = min_frac * fabs(tot);
		qsort(m, nm, sizeof(*m), cmp_member);
		expand(&b, 0, m, nm);
		free(b.onpath);
		free(m);
		return 0;
	}
	/* Top down: the root is the program; its children are the roots. */
	int64_t tot = 0;
	for (uint32_t i = 0; i < p->n_cc; i++)
		if (__builtin_add_overflow(tot, prof_val(prof_cc_counts(p, i)[ev]),
					   &tot))
			tot = INT64_MAX;
	t->n[0].val = tot;
	b.min_val = min_frac * fabs((double)tot);
	double min_val = b.min_val;
	if (nm)
		qsort(m, nm, sizeof(*m), cmp_member);
	for (size_t i = 0; i < nm;) {
		size_t j = i;
		double v = 0;
		while (j < nm && m[j].klen == m[i].klen &&
		       !memcmp(m[j].key, m[i].key, m[i].klen))
			v += m[j++].v;
		if (v >= min_val) {
			uint32_t c = child(t, 0, m[i].key, m[i].klen);
			if (c != CT_NONE) {
				t->n[c].val = llround(v);
				expand(&b, c, m + i, j - i);
			}
		}
		i = j;
	}
	free(b.onpath);
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

static bool name_is(const struct ctree_node *x, const char *s)
{
	return !strcmp(x->name, s);
}

int ctree_reverse(struct ctree *t, const struct ctree *fwd, const char *func)
{
	bool found = false;

	for (uint32_t i = 1; i < fwd->n_nodes; i++) {
		const struct ctree_node *x = &fwd->n[i];
		if (!name_is(x, func))
			continue;
		/* Only the outermost FUNC of a stack: the rest is inside. */
		uint32_t a = x->parent;
		while (a && !name_is(&fwd->n[a], func))
			a = fwd->n[a].parent;
		if (a)
			continue;
		found = true;
		t->n[0].val += x->val;
		uint32_t node = 0;
		for (a = x->parent; a; a = fwd->n[a].parent) {
			node = child(t, node, fwd->n[a].name,
				     strlen(fwd->n[a].name));
			if (node == CT_NONE)
				break;
			t->n[node].val += x->val;
		}
	}
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
static void sort_children(struct ctree *t, bool by_name)
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

	sort_children(t, false);
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

/* ---- SVG ---------------------------------------------------------------- */

/* Escape S for XML text and attributes; bytes that are not valid UTF-8 or
 * not allowed in XML 1.0 become '?'. */
static void xml_put(FILE *out, const char *s, size_t n)
{
	const unsigned char *u = (const unsigned char *)s;

	for (size_t i = 0; i < n;) {
		unsigned c = u[i];
		if (c < 0x80) {
			switch (c) {
			case '&': fputs("&amp;", out); break;
			case '<': fputs("&lt;", out); break;
			case '>': fputs("&gt;", out); break;
			case '"': fputs("&quot;", out); break;
			case '\'': fputs("&#39;", out); break;
			default:
				fputc(c < 0x20 && c != '\t' ? '?' : (int)c, out);
			}
			i++;
			continue;
		}
		unsigned len = c >= 0xf0 && c < 0xf5 ? 4 : c >= 0xe0 ? 3 :
			       c >= 0xc2 && c < 0xe0 ? 2 : 0;
		if (c >= 0xf5)
			len = 0;
		uint32_t cp = len == 2 ? c & 0x1f : len == 3 ? c & 0x0f : c & 0x07;
		bool ok = len && i + len <= n;
		for (unsigned k = 1; ok && k < len; k++) {
			if ((u[i + k] & 0xc0) != 0x80)
				ok = false;
			cp = cp << 6 | (u[i + k] & 0x3f);
		}
		if (ok && ((len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) ||
			   cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff) ||
			   cp == 0xfffe || cp == 0xffff))
			ok = false;
		if (!ok) {
			fputc('?', out);
			i++;
			continue;
		}
		fwrite(u + i, 1, len, out);
		i += len;
	}
}

static void xml_puts(FILE *out, const char *s)
{
	xml_put(out, s, strlen(s));
}

/* flamegraph.pl's "hot" palette, from a hash of the name, so a function
 * keeps its colour from one graph to the next. */
static void colour(const char *s, int *r, int *g, int *b)
{
	uint64_t h = hash_fnv1a(HASH_FNV1A_INIT, s, strlen(s));
	h ^= h >> 31;
	double v1 = (double)(h & 0xffff) / 65535.0;
	double v2 = (double)(h >> 16 & 0xffff) / 65535.0;
	double v3 = (double)(h >> 32 & 0xffff) / 65535.0;
	*r = 205 + (int)(50 * v3);
	*g = (int)(230 * v1);
	*b = (int)(55 * v2);
}

#define SVG_FRAME 16
#define SVG_TOP 50
#define SVG_BOTTOM 34
#define SVG_PAD 10
#define SVG_CHAR 7.08	/* 12px Verdana, as flamegraph.pl reckons it */

static const char svg_script[] =
"var svg = document.documentElement, W = +svg.getAttribute('data-w'),\n"
"    PAD = " "10" ", INV = svg.getAttribute('data-inv') == '1';\n"
"var frames = [], details, matched, searching = null;\n"
"function label(f, w) {\n"
"  var n = Math.floor((w - 6) / 7.08), s = f.name;\n"
"  f.t.textContent = n < 3 ? '' : s.length <= n ? s : s.substring(0, n - 2) + '..';\n"
"}\n"
"function place(f, x, w) {\n"
"  f.r.setAttribute('x', x.toFixed(2)); f.r.setAttribute('width', w.toFixed(2));\n"
"  f.t.setAttribute('x', (x + 3).toFixed(2)); label(f, w);\n"
"}\n"
"function init() {\n"
"  details = document.getElementById('details');\n"
"  matched = document.getElementById('matched');\n"
"  var gs = document.querySelectorAll('g.f');\n"
"  for (var i = 0; i < gs.length; i++) {\n"
"    var g = gs[i], r = g.querySelector('rect'), ti = g.querySelector('title').textContent;\n"
"    var f = { g: g, r: r, t: g.querySelector('text'), x: +r.getAttribute('x'),\n"
"      w: +r.getAttribute('width'), y: +r.getAttribute('y'), info: ti,\n"
"      name: ti.substring(0, ti.lastIndexOf(' (')), fill: r.getAttribute('fill') };\n"
"    g.fi = f; frames.push(f);\n"
"  }\n"
"  svg.addEventListener('mouseover', function (e) {\n"
"    var g = e.target.closest ? e.target.closest('g.f') : null;\n"
"    if (g) details.textContent = g.fi.info;\n"
"  });\n"
"  svg.addEventListener('mouseout', function (e) { details.textContent = ' '; });\n"
"  svg.addEventListener('click', function (e) {\n"
"    var g = e.target.closest ? e.target.closest('g.f') : null;\n"
"    if (g) zoom(g.fi);\n"
"  });\n"
"  document.getElementById('reset').addEventListener('click', function (e) { e.stopPropagation(); unzoom(); });\n"
"  document.getElementById('search').addEventListener('click', function (e) { e.stopPropagation(); search(); });\n"
"}\n"
"function zoom(z) {\n"
"  var e = 0.0001, s = (W - 2 * PAD) / z.w;\n"
"  for (var i = 0; i < frames.length; i++) {\n"
"    var f = frames[i], above = INV ? f.y < z.y : f.y > z.y;\n"
"    if (above && f.x <= z.x + e && f.x + f.w >= z.x + z.w - e) {\n"
"      f.g.style.display = ''; f.g.style.opacity = 0.5; place(f, PAD, W - 2 * PAD);\n"
"    } else if (!above && f.x >= z.x - e && f.x + f.w <= z.x + z.w + e) {\n"
"      f.g.style.display = ''; f.g.style.opacity = ''; place(f, PAD + (f.x - z.x) * s, f.w * s);\n"
"    } else {\n"
"      f.g.style.display = 'none';\n"
"    }\n"
"  }\n"
"  document.getElementById('reset').style.opacity = 1;\n"
"}\n"
"function unzoom() {\n"
"  for (var i = 0; i < frames.length; i++) {\n"
"    var f = frames[i];\n"
"    f.g.style.display = ''; f.g.style.opacity = ''; place(f, f.x, f.w);\n"
"  }\n"
"  document.getElementById('reset').style.opacity = 0.1;\n"
"}\n"
"function search() {\n"
"  if (searching !== null) {\n"
"    searching = null; matched.textContent = ' ';\n"
"    for (var i = 0; i < frames.length; i++) frames[i].r.setAttribute('fill', frames[i].fill);\n"
"    document.getElementById('search').textContent = 'Search';\n"
"    return;\n"
"  }\n"
"  var term = prompt('Search for (a regular expression):', '');\n"
"  if (term === null || term === '') return;\n"
"  var re; try { re = new RegExp(term); } catch (err) { alert(err); return; }\n"
"  highlight(re);\n"
"}\n"
"function highlight(re) {\n"
"  searching = re;\n"
"  var iv = [];\n"
"  for (var i = 0; i < frames.length; i++) {\n"
"    var f = frames[i];\n"
"    if (re.test(f.name)) { f.r.setAttribute('fill', 'rgb(230,0,230)'); iv.push([f.x, f.x + f.w]); }\n"
"  }\n"
"  iv.sort(function (a, b) { return a[0] - b[0]; });\n"
"  var sum = 0, end = -1;\n"
"  for (var i = 0; i < iv.length; i++) {\n"
"    var a = Math.max(iv[i][0], end);\n"
"    if (iv[i][1] > a) sum += iv[i][1] - a;\n"
"    if (iv[i][1] > end) end = iv[i][1];\n"
"  }\n"
"  matched.textContent = 'Matched: ' + (100 * sum / (W - 2 * PAD)).toFixed(1) + '%';\n"
"  document.getElementById('search').textContent = 'Clear';\n"
"}\n"
"window.addEventListener('load', init);\n";

/* x and width of every node into X, W, ON (wide enough to draw);
 * children squeezed into their parent when (by rounding or inconsistent
 * input) they add up to more.  Returns the deepest drawn depth. */
static uint32_t svg_layout(const struct ctree *t, double usable, double *x,
			   double *w, bool *on)
{
	int64_t total = t->n[0].val;
	uint32_t maxd = 0;

	x[0] = SVG_PAD;
	w[0] = total > 0 ? usable : 0;
	on[0] = total > 0;
	for (uint32_t i = 0; i < t->n_nodes; i++) {
		if (!on[i])
			continue;
		if (t->n[i].depth > maxd)
			maxd = t->n[i].depth;
		double sum = 0;
		for (uint32_t c = t->n[i].child; c != CT_NONE; c = t->n[c].next)
			if (t->n[c].val > 0)
				sum += (double)t->n[c].val;
		double scale = total > 0 ? usable / (double)total : 0;
		if (sum * scale > w[i] && sum > 0)
			scale = w[i] / sum;
		double at = x[i];
		for (uint32_t c = t->n[i].child; c != CT_NONE; c = t->n[c].next) {
			if (t->n[c].val <= 0)
				continue;
			x[c] = at;
			w[c] = (double)t->n[c].val * scale;
			at += w[c];
			on[c] = w[c] >= 0.1;
		}
	}
	return maxd;
}

/* The SVG document's head: style, script, background, title and the
 * reset, search, details and matched texts. */
static void svg_head(FILE *out, const struct svg_opts *o, unsigned width,
		     unsigned height)
{
	fprintf(out, "<?xml version=\"1.0\" standalone=\"no\"?>\n"
		"<svg version=\"1.1\" width=\"%u\" height=\"%u\" "
		"viewBox=\"0 0 %u %u\" xmlns=\"http://www.w3.org/2000/svg\" "
		"data-w=\"%u\" data-inv=\"%d\">\n", width, height, width,
		height, width, o->inverted);
	fputs("<style type=\"text/css\">\n"
	      "text { font-family: Verdana, sans-serif; font-size: 12px; "
	      "fill: rgb(0,0,0); }\n"
	      "g.f:hover rect { stroke: black; stroke-width: 0.5; cursor: pointer; }\n"
	      "#title { font-size: 17px; }\n"
	      "#search, #reset { cursor: pointer; }\n"
	      "</style>\n<script type=\"text/ecmascript\"><![CDATA[\n", out);
	fputs(svg_script, out);
	fputs("]]></script>\n", out);
	fprintf(out, "<rect x=\"0\" y=\"0\" width=\"%u\" height=\"%u\" "
		"fill=\"rgb(250,250,238)\"/>\n", width, height);
	fprintf(out, "<text id=\"title\" x=\"%u\" y=\"24\" "
		"text-anchor=\"middle\">", width / 2);
	xml_puts(out, o->title);
	fputs("</text>\n", out);
	fprintf(out, "<text id=\"reset\" x=\"%d\" y=\"24\" "
		"style=\"opacity: 0.1\">Reset Zoom</text>\n", SVG_PAD);
	fprintf(out, "<text id=\"search\" x=\"%u\" y=\"24\" "
		"text-anchor=\"end\">Search</text>\n", width - SVG_PAD);
	fprintf(out, "<text id=\"details\" x=\"%d\" y=\"%u\"> </text>\n",
		SVG_PAD, height - 12);
	fprintf(out, "<text id=\"matched\" x=\"%u\" y=\"%u\" "
		"text-anchor=\"end\"> </text>\n", width - SVG_PAD, height - 12);
}

/* One frame at X, Y, width W: its tooltip, box and the name cut to fit. */
static void svg_frame(FILE *out, const struct ctree_node *f,
		      const struct svg_opts *o, int64_t total, double x,
		      double y, double w)
{
	char cnt[32];
	int r, g, b;

	colour(f->name, &r, &g, &b);
	report_commify(cnt, f->val);
	fputs("<g class=\"f\"><title>", out);
	xml_puts(out, f->name);
	fprintf(out, " (%s %s, %.2f%%)</title>", cnt, o->event,
		total ? (double)f->val * 100.0 / (double)total : 0.0);
	fprintf(out, "<rect x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" "
		"height=\"%d.0\" fill=\"rgb(%d,%d,%d)\" rx=\"2\" "
		"ry=\"2\"/>", x, y, w, SVG_FRAME - 1, r, g, b);
	fprintf(out, "<text x=\"%.2f\" y=\"%.1f\">", x + 3,
		y + SVG_FRAME - 4.5);
	size_t fit = w > 6 ? (size_t)((w - 6) / SVG_CHAR) : 0;
	size_t len = strlen(f->name);
	if (fit >= 3 && len <= fit) {
		xml_put(out, f->name, len);
	} else if (fit >= 3) {
		xml_put(out, f->name, fit - 2);
		fputs("..", out);
	}
	fputs("</text></g>\n", out);
}

int ctree_write_svg(FILE *out, struct ctree *t, const struct svg_opts *o)
{
	unsigned width = o->width ? o->width : 1200;
	double usable = width - 2 * SVG_PAD;
	int64_t total = t->n[0].val;

	sort_children(t, true);
	double *x = xcalloc(t->n_nodes + 1, sizeof(*x));
	double *w = xcalloc(t->n_nodes + 1, sizeof(*w));
	bool *on = xcalloc(t->n_nodes + 1, sizeof(*on));
	uint32_t maxd = svg_layout(t, usable, x, w, on);
	unsigned height = SVG_TOP + (maxd + 1) * SVG_FRAME + SVG_BOTTOM;

	svg_head(out, o, width, height);
	for (uint32_t i = 0; i < t->n_nodes; i++) {
		const struct ctree_node *f = &t->n[i];
		if (!on[i] || (i && !on[f->parent])) {
			on[i] = false;
			continue;
		}
		double y = o->inverted ? SVG_TOP + f->depth * SVG_FRAME :
			   height - SVG_BOTTOM - (f->depth + 1) * SVG_FRAME;
		svg_frame(out, f, o, total, x[i], y, w[i]);
	}
	fputs("</svg>\n", out);
	free(x);
	free(w);
	free(on);
	return ferror(out) ? -1 : 0;
}
