/* The tage branch model on hand-worked sequences: the return stack, the
 * indirect BTB, and patterns whose period is beyond Cachegrind's 7 bits of
 * history, which TAGE's long histories learn. */
#include "model.h"
#include "models.h"

#include <stdlib.h>

#include "testutil.h"

enum { BC, BCM, BI, BIM, BR, BRM, N_EV };

static struct branch_model *make(const char *name, const char *opts)
{
	struct model_config cfg = {
		.i1 = { 32768, 8, 64 }, .d1 = { 32768, 8, 64 },
		.ll = { 1048576, 16, 64 }, .cache_sim = false,
		.branch_sim = true, .branch_model = name,
	};
	struct cache_model *cm;
	struct branch_model *bm;
	char err[256], note[256];

	if ((opts && model_parse_option(&cfg, "branch-opts", opts, err,
					sizeof(err)) != 1) ||
	    model_create(NULL, &cfg, &cm, &bm, err, sizeof(err), note,
			 sizeof(note)) < 0) {
		fprintf(stderr, "%s: %s\n", name ? name : "default", err);
		exit(1);
	}
	model_config_free_options(&cfg);
	cache_destroy(cm);
	return bm;
}

static void test_events(void)
{
	static const char *const want[N_EV] = {
		"Bc", "Bcm", "Bi", "Bim", "Br", "Brm"
	};
	struct branch_model *b = make("tage", NULL);

	CHECK_U64(b->n_events, N_EV);
	for (int i = 0; i < N_EV && i < (int)b->n_events; i++)
		CHECK_STR(b->event_names[i], want[i]);
	CHECK_STR(b->ops->name, "tage");
	branch_destroy(b);
	b = make(NULL, NULL);
	CHECK_STR(b->ops->name, "cachegrind");
	branch_destroy(b);
}

/* RAS of 2: call r1 call r2 call r3 (r1 lost), ret r3 ok, ret r2 ok, ret
 * to r1: the stack is empty: mispredict.  Then call r4, ret to r5 (a
 * longjmp-like return): mispredict.  Br 4, Brm 2. */
static void test_ras(void)
{
	struct branch_model *b = make("tage", "ras=2");
	uint64_t row[N_EV] = { 0 };

	b->ops->call(b, 0x100, 0x105, row);
	b->ops->call(b, 0x200, 0x205, row);
	b->ops->call(b, 0x300, 0x305, row);
	b->ops->ret(b, 0x900, 0x305, row);
	CHECK_U64(row[BRM], 0);
	b->ops->ret(b, 0x901, 0x205, row);
	CHECK_U64(row[BRM], 0);
	b->ops->ret(b, 0x902, 0x105, row);
	CHECK_U64(row[BRM], 1);
	b->ops->call(b, 0x400, 0x405, row);
	b->ops->ret(b, 0x903, 0x505, row);
	CHECK_U64(row[BR], 4);
	CHECK_U64(row[BRM], 2);
	CHECK_U64(row[BC] + row[BI], 0);
	branch_destroy(b);
}

/* BTB: the first jump has no entry (miss), the same target again hits,
 * a new target misses, and it stays learnt. */
static void test_btb(void)
{
	struct branch_model *b = make("tage", NULL);
	uint64_t row[N_EV] = { 0 };

	branch_indirect(b, 0x1000, 0x2000, row);
	branch_indirect(b, 0x1000, 0x2000, row);
	branch_indirect(b, 0x1000, 0x3000, row);
	branch_indirect(b, 0x1000, 0x3000, row);
	CHECK_U64(row[BI], 4);
	CHECK_U64(row[BIM], 2);
	branch_destroy(b);
}

/* An interpreter's dispatch: one indirect jump cycling through four
 * targets.  The last-target BTB (as Cachegrind's table) misses every time;
 * the path table, indexed by the targets before, learns each successor:
 * none mispredicted once warm. */
static void test_indirect_path(void)
{
	struct branch_model *t = make("tage", NULL);
	struct branch_model *c = make("cachegrind", NULL);
	uint64_t rt[N_EV] = { 0 }, rc[N_EV] = { 0 };
	const uint64_t targets[4] = { 0x5000, 0x5100, 0x5200, 0x5300 };

	for (int i = 0; i < 800; i++) {
		if (i == 400) {
			rt[BIM] = 0;
			rc[BIM] = 0;
		}
		branch_indirect(t, 0x4800, targets[i % 4], rt);
		branch_indirect(c, 0x4800, targets[i % 4], rc);
	}
	CHECK_U64(rt[BIM], 0);
	CHECK_U64(rc[BIM], 400);
	branch_destroy(t);
	branch_destroy(c);
}

/* One branch, taken 11 times then not taken, repeated: with 7 bits of
 * history Cachegrind's predictor sees "all taken" before both the 8th
 * and the 12th outcome and cannot tell them apart: at least one
 * mispredict per period forever.  TAGE's tables with 13 and more bits of
 * history learn the exit: no mispredicts once warm. */
static void test_long_pattern(void)
{
	struct branch_model *t = make("tage", NULL);
	struct branch_model *c = make("cachegrind", NULL);
	uint64_t rt[N_EV] = { 0 }, rc[N_EV] = { 0 };

	for (int i = 0; i < 12 * 2000; i++) {
		bool taken = i % 12 != 11;

		if (i == 12 * 1000) {
			rt[BCM] = 0;
			rc[BCM] = 0;
		}
		branch_cond(t, 0x4000, taken, rt);
		branch_cond(c, 0x4000, taken, rc);
	}
	CHECK_U64(rt[BCM], 0);
	CHECK(rc[BCM] >= 1000);
	branch_destroy(t);
	branch_destroy(c);

	/* With one tagged table of 4 bits of history it is short-sighted
	 * too: the sizes are really used. */
	t = make("tage", "tables=1,minhist=4,maxhist=4");
	memset(rt, 0, sizeof(rt));
	for (int i = 0; i < 12 * 2000; i++) {
		if (i == 12 * 1000)
			rt[BCM] = 0;
		branch_cond(t, 0x4000, i % 12 != 11, rt);
	}
	CHECK(rt[BCM] >= 1000);
	branch_destroy(t);
}

/* An always-taken branch: the bimodal counter learns it after two
 * outcomes (0 -> 1 -> 2): two mispredicts, then none. */
static void test_bimodal(void)
{
	struct branch_model *t = make("tage", NULL);
	uint64_t row[N_EV] = { 0 };

	for (int i = 0; i < 100; i++)
		branch_cond(t, 0x5000, true, row);
	CHECK_U64(row[BC], 100);
	CHECK(row[BCM] <= 3);
	CHECK(row[BCM] >= 1);
	branch_destroy(t);
}

static void test_opts(void)
{
	struct tage_params p;
	char err[128];

	CHECK(tage_parse_opts("tables=6,bits=12,base=16,minhist=5,maxhist=200,"
			      "tagbits=11,btb=1024,ras=64", &p, err,
			      sizeof(err)) == 0);
	CHECK_U64(p.tables, 6);
	CHECK_U64(p.bits, 12);
	CHECK_U64(p.base_bits, 16);
	CHECK_U64(p.min_hist, 5);
	CHECK_U64(p.max_hist, 200);
	CHECK_U64(p.tag_bits, 11);
	CHECK_U64(p.btb, 1024);
	CHECK_U64(p.ras, 64);
	CHECK(tage_parse_opts(NULL, &p, err, sizeof(err)) == 0);
	CHECK_U64(p.tables, 4);
	CHECK_U64(p.max_hist, 128);
	CHECK(tage_parse_opts("btb=1000", &p, err, sizeof(err)) < 0);
	CHECK(tage_parse_opts("minhist=9,maxhist=8", &p, err, sizeof(err)) < 0);
	CHECK(tage_parse_opts("nosuch=1", &p, err, sizeof(err)) < 0);
	CHECK(tage_parse_opts("ras=", &p, err, sizeof(err)) < 0);
	CHECK(tage_parse_opts("maxhist=257", &p, err, sizeof(err)) < 0);
}

int main(void)
{
	test_events();
	test_ras();
	test_btb();
	test_indirect_path();
	test_long_pattern();
	test_bimodal();
	test_opts();
	return test_summary("test-tage");
}
