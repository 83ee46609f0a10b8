/* A sampled profile's estimates and their confidence intervals
 * (sampled.h has the format and the formula). */
#include "sampled.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"

#define SAMPLES_KEY "# cachetrace-samples:"
#define SAMPLE_KEY "# cachetrace-sample\t"

static bool has_prefix(const char *s, const char *end, const char *p)
{
	size_t n = strlen(p);
	return (size_t)(end - s) >= n && !memcmp(s, p, n);
}

/* The next number of S..END, after spaces: false when there is none. */
static bool number(const char **s, const char *end, double *v)
{
	char buf[64];
	while (*s < end && (**s == ' ' || **s == '\t'))
		(*s)++;
	size_t n = 0;
	while (*s + n < end && !strchr(" \t", (*s)[n]) && n < sizeof(buf) - 1)
		n++;
	if (!n)
		return false;
	memcpy(buf, *s, n);
	buf[n] = 0;
	char *e;
	*v = strtod(buf, &e);
	*s += n;
	return *e == 0 && isfinite(*v) && *v >= 0;
}

static struct sampled_fn *find_fn(struct sampled *p, const char *file,
				  size_t fl, const char *fn, size_t nl)
{
	for (uint32_t i = 0; i < p->n_fn; i++)
		if (strlen(p->fn[i].file) == fl && strlen(p->fn[i].fn) == nl &&
		    !memcmp(p->fn[i].file, file, fl) &&
		    !memcmp(p->fn[i].fn, fn, nl))
			return &p->fn[i];
	if (p->n_fn == p->cap_fn) {
		p->cap_fn = p->cap_fn ? 2 * p->cap_fn : 64;
		p->fn = xreallocarray(p->fn, p->cap_fn, sizeof(*p->fn));
	}
	struct sampled_fn *f = &p->fn[p->n_fn++];
	memset(f, 0, sizeof(*f));
	f->file = xasprintf("%.*s", (int)fl, file);
	f->fn = xasprintf("%.*s", (int)nl, fn);
	return f;
}

static int bad(char *err, size_t errlen, const char *what)
{
	snprintf(err, errlen, "malformed sample statistics: %s", what);
	return -1;
}

int sampled_line(struct sampled **pp, const char *s, const char *end,
		 char *err, size_t errlen)
{
	bool head = has_prefix(s, end, SAMPLES_KEY);
	if (!head && !has_prefix(s, end, SAMPLE_KEY))
		return 0;
	if (!*pp)
		*pp = xcalloc(1, sizeof(**pp));
	struct sampled *p = *pp;
	if (head) {
		/* A second input's: its counts add to the first's when the
		 * ratios are the same. */
		double n, t1, t2;
		s += strlen(SAMPLES_KEY);
		if (!number(&s, end, &n) || !number(&s, end, &t1) ||
		    !number(&s, end, &t2))
			return bad(err, errlen, "the counts of samples");
		unsigned k = 0;
		bool first = !p->n_ratios && !p->n;
		while (s < end) {
			while (s < end && *s == ' ')
				s++;
			const char *w = s;
			while (s < end && *s != ' ')
				s++;
			if (s == w)
				break;
			if (k == SAMPLED_RATIOS)
				return bad(err, errlen, "too many ratios");
			if (first)
				p->ratio[p->n_ratios++] =
					xasprintf("%.*s", (int)(s - w), w);
			else if (k >= p->n_ratios ||
				 strncmp(p->ratio[k], w, (size_t)(s - w)))
				p->bad = true;
			k++;
		}
		if (!first && k != p->n_ratios)
			p->bad = true;
		p->n += n;
		p->t1 += t1;
		p->t2 += t2;
		return 0;
	}
	s += strlen(SAMPLE_KEY);
	const char *file = s, *tab = memchr(s, '\t', (size_t)(end - s));
	if (!tab)
		return bad(err, errlen, "no function name");
	const char *fn = tab + 1, *tab2 = memchr(fn, '\t', (size_t)(end - fn));
	if (!tab2)
		return bad(err, errlen, "no count of samples");
	struct sampled_fn *f = find_fn(p, file, (size_t)(tab - file), fn,
				       (size_t)(tab2 - fn));
	s = tab2 + 1;
	double k;
	if (!number(&s, end, &k))
		return bad(err, errlen, "the count of samples");
	f->k += k;
	for (unsigned r = 0; r < p->n_ratios; r++)
		for (unsigned j = 0; j < 5; j++) {
			double v;
			if (!number(&s, end, &v))
				return bad(err, errlen, "a ratio's sums");
			/* the share's denominators are the run's, once */
			if (!strcmp(p->ratio[r], "share") && (j == 1 || j == 3))
				f->sum[r][j] = j == 1 ? p->t1 : p->t2;
			else
				f->sum[r][j] += v;
		}
	return 0;
}

void sampled_free(struct sampled *p)
{
	if (!p)
		return;
	for (uint32_t i = 0; i < p->n_fn; i++) {
		free(p->fn[i].file);
		free(p->fn[i].fn);
	}
	for (unsigned r = 0; r < p->n_ratios; r++)
		free(p->ratio[r]);
	free(p->fn);
	free(p);
}

bool sampled_estimate(const struct sampled *p, const struct sampled_fn *f,
		      unsigned r, double *est, double *half)
{
	const double *s = f->sum[r];
	if (r >= p->n_ratios || s[1] <= 0 || p->n <= 0)
		return false;
	double n = p->n, R = s[0] / s[1];
	*est = R;
	*half = -1;
	if (n < 2)
		return true;
	double var = (s[2] - 2 * R * s[4] + R * R * s[3]) / (n - 1);
	if (var < 0)
		var = 0;	/* rounding */
	*half = 1.96 * sqrt(var / n) / (s[1] / n);
	return true;
}

const char *sampled_title(const struct sampled *p, unsigned r)
{
	static const struct { const char *key, *title; } t[] = {
		{ "share", "Ir share" }, { "D1", "D1 miss rate" },
		{ "LL", "LL miss rate" }, { "I1", "I1 miss rate" },
		{ "Bm", "Mispredict rate" },
		{ "LLlo", "LL lower bound" }, { "LLhi", "LL upper bound" },
	};
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		if (!strcmp(p->ratio[r], t[i].key))
			return t[i].title;
	return p->ratio[r];
}

static int cmp_share(const void *a, const void *b, void *ctx)
{
	const struct sampled *p = ctx;
	double x = p->fn[*(const uint32_t *)a].sum[0][0];
	double y = p->fn[*(const uint32_t *)b].sum[0][0];
	return x < y ? 1 : x > y ? -1 : 0;
}

uint32_t *sampled_order(const struct sampled *p, double threshold,
			unsigned max, uint32_t *n)
{
	uint32_t *ord = xcalloc(p->n_fn + 1, sizeof(*ord)), k = 0;
	for (uint32_t i = 0; i < p->n_fn; i++)
		ord[i] = i;
	if (p->n_ratios && !strcmp(p->ratio[0], "share"))
		qsort_r(ord, p->n_fn, sizeof(*ord), cmp_share, (void *)p);
	for (; k < p->n_fn && k < max; k++) {
		double est, half;
		if (p->n_ratios && !strcmp(p->ratio[0], "share") &&
		    (!sampled_estimate(p, &p->fn[ord[k]], 0, &est, &half) ||
		     100 * est < threshold))
			break;
	}
	*n = k;
	return ord;
}
