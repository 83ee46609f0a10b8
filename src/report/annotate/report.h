/* cachetrace-annotate: the annotated report, in the layout of cg_annotate
 * 3.21+ (Metadata, Summary, File:function and Function:file summaries,
 * annotated source files, Annotation summary). */
#ifndef CT_ANNOTATE_REPORT_H
#define CT_ANNOTATE_REPORT_H

#include <stdbool.h>
#include <stdint.h>
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
 * bytes); returns its length.  Inline: the call trees use it too, and the
 * fuzz target links them without the report. */
static inline int report_commify(char *buf, int64_t v)
{
	char tmp[32];
	uint64_t u = v < 0 ? -(uint64_t)v : (uint64_t)v;
	int n = 0, digits = 0, o = 0;

	do {
		if (digits && digits % 3 == 0)
			tmp[n++] = ',';
		tmp[n++] = '0' + u % 10;
		u /= 10;
		digits++;
	} while (u);
	if (v < 0)
		tmp[n++] = '-';
	while (n)
		buf[o++] = tmp[--n];
	buf[o] = '\0';
	return o;
}


int report_print(FILE *out, const struct profile *p,
		 const struct report_opts *o);

/* The defaults of cachetrace-annotate's options into O: every event shown
 * and sorted on in the file's order, THRESHOLD percent for the first, the
 * annotation on with 8 lines of context, percentages; with BADNESS the
 * Badness column when the profile has Ir, DLmr and DLmw.  O->show, sort
 * and sort_threshold are malloc'd.  Returns whether Badness is on. */
bool report_opts_defaults(struct report_opts *o, const struct profile *p,
			  double threshold, bool badness);

#endif
