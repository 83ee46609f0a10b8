/* What the report's parts share: report.c (the printer, the summaries)
 * and report_source.c (the annotated source files).  Not for the rest of
 * the annotator. */
#ifndef CT_REPORT_PRIVATE_H
#define CT_REPORT_PRIVATE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "report.h"

#define FANCY "--------------------------------------------------------------------------------"

struct printer {
	FILE *out;
	const struct profile *p;
	const struct report_opts *o;
	const int64_t *tot;
	unsigned n;		/* shown columns */
	int *cw, *pw, *cxw, *cyw, *fw;
};


struct ann_sums {
	int64_t *known, *unknown, *unreadable, *below, *nofile;
};

/* Cost centres grouped by file: file f's are cc[start[f]..start[f + 1]). */
struct rep_byfile {
	uint32_t *start, *cc;
};

void rep_byfile_init(struct rep_byfile *b, const struct profile *p);
void rep_byfile_free(struct rep_byfile *b);
/* File F's cost centres merged by line, lines ascending (F's part of
 * B->cc is sorted in place): *LINES and *ROWS (n_events per line, malloc'd)
 * and their number; an overflow sets *RC to -1. */
uint32_t rep_file_lines(const struct profile *p, struct rep_byfile *b,
			uint32_t f, uint32_t **lines, int64_t **rows, int *rc);
/* The source of NAME, as it is or under an -I directory: its bytes
 * (malloc'd, *LEN of them) and the path found (*FOUND), or NULL. */
char *rep_find_source(const struct report_opts *o, const char *name,
		      size_t *len, char **found);
/* Where each line of SRC starts: line k is [ls[k-1], ls[k]); *NSRC lines. */
size_t *rep_line_starts(const char *src, size_t src_len, size_t *nsrc);
/* Does ROW pass a --sort threshold of O against the totals TOT? */
bool rep_passes(const struct report_opts *o, const int64_t *tot,
		const int64_t *row);
/* Sort IDX (rows of N_EVENTS counts in ROWS) by cost in O's sort order,
 * ties by NAMES. */
void rep_sort_by_cost(uint32_t *idx, size_t n, const int64_t *rows,
		      unsigned n_events, const char *const *names,
		      const struct report_opts *o);

/* ROW's (DLmr + DLmw)^2 / Ir as the Badness column prints it, into BUF
 * (at least 32 bytes). */
void rep_badness(const struct report_opts *o, const int64_t *row, char *buf);

void pr_header(struct printer *pr, const char *prefix,
	       const char *suffix);
void pr_reset(struct printer *pr);
void pr_row(struct printer *pr, const char *prefix, const int64_t *row,
	    const int64_t *cum, const char *label, size_t label_len);
void pr_settle(struct printer *pr);
void pr_widen(struct printer *pr, const int64_t *row,
	      const int64_t *cum);
int64_t *rep_absent_rows(size_t nrows, unsigned n);
int rep_add_row(int64_t *dst, const int64_t *src, unsigned n);
int rep_annotate_files(struct printer *pr, const uint32_t *chosen,
		       struct ann_sums *sums);
void rep_fancy(FILE *out, const char *title, const char *arg);
void rep_print_ann_summary(struct printer *pr, struct ann_sums *s);

#endif
