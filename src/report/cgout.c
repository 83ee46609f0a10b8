/* Cachegrind-format profiles and Cachegrind's end-of-run summary.
 *
 * The writer resolves each distinct pc once (through symbols.c, whose
 * answers are cached per pc), sorts the (file, fn, line) cost centres and
 * merges equal ones while writing.  Counts are plain decimal numbers, 0
 * for zero, as Cachegrind 3.19 writes them; lines whose counts are all zero
 * are left out.
 *
 * The summary reproduces cg_main.c's cg_fini of valgrind 3.19: column
 * widths come from the largest number of each column, with thousands
 * separators; rates are printed with valgrind's own %f, which truncates and
 * then rounds up only when the rest is strictly above one half. */
#include "cgout.h"

#include <errno.h>
#include <inttypes.h>
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

char *cgout_expand_name(const char *pattern, int pid, char *err,
			size_t errlen)
{
	struct strbuf b = { 0 };
	char num[32];

	if (!pattern || !*pattern) {
		snprintf(err, errlen, "No filename given");
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
			snprintf(num, sizeof(num), "%u", ++name_seq);
			strbuf_add(&b, num, strlen(num));
			break;
		case 'q': {
			const char *name, *end, *val;
			char *var;

			if (p[1] != '{') {
				snprintf(err, errlen,
					 "Expected '{' after '%%q'");
				goto fail;
			}
			name = p + 2;
			end = strchr(name, '}');
			if (!end) {
				snprintf(err, errlen,
					 "Missing '}' in %%q specifier");
				goto fail;
			}
			var = xasprintf("%.*s", (int)(end - name), name);
			val = getenv(var);
			if (!val) {
				snprintf(err, errlen,
					 "Environment variable '%s' is not set",
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
				 "Expected 'p' or 'q' or '%%' after '%%'");
			goto fail;
		}
	}
	return b.s;
fail:
	free(b.s);
	return NULL;
}

/* ---- the end-of-run summary ---- */

/* Cachegrind's ULong_width: digits plus room for the commas. */
static int ulong_width(uint64_t n)
{
	int w = 0;

	while (n > 0) {
		n /= 10;
		w++;
	}
	if (w == 0)
		w = 1;
	return w + (w - 1) / 3;
}

/* valgrind's "%,*llu": right-aligned in WIDTH, commas every 3 digits. */
static void put_commas(FILE *out, int width, uint64_t n)
{
	char buf[40];
	int i = sizeof(buf) - 1, digits = 0;

	buf[i] = '\0';
	do {
		if (digits && digits % 3 == 0)
			buf[--i] = ',';
		buf[--i] = (char)('0' + n % 10);
		n /= 10;
		digits++;
	} while (n);
	fprintf(out, "%*s", width, buf + i);
}

/* valgrind's "%*.Nf" (m_debuglog.c): the fraction is truncated, then
 * rounded up only when what was cut off is strictly more than a half. */
static void put_vgfloat(FILE *out, int width, int prec, double val)
{
	uint64_t factor = 1, ip, frval;
	double frac;
	char buf[64];

	for (int i = 0; i < prec; i++)
		factor *= 10;
	ip = (uint64_t)val;
	frac = val - (double)ip;
	frval = (uint64_t)(frac * (double)factor);
	if (frac * (double)factor - (double)frval > 0.5)
		frval++;
	if (frval == factor)
		ip++;
	frval %= factor;
	snprintf(buf, sizeof(buf), "%" PRIu64 ".%0*" PRIu64, ip, prec, frval);
	fprintf(out, "%*s", width, buf);
}

enum { EV_Ir, EV_I1mr, EV_ILmr, EV_Dr, EV_D1mr, EV_DLmr, EV_Dw, EV_D1mw,
       EV_DLmw, EV_Bc, EV_Bcm, EV_Bi, EV_Bim, EV_N };

static const char *const std_events[EV_N] = {
	"Ir", "I1mr", "ILmr", "Dr", "D1mr", "DLmr", "Dw", "D1mw", "DLmw",
	"Bc", "Bcm", "Bi", "Bim",
};

/* Where the summary goes and its three column widths (all, read or
 * conditional, write or indirect). */
struct sum_out {
	FILE *out;
	const char *prefix;
	int l1, l2, l3;
};

/* "LABEL  all" on one line. */
static void sum_count(const struct sum_out *o, const char *label, uint64_t all)
{
	fprintf(o->out, "%s%s", o->prefix, label);
	put_commas(o->out, o->l1, all);
	fputc('\n', o->out);
}

/* "LABEL  all  (a A + b B)": a count split in two, A and B naming the
 * halves (" rd   + ", " wr)\n" or " cond + ", " ind)\n"). */
static void sum_split(const struct sum_out *o, const char *label,
		      uint64_t all, uint64_t a, const char *a_name,
		      uint64_t b, const char *b_name)
{
	fprintf(o->out, "%s%s", o->prefix, label);
	put_commas(o->out, o->l1, all);
	fputs("  (", o->out);
	put_commas(o->out, o->l2, a);
	fputs(a_name, o->out);
	put_commas(o->out, o->l3, b);
	fputs(b_name, o->out);
}

/* "LABEL  all% (a%     + b%END": a rate split in two. */
static void sum_rates(const struct sum_out *o, const char *label, double all,
		      double a, double b, const char *end)
{
	fprintf(o->out, "%s%s", o->prefix, label);
	put_vgfloat(o->out, o->l1, 1, all);
	fputs("% (", o->out);
	put_vgfloat(o->out, o->l2, 1, a);
	fputs("%     + ", o->out);
	put_vgfloat(o->out, o->l3, 1, b);
	fputs(end, o->out);
}

/* The I, D and LL blocks of cg_fini. */
static void sum_cache(const struct sum_out *o, const uint64_t *v)
{
	FILE *out = o->out;
	uint64_t ir_a, dr_a, dw_a, d_a, d_m1, d_mL;

	sum_count(o, "I1  misses:    ", v[EV_I1mr]);
	sum_count(o, "LLi misses:    ", v[EV_ILmr]);
	ir_a = v[EV_Ir] ? v[EV_Ir] : 1;
	fprintf(out, "%sI1  miss rate: ", o->prefix);
	put_vgfloat(out, o->l1, 2, (double)v[EV_I1mr] * 100.0 / (double)ir_a);
	fprintf(out, "%%\n%sLLi miss rate: ", o->prefix);
	put_vgfloat(out, o->l1, 2, (double)v[EV_ILmr] * 100.0 / (double)ir_a);
	fprintf(out, "%%\n%s\n", o->prefix);

	d_a = v[EV_Dr] + v[EV_Dw];
	d_m1 = v[EV_D1mr] + v[EV_D1mw];
	d_mL = v[EV_DLmr] + v[EV_DLmw];
	sum_split(o, "D   refs:      ", d_a, v[EV_Dr], " rd   + ", v[EV_Dw],
		  " wr)\n");
	sum_split(o, "D1  misses:    ", d_m1, v[EV_D1mr], " rd   + ",
		  v[EV_D1mw], " wr)\n");
	sum_split(o, "LLd misses:    ", d_mL, v[EV_DLmr], " rd   + ",
		  v[EV_DLmw], " wr)\n");
	d_a = d_a ? d_a : 1;
	dr_a = v[EV_Dr] ? v[EV_Dr] : 1;
	dw_a = v[EV_Dw] ? v[EV_Dw] : 1;
	sum_rates(o, "D1  miss rate: ", (double)d_m1 * 100.0 / (double)d_a,
		  (double)v[EV_D1mr] * 100.0 / (double)dr_a,
		  (double)v[EV_D1mw] * 100.0 / (double)dw_a, "%  )\n");
	sum_rates(o, "LLd miss rate: ", (double)d_mL * 100.0 / (double)d_a,
		  (double)v[EV_DLmr] * 100.0 / (double)dr_a,
		  (double)v[EV_DLmw] * 100.0 / (double)dw_a, "%  )\n");
	fprintf(out, "%s\n", o->prefix);

	/* The LL rate divides by the totals bumped to 1 above, as
	 * cg_fini does. */
	uint64_t ll_m = v[EV_DLmr] + v[EV_DLmw] + v[EV_ILmr];
	uint64_t ll_mr = v[EV_DLmr] + v[EV_ILmr];

	sum_split(o, "LL refs:       ", v[EV_D1mr] + v[EV_D1mw] + v[EV_I1mr],
		  v[EV_D1mr] + v[EV_I1mr], " rd   + ", v[EV_D1mw], " wr)\n");
	sum_split(o, "LL misses:     ", ll_m, ll_mr, " rd   + ", v[EV_DLmw],
		  " wr)\n");
	sum_rates(o, "LL miss rate:  ",
		  (double)ll_m * 100.0 / (double)(ir_a + d_a),
		  (double)ll_mr * 100.0 / (double)(ir_a + dr_a),
		  (double)v[EV_DLmw] * 100.0 / (double)dw_a, "%  )\n");
}

/* The branch block; as cg_fini, zero branch counts become 1 first. */
static void sum_branches(const struct sum_out *o, const uint64_t *v)
{
	uint64_t bc_b = v[EV_Bc] ? v[EV_Bc] : 1;
	uint64_t bi_b = v[EV_Bi] ? v[EV_Bi] : 1;
	uint64_t b_b = bc_b + bi_b;
	uint64_t b_mp = v[EV_Bcm] + v[EV_Bim];

	fprintf(o->out, "%s\n", o->prefix);
	sum_split(o, "Branches:      ", b_b, bc_b, " cond + ", bi_b, " ind)\n");
	sum_split(o, "Mispredicts:   ", b_mp, v[EV_Bcm], " cond + ", v[EV_Bim],
		  " ind)\n");
	sum_rates(o, "Mispred rate:  ", (double)b_mp * 100.0 / (double)b_b,
		  (double)v[EV_Bcm] * 100.0 / (double)bc_b,
		  (double)v[EV_Bim] * 100.0 / (double)bi_b, "%   )\n");
}

void cgout_print_summary(FILE *out, const char *prefix, unsigned n_events,
			 const char *const *events, const uint64_t *totals)
{
	uint64_t v[EV_N] = { 0 };
	bool have[EV_N] = { false };
	bool cache = true, branch = false;
	struct sum_out o = { out, prefix ? prefix : "", 0, 0, 0 };

	for (unsigned e = 0; e < n_events; e++)
		for (int k = 0; k < EV_N; k++)
			if (!strcmp(events[e], std_events[k])) {
				v[k] = totals[e];
				have[k] = true;
			}
	/* The cache block needs all of Cachegrind's cache events: other
	 * models (hier: L2mr, ...) print their own sections instead. */
	for (int k = EV_I1mr; k <= EV_DLmw; k++)
		cache &= have[k];
	for (int k = EV_Bc; k <= EV_Bim; k++)
		branch |= have[k];

	o.l1 = ulong_width(v[EV_Ir]);
	o.l2 = ulong_width(v[EV_Dr] > v[EV_Bc] ? v[EV_Dr] : v[EV_Bc]);
	o.l3 = ulong_width(v[EV_Dw] > v[EV_Bi] ? v[EV_Dw] : v[EV_Bi]);
	sum_count(&o, "I   refs:      ", v[EV_Ir]);
	if (cache)
		sum_cache(&o, v);
	if (branch)
		sum_branches(&o, v);
}
