/* The report, laid out as cg_annotate 3.21+ lays it out.
 *
 * Columns: each shown event is one column, the count right-aligned and,
 * with --percent, a percentage of the program total after it.  Column
 * widths are the widest entry of the table (the event name, padded with
 * '_', heads it), so each table is as narrow as it can be.  An absent event
 * (the input had `.` or nothing for it) prints as `.`, a zero count as 0;
 * neither gets a percentage.  In the two function summaries the outer
 * entries ("< file:" and "> function:") also carry the cumulative
 * percentage of the entries above them. */
#include "report.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "calltree.h"
#include "error.h"
#include "report_private.h"
#include "sampled.h"

/* A row's badness, (DLmr + DLmw)^2 / Ir, into BUF: "." without Ir; a
 * whole number (commified, rounded down) from 100 up; below that three
 * significant digits ("12.3", "0.0417", "2.5e-05"), so that the many rows
 * below 1, which cache misses rarely reach per instruction, still rank. */
void rep_badness(const struct report_opts *o, const int64_t *row, char *buf)
{
	int64_t ir = prof_val(row[o->badness_ir]);
	__int128 d = (__int128)prof_val(row[o->badness_dlmr]) +
		     prof_val(row[o->badness_dlmw]);
	if (ir <= 0) {
		strcpy(buf, ".");
		return;
	}
	__int128 b = d * d / ir;
	if (b >= 100)
		report_commify(buf, b > INT64_MAX ? INT64_MAX : (int64_t)b);
	else
		sprintf(buf, "%.3g", (double)(d * d) / (double)ir);
}

static int fmt_pct(char *buf, int64_t v, int64_t total)
{
	if (total == 0)
		return sprintf(buf, "n/a");
	return sprintf(buf, "%.1f%%", (double)v * 100.0 / (double)total);
}

/* The parts of one cell: count text, percentage and cumulative percentage
 * (empty when not shown). */
static void cell_parts(const struct printer *pr, const int64_t *row,
		       const int64_t *cum, unsigned c, char *cnt, char *x,
		       char *y)
{
	unsigned ev = pr->o->show[c];

	x[0] = y[0] = '\0';
	if (ev == pr->p->n_events) {
		rep_badness(pr->o, row, cnt);	/* no percentage */
		return;
	}
	int64_t v = row[ev];
	if (v == PROF_ABSENT) {
		strcpy(cnt, ".");
		return;
	}
	report_commify(cnt, v);
	if (!pr->o->percent || v == 0)
		return;
	fmt_pct(x, v, pr->tot[ev]);
	if (cum)
		fmt_pct(y, prof_val(cum[ev]), pr->tot[ev]);
}

static void pr_init(struct printer *pr, FILE *out, const struct profile *p,
		    const struct report_opts *o, const int64_t *tot)
{
	pr->out = out;
	pr->p = p;
	pr->o = o;
	pr->tot = tot;
	pr->n = o->n_show;
	pr->cw = xcalloc(pr->n * 5 + 1, sizeof(int));
	pr->pw = pr->cw + pr->n;
	pr->cxw = pr->pw + pr->n;
	pr->cyw = pr->cxw + pr->n;
	pr->fw = pr->cyw + pr->n;
}

void pr_reset(struct printer *pr)
{
	memset(pr->cw, 0, pr->n * 5 * sizeof(int));
}

static void pr_free(struct printer *pr)
{
	free(pr->cw);
}

void pr_widen(struct printer *pr, const int64_t *row,
	      const int64_t *cum)
{
	char cnt[32], x[32], y[32];

	for (unsigned c = 0; c < pr->n; c++) {
		cell_parts(pr, row, cum, c, cnt, x, y);
		int l = strlen(cnt);
		if (l > pr->cw[c])
			pr->cw[c] = l;
		if (!x[0])
			continue;
		l = strlen(x);
		if (cum) {
			if (l > pr->cxw[c])
				pr->cxw[c] = l;
			if ((int)strlen(y) > pr->cyw[c])
				pr->cyw[c] = strlen(y);
		} else if (l + 3 > pr->pw[c]) {
			pr->pw[c] = l + 3;
		}
	}
}

/* After all pr_widen calls: field widths, and room for the event names. */
void pr_settle(struct printer *pr)
{
	for (unsigned c = 0; c < pr->n; c++) {
		int q = pr->cxw[c] ? 5 + pr->cxw[c] + pr->cyw[c] : 0;
		pr->fw[c] = q > pr->pw[c] ? q : pr->pw[c];
		unsigned ev = pr->o->show[c];
		const char *name = ev == pr->p->n_events ? "Badness"
							 : pr->p->events[ev];
		int l = strlen(name);
		if (l > pr->cw[c] + pr->fw[c])
			pr->cw[c] = l - pr->fw[c];
	}
}

void pr_header(struct printer *pr, const char *prefix,
	       const char *suffix)
{
	fputs(prefix, pr->out);
	for (unsigned c = 0; c < pr->n; c++) {
		unsigned ev = pr->o->show[c];
		const char *name = ev == pr->p->n_events ? "Badness"
							 : pr->p->events[ev];
		int l = strlen(name);
		fputs(name, pr->out);
		for (; l < pr->cw[c] + pr->fw[c]; l++)
			fputc('_', pr->out);
		fputc(' ', pr->out);
	}
	fputs(suffix, pr->out);
	fputc('\n', pr->out);
}

static void pad(FILE *out, int n)
{
	for (; n > 0; n--)
		fputc(' ', out);
}

/* One row: PREFIX, the cells (all `.` when ROW is NULL), then LABEL. */
void pr_row(struct printer *pr, const char *prefix, const int64_t *row,
	    const int64_t *cum, const char *label, size_t label_len)
{
	char cnt[32], x[32], y[32], buf[80];
	FILE *out = pr->out;

	fputs(prefix, out);
	for (unsigned c = 0; c < pr->n; c++) {
		if (!row) {
			fprintf(out, "%*s", pr->cw[c], ".");
			pad(out, pr->fw[c] + 1);
			continue;
		}
		cell_parts(pr, row, cum, c, cnt, x, y);
		fprintf(out, "%*s", pr->cw[c], cnt);
		if (!x[0]) {
			pad(out, pr->fw[c]);
		} else if (cum) {
			snprintf(buf, sizeof(buf), " (%s, %*s)", x, pr->cyw[c],
				 y);
			fprintf(out, "%*s", pr->fw[c], buf);
		} else {
			snprintf(buf, sizeof(buf), " (%s)", x);
			fprintf(out, "%*s", pr->pw[c], buf);
			pad(out, pr->fw[c] - pr->pw[c]);
		}
		fputc(' ', out);
	}
	fputc(' ', out);
	fwrite(label, 1, label_len, out);
	fputc('\n', out);
}

void rep_fancy(FILE *out, const char *title, const char *arg)
{
	fprintf(out, "%s\n-- %s%s\n%s\n", FANCY, title, arg ? arg : "", FANCY);
}

/* dst += src, absent-aware; -1 on overflow. */
int rep_add_row(int64_t *dst, const int64_t *src, unsigned n)
{
	for (unsigned e = 0; e < n; e++) {
		if (src[e] == PROF_ABSENT)
			continue;
		if (dst[e] == PROF_ABSENT)
			dst[e] = src[e];
		else if (__builtin_add_overflow(dst[e], src[e], &dst[e]) ||
			 dst[e] == PROF_ABSENT)
			return -1;
	}
	return 0;
}

int64_t *rep_absent_rows(size_t nrows, unsigned n)
{
	int64_t *r = xcalloc(nrows * n + 1, sizeof(*r));
	for (size_t i = 0; i < nrows * n; i++)
		r[i] = PROF_ABSENT;
	return r;
}

/* ---- metadata and totals ------------------------------------------------ */

static void print_metadata(FILE *out, const struct profile *p,
			   const struct report_opts *o)
{
	rep_fancy(out, "Metadata", NULL);
	fprintf(out, "Invocation:       %s\n", o->invocation);
	for (unsigned i = 0; i < p->n_desc; i++)
		fprintf(out, "%s\n", p->desc[i]);
	fputs("Command:         ", out);
	for (unsigned i = 0; i < p->n_cmds; i++)
		fprintf(out, "%s %s", i ? ";" : "", p->cmds[i]);
	fprintf(out, "\n%-18s%s\n", o->inputs_label, o->inputs);
	fputs("Events recorded: ", out);
	for (unsigned e = 0; e < p->n_events; e++)
		fprintf(out, " %s", p->events[e]);
	fputs("\nEvents shown:    ", out);
	for (unsigned c = 0; c < o->n_show; c++)
		fprintf(out, " %s", o->show[c] == p->n_events ?
			"Badness" : p->events[o->show[c]]);
	fputs("\nEvent sort order:", out);
	for (unsigned c = 0; c < o->n_sort; c++)
		fprintf(out, " %s", p->events[o->sort[c]]);
	fputs("\nThreshold:       ", out);
	unsigned nthr = 0;
	for (unsigned c = 0; c < o->n_sort; c++)
		nthr += o->sort_threshold[c] >= 0;
	for (unsigned c = 0; c < o->n_sort; c++) {
		if (o->sort_threshold[c] < 0)
			continue;
		if (nthr == 1 && c == 0)
			fprintf(out, " %g%%", o->sort_threshold[c]);
		else
			fprintf(out, " %s:%g%%", p->events[o->sort[c]],
				o->sort_threshold[c]);
	}
	fputc('\n', out);
	if (o->badness_ir >= 0)
		fputs("Badness:          (DLmr + DLmw)^2 / Ir\n", out);
	for (unsigned i = 0; i < o->n_include; i++)
		fprintf(out, "%-18s%s\n", i ? "" : "Include dirs:",
			o->include[i]);
	fprintf(out, "Annotation:       %s\n\n", o->annotate ? "on" : "off");
}

static void print_totals(struct printer *pr)
{
	rep_fancy(pr->out, "Summary", NULL);
	pr_reset(pr);
	pr_widen(pr, pr->tot, NULL);
	pr_settle(pr);
	pr_header(pr, "", "");
	fputc('\n', pr->out);
	pr_row(pr, "", pr->tot, NULL, "PROGRAM TOTALS", 14);
	fputc('\n', pr->out);
}

/* ---- the two function summaries ----------------------------------------- */

static const struct report_opts *cmp_o;
static const int64_t *cmp_rows;
static unsigned cmp_n;
static const char *const *cmp_names;

/* Bigger |count| first, event by event in --sort order; then by name. */
static int cmp_key(uint32_t a, uint32_t b)
{
	const int64_t *x = cmp_rows + (size_t)a * cmp_n;
	const int64_t *y = cmp_rows + (size_t)b * cmp_n;
	for (unsigned k = 0; k < cmp_o->n_sort; k++) {
		unsigned e = cmp_o->sort[k];
		int64_t xv = prof_val(x[e]), yv = prof_val(y[e]);
		uint64_t u = xv < 0 ? -(uint64_t)xv : (uint64_t)xv;
		uint64_t v = yv < 0 ? -(uint64_t)yv : (uint64_t)yv;
		if (u != v)
			return u > v ? -1 : 1;
	}
	return strcmp(cmp_names[a], cmp_names[b]);
}

static int cmp_idx(const void *a, const void *b)
{
	return cmp_key(*(const uint32_t *)a, *(const uint32_t *)b);
}

void rep_sort_by_cost(uint32_t *idx, size_t n, const int64_t *rows,
		      unsigned n_events, const char *const *names,
		      const struct report_opts *o)
{
	cmp_o = o;
	cmp_rows = rows;
	cmp_n = n_events;
	cmp_names = names;
	qsort(idx, n, sizeof(*idx), cmp_idx);
}

bool rep_passes(const struct report_opts *o, const int64_t *tot,
		const int64_t *row)
{
	for (unsigned k = 0; k < o->n_sort; k++) {
		double t = o->sort_threshold[k];
		unsigned e = o->sort[k];
		if (t < 0)
			continue;
		double v = (double)prof_val(row[e]), t_e = (double)tot[e];
		if (v < 0)
			v = -v;
		if (t_e < 0)
			t_e = -t_e;
		if (v >= t / 100.0 * t_e)
			return true;
	}
	return false;
}

struct trow {
	const char *prefix;
	const int64_t *row, *cum;
	char *label;
	bool blank_before;
};

struct table {
	struct trow *r;
	size_t n, cap;
};

static void table_add(struct table *t, const char *prefix, const int64_t *row,
		      const int64_t *cum, char *label, bool blank_before)
{
	if (t->n == t->cap) {
		t->cap = t->cap ? t->cap * 2 : 64;
		t->r = xreallocarray(t->r, t->cap, sizeof(*t->r));
	}
	t->r[t->n++] = (struct trow){ prefix, row, cum, label, blank_before };
}

/* Functions grouped by their file (BY_FILE) or their name. */
struct fn_groups {
	uint32_t n;		/* groups: the outer table's strings */
	uint32_t *start;	/* group g: members[start[g]..start[g + 1]) */
	uint32_t *members;	/* function ids */
	int64_t *rows;		/* each group's summed row */
};

/* Groups P's functions by outer key (counting sort) and sums their rows;
 * a sum that overflows sets *RC to -1. */
static void group_fns(struct fn_groups *gr, const struct profile *p,
		      const int64_t *fn_rows, bool by_file, uint32_t n_groups,
		      int *rc)
{
	unsigned n = p->n_events;

	gr->n = n_groups;
	gr->start = xcalloc(n_groups + 2, sizeof(*gr->start));
	gr->members = xcalloc(p->n_fn + 1, sizeof(*gr->members));
	for (uint32_t i = 0; i < p->n_fn; i++)
		gr->start[(by_file ? p->fn[i].file : p->fn[i].name) + 1]++;
	for (uint32_t g = 0; g < n_groups; g++)
		gr->start[g + 1] += gr->start[g];
	uint32_t *fill = xcalloc(n_groups + 1, sizeof(*fill));
	memcpy(fill, gr->start, n_groups * sizeof(*fill));
	for (uint32_t i = 0; i < p->n_fn; i++)
		gr->members[fill[by_file ? p->fn[i].file : p->fn[i].name]++] = i;
	free(fill);

	gr->rows = rep_absent_rows(n_groups, n);
	for (uint32_t g = 0; g < n_groups; g++)
		for (uint32_t k = gr->start[g]; k < gr->start[g + 1]; k++)
			if (rep_add_row(gr->rows + (size_t)g * n,
				    fn_rows + (size_t)gr->members[k] * n, n))
				*rc = -1;
}

/* The "  inner" rows of group G (more than one member), cheapest below
 * the threshold folded into one row summed in FOLD. */
static void table_add_members(struct table *t, const struct printer *pr,
			      const struct fn_groups *gr, uint32_t g,
			      const int64_t *fn_rows, const char **fn_inner,
			      int64_t *fold, bool by_file)
{
	unsigned n = pr->p->n_events;
	uint32_t *m = gr->members + gr->start[g];
	uint32_t nm = gr->start[g + 1] - gr->start[g];
	uint32_t folded = 0, n_pass = 0;

	rep_sort_by_cost(m, nm, fn_rows, n, fn_inner, pr->o);
	for (uint32_t i = 0; i < nm; i++)
		n_pass += rep_passes(pr->o, pr->tot,
				     fn_rows + (size_t)m[i] * n);
	for (uint32_t i = 0; i < nm; i++) {
		const int64_t *r = fn_rows + (size_t)m[i] * n;
		/* Folding a single entry would hide its name for
		 * nothing. */
		if (n_pass + 1 >= nm || rep_passes(pr->o, pr->tot, r)) {
			table_add(t, "  ", r, NULL,
				  xasprintf("  %s", fn_inner[m[i]]), false);
		} else {
			folded++;
			rep_add_row(fold, r, n);
		}
	}
	if (folded)
		table_add(t, "  ", fold, NULL,
			  xasprintf("  <%u %s below threshold>", folded,
				    by_file ? (folded == 1 ? "function" : "functions")
					    : (folded == 1 ? "file" : "files")),
			  false);
}

/* Prints table T under TITLE and HEADER, its widths its own; frees its
 * labels. */
static void print_table(struct printer *pr, struct table *t,
			const char *title, const char *header)
{
	pr_reset(pr);
	for (size_t i = 0; i < t->n; i++)
		pr_widen(pr, t->r[i].row, t->r[i].cum);
	pr_settle(pr);
	rep_fancy(pr->out, title, NULL);
	pr_header(pr, "  ", header);
	for (size_t i = 0; i < t->n; i++) {
		if (t->r[i].blank_before)
			fputc('\n', pr->out);
		pr_row(pr, t->r[i].prefix, t->r[i].row, t->r[i].cum,
		       t->r[i].label, strlen(t->r[i].label));
		free(t->r[i].label);
	}
	fputc('\n', pr->out);
	free(t->r);
}

/* The File:function (BY_FILE) or Function:file summary.  Returns the ids of
 * the files that pass the threshold (BY_FILE only), in printed order,
 * terminated by UINT32_MAX. */
static uint32_t *print_fn_summary(struct printer *pr, const int64_t *fn_rows,
				  bool by_file, int *rc)
{
	const struct profile *p = pr->p;
	unsigned n = p->n_events;
	struct strintern const *outer_tab = by_file ? &p->files : &p->fns;
	struct strintern const *inner_tab = by_file ? &p->fns : &p->files;
	struct fn_groups gr;

	group_fns(&gr, p, fn_rows, by_file, outer_tab->n, rc);

	/* Names to break ties: outer names, and inner names per function. */
	const char **fn_inner = xcalloc(p->n_fn + 1, sizeof(*fn_inner));
	for (uint32_t i = 0; i < p->n_fn; i++)
		fn_inner[i] = inner_tab->str[by_file ? p->fn[i].name
						     : p->fn[i].file];

	uint32_t *gorder = xcalloc(gr.n + 1, sizeof(*gorder));
	uint32_t n_nonempty = 0;
	for (uint32_t g = 0; g < gr.n; g++)
		if (gr.start[g + 1] > gr.start[g])
			gorder[n_nonempty++] = g;
	rep_sort_by_cost(gorder, n_nonempty, gr.rows, n,
		     (const char *const *)outer_tab->str, pr->o);

	struct table t = { 0 };
	uint32_t *chosen = xcalloc(n_nonempty + 1, sizeof(*chosen));
	uint32_t n_chosen = 0, n_below = 0;
	int64_t *cums = rep_absent_rows(n_nonempty + 1, n);
	int64_t *folds = rep_absent_rows(n_nonempty + 1, n);
	int64_t *cum = rep_absent_rows(1, n);
	uint32_t n_rows = 0, total_below = 0;
	for (uint32_t k = 0; k < n_nonempty; k++)
		total_below += !rep_passes(pr->o, pr->tot,
					   gr.rows + (size_t)gorder[k] * n);
	for (uint32_t k = 0; k < n_nonempty; k++) {
		uint32_t g = gorder[k];
		const int64_t *grow = gr.rows + (size_t)g * n;
		bool pass = rep_passes(pr->o, pr->tot, grow);
		if (!pass && total_below > 1) {
			n_below++;
			rep_add_row(folds + (size_t)n_nonempty * n, grow, n);
			continue;
		}
		if (pass)
			chosen[n_chosen++] = g;
		int64_t *c = cums + (size_t)n_rows++ * n;
		rep_add_row(cum, grow, n);
		memcpy(c, cum, n * sizeof(*c));

		const char *oname = outer_tab->str[g];
		if (gr.start[g + 1] - gr.start[g] == 1) {
			table_add(&t, by_file ? "< " : "> ", grow, c,
				  xasprintf("%s:%s", oname,
					    fn_inner[gr.members[gr.start[g]]]),
				  true);
			continue;
		}
		table_add(&t, by_file ? "< " : "> ", grow, c,
			  xasprintf("%s:", oname), true);
		table_add_members(&t, pr, &gr, g, fn_rows, fn_inner,
				  folds + (size_t)k * n, by_file);
	}
	if (n_below)
		table_add(&t, "  ", folds + (size_t)n_nonempty * n, NULL,
			  xasprintf("<%u %s below threshold>", n_below,
				    by_file ? (n_below == 1 ? "file" : "files")
					    : (n_below == 1 ? "function"
							    : "functions")),
			  true);

	print_table(pr, &t, by_file ? "File:function summary" :
		    "Function:file summary", by_file ? " file:function" :
		    " function:file");
	free(cums);
	free(folds);
	free(cum);
	free(gorder);
	free(fn_inner);
	free(gr.rows);
	free(gr.members);
	free(gr.start);
	chosen[n_chosen] = UINT32_MAX;
	return chosen;
}

/* ---- inclusive costs (Callgrind inputs) ---------------------------------- */

/* The profile seen with 2 * n_events events, self ones then inclusive
 * ones, with the options and totals mapped onto it. */
struct incl_view {
	struct profile q;
	struct report_opts o;
	char **names;		/* the events, then "EVENT(incl)" */
	int64_t *tot;		/* the totals, twice */
};

/* Each shown event becomes its self and inclusive column (the "all"
 * column stays one); sort keys become the inclusive events. */
static void incl_view_init(struct incl_view *v, const struct printer *pr)
{
	const struct profile *p = pr->p;
	const struct report_opts *o = pr->o;
	unsigned n = p->n_events, n2 = 2 * n;

	v->names = xcalloc(n2 + 1, sizeof(*v->names));
	for (unsigned e = 0; e < n; e++) {
		v->names[e] = p->events[e];
		v->names[n + e] = xasprintf("%s(incl)", p->events[e]);
	}
	v->q = *p;
	v->q.n_events = n2;
	v->q.events = v->names;

	v->o = *o;
	v->o.show = xcalloc(2 * o->n_show + 1, sizeof(*v->o.show));
	v->o.n_show = 0;
	for (unsigned c = 0; c < o->n_show; c++) {
		if (o->show[c] == n) {
			v->o.show[v->o.n_show++] = n2;
			continue;
		}
		v->o.show[v->o.n_show++] = o->show[c];
		v->o.show[v->o.n_show++] = n + o->show[c];
	}
	v->o.sort = xcalloc(o->n_sort + 1, sizeof(*v->o.sort));
	for (unsigned k = 0; k < o->n_sort; k++)
		v->o.sort[k] = n + o->sort[k];

	v->tot = xcalloc(n2 + 1, sizeof(*v->tot));
	memcpy(v->tot, pr->tot, n * sizeof(*v->tot));
	memcpy(v->tot + n, pr->tot, n * sizeof(*v->tot));
}

static void incl_view_free(struct incl_view *v, unsigned n)
{
	free(v->tot);
	free(v->o.show);
	free(v->o.sort);
	for (unsigned e = 0; e < n; e++)
		free(v->names[n + e]);
	free(v->names);
}

/* The self-then-inclusive rows of the owner functions (ROWS, 2 * n per
 * function) and their "function:file" LABELS ("" for the others); the ids
 * of those with any cost in IDX.  Returns how many. */
static uint32_t incl_rows(const struct profile *p, const struct cgraph *g,
			  int64_t *rows, const char **labels, uint32_t *idx)
{
	unsigned n = p->n_events, n2 = 2 * n;
	uint32_t nf = 0;

	for (uint32_t f = 0; f < p->n_fn; f++) {
		labels[f] = "";
		if (p->fn[f].owner != f)
			continue;
		int64_t *r = rows + (size_t)f * n2;
		bool any = false;
		for (unsigned e = 0; e < n; e++) {
			r[e] = g->self[(size_t)f * n + e];
			r[n + e] = g->incl[(size_t)f * n + e];
			any |= r[e] || r[n + e];
		}
		if (!any)
			continue;
		labels[f] = xasprintf("%s:%s", p->fns.str[p->fn[f].name],
				      p->files.str[p->fn[f].file]);
		idx[nf++] = f;
	}
	return nf;
}

/* One row per function (owner): each shown event as self, then inclusive.
 * The table is a view of a profile with 2 * n_events events, self ones
 * then inclusive ones, so that the column code above serves it. */
static int print_incl_summary(struct printer *pr)
{
	const struct profile *p = pr->p;
	unsigned n = p->n_events, n2 = 2 * n;
	struct cgraph g;
	int rc = cgraph_build(&g, p);
	struct incl_view v;

	incl_view_init(&v, pr);
	uint32_t *idx = xcalloc(p->n_fn + 1, sizeof(*idx));
	int64_t *rows = xcalloc((size_t)p->n_fn * n2 + 1, sizeof(*rows));
	const char **labels = xcalloc(p->n_fn + 1, sizeof(*labels));
	uint32_t nf = incl_rows(p, &g, rows, labels, idx);
	rep_sort_by_cost(idx, nf, rows, n2, labels, &v.o);

	struct printer pr2;
	pr_init(&pr2, pr->out, &v.q, &v.o, v.tot);
	uint32_t n_below = 0;
	for (uint32_t k = 0; k < nf; k++) {
		if (rep_passes(pr2.o, pr2.tot, rows + (size_t)idx[k] * n2))
			pr_widen(&pr2, rows + (size_t)idx[k] * n2, NULL);
		else
			n_below++;
	}
	pr_settle(&pr2);
	rep_fancy(pr->out, "Inclusive costs (function:file)", NULL);
	pr_header(&pr2, "  ", " function:file");
	fputc('\n', pr->out);
	for (uint32_t k = 0; k < nf; k++) {
		const int64_t *r = rows + (size_t)idx[k] * n2;
		if (rep_passes(pr2.o, pr2.tot, r))
			pr_row(&pr2, "  ", r, NULL, labels[idx[k]],
			       strlen(labels[idx[k]]));
	}
	if (n_below) {
		char *l = xasprintf("<%u %s below threshold>", n_below,
				    n_below == 1 ? "function" : "functions");
		pr_row(&pr2, "  ", NULL, NULL, l, strlen(l));
		free(l);
	}
	fputc('\n', pr->out);
	pr_free(&pr2);
	for (uint32_t k = 0; k < nf; k++)
		free((char *)labels[idx[k]]);
	free(labels);
	free(rows);
	free(idx);
	incl_view_free(&v, n);
	cgraph_free(&g);
	return rc;
}

bool report_opts_defaults(struct report_opts *o, const struct profile *p,
			  double threshold, bool badness)
{
	unsigned n = p->n_events;

	*o = (struct report_opts){
		.annotate = true, .percent = true, .context = 8,
		.badness_ir = -1, .badness_dlmr = -1, .badness_dlmw = -1,
		.inputs_label = "Data file:",
	};
	if (badness) {
		o->badness_ir = prof_find_event(p, "Ir", 2);
		o->badness_dlmr = prof_find_event(p, "DLmr", 4);
		o->badness_dlmw = prof_find_event(p, "DLmw", 4);
		if (o->badness_ir < 0 || o->badness_dlmr < 0 ||
		    o->badness_dlmw < 0)
			o->badness_ir = o->badness_dlmr = o->badness_dlmw = -1;
	}
	o->show = xcalloc(n + 2, sizeof(*o->show));
	for (unsigned e = 0; e < n; e++)
		o->show[o->n_show++] = e;
	if (o->badness_ir >= 0)
		o->show[o->n_show++] = n;
	o->sort = xcalloc(n + 1, sizeof(*o->sort));
	o->sort_threshold = xcalloc(n + 1, sizeof(*o->sort_threshold));
	for (unsigned e = 0; e < n; e++) {
		o->sort[o->n_sort++] = e;
		o->sort_threshold[e] = -1;
	}
	o->sort_threshold[0] = threshold;
	return o->badness_ir >= 0;
}

/* A sampled profile's section (sampled.h): functions by share, at most
 * MAX, those under THRESHOLD percent of Ir left out. */
static void print_sampled(FILE *out, const struct sampled *p,
			  double threshold, unsigned max)
{
	if (!p || p->bad || !p->n_ratios)
		return;
	char arg[96];
	snprintf(arg, sizeof(arg), ": %.0f sample%s, 95%% intervals from the "
		 "spread between them", p->n, p->n == 1 ? "" : "s");
	rep_fancy(out, "Sampled estimates", arg);
	for (unsigned r = 0; r < p->n_ratios; r++)
		fprintf(out, "%-19s ", sampled_title(p, r));
	fprintf(out, "samples  file:function\n\n");
	uint32_t n, *ord = sampled_order(p, threshold, max, &n);
	for (uint32_t k = 0; k < n; k++) {
		const struct sampled_fn *f = &p->fn[ord[k]];
		for (unsigned r = 0; r < p->n_ratios; r++) {
			double est, half;
			char cell[40];
			if (!sampled_estimate(p, f, r, &est, &half))
				snprintf(cell, sizeof(cell), ".");
			else if (half < 0)
				snprintf(cell, sizeof(cell), "%.2f%%", 100 * est);
			else
				snprintf(cell, sizeof(cell), "%.2f%% +-%.2f",
					 100 * est, 100 * half);
			fprintf(out, "%-19s ", cell);
		}
		fprintf(out, "%7.0f  %s:%s\n", f->k, f->file, f->fn);
	}
	free(ord);
	fputc('\n', out);
}

int report_print(FILE *out, const struct profile *p,
		 const struct report_opts *o)
{
	unsigned n = p->n_events;
	int64_t *tot = xcalloc(n + 1, sizeof(*tot));
	struct printer pr;
	int rc = 0;

	if (prof_totals(p, tot)) {
		free(tot);
		return -1;
	}
	/* Per-function totals. */
	int64_t *fn_rows = rep_absent_rows(p->n_fn + 1, n);
	for (uint32_t i = 0; i < p->n_cc; i++)
		if (rep_add_row(fn_rows + (size_t)p->cc[i].fn * n,
			    prof_cc_counts(p, i), n))
			rc = -1;

	pr_init(&pr, out, p, o, tot);
	print_metadata(out, p, o);
	print_totals(&pr);
	uint32_t *chosen = print_fn_summary(&pr, fn_rows, true, &rc);
	free(print_fn_summary(&pr, fn_rows, false, &rc));
	print_sampled(out, p->sampled, o->sort_threshold[0] < 0 ? 0 :
		      o->sort_threshold[0], 50);
	if (p->has_calls && print_incl_summary(&pr))
		rc = -1;
	if (o->annotate) {
		struct ann_sums s;
		int64_t *all = rep_absent_rows(5, n);
		s.known = all;
		s.unknown = all + n;
		s.unreadable = all + 2 * n;
		s.below = all + 3 * n;
		s.nofile = all + 4 * n;
		if (rep_annotate_files(&pr, chosen, &s))
			rc = -1;
		rep_print_ann_summary(&pr, &s);
		free(all);
	}
	free(chosen);
	free(fn_rows);
	pr_free(&pr);
	free(tot);
	return rc;
}
