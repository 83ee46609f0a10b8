/* cachetrace-annotate --html: the report as one self-contained HTML page
 * (docs/annotate.md, "HTML report").  The page carries its CSS, its script
 * and its data (a JSON object in a <script type="application/json">); the
 * script draws the interactive views lazily from the data, and the same
 * tables are written as plain HTML for a browser without scripts. */
#ifndef CT_ANNOTATE_HTML_H
#define CT_ANNOTATE_HTML_H

#include <stdbool.h>
#include <stdio.h>

#include "calltree.h"
#include "profile.h"
#include "report.h"

struct html_opts {
	const struct report_opts *ro;	/* events shown, sort, thresholds,
					 * -I directories, the inputs */
	bool diff;			/* the profile is B - A */
	int event;			/* the first event shown; -1: the
					 * first sort event */
	struct ctree *folded;		/* folded stacks (then P is empty),
					 * or NULL */
	const char *folded_event;	/* the name of their counts */
};

/* Write the page.  Returns 0, -1 if a count overflowed (as report_print)
 * or OUT failed (errno set). */
int html_write(FILE *out, const struct profile *p, const struct html_opts *o);

/* The page of one profile (DATA, LEN bytes, called NAME), with the
 * annotator's default options: cachetrace --html.  Returns 0, 1 when the
 * profile cannot be read (ERR says why), -1 as html_write. */
int html_write_profile(FILE *out, const char *data, size_t len,
		       const char *name, struct prof_error *err);

#endif
