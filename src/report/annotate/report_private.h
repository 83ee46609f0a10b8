/* What the report's parts share: report.c (the printer, the summaries)
 * and report_source.c (the annotated source files).  Not for the rest of
 * the annotator. */
#ifndef CT_REPORT_PRIVATE_H
#define CT_REPORT_PRIVATE_H

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
