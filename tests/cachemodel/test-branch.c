/* Cachegrind's branch predictor (cg_branchpred.c) on hand-worked outcome
 * sequences.  Index = (7 bits of global history << 7) | (pc & 0x7f); 2-bit
 * counters start at 0 and predict taken at >= 2; the history shifts the
 * outcome in after each prediction. */
#include "model.h"

#include <stdlib.h>

#include "testutil.h"

enum { BC, BCM, BI, BIM, N_EV };

static struct branch_model *make(void)
{
	struct model_config cfg = {
		.i1 = { 32768, 8, 64 }, .d1 = { 32768, 8, 64 },
		.ll = { 8388608, 16, 64 },
		.cache_sim = true, .branch_sim = true,
	};
	struct cache_model *cm;
	struct branch_model *bm;
	char err[256], note[256];

	if (model_create(NULL, &cfg, &cm, &bm, err, sizeof(err), note,
			 sizeof(note)) < 0 || !bm) {
		fprintf(stderr, "model_create: %s\n", err);
		exit(1);
	}
	cache_destroy(cm);
	CHECK_U64(bm->n_events, N_EV);
	CHECK_STR(bm->event_names[0], "Bc");
	CHECK_STR(bm->event_names[1], "Bcm");
	CHECK_STR(bm->event_names[2], "Bi");
	CHECK_STR(bm->event_names[3], "Bim");
	return bm;
}

/* One branch, always taken.  The history before each execution is 0, 1,
 * 0b11, ..., 0b111111 (executions 1-7), each a fresh counter at 0: seven
 * mispredicts.  From execution 8 on the history is 0x7f: that counter goes
 * 0 -> 1 (mispredict), 1 -> 2 (mispredict), then predicts taken forever.
 * So 9 mispredicts, all in the first 9 executions. */
static void test_always_taken(void)
{
	struct branch_model *b = make();
	uint64_t row[N_EV] = { 0 };

	for (int i = 1; i <= 100; i++) {
		uint64_t before = row[BCM];

		branch_cond(b, 0x401010, true, row);
		if ((row[BCM] - before) != (i <= 9)) {
			fprintf(stderr, "always-taken: execution %d: "
				"mispredict %d expected\n", i, i <= 9);
			test_failures++;
		}
	}
	CHECK_U64(row[BC], 100);
	CHECK_U64(row[BCM], 9);
	CHECK_U64(row[BI] + row[BIM], 0);
	branch_destroy(b);
}

/* One branch alternating T, N, T, N...  Histories before executions 1-8:
 * 0, 1, 2, 5, 10, 21, 42, 85 (7 bits), then 42, 85, ... for ever.  Counters
 * start at 0 (predict N): the N executions (even) are always right; the T
 * executions 1, 3, 5 hit fresh counters (3 mispredicts), counter 42 is
 * taken at executions 7 (0 -> 1, miss), 9 (1 -> 2, miss), then right.
 * 5 mispredicts in total. */
static void test_alternating(void)
{
	struct branch_model *b = make();
	uint64_t row[N_EV] = { 0 };

	for (int i = 1; i <= 100; i++)
		branch_cond(b, 0x401020, i & 1, row);
	CHECK_U64(row[BC], 100);
	CHECK_U64(row[BCM], 5);
	branch_destroy(b);
}

/* Branches whose pcs agree in the low 7 bits share counters.  After 20
 * taken executions of P1 (history 0x7f, counter saturated), P2 = P1 + 0x80
 * is predicted taken on its very first execution, while P3 = P1 + 1 (other
 * low bits) meets a fresh counter and mispredicts. */
static void test_aliasing(void)
{
	struct branch_model *b = make();
	uint64_t row[N_EV] = { 0 };
	const uint64_t p1 = 0x401010;

	for (int i = 0; i < 20; i++)
		branch_cond(b, p1, true, row);
	CHECK_U64(row[BCM], 9);
	branch_cond(b, p1 + 0x80, true, row);
	CHECK_U64(row[BCM], 9);
	branch_cond(b, p1 + 1, true, row);
	CHECK_U64(row[BCM], 10);
	/* P2 not taken: the shared counter (3) predicts taken: mispredict. */
	branch_cond(b, p1 + 0x80, false, row);
	CHECK_U64(row[BCM], 11);
	CHECK_U64(row[BC], 23);
	branch_destroy(b);
}

/* The history is global: two branches strictly alternating taken / not
 * taken at different pcs (A taken, B not).  Before A the history ends in
 * ...0 (B's outcome), before B in ...1.  Histories before A: 0, 2, 10, 42,
 * 42... (executions 1-4 of A are the 1st, 3rd, 5th, 7th branch); A's
 * counters start at 0 and A is taken: misses at A's executions 1, 2, 3
 * (fresh histories 0, 2, 10), then history 42 settles: misses at 4 and 5,
 * right from 6 on.  B is never taken and counters start at 0: never a
 * miss.  5 mispredicts. */
static void test_global_history(void)
{
	struct branch_model *b = make();
	uint64_t row[N_EV] = { 0 };

	for (int i = 0; i < 50; i++) {
		branch_cond(b, 0x401000, true, row);
		branch_cond(b, 0x401040, false, row);
	}
	CHECK_U64(row[BC], 100);
	CHECK_U64(row[BCM], 5);
	branch_destroy(b);
}

/* Indirect: a 512-entry table of last targets indexed by pc & 511, all 0
 * at the start. */
static void test_indirect(void)
{
	struct branch_model *b = make();
	uint64_t row[N_EV] = { 0 };
	const uint64_t pc = 0x401000, t1 = 0x402000, t2 = 0x403000,
		       t3 = 0x404000;

	branch_indirect(b, pc, t1, row);	/* 0 != t1: miss */
	CHECK_U64(row[BIM], 1);
	branch_indirect(b, pc, t1, row);	/* hit */
	CHECK_U64(row[BIM], 1);
	branch_indirect(b, pc, t2, row);	/* new target: miss */
	branch_indirect(b, pc, t2, row);	/* hit */
	CHECK_U64(row[BIM], 2);
	branch_indirect(b, pc + 512, t2, row);	/* aliases pc: hit */
	CHECK_U64(row[BIM], 2);
	branch_indirect(b, pc + 512, t3, row);	/* miss, overwrites the slot */
	branch_indirect(b, pc, t2, row);	/* so pc now misses */
	CHECK_U64(row[BIM], 4);
	branch_indirect(b, pc + 1, t3, row);	/* own slot, 0: miss */
	CHECK_U64(row[BIM], 5);
	branch_indirect(b, 0x500100, 0, row);	/* 0 matches the empty slot */
	CHECK_U64(row[BIM], 5);
	CHECK_U64(row[BI], 9);
	CHECK_U64(row[BC] + row[BCM], 0);
	branch_destroy(b);
}

/* test_always_taken's branch through conds_uncounted: its 9
 * mispredicts, no Bc until count_conds adds the 100 at once. */
static void test_uncounted(void)
{
	struct branch_model *b = make();
	uint64_t row[N_EV] = { 0 };
	struct model_cond c = { .pc = 0x401010, .row = row, .taken = true };

	CHECK(b->ops->conds_uncounted != NULL && b->ops->count_conds != NULL);
	for (int i = 1; i <= 100; i++)
		b->ops->conds_uncounted(b, &c, 1);
	CHECK_U64(row[BC], 0);
	CHECK_U64(row[BCM], 9);
	b->ops->count_conds(b, row, 100);
	CHECK_U64(row[BC], 100);
	CHECK_U64(row[BCM], 9);
	CHECK_U64(row[BI] + row[BIM], 0);
	branch_destroy(b);
}

int main(void)
{
	test_always_taken();
	test_alternating();
	test_aliasing();
	test_global_history();
	test_indirect();
	test_uncounted();
	return test_summary("test-branch");
}
