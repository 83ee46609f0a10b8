/* Reading, merging and writing Cachegrind-format profiles.
 *
 * The grammar (Cachegrind manual, "Cachegrind Output File Format"), read
 * strictly:
 *   file     ::= desc* cmd events body summary
 *   desc     ::= "desc:" ws* text
 *   cmd      ::= "cmd:" ws* text
 *   events   ::= "events:" ws* name (ws+ name)* ws*
 *   body     ::= ("fl=" name | "fn=" name | line (ws+ count)* ws*)*
 *   summary  ::= "summary:" ws* count (ws+ count)* ws*
 *   count    ::= "-"? digits | "."
 * Blank lines and lines starting with '#' may appear anywhere.  A `.` and a
 * missing trailing count are zero; counts may be negative (cg_diff output).
 * A fn= needs an fl= before it, and counts need a fn=.  The first error
 * stops the read: errors are "NAME:LINE: message".
 *
 * Speed: one 2 MiB buffer filled by read(2), lines found with memchr, counts
 * parsed by hand, names interned once, cost centres found by one hash probe
 * into flat arrays.  Nothing is allocated per count line except when the
 * arrays grow. */
#include "profile.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "error.h"

#define READ_BUF (2u * PROF_MAX_LINE)

/* ---- the profile -------------------------------------------------------- */

void prof_init(struct profile *p)
{
	memset(p, 0, sizeof(*p));
}

void prof_free(struct profile *p)
{
	for (unsigned i = 0; i < p->n_events; i++)
		free(p->events[i]);
	free(p->events);
	for (unsigned i = 0; i < p->n_desc; i++)
		free(p->desc[i]);
	free(p->desc);
	for (unsigned i = 0; i < p->n_cmds; i++)
		free(p->cmds[i]);
	free(p->cmds);
	strintern_free(&p->files);
	strintern_free(&p->fns);
	strintern_free(&p->raw_files);
	strintern_free(&p->raw_fns);
	free(p->fn);
	hashtab_free(&p->fn_index);
	free(p->cc);
	free(p->counts);
	hashtab_free(&p->cc_index);
	free(p->call);
	free(p->call_counts);
	hashtab_free(&p->call_index);
	free(p->file_map);
	free(p->fn_map);
	if (p->mod_file.set) {
		regfree(&p->mod_file.re);
		free(p->mod_file.repl);
	}
	if (p->mod_fn.set) {
		regfree(&p->mod_fn.re);
		free(p->mod_fn.repl);
	}
	memset(p, 0, sizeof(*p));
}

static uint64_t fn_hash(const void *ctx, uint32_t i)
{
	const struct profile *p = ctx;
	return hash_pair(p->fn[i].file, p->fn[i].name);
}

/* The function (FILE, NAME), created with OWNER (UINT32_MAX: itself) if
 * new. */
static uint32_t fn_lookup_owned(struct profile *p, uint32_t file,
				uint32_t name, uint32_t owner)
{
	struct hashtab_probe pr;
	for (uint32_t i = hashtab_first(&p->fn_index, hash_pair(file, name), &pr);
	     i != HASHTAB_NONE; i = hashtab_next(&p->fn_index, &pr))
		if (p->fn[i].file == file && p->fn[i].name == name)
			return i;
	if (p->n_fn == p->cap_fn) {
		p->cap_fn = p->cap_fn ? p->cap_fn * 2 : 256;
		p->fn = xreallocarray(p->fn, p->cap_fn, sizeof(*p->fn));
	}
	p->fn[p->n_fn] = (struct prof_fn){
		.file = file, .name = name,
		.owner = owner == UINT32_MAX ? p->n_fn : owner,
	};
	hashtab_insert(&p->fn_index, &pr, p->n_fn, fn_hash, p);
	return p->n_fn++;
}

static uint32_t fn_lookup(struct profile *p, uint32_t file, uint32_t name)
{
	return fn_lookup_owned(p, file, name, UINT32_MAX);
}

static uint64_t call_hash(const void *ctx, uint32_t i)
{
	const struct profile *p = ctx;
	return hash_pair(p->call[i].caller, p->call[i].callee);
}

/* The edge CALLER -> CALLEE, created with no calls and all-absent costs if
 * new; NULL when there are too many. */
static struct prof_call *call_lookup(struct profile *p, uint32_t caller,
				     uint32_t callee, int64_t **row)
{
	if (p->n_call >= HASHTAB_MAX_ENTRIES)
		return NULL;
	struct hashtab_probe pr;
	for (uint32_t i = hashtab_first(&p->call_index, hash_pair(caller, callee),
					&pr);
	     i != HASHTAB_NONE; i = hashtab_next(&p->call_index, &pr)) {
		if (p->call[i].caller == caller && p->call[i].callee == callee) {
			*row = p->call_counts + (size_t)i * p->n_events;
			return &p->call[i];
		}
	}
	if (p->n_call == p->cap_call) {
		p->cap_call = p->cap_call ? p->cap_call * 2 : 256;
		p->call = xreallocarray(p->call, p->cap_call, sizeof(*p->call));
		p->call_counts = xreallocarray(p->call_counts,
					       (size_t)p->cap_call * p->n_events,
					       sizeof(*p->call_counts));
	}
	p->call[p->n_call] = (struct prof_call){ caller, callee, 0 };
	*row = p->call_counts + (size_t)p->n_call * p->n_events;
	for (unsigned e = 0; e < p->n_events; e++)
		(*row)[e] = PROF_ABSENT;
	hashtab_insert(&p->call_index, &pr, p->n_call, call_hash, p);
	return &p->call[p->n_call++];
}

static uint64_t cc_hash(const void *ctx, uint32_t i)
{
	const struct profile *p = ctx;
	return hash_pair(p->cc[i].fn, p->cc[i].line);
}

/* The counts row of (fn, line), created all-absent if new; NULL when the
 * profile already holds the most cost centres we can index. */
static int64_t *cc_lookup(struct profile *p, uint32_t fn, uint32_t line)
{
	if (p->n_cc >= HASHTAB_MAX_ENTRIES)
		return NULL;
	struct hashtab_probe pr;
	for (uint32_t i = hashtab_first(&p->cc_index, hash_pair(fn, line), &pr);
	     i != HASHTAB_NONE; i = hashtab_next(&p->cc_index, &pr)) {
		if (p->cc[i].fn == fn && p->cc[i].line == line)
			return p->counts + (size_t)i * p->n_events;
	}
	if (p->n_cc == p->cap_cc) {
		p->cap_cc = p->cap_cc ? p->cap_cc * 2 : 1024;
		p->cc = xreallocarray(p->cc, p->cap_cc, sizeof(*p->cc));
		p->counts = xreallocarray(p->counts,
					  (size_t)p->cap_cc * p->n_events,
					  sizeof(*p->counts));
	}
	p->cc[p->n_cc] = (struct prof_cc){ .fn = fn, .line = line };
	int64_t *row = p->counts + (size_t)p->n_cc * p->n_events;
	for (unsigned e = 0; e < p->n_events; e++)
		row[e] = PROF_ABSENT;
	hashtab_insert(&p->cc_index, &pr, p->n_cc, cc_hash, p);
	p->n_cc++;
	return row;
}

int prof_totals(const struct profile *p, int64_t *tot)
{
	unsigned n = p->n_events;

	for (unsigned e = 0; e < n; e++)
		tot[e] = 0;
	for (uint32_t i = 0; i < p->n_cc; i++) {
		const int64_t *row = prof_cc_counts(p, i);
		for (unsigned e = 0; e < n; e++)
			if (__builtin_add_overflow(tot[e], prof_val(row[e]),
						   &tot[e]))
				return -1;
	}
	return 0;
}

/* ---- name rewrites ------------------------------------------------------ */

int prof_mod_compile(struct prof_mod *m, const char *spec, char *err,
		     size_t errlen)
{
	if (spec[0] != 's' || !spec[1] || spec[1] == '\\') {
		snprintf(err, errlen, "'%s' is not of the form s/RE/REPL/", spec);
		return -1;
	}
	char delim = spec[1];
	const char *parts[2];
	size_t lens[2];
	const char *s = spec + 2;
	char *re = NULL;

	for (int k = 0; k < 2; k++) {
		const char *q = s;
		while (*q && *q != delim) {
			if (*q == '\\' && q[1])
				q++;
			q++;
		}
		if (!*q) {
			snprintf(err, errlen, "'%s' is not of the form s/RE/REPL/",
				 spec);
			return -1;
		}
		parts[k] = s;
		lens[k] = q - s;
		s = q + 1;
	}
	m->global = false;
	int cflags = REG_EXTENDED;
	for (; *s; s++) {
		if (*s == 'g') {
			m->global = true;
		} else if (*s == 'i') {
			cflags |= REG_ICASE;
		} else {
			snprintf(err, errlen, "'%s': unknown flag '%c'", spec, *s);
			return -1;
		}
	}
	/* An escaped delimiter stands for the delimiter itself. */
	re = xmalloc(lens[0] + 1);
	size_t o = 0;
	for (size_t i = 0; i < lens[0]; i++) {
		if (parts[0][i] == '\\' && i + 1 < lens[0] &&
		    parts[0][i + 1] == delim)
			i++;
		re[o++] = parts[0][i];
	}
	re[o] = '\0';
	int rc = regcomp(&m->re, re, cflags);
	free(re);
	if (rc) {
		char buf[128];
		regerror(rc, &m->re, buf, sizeof(buf));
		snprintf(err, errlen, "'%s': %s", spec, buf);
		return -1;
	}
	m->repl = xmalloc(lens[1] + 1);
	memcpy(m->repl, parts[1], lens[1]);
	m->repl[lens[1]] = '\0';
	m->set = true;
	return 0;
}


/* REPL: \N or $N is group N, & is the whole match, \x is x. */
char *prof_mod_apply(const struct prof_mod *m, const char *s)
{
	struct strbuf b = { 0 };
	regmatch_t g[10];
	const char *at = s;
	int eflags = 0;

	strbuf_add(&b, "", 0);
	while (*at || at == s) {
		if (regexec(&m->re, at, 10, g, eflags))
			break;
		strbuf_add(&b, at, g[0].rm_so);
		for (const char *r = m->repl; *r; r++) {
			int k = -1;
			if ((*r == '\\' || *r == '$') && r[1] >= '0' &&
			    r[1] <= '9') {
				k = *++r - '0';
			} else if (*r == '&') {
				k = 0;
			} else if (*r == '\\' && r[1]) {
				r++;
			}
			if (k < 0)
				strbuf_add(&b, r, 1);
			else if (g[k].rm_so >= 0)
				strbuf_add(&b, at + g[k].rm_so,
				       g[k].rm_eo - g[k].rm_so);
		}
		if (g[0].rm_eo == g[0].rm_so) {
			/* Empty match: copy one char to make progress. */
			if (!at[g[0].rm_eo]) {
				at += g[0].rm_eo;
				break;
			}
			strbuf_add(&b, at + g[0].rm_eo, 1);
			at += g[0].rm_eo + 1;
		} else {
			at += g[0].rm_eo;
		}
		eflags = REG_NOTBOL;
		if (!m->global)
			break;
	}
	strbuf_add(&b, at, strlen(at));
	return b.s;
}

/* The final id of a name, through the rewrite when there is one. */
static uint32_t map_name(struct strintern *final, struct strintern *raw,
			 const struct prof_mod *m, uint32_t **map,
			 uint32_t *n_map, const char *s, size_t n)
{
	if (!m->set)
		return strintern_id(final, s, n, NULL);
	uint32_t rid = strintern_id(raw, s, n, NULL);
	if (rid >= *n_map) {
		uint32_t nn = *n_map ? *n_map : 64;
		while (nn <= rid)
			nn *= 2;
		*map = xreallocarray(*map, nn, sizeof(**map));
		memset(*map + *n_map, 0, (nn - *n_map) * sizeof(**map));
		*n_map = nn;
	}
	if (!(*map)[rid]) {
		char *mod = prof_mod_apply(m, raw->str[rid]);
		(*map)[rid] = strintern_id(final, mod, strlen(mod), NULL) + 1;
		free(mod);
	}
	return (*map)[rid] - 1;
}

/* ---- the reader --------------------------------------------------------- */

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

static uint64_t idmap_hash(const void *ctx, uint32_t i)
{
	const struct idmap *m = ctx;
	return hash_u64(m->key[i]);
}

/* The value slot of KEY (0 when new). */
static uint32_t *idmap_slot(struct idmap *m, uint64_t key)
{
	struct hashtab_probe pr;
	for (uint32_t i = hashtab_first(&m->map, hash_u64(key), &pr);
	     i != HASHTAB_NONE; i = hashtab_next(&m->map, &pr))
		if (m->key[i] == key)
			return &m->val[i];
	if (m->n == m->cap) {
		m->cap = m->cap ? m->cap * 2 : 64;
		m->key = xreallocarray(m->key, m->cap, sizeof(*m->key));
		m->val = xreallocarray(m->val, m->cap, sizeof(*m->val));
	}
	m->key[m->n] = key;
	m->val[m->n] = 0;
	hashtab_insert(&m->map, &pr, m->n, idmap_hash, m);
	return &m->val[m->n++];
}

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

static int rd_fail(struct reader *r, const char *fmt, ...) CT_FMT(2, 3);
static int rd_fail(struct reader *r, const char *fmt, ...)
{
	va_list ap;

	r->err->name = r->name;
	r->err->line = r->lineno;
	va_start(ap, fmt);
	vsnprintf(r->err->msg, sizeof(r->err->msg), fmt, ap);
	va_end(ap);
	return -1;
}

/* A printable excerpt of S for messages: at most SIZE - 1 bytes, with
 * "..." when cut short. */
static const char *excerpt(char *buf, size_t size, const char *s, size_t n)
{
	size_t o = 0, i;

	for (i = 0; i < n && o + 8 < size; i++) {
		unsigned char c = s[i];
		if (c >= 0x20 && c < 0x7f) {
			buf[o++] = c;
		} else {
			snprintf(buf + o, size - o, "\\x%02x", c);
			o += 4;
		}
	}
	if (i < n)
		memcpy(buf + o, "...", 3), o += 3;
	buf[o] = '\0';
	return buf;
}

static bool is_ws(char c)
{
	return c == ' ' || c == '\t';
}

static const char *skip_ws(const char *s, const char *end)
{
	while (s < end && is_ws(*s))
		s++;
	return s;
}

/* Parse counts from S to END into ROW (absent-filled to n_events). */
static int parse_counts(struct reader *r, const char *s, const char *end,
			int64_t *row)
{
	unsigned n = r->p->n_events, i = 0;
	char buf[64];

	for (;;) {
		s = skip_ws(s, end);
		if (s == end)
			break;
		if (i == n)
			return rd_fail(r, "too many counts: %u events, more "
				       "than %u counts", n, n);
		const char *start = s;
		if (*s == '.') {
			s++;
			row[i] = PROF_ABSENT;
		} else {
			bool neg = *s == '-';
			uint64_t v = 0;
			s += neg;
			if (s == end || (unsigned)(*s - '0') > 9)
				goto bad;
			while (s < end && (unsigned)(*s - '0') <= 9) {
				if (__builtin_mul_overflow(v, 10, &v) ||
				    __builtin_add_overflow(v, *s - '0', &v))
					goto big;
				s++;
			}
			if (v > INT64_MAX)
				goto big;
			row[i] = neg ? -(int64_t)v : (int64_t)v;
		}
		if (s < end && !is_ws(*s))
			goto bad;
		i++;
		continue;
big:
		while (s < end && !is_ws(*s))
			s++;
		return rd_fail(r, "count '%s' is too large",
			       excerpt(buf, sizeof(buf), start, s - start));
bad:
		while (s < end && !is_ws(*s))
			s++;
		return rd_fail(r, "bad count '%s'",
			       excerpt(buf, sizeof(buf), start, s - start));
	}
	for (; i < n; i++)
		row[i] = PROF_ABSENT;
	return 0;
}

/* DST += r->row times the sign; TOT (the input's own totals, or NULL)
 * += r->row. */
static int add_counts(struct reader *r, int64_t *dst, int64_t *tot)
{
	struct profile *p = r->p;

	for (unsigned e = 0; e < p->n_events; e++) {
		int64_t v = r->row[e];
		if (v == PROF_ABSENT)
			continue;
		if (tot && __builtin_add_overflow(tot[e], v, &tot[e]))
			return rd_fail(r, "counts for %s add up to more than "
				       "%lld", p->events[e],
				       (long long)INT64_MAX);
		if (r->sign < 0)
			v = -v;
		if (dst[e] == PROF_ABSENT)
			dst[e] = v;
		else if (__builtin_add_overflow(dst[e], v, &dst[e]) ||
			 dst[e] == PROF_ABSENT)
			return rd_fail(r, "merged counts for %s overflow",
				       p->events[e]);
	}
	return 0;
}

static int rd_count_line(struct reader *r, const char *s, const char *end)
{
	struct profile *p = r->p;
	uint64_t line = 0;
	char buf[64];
	const char *start = s;

	while (s < end && (unsigned)(*s - '0') <= 9) {
		line = line * 10 + (*s - '0');
		if (line > UINT32_MAX)
			return rd_fail(r, "line number '%s' is too large",
				       excerpt(buf, sizeof(buf), start,
					       end - start > 24 ? 24
							       : end - start));
		s++;
	}
	if (s < end && !is_ws(*s))
		return rd_fail(r, "malformed line '%s'",
			       excerpt(buf, sizeof(buf), start, end - start));
	if (r->fn < 0)
		return rd_fail(r, r->have_file ?
			       "counts before any fn= line after fl=" :
			       "counts before any fl= and fn= line");
	if (parse_counts(r, s, end, r->row))
		return -1;

	int64_t *dst = cc_lookup(p, r->fn, line);
	if (!dst)
		return rd_fail(r, "too many cost centres");
	return add_counts(r, dst, r->tot);
}

static bool has_prefix(const char *s, const char *end, const char *pfx)
{
	size_t n = strlen(pfx);
	return (size_t)(end - s) >= n && !memcmp(s, pfx, n);
}

static int check_name(struct reader *r, const char *what, const char *s,
		      const char *end)
{
	if (s == end)
		return rd_fail(r, "empty %s name", what);
	if (memchr(s, '\0', end - s))
		return rd_fail(r, "NUL byte in %s name", what);
	return 0;
}

static char *dup_text(const char *s, const char *end)
{
	char *t = xmalloc(end - s + 1);
	memcpy(t, s, end - s);
	t[end - s] = '\0';
	return t;
}

static int rd_events(struct reader *r, const char *s, const char *end)
{
	struct profile *p = r->p;
	char *names[PROF_MAX_EVENTS];
	unsigned n = 0;
	char buf[64];

	if (memchr(s, '\0', end - s))
		return rd_fail(r, "NUL byte in events: line");
	for (;;) {
		s = skip_ws(s, end);
		if (s == end)
			break;
		const char *e = s;
		while (e < end && !is_ws(*e))
			e++;
		if (n == PROF_MAX_EVENTS) {
			for (unsigned i = 0; i < n; i++)
				free(names[i]);
			return rd_fail(r, "more than %u events",
				       PROF_MAX_EVENTS);
		}
		names[n] = dup_text(s, e);
		for (unsigned i = 0; i < n; i++) {
			if (!strcmp(names[i], names[n])) {
				rd_fail(r, "event '%s' appears twice",
					excerpt(buf, sizeof(buf), s, e - s));
				for (unsigned k = 0; k <= n; k++)
					free(names[k]);
				return -1;
			}
		}
		n++;
		s = e;
	}
	if (!n)
		return rd_fail(r, "events: line names no events");

	int rc = 0;
	if (!p->n_events) {
		p->n_events = n;
		p->events = xcalloc(n, sizeof(*p->events));
		for (unsigned i = 0; i < n; i++)
			p->events[i] = names[i];
		return 0;
	}
	if (n != p->n_events) {
		rc = rd_fail(r, "events: line has %u events, the first input "
			     "has %u: inputs must record the same events",
			     n, p->n_events);
	} else {
		for (unsigned i = 0; i < n && !rc; i++)
			if (strcmp(names[i], p->events[i]))
				rc = rd_fail(r, "event %u is '%s', in the first "
					     "input it is '%s': inputs must "
					     "record the same events", i + 1,
					     excerpt(buf, sizeof(buf),
						     names[i],
						     strlen(names[i])),
					     p->events[i]);
	}
	for (unsigned i = 0; i < n; i++)
		free(names[i]);
	return rc;
}

static void add_unique(char ***v, unsigned *n, const char *s,
		       const char *end)
{
	for (unsigned i = 0; i < *n; i++)
		if (strlen((*v)[i]) == (size_t)(end - s) &&
		    !memcmp((*v)[i], s, end - s))
			return;
	*v = xreallocarray(*v, *n + 1, sizeof(**v));
	(*v)[(*n)++] = dup_text(s, end);
}

/* ---- the Callgrind format ------------------------------------------------
 *
 * Valgrind's "Callgrind Format Specification", read as strictly as the
 * Cachegrind format above, for one part per file:
 *   header  ::= ("version:" | "creator:" | "pid:" | "thread:" | "part:" |
 *                "cmd:" | "desc:" | "positions:" | "event:" | "events:" |
 *                "summary:") text
 *   body    ::= (spec "=" name | "calls=" count pos+ NL costline |
 *                "jump=" text | "jcnd=" text | costline | "totals:" counts)*
 *   costline::= pos{n_pos} count*
 *   pos     ::= digits | "0x" hex | ("+" | "-") digits | "*"
 *   name    ::= "(" digits ")" (ws+ text)? | text
 * spec is fl fi fe fn ob cob cfi cfl cfn jfi jfn.  Relative positions are
 * relative to the last cost line's; a calls= target does not move them.
 * A file is Callgrind's when it starts with "# callgrind format" or its
 * header has a line only Callgrind writes (version:, creator:, pid:,
 * thread:, part:, positions:, event:).  Self costs go to the cost centres
 * as for Cachegrind files (fi=/fe= code counts under its own file, as
 * callgrind_annotate counts it); a calls= cost line goes to the edge from
 * the current function's owner to the cfn= function, not to self costs.
 * totals: must equal the self costs, summary: must be at least that. */

enum { ID_FL, ID_FN, ID_OB };
static const char *const id_spec[] = { "fl", "fn", "ob" };

static bool is_callgrind_key(const char *s, const char *end)
{
	static const char *const keys[] = {
		"version:", "creator:", "pid:", "thread:", "part:",
		"positions:", "event:",
	};
	for (size_t i = 0; i < sizeof(keys) / sizeof(*keys); i++)
		if (has_prefix(s, end, keys[i]))
			return true;
	return false;
}

static bool is_cost_start(char c)
{
	return (unsigned)(c - '0') <= 9 || c == '+' || c == '-' || c == '*';
}

static uint32_t cg_unknown_file(struct reader *r)
{
	struct profile *p = r->p;
	return map_name(&p->files, &p->raw_files, &p->mod_file, &p->file_map,
			&p->n_file_map, "???", 3);
}

/* A name after "spec=", S to END, maybe compressed; its id in OUT (the
 * file or function name id; 0 for objects). */
static int cg_name(struct reader *r, int ctx, const char *s, const char *end,
		   uint32_t *out)
{
	struct profile *p = r->p;
	char buf[64];
	uint32_t *slot = NULL;

	if (end - s >= 2 && s[0] == '(' && (unsigned)(s[1] - '0') <= 9) {
		const char *q = s + 1;
		uint64_t n = 0;
		while (q < end && (unsigned)(*q - '0') <= 9) {
			if (__builtin_mul_overflow(n, 10, &n) ||
			    __builtin_add_overflow(n, *q - '0', &n))
				return rd_fail(r, "compressed name id '%s' is "
					       "too large", excerpt(buf,
					       sizeof(buf), s, end - s));
			q++;
		}
		if (q == end || *q != ')')
			return rd_fail(r, "malformed compressed name '%s'",
				       excerpt(buf, sizeof(buf), s, end - s));
		q++;
		slot = idmap_slot(&r->ids[ctx], n);
		const char *t = skip_ws(q, end);
		if (t == end) {
			if (!*slot)
				return rd_fail(r, "%s=(%llu) used before any "
					       "line defines it", id_spec[ctx],
					       (unsigned long long)n);
			*out = *slot - 1;
			return 0;
		}
		if (t == q)
			return rd_fail(r, "malformed compressed name '%s'",
				       excerpt(buf, sizeof(buf), s, end - s));
		s = t;
	}
	if (check_name(r, ctx == ID_FL ? "file" : ctx == ID_FN ? "function"
						   : "object", s, end))
		return -1;
	uint32_t id = 0;
	if (ctx == ID_FL)
		id = map_name(&p->files, &p->raw_files, &p->mod_file,
			      &p->file_map, &p->n_file_map, s, end - s);
	else if (ctx == ID_FN)
		id = map_name(&p->fns, &p->raw_fns, &p->mod_fn, &p->fn_map,
			      &p->n_fn_map, s, end - s);
	if (slot) {
		/* With --mod-*, two names may map to one id: compare ids. */
		if (*slot && *slot != id + 1)
			return rd_fail(r, "compressed name redefined with "
				       "another name: '%s'",
				       excerpt(buf, sizeof(buf), s, end - s));
		*slot = id + 1;
	}
	*out = id;
	return 0;
}

/* One position token S..E, relative to LAST; the value in OUT. */
static int cg_pos(struct reader *r, const char *s, const char *e,
		  uint64_t last, uint64_t *out)
{
	char buf[64];
	uint64_t v = 0;
	const char *q = s;
	int rel = 0;

	if (e - s == 1 && *s == '*') {
		*out = last;
		return 0;
	}
	if (*q == '+' || *q == '-')
		rel = *q++ == '+' ? 1 : -1;
	if (!rel && e - q > 2 && q[0] == '0' && (q[1] == 'x' || q[1] == 'X')) {
		for (q += 2; q < e; q++) {
			unsigned d = (unsigned)(*q - '0') <= 9 ? (unsigned)(*q - '0') :
				     (unsigned)((*q | 0x20) - 'a') <= 5 ?
				     (unsigned)((*q | 0x20) - 'a' + 10) : 16;
			if (d == 16)
				goto bad;
			if (v >> 60)
				goto big;
			v = v << 4 | d;
		}
	} else {
		if (q == e)
			goto bad;
		for (; q < e; q++) {
			if ((unsigned)(*q - '0') > 9)
				goto bad;
			if (__builtin_mul_overflow(v, 10, &v) ||
			    __builtin_add_overflow(v, *q - '0', &v))
				goto big;
		}
	}
	if (rel > 0 && __builtin_add_overflow(last, v, &v))
		goto big;
	if (rel < 0) {
		if (v > last)
			return rd_fail(r, "relative position '%s' goes below 0",
				       excerpt(buf, sizeof(buf), s, e - s));
		v = last - v;
	}
	*out = v;
	return 0;
bad:
	return rd_fail(r, "bad position '%s'", excerpt(buf, sizeof(buf), s,
							e - s));
big:
	return rd_fail(r, "position '%s' is too large",
		       excerpt(buf, sizeof(buf), s, e - s));
}

/* N positions from *S on; relative ones against r->last_pos. */
static int cg_positions(struct reader *r, const char **s, const char *end,
			unsigned n, uint64_t *pos)
{
	for (unsigned k = 0; k < n; k++) {
		const char *t = skip_ws(*s, end);
		const char *e = t;
		while (e < end && !is_ws(*e))
			e++;
		if (t == e)
			return rd_fail(r, "%u position%s expected, found %u",
				       n, n == 1 ? "" : "s", k);
		if (k && t == *s)
			return rd_fail(r, "bad position");
		if (cg_pos(r, t, e, r->last_pos[k], &pos[k]))
			return -1;
		*s = e;
	}
	return 0;
}

static int cg_cost_line(struct reader *r, const char *s, const char *end)
{
	struct profile *p = r->p;
	uint64_t pos[3] = { 0 };

	if (!r->have_events)
		return rd_fail(r, "cost line before the events: line");
	r->cg_body = true;
	if (cg_positions(r, &s, end, r->n_pos, pos))
		return -1;
	if (s < end && !is_ws(*s))
		return rd_fail(r, "malformed cost line");
	memcpy(r->last_pos, pos, sizeof(pos));
	uint64_t line = r->line_pos >= 0 ? pos[r->line_pos] : 0;
	if (line > UINT32_MAX)
		return rd_fail(r, "line number %llu is too large",
			       (unsigned long long)line);
	if (r->fn < 0)
		return rd_fail(r, "cost line before any fn= line");
	if (parse_counts(r, s, end, r->row))
		return -1;
	if (!r->pending) {
		int64_t *dst = cc_lookup(p, r->fn, line);
		if (!dst)
			return rd_fail(r, "too many cost centres");
		return add_counts(r, dst, r->tot);
	}
	int64_t *row;
	struct prof_call *c = call_lookup(p, p->fn[r->fn].owner,
					  p->fn[r->callee].owner, &row);
	if (!c)
		return rd_fail(r, "too many call edges");
	r->pending = false;
	r->callee = -1;
	int64_t n = r->sign < 0 ? -r->pending_calls : r->pending_calls;
	if (__builtin_add_overflow(c->calls, n, &c->calls))
		return rd_fail(r, "merged call counts overflow");
	return add_counts(r, row, NULL);
}

static int cg_calls(struct reader *r, const char *s, const char *end)
{
	uint64_t n = 0, target[3];
	const char *start = s;
	char buf[64];

	if (r->fn < 0)
		return rd_fail(r, "calls= line before any fn= line");
	if (r->callee < 0)
		return rd_fail(r, "calls= line without a cfn= line before it");
	if (s == end || (unsigned)(*s - '0') > 9)
		return rd_fail(r, "bad call count in 'calls=%s'",
			       excerpt(buf, sizeof(buf), start, end - start));
	for (; s < end && (unsigned)(*s - '0') <= 9; s++)
		if (__builtin_mul_overflow(n, 10, &n) ||
		    __builtin_add_overflow(n, *s - '0', &n) || n > INT64_MAX)
			return rd_fail(r, "call count in 'calls=%s' is too "
				       "large", excerpt(buf, sizeof(buf), start,
							end - start));
	if (skip_ws(s, end) == end)
		return rd_fail(r, "no target position in 'calls=%s'",
			       excerpt(buf, sizeof(buf), start, end - start));
	if (!is_ws(*s))
		return rd_fail(r, "bad call count in 'calls=%s'",
			       excerpt(buf, sizeof(buf), start, end - start));
	if (cg_positions(r, &s, end, r->n_pos, target))
		return -1;
	if (skip_ws(s, end) != end)
		return rd_fail(r, "junk after the target position in 'calls=%s'",
			       excerpt(buf, sizeof(buf), start, end - start));
	r->pending = true;
	r->pending_calls = n;
	r->pending_line = r->lineno;
	return 0;
}

static int cg_positions_line(struct reader *r, const char *s, const char *end)
{
	bool seen[3] = { false, false, false };
	char buf[64];

	if (r->have_positions)
		return rd_fail(r, "second positions: line");
	if (r->have_events)
		return rd_fail(r, "positions: line after the events: line");
	r->have_positions = true;
	r->n_pos = 0;
	r->line_pos = -1;
	for (;;) {
		s = skip_ws(s, end);
		if (s == end)
			break;
		const char *e = s;
		while (e < end && !is_ws(*e))
			e++;
		int k = -1;
		if ((e - s == 5 && !memcmp(s, "instr", 5)) ||
		    (e - s == 4 && !memcmp(s, "addr", 4)))
			k = 0;
		else if (e - s == 2 && !memcmp(s, "bb", 2))
			k = 1;
		else if (e - s == 4 && !memcmp(s, "line", 4))
			k = 2;
		if (k < 0)
			return rd_fail(r, "unknown position '%s' (instr, bb or "
				       "line)", excerpt(buf, sizeof(buf), s,
							e - s));
		if (seen[k])
			return rd_fail(r, "position '%s' given twice",
				       excerpt(buf, sizeof(buf), s, e - s));
		seen[k] = true;
		if (k == 2)
			r->line_pos = r->n_pos;
		r->n_pos++;
		s = e;
	}
	if (!r->n_pos)
		return rd_fail(r, "positions: line names no positions");
	return 0;
}

static int cg_header(struct reader *r, const char *s, const char *end,
		     const char *key_end)
{
	struct profile *p = r->p;
	const char *v = skip_ws(key_end + 1, end);
	size_t klen = key_end - s;
	char buf[64];

#define KEY(k) (klen == sizeof(k) - 1 && !memcmp(s, k, klen))
	if (r->done)
		return rd_fail(r, "line after the totals: line: '%s'",
			       excerpt(buf, sizeof(buf), s, end - s));
	if (KEY("summary") || KEY("totals")) {
		bool tot = KEY("totals");
		int64_t **dst = tot ? &r->totals : &r->summary;
		if (!r->have_events)
			return rd_fail(r, "%s: line before the events: line",
				       tot ? "totals" : "summary");
		if (*dst)
			return rd_fail(r, "second %s: line",
				       tot ? "totals" : "summary");
		*dst = xcalloc(p->n_events, sizeof(**dst));
		if (parse_counts(r, v, end, *dst))
			return -1;
		if (tot) {
			r->totals_line = r->lineno;
			r->done = true;
		} else {
			r->summary_line = r->lineno;
		}
		return 0;
	}
	if (r->cg_body)
		return rd_fail(r, "header line '%s' after cost lines: files "
			       "with several parts are not supported",
			       excerpt(buf, sizeof(buf), s, end - s));
	if (memchr(s, '\0', end - s))
		return rd_fail(r, "NUL byte in a header line");
	if (KEY("version")) {
		if (end - v != 1 || (*v != '0' && *v != '1'))
			return rd_fail(r, "unsupported Callgrind format "
				       "version '%s' (1 is supported)",
				       excerpt(buf, sizeof(buf), v, end - v));
		return 0;
	}
	if (KEY("creator") || KEY("pid") || KEY("thread") || KEY("part") ||
	    KEY("event"))
		return 0;
	if (KEY("cmd")) {
		add_unique(&p->cmds, &p->n_cmds, v, end);
		return 0;
	}
	if (KEY("desc")) {
		add_unique(&p->desc, &p->n_desc, v, end);
		return 0;
	}
	if (KEY("positions"))
		return cg_positions_line(r, v, end);
	if (KEY("events")) {
		if (r->have_events)
			return rd_fail(r, "second events: line");
		if (rd_events(r, key_end + 1, end))
			return -1;
		r->have_events = true;
		r->row = xcalloc(p->n_events, sizeof(*r->row));
		r->tot = xcalloc(p->n_events, sizeof(*r->tot));
		return 0;
	}
#undef KEY
	return rd_fail(r, "unknown header line '%s'",
		       excerpt(buf, sizeof(buf), s, end - s));
}

static int cg_spec(struct reader *r, const char *s, const char *end,
		   const char *eq)
{
	struct profile *p = r->p;
	const char *v = eq + 1;
	size_t klen = eq - s;
	uint32_t id;
	char buf[64];

#define KEY(k) (klen == sizeof(k) - 1 && !memcmp(s, k, klen))
	if (r->done)
		return rd_fail(r, "line after the totals: line: '%s'",
			       excerpt(buf, sizeof(buf), s, end - s));
	if (!r->have_events)
		return rd_fail(r, "'%.*s=' line before the events: line",
			       (int)klen, s);
	r->cg_body = true;
	if (KEY("calls"))
		return cg_calls(r, v, end);
	if (KEY("jump") || KEY("jcnd"))
		return 0;
	if (KEY("ob") || KEY("cob"))
		return cg_name(r, ID_OB, v, end, &id);
	if (KEY("jfi"))
		return cg_name(r, ID_FL, v, end, &id);
	if (KEY("jfn"))
		return cg_name(r, ID_FN, v, end, &id);
	if (KEY("fl")) {
		if (cg_name(r, ID_FL, v, end, &id))
			return -1;
		r->cur_file = id;
		r->fn = -1;
		r->fn_name = -1;
		r->callee = -1;
		return 0;
	}
	if (KEY("fi") || KEY("fe")) {
		if (cg_name(r, ID_FL, v, end, &id))
			return -1;
		if (r->fn < 0)
			return rd_fail(r, "%.*s= line before any fn= line",
				       (int)klen, s);
		r->cur_file = id;
		r->fn = fn_lookup_owned(p, id, r->fn_name,
					p->fn[r->fn].owner);
		return 0;
	}
	if (KEY("fn")) {
		if (cg_name(r, ID_FN, v, end, &id))
			return -1;
		if (r->cur_file < 0)
			r->cur_file = cg_unknown_file(r);
		r->fn_name = id;
		r->fn = fn_lookup(p, r->cur_file, id);
		r->callee = -1;
		r->cfile = -1;
		return 0;
	}
	if (KEY("cfi") || KEY("cfl")) {
		if (cg_name(r, ID_FL, v, end, &id))
			return -1;
		r->cfile = id;
		return 0;
	}
	if (KEY("cfn")) {
		if (cg_name(r, ID_FN, v, end, &id))
			return -1;
		int64_t file = r->cfile >= 0 ? r->cfile : r->cur_file;
		if (file < 0)
			file = cg_unknown_file(r);
		r->callee = fn_lookup(p, file, id);
		r->cfile = -1;
		return 0;
	}
#undef KEY
	return rd_fail(r, "unknown line '%s'",
		       excerpt(buf, sizeof(buf), s, end - s));
}

/* One line of a Callgrind-format input (r->lineno already counted). */
static int cg_line(struct reader *r, const char *s, size_t len)
{
	const char *end = s + len;
	char buf[64];

	if (skip_ws(s, end) == end || *s == '#')
		return 0;
	if (r->pending && !is_cost_start(*s))
		return rd_fail(r, "expected the cost line of the calls= line "
			       "%llu, found '%s'", r->pending_line,
			       excerpt(buf, sizeof(buf), s, len));
	if (is_cost_start(*s)) {
		if (r->done)
			return rd_fail(r, "line after the totals: line: '%s'",
				       excerpt(buf, sizeof(buf), s, len));
		return cg_cost_line(r, s, end);
	}
	const char *k = s;
	while (k < end && (unsigned)(*k - 'a') < 26)
		k++;
	if (k > s && k < end && *k == '=')
		return cg_spec(r, s, end, k);
	if (k > s && k < end && *k == ':')
		return cg_header(r, s, end, k);
	return rd_fail(r, "malformed line '%s'",
		       excerpt(buf, sizeof(buf), s, len));
}

static int cg_finish(struct reader *r)
{
	struct profile *p = r->p;

	if (!r->have_events)
		return rd_fail(r, "unexpected end of file: no events: line");
	if (r->pending)
		return rd_fail(r, "unexpected end of file: the calls= line %llu "
			       "has no cost line", r->pending_line);
	if (!r->check_summary)
		return 0;
	if (!r->summary && !r->totals)
		return rd_fail(r, "unexpected end of file: no totals: or "
			       "summary: line (use --no-summary-check to read "
			       "it anyway)");
	for (unsigned e = 0; e < p->n_events; e++) {
		if (r->totals && prof_val(r->totals[e]) != r->tot[e]) {
			r->lineno = r->totals_line;
			return rd_fail(r, "totals: %s is %lld but the counts "
				       "add up to %lld (use --no-summary-check "
				       "to read on)", p->events[e],
				       (long long)prof_val(r->totals[e]),
				       (long long)r->tot[e]);
		}
		if (r->summary && prof_val(r->summary[e]) < r->tot[e]) {
			r->lineno = r->summary_line;
			return rd_fail(r, "summary: %s is %lld, less than the "
				       "counts' total %lld (use "
				       "--no-summary-check to read on)",
				       p->events[e],
				       (long long)prof_val(r->summary[e]),
				       (long long)r->tot[e]);
		}
	}
	return 0;
}

/* Before cmd:: desc: lines, or a Callgrind key that says the format. */
static int rd_header_line(struct reader *r, const char *s, const char *end)
{
	struct profile *p = r->p;
	char buf[64];

	if (is_callgrind_key(s, end)) {
		r->cg = p->has_calls = true;
		return cg_line(r, s, (size_t)(end - s));
	}
	if (has_prefix(s, end, "desc:")) {
		s = skip_ws(s + 5, end);
		if (memchr(s, '\0', end - s))
			return rd_fail(r, "NUL byte in desc: line");
		add_unique(&p->desc, &p->n_desc, s, end);
		return 0;
	}
	if (has_prefix(s, end, "cmd:")) {
		s = skip_ws(s + 4, end);
		if (memchr(s, '\0', end - s))
			return rd_fail(r, "NUL byte in cmd: line");
		add_unique(&p->cmds, &p->n_cmds, s, end);
		r->state = RD_EVENTS;
		return 0;
	}
	return rd_fail(r, "expected a desc: or cmd: line, found '%s'",
		       excerpt(buf, sizeof(buf), s, (size_t)(end - s)));
}

/* The events: line, after which count lines may come. */
static int rd_events_line(struct reader *r, const char *s, const char *end)
{
	struct profile *p = r->p;
	char buf[64];

	if (!has_prefix(s, end, "events:"))
		return rd_fail(r, "expected an events: line, found '%s'",
			       excerpt(buf, sizeof(buf), s, (size_t)(end - s)));
	if (rd_events(r, s + 7, end))
		return -1;
	r->row = xcalloc(p->n_events, sizeof(*r->row));
	r->tot = xcalloc(p->n_events, sizeof(*r->tot));
	r->state = RD_BODY;
	return 0;
}

/* The body's non-count lines: fn=, fl= and the closing summary:. */
static int rd_body_line(struct reader *r, const char *s, const char *end)
{
	struct profile *p = r->p;
	char buf[64];

	if (has_prefix(s, end, "fn=")) {
		if (!r->have_file)
			return rd_fail(r, "fn= line before any fl= line");
		if (check_name(r, "function", s + 3, end))
			return -1;
		uint32_t name = map_name(&p->fns, &p->raw_fns, &p->mod_fn,
					 &p->fn_map, &p->n_fn_map, s + 3,
					 end - s - 3);
		r->fn = fn_lookup(p, r->file, name);
		return 0;
	}
	if (has_prefix(s, end, "fl=")) {
		if (check_name(r, "file", s + 3, end))
			return -1;
		r->file = map_name(&p->files, &p->raw_files, &p->mod_file,
				   &p->file_map, &p->n_file_map, s + 3,
				   end - s - 3);
		r->have_file = true;
		r->fn = -1;
		return 0;
	}
	if (has_prefix(s, end, "summary:")) {
		r->summary = xcalloc(p->n_events, sizeof(*r->summary));
		if (parse_counts(r, s + 8, end, r->summary))
			return -1;
		r->summary_line = r->lineno;
		r->state = RD_DONE;
		return 0;
	}
	return rd_fail(r, "malformed line '%s'",
		       excerpt(buf, sizeof(buf), s, (size_t)(end - s)));
}

static int rd_line(struct reader *r, const char *s, size_t len)
{
	struct profile *p = r->p;
	const char *end = s + len;
	char buf[64];

	r->lineno++;
	/* Hot path first: count lines. */
	if (len && r->state == RD_BODY && (unsigned)(*s - '0') <= 9)
		return rd_count_line(r, s, end);
	if (r->cg)
		return cg_line(r, s, len);
	if (r->state == RD_HEADER && r->lineno == 1 &&
	    has_prefix(s, end, "# callgrind format")) {
		r->cg = p->has_calls = true;
		return 0;
	}
	if (skip_ws(s, end) == end || *s == '#')
		return 0;

	switch (r->state) {
	case RD_HEADER:
		return rd_header_line(r, s, end);
	case RD_EVENTS:
		return rd_events_line(r, s, end);
	case RD_BODY:
		return rd_body_line(r, s, end);
	case RD_DONE:
		if (has_prefix(s, end, "summary:"))
			return rd_fail(r, "second summary: line");
		return rd_fail(r, "line after the summary: line: '%s'",
			       excerpt(buf, sizeof(buf), s, len));
	}
	return 0;
}

static int rd_finish(struct reader *r)
{
	struct profile *p = r->p;

	if (r->cg)
		return cg_finish(r);

	if (r->state < RD_BODY)
		return rd_fail(r, "unexpected end of file: no %s line",
			       r->state == RD_HEADER ? "cmd:" : "events:");
	if (!r->check_summary)
		return 0;
	if (!r->summary)
		return rd_fail(r, "unexpected end of file: no summary: line "
			       "(use --no-summary-check to read it anyway)");
	for (unsigned e = 0; e < p->n_events; e++) {
		int64_t want = prof_val(r->summary[e]);
		if (want != r->tot[e]) {
			r->lineno = r->summary_line;
			return rd_fail(r, "summary: %s is %lld but the counts add "
				       "up to %lld (use --no-summary-check to "
				       "read on)", p->events[e],
				       (long long)want, (long long)r->tot[e]);
		}
	}
	return 0;
}

static void rd_init(struct reader *r, struct profile *p, const char *name,
		    int sign, bool check_summary, struct prof_error *err)
{
	memset(r, 0, sizeof(*r));
	r->p = p;
	r->name = name;
	r->sign = sign;
	r->check_summary = check_summary;
	r->err = err;
	r->fn = -1;
	r->n_pos = 1;
	r->line_pos = 0;
	r->cur_file = r->fn_name = r->cfile = r->callee = -1;
	/* A later input must repeat the first one's events: line. */
	r->state = RD_HEADER;
	p->n_inputs++;
}

static void rd_done(struct reader *r)
{
	free(r->row);
	free(r->tot);
	free(r->summary);
	free(r->totals);
	for (int i = 0; i < 3; i++) {
		free(r->ids[i].key);
		free(r->ids[i].val);
		hashtab_free(&r->ids[i].map);
	}
}

static int rd_eof_partial(struct reader *r)
{
	r->lineno++;
	return rd_fail(r, "incomplete last line (no newline at end of file)");
}

int prof_read_mem(struct profile *p, const char *data, size_t len,
		  const char *name, int sign, bool check_summary,
		  struct prof_error *err)
{
	struct reader r;
	int rc = 0;

	rd_init(&r, p, name, sign, check_summary, err);
	while (len && !rc) {
		const char *nl = memchr(data, '\n', len);
		if (!nl) {
			rc = rd_eof_partial(&r);
			break;
		}
		if ((size_t)(nl - data) > PROF_MAX_LINE) {
			r.lineno++;
			rc = rd_fail(&r, "line longer than %u bytes",
				     PROF_MAX_LINE);
			break;
		}
		rc = rd_line(&r, data, nl - data);
		len -= nl + 1 - data;
		data = nl + 1;
	}
	if (!rc)
		rc = rd_finish(&r);
	rd_done(&r);
	return rc;
}

int prof_read_fd(struct profile *p, int fd, const char *name, int sign,
		 bool check_summary, struct prof_error *err)
{
	struct reader r;
	struct stat st;
	char *buf = xmalloc(READ_BUF);
	size_t have = 0;
	int rc = 0;

	if (!fstat(fd, &st) && S_ISREG(st.st_mode)) {
		if (!p->have_mtime ||
		    st.st_mtim.tv_sec < p->oldest_mtime.tv_sec ||
		    (st.st_mtim.tv_sec == p->oldest_mtime.tv_sec &&
		     st.st_mtim.tv_nsec < p->oldest_mtime.tv_nsec))
			p->oldest_mtime = st.st_mtim;
		p->have_mtime = true;
	}
	rd_init(&r, p, name, sign, check_summary, err);
	for (;;) {
		ssize_t n = read(fd, buf + have, READ_BUF - have);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			rc = rd_fail(&r, "read error: %s", strerror(errno));
			break;
		}
		if (n == 0) {
			if (have)
				rc = rd_eof_partial(&r);
			break;
		}
		size_t scan = have;	/* no '\n' before here */
		have += n;
		const char *line = buf;
		const char *end = buf + have;
		const char *nl;
		while ((nl = memchr(buf + scan, '\n', end - (buf + scan)))) {
			if ((size_t)(nl - line) > PROF_MAX_LINE)
				break;
			rc = rd_line(&r, line, nl - line);
			if (rc)
				goto out;
			line = nl + 1;
			scan = line - buf;
		}
		if ((size_t)(end - line) > PROF_MAX_LINE) {
			r.lineno++;
			rc = rd_fail(&r, "line longer than %u bytes",
				     PROF_MAX_LINE);
			break;
		}
		have = end - line;
		memmove(buf, line, have);
	}
out:
	if (!rc)
		rc = rd_finish(&r);
	rd_done(&r);
	free(buf);
	return rc;
}

/* ---- sorting and writing ------------------------------------------------ */

static const struct profile *sort_prof;

static int cmp_fn(const void *a, const void *b)
{
	const struct prof_fn *x = &sort_prof->fn[*(const uint32_t *)a];
	const struct prof_fn *y = &sort_prof->fn[*(const uint32_t *)b];
	int c = strcmp(sort_prof->files.str[x->file],
		       sort_prof->files.str[y->file]);
	if (!c)
		c = strcmp(sort_prof->fns.str[x->name],
			   sort_prof->fns.str[y->name]);
	return c;
}

static int cmp_cc_line(const void *a, const void *b)
{
	uint32_t x = sort_prof->cc[*(const uint32_t *)a].line;
	uint32_t y = sort_prof->cc[*(const uint32_t *)b].line;
	return (x > y) - (x < y);
}

uint32_t *prof_sorted_ccs(const struct profile *p)
{
	uint32_t *order = xcalloc(p->n_fn + 1, sizeof(*order));
	uint32_t *rank = xcalloc(p->n_fn + 1, sizeof(*rank));
	uint32_t *start = xcalloc(p->n_fn + 2, sizeof(*start));
	uint32_t *out = xcalloc(p->n_cc + 1, sizeof(*out));

	sort_prof = p;
	for (uint32_t i = 0; i < p->n_fn; i++)
		order[i] = i;
	qsort(order, p->n_fn, sizeof(*order), cmp_fn);
	for (uint32_t i = 0; i < p->n_fn; i++)
		rank[order[i]] = i;
	/* Counting sort by function rank keeps the input's line order. */
	for (uint32_t i = 0; i < p->n_cc; i++)
		start[rank[p->cc[i].fn] + 1]++;
	for (uint32_t i = 0; i < p->n_fn; i++)
		start[i + 1] += start[i];
	for (uint32_t i = 0; i < p->n_cc; i++)
		out[start[rank[p->cc[i].fn]]++] = i;
	/* start[k] is now the end of bucket k. */
	uint32_t b = 0;
	for (uint32_t k = 0; k < p->n_fn; k++) {
		uint32_t e = start[k];
		bool sorted = true;
		for (uint32_t i = b + 1; i < e && sorted; i++)
			sorted = p->cc[out[i - 1]].line <= p->cc[out[i]].line;
		if (!sorted)
			qsort(out + b, e - b, sizeof(*out), cmp_cc_line);
		b = e;
	}
	free(order);
	free(rank);
	free(start);
	return out;
}

static char *fmt_i64(char *end, int64_t v)
{
	uint64_t u = v < 0 ? -(uint64_t)v : (uint64_t)v;
	do {
		*--end = '0' + u % 10;
		u /= 10;
	} while (u);
	if (v < 0)
		*--end = '-';
	return end;
}

int prof_write(const struct profile *p, FILE *out)
{
	int64_t *tot = xcalloc(p->n_events, sizeof(*tot));
	if (prof_totals(p, tot)) {
		free(tot);
		errno = EOVERFLOW;
		return -1;
	}
	uint32_t *ord = prof_sorted_ccs(p);
	char num[24];
	int64_t last_file = -1, last_fn = -1;

	for (unsigned i = 0; i < p->n_desc; i++)
		fprintf(out, "desc: %s\n", p->desc[i]);
	fputs("cmd:", out);
	for (unsigned i = 0; i < p->n_cmds; i++)
		fprintf(out, "%s %s", i ? ";" : "", p->cmds[i]);
	fputs("\nevents:", out);
	for (unsigned e = 0; e < p->n_events; e++)
		fprintf(out, " %s", p->events[e]);
	fputc('\n', out);
	for (uint32_t k = 0; k < p->n_cc; k++) {
		const struct prof_cc *c = &p->cc[ord[k]];
		const struct prof_fn *f = &p->fn[c->fn];
		const int64_t *row = prof_cc_counts(p, ord[k]);
		if ((int64_t)f->file != last_file) {
			fprintf(out, "fl=%s\n", p->files.str[f->file]);
			last_file = f->file;
			last_fn = -1;
		}
		if ((int64_t)c->fn != last_fn) {
			fprintf(out, "fn=%s\n", p->fns.str[f->name]);
			last_fn = c->fn;
		}
		unsigned n = p->n_events;
		while (n && row[n - 1] == PROF_ABSENT)
			n--;
		char *s = fmt_i64(num + sizeof(num), c->line);
		fwrite(s, 1, num + sizeof(num) - s, out);
		for (unsigned e = 0; e < n; e++) {
			fputc(' ', out);
			if (row[e] == PROF_ABSENT) {
				fputc('.', out);
				continue;
			}
			s = fmt_i64(num + sizeof(num), row[e]);
			fwrite(s, 1, num + sizeof(num) - s, out);
		}
		fputc('\n', out);
	}
	fputs("summary:", out);
	for (unsigned e = 0; e < p->n_events; e++) {
		char *s = fmt_i64(num + sizeof(num), tot[e]);
		fputc(' ', out);
		fwrite(s, 1, num + sizeof(num) - s, out);
	}
	fputc('\n', out);
	free(tot);
	free(ord);
	return ferror(out) ? -1 : 0;
}
