/* The annotated source files: each chosen file's lines with their counts,
 * the uncounted stretches folded into "-- line N ----" markers as
 * cg_annotate does, and warnings for missing or newer sources. */
#include "report.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "error.h"
#include "report_private.h"

/* ---- annotated source ----------------------------------------------------- */


static const struct profile *line_prof;

static int cmp_line(const void *a, const void *b)
{
	uint32_t x = line_prof->cc[*(const uint32_t *)a].line;
	uint32_t y = line_prof->cc[*(const uint32_t *)b].line;
	return (x > y) - (x < y);
}

void rep_byfile_init(struct rep_byfile *b, const struct profile *p)
{
	uint32_t nfiles = p->files.n;

	/* Counting sort by file. */
	b->start = xcalloc(nfiles + 2, sizeof(*b->start));
	b->cc = xcalloc(p->n_cc + 1, sizeof(*b->cc));
	for (uint32_t i = 0; i < p->n_cc; i++)
		b->start[p->fn[p->cc[i].fn].file + 1]++;
	for (uint32_t f = 0; f < nfiles; f++)
		b->start[f + 1] += b->start[f];
	uint32_t *fill = xcalloc(nfiles + 1, sizeof(*fill));
	memcpy(fill, b->start, nfiles * sizeof(*fill));
	for (uint32_t i = 0; i < p->n_cc; i++)
		b->cc[fill[p->fn[p->cc[i].fn].file]++] = i;
	free(fill);
}

void rep_byfile_free(struct rep_byfile *b)
{
	free(b->start);
	free(b->cc);
}

uint32_t rep_file_lines(const struct profile *p, struct rep_byfile *b,
			uint32_t f, uint32_t **lines_out, int64_t **rows_out,
			int *rc)
{
	unsigned n = p->n_events;
	uint32_t *ccs = b->cc + b->start[f];
	uint32_t nc = b->start[f + 1] - b->start[f];

	line_prof = p;
	qsort(ccs, nc, sizeof(*ccs), cmp_line);
	uint32_t *lines = xcalloc(nc + 1, sizeof(*lines));
	int64_t *rows = rep_absent_rows(nc + 1, n);
	uint32_t nl = 0;
	for (uint32_t i = 0; i < nc; i++) {
		uint32_t line = p->cc[ccs[i]].line;
		if (!nl || lines[nl - 1] != line)
			lines[nl++] = line;
		if (rep_add_row(rows + (size_t)(nl - 1) * n,
			    prof_cc_counts(p, ccs[i]), n))
			*rc = -1;
	}
	*lines_out = lines;
	*rows_out = rows;
	return nl;
}

static char *read_whole(const char *path, size_t *len)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return NULL;
	size_t cap = 1 << 16, n = 0;
	char *buf = xmalloc(cap);
	size_t k;
	while ((k = fread(buf + n, 1, cap - n, f)) > 0) {
		n += k;
		if (n == cap) {
			cap *= 2;
			buf = xreallocarray(buf, cap, 1);
		}
	}
	bool bad = ferror(f);
	fclose(f);
	if (bad) {
		free(buf);
		return NULL;
	}
	*len = n;
	return buf;
}

char *rep_find_source(const struct report_opts *o, const char *name,
		      size_t *len, char **found)
{
	char *buf = read_whole(name, len);
	if (buf) {
		*found = xstrdup(name);
		return buf;
	}
	if (name[0] == '/')
		return NULL;
	for (unsigned i = 0; i < o->n_include; i++) {
		char *path = xasprintf("%s/%s", o->include[i], name);
		buf = read_whole(path, len);
		if (buf) {
			*found = path;
			return buf;
		}
		free(path);
	}
	return NULL;
}

static void warning_banner(FILE *out, const char *msg1, const char *arg1,
			   const char *msg2, const char *arg2,
			   const char *msg3)
{
	const char *at = "@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@";
	fprintf(out, "%s\n@@ WARNING @@ WARNING @@ WARNING @@ WARNING @@ WARNING @@ WARNING @@ WARNING @@\n%s\n",
		at, at);
	fprintf(out, "@ %s%s%s%s%s\n", msg1, arg1, msg2, arg2 ? arg2 : "",
		msg3 ? msg3 : "");
	fprintf(out, "%s\n\n", at);
}

/* Where each source line starts; line k is [ls[k-1], ls[k]).  *NSRC: the
 * line count, an unterminated last line included. */
size_t *rep_line_starts(const char *src, size_t src_len, size_t *nsrc)
{
	size_t n = 0;
	for (size_t i = 0; i < src_len; i++)
		n += src[i] == '\n';
	if (src_len && src[src_len - 1] != '\n')
		n++;
	size_t *ls = xcalloc(n + 2, sizeof(*ls));
	size_t k = 1;
	for (size_t i = 0; i < src_len; i++)
		if (src[i] == '\n')
			ls[k++] = i + 1;
	if (k <= n)
		ls[k] = src_len + 1;	/* the unterminated last line */
	*nsrc = n;
	return ls;
}

/* The banner for a source file changed since the oldest profile. */
static void warn_if_newer(FILE *out, const struct profile *p,
			  const char *path)
{
	struct stat st;

	if (p->have_mtime && !stat(path, &st) &&
	    (st.st_mtim.tv_sec > p->oldest_mtime.tv_sec ||
	     (st.st_mtim.tv_sec == p->oldest_mtime.tv_sec &&
	      st.st_mtim.tv_nsec > p->oldest_mtime.tv_nsec)))
		warning_banner(out, "Source file '", path,
			       "' is newer than the profile data.\n"
			       "@ Annotations may not be correct.", NULL,
			       NULL);
}

/* The source around LINES[I..END) (all within the file), --context lines
 * either side, nearby blocks merged, "-- line N ---" between them. */
static void print_source_blocks(struct printer *pr, const char *src,
				const size_t *ls, size_t nsrc,
				const uint32_t *lines, const int64_t *rows,
				uint32_t i, uint32_t end, struct ann_sums *sums)
{
	FILE *out = pr->out;
	unsigned n = pr->p->n_events;
	uint64_t ctx = pr->o->context;

	while (i < end) {
		uint64_t lo = lines[i] > ctx ? lines[i] - ctx : 1;
		uint64_t hi = lines[i] + ctx;
		uint32_t j = i;
		while (j + 1 < end && lines[j + 1] <= hi + ctx + 1)
			hi = lines[++j] + ctx;
		if (hi > nsrc)
			hi = nsrc;
		if (lo > 1)
			fprintf(out, "-- line %" PRIu64 " ----------------------------------------\n", lo);
		for (uint64_t l = lo; l <= hi; l++) {
			const char *s = src + ls[l - 1];
			size_t len = ls[l] - ls[l - 1] - 1;
			if (i <= j && lines[i] == l) {
				const int64_t *r = rows + (size_t)i * n;
				pr_row(pr, "", r, NULL, s, len);
				rep_add_row(sums->known, r, n);
				i++;
			} else {
				pr_row(pr, "", NULL, NULL, s, len);
			}
		}
		if (hi < nsrc)
			fprintf(out, "-- line %" PRIu64 " ----------------------------------------\n", hi);
	}
}

/* Lines past the end of the file: their counts, then a warning. */
static void print_bogus_lines(struct printer *pr, const char *path,
			      const uint32_t *lines, const int64_t *rows,
			      uint32_t first, uint32_t n_lines,
			      struct ann_sums *sums)
{
	FILE *out = pr->out;
	unsigned n = pr->p->n_events;

	fputc('\n', out);
	for (uint32_t i = first; i < n_lines; i++) {
		char label[48];
		const int64_t *r = rows + (size_t)i * n;
		int l = snprintf(label, sizeof(label),
				 "<bogus line %" PRIu32 ">", lines[i]);
		pr_row(pr, "", r, NULL, label, l);
		rep_add_row(sums->known, r, n);
	}
	fputc('\n', out);
	warning_banner(out, "Information recorded about lines past "
		       "the end of '", path, "'.", NULL, NULL);
}

/* Annotate one file; LINES/ROWS are its cost centres merged by line. */
static void annotate_file(struct printer *pr, const char *path,
			  const char *src, size_t src_len,
			  const uint32_t *lines, const int64_t *rows,
			  uint32_t n_lines, struct ann_sums *sums)
{
	FILE *out = pr->out;
	unsigned n = pr->p->n_events;
	size_t nsrc;
	size_t *ls = rep_line_starts(src, src_len, &nsrc);

	rep_fancy(out, "Annotated source file: ", path);
	warn_if_newer(out, pr->p, path);

	pr_reset(pr);
	for (uint32_t i = 0; i < n_lines; i++)
		pr_widen(pr, rows + (size_t)i * n, NULL);
	pr_settle(pr);
	pr_header(pr, "", "");
	fputc('\n', out);

	uint32_t i = 0;
	if (n_lines && lines[0] == 0) {
		pr_row(pr, "", rows, NULL, "<unknown (line 0)>", 18);
		fputc('\n', out);
		rep_add_row(sums->unknown, rows, n);
		i = 1;
	}
	uint32_t first_bogus = i;
	while (first_bogus < n_lines && lines[first_bogus] <= nsrc)
		first_bogus++;

	print_source_blocks(pr, src, ls, nsrc, lines, rows, i, first_bogus,
			    sums);
	if (first_bogus < n_lines)
		print_bogus_lines(pr, path, lines, rows, first_bogus, n_lines,
				  sums);
	else
		fputc('\n', out);
	free(ls);
}

int rep_annotate_files(struct printer *pr, const uint32_t *chosen,
		       struct ann_sums *sums)
{
	const struct profile *p = pr->p;
	const struct report_opts *o = pr->o;
	unsigned n = p->n_events;
	uint32_t nfiles = p->files.n;

	struct rep_byfile bf;
	rep_byfile_init(&bf, p);
	uint32_t *start = bf.start, *byfile = bf.cc;

	bool *is_chosen = xcalloc(nfiles + 1, sizeof(*is_chosen));
	char **missing = xcalloc(nfiles + 1, sizeof(*missing));
	unsigned n_missing = 0;
	int rc = 0;

	for (const uint32_t *c = chosen; *c != UINT32_MAX; c++) {
		uint32_t f = *c;
		const char *name = p->files.str[f];
		if (!strcmp(name, "???"))
			continue;
		is_chosen[f] = true;
		uint32_t *ccs = byfile + start[f];
		uint32_t nc = start[f + 1] - start[f];
		size_t len;
		char *found = NULL;
		char *src = rep_find_source(o, name, &len, &found);
		if (!src) {
			missing[n_missing++] = (char *)name;
			for (uint32_t i = 0; i < nc; i++)
				if (rep_add_row(sums->unreadable,
					    prof_cc_counts(p, ccs[i]), n))
					rc = -1;
			continue;
		}
		uint32_t *lines;
		int64_t *rows;
		uint32_t nl = rep_file_lines(p, &bf, f, &lines, &rows, &rc);
		annotate_file(pr, found, src, len, lines, rows, nl, sums);
		free(lines);
		free(rows);
		free(src);
		free(found);
	}
	for (uint32_t f = 0; f < nfiles; f++) {
		if (is_chosen[f])
			continue;
		int64_t *dst = strcmp(p->files.str[f], "???") ? sums->below
							      : sums->nofile;
		for (uint32_t k = start[f]; k < start[f + 1]; k++)
			if (rep_add_row(dst, prof_cc_counts(p, byfile[k]), n))
				rc = -1;
	}
	if (n_missing) {
		rep_fancy(pr->out, "Source files that could not be found", NULL);
		for (unsigned i = 0; i < n_missing; i++)
			fprintf(pr->out, "%s\n", missing[i]);
		if (!o->n_include)
			fputs("(use -I DIR to add a directory to search)\n",
			      pr->out);
		fputc('\n', pr->out);
	}
	free(missing);
	free(is_chosen);
	rep_byfile_free(&bf);
	return rc;
}

void rep_print_ann_summary(struct printer *pr, struct ann_sums *s)
{
	static const char *const labels[] = {
		"  annotated: files known & above threshold & readable, line numbers known",
		"  annotated: files known & above threshold & readable, line numbers unknown",
		"unannotated: files known & above threshold & unreadable",
		"unannotated: files known & below threshold",
		"unannotated: files unknown",
	};
	int64_t *rows[] = { s->known, s->unknown, s->unreadable, s->below,
			    s->nofile };
	unsigned n = pr->p->n_events;

	/* Show zeros, not dots, for the empty categories. */
	for (unsigned k = 0; k < 5; k++)
		for (unsigned e = 0; e < n; e++)
			rows[k][e] = prof_val(rows[k][e]);
	rep_fancy(pr->out, "Annotation summary", NULL);
	pr_reset(pr);
	for (unsigned k = 0; k < 5; k++)
		pr_widen(pr, rows[k], NULL);
	pr_settle(pr);
	pr_header(pr, "", "");
	fputc('\n', pr->out);
	for (unsigned k = 0; k < 5; k++)
		pr_row(pr, "", rows[k], NULL, labels[k], strlen(labels[k]));
	fputc('\n', pr->out);
}
