/* Writing profiles in Cachegrind's format, and the end-of-run summary.
 *
 * Format (Cachegrind manual, "Cachegrind Output File Format"):
 *   desc: ...          one or more, free text (cache geometry, notes)
 *   cmd: COMMAND
 *   events: EV1 EV2 ...
 *   fl=FILE            then fn=FN, then "LINE C1 C2 ..." lines
 *   summary: T1 T2 ... equal to the column totals
 * Cost centres with the same (file, fn, line) are merged; files are written
 * sorted by name, functions within a file by name, lines ascending; a line
 * whose counts are all zero is omitted.  A newline inside desc:, cmd:, fl=
 * or fn= text is written as the two characters "\n" (cgout_put_text). */
#ifndef CT_CGOUT_H
#define CT_CGOUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "cgsummary.h"
#include "costs.h"
#include "symbols.h"

struct cgout_meta {
	const char *const *desc;	/* NULL-terminated `desc:` lines */
	const char *cmd;		/* the command line, space separated */
	unsigned n_events;
	const char *const *events;	/* event names */
};

/* Resolve every pc of COSTS with SYMS, aggregate per (file, fn, line) and
 * write the profile to OUT.  TOTALS (n_events counters) receives the
 * summary.  Returns 0 or -1 with errno set (write error). */
int cgout_write(FILE *out, const struct cgout_meta *meta,
		const struct cost_table *costs, struct symbols *syms,
		uint64_t *totals);

/* The seam under cgout_write, for callers (and tests) that resolved the
 * pcs themselves: one cost centre per element, merged and sorted here
 * (CCS is reordered).  Each row has meta->n_events counters. */
struct cgout_cc {
	struct src_loc loc;
	const uint64_t *row;
};

int cgout_write_resolved(FILE *out, const struct cgout_meta *meta,
			 struct cgout_cc *ccs, size_t n_ccs,
			 uint64_t *totals);

/* Write S with each newline as the two characters "\n" and nothing else
 * changed: for every line of a profile that carries outside text (names,
 * the command line), so that text can never start a line of its own. */
void cgout_put_text(FILE *out, const char *s);

/* Expand %p (PID), %q{VAR} (environment) and %n (a sequence number) in a
 * file name pattern as valgrind does; %% is a percent sign.  Returns a malloc'd string, or NULL
 * with a message in ERR (bad %-sequence, unset variable). */
char *cgout_expand_name(const char *pattern, int pid, char *err,
			size_t errlen);
/* Would cgout_expand_name(PATTERN, ...) work?  0, or -1 with the message
 * in ERR; nothing counted (%n). */
int cgout_check_name(const char *pattern, char *err, size_t errlen);

#endif
