/* One memory access of one instruction: what the decoder produces and the
 * cache models consume.  Its own header so that the models see the access,
 * never the decoder's API. */
#ifndef CT_ACCESS_H
#define CT_ACCESS_H

#include <stdint.h>

enum access_kind {
	ACC_READ,	/* load: Cachegrind's Dr */
	ACC_WRITE,	/* store: Dw */
	ACC_MODIFY,	/* read-modify-write of one location (add [m],r; inc [m];
			 * xchg; cmpxchg; lock-prefixed): ONE Dr, no Dw */
	ACC_PREFETCH,	/* prefetch*, clflush*: touches a line, reads nothing;
			 * Cachegrind ignores these (no event) */
	ACC_NT_WRITE,	/* non-temporal store (movnt*, maskmovdqu): Dw for
			 * Cachegrind, a hint for models that care */
};

struct mem_access {
	uint64_t addr;
	uint32_t size;		/* bytes; may exceed a cache line (fxsave: 512) */
	uint8_t kind;		/* enum access_kind */
};

#endif
