/* The statistics a sampled profile (cachetrace --sample) carries after its
 * summary, in comment lines that cg_annotate skips:
 *
 *   # cachetrace-samples: N T1 T2 RATIO...
 *   # cachetrace-sample<TAB>FILE<TAB>FN<TAB>K<TAB>M A MM AA MA<TAB>...
 *
 * N samples; T1, T2 the sums over them of each sample's Ir and its square;
 * RATIO the names of the ratios that follow, in order: share (the
 * function's Ir over the sample's), D1 and LL (misses over data
 * accesses), I1 (I1 misses over Ir), Bm (mispredicts over branches).
 * Per function: K the samples it ran in, then per ratio the sums over the
 * samples of its numerator m, denominator a, m*m, a*a and m*a.  From them
 * the ratio estimate R = sum m / sum a and its standard error,
 * sqrt(sum (m - R a)^2 / (N - 1) / N) / (sum a / N) (the ratio
 * estimator's, as survey sampling has it); the interval shown is R +-
 * 1.96 of those, 95% for samples that are many and independent. */
#ifndef CT_SAMPLED_H
#define CT_SAMPLED_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#define SAMPLED_RATIOS 8

struct sampled_fn {
	char *file, *fn;
	double k;
	double sum[SAMPLED_RATIOS][5];
};

struct sampled {
	double n, t1, t2;
	unsigned n_ratios;
	char *ratio[SAMPLED_RATIOS];
	struct sampled_fn *fn;
	uint32_t n_fn, cap_fn;
	bool bad;		/* inputs that did not agree: none shown */
};

/* S..END, a comment line of an input: taken into *P's statistics (made
 * when NULL) when it is one of those lines.  0, or -1 (malformed: the
 * message in ERR). */
int sampled_line(struct sampled **p, const char *s, const char *end,
		 char *err, size_t errlen);
void sampled_free(struct sampled *p);
/* Function F's estimate of ratio R: false when there is none; *HALF is
 * the interval's half width (negative: fewer than two samples). */
bool sampled_estimate(const struct sampled *p, const struct sampled_fn *f,
		      unsigned r, double *est, double *half);
/* The functions to show, by share, at most MAX, those under THRESHOLD
 * percent of Ir left out: an array of *N indexes (free it). */
uint32_t *sampled_order(const struct sampled *p, double threshold,
			unsigned max, uint32_t *n);
/* The heading of ratio R ("Ir share", "D1 miss rate", ...). */
const char *sampled_title(const struct sampled *p, unsigned r);

#endif
