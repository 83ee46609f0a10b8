/* cachetrace-annotate: the annotated report, in the layout of cg_annotate
 * 3.21+ (Metadata, Summary, File:function and Function:file summaries,
 * annotated source files, Annotation summary). */
#ifndef CT_ANNOTATE_REPORT_H
#define CT_ANNOTATE_REPORT_H

#include <stdbool.h>
#include <stdio.h>

#include "profile.h"

struct report_opts {
	unsigned n_show;
	unsigned *show;		/* event indices; n_events is "Badness" */
	unsigned n_sort;
	unsigned *sort;
	double *sort_threshold;	/* per sort event, percent; < 0: none */
	bool annotate;
	bool percent;
	unsigned context;
	char **include;
	unsigned n_include;
	const char *invocation;
	const char *inputs_label;	/* "Data file:", "Files merged:", ... */
	const char *inputs;
	int badness_ir, badness_dlmr, badness_dlmw;	/* -1 when off */
};

/* Print the whole report.  Returns 0, or -1 if a count overflowed. */
/* V with a comma every three digits ("-1,234,567") into BUF (at least 32
 * bytes); returns its length. */
int report_commify(char *buf, int64_t v);

int report_print(FILE *out, const struct profile *p,
		 const struct report_opts *o);

#endif
