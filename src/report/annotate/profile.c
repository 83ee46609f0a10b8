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

/* ---- interning ---------------------------------------------------------- */

static uint64_t hash_bytes(const char *s, size_t n)
{
	uint64_t h = 0xcbf29ce484222325ull;	/* FNV-1a */
	for (size_t i = 0; i < n; i++) {
		h ^= (unsigned char)s[i];
		h *= 0x100000001b3ull;
	}
	return h ^ (h >> 29);
}

static uint64_t hash_u64(uint64_t k)
{
	k ^= k >> 33;
	k *= 0xff51afd7ed558ccdull;
	k ^= k >> 33;
	k *= 0xc4ceb9fe1a85ec53ull;
	return k ^ (k >> 33);
}

static void strtab_grow(struct strtab *t)
{
	uint32_t nslots = t->mask ? (t->mask + 1) * 2 : 64;
	uint32_t *slot = xcalloc(nslots, sizeof(*slot));

	for (uint32_t id = 0; id < t->n; id++) {
		uint64_t h = hash_bytes(t->str[id], t->len[id]);
		uint32_t j = h & (nslots - 1);
		while (slot[j])
			j = (j + 1) & (nslots - 1);
		slot[j] = id + 1;
	}
	free(t->slot);
	t->slot = slot;
	t->mask = nslots - 1;
}

static uint32_t strtab_intern(struct strtab *t, const char *s, size_t n)
{
	if ((uint64_t)(t->n + 1) * 2 > (uint64_t)t->mask + 1)
		strtab_grow(t);
	uint64_t h = hash_bytes(s, n);
	uint32_t j = h & t->mask;
	for (; t->slot[j]; j = (j + 1) & t->mask) {
		uint32_t id = t->slot[j] - 1;
		if (t->len[id] == n && !memcmp(t->str[id], s, n))
			return id;
	}
	if (t->n == t->cap) {
		t->cap = t->cap ? t->cap * 2 : 64;
		t->str = xreallocarray(t->str, t->cap, sizeof(*t->str));
		t->len = xreallocarray(t->len, t->cap, sizeof(*t->len));
	}
	char *copy = xmalloc(n + 1);
	memcpy(copy, s, n);
	copy[n] = '\0';
	t->str[t->n] = copy;
	t->len[t->n] = n;
	t->slot[j] = t->n + 1;
	return t->n++;
}

static void strtab_free(struct strtab *t)
{
	for (uint32_t i = 0; i < t->n; i++)
		free(t->str[i]);
	free(t->str);
	free(t->len);
	free(t->slot);
	memset(t, 0, sizeof(*t));
}

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
	strtab_free(&p->files);
	strtab_free(&p->fns);
	strtab_free(&p->raw_files);
	strtab_free(&p->raw_fns);
	free(p->fn);
	free(p->fn_slot);
	free(p->cc);
	free(p->counts);
	free(p->cc_slot);
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

static void fn_rehash(struct profile *p)
{
	uint32_t nslots = p->fn_mask ? (p->fn_mask + 1) * 2 : 256;
	uint32_t *slot = xcalloc(nslots, sizeof(*slot));

	for (uint32_t i = 0; i < p->n_fn; i++) {
		uint64_t k = (uint64_t)p->fn[i].file << 32 | p->fn[i].name;
		uint32_t j = hash_u64(k) & (nslots - 1);
		while (slot[j])
			j = (j + 1) & (nslots - 1);
		slot[j] = i + 1;
	}
	free(p->fn_slot);
	p->fn_slot = slot;
	p->fn_mask = nslots - 1;
}

static uint32_t fn_lookup(struct profile *p, uint32_t file, uint32_t name)
{
	if ((uint64_t)(p->n_fn + 1) * 2 > (uint64_t)p->fn_mask + 1)
		fn_rehash(p);
	uint64_t k = (uint64_t)file << 32 | name;
	uint32_t j = hash_u64(k) & p->fn_mask;
	for (; p->fn_slot[j]; j = (j + 1) & p->fn_mask) {
		struct prof_fn *f = &p->fn[p->fn_slot[j] - 1];
		if (f->file == file && f->name == name)
			return p->fn_slot[j] - 1;
	}
	if (p->n_fn == p->cap_fn) {
		p->cap_fn = p->cap_fn ? p->cap_fn * 2 : 256;
		p->fn = xreallocarray(p->fn, p->cap_fn, sizeof(*p->fn));
	}
	p->fn[p->n_fn] = (struct prof_fn){ .file = file, .name = name };
	p->fn_slot[j] = p->n_fn + 1;
	return p->n_fn++;
}

static void cc_rehash(struct profile *p)
{
	uint32_t nslots = p->cc_mask ? (p->cc_mask + 1) * 2 : 1024;
	uint32_t *slot = xcalloc(nslots, sizeof(*slot));

	for (uint32_t i = 0; i < p->n_cc; i++) {
		uint64_t k = (uint64_t)p->cc[i].fn << 32 | p->cc[i].line;
		uint32_t j = hash_u64(k) & (nslots - 1);
		while (slot[j])
			j = (j + 1) & (nslots - 1);
		slot[j] = i + 1;
	}
	free(p->cc_slot);
	p->cc_slot = slot;
	p->cc_mask = nslots - 1;
}

/* The counts row of (fn, line), created all-absent if new; NULL when the
 * profile already holds the most cost centres we can index. */
static int64_t *cc_lookup(struct profile *p, uint32_t fn, uint32_t line)
{
	if ((uint64_t)(p->n_cc + 1) * 2 > (uint64_t)p->cc_mask + 1) {
		if (p->cc_mask >= (1u << 31) - 1)
			return NULL;
		cc_rehash(p);
	}
	uint64_t k = (uint64_t)fn << 32 | line;
	uint32_t j = hash_u64(k) & p->cc_mask;
	for (; p->cc_slot[j]; j = (j + 1) & p->cc_mask) {
		uint32_t i = p->cc_slot[j] - 1;
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
	p->cc_slot[j] = p->n_cc + 1;
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

struct sbuf {
	char *s;
	size_t n, cap;
};

static void sb_add(struct sbuf *b, const char *s, size_t n)
{
	if (b->n + n + 1 > b->cap) {
		b->cap = (b->n + n + 1) * 2;
		b->s = xreallocarray(b->s, b->cap, 1);
	}
	memcpy(b->s + b->n, s, n);
	b->n += n;
	b->s[b->n] = '\0';
}

/* REPL: \N or $N is group N, & is the whole match, \x is x. */
char *prof_mod_apply(const struct prof_mod *m, const char *s)
{
	struct sbuf b = { 0 };
	regmatch_t g[10];
	const char *at = s;
	int eflags = 0;

	sb_add(&b, "", 0);
	while (*at || at == s) {
		if (regexec(&m->re, at, 10, g, eflags))
			break;
		sb_add(&b, at, g[0].rm_so);
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
				sb_add(&b, r, 1);
			else if (g[k].rm_so >= 0)
				sb_add(&b, at + g[k].rm_so,
				       g[k].rm_eo - g[k].rm_so);
		}
		if (g[0].rm_eo == g[0].rm_so) {
			/* Empty match: copy one char to make progress. */
			if (!at[g[0].rm_eo]) {
				at += g[0].rm_eo;
				break;
			}
			sb_add(&b, at + g[0].rm_eo, 1);
			at += g[0].rm_eo + 1;
		} else {
			at += g[0].rm_eo;
		}
		eflags = REG_NOTBOL;
		if (!m->global)
			break;
	}
	sb_add(&b, at, strlen(at));
	return b.s;
}

/* The final id of a name, through the rewrite when there is one. */
static uint32_t map_name(struct strtab *final, struct strtab *raw,
			 const struct prof_mod *m, uint32_t **map,
			 uint32_t *n_map, const char *s, size_t n)
{
	if (!m->set)
		return strtab_intern(final, s, n);
	uint32_t rid = strtab_intern(raw, s, n);
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
		(*map)[rid] = strtab_intern(final, mod, strlen(mod)) + 1;
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
	for (unsigned e = 0; e < p->n_events; e++) {
		int64_t v = r->row[e];
		if (v == PROF_ABSENT)
			continue;
		if (__builtin_add_overflow(r->tot[e], v, &r->tot[e]))
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

static int rd_line(struct reader *r, const char *s, size_t len)
{
	struct profile *p = r->p;
	const char *end = s + len;
	char buf[64];

	r->lineno++;
	/* Hot path first: count lines. */
	if (len && r->state == RD_BODY && (unsigned)(*s - '0') <= 9)
		return rd_count_line(r, s, end);
	if (skip_ws(s, end) == end || *s == '#')
		return 0;

	switch (r->state) {
	case RD_HEADER:
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
			       excerpt(buf, sizeof(buf), s, len));
	case RD_EVENTS:
		if (!has_prefix(s, end, "events:"))
			return rd_fail(r, "expected an events: line, found '%s'",
				       excerpt(buf, sizeof(buf), s, len));
		if (rd_events(r, s + 7, end))
			return -1;
		r->row = xcalloc(p->n_events, sizeof(*r->row));
		r->tot = xcalloc(p->n_events, sizeof(*r->tot));
		r->state = RD_BODY;
		return 0;
	case RD_BODY:
		if (has_prefix(s, end, "fn=")) {
			if (!r->have_file)
				return rd_fail(r, "fn= line before any fl= line");
			if (check_name(r, "function", s + 3, end))
				return -1;
			uint32_t name = map_name(&p->fns, &p->raw_fns,
						 &p->mod_fn, &p->fn_map,
						 &p->n_fn_map, s + 3,
						 end - s - 3);
			r->fn = fn_lookup(p, r->file, name);
			return 0;
		}
		if (has_prefix(s, end, "fl=")) {
			if (check_name(r, "file", s + 3, end))
				return -1;
			r->file = map_name(&p->files, &p->raw_files,
					   &p->mod_file, &p->file_map,
					   &p->n_file_map, s + 3, end - s - 3);
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
			       excerpt(buf, sizeof(buf), s, len));
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
	/* A later input must repeat the first one's events: line. */
	r->state = RD_HEADER;
	p->n_inputs++;
}

static void rd_done(struct reader *r)
{
	free(r->row);
	free(r->tot);
	free(r->summary);
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
