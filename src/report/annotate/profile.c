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

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "error.h"
#include "profile_private.h"
#include "sampled.h"


/* ---- the profile -------------------------------------------------------- */

void prof_init(struct profile *p)
{
	memset(p, 0, sizeof(*p));
}

void prof_free(struct profile *p)
{
	sampled_free(p->sampled);
	p->sampled = NULL;
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
uint32_t prof_fn_lookup_owned(struct profile *p, uint32_t file,
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

uint32_t prof_fn_lookup(struct profile *p, uint32_t file, uint32_t name)
{
	return prof_fn_lookup_owned(p, file, name, UINT32_MAX);
}

static uint64_t call_hash(const void *ctx, uint32_t i)
{
	const struct profile *p = ctx;
	return hash_pair(p->call[i].caller, p->call[i].callee);
}

/* The edge CALLER -> CALLEE, created with no calls and all-absent costs if
 * new; NULL when there are too many. */
struct prof_call *prof_call_lookup(struct profile *p, uint32_t caller,
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
int64_t *prof_cc_lookup(struct profile *p, uint32_t fn, uint32_t line)
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
		/* Our messages are lower case; glibc's start "Unmatched". */
		buf[0] = (char)tolower((unsigned char)buf[0]);
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
uint32_t prof_map_name(struct strintern *final, struct strintern *raw,
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

int prof_find_event(const struct profile *p, const char *name, size_t n)
{
	for (unsigned e = 0; e < p->n_events; e++)
		if (strlen(p->events[e]) == n && !strncmp(p->events[e], name, n))
			return e;
	return -1;
}
