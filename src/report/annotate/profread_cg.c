/* Reading the Callgrind format: name compression, positions, calls=
 * lines, the header and its spec lines. */
#include "profile.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "error.h"
#include "profile_private.h"

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

bool cg_is_key(const char *s, const char *end)
{
	static const char *const keys[] = {
		"version:", "creator:", "pid:", "thread:", "part:",
		"positions:", "event:",
	};
	for (size_t i = 0; i < sizeof(keys) / sizeof(*keys); i++)
		if (rd_has_prefix(s, end, keys[i]))
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
	return prof_map_name(&p->files, &p->raw_files, &p->mod_file, &p->file_map,
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
					       "too large", rd_excerpt(buf,
					       sizeof(buf), s, end - s));
			q++;
		}
		if (q == end || *q != ')')
			return rd_fail(r, "malformed compressed name '%s'",
				       rd_excerpt(buf, sizeof(buf), s, end - s));
		q++;
		slot = rd_idmap_slot(&r->ids[ctx], n);
		const char *t = rd_skip_ws(q, end);
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
				       rd_excerpt(buf, sizeof(buf), s, end - s));
		s = t;
	}
	if (rd_check_name(r, ctx == ID_FL ? "file" : ctx == ID_FN ? "function"
						   : "object", s, end))
		return -1;
	uint32_t id = 0;
	if (ctx == ID_FL)
		id = prof_map_name(&p->files, &p->raw_files, &p->mod_file,
			      &p->file_map, &p->n_file_map, s, end - s);
	else if (ctx == ID_FN)
		id = prof_map_name(&p->fns, &p->raw_fns, &p->mod_fn, &p->fn_map,
			      &p->n_fn_map, s, end - s);
	if (slot) {
		/* With --mod-*, two names may map to one id: compare ids. */
		if (*slot && *slot != id + 1)
			return rd_fail(r, "compressed name redefined with "
				       "another name: '%s'",
				       rd_excerpt(buf, sizeof(buf), s, end - s));
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
				       rd_excerpt(buf, sizeof(buf), s, e - s));
		v = last - v;
	}
	*out = v;
	return 0;
bad:
	return rd_fail(r, "bad position '%s'", rd_excerpt(buf, sizeof(buf), s,
							e - s));
big:
	return rd_fail(r, "position '%s' is too large",
		       rd_excerpt(buf, sizeof(buf), s, e - s));
}

/* N positions from *S on; relative ones against r->last_pos. */
static int cg_positions(struct reader *r, const char **s, const char *end,
			unsigned n, uint64_t *pos)
{
	for (unsigned k = 0; k < n; k++) {
		const char *t = rd_skip_ws(*s, end);
		const char *e = rd_word_end(t, end);
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
	if (s < end && !rd_is_ws(*s))
		return rd_fail(r, "malformed cost line");
	memcpy(r->last_pos, pos, sizeof(pos));
	uint64_t line = r->line_pos >= 0 ? pos[r->line_pos] : 0;
	if (line > UINT32_MAX)
		return rd_fail(r, "line number %llu is too large",
			       (unsigned long long)line);
	if (r->fn < 0)
		return rd_fail(r, "cost line before any fn= line");
	if (rd_parse_counts(r, s, end, r->row))
		return -1;
	if (!r->pending) {
		int64_t *dst = prof_cc_lookup(p, r->fn, line);
		if (!dst)
			return rd_fail(r, "too many cost centres");
		return rd_add_counts(r, dst, r->tot);
	}
	int64_t *row;
	struct prof_call *c = prof_call_lookup(p, p->fn[r->fn].owner,
					  p->fn[r->callee].owner, &row);
	if (!c)
		return rd_fail(r, "too many call edges");
	r->pending = false;
	r->callee = -1;
	int64_t n = r->sign < 0 ? -r->pending_calls : r->pending_calls;
	if (__builtin_add_overflow(c->calls, n, &c->calls))
		return rd_fail(r, "merged call counts overflow");
	return rd_add_counts(r, row, NULL);
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
			       rd_excerpt(buf, sizeof(buf), start, end - start));
	for (; s < end && (unsigned)(*s - '0') <= 9; s++)
		if (__builtin_mul_overflow(n, 10, &n) ||
		    __builtin_add_overflow(n, *s - '0', &n) || n > INT64_MAX)
			return rd_fail(r, "call count in 'calls=%s' is too "
				       "large", rd_excerpt(buf, sizeof(buf), start,
							end - start));
	if (rd_skip_ws(s, end) == end)
		return rd_fail(r, "no target position in 'calls=%s'",
			       rd_excerpt(buf, sizeof(buf), start, end - start));
	if (!rd_is_ws(*s))
		return rd_fail(r, "bad call count in 'calls=%s'",
			       rd_excerpt(buf, sizeof(buf), start, end - start));
	if (cg_positions(r, &s, end, r->n_pos, target))
		return -1;
	if (rd_skip_ws(s, end) != end)
		return rd_fail(r, "junk after the target position in 'calls=%s'",
			       rd_excerpt(buf, sizeof(buf), start, end - start));
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
		s = rd_skip_ws(s, end);
		if (s == end)
			break;
		const char *e = rd_word_end(s, end);
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
				       "line)", rd_excerpt(buf, sizeof(buf), s,
							e - s));
		if (seen[k])
			return rd_fail(r, "position '%s' given twice",
				       rd_excerpt(buf, sizeof(buf), s, e - s));
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
	const char *v = rd_skip_ws(key_end + 1, end);
	size_t klen = key_end - s;
	char buf[64];

#define KEY(k) (klen == sizeof(k) - 1 && !memcmp(s, k, klen))
	if (r->done)
		return rd_fail(r, "line after the totals: line: '%s'",
			       rd_excerpt(buf, sizeof(buf), s, end - s));
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
		if (rd_parse_counts(r, v, end, *dst))
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
			       rd_excerpt(buf, sizeof(buf), s, end - s));
	if (memchr(s, '\0', end - s))
		return rd_fail(r, "NUL byte in a header line");
	if (KEY("version")) {
		if (end - v != 1 || (*v != '0' && *v != '1'))
			return rd_fail(r, "unsupported Callgrind format "
				       "version '%s' (1 is supported)",
				       rd_excerpt(buf, sizeof(buf), v, end - v));
		return 0;
	}
	if (KEY("creator") || KEY("pid") || KEY("thread") || KEY("part") ||
	    KEY("event"))
		return 0;
	if (KEY("cmd")) {
		rd_add_unique(&p->cmds, &p->n_cmds, v, end);
		return 0;
	}
	if (KEY("desc")) {
		rd_add_unique(&p->desc, &p->n_desc, v, end);
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
		       rd_excerpt(buf, sizeof(buf), s, end - s));
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
			       rd_excerpt(buf, sizeof(buf), s, end - s));
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
		r->fn = prof_fn_lookup_owned(p, id, r->fn_name,
					p->fn[r->fn].owner);
		return 0;
	}
	if (KEY("fn")) {
		if (cg_name(r, ID_FN, v, end, &id))
			return -1;
		if (r->cur_file < 0)
			r->cur_file = cg_unknown_file(r);
		r->fn_name = id;
		r->fn = prof_fn_lookup(p, r->cur_file, id);
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
		r->callee = prof_fn_lookup(p, file, id);
		r->cfile = -1;
		return 0;
	}
#undef KEY
	return rd_fail(r, "unknown line '%s'",
		       rd_excerpt(buf, sizeof(buf), s, end - s));
}

/* One line of a Callgrind-format input (r->lineno already counted). */
int cg_line(struct reader *r, const char *s, size_t len)
{
	const char *end = s + len;
	char buf[64];

	if (rd_skip_ws(s, end) == end || *s == '#')
		return 0;
	if (r->pending && !is_cost_start(*s))
		return rd_fail(r, "expected the cost line of the calls= line "
			       "%llu, found '%s'", r->pending_line,
			       rd_excerpt(buf, sizeof(buf), s, len));
	if (is_cost_start(*s)) {
		if (r->done)
			return rd_fail(r, "line after the totals: line: '%s'",
				       rd_excerpt(buf, sizeof(buf), s, len));
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
		       rd_excerpt(buf, sizeof(buf), s, len));
}

int cg_finish(struct reader *r)
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
