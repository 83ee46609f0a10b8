/* What the parts of the profile reader share: profile.c (the profile,
 * its lookups, name rewrites, writing), profread.c (the reader and the
 * Cachegrind format), profread_cg.c (the Callgrind format).  Not for the
 * rest of the annotator. */
#ifndef CT_PROFILE_PRIVATE_H
#define CT_PROFILE_PRIVATE_H

#include <stdbool.h>
#include <stdint.h>

#include "error.h"
#include "hashtab.h"
#include "profile.h"

enum rd_state {
	RD_HEADER,	/* desc: lines, then cmd: */
	RD_EVENTS,	/* events: */
	RD_BODY,	/* fl=, fn=, counts, summary: */
	RD_DONE,	/* after summary: only blank lines and comments */
};


/* Callgrind's compressed names: "(N) name" defines N, "(N)" uses it. */
struct idmap {
	uint64_t *key;
	uint32_t *val;		/* id + 1, 0 = not defined yet */
	uint32_t n, cap;
	struct hashtab map;	/* key -> index */
};


struct reader {
	struct profile *p;
	const char *name;
	int sign;
	bool check_summary;
	struct prof_error *err;
	unsigned long long lineno;
	enum rd_state state;
	bool have_file;
	uint32_t file;
	int64_t fn;		/* -1 before the first fn= */
	int64_t *row;		/* one parsed count line */
	int64_t *tot;		/* this input's own totals */
	int64_t *summary;
	unsigned long long summary_line;

	/* Callgrind format. */
	bool cg;		/* the input is in Callgrind format */
	bool cg_body;		/* a body line has been read */
	bool have_events;
	bool have_positions;
	bool done;		/* after totals: */
	unsigned n_pos;		/* positions at the start of a cost line */
	int line_pos;		/* which of them is the line, -1: none */
	uint64_t last_pos[3];	/* for relative positions */
	struct idmap ids[3];	/* name compression: fl, fn, ob */
	int64_t cur_file;	/* of the last fl=, fi= or fe=; -1: none */
	int64_t fn_name;	/* of the last fn=; -1: none */
	int64_t cfile;		/* cfi=/cfl= for the next cfn=; -1: none */
	int64_t callee;		/* from cfn=, for the next calls=; -1: none */
	bool pending;		/* calls= read, its cost line not yet */
	int64_t pending_calls;
	unsigned long long pending_line;
	int64_t *totals;
	unsigned long long totals_line;
};


int cg_finish(struct reader *r);
bool cg_is_key(const char *s, const char *end);
int cg_line(struct reader *r, const char *s, size_t len);
struct prof_call *prof_call_lookup(struct profile *p, uint32_t caller,
				     uint32_t callee, int64_t **row);
int64_t *prof_cc_lookup(struct profile *p, uint32_t fn, uint32_t line);
uint32_t prof_fn_lookup(struct profile *p, uint32_t file, uint32_t name);
uint32_t prof_fn_lookup_owned(struct profile *p, uint32_t file,
			      uint32_t name, uint32_t owner);
uint32_t prof_map_name(struct strintern *final, struct strintern *raw,
		       const struct prof_mod *m, uint32_t **map,
		       uint32_t *n_map, const char *s, size_t n);
int rd_add_counts(struct reader *r, int64_t *dst, int64_t *tot);
void rd_add_unique(char ***v, unsigned *n, const char *s,
		   const char *end);
int rd_check_name(struct reader *r, const char *what, const char *s,
		  const char *end);
int rd_count_line(struct reader *r, const char *s, const char *end);
int rd_events(struct reader *r, const char *s, const char *end);
const char *rd_excerpt(char *buf, size_t size, const char *s, size_t n);
int rd_fail(struct reader *r, const char *fmt, ...) CT_FMT(2, 3);
bool rd_has_prefix(const char *s, const char *end, const char *pfx);
uint32_t *rd_idmap_slot(struct idmap *m, uint64_t key);
int rd_parse_counts(struct reader *r, const char *s, const char *end,
		    int64_t *row);

/* White space, words: inline, the readers' inner loops use them. */
static inline bool rd_is_ws(char c)
{
	return c == ' ' || c == '\t';
}

static inline const char *rd_skip_ws(const char *s, const char *end)
{
	while (s < end && rd_is_ws(*s))
		s++;
	return s;
}

/* The end of the word (a run of non-white bytes) that starts at S. */
static inline const char *rd_word_end(const char *s, const char *end)
{
	while (s < end && !rd_is_ws(*s))
		s++;
	return s;
}

#endif
