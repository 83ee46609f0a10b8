/* Cachegrind-format profiles (the end-of-run summary is cgsummary.c).
 *
 * The writer resolves each distinct pc once (through symbols.c, whose
 * answers are cached per pc), sorts the (file, fn, line) cost centres and
 * merges equal ones while writing.  Counts are plain decimal numbers, 0
 * for zero, as Cachegrind 3.19 writes them; lines whose counts are all zero
 * are left out. */
#include "cgout.h"

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"

/* Names and free text come from outside (the command line, DWARF, symbol
 * tables) and one line holds one of them: a newline in a program argument
 * or a file name would end the cmd: or fl= line and inject cost lines of
 * its own.  Each newline is written as the two characters "\n"; nothing
 * else is changed, not even a backslash, so every name without a newline
 * is written byte for byte as Cachegrind writes it (our profiles and
 * valgrind's compare equal) and cg_annotate and cachetrace-annotate show
 * it as it is.  The price: a name that really holds backslash-n reads the
 * same as one that held a newline; names are only displayed, never
 * looked up again. */
void cgout_put_text(FILE *out, const char *s)
{
	for (;;) {
		size_t n = strcspn(s, "\n");

		fwrite(s, 1, n, out);
		if (!s[n])
			return;
		fputs("\\n", out);
		s += n + 1;
	}
}

/* KEY then TEXT escaped, then a newline: one header or name line. */
static void put_line(FILE *out, const char *key, const char *text)
{
	fputs(key, out);
	cgout_put_text(out, text);
	fputc('\n', out);
}

static int cmp_cc(const void *a, const void *b)
{
	const struct cgout_cc *x = a, *y = b;
	int c = strcmp(x->loc.file, y->loc.file);

	if (c)
		return c;
	c = strcmp(x->loc.fn, y->loc.fn);
	if (c)
		return c;
	if (x->loc.line != y->loc.line)
		return x->loc.line < y->loc.line ? -1 : 1;
	return 0;
}

static bool same_loc(const struct src_loc *a, const struct src_loc *b)
{
	return a->line == b->line && !strcmp(a->file, b->file)
		&& !strcmp(a->fn, b->fn);
}

int cgout_write_resolved(FILE *out, const struct cgout_meta *meta,
			 struct cgout_cc *ccs, size_t n_ccs, uint64_t *totals)
{
	unsigned ne = meta->n_events;
	uint64_t *sum = xcalloc(ne ? ne : 1, sizeof(*sum));
	const char *cur_file = NULL, *cur_fn = NULL;

	memset(totals, 0, ne * sizeof(*totals));
	if (n_ccs)
		qsort(ccs, n_ccs, sizeof(*ccs), cmp_cc);

	if (meta->desc)
		for (const char *const *d = meta->desc; *d; d++)
			put_line(out, "desc: ", *d);
	put_line(out, "cmd: ", meta->cmd ? meta->cmd : "");
	fputs("events:", out);
	for (unsigned e = 0; e < ne; e++)
		fprintf(out, " %s", meta->events[e]);
	fputc('\n', out);

	for (size_t i = 0; i < n_ccs; ) {
		size_t j = i;
		bool nonzero = false;

		memset(sum, 0, ne * sizeof(*sum));
		for (; j < n_ccs && same_loc(&ccs[i].loc, &ccs[j].loc); j++)
			for (unsigned e = 0; e < ne; e++)
				sum[e] += ccs[j].row[e];
		for (unsigned e = 0; e < ne; e++) {
			totals[e] += sum[e];
			nonzero |= sum[e] != 0;
		}
		if (nonzero) {
			const struct src_loc *l = &ccs[i].loc;

			if (!cur_file || strcmp(cur_file, l->file)) {
				put_line(out, "fl=", l->file);
				cur_file = l->file;
				cur_fn = NULL;
			}
			if (!cur_fn || strcmp(cur_fn, l->fn)) {
				put_line(out, "fn=", l->fn);
				cur_fn = l->fn;
			}
			fprintf(out, "%u", l->line);
			for (unsigned e = 0; e < ne; e++)
				fprintf(out, " %" PRIu64, sum[e]);
			fputc('\n', out);
		}
		i = j;
	}

	fputs("summary:", out);
	for (unsigned e = 0; e < ne; e++)
		fprintf(out, " %" PRIu64, totals[e]);
	fputc('\n', out);
	free(sum);

	errno = 0;
	if (fflush(out) != 0 || ferror(out)) {
		if (!errno)
			errno = EIO;
		return -1;
	}
	return 0;
}

int cgout_write(FILE *out, const struct cgout_meta *meta,
		const struct cost_table *costs, struct symbols *syms,
		uint64_t *totals)
{
	size_t n = costs_count(costs);
	struct cgout_cc *ccs;
	int ret;

	if (costs_n_events(costs) != meta->n_events) {
		errno = EINVAL;
		return -1;
	}
	ccs = xcalloc(n ? n : 1, sizeof(*ccs));
	for (size_t i = 0; i < n; i++) {
		sym_lookup(syms, costs_pc_at(costs, i), &ccs[i].loc);
		ccs[i].row = costs_row_at(costs, i);
	}
	ret = cgout_write_resolved(out, meta, ccs, n, totals);
	free(ccs);
	return ret;
}

/* ---- file names ---- */


/* %n: "a file sequence number unique for this process" (valgrind's
 * manual); valgrind counts per expansion, from 1. */
static unsigned name_seq;

/* DRY: only checking, %n does not count. */
static char *expand_name(const char *pattern, int pid, bool dry, char *err,
			 size_t errlen)
{
	struct strbuf b = { 0 };
	char num[32];

	if (!pattern || !*pattern) {
		snprintf(err, errlen, "no file name given");
		return NULL;
	}
	strbuf_add(&b, "", 0);
	for (const char *p = pattern; *p; p++) {
		if (*p != '%') {
			strbuf_add(&b, p, 1);
			continue;
		}
		switch (*++p) {
		case '%':
			strbuf_add(&b, "%", 1);
			break;
		case 'p':
			snprintf(num, sizeof(num), "%d", pid);
			strbuf_add(&b, num, strlen(num));
			break;
		case 'n':
			snprintf(num, sizeof(num), "%u",
				 dry ? name_seq + 1 : ++name_seq);
			strbuf_add(&b, num, strlen(num));
			break;
		case 'q': {
			const char *name, *end, *val;
			char *var;

			if (p[1] != '{') {
				snprintf(err, errlen,
					 "expected '{' after '%%q'");
				goto fail;
			}
			name = p + 2;
			end = strchr(name, '}');
			if (!end) {
				snprintf(err, errlen,
					 "missing '}' in a %%q{VAR}");
				goto fail;
			}
			var = xasprintf("%.*s", (int)(end - name), name);
			val = getenv(var);
			if (!val) {
				snprintf(err, errlen,
					 "environment variable '%s' is not set",
					 var);
				free(var);
				goto fail;
			}
			free(var);
			strbuf_add(&b, val, strlen(val));
			p = end;
			break;
		}
		default:
			snprintf(err, errlen,
				 "expected p, q{VAR}, n or %% after %%");
			goto fail;
		}
	}
	return b.s;
fail:
	free(b.s);
	return NULL;
}

char *cgout_expand_name(const char *pattern, int pid, char *err,
			size_t errlen)
{
	return expand_name(pattern, pid, false, err, errlen);
}

int cgout_check_name(const char *pattern, char *err, size_t errlen)
{
	char *name = expand_name(pattern, 1, true, err, errlen);

	free(name);
	return name ? 0 : -1;
}
