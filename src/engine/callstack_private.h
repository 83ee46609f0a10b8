/* What callstack.c (contexts, shadow stacks, the API) and
 * callstack_funcs.c (the function a pc belongs to, and its name) share.
 * Not for the rest of the tracer. */
#ifndef CT_CALLSTACK_PRIVATE_H
#define CT_CALLSTACK_PRIVATE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "callprof.h"
#include "callstack.h"
#include "hashtab.h"

#define MAX_UNWIND 512
#define REC_LEVELS 2		/* Callgrind's --separate-recs default */
#define NO_SP UINT64_MAX	/* a frame whose slot is unknown */

/* One active function on the shadow stack. */
struct frame {
	struct cs_node *node;
	struct cs_edge *edge;	/* NULL when found by unwinding */
	uint64_t sp;		/* its return-address slot, NO_SP unknown */
	uint64_t ret;		/* the return address expected, 0 unknown */
};

/* A pc's function, as the funcs map holds it. */
struct pc_func {
	uint64_t pc;
	struct cs_func *func;
};

/* A function active on a thread's stack, and how many times. */
struct activation {
	const struct cs_func *func;
	unsigned count;
};

/* One stepped thread's shadow stack. */
struct thread {
	pid_t tid;
	struct frame *frames;
	uint64_t *snaps;	/* n_events per frame: totals at its call */
	size_t depth, cap;
	struct cs_node *cur;	/* the top frame's node, or the root */
	uint64_t *total;	/* running totals of this thread's events */
	uint64_t expect_pc;	/* where its last step went; 0 unknown */
	/* Inside a skipped PLT stub: its costs go to SKIP_SITE. */
	bool skipping;
	uint64_t skip_site, skip_sp, skip_ret;
	/* The activations of each function on this stack (per thread, as
	 * Callgrind's recursion levels), found through ACTIVE_MAP by func. */
	struct activation *active;
	uint32_t n_active, cap_active;
	struct hashtab active_map;
};

struct callstack {
	unsigned n_events;
	struct symbols *syms;

	/* Each table: entries in first-seen order, found through its map
	 * (hashtab.h).  Records that others point to are allocated one by
	 * one and never move; the arrays hold pointers to them. */
	struct pc_func *pc_funcs;	/* pc -> the function containing it */
	uint32_t n_pc_funcs, cap_pc_funcs;
	struct hashtab pc_func_map;
	uint32_t n_funcs;		/* cs_func ids handed out */
	struct cs_node **nodes;		/* (parent, func, level) -> node */
	uint32_t n_nodes, cap_nodes;
	struct hashtab node_map;
	struct cs_edge **edges;		/* (from, site, target, level) */
	uint32_t n_edges, cap_edges;
	struct hashtab edge_map;
	struct cs_row *rows;		/* (node, pc) -> self costs */
	uint32_t n_rows, cap_rows;
	struct hashtab row_map;
	struct cs_node root;
	struct callprof view;		/* handed out by callstack_profile */

	/* Everything we allocate, freed at callstack_free. */
	void **allocs;
	size_t n_allocs, cap_allocs;
	uint64_t *pool;		/* counters handed out in chunks */
	size_t pool_left;

	struct thread **threads;
	size_t n_threads;
	/* Called before unwinding a thread: the engine makes the real
	 * thread's registers and memory current (callstack_set_sync). */
	void (*sync)(void *ctx, pid_t tid);
	void *sync_ctx;
	struct thread *last;	/* the thread of the last step */

	/* The row handed out by callstack_row, added to the stepping
	 * thread's context at its callstack_step (callstack_row does not
	 * say which thread steps). */
	uint64_t *pending;
	uint64_t pending_pc;
	bool has_pending;

	bool refreshed;		/* sym_refresh done in this window */
	/* Pcs in no module to pass over before the next sym_refresh for
	 * one, and the gap, doubled by each refresh that finds none. */
	uint32_t unmapped_skip, unmapped_gap;
	unw_addr_space_t as;
	unsigned long unwinds;	/* for tests and debugging */
};

/* Append one element to a growing array (rare: new records). */
#define APPEND(arr, n, cap) \
	(((n) == (cap) ? (void)((cap) = (cap) ? (cap) * 2 : 256, \
		(arr) = xreallocarray((arr), (cap), sizeof(*(arr)))) : (void)0), \
	 &(arr)[(n)++])

struct cs_func *cs_func_of(struct callstack *cs, pid_t tid, uint64_t pc);
void *cs_keep(struct callstack *cs, void *p);
void cs_name_late_funcs(struct callstack *cs);
void *cs_zalloc(struct callstack *cs, size_t size);

#endif
