/* Cachegrind's branch predictor, after valgrind 3.19's cg_branchpred.c.
 *
 * Rules, in plain words:
 * - Conditional branches: 16384 two-bit saturating counters, all 0 at the
 *   start.  The index is 7 bits of global history (the last 7 outcomes,
 *   most recent in bit 0) above the low 7 bits of the branch's pc (x86
 *   instructions can start at any byte, so no low bits are dropped).
 *   Predict taken iff the counter is >= 2; a mispredict is a prediction
 *   that differs from the outcome.  Then the outcome is shifted into the
 *   history and the counter moves one step towards it.
 * - Indirect jumps and calls: a 512-entry table indexed by pc & 511 holds
 *   the last target seen there (0 at the start, so a first jump always
 *   mispredicts); a different target is a mispredict; store the target.
 * - Returns are not predicted (no event), as Cachegrind. */
#include "model.h"
#include "models.h"

#include <stdlib.h>
#include <string.h>

#define N_HIST_BITS 7
#define N_PC_BITS 7
#define N_COUNTERS (1u << (N_HIST_BITS + N_PC_BITS))
#define N_BTAC_BITS 9
#define N_BTAC (1u << N_BTAC_BITS)

enum { EV_BC, EV_BCM, EV_BI, EV_BIM, N_EVENTS };

static const char *const event_names[N_EVENTS] = { "Bc", "Bcm", "Bi", "Bim" };

struct cg_branch {
	struct branch_model base;
	uint64_t history;		/* outcomes, most recent in bit 0 */
	uint8_t counters[N_COUNTERS];	/* 0..3; >= 2 predicts taken */
	uint64_t btac[N_BTAC];		/* last target per pc & 511 */
};

/* COUNT (a constant at each use): Bc too, or only Bcm. */
static inline __attribute__((always_inline)) void
cg_cond_one(struct branch_model *m, uint64_t pc, bool taken, uint64_t *row,
	    bool count)
{
	struct cg_branch *b = (struct cg_branch *)m;
	const uint64_t hist_mask = (1u << N_HIST_BITS) - 1;
	const uint64_t pc_mask = (1u << N_PC_BITS) - 1;
	unsigned idx = (unsigned)(((b->history & hist_mask) << N_PC_BITS) |
				  (pc & pc_mask));
	uint8_t *ctr = &b->counters[idx];
	bool predicted = *ctr >= 2;

	if (count)
		row[EV_BC]++;
	if (predicted != taken)
		row[EV_BCM]++;
	b->history = (b->history << 1) | (taken ? 1 : 0);
	if (taken) {
		if (*ctr < 3)
			(*ctr)++;
	} else if (*ctr > 0) {
		(*ctr)--;
	}
}

static void cg_cond(struct branch_model *m, uint64_t pc, bool taken,
		    uint64_t *row)
{
	cg_cond_one(m, pc, taken, row, true);
}

/* The history and counters are the conditional branches' alone (the
 * BTAC is the indirect ones'). */
static void cg_conds(struct branch_model *m, const struct model_cond *v,
		     unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		cg_cond_one(m, v[i].pc, v[i].taken, v[i].row, true);
}

static void cg_conds_uncounted(struct branch_model *m,
			       const struct model_cond *v, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		cg_cond_one(m, v[i].pc, v[i].taken, v[i].row, false);
}

static void cg_count_conds(struct branch_model *m, uint64_t *row,
			   uint64_t times)
{
	row[EV_BC] += times;
}

static void cg_indirect(struct branch_model *m, uint64_t pc, uint64_t target,
			uint64_t *row)
{
	struct cg_branch *b = (struct cg_branch *)m;
	uint64_t *slot = &b->btac[pc & (N_BTAC - 1)];

	row[EV_BI]++;
	if (*slot != target)
		row[EV_BIM]++;
	*slot = target;
}

/* The zeroed history, counters and targets of a new predictor. */
static void cg_branch_flush(struct branch_model *m)
{
	struct cg_branch *b = (struct cg_branch *)m;

	b->history = 0;
	memset(b->counters, 0, sizeof(b->counters));
	memset(b->btac, 0, sizeof(b->btac));
}

static void cg_branch_destroy(struct branch_model *m)
{
	free(m);
}

static const struct branch_model_ops cg_branch_ops = {
	.name = "cachegrind",
	.cheap = true,
	.cond = cg_cond,
	.conds = cg_conds,
	.conds_uncounted = cg_conds_uncounted,
	.count_conds = cg_count_conds,
	.indirect = cg_indirect,
	.flush = cg_branch_flush,
	.destroy = cg_branch_destroy,
};

struct branch_model *cg_branch_new(char *err, size_t errlen)
{
	struct cg_branch *b = calloc(1, sizeof(*b));

	if (!b) {
		snprintf(err, errlen, "out of memory for the branch model");
		return NULL;
	}
	b->base.ops = &cg_branch_ops;
	b->base.n_events = N_EVENTS;
	b->base.event_names = event_names;
	return &b->base;
}
