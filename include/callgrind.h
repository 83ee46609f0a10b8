/* Writers of a call-stack profile (include/callprof.h, collected by the
 * tracer's callstack_profile): Callgrind's format and folded stacks. */
#ifndef CT_CALLGRIND_H
#define CT_CALLGRIND_H

#include <stdio.h>

#include "callprof.h"

/* Write a Callgrind-format profile (version: 1, creator, cmd:,
 * positions: line, events:, ob=/fl=/fn=/cob=/cfi=/cfn=/calls= with name
 * compression, inclusive call costs, summary:/totals:).  DESC lines as in
 * cgout_meta.  Returns 0 or -1 with errno set. */
int callgrind_write(const struct callprof *cp, FILE *out,
		    const char *const *desc, const char *cmd,
		    const char *const *events);

/* Write folded stacks, "outer;...;inner COUNT" per distinct stack, COUNT
 * the self cost of EVENT (index into the events) in that context.
 * Returns 0 or -1 with errno set. */
int callgrind_write_folded(const struct callprof *cp, FILE *out,
			   unsigned event);

#endif
