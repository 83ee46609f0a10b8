/* Reading a profile: the reader's line loop, errors, counts, and the
 * Cachegrind format (the grammar is at the top of profile.c).  The
 * Callgrind format is profread_cg.c. */
#include "profile.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "error.h"
#include "profile_private.h"
#include "sampled.h"

#define READ_BUF (2u * PROF_MAX_LINE)

/* ---- the reader --------------------------------------------------------- */

static uint64_t idmap_hash(const void *ctx, uint32_t i)
{
	const struct idmap *m = ctx;
	return hash_u64(m->key[i]);
}

/* The value slot of KEY (0 when new). */
uint32_t *rd_idmap_slot(struct idmap *m, uint64_t key)
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

int rd_fail(struct reader *r, const char *fmt, ...)
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
const char *rd_excerpt(char *buf, size_t size, const char *s, size_t n)
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

/* Parse counts from S to END into ROW (absent-filled to n_events). */
int rd_parse_counts(struct reader *r, const char *s, const char *end,
		    int64_t *row)
{
	unsigned n = r->p->n_events, i = 0;
	char buf[64];

	for (;;) {
		s = rd_skip_ws(s, end);
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
		if (s < end && !rd_is_ws(*s))
			goto bad;
		i++;
		continue;
big:
		while (s < end && !rd_is_ws(*s))
			s++;
		return rd_fail(r, "count '%s' is too large",
			       rd_excerpt(buf, sizeof(buf), start, s - start));
bad:
		while (s < end && !rd_is_ws(*s))
			s++;
		return rd_fail(r, "bad count '%s'",
			       rd_excerpt(buf, sizeof(buf), start, s - start));
	}
	for (; i < n; i++)
		row[i] = PROF_ABSENT;
	return 0;
}

/* DST += r->row times the sign; TOT (the input's own totals, or NULL)
 * += r->row. */
int rd_add_counts(struct reader *r, int64_t *dst, int64_t *tot)
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

int rd_count_line(struct reader *r, const char *s, const char *end)
{
	struct profile *p = r->p;
	uint64_t line = 0;
	char buf[64];
	const char *start = s;

	while (s < end && (unsigned)(*s - '0') <= 9) {
		line = line * 10 + (*s - '0');
		if (line > UINT32_MAX)
			return rd_fail(r, "line number '%s' is too large",
				       rd_excerpt(buf, sizeof(buf), start,
					       end - start > 24 ? 24
							       : end - start));
		s++;
	}
	if (s < end && !rd_is_ws(*s))
		return rd_fail(r, "malformed line '%s'",
			       rd_excerpt(buf, sizeof(buf), start, end - start));
	if (r->fn < 0)
		return rd_fail(r, r->have_file ?
			       "counts before any fn= line after fl=" :
			       "counts before any fl= and fn= line");
	if (rd_parse_counts(r, s, end, r->row))
		return -1;

	int64_t *dst = prof_cc_lookup(p, r->fn, line);
	if (!dst)
		return rd_fail(r, "too many cost centres");
	return rd_add_counts(r, dst, r->tot);
}

bool rd_has_prefix(const char *s, const char *end, const char *pfx)
{
	size_t n = strlen(pfx);
	return (size_t)(end - s) >= n && !memcmp(s, pfx, n);
}

int rd_check_name(struct reader *r, const char *what, const char *s,
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

int rd_events(struct reader *r, const char *s, const char *end)
{
	struct profile *p = r->p;
	char *names[PROF_MAX_EVENTS];
	unsigned n = 0;
	char buf[64];

	if (memchr(s, '\0', end - s))
		return rd_fail(r, "NUL byte in events: line");
	for (;;) {
		s = rd_skip_ws(s, end);
		if (s == end)
			break;
		const char *e = rd_word_end(s, end);
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
					rd_excerpt(buf, sizeof(buf), s, e - s));
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
					     rd_excerpt(buf, sizeof(buf),
						     names[i],
						     strlen(names[i])),
					     p->events[i]);
	}
	for (unsigned i = 0; i < n; i++)
		free(names[i]);
	return rc;
}

void rd_add_unique(char ***v, unsigned *n, const char *s,
		   const char *end)
{
	for (unsigned i = 0; i < *n; i++)
		if (strlen((*v)[i]) == (size_t)(end - s) &&
		    !memcmp((*v)[i], s, end - s))
			return;
	*v = xreallocarray(*v, *n + 1, sizeof(**v));
	(*v)[(*n)++] = dup_text(s, end);
}

/* Before cmd:: desc: lines, or a Callgrind key that says the format. */
static int rd_header_line(struct reader *r, const char *s, const char *end)
{
	struct profile *p = r->p;
	char buf[64];

	if (cg_is_key(s, end)) {
		r->cg = p->has_calls = true;
		return cg_line(r, s, (size_t)(end - s));
	}
	if (rd_has_prefix(s, end, "desc:")) {
		s = rd_skip_ws(s + 5, end);
		if (memchr(s, '\0', end - s))
			return rd_fail(r, "NUL byte in desc: line");
		rd_add_unique(&p->desc, &p->n_desc, s, end);
		return 0;
	}
	if (rd_has_prefix(s, end, "cmd:")) {
		s = rd_skip_ws(s + 4, end);
		if (memchr(s, '\0', end - s))
			return rd_fail(r, "NUL byte in cmd: line");
		rd_add_unique(&p->cmds, &p->n_cmds, s, end);
		r->state = RD_EVENTS;
		return 0;
	}
	return rd_fail(r, "expected a desc: or cmd: line, found '%s'",
		       rd_excerpt(buf, sizeof(buf), s, (size_t)(end - s)));
}

/* The events: line, after which count lines may come. */
static int rd_events_line(struct reader *r, const char *s, const char *end)
{
	struct profile *p = r->p;
	char buf[64];

	if (!rd_has_prefix(s, end, "events:"))
		return rd_fail(r, "expected an events: line, found '%s'",
			       rd_excerpt(buf, sizeof(buf), s, (size_t)(end - s)));
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

	if (rd_has_prefix(s, end, "fn=")) {
		if (!r->have_file)
			return rd_fail(r, "fn= line before any fl= line");
		if (rd_check_name(r, "function", s + 3, end))
			return -1;
		uint32_t name = prof_map_name(&p->fns, &p->raw_fns, &p->mod_fn,
					 &p->fn_map, &p->n_fn_map, s + 3,
					 end - s - 3);
		r->fn = prof_fn_lookup(p, r->file, name);
		return 0;
	}
	if (rd_has_prefix(s, end, "fl=")) {
		if (rd_check_name(r, "file", s + 3, end))
			return -1;
		r->file = prof_map_name(&p->files, &p->raw_files, &p->mod_file,
				   &p->file_map, &p->n_file_map, s + 3,
				   end - s - 3);
		r->have_file = true;
		r->fn = -1;
		return 0;
	}
	if (rd_has_prefix(s, end, "summary:")) {
		r->summary = xcalloc(p->n_events, sizeof(*r->summary));
		if (rd_parse_counts(r, s + 8, end, r->summary))
			return -1;
		r->summary_line = r->lineno;
		r->state = RD_DONE;
		return 0;
	}
	return rd_fail(r, "malformed line '%s'",
		       rd_excerpt(buf, sizeof(buf), s, (size_t)(end - s)));
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
	    rd_has_prefix(s, end, "# callgrind format")) {
		r->cg = p->has_calls = true;
		return 0;
	}
	if (*s == '#') {
		/* a sampled profile's statistics, else a comment */
		char err[128];
		if (sampled_line(&p->sampled, s, end, err, sizeof(err)) < 0)
			return rd_fail(r, "%s", err);
		return 0;
	}
	if (rd_skip_ws(s, end) == end)
		return 0;

	switch (r->state) {
	case RD_HEADER:
		return rd_header_line(r, s, end);
	case RD_EVENTS:
		return rd_events_line(r, s, end);
	case RD_BODY:
		return rd_body_line(r, s, end);
	case RD_DONE:
		if (rd_has_prefix(s, end, "summary:"))
			return rd_fail(r, "second summary: line");
		return rd_fail(r, "line after the summary: line: '%s'",
			       rd_excerpt(buf, sizeof(buf), s, len));
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
