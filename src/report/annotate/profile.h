/* cachetrace-annotate: a profile in memory, read from Cachegrind-format or
 * Callgrind-format files (ours or valgrind's), merged or differenced,
 * written back out.
 *
 * Cost centres are (file, function, line) triples; several inputs are
 * summed into one profile (or, for a diff, B - A).  Names are interned, so a
 * cost centre is two 32-bit ids plus a row of n_events int64 counts in one
 * flat array.  A count of PROF_ABSENT means "this event cannot happen here"
 * (a `.` or a missing trailing count in every input line for the centre);
 * it reads as zero everywhere except in the annotated output. */
#ifndef CT_ANNOTATE_PROFILE_H
#define CT_ANNOTATE_PROFILE_H

#include <regex.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

#include "hashtab.h"

#define PROF_ABSENT INT64_MIN
/* Limits that keep a hostile input from costing more than its size. */
#define PROF_MAX_EVENTS 256
#define PROF_MAX_LINE (1u << 20)	/* bytes in one input line */

struct prof_fn {
	uint32_t file;		/* id in prof.files */
	uint32_t name;		/* id in prof.fns */
	/* The function this is a part of: itself, or for code of another
	 * file inlined into it (Callgrind's fi=/fe=), the (fl= file, name)
	 * function.  Call edges are between owners. */
	uint32_t owner;
};

/* A Callgrind call edge: CALLS calls from CALLER to CALLEE (both owners,
 * indices in prof.fn), whose inclusive costs are a row of prof.call_counts. */
struct prof_call {
	uint32_t caller, callee;
	int64_t calls;
};

struct prof_cc {
	uint32_t fn;		/* index in prof.fn */
	uint32_t line;
};

/* A `s/RE/REPL/[gi]` name rewrite (--mod-filename, --mod-funcname). */
struct prof_mod {
	bool set;
	bool global;
	regex_t re;
	char *repl;
};

struct profile {
	unsigned n_events;
	char **events;

	char **desc;		/* `desc:` lines, union over the inputs */
	unsigned n_desc;
	char **cmds;		/* `cmd:` of each input, duplicates dropped */
	unsigned n_cmds;

	/* Names, ids in first-seen order: .str[id], .n. */
	struct strintern files, fns;

	struct prof_fn *fn;
	uint32_t n_fn, cap_fn;
	struct hashtab fn_index;	/* (file, name) -> index in fn */

	struct prof_cc *cc;
	int64_t *counts;	/* n_cc rows of n_events */
	uint32_t n_cc, cap_cc;
	struct hashtab cc_index;	/* (fn, line) -> index in cc */

	/* Call edges, from Callgrind-format inputs. */
	bool has_calls;		/* some input was in Callgrind format */
	struct prof_call *call;
	int64_t *call_counts;	/* n_call rows of n_events */
	uint32_t n_call, cap_call;
	struct hashtab call_index;	/* (caller, callee) -> index in call */

	/* Name rewrites, applied to every name as it is read. */
	struct prof_mod mod_file, mod_fn;
	uint32_t *file_map, n_file_map;	/* raw file id + 1 -> final id + 1 */
	uint32_t *fn_map, n_fn_map;
	struct strintern raw_files, raw_fns;

	struct sampled *sampled;	/* --sample's statistics (sampled.h);
					 * NULL: none */

	unsigned n_inputs;
	bool have_mtime;
	struct timespec oldest_mtime;	/* of the input files, for warnings */
};

/* Where a read failed: "NAME:LINE: MSG". */
struct prof_error {
	const char *name;
	unsigned long long line;
	char msg[256];
};

void prof_init(struct profile *p);
void prof_free(struct profile *p);

/* Compile "s/RE/REPL/[gi]" (any delimiter after s).  Returns 0, or -1 with a
 * message in ERR. */
int prof_mod_compile(struct prof_mod *m, const char *spec, char *err,
		     size_t errlen);
/* Apply M to S; returns a malloc'd string. */
char *prof_mod_apply(const struct prof_mod *m, const char *s);

/* Read one input and add it, times SIGN (+1, or -1 for the A side of a diff),
 * into P.  FD is read to the end or to the first error; NAME is only used in
 * messages.  CHECK_SUMMARY: the summary: line must be present and equal the
 * file's own totals.  Returns 0, or -1 with ERR filled in. */
int prof_read_fd(struct profile *p, int fd, const char *name, int sign,
		 bool check_summary, struct prof_error *err);
/* The same on a buffer (the fuzz target). */
int prof_read_mem(struct profile *p, const char *data, size_t len,
		  const char *name, int sign, bool check_summary,
		  struct prof_error *err);

static inline const int64_t *prof_call_counts(const struct profile *p,
					       uint32_t i)
{
	return p->call_counts + (size_t)i * p->n_events;
}

static inline const int64_t *prof_cc_counts(const struct profile *p,
					     uint32_t i)
{
	return p->counts + (size_t)i * p->n_events;
}

static inline int64_t prof_val(int64_t c)
{
	return c == PROF_ABSENT ? 0 : c;
}

/* The index of the event called NAME (N bytes), or -1. */
int prof_find_event(const struct profile *p, const char *name, size_t n);

/* Totals of all cost centres; returns -1 on overflow. */
int prof_totals(const struct profile *p, int64_t *tot);

/* Indices of all cost centres, sorted by file name, function name, line. */
uint32_t *prof_sorted_ccs(const struct profile *p);

/* Write P as a Cachegrind-format profile (cg_merge -o): self costs only,
 * call edges are left out.  Returns 0 or -1
 * with errno set. */
int prof_write(const struct profile *p, FILE *out);

#endif
