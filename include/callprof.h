/* A call-stack profile as the tracer collects it (src/engine/callstack.c)
 * and the writers read it (src/report/callgrind.c): functions, calling
 * contexts, self-cost rows per (context, pc) and call edges with their
 * inclusive costs.  The collector owns everything; the writers only read. */
#ifndef CT_CALLPROF_H
#define CT_CALLPROF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "symbols.h"

/* A function: the symbol containing a pc, or a pc in no symbol. */
struct cs_func {
	uint64_t low, high;	/* [low, high); high == low + 1 when unknown */
	const char *name;
	uint32_t id;		/* 0, 1, ... in creation order; records of
				 * one function (one seen as a bare pc before
				 * its library was known) share one */
	/* The collector's own: */
	char *own_name;		/* "0x..." for pcs without a symbol */
	bool plt;		/* a PLT stub: skipped */
	bool pop_on_jump;	/* _dl_runtime_resolve*: popped by its jump */
};

/* A calling context: a node of the calling-context tree. */
struct cs_node {
	struct cs_node *parent;
	struct cs_func *func;	/* NULL for the root */
	unsigned level;		/* 1, or 2 for a recursive activation */
	unsigned depth;		/* 0 for the root */
};

/* The self costs of one pc in one context. */
struct cs_row {
	struct cs_node *node;
	uint64_t pc;
	uint64_t *cost;		/* n_events */
	/* The function the row is written under: node->func, or for the
	 * root the function of pc (filled by callstack_profile). */
	struct cs_func *owner;
};

/* A call edge, with Callgrind's inclusive cost. */
struct cs_edge {
	struct cs_node *from, *to;
	uint64_t site;		/* the call instruction's pc */
	uint64_t target;	/* the pc called (with to->level, the key) */
	uint64_t calls;
	uint64_t *incl;		/* n_events */
	struct cs_func *owner;	/* as cs_row's, of from at site */
};

/* The recursion level the owner of NODE is written with. */
static inline unsigned cs_owner_level(const struct cs_node *node)
{
	return node->func ? node->level : 1;
}

struct callprof {
	unsigned n_events;
	struct symbols *syms;		/* files and lines of the pcs */
	const struct cs_row *rows;	/* in first-seen order */
	size_t n_rows;
	struct cs_edge *const *edges;	/* in first-seen order */
	size_t n_edges;
	size_t n_funcs;			/* every cs_func.id is below it */
};

#endif
