/* The HTML report: one page, its CSS and script embedded (html_page.css,
 * html_page.js, turned into html_assets.h at build time), its data one JSON
 * object, so that it opens from a file with no network.
 *
 * What the data holds (the script's names, see html_page.js):
 * - the run: cmd:, desc: lines, the invocation and inputs, the summary as
 *   cgout_print_summary prints it (not for a diff: it has no signed form),
 *   the totals, and the coherence lines of the model's end-of-run report
 *   (desc: Report: lines, the tracer writes them) parsed;
 * - every function (the text report's (file, function) rows) with its
 *   counts, and with call edges the owner's self and inclusive costs and
 *   the edges;
 * - the source of each file that passes the threshold, as the text report
 *   chooses them, with its counted lines merged by line;
 * - for each event, the line of its largest cost centre ("hot lines"),
 *   and that line's file, its source found or not;
 * - flame-graph trees, one per shown event while they stay under
 *   HTML_MAX_FRAMES frames in all (frames under 0.1 px of 1180 left out,
 *   as in --flamegraph), or the folded stacks' tree.
 * Counts are JSON numbers, exact up to 2^53; an absent count is null.
 *
 * Without scripts, the page shows the run, the totals, the hot lines, the
 * functions in the sort order (the first HTML_STATIC_ROWS), the counted
 * lines of each source file (up to HTML_STATIC_LINES in all) and the
 * coherence lines, as plain tables. */
#include "html.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cgsummary.h"
#include "error.h"
#include "sampled.h"
#include "html_assets.h"
#include "report_private.h"

#define HTML_MAX_FRAMES 300000u
#define HTML_STATIC_ROWS 500u
#define HTML_STATIC_LINES 5000u
#define REPORT_PREFIX "Report: "

/* ---- JSON --------------------------------------------------------------- */

/* V in decimal at the end of BUF (24 bytes); returns where it starts. */
static char *js_fmt(char *end, int64_t v)
{
	uint64_t u = v < 0 ? -(uint64_t)v : (uint64_t)v;
	char *b = end;

	if (v == PROF_ABSENT) {
		memcpy(b - 4, "null", 4);
		return b - 4;
	}
	do {
		*--b = '0' + u % 10;
		u /= 10;
	} while (u);
	if (v < 0)
		*--b = '-';
	return b;
}

static void js_int(FILE *out, int64_t v)
{
	char buf[24];
	char *b = js_fmt(buf + sizeof(buf), v);
	fwrite_unlocked(b, 1, buf + sizeof(buf) - b, out);
}

/* A JSON string; '<' as \u003c so that no "</script" can end the data,
 * bytes that are not UTF-8 as '?'. */
static void js_strn(FILE *out, const char *s, size_t n)
{
	const unsigned char *u = (const unsigned char *)s;

	fputc('"', out);
	for (size_t i = 0; i < n;) {
		size_t len = markup_utf8_len(u + i, n - i);
		unsigned c = u[i];
		if (len > 1) {
			fwrite(u + i, 1, len, out);
			i += len;
			continue;
		}
		i++;
		if (!len)
			fputc('?', out);
		else if (c == '"' || c == '\\')
			fprintf(out, "\\%c", c);
		else if (c == '\n')
			fputs("\\n", out);
		else if (c == '\t')
			fputs("\\t", out);
		else if (c < 0x20 || c == '<' || c == 0x7f)
			fprintf(out, "\\u%04x", c);
		else
			fputc(c, out);
	}
	fputc('"', out);
}

static void js_str(FILE *out, const char *s)
{
	js_strn(out, s, strlen(s));
}

/* A row of counts, built in one buffer: the page holds a row per
 * function, and the benchmark's profile has 20,000 of them. */
static void js_row(FILE *out, const int64_t *row, unsigned n)
{
	char buf[PROF_MAX_EVENTS * 22 + 8], tmp[24];
	size_t k = 0;

	buf[k++] = '[';
	for (unsigned e = 0; e < n; e++) {
		if (e)
			buf[k++] = ',';
		char *b = js_fmt(tmp + sizeof(tmp), row[e]);
		size_t l = tmp + sizeof(tmp) - b;
		memcpy(buf + k, b, l);
		k += l;
	}
	buf[k++] = ']';
	fwrite_unlocked(buf, 1, k, out);
}

static void js_strs(FILE *out, const char *key, char *const *v, unsigned n)
{
	fprintf(out, ",\n\"%s\":[", key);
	for (unsigned i = 0; i < n; i++) {
		if (i)
			fputc(',', out);
		js_str(out, v[i]);
	}
	fputc(']', out);
}

/* S escaped for HTML, its newlines kept (for <pre>). */
static void html_text(FILE *out, const char *s)
{
	for (const char *nl; (nl = strchr(s, '\n')); s = nl + 1) {
		markup_put(out, s, nl - s);
		fputc('\n', out);
	}
	markup_put(out, s, strlen(s));
}

/* ---- what the page is built from ---------------------------------------- */

struct hot {
	int64_t val;		/* PROF_ABSENT: none yet */
	uint32_t file, line, fn;
};

struct html_file {
	uint32_t file;
	char *path;		/* the source found, or NULL */
	char *src;
	size_t src_len;
	uint32_t *lines;
	int64_t *rows;
	uint32_t n_lines;
};

struct page {
	FILE *out;
	const struct profile *p;
	const struct html_opts *o;
	const struct report_opts *ro;
	unsigned n;		/* events */
	int64_t *tot;
	int64_t *fn_rows;	/* per function */
	struct cgraph g;
	bool have_graph;
	struct hot *hot;	/* per event */
	struct html_file *files;
	uint32_t n_files;
	int rc;
};

static uint64_t mag(int64_t v)
{
	return v < 0 ? -(uint64_t)v : (uint64_t)v;
}

/* The files the text report annotates (those passing the threshold, not
 * ???) whose source is found, and the file of each event's hot line, with
 * their counted lines merged by line.  The hot line of an event is that of
 * its largest cost centre (function, line), found in one pass over the
 * counts (merging the lines of every file costs more than the text report
 * takes); it shows the count of the whole line. */
static void collect_files(struct page *pg)
{
	const struct profile *p = pg->p;
	unsigned n = pg->n;
	struct rep_byfile bf;
	int64_t *frows = rep_absent_rows(p->files.n + 1, n);
	bool *keep = xcalloc(p->files.n + 1, sizeof(*keep));
	char **src = xcalloc(p->files.n + 1, sizeof(*src));
	char **path = xcalloc(p->files.n + 1, sizeof(*path));
	size_t *src_len = xcalloc(p->files.n + 1, sizeof(*src_len));

	for (uint32_t f = 0; f < p->n_fn; f++)
		if (rep_add_row(frows + (size_t)p->fn[f].file * n,
			    pg->fn_rows + (size_t)f * n, n))
			pg->rc = -1;
	for (uint32_t f = 0; f < p->files.n; f++) {
		if (!strcmp(p->files.str[f], "???") ||
		    !rep_passes(pg->ro, pg->tot, frows + (size_t)f * n))
			continue;
		src[f] = rep_find_source(pg->ro, p->files.str[f], &src_len[f],
					 &path[f]);
		keep[f] = src[f] != NULL;
	}
	for (unsigned e = 0; e < n; e++)
		if (pg->hot[e].val != PROF_ABSENT)
			keep[pg->hot[e].file] = true;

	rep_byfile_init(&bf, p);
	pg->files = xcalloc(p->files.n + 1, sizeof(*pg->files));
	for (uint32_t f = 0; f < p->files.n; f++) {
		if (!keep[f]) {
			free(src[f]);
			free(path[f]);
			continue;
		}
		struct html_file *hf = &pg->files[pg->n_files++];
		*hf = (struct html_file){ .file = f, .path = path[f],
					  .src = src[f], .src_len = src_len[f] };
		hf->n_lines = rep_file_lines(p, &bf, f, &hf->lines, &hf->rows,
					     &pg->rc);
		for (unsigned e = 0; e < n; e++) {
			struct hot *h = &pg->hot[e];
			if (h->val == PROF_ABSENT || h->file != f)
				continue;
			for (uint32_t k = 0; k < hf->n_lines; k++)
				if (hf->lines[k] == h->line)
					h->val = hf->rows[(size_t)k * n + e];
		}
	}
	rep_byfile_free(&bf);
	free(src_len);
	free(path);
	free(src);
	free(keep);
	free(frows);
}

/* ---- the data ----------------------------------------------------------- */

static void data_run(struct page *pg)
{
	FILE *out = pg->out;
	const struct profile *p = pg->p;
	const struct report_opts *ro = pg->ro;

	fputs("{\"v\":1,\"diff\":", out);
	fputs(pg->o->diff ? "true" : "false", out);
	js_strs(out, "events", p->events, p->n_events);
	fputs(",\n\"shown\":[", out);
	for (unsigned c = 0; c < ro->n_show; c++)
		fprintf(out, "%s%d", c ? "," : "",
			ro->show[c] == p->n_events ? -1 : (int)ro->show[c]);
	fputs("],\"sort\":[", out);
	for (unsigned c = 0; c < ro->n_sort; c++)
		fprintf(out, "%s%u", c ? "," : "", ro->sort[c]);
	double thr = ro->n_sort && ro->sort_threshold[0] >= 0 ?
		     ro->sort_threshold[0] : 0;
	fprintf(out, "],\"thr\":%g,\"ev\":%d,\"context\":%u,\"bad\":", thr,
		pg->o->event, ro->context);
	if (ro->badness_ir >= 0)
		fprintf(out, "[%d,%d,%d]", ro->badness_ir, ro->badness_dlmr,
			ro->badness_dlmw);
	else
		fputs("null", out);
	js_strs(out, "cmd", p->cmds, p->n_cmds);
	js_strs(out, "desc", p->desc, p->n_desc);
	fputs(",\n\"inv\":", out);
	js_str(out, ro->invocation ? ro->invocation : "");
	fputs(",\"inputs_label\":", out);
	js_str(out, ro->inputs_label ? ro->inputs_label : "");
	fputs(",\"inputs\":", out);
	js_str(out, ro->inputs ? ro->inputs : "");
	fputs(",\n\"tot\":", out);
	js_row(out, pg->tot, pg->n);
}

/* The summary text, or NULL (a diff, a negative total). */
static char *summary_text(const struct page *pg)
{
	char *buf = NULL;
	size_t len = 0;

	if (pg->o->diff || !pg->n)
		return NULL;
	uint64_t *t = xcalloc(pg->n + 1, sizeof(*t));
	for (unsigned e = 0; e < pg->n; e++) {
		if (pg->tot[e] < 0) {
			free(t);
			return NULL;
		}
		t[e] = pg->tot[e];
	}
	FILE *m = open_memstream(&buf, &len);
	if (!m)
		error_msg_and_die("out of memory");
	cgout_print_summary(m, "", pg->n, (const char *const *)pg->p->events,
			    t);
	fclose(m);
	free(t);
	return buf;
}

static void data_functions(struct page *pg)
{
	FILE *out = pg->out;
	const struct profile *p = pg->p;
	unsigned n = pg->n;

	js_strs(out, "files", p->files.str, p->files.n);
	/* Each function's first and last counted line (0: none), where its
	 * source link looks for its hottest line. */
	uint32_t *lo = xcalloc(p->n_fn + 1, sizeof(*lo));
	uint32_t *hi = xcalloc(p->n_fn + 1, sizeof(*hi));
	for (uint32_t i = 0; i < p->n_cc; i++) {
		uint32_t f = p->cc[i].fn, l = p->cc[i].line;
		if (l && (!lo[f] || l < lo[f]))
			lo[f] = l;
		if (l > hi[f])
			hi[f] = l;
	}
	fputs(",\n\"fns\":[", out);
	for (uint32_t f = 0; f < p->n_fn; f++) {
		/* 20,000 of these in the benchmark's profile: no fprintf. */
		fputs(f ? ",\n[" : "[", out);
		js_int(out, p->fn[f].file);
		fputc(',', out);
		js_str(out, p->fns.str[p->fn[f].name]);
		fputc(',', out);
		js_int(out, p->fn[f].owner);
		fputc(',', out);
		js_row(out, pg->fn_rows + (size_t)f * n, n);
		fputc(',', out);
		js_int(out, lo[f]);
		fputc(',', out);
		js_int(out, hi[f]);
		fputc(']', out);
	}
	free(lo);
	free(hi);
	fputs("]", out);
	if (!pg->have_graph)
		return;
	fputs(",\n\"incl\":[", out);
	bool first = true;
	for (uint32_t f = 0; f < p->n_fn; f++) {
		if (p->fn[f].owner != f)
			continue;
		fputs(first ? "[" : ",\n[", out);
		js_int(out, f);
		fputc(',', out);
		js_row(out, pg->g.self + (size_t)f * n, n);
		fputc(',', out);
		js_row(out, pg->g.incl + (size_t)f * n, n);
		fputc(']', out);
		first = false;
	}
	fputs("],\n\"calls\":[", out);
	for (uint32_t i = 0; i < p->n_call; i++) {
		const struct prof_call *c = &p->call[i];
		fputs(i ? ",\n[" : "[", out);
		js_int(out, c->caller);
		fputc(',', out);
		js_int(out, c->callee);
		fputc(',', out);
		js_int(out, c->calls);
		fputc(',', out);
		js_row(out, prof_call_counts(p, i), n);
		fputc(']', out);
	}
	fputs("]", out);
}

static void data_sources(struct page *pg)
{
	FILE *out = pg->out;
	unsigned n = pg->n;

	fputs(",\n\"src\":[", out);
	for (uint32_t i = 0; i < pg->n_files; i++) {
		const struct html_file *hf = &pg->files[i];
		fprintf(out, "%s[%" PRIu32 ",", i ? ",\n" : "", hf->file);
		if (hf->path)
			js_str(out, hf->path);
		else
			fputs("null", out);
		fputs(",[", out);
		for (uint32_t k = 0; k < hf->n_lines; k++) {
			fputs(k ? ",[" : "[", out);
			js_int(out, hf->lines[k]);
			fputc(',', out);
			js_row(out, hf->rows + (size_t)k * n, n);
			fputc(']', out);
		}
		fputs("],", out);
		if (hf->src)
			js_strn(out, hf->src, hf->src_len);
		else
			fputs("null", out);
		fputc(']', out);
	}
	fputs("],\n\"hot\":[", out);
	bool first = true;
	for (unsigned e = 0; e < n; e++) {
		const struct hot *h = &pg->hot[e];
		if (h->val == PROF_ABSENT)
			continue;
		fprintf(out, "%s[%u,%" PRIu32 ",%" PRIu32 ",%" PRIu32 ",",
			first ? "" : ",", e, h->file, h->line, h->fn);
		js_int(out, h->val);
		fputc(']', out);
		first = false;
	}
	fputs("]", out);
}

/* One flame tree: [name id, count, parent, self] per frame, in creation
 * order (parents first); names interned in NAMES. */
static void data_tree(FILE *out, struct ctree *t, int ev,
		      struct strintern *names, bool *first)
{
	fprintf(out, "%s[%d,[", *first ? "" : ",\n", ev);
	for (uint32_t i = 0; i < t->n_nodes; i++) {
		const struct ctree_node *x = &t->n[i];
		uint32_t id = strintern_id(names, x->name, strlen(x->name),
					   NULL);
		fputs(i ? ",[" : "[", out);
		js_int(out, id);
		fputc(',', out);
		js_int(out, x->val);
		fputc(',', out);
		js_int(out, x->parent == CT_NONE ? -1 : (int64_t)x->parent);
		fputc(',', out);
		js_int(out, x->self);
		fputc(']', out);
	}
	fprintf(out, "],%d]", t->truncated);
	*first = false;
}

static void data_flames(struct page *pg)
{
	FILE *out = pg->out;
	struct strintern names = { 0 };
	bool first = true;
	uint32_t frames = 0;

	fputs(",\n\"flames\":[", out);
	if (pg->o->folded) {
		data_tree(out, pg->o->folded, -1, &names, &first);
	} else if (pg->have_graph) {
		/* The default event first: it always gets its tree. */
		const struct report_opts *ro = pg->ro;
		for (int k = -1; k < (int)ro->n_show; k++) {
			int ev = k < 0 ? pg->o->event : (int)ro->show[k];
			if (ev < 0 || ev >= (int)pg->n ||
			    (k >= 0 && ev == pg->o->event))
				continue;
			struct ctree t;
			ctree_init(&t, "all");
			ctree_from_graph(&t, &pg->g, ev, NULL, 0.1 / 1180);
			if (k < 0 || frames + t.n_nodes <= HTML_MAX_FRAMES) {
				frames += t.n_nodes;
				data_tree(out, &t, ev, &names, &first);
			}
			ctree_free(&t);
		}
	}
	fputs("],\n\"names\":[", out);
	for (uint32_t i = 0; i < names.n; i++) {
		int r, g, b;
		ctree_colour(names.str[i], &r, &g, &b);
		fputs(i ? ",[" : "[", out);
		js_str(out, names.str[i]);
		fprintf(out, ",\"rgb(%d,%d,%d)\"]", r, g, b);
	}
	fputs("]", out);
	strintern_free(&names);
}

/* "FILE:LINE (FN)" of the model's report: FILE and LINE, or false. */
static bool split_loc(const char *s, size_t n, size_t *file_len,
		      unsigned long *line)
{
	const char *paren = memmem(s, n, " (", 2);
	const char *e = paren ? paren : s + n;
	const char *colon = e;
	while (colon > s && colon[-1] != ':')
		colon--;
	if (colon == s || colon == e)
		return false;
	char *end;
	*line = strtoul(colon, &end, 10);
	if (end != e)
		return false;
	*file_len = colon - 1 - s;
	return true;
}

static void js_loc(FILE *out, const char *s, size_t n)
{
	size_t fl;
	unsigned long line;

	fputc('[', out);
	js_strn(out, s, n);
	if (split_loc(s, n, &fl, &line)) {
		fputc(',', out);
		js_strn(out, s, fl);
		fprintf(out, ",%lu", line);
	}
	fputc(']', out);
}

/* One "false: N misses at LOC on VAR, written at LOC on VAR" pair. */
static void data_pair(FILE *out, const char *s, bool *first)
{
	const char *at = strstr(s, " misses at ");
	const char *wr = at ? strstr(at, ", written at ") : NULL;
	if (!at || !wr)
		return;
	const char *on1 = NULL, *on2 = NULL;
	for (const char *q = at; (q = strstr(q + 1, " on ")) && q < wr;)
		on1 = q;
	for (const char *q = wr; (q = strstr(q + 1, " on "));)
		on2 = q;
	if (!on1 || !on2)
		return;
	const char *loc1 = at + 11, *loc2 = wr + 13;
	fprintf(out, "%s[%s,%llu,", *first ? "" : ",",
		!strncmp(s, "true", 4) ? "true" : "false",
		strtoull(s + strcspn(s, "0123456789"), NULL, 10));
	js_loc(out, loc1, on1 - loc1);
	fputc(',', out);
	js_strn(out, on1 + 4, wr - on1 - 4);
	fputc(',', out);
	js_loc(out, loc2, on2 - loc2);
	fputc(',', out);
	js_str(out, on2 + 4);
	fputc(']', out);
	*first = false;
}

/* The coherence lines of the model's report (desc: Report: lines; the
 * page shows the report itself as plain text):
 * "  line 0xADDR (VAR): F false sharing, T true sharing misses, I
 * invalidations received", each followed by its pairs. */
static void data_coherence(struct page *pg)
{
	FILE *out = pg->out;
	const struct profile *p = pg->p;
	size_t pl = strlen(REPORT_PREFIX);
	bool first = true, in_line = false, first_pair = true;

	fputs(",\n\"coh\":[", out);
	for (unsigned i = 0; i < p->n_desc; i++) {
		const char *s = p->desc[i];
		unsigned long long addr, nf, nt, inv;
		int end = 0;
		if (strncmp(s, REPORT_PREFIX, pl))
			continue;
		s += pl;
		if (in_line && !strncmp(s, "    ", 4)) {
			data_pair(out, s + 4, &first_pair);
			continue;
		}
		if (in_line)
			fputs("]]", out);
		in_line = false;
		const char *var = strstr(s, " (");
		const char *close = var ? strstr(var, "): ") : NULL;
		if (sscanf(s, "  line 0x%llx (", &addr) != 1 || !close ||
		    sscanf(close, "): %llu false sharing, %llu true sharing "
			   "misses, %llu invalidations received%n", &nf, &nt,
			   &inv, &end) != 3 || !end)
			continue;
		fprintf(out, "%s[\"0x%llx\",", first ? "" : ",\n", addr);
		js_strn(out, var + 2, close - var - 2);
		fprintf(out, ",%llu,%llu,%llu,[", nf, nt, inv);
		first = false;
		first_pair = true;
		in_line = true;
	}
	if (in_line)
		fputs("]]", out);
	fputs("]", out);
}

/* ---- the page without scripts --------------------------------------------- */

static const char *ev_name(const struct page *pg, unsigned ev)
{
	return ev == pg->n ? "Badness" : pg->p->events[ev];
}

static void static_cells(struct page *pg, const int64_t *row)
{
	FILE *out = pg->out;
	char buf[40];

	for (unsigned c = 0; c < pg->ro->n_show; c++) {
		unsigned ev = pg->ro->show[c];
		if (ev == pg->n) {
			rep_badness(pg->ro, row, buf);
			fprintf(out, "<td>%s</td>", buf);
			continue;
		}
		int64_t v = row[ev];
		if (v == PROF_ABSENT) {
			fputs("<td>.</td>", out);
			continue;
		}
		report_commify(buf, v);
		fprintf(out, "<td%s>%s</td>", v < 0 ? " class=\"neg\"" :
			pg->o->diff && v > 0 ? " class=\"pos\"" : "", buf);
	}
}

static void static_head(struct page *pg, const char *first,
			const char *last)
{
	FILE *out = pg->out;

	fputs("<thead><tr>", out);
	if (first)
		fprintf(out, "<th>%s</th>", first);
	for (unsigned c = 0; c < pg->ro->n_show; c++) {
		fputs("<th>", out);
		html_text(out, ev_name(pg, pg->ro->show[c]));
		fputs("</th>", out);
	}
	if (last)
		fprintf(out, "<th class=\"name\">%s</th>", last);
	fputs("</tr></thead>\n", out);
}

static void static_run(struct page *pg, const char *summary)
{
	FILE *out = pg->out;
	const struct profile *p = pg->p;
	const struct report_opts *ro = pg->ro;

	fputs("<section id=\"run\"><h2>The run</h2>\n<table class=\"kv\" "
	      "id=\"meta\">\n<tr><th>Command</th><td>", out);
	for (unsigned i = 0; i < p->n_cmds; i++) {
		fputs(i ? "; " : "", out);
		html_text(out, p->cmds[i]);
	}
	fputs("</td></tr>\n<tr><th>", out);
	html_text(out, ro->inputs_label ? ro->inputs_label : "Data file:");
	fputs("</th><td>", out);
	html_text(out, ro->inputs ? ro->inputs : "");
	fputs("</td></tr>\n", out);
	size_t pl = strlen(REPORT_PREFIX);
	for (unsigned i = 0; i < p->n_desc; i++) {
		const char *d = p->desc[i];
		if (!strncmp(d, REPORT_PREFIX, pl))
			continue;
		const char *colon = strchr(d, ':');
		fputs("<tr><th>", out);
		markup_put(out, d, colon ? (size_t)(colon - d) : 0);
		fputs("</th><td>", out);
		html_text(out, colon ? colon + 1 + strspn(colon + 1, " ") : d);
		fputs("</td></tr>\n", out);
	}
	fputs("</table>\n", out);
	if (summary) {
		fputs("<h3>Summary</h3>\n<pre id=\"summary\">", out);
		html_text(out, summary);
		fputs("</pre>\n", out);
	}
	if (pg->n) {
		fputs("<h3>Totals</h3>\n<table class=\"counts\" id=\"totals\">",
		      out);
		static_head(pg, NULL, "");
		fputs("<tbody><tr>", out);
		static_cells(pg, pg->tot);
		fputs("<td class=\"name\">PROGRAM TOTALS</td></tr></tbody></table>\n",
		      out);
	}
	bool any = false;
	for (unsigned e = 0; e < pg->n; e++)
		any |= pg->hot[e].val != PROF_ABSENT;
	if (any) {
		fputs("<h3>Hot lines</h3>\n<table class=\"kv\" id=\"hot\">\n",
		      out);
		for (unsigned e = 0; e < pg->n; e++) {
			const struct hot *h = &pg->hot[e];
			char buf[32];
			if (h->val == PROF_ABSENT)
				continue;
			report_commify(buf, h->val);
			fprintf(out, "<tr data-ev=\"%u\"><th>", e);
			html_text(out, p->events[e]);
			fputs("</th><td class=\"loc\">", out);
			html_text(out, p->files.str[h->file]);
			fprintf(out, ":%" PRIu32 " (", h->line);
			html_text(out, p->fns.str[p->fn[h->fn].name]);
			fprintf(out, ")</td><td>%s</td></tr>\n", buf);
		}
		fputs("</table>\n", out);
	}
	fputs("<div id=\"report\">", out);
	size_t rl = strlen(REPORT_PREFIX);
	bool head = false;
	for (unsigned i = 0; i < p->n_desc; i++) {
		if (strncmp(p->desc[i], REPORT_PREFIX, rl))
			continue;
		if (!head)
			fputs("<h3>Model report</h3>\n<pre>", out);
		head = true;
		html_text(out, p->desc[i] + rl);
		fputc('\n', out);
	}
	fputs(head ? "</pre></div></section>\n" : "</div></section>\n", out);
}

static void static_functions(struct page *pg)
{
	FILE *out = pg->out;
	const struct profile *p = pg->p;
	uint32_t *idx = xcalloc(p->n_fn + 1, sizeof(*idx));
	const char **names = xcalloc(p->n_fn + 1, sizeof(*names));
	uint32_t n = 0;

	for (uint32_t f = 0; f < p->n_fn; f++) {
		names[f] = p->fns.str[p->fn[f].name];
		idx[n++] = f;
	}
	rep_sort_by_cost(idx, n, pg->fn_rows, pg->n, names, pg->ro);
	fprintf(out, "<section id=\"functions\"><h2>Functions</h2>\n"
		"<p class=\"note\" id=\"fn-note\">%" PRIu32 " functions",
		p->n_fn);
	if (n > HTML_STATIC_ROWS)
		fprintf(out, ", the first %u shown", HTML_STATIC_ROWS);
	fputs(".</p>\n<div id=\"fn-controls\"></div>\n<table class=\"counts\" "
	      "id=\"fntab\">", out);
	static_head(pg, NULL, "function");
	fputs("<tbody>\n", out);
	for (uint32_t k = 0; k < n && k < HTML_STATIC_ROWS; k++) {
		uint32_t f = idx[k];
		fprintf(out, "<tr class=\"fn\" data-fn=\"%" PRIu32 "\">", f);
		static_cells(pg, pg->fn_rows + (size_t)f * pg->n);
		fputs("<td class=\"name\">", out);
		html_text(out, names[f]);
		fputs(" <span class=\"file\">", out);
		html_text(out, p->files.str[p->fn[f].file]);
		fputs("</span></td></tr>\n", out);
	}
	fputs("</tbody></table></section>\n", out);
	free(names);
	free(idx);
}

/* A sampled profile's estimates, with their 95% intervals (sampled.h). */
static void static_sampled(struct page *pg)
{
	FILE *out = pg->out;
	const struct sampled *sp = pg->p->sampled;
	if (!sp || sp->bad || !sp->n_ratios)
		return;
	fprintf(out, "<section id=\"sampled\"><h2>Sampled estimates</h2>\n"
		"<p class=\"note\">%.0f sample%s; each estimate with its 95%% "
		"interval, from the spread between the samples.</p>\n"
		"<table class=\"counts\" id=\"sampledtab\"><thead><tr>",
		sp->n, sp->n == 1 ? "" : "s");
	for (unsigned r = 0; r < sp->n_ratios; r++) {
		fputs("<th>", out);
		html_text(out, sampled_title(sp, r));
		fputs("</th>", out);
	}
	fputs("<th>samples</th><th>function</th></tr></thead><tbody>\n", out);
	uint32_t n, *ord = sampled_order(sp, 0.1, HTML_STATIC_ROWS, &n);
	for (uint32_t k = 0; k < n; k++) {
		const struct sampled_fn *f = &sp->fn[ord[k]];
		fputs("<tr>", out);
		for (unsigned r = 0; r < sp->n_ratios; r++) {
			double est, half;
			if (!sampled_estimate(sp, f, r, &est, &half))
				fputs("<td>.</td>", out);
			else if (half < 0)
				fprintf(out, "<td>%.2f%%</td>", 100 * est);
			else
				fprintf(out, "<td>%.2f%% &plusmn;%.2f</td>",
					100 * est, 100 * half);
		}
		fprintf(out, "<td>%.0f</td><td class=\"name\">", f->k);
		html_text(out, f->fn);
		fputs(" <span class=\"file\">", out);
		html_text(out, f->file);
		fputs("</span></td></tr>\n", out);
	}
	fputs("</tbody></table></section>\n", out);
	free(ord);
}

static void static_sources(struct page *pg)
{
	FILE *out = pg->out;
	const struct profile *p = pg->p;
	uint32_t shown = 0;

	fputs("<section id=\"source\"><h2>Source</h2>\n<div id=\"srcview\">\n",
	      out);
	for (uint32_t i = 0; i < pg->n_files; i++) {
		const struct html_file *hf = &pg->files[i];
		fputs("<h3 class=\"srcfile\">", out);
		html_text(out, hf->path ? hf->path : p->files.str[hf->file]);
		fputs(hf->src ? "</h3>\n" : " (not found)</h3>\n", out);
		if (!hf->src || shown >= HTML_STATIC_LINES)
			continue;
		size_t nsrc;
		size_t *ls = rep_line_starts(hf->src, hf->src_len, &nsrc);
		fputs("<table class=\"counts src\">", out);
		static_head(pg, "line", "source");
		fputs("<tbody>\n", out);
		for (uint32_t k = 0; k < hf->n_lines && shown < HTML_STATIC_LINES;
		     k++, shown++) {
			uint32_t l = hf->lines[k];
			fprintf(out, "<tr><td class=\"ln\">%" PRIu32 "</td>", l);
			static_cells(pg, hf->rows + (size_t)k * pg->n);
			fputs("<td class=\"code\">", out);
			if (l >= 1 && l <= nsrc)
				markup_put(out, hf->src + ls[l - 1],
					   ls[l] - ls[l - 1] - 1);
			fputs("</td></tr>\n", out);
		}
		fputs("</tbody></table>\n", out);
		free(ls);
	}
	fputs("</div></section>\n", out);
}

/* ---- the page ------------------------------------------------------------- */

static void page_head(struct page *pg)
{
	FILE *out = pg->out;
	const struct profile *p = pg->p;

	fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
	      "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src "
	      "'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; "
	      "img-src data:\">\n<title>cachetrace: ", out);
	html_text(out, p->n_cmds ? p->cmds[0] : pg->ro->inputs ?
		  pg->ro->inputs : "report");
	fputs("</title>\n<style>\n", out);
	fputs(html_page_css, out);
	fputs("</style></head>\n<body>\n<header><h1>cachetrace</h1>\n<nav>"
	      "<a href=\"#run\">Run</a> <a href=\"#functions\">Functions</a> "
	      "<a href=\"#source\">Source</a> <a href=\"#calls\">Callers</a> "
	      "<a href=\"#flame\">Flame graph</a> <a href=\"#coherence\">"
	      "Coherence</a></nav>\n<span id=\"evmenu\"></span></header>\n"
	      "<div id=\"layout\"><main>\n", out);
}

int html_write(FILE *out, const struct profile *p, const struct html_opts *o)
{
	struct page pg = { .out = out, .p = p, .o = o, .ro = o->ro,
			   .n = p->n_events };
	unsigned n = pg.n;

	/* One pass over the cost centres: the functions' rows and each
	 * event's largest cost centre; the totals from the functions. */
	pg.fn_rows = rep_absent_rows(p->n_fn + 1, n);
	pg.hot = xcalloc(n + 1, sizeof(*pg.hot));
	for (unsigned e = 0; e < n; e++)
		pg.hot[e].val = PROF_ABSENT;
	for (uint32_t i = 0; i < p->n_cc; i++) {
		const int64_t *row = prof_cc_counts(p, i);
		if (rep_add_row(pg.fn_rows + (size_t)p->cc[i].fn * n, row, n))
			pg.rc = -1;
		for (unsigned e = 0; e < n; e++) {
			struct hot *h = &pg.hot[e];
			int64_t v = row[e];
			if (v == PROF_ABSENT || v == 0 ||
			    (h->val != PROF_ABSENT && mag(v) <= mag(h->val)))
				continue;
			*h = (struct hot){ v, p->fn[p->cc[i].fn].file,
					   p->cc[i].line, p->cc[i].fn };
		}
	}
	pg.tot = xcalloc(n + 1, sizeof(*pg.tot));
	for (uint32_t f = 0; f < p->n_fn; f++)
		for (unsigned e = 0; e < n; e++)
			if (__builtin_add_overflow(pg.tot[e],
				   prof_val(pg.fn_rows[(size_t)f * n + e]),
				   &pg.tot[e]))
				pg.rc = -1;
	pg.have_graph = p->has_calls && !o->folded;
	if (pg.have_graph && cgraph_build(&pg.g, p))
		pg.rc = -1;
	collect_files(&pg);
	char *summary = summary_text(&pg);

	page_head(&pg);
	static_run(&pg, summary);
	static_functions(&pg);
	static_sampled(&pg);
	static_sources(&pg);
	fputs("<section id=\"calls\"><h2>Call tree and callers</h2>"
	      "<div id=\"tree\"><p class=\"note\">The call tree needs "
	      "scripts.</p></div></section>\n<section id=\"flame\"><h2>Flame "
	      "graph</h2><div id=\"fg\"><p class=\"note\">The flame graph "
	      "needs scripts.</p></div></section>\n<section id=\"coherence\">"
	      "<h2>Coherence</h2><div id=\"coh\"><p class=\"note\">Without "
	      "scripts: the sharing lines are in the model report (The run)."
	      "</p></div></section>\n</main><aside id=\"sel\"></aside></div>\n"
	      "<script type=\"application/json\" id=\"ct-data\">\n", out);
	data_run(&pg);
	fputs(",\n\"summary\":", out);
	if (summary)
		js_str(out, summary);
	else
		fputs("null", out);
	data_functions(&pg);
	data_sources(&pg);
	data_flames(&pg);
	data_coherence(&pg);
	fputs(",\n\"folded_ev\":", out);
	js_str(out, o->folded_event ? o->folded_event : "count");
	fputs("}\n</script>\n<script>\n", out);
	fputs(html_page_js, out);
	fputs("</script>\n</body></html>\n", out);

	for (uint32_t i = 0; i < pg.n_files; i++) {
		free(pg.files[i].lines);
		free(pg.files[i].rows);
		free(pg.files[i].src);
		free(pg.files[i].path);
	}
	free(pg.files);
	free(summary);
	if (pg.have_graph)
		cgraph_free(&pg.g);
	free(pg.hot);
	free(pg.fn_rows);
	free(pg.tot);
	if (ferror(out))
		return -1;
	return pg.rc;
}

int html_write_profile(FILE *out, const char *data, size_t len,
		       const char *name, struct prof_error *err)
{
	struct profile p;
	struct report_opts ro;
	int rc = 1;

	prof_init(&p);
	if (!prof_read_mem(&p, data, len, name, 1, true, err)) {
		report_opts_defaults(&ro, &p, 0.1, true);
		ro.inputs = name;
		struct html_opts o = { .ro = &ro, .event = -1 };
		rc = html_write(out, &p, &o) ? -1 : 0;
		free(ro.show);
		free(ro.sort);
		free(ro.sort_threshold);
	}
	prof_free(&p);
	return rc;
}
