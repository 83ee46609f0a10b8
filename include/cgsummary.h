/* Cachegrind's end-of-run summary (src/report/cgsummary.c). */
#ifndef CT_CGSUMMARY_H
#define CT_CGSUMMARY_H

#include <stdint.h>
#include <stdio.h>

/* Print the end-of-run summary in Cachegrind's layout ("I refs:",
 * "I1  misses:", ..., "Branches:", "Mispredicts:", "Mispred rate:") for
 * whichever of the standard events are present, each line prefixed with
 * PREFIX (e.g. "==1234== "). */
void cgout_print_summary(FILE *out, const char *prefix, unsigned n_events,
			 const char *const *events, const uint64_t *totals);

#endif
