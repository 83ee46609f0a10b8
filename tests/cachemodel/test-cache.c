/* The Cachegrind cache model on hand-worked access sequences.  Every
 * expected count is derived in the comments from cg_sim.c's rules: MRU-first
 * sets, LRU replacement, LL probed only on an L1 miss, a multi-line access
 * is one reference that misses if any of its lines misses. */
#include "model.h"

#include <stdlib.h>

#include "testutil.h"

enum { IR, I1MR, ILMR, DR, D1MR, DLMR, DW, D1MW, DLMW, N_EV };

static struct cache_model *make(struct cache_geom i1, struct cache_geom d1,
				struct cache_geom ll)
{
	struct model_config cfg = {
		.i1 = i1, .d1 = d1, .ll = ll,
		.cache_sim = true, .branch_sim = false,
	};
	struct cache_model *cm;
	struct branch_model *bm;
	char err[256], note[256];

	if (model_create(NULL, &cfg, &cm, &bm, err, sizeof(err), note,
			 sizeof(note)) < 0) {
		fprintf(stderr, "model_create: %s\n", err);
		exit(1);
	}
	CHECK(bm == NULL);
	CHECK_STR(note, "");	/* explicit geometry: never adjusted */
	CHECK_U64(cm->n_events, N_EV);
	return cm;
}

static const struct cache_geom big_i1 = { 32768, 8, 64 };
static const struct cache_geom big_ll = { 1048576, 16, 64 };	/* 1024 sets */

static void acc(struct cache_model *m, uint64_t addr, uint32_t size,
		enum access_kind kind, uint64_t *row)
{
	struct mem_access a = { .addr = addr, .size = size, .kind = kind };

	cache_access(m, &a, row);
}

static void rd(struct cache_model *m, uint64_t addr, uint64_t *row)
{
	acc(m, addr, 4, ACC_READ, row);
}

static void test_event_names(void)
{
	static const char *const want[N_EV] = {
		"Ir", "I1mr", "ILmr", "Dr", "D1mr", "DLmr", "Dw", "D1mw", "DLmw"
	};
	struct cache_model *m = make(big_i1, (struct cache_geom){ 32768, 8, 64 },
				     big_ll);

	for (int i = 0; i < N_EV; i++)
		CHECK_STR(m->event_names[i], want[i]);
	CHECK_STR(m->ops->name, "cachegrind");
	cache_destroy(m);
}

/* D1 1024 B direct-mapped, 64 B lines: 16 sets, A and A+1024 share set 0.
 * A miss, B miss (evicts A), A miss (evicts B), A hit: 3 D1 misses.  LL (1024
 * sets) holds A and B in different sets: only the two cold misses. */
static void test_direct_mapped_conflict(void)
{
	struct cache_model *m = make(big_i1, (struct cache_geom){ 1024, 1, 64 },
				     big_ll);
	uint64_t row[N_EV] = { 0 };
	const uint64_t a = 0x10000, b = a + 1024;

	rd(m, a, row);
	rd(m, b, row);
	rd(m, a, row);
	rd(m, a, row);
	CHECK_U64(row[DR], 4);
	CHECK_U64(row[D1MR], 3);
	CHECK_U64(row[DLMR], 2);
	CHECK_U64(row[DW] + row[D1MW] + row[DLMW] + row[IR], 0);
	cache_destroy(m);
}

/* D1 2048 B 2-way: 16 sets; A, B, C = A + k*1024 share one set.
 *   A  miss  [A]
 *   B  miss  [B A]
 *   A  hit   [A B]    (a hit moves A to the front)
 *   C  miss  [C A]    (B was LRU; FIFO would have evicted A)
 *   A  hit   [A C]
 *   B  miss  [B A]
 *   C  miss  [C B]
 *   B  hit   [B C]
 * 5 misses of 8; LL sees 3 distinct cold lines and then hits. */
static void test_two_way_lru(void)
{
	struct cache_model *m = make(big_i1, (struct cache_geom){ 2048, 2, 64 },
				     big_ll);
	uint64_t row[N_EV] = { 0 };
	const uint64_t a = 0x20000, b = a + 1024, c = a + 2048;
	const uint64_t seq[] = { a, b, a, c, a, b, c, b };
	const int miss[] = { 1, 1, 0, 1, 0, 1, 1, 0 };

	for (unsigned i = 0; i < sizeof(seq) / sizeof(seq[0]); i++) {
		uint64_t before = row[D1MR];

		rd(m, seq[i], row);
		if (row[D1MR] - before != (uint64_t)miss[i]) {
			fprintf(stderr, "2-way: access %u: miss %d expected\n",
				i, miss[i]);
			test_failures++;
		}
	}
	CHECK_U64(row[DR], 8);
	CHECK_U64(row[D1MR], 5);
	CHECK_U64(row[DLMR], 3);
	cache_destroy(m);
}

/* D1 4096 B 4-way: 16 sets, stride 1024 stays in one set.
 *   A B C D   4 misses       [D C B A]
 *   A         hit            [A D C B]
 *   E         miss, evicts B [E A D C]
 *   C D A     hits           [A D C E]
 *   B         miss           [B A D C]
 * 10 refs, 6 misses. */
static void test_lru_eviction(void)
{
	struct cache_model *m = make(big_i1, (struct cache_geom){ 4096, 4, 64 },
				     big_ll);
	uint64_t row[N_EV] = { 0 };
	const uint64_t base = 0x40000;
	const uint64_t A = base, B = base + 1024, C = base + 2048,
		       D = base + 3072, E = base + 4096;
	const uint64_t seq[] = { A, B, C, D, A, E, C, D, A, B };

	for (unsigned i = 0; i < sizeof(seq) / sizeof(seq[0]); i++)
		rd(m, seq[i], row);
	CHECK_U64(row[DR], 10);
	CHECK_U64(row[D1MR], 6);
	cache_destroy(m);
}

/* D1 2048 B 2-way (16 sets).  An 8-byte read at A+60 covers lines A and
 * A+64 (sets s and s+1): one Dr, one D1mr (both missed, counted once), one
 * DLmr.  Then A and A+64 hit: both lines were installed.  Two conflicting
 * lines in set s+1 evict A+64 only; the straddle again misses (A hits,
 * A+64 misses) and reinstalls A+64, which then hits.
 *   Dr: 1 + 2 + 2 + 1 + 1 = 7; D1mr: 1 + 0 + 2 + 1 + 0 = 4
 *   LL: the first straddle (1), the two conflict lines (2); A+64 is still
 *   in LL: DLmr 3. */
static void test_straddle(void)
{
	struct cache_model *m = make(big_i1, (struct cache_geom){ 2048, 2, 64 },
				     big_ll);
	uint64_t row[N_EV] = { 0 };
	const uint64_t a = 0x80000;

	acc(m, a + 60, 8, ACC_READ, row);
	CHECK_U64(row[DR], 1);
	CHECK_U64(row[D1MR], 1);
	CHECK_U64(row[DLMR], 1);
	rd(m, a, row);
	rd(m, a + 64, row);
	CHECK_U64(row[D1MR], 1);
	rd(m, a + 64 + 1024, row);
	rd(m, a + 64 + 2048, row);
	CHECK_U64(row[D1MR], 3);
	acc(m, a + 60, 8, ACC_READ, row);
	CHECK_U64(row[D1MR], 4);
	rd(m, a + 64, row);
	CHECK_U64(row[DR], 7);
	CHECK_U64(row[D1MR], 4);
	CHECK_U64(row[DLMR], 3);
	cache_destroy(m);
}

/* A 512-byte fxsave-like write at a line-aligned A covers 8 lines: one Dw,
 * one D1mw, one DLmw; all 8 lines are installed (8 different sets of 16),
 * so reading each hits.  A 512-byte write at A+32 covers 9 lines (A ..
 * A+512+31): 8 hit, the ninth misses: one more D1mw and DLmw. */
static void test_multi_line(void)
{
	struct cache_model *m = make(big_i1, (struct cache_geom){ 2048, 2, 64 },
				     big_ll);
	uint64_t row[N_EV] = { 0 };
	const uint64_t a = 0x100000;

	acc(m, a, 512, ACC_WRITE, row);
	CHECK_U64(row[DW], 1);
	CHECK_U64(row[D1MW], 1);
	CHECK_U64(row[DLMW], 1);
	for (int i = 0; i < 8; i++)
		rd(m, a + 64 * (uint64_t)i, row);
	CHECK_U64(row[DR], 8);
	CHECK_U64(row[D1MR], 0);
	acc(m, a + 32, 512, ACC_WRITE, row);
	CHECK_U64(row[DW], 2);
	CHECK_U64(row[D1MW], 2);
	CHECK_U64(row[DLMW], 2);
	cache_destroy(m);
}

/* LL is probed only on a D1 miss.  D1 2048 B 2-way (16 sets), LL 8192 B
 * 2-way (64 sets); X, Y = X+4096, Z = X+8192 share D1 set 0 and LL set 0.
 *   X  D1 miss [X]    LL miss [X]
 *   Y  D1 miss [Y X]  LL miss [Y X]
 *   X  D1 hit  [X Y]  LL untouched [Y X] (a probe would make it [X Y])
 *   Z  D1 miss [Z X]  LL miss, evicts X: [Z Y]
 *   Y  D1 miss [Y Z]  LL hit: Y is still there
 * Dr 5, D1mr 4, DLmr 3 (probing on hits would evict Y and give 4). */
static void test_ll_only_on_l1_miss(void)
{
	struct cache_model *m = make(big_i1, (struct cache_geom){ 2048, 2, 64 },
				     (struct cache_geom){ 8192, 2, 64 });
	uint64_t row[N_EV] = { 0 };
	const uint64_t x = 0x200000, y = x + 4096, z = x + 8192;

	rd(m, x, row);
	rd(m, y, row);
	rd(m, x, row);
	rd(m, z, row);
	rd(m, y, row);
	CHECK_U64(row[DR], 5);
	CHECK_U64(row[D1MR], 4);
	CHECK_U64(row[DLMR], 3);
	cache_destroy(m);
}

/* A read-modify-write is one Dr (no Dw); writes allocate; non-temporal
 * writes are Dw like writes; prefetches count nothing and install nothing. */
static void test_kinds(void)
{
	struct cache_model *m = make(big_i1, (struct cache_geom){ 2048, 2, 64 },
				     big_ll);
	uint64_t row[N_EV] = { 0 };
	const uint64_t a = 0x300000;

	acc(m, a, 8, ACC_MODIFY, row);		/* Dr, D1mr, DLmr */
	CHECK_U64(row[DR], 1);
	CHECK_U64(row[D1MR], 1);
	CHECK_U64(row[DLMR], 1);
	CHECK_U64(row[DW], 0);
	acc(m, a, 8, ACC_WRITE, row);		/* hit: the RMW installed it */
	CHECK_U64(row[DW], 1);
	CHECK_U64(row[D1MW], 0);

	acc(m, a + 128, 4, ACC_WRITE, row);	/* write miss allocates ... */
	CHECK_U64(row[D1MW], 1);
	CHECK_U64(row[DLMW], 1);
	rd(m, a + 128, row);			/* ... so the read hits */
	CHECK_U64(row[DR], 2);
	CHECK_U64(row[D1MR], 1);

	acc(m, a + 256, 16, ACC_NT_WRITE, row);	/* Dw, miss, allocates */
	CHECK_U64(row[DW], 3);
	CHECK_U64(row[D1MW], 2);
	rd(m, a + 256, row);
	CHECK_U64(row[D1MR], 1);

	{
		uint64_t before[N_EV];

		memcpy(before, row, sizeof(row));
		acc(m, a + 512, 64, ACC_PREFETCH, row);
		CHECK(!memcmp(before, row, sizeof(row)));
	}
	rd(m, a + 512, row);			/* not installed by it */
	CHECK_U64(row[DR], 4);
	CHECK_U64(row[D1MR], 2);
	cache_destroy(m);
}

/* I-fetch: Ir always; a 5-byte instruction at A+62 straddles two lines,
 * one I1 miss and one ILmr; both lines are then in I1.  I1 and D1 share
 * LL: a data read of a fetched line misses D1 but hits LL. */
static void test_ifetch(void)
{
	struct cache_model *m = make((struct cache_geom){ 1024, 1, 64 },
				     (struct cache_geom){ 2048, 2, 64 },
				     big_ll);
	uint64_t row[N_EV] = { 0 };
	const uint64_t a = 0x401000;

	cache_fetch(m, a + 62, 5, row);
	CHECK_U64(row[IR], 1);
	CHECK_U64(row[I1MR], 1);
	CHECK_U64(row[ILMR], 1);
	cache_fetch(m, a + 64, 4, row);
	cache_fetch(m, a, 2, row);
	CHECK_U64(row[IR], 3);
	CHECK_U64(row[I1MR], 1);
	/* a + 1024 conflicts with a in the direct-mapped I1 (16 sets). */
	cache_fetch(m, a + 1024, 3, row);
	cache_fetch(m, a, 3, row);
	CHECK_U64(row[IR], 5);
	CHECK_U64(row[I1MR], 3);
	CHECK_U64(row[ILMR], 2);	/* a came back from LL */
	rd(m, a + 64, row);
	CHECK_U64(row[D1MR], 1);
	CHECK_U64(row[DLMR], 0);	/* unified LL */
	cache_destroy(m);
}

/* Cachegrind callocs its tag arrays, so block 0 is "present" in set 0 of a
 * cold cache: a read of address 0 hits. */
static void test_zero_tag_quirk(void)
{
	struct cache_model *m = make(big_i1, (struct cache_geom){ 2048, 2, 64 },
				     big_ll);
	uint64_t row[N_EV] = { 0 };

	rd(m, 0, row);
	CHECK_U64(row[DR], 1);
	CHECK_U64(row[D1MR], 0);
	rd(m, 64, row);			/* block 1: a real miss */
	CHECK_U64(row[D1MR], 1);
	cache_destroy(m);
}

/* Layout copied from a real cachegrind.out written by valgrind 3.19
 * (--cache-sim=yes, --I1=1024,1,64 --D1=8192,2,32 --LL=65536,4,64). */
static void test_describe(void)
{
	struct cache_model *m = make((struct cache_geom){ 1024, 1, 64 },
				     (struct cache_geom){ 8192, 2, 32 },
				     (struct cache_geom){ 65536, 4, 64 });
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	cache_describe(m, f);
	fclose(f);
	CHECK_STR(buf,
		  "desc: I1 cache:         1024 B, 64 B, direct-mapped\n"
		  "desc: D1 cache:         8192 B, 32 B, 2-way associative\n"
		  "desc: LL cache:         65536 B, 64 B, 4-way associative\n");
	free(buf);
	cache_destroy(m);
}

/* --cache-sim=no: events "Ir" only, data accesses count nothing, and the
 * desc lines are still written (valgrind 3.19 does). */
static void test_cache_sim_off(void)
{
	struct model_config cfg = {
		.i1 = { 32768, 8, 64 }, .d1 = { 49152, 12, 64 },
		.ll = { 318767104, 38, 64 },
		.cache_sim = false, .branch_sim = false,
	};
	struct cache_model *m;
	struct branch_model *bm;
	char err[256], note[256];
	uint64_t row[1] = { 0 };
	char *buf = NULL;
	size_t len = 0;
	FILE *f;

	CHECK(model_create("cachegrind", &cfg, &m, &bm, err, sizeof(err),
			   note, sizeof(note)) == 0);
	CHECK(bm == NULL);
	CHECK_U64(m->n_events, 1);
	CHECK_STR(m->event_names[0], "Ir");
	cache_fetch(m, 0x401000, 4, row);
	cache_fetch(m, 0x401004, 40, row);
	acc(m, 0x5000, 8, ACC_WRITE, row);
	CHECK_U64(row[0], 2);
	f = open_memstream(&buf, &len);
	cache_describe(m, f);
	fclose(f);
	CHECK_STR(buf,
		  "desc: I1 cache:         32768 B, 64 B, 8-way associative\n"
		  "desc: D1 cache:         49152 B, 64 B, 12-way associative\n"
		  "desc: LL cache:         318767104 B, 64 B, 38-way associative\n");
	free(buf);
	cache_destroy(m);
}

/* A sample's untouched memory (struct sample_mem): the 4 KiB page at
 * 0x10000, and nothing else. */
static bool untouched_10000(const struct sample_mem *mem, uint64_t addr)
{
	(void)mem;
	return addr >> 12 == 0x10;
}

/* --sample's first references (model_config.first_refs): DLu counts a
 * data reference that reaches LL at its line's first reference there
 * since the last begin_sample, DLmu those of them that miss, DLuf those
 * of them in memory the sample's sample_mem calls untouched.  D1 is one
 * set of 2 ways, so each new line evicts the older of the two; LL has 32
 * sets of 2 ways, A B C D in four of them. */
static void test_first_refs(void)
{
	enum { DLU = N_EV, DLMU, DLUF };
	const struct sample_mem fresh = { untouched_10000 };
	struct model_config cfg = {
		.i1 = big_i1, .d1 = { 128, 2, 64 }, .ll = { 4096, 2, 64 },
		.cache_sim = true, .first_refs = true,
	};
	struct cache_model *m;
	struct branch_model *bm;
	char err[256], note[256];
	uint64_t row[N_EV + 3] = { 0 };
	const uint64_t a = 0x10000, b = 0x10040, c = 0x10080, d = 0x100c0;

	CHECK(model_create("cachegrind", &cfg, &m, &bm, err, sizeof(err),
			   note, sizeof(note)) == 0);
	CHECK_U64(m->n_events, N_EV + 3);
	CHECK_STR(m->event_names[DLU], "DLu");
	CHECK_STR(m->event_names[DLMU], "DLmu");
	CHECK_STR(m->event_names[DLUF], "DLuf");
	cache_begin_sample(m, NULL);
	/* The first sample, LL empty: A, B, C miss at their first reference;
	 * A again (D1 then holds C and B) reaches LL, its second reference
	 * there: a hit, not a first. */
	rd(m, a, row);
	rd(m, a, row);		/* D1 hit: LL not reached */
	rd(m, b, row);
	rd(m, c, row);
	rd(m, a, row);
	CHECK_U64(row[D1MR], 4);
	CHECK_U64(row[DLMR], 3);
	CHECK_U64(row[DLU], 3);
	CHECK_U64(row[DLMU], 3);
	/* The second: D misses, first; B and C hit LL at their first
	 * reference in it (what the first sample left); D again hits, not
	 * first. */
	cache_begin_sample(m, NULL);
	rd(m, d, row);
	rd(m, b, row);
	rd(m, c, row);
	rd(m, d, row);
	CHECK_U64(row[D1MR], 8);
	CHECK_U64(row[DLMR], 4);
	CHECK_U64(row[DLU], 6);
	CHECK_U64(row[DLMU], 4);
	/* 5,000 lines, then the same again (the table of the sample's lines
	 * grows past its first 4,096 slots): each a first reference once,
	 * and a miss both times in an LL of 64 lines. */
	cache_begin_sample(m, NULL);
	for (int k = 0; k < 2; k++)
		for (uint64_t i = 0; i < 5000; i++)
			rd(m, 0x1000000 + 64 * i, row);
	CHECK_U64(row[DLMR], 4 + 10000);
	CHECK_U64(row[DLU], 6 + 5000);
	CHECK_U64(row[DLMU], 4 + 5000);
	CHECK_U64(row[DLUF], 0);	/* no sample_mem: unknown */
	/* A sample whose sample_mem calls A's page untouched: A's first
	 * reference (a miss: the 5,000 lines evicted it) counts in DLuf, its
	 * second (D1 evicted it again) reaches LL not first; 0x20000 (a miss,
	 * first) is touched memory.  B (A's page, D1 holding A and 0x20040)
	 * in the next sample, which has no sample_mem: first, not
	 * untouched. */
	cache_begin_sample(m, &fresh);
	rd(m, a, row);
	rd(m, 0x20000, row);
	rd(m, 0x20040, row);
	rd(m, a, row);
	CHECK_U64(row[DLU], 5006 + 3);
	CHECK_U64(row[DLMU], 5004 + 3);
	CHECK_U64(row[DLUF], 1);
	cache_begin_sample(m, NULL);
	rd(m, b, row);
	CHECK_U64(row[DLU], 5009 + 1);
	CHECK_U64(row[DLUF], 1);
	cache_destroy(m);

	/* Not sampled: the nine events. */
	cfg.first_refs = false;
	CHECK(model_create("cachegrind", &cfg, &m, &bm, err, sizeof(err),
			   note, sizeof(note)) == 0);
	CHECK_U64(m->n_events, N_EV);
	cache_begin_sample(m, NULL);	/* nothing to do */
	cache_destroy(m);
}

/* The two instructions V (test_uncounted's, their rows RA and RB, their
 * accesses' addresses ADDR) made a block's code by lean_compile on a new
 * model and run three times by lean_uncounted, the last instruction's
 * n_acc LAST_N_ACC, then with COUNT their references counted: the rows
 * WANT_A and WANT_B. */
static void lean_thrice(const struct model_insn *v, const uint64_t *addr,
			unsigned last_n_acc, bool count, uint64_t *ra,
			uint64_t *rb, const uint64_t *want_a,
			const uint64_t *want_b)
{
	struct cache_model *m = make(big_i1,
				     (struct cache_geom){ 32768, 8, 64 },
				     big_ll);
	uint64_t code[(MODEL_LEAN_CODE_MAX(2, 4) + 7) / 8];
	struct model_lean lb = { .pc = v[0].pc, .v = v, .n = 2 };

	memset(ra, 0, N_EV * sizeof(*ra));
	memset(rb, 0, N_EV * sizeof(*rb));
	CHECK(m->ops->lean_compile != NULL && m->ops->lean_uncounted != NULL);
	CHECK(m->ops->lean_compile(m, &lb, (uint8_t *)code));
	for (int i = 0; i < 3; i++)
		m->ops->lean_uncounted(m, v[0].pc, (uint8_t *)code, v, addr,
				       last_n_acc);
	if (count)
		m->ops->count_refs(m, v, 2, 3);
	for (int i = 0; i < N_EV; i++) {
		CHECK_U64(ra[i], want_a[i]);
		CHECK_U64(rb[i], want_b[i]);
	}
	cache_destroy(m);
}

/* insns_uncounted leaves the references' own counts (Ir, Dr, Dw) to
 * count_refs, which adds a block's TIMES runs at once: a block of two
 * instructions run three times, by hand.  A (4 bytes at 0x1000) reads
 * 0x2000 and writes 0x2040; B (3 bytes at 0x1004, the same I1 line)
 * modifies 0x3000 and prefetches 0x4000.  Each line misses once, in D1
 * and LL (all cold, all fit), then hits: the misses are insns_uncounted's,
 * the rest count_refs's, a modify a Dr, a prefetch nothing. */
static void test_uncounted(void)
{
	struct cache_model *m = make(big_i1, (struct cache_geom){ 32768, 8, 64 },
				     big_ll);
	uint64_t ra[N_EV] = { 0 }, rb[N_EV] = { 0 };
	const struct mem_access acc[4] = {
		{ .addr = 0x2000, .size = 4, .kind = ACC_READ },
		{ .addr = 0x2040, .size = 8, .kind = ACC_WRITE },
		{ .addr = 0x3000, .size = 4, .kind = ACC_MODIFY },
		{ .addr = 0x4000, .size = 64, .kind = ACC_PREFETCH },
	};
	const struct model_insn v[2] = {
		{ .pc = 0x1000, .row = ra, .acc = acc, .len = 4, .n_acc = 2 },
		{ .pc = 0x1004, .row = rb, .acc = acc + 2, .len = 3,
		  .n_acc = 2 },
	};
	const uint64_t want_a[N_EV] = { 3, 1, 1, 3, 1, 1, 3, 1, 1 };
	const uint64_t want_b[N_EV] = { 3, 0, 0, 3, 1, 1, 0, 0, 0 };

	CHECK(m->ops->insns_uncounted != NULL && m->ops->count_refs != NULL);
	for (int i = 0; i < 3; i++)
		m->ops->insns_uncounted(m, v, 2);
	CHECK_U64(ra[IR] + ra[DR] + ra[DW] + rb[IR] + rb[DR] + rb[DW], 0);
	m->ops->count_refs(m, v, 2, 3);
	for (int i = 0; i < N_EV; i++) {
		CHECK_U64(ra[i], want_a[i]);
		CHECK_U64(rb[i], want_b[i]);
	}
	cache_destroy(m);

	/* the same from lean_compile's code, the addresses apart */
	const uint64_t addr[4] = { 0x2000, 0x2040, 0x3000, 0x4000 };
	lean_thrice(v, addr, 2, true, ra, rb, want_a, want_b);

	/* the block across two I1 lines: A at 0x103c ends its line, B
	 * begins the next and misses there too */
	const struct model_insn v2[2] = {
		{ .pc = 0x103c, .row = ra, .acc = acc, .len = 4, .n_acc = 2 },
		{ .pc = 0x1040, .row = rb, .acc = acc + 2, .len = 3,
		  .n_acc = 2 },
	};
	const uint64_t want_b2[N_EV] = { 3, 1, 1, 3, 1, 1, 0, 0, 0 };
	lean_thrice(v2, addr, 2, true, ra, rb, want_a, want_b2);

	/* A's write gone (n_acc 1 of its 2 addresses: a dead pop's load
	 * goes so) and B's last access (the last instruction's n_acc comes
	 * apart): B still reads its own address, 0x3000 */
	const struct model_insn v1[2] = {
		{ .pc = 0x1000, .row = ra, .acc = acc, .len = 4, .n_acc = 1 },
		{ .pc = 0x1004, .row = rb, .acc = acc + 2, .len = 3,
		  .n_acc = 2 },
	};
	const uint64_t want_a1[N_EV] = { 0, 1, 1, 0, 1, 1, 0, 0, 0 };
	const uint64_t want_b1[N_EV] = { 0, 0, 0, 0, 1, 1, 0, 0, 0 };
	lean_thrice(v1, addr, 1, false, ra, rb, want_a1, want_b1);

	/* the same as insns three times */
	m = make(big_i1, (struct cache_geom){ 32768, 8, 64 }, big_ll);
	memset(ra, 0, sizeof(ra));
	memset(rb, 0, sizeof(rb));
	for (int i = 0; i < 3; i++)
		m->ops->insns(m, v, 2);
	for (int i = 0; i < N_EV; i++) {
		CHECK_U64(ra[i], want_a[i]);
		CHECK_U64(rb[i], want_b[i]);
	}
	cache_destroy(m);
}

/* lean_compile's fetches, by hand: three instructions without data, A
 * (4 bytes at 0x1038) in I1 line 0x40, B (6 bytes at 0x103c) across it
 * and line 0x41, C (2 bytes at 0x1042) in 0x41.  B looks both its lines
 * up, C none (in the line B left); run three times, A's line misses
 * once (its first run) and B's second line once, in I1 and LL; C's row
 * never.  insns three times on a new model: the same. */
static void test_lean_fetches(void)
{
	uint64_t r[3][N_EV];
	const struct mem_access acc[1] = { { 0, 0, 0 } };
	const struct model_insn v[3] = {
		{ .pc = 0x1038, .row = r[0], .acc = acc, .len = 4 },
		{ .pc = 0x103c, .row = r[1], .acc = acc, .len = 6 },
		{ .pc = 0x1042, .row = r[2], .acc = acc, .len = 2 },
	};
	const struct model_lean lb = { .pc = 0x1038, .v = v, .n = 3 };
	uint64_t code[(MODEL_LEAN_CODE_MAX(3, 0) + 7) / 8];
	const uint64_t want[3][2] = { { 1, 1 }, { 1, 1 }, { 0, 0 } };

	for (int lean = 0; lean < 2; lean++) {
		struct cache_model *m = make(big_i1,
					     (struct cache_geom){ 32768, 8, 64 },
					     big_ll);
		memset(r, 0, sizeof(r));
		if (lean)
			CHECK(m->ops->lean_compile(m, &lb, (uint8_t *)code));
		for (int i = 0; i < 3; i++) {
			if (lean)
				m->ops->lean_uncounted(m, 0x1038,
						       (uint8_t *)code, v,
						       NULL, 0);
			else
				m->ops->insns(m, v, 3);
		}
		for (int i = 0; i < 3; i++) {
			CHECK_U64(r[i][I1MR], want[i][0]);
			CHECK_U64(r[i][ILMR], want[i][1]);
			CHECK_U64(r[i][IR], lean ? 0 : 3);
		}
		cache_destroy(m);
	}
}

int main(void)
{
	test_event_names();
	test_direct_mapped_conflict();
	test_two_way_lru();
	test_lru_eviction();
	test_straddle();
	test_multi_line();
	test_ll_only_on_l1_miss();
	test_kinds();
	test_ifetch();
	test_zero_tag_quirk();
	test_describe();
	test_cache_sim_off();
	test_first_refs();
	test_uncounted();
	test_lean_fetches();
	return test_summary("test-cache");
}
