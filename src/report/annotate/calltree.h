/* cachetrace-annotate: call graphs and call trees.
 *
 * A call graph comes from a profile's Callgrind call edges: per function
 * (owner), its self cost and its inclusive cost.  A call tree is a tree of
 * frames, each with one count (of one event): the top-down tree from the
 * roots, or the reverse ("blame") tree from one function up through its
 * callers.  From a call graph, trees are approximations beyond one level
 * (see docs/annotate.md); from folded stacks they are exact.  Trees are
 * printed as text or drawn as an SVG flame graph. */
#ifndef CT_ANNOTATE_CALLTREE_H
#define CT_ANNOTATE_CALLTREE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "profile.h"

struct cgraph {
	const struct profile *p;
	int64_t *self;		/* p->n_fn rows of n_events; owners only */
	int64_t *incl;		/* likewise */
	uint32_t *out_start, *out_edge;	/* edges (p->call) by caller */
	uint32_t *in_start, *in_edge;	/* by callee */
	bool *called;		/* has a caller other than itself */
};

/* Returns 0, or -1 if a count overflowed. */
int cgraph_build(struct cgraph *g, const struct profile *p);
void cgraph_free(struct cgraph *g);

/* The displayed name of a function: Callgrind's context-sensitive names
 * ("f'caller'caller2", "f'2") lose their context. */
size_t cgraph_base_len(const char *name);

#define CT_NONE UINT32_MAX

struct ctree_node {
	char *name;
	int64_t self;		/* folded stacks: the count of this stack */
	int64_t val;		/* inclusive, in this context */
	uint32_t parent, child, last, next;
	uint32_t depth;
};

struct ctree {
	struct ctree_node *n;	/* n[0] is the root */
	uint32_t n_nodes, cap;
	struct hashtab map;	/* (parent, name) -> node */
	bool truncated;		/* stopped at CTREE_MAX_NODES */
};

#define CTREE_MAX_NODES 500000u
#define CTREE_MAX_DEPTH 1024u

void ctree_init(struct ctree *t, const char *root);
void ctree_free(struct ctree *t);

/* The top-down tree from the roots of G (ROOT is named by ctree_init), or
 * with FUNC the reverse tree of FUNC's callers (FUNC is the root).  Counts
 * of event EV; frames below MIN_FRAC of the root's count are left out.
 * Returns 0, or -1 when no function is called FUNC. */
int ctree_from_graph(struct ctree *t, const struct cgraph *g, unsigned ev,
		     const char *func, double min_frac);

/* Add folded stacks ("a;b;c COUNT" lines) to T.  Returns 0, or -1 with ERR
 * filled in. */
int ctree_read_folded(struct ctree *t, const char *data, size_t len,
		      const char *name, struct prof_error *err);
/* After the last ctree_read_folded: the inclusive counts. */
void ctree_finish_folded(struct ctree *t);
/* The reverse tree of FUNC's callers from the folded-stack tree FWD, into
 * T (initialised with FUNC as its root).  Returns 0, or -1 when FUNC is in
 * no stack. */
int ctree_reverse(struct ctree *t, const struct ctree *fwd, const char *func);

/* Does DATA look like folded stacks rather than a profile? */
bool ctree_is_folded(const char *data, size_t len);

/* Print T as an indented list, children by count, down to THRESHOLD
 * percent of the root. */
void ctree_print(FILE *out, struct ctree *t, const char *title,
		 const char *event, double threshold, bool percent);

struct svg_opts {
	const char *title;
	const char *event;
	bool inverted;		/* root at the top (the blame tree) */
	unsigned width;
};

/* Draw T as a self-contained SVG flame graph.  Returns 0, or -1 if OUT
 * failed. */
/* Reorder every node's children: by count, or by name (calltree.c). */
void ctree_sort_children(struct ctree *t, bool by_name);
/* flamegraph.c */
int ctree_write_svg(FILE *out, struct ctree *t, const struct svg_opts *o);
/* A frame's colour: flamegraph.pl's "hot" palette from a hash of NAME. */
void ctree_colour(const char *name, int *r, int *g, int *b);
/* The length of the valid UTF-8 sequence (allowed in XML 1.0) at U, N
 * bytes left; 0 when it is not one. */
size_t markup_utf8_len(const unsigned char *u, size_t n);
/* S escaped for XML and HTML text and attributes; bytes that are not
 * valid UTF-8, or control characters, become '?'. */
void markup_put(FILE *out, const char *s, size_t n);

#endif
