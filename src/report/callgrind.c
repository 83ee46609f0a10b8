/* Writing a call-stack profile: Callgrind's format and folded stacks.
 *
 * Records (a self-cost line or a call line of a function) are sorted by
 * object, function display name, function, file, line, then calls after
 * self costs and by callee, and records of one position merged; so the
 * output does not depend on the order the collector found them in.  Names
 * are compressed as Callgrind does: "(id) name" the first time, "(id)"
 * after, one id space for ob=/cob=, one for fl=/fi=/cfi=, one for
 * fn=/cfn=.  As Callgrind, ob= (the object file of the functions that
 * follow, so that KCachegrind can group by library) is written when it
 * changes, and cob= before a call into another object than the caller's
 * (a reader takes the caller's object otherwise). */
#include "callgrind.h"

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "cgout.h"
#include "config.h"
#include "error.h"
#include "hashtab.h"

struct writer {
	const struct callprof *cp;
	char **rec_names;	/* func id -> "name'2", made when first used */
};

static void writer_init(struct writer *w, const struct callprof *cp)
{
	w->cp = cp;
	w->rec_names = xcalloc(cp->n_funcs ? cp->n_funcs : 1,
			       sizeof(*w->rec_names));
}

static void writer_free(struct writer *w)
{
	for (size_t i = 0; i < w->cp->n_funcs; i++)
		free(w->rec_names[i]);
	free(w->rec_names);
}

/* "name", or Callgrind's "name'2" for a recursive level. */
static const char *fn_name(struct writer *w, const struct cs_func *f,
			   unsigned level)
{
	if (level < 2)
		return f->name;
	if (!w->rec_names[f->id]) {
		char b[512];
		snprintf(b, sizeof(b), "%s'%u", f->name, level);
		w->rec_names[f->id] = xstrdup(b);
	}
	return w->rec_names[f->id];
}

/* The Callgrind id of S (1-based) in NAMES, "(id) S" when new. */
static void put_name(FILE *out, struct strintern *names, const char *key,
		     const char *s)
{
	bool is_new;
	uint32_t id = strintern_id(names, s, strlen(s), &is_new) + 1;

	if (is_new) {
		fprintf(out, "%s=(%" PRIu32 ") ", key, id);
		cgout_put_text(out, s);	/* a newline never starts a line */
		fputc('\n', out);
	} else
		fprintf(out, "%s=(%" PRIu32 ")\n", key, id);
}

/* What the writer sorts: a self cost line or a call line of a function
 * (FN at LEVEL). */
struct rec {
	const char *obj;	/* the object file of FUNC, "???" if none */
	const char *fn;		/* display name, "name'2" for level 2 */
	const struct cs_func *func;
	const char *file;
	unsigned line;
	bool is_call;
	const char *cobj, *cfn, *cfile;	/* the callee, for calls */
	unsigned cline;
	uint64_t calls;
	const uint64_t *cost;
};

static int rec_cmp(const void *pa, const void *pb)
{
	const struct rec *a = pa, *b = pb;
	int c = strcmp(a->obj, b->obj);
	if (c || (c = strcmp(a->fn, b->fn)))
		return c;
	/* Functions of one name (static ones): in the order found.  Records
	 * of one function share its id (include/callprof.h). */
	if (a->func->id != b->func->id)
		return a->func->id < b->func->id ? -1 : 1;
	if ((c = strcmp(a->file, b->file)))
		return c;
	if (a->line != b->line)
		return a->line < b->line ? -1 : 1;
	if (a->is_call != b->is_call)
		return a->is_call ? 1 : -1;
	if (!a->is_call)
		return 0;
	if ((c = strcmp(a->cfn, b->cfn)) || (c = strcmp(a->cobj, b->cobj)))
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

/* The object file of F, as Callgrind names it ("???" when none). */
static const char *obj_name(const struct callprof *cp, const struct cs_func *f)
{
	const char *obj = sym_module_name(cp->syms, f->low);
	return obj ? obj : "???";
}

/* A record of OWNER (at NODE's level) at PC. */
static struct rec *add_rec(struct writer *w, struct rec *x,
			   const struct cs_func *owner,
			   const struct cs_node *node, uint64_t pc,
			   const uint64_t *cost)
{
	struct src_loc loc;

	sym_lookup(w->cp->syms, pc, &loc);
	x->func = owner;
	x->obj = obj_name(w->cp, owner);
	x->fn = fn_name(w, owner, cs_owner_level(node));
	x->file = loc.file;
	x->line = loc.line;
	x->cost = cost;
	return x;
}

static void put_totals(FILE *out, const char *key, const uint64_t *sum,
		       unsigned ne)
{
	fprintf(out, "%s:", key);
	for (unsigned e = 0; e < ne; e++)
		fprintf(out, " %" PRIu64, sum[e]);
	fprintf(out, "\n");
}

int callgrind_write(const struct callprof *cp, FILE *out,
		    const char *const *desc, const char *cmd,
		    const char *const *events)
{
	unsigned ne = cp->n_events;
	size_t n_rec = 0;
	struct rec *recs = xcalloc(cp->n_rows + cp->n_edges + 1,
				   sizeof(*recs));
	uint64_t *sum = xcalloc(ne ? ne : 1, sizeof(uint64_t));
	uint64_t *acc = xcalloc(ne ? ne : 1, sizeof(uint64_t));
	struct strintern objs = { 0 }, files = { 0 }, fns = { 0 };
	struct writer w;

	writer_init(&w, cp);
	for (size_t i = 0; i < cp->n_rows; i++) {
		const struct cs_row *r = &cp->rows[i];
		if (!r->owner)
			continue;
		add_rec(&w, &recs[n_rec++], r->owner, r->node, r->pc, r->cost);
		for (unsigned e = 0; e < ne; e++)
			sum[e] += r->cost[e];
	}
	for (size_t i = 0; i < cp->n_edges; i++) {
		const struct cs_edge *ed = cp->edges[i];
		if (!ed->owner)
			continue;
		struct rec *x = add_rec(&w, &recs[n_rec++], ed->owner,
					ed->from, ed->site, ed->incl);
		struct src_loc cloc;
		sym_lookup(cp->syms, ed->to->func->low, &cloc);
		x->is_call = true;
		x->cobj = obj_name(cp, ed->to->func);
		x->cfn = fn_name(&w, ed->to->func, ed->to->level);
		x->cfile = cloc.file;
		x->cline = cloc.line;
		x->calls = ed->calls;
	}
	qsort(recs, n_rec, sizeof(*recs), rec_cmp);

	fprintf(out, "# callgrind format\nversion: 1\ncreator: cachetrace-"
		CT_VERSION "\n");
	for (size_t i = 0; desc && desc[i]; i++) {
		fputs("desc: ", out);
		cgout_put_text(out, desc[i]);
		fputc('\n', out);
	}
	fputs("cmd: ", out);
	cgout_put_text(out, cmd ? cmd : "");
	fputs("\npositions: line\nevents:", out);
	for (unsigned e = 0; e < ne; e++)
		fprintf(out, " %s", events[e]);
	fprintf(out, "\n");
	put_totals(out, "summary", sum, ne);

	const struct cs_func *cur_func = NULL;
	const char *cur_obj = NULL, *cur_fn = NULL, *cur_file = NULL;
	for (size_t i = 0; i < n_rec;) {
		struct rec *x = &recs[i];
		if (!cur_func || x->func->id != cur_func->id ||
		    strcmp(x->fn, cur_fn)) {
			struct src_loc home;
			sym_lookup(cp->syms, x->func->low, &home);
			fputc('\n', out);
			if (!cur_obj || strcmp(x->obj, cur_obj)) {
				put_name(out, &objs, "ob", x->obj);
				cur_obj = x->obj;
			}
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
			if (strcmp(x->cobj, cur_obj))
				put_name(out, &objs, "cob", x->cobj);
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
	fputc('\n', out);
	put_totals(out, "totals", sum, ne);
	int ret = ferror(out) ? -1 : 0;
	if (ret < 0 && !errno)
		errno = EIO;
	strintern_free(&objs);
	strintern_free(&files);
	strintern_free(&fns);
	writer_free(&w);
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
static char *stack_string(struct writer *w, const struct cs_node *n)
{
	struct strbuf b = { 0 };
	const struct cs_node *chain[1024];
	size_t d = 0;

	for (const struct cs_node *a = n; a && a->func && d < 1024;
	     a = a->parent)
		chain[d++] = a;
	strbuf_add(&b, "", 0);
	while (d--) {
		const char *name = fn_name(w, chain[d]->func, chain[d]->level);
		size_t start = b.len;
		strbuf_add(&b, name, strlen(name));
		/* ';' separates frames: a name keeps it as ':'. */
		for (char *p = b.s + start; *p; p++)
			if (*p == ';')
				*p = ':';
		if (d)
			strbuf_add(&b, ";", 1);
	}
	return b.s;
}

int callgrind_write_folded(const struct callprof *cp, FILE *out,
			   unsigned event)
{
	if (event >= cp->n_events) {
		errno = EINVAL;
		return -1;
	}
	struct stack_line *lines = xcalloc(cp->n_rows + 1, sizeof(*lines));
	size_t n = 0;
	struct writer w;

	writer_init(&w, cp);
	for (size_t i = 0; i < cp->n_rows; i++) {
		const struct cs_row *r = &cp->rows[i];
		if (!r->cost[event] || !r->node->func)
			continue;
		lines[n].s = stack_string(&w, r->node);
		lines[n++].count = r->cost[event];
	}
	qsort(lines, n, sizeof(*lines), line_cmp);
	for (size_t i = 0; i < n;) {
		uint64_t c = 0;
		size_t j = i;
		for (; j < n && !strcmp(lines[j].s, lines[i].s); j++)
			c += lines[j].count;
		cgout_put_text(out, lines[i].s);
		fprintf(out, " %" PRIu64 "\n", c);
		i = j;
	}
	int ret = ferror(out) ? -1 : 0;
	if (ret < 0)
		errno = EIO;
	for (size_t i = 0; i < n; i++)
		free(lines[i].s);
	free(lines);
	writer_free(&w);
	return ret;
}
