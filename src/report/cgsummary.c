/* Cachegrind's end-of-run summary (cgsummary.h): cg_main.c's cg_fini of
 * valgrind 3.19.  Column widths come from the largest number of each
 * column, with thousands separators; rates are printed with valgrind's own
 * %f, which truncates and then rounds up only when the rest is strictly
 * above one half.  Its own file (and library) so that the annotator, which
 * does not link libdw, prints the same lines in its HTML report. */
#include "cgsummary.h"

#include <inttypes.h>
#include <stdbool.h>
#include <string.h>

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

/* The branch block.  cg_fini turns a zero branch count into 1 before it
 * prints the counts, so that a run without indirect branches shows "1 ind"
 * and one that traced nothing "Branches: 2 (1 cond + 1 ind)" under "I
 * refs: 0" (issue 17).  We print the counts and only divide by 1 where a
 * count is zero, as for the cache rates. */
static void sum_branches(const struct sum_out *o, const uint64_t *v)
{
	uint64_t b = v[EV_Bc] + v[EV_Bi];
	uint64_t b_mp = v[EV_Bcm] + v[EV_Bim];
	double b_a = b ? (double)b : 1.0;
	double bc_a = v[EV_Bc] ? (double)v[EV_Bc] : 1.0;
	double bi_a = v[EV_Bi] ? (double)v[EV_Bi] : 1.0;

	fprintf(o->out, "%s\n", o->prefix);
	sum_split(o, "Branches:      ", b, v[EV_Bc], " cond + ", v[EV_Bi],
		  " ind)\n");
	sum_split(o, "Mispredicts:   ", b_mp, v[EV_Bcm], " cond + ", v[EV_Bim],
		  " ind)\n");
	sum_rates(o, "Mispred rate:  ", (double)b_mp * 100.0 / b_a,
		  (double)v[EV_Bcm] * 100.0 / bc_a,
		  (double)v[EV_Bim] * 100.0 / bi_a, "%   )\n");
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
