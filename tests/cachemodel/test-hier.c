/* The hier, jaguar and host models on hand-worked sequences.  Lines are
 * 64 B; the tiny caches have one set, so every line competes for the same
 * ways and the expected contents can be followed by hand in the comments.
 * Blocks are named A, B, C... = 0x10000 + n * 64. */
#include "fakesys.h"
#include "model.h"
#include "models.h"

#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "testutil.h"

#define BLK(n) (0x10000ULL + (uint64_t)(n) * 64)
enum { A, B, C, D, E, F, G };

struct t {
	struct cache_model *m;
	uint64_t *row;
};

static struct t make_model(const char *model, const char *spec, unsigned cores,
			   const char *nt)
{
	struct model_config cfg = {
		.i1 = { 32768, 8, 64 }, .d1 = { 32768, 8, 64 },
		.ll = { 1048576, 16, 64 },
		.cache_sim = true, .branch_sim = false, .cores = cores,
	};
	struct branch_model *bm;
	struct t t;
	char err[256], note[256];

	/* A model with levels of its own refuses a geometry it would not
	 * use (issue 26). */
	if (spec || (model && (!strcmp(model, "jaguar") ||
			       !strcmp(model, "host"))))
		cfg.i1 = cfg.d1 = cfg.ll = (struct cache_geom){ 0 };
	if ((spec && model_parse_option(&cfg, "cache", spec, err,
					sizeof(err)) != 1) ||
	    (nt && model_parse_option(&cfg, "nt-bypass", nt, err,
				      sizeof(err)) != 1) ||
	    model_create(model, &cfg, &t.m, &bm, err, sizeof(err), note,
			 sizeof(note)) < 0) {
		fprintf(stderr, "%s %s: %s\n", model, spec ? spec : "", err);
		exit(1);
	}
	model_config_free_options(&cfg);
	t.row = calloc(t.m->n_events, sizeof(*t.row));
	if (!t.row)
		exit(1);
	return t;
}

static void done(struct t *t)
{
	cache_destroy(t->m);
	free(t->row);
}

/* The count of event NAME; a missing event fails the test. */
static uint64_t ev(const struct t *t, const char *name)
{
	for (unsigned i = 0; i < t->m->n_events; i++)
		if (!strcmp(t->m->event_names[i], name))
			return t->row[i];
	fprintf(stderr, "no event %s\n", name);
	test_failures++;
	return ~0ULL;
}

static bool has_ev(const struct t *t, const char *name)
{
	for (unsigned i = 0; i < t->m->n_events; i++)
		if (!strcmp(t->m->event_names[i], name))
			return true;
	return false;
}

static void acc(struct t *t, uint64_t addr, uint32_t size, enum access_kind k)
{
	struct mem_access a = { .addr = addr, .size = size, .kind = (uint8_t)k };

	cache_access(t->m, &a, t->row);
}

static void rd(struct t *t, int blk) { acc(t, BLK(blk), 4, ACC_READ); }
static void wr(struct t *t, int blk) { acc(t, BLK(blk), 4, ACC_WRITE); }

static void test_events(void)
{
	static const char *const want[] = {
		"Ir", "Dr", "Dw", "L1Imr", "L1Dmr", "L1Dmw", "L2Imr", "L2mr",
		"L2mw", "L3Imr", "L3mr", "L3mw", "L1DWb", "L2Wb", "L3Wb",
		"L2Hpf", "L2Hpfu", "Pf", "PfL1D", "PfL2", "PfL3", "NTw",
		"CohInv", "CohT", "CohF",
	};
	struct t t = make_model("hier", "L1I:32k:8:64,L1D:32k:8:64,"
				"L2:1M:8:64:pf=next,L3:32M:16:64", 2, NULL);

	CHECK_U64(t.m->n_events, sizeof(want) / sizeof(want[0]));
	for (unsigned i = 0; i < t.m->n_events && i < sizeof(want) /
	     sizeof(want[0]); i++)
		CHECK_STR(t.m->event_names[i], want[i]);
	done(&t);
}

/* D1 2 ways, L2 4 ways exclusive: 6 lines fit in all.
 *   A B C   miss both; C evicts A (LRU) into L2       D1 [B C] L2 [A]
 *   A       D1 miss, L2 hit: A leaves L2; B down      D1 [C A] L2 [B]
 *   B       D1 miss, L2 hit; C down                   D1 [A B] L2 [C]
 *   D       both miss; A down                         D1 [B D] L2 [C A]
 *   C       D1 miss, L2 hit; B down                   D1 [D C] L2 [A B]
 * D1mr 7, L2mr 4.  Then a cycle of 6 lines twice: the second round hits L2
 * every time (6 = 2 + 4), where a non-inclusive L2 of 4 misses them all. */
static void test_exclusive(void)
{
	struct t t = make_model("hier", "D1:128:2:64,L2:256:4:64:excl", 1,
				NULL);
	struct t n = make_model("hier", "D1:128:2:64,L2:256:4:64:nine", 1,
				NULL);
	const int seq[] = { A, B, C, A, B, D, C };
	uint64_t l2;

	for (unsigned i = 0; i < sizeof(seq) / sizeof(seq[0]); i++)
		rd(&t, seq[i]);
	CHECK_U64(ev(&t, "D1mr"), 7);
	CHECK_U64(ev(&t, "L2mr"), 4);
	done(&t);

	t = make_model("hier", "D1:128:2:64,L2:256:4:64:excl", 1, NULL);
	for (int round = 0; round < 2; round++) {
		l2 = ev(&t, "L2mr");
		for (int b = 10; b < 16; b++) {
			rd(&t, b);
			rd(&n, b);
		}
	}
	CHECK_U64(ev(&t, "L2mr") - l2, 0);
	CHECK_U64(ev(&t, "L2mr"), 6);
	CHECK_U64(ev(&n, "L2mr"), 12);
	CHECK_U64(ev(&n, "D1mr"), 12);
	CHECK_U64(ev(&t, "D1mr"), 12);
	done(&t);
	done(&n);

	/* Dirt travels with the victim: wr A (D1 [A*]), rd B C: A* to L2
	 * (no D1 write-back: the exclusive L2 takes every victim), rd D: B
	 * down (L2 [A* B]), rd E: C down, L2 evicts A*: one L2 write-back. */
	t = make_model("hier", "D1:128:2:64,L2:128:2:64:excl", 1, NULL);
	wr(&t, A);
	rd(&t, B);
	rd(&t, C);
	CHECK_U64(ev(&t, "D1Wb"), 0);
	rd(&t, D);
	CHECK_U64(ev(&t, "L2Wb"), 0);
	rd(&t, E);
	CHECK_U64(ev(&t, "D1Wb"), 0);
	CHECK_U64(ev(&t, "L2Wb"), 1);
	CHECK_U64(ev(&t, "D1mw"), 1);
	CHECK_U64(ev(&t, "L2mw"), 1);
	done(&t);
}

/* One set of 4 ways, S = A B C D A E B C A B:
 * LRU:  A B C D miss; A hit; E evicts B; B evicts C; C evicts D; A hit;
 *       B hit: 7 misses.
 * PLRU (tree bits: node 1 the root, 2 over ways 0-1, 3 over 2-3; each use
 *       points the nodes on its path away from it): A B C D fill ways 0-3,
 *       leaving root->left, node2->way 0, node3->way 2.  A (way 0) hit:
 *       root->right, node2->way 1.  E: right, way 2: evicts C; root->left,
 *       node3->way 3.  B hit (way 1): root->right, node2->way 0.  C: right,
 *       way 3: evicts D; root->left, node3->way 2.  A hit, B hit: 6 misses.
 * FIFO: A hit; E evicts A (first in); B, C hit; A evicts B; B evicts C: 7.
 *       A's hit did not save it: the difference from LRU is where E
 *       went, seen in the second half (LRU B C miss, FIFO A B). */
static void test_replacement(void)
{
	const int seq[] = { A, B, C, D, A, E, B, C, A, B };
	const int lru_miss[] = { 1, 1, 1, 1, 0, 1, 1, 1, 0, 0 };
	const int plru_miss[] = { 1, 1, 1, 1, 0, 1, 0, 1, 0, 0 };
	const int fifo_miss[] = { 1, 1, 1, 1, 0, 1, 0, 0, 1, 1 };
	const struct { const char *spec; const int *miss; } cases[] = {
		{ "D1:256:4:64:lru", lru_miss },
		{ "D1:256:4:64:plru", plru_miss },
		{ "D1:256:4:64:fifo", fifo_miss },
	};

	for (unsigned c = 0; c < 3; c++) {
		struct t t = make_model("hier", cases[c].spec, 1, NULL);

		for (unsigned i = 0; i < sizeof(seq) / sizeof(seq[0]); i++) {
			uint64_t before = ev(&t, "D1mr");

			rd(&t, seq[i]);
			if (ev(&t, "D1mr") - before != (uint64_t)cases[c].miss[i]) {
				fprintf(stderr, "%s: access %u: miss %d "
					"expected\n", cases[c].spec, i,
					cases[c].miss[i]);
				test_failures++;
			}
		}
		done(&t);
	}

	/* Random: the same seed repeats, another seed differs somewhere on a
	 * long conflict-heavy stream; every count stays within refs. */
	{
		uint64_t m[3];
		const char *specs[3] = { "D1:256:4:64:rand:seed=7",
					 "D1:256:4:64:rand:seed=7",
					 "D1:256:4:64:rand:seed=8" };

		for (int k = 0; k < 3; k++) {
			struct t t = make_model("hier", specs[k], 1, NULL);

			for (int i = 0; i < 5000; i++)
				rd(&t, (i * 7 + i / 13) % 6);
			m[k] = ev(&t, "D1mr");
			done(&t);
		}
		CHECK_U64(m[0], m[1]);
		CHECK(m[0] != m[2]);
		CHECK(m[0] > 6 && m[0] < 5000);
	}
}

/* D1 2 ways write-back over a big L2.
 *   wr A, wr B   D1 [A* B*], 2 write misses (write-allocate)
 *   rd C         evicts A*: D1Wb 1
 *   rd D         evicts B*: D1Wb 2
 *   rd A         evicts C (clean): D1Wb 2; L2 hit (A is there, dirty now)
 * No-write-allocate: wr A misses D1 and L2 (L2 allocates), D1 stays
 * empty: rd A misses D1, hits L2.  Write-through: no dirty lines in D1,
 * the write goes on to L2 (which takes it, write-back). */
static void test_write_back(void)
{
	struct t t = make_model("hier", "D1:128:2:64,L2:64k:4:64", 1, NULL);

	wr(&t, A);
	wr(&t, B);
	CHECK_U64(ev(&t, "D1mw"), 2);
	CHECK_U64(ev(&t, "L2mw"), 2);
	rd(&t, C);
	CHECK_U64(ev(&t, "D1Wb"), 1);
	rd(&t, D);
	CHECK_U64(ev(&t, "D1Wb"), 2);
	rd(&t, A);
	CHECK_U64(ev(&t, "D1Wb"), 2);
	CHECK_U64(ev(&t, "D1mr"), 3);
	CHECK_U64(ev(&t, "L2mr"), 2);
	CHECK_U64(ev(&t, "L2Wb"), 0);
	{
		char *buf = NULL;
		size_t len = 0;
		FILE *f = open_memstream(&buf, &len);

		cache_report(t.m, f, "", NULL);
		fclose(f);
		CHECK(strstr(buf, "hier: 0 fetches, 3 reads, 2 writes\n"
			     "  D1     misses: 3 read (100.00%), 2 write "
			     "(100.00%); 2 write-backs\n"
			     "  L2     misses: 0 fetch (0.00%), 2 read (66.67%), "
			     "2 write (100.00%); 0 write-backs\n") != NULL);
		if (test_failures)
			fputs(buf, stderr);
		free(buf);
	}
	done(&t);

	t = make_model("hier", "D1:128:2:64:nwa,L2:64k:4:64", 1, NULL);
	wr(&t, A);
	CHECK_U64(ev(&t, "D1mw"), 1);
	CHECK_U64(ev(&t, "L2mw"), 1);
	rd(&t, A);
	CHECK_U64(ev(&t, "D1mr"), 1);
	CHECK_U64(ev(&t, "L2mr"), 0);
	rd(&t, A);
	CHECK_U64(ev(&t, "D1mr"), 1);
	done(&t);

	/* wt D1 over a 1-set, 2-way L2: wr A (both miss), rd B, rd C: L2
	 * evicts A, which the write-through made dirty there: L2Wb 1. */
	t = make_model("hier", "D1:128:2:64:wt,L2:128:2:64", 1, NULL);
	CHECK(!has_ev(&t, "D1Wb"));
	wr(&t, A);
	rd(&t, B);
	rd(&t, C);
	CHECK_U64(ev(&t, "L2Wb"), 1);
	CHECK_U64(ev(&t, "L2mw"), 1);
	done(&t);
}

/* D1 and L2 both 2 ways in one set.
 *   A B      D1 [A B], L2 [A B]
 *   A        D1 hit; L2 not told: A is L2's LRU
 *   C        D1 miss; L2 evicts A and (inclusive) takes it out of D1,
 *            C fills D1's free way: D1 [B C]
 *   A        D1 miss, L2 miss
 * Non-inclusive: C evicts B from D1 (A was used), A then hits D1. */
static void test_inclusive(void)
{
	const int seq[] = { A, B, A, C, A };
	struct t t = make_model("hier", "D1:128:2:64,L2:128:2:64:incl", 1,
				NULL);
	struct t n = make_model("hier", "D1:128:2:64,L2:128:2:64:nine", 1,
				NULL);
	char *buf = NULL;
	size_t len = 0;
	FILE *f;

	for (unsigned i = 0; i < sizeof(seq) / sizeof(seq[0]); i++) {
		rd(&t, seq[i]);
		rd(&n, seq[i]);
	}
	CHECK_U64(ev(&t, "D1mr"), 4);
	CHECK_U64(ev(&t, "L2mr"), 4);
	CHECK_U64(ev(&n, "D1mr"), 3);
	CHECK_U64(ev(&n, "L2mr"), 3);
	/* Two back-invalidations: A at C, and at the last A, L2 [B C]
	 * evicts B, which D1 still held. */
	f = open_memstream(&buf, &len);
	cache_report(t.m, f, "==1== ", NULL);
	fclose(f);
	CHECK(strstr(buf, "==1== L2 back-invalidations: 2\n") != NULL);
	free(buf);
	done(&t);
	done(&n);

	/* Back-invalidating a dirty line writes it back: wr A (D1 [A*], L2
	 * [A]), rd B (L2 and D1 order A B), rd C: L2 evicts A,
	 * D1 loses A* -> the dirt joins L2's victim: L2Wb 1, D1Wb 0. */
	t = make_model("hier", "D1:128:2:64,L2:128:2:64:incl", 1, NULL);
	wr(&t, A);
	rd(&t, B);
	rd(&t, C);
	CHECK_U64(ev(&t, "L2Wb"), 1);
	CHECK_U64(ev(&t, "D1Wb"), 0);
	done(&t);
}

static const char *fake_pc(void *ctx, uint64_t pc, char *buf, size_t len)
{
	snprintf(buf, len, "pc%" PRIx64, pc);
	return buf;
}

static const char *fake_data(void *ctx, uint64_t addr, char *buf, size_t len)
{
	snprintf(buf, len, "var+%" PRIu64, (uint64_t)(addr - BLK(A)));
	return buf;
}

/* Jaguar: cores 0-3 module 0, 4-7 module 1.  Cores 0, 1 and 4 read A;
 * core 0 writes A+0: core 1's D1, module 1's L2 and core 4's D1 lose it
 * (CohInv 3; the talk's tool would leave core 4's D1 holding it).  Core 1
 * reads A+0 (the written bytes): D1 miss, L2 hit (the module's L2 kept
 * it): true sharing.  Core 4 reads A+8: D1 and L2 miss: false sharing.
 * Core 4 again: hits.  Core 2 never had it: its first read is a plain
 * miss (L2 hit), not a coherence miss. */
static void test_jaguar(void)
{
	struct t t = make_model("jaguar", NULL, 2, NULL);
	struct model_resolver res = { NULL, fake_pc, fake_data };
	char *buf = NULL;
	size_t len = 0;
	FILE *f;

	CHECK(has_ev(&t, "I1mr") && has_ev(&t, "D1mr") && has_ev(&t, "L2mr"));
	for (unsigned c = 0; c < 8; c += 1) {
		if (c != 0 && c != 1 && c != 4)
			continue;
		cache_set_core(t.m, c);
		cache_fetch(t.m, 0x400100, 4, t.row);
		rd(&t, A);
	}
	CHECK_U64(ev(&t, "D1mr"), 3);
	CHECK_U64(ev(&t, "L2mr"), 2);	/* once per module */
	cache_set_core(t.m, 0);
	cache_fetch(t.m, 0x400200, 4, t.row);
	wr(&t, A);
	CHECK_U64(ev(&t, "CohInv"), 3);
	CHECK_U64(ev(&t, "D1mw"), 0);
	cache_set_core(t.m, 1);
	cache_fetch(t.m, 0x400300, 4, t.row);
	rd(&t, A);
	CHECK_U64(ev(&t, "D1mr"), 4);
	CHECK_U64(ev(&t, "L2mr"), 2);
	CHECK_U64(ev(&t, "CohT"), 1);
	CHECK_U64(ev(&t, "CohF"), 0);
	cache_set_core(t.m, 4);
	cache_fetch(t.m, 0x400400, 4, t.row);
	acc(&t, BLK(A) + 8, 4, ACC_READ);
	CHECK_U64(ev(&t, "D1mr"), 5);
	CHECK_U64(ev(&t, "L2mr"), 3);
	CHECK_U64(ev(&t, "CohF"), 1);
	acc(&t, BLK(A) + 8, 4, ACC_READ);
	CHECK_U64(ev(&t, "D1mr"), 5);
	cache_set_core(t.m, 2);
	rd(&t, A);
	CHECK_U64(ev(&t, "D1mr"), 6);
	CHECK_U64(ev(&t, "L2mr"), 3);
	CHECK_U64(ev(&t, "CohT") + ev(&t, "CohF"), 2);

	f = open_memstream(&buf, &len);
	cache_report(t.m, f, "==9== ", &res);
	fclose(f);
	CHECK(strstr(buf, "==9== Coherence: 3 invalidations, 2 coherence "
		     "misses: 1 true sharing, 1 false sharing\n") != NULL);
	CHECK(strstr(buf, "line 0x10000 (var+0): 1 false sharing, 1 true "
		     "sharing misses, 3 invalidations received") != NULL);
	CHECK(strstr(buf, "false: 1 misses at pc400400 on var+8, written at "
		     "pc400200 on var+0") != NULL);
	CHECK(strstr(buf, "true : 1 misses at pc400300 on var+0, written at "
		     "pc400200 on var+0") != NULL);
	if (test_failures)
		fputs(buf, stderr);
	free(buf);
	done(&t);
}

/* Two cores over private D1s and a shared LL.  Core 1 holds A; core 0
 * writes bytes 0-3 (core 1 loses A); core 0 writes bytes 4-7 too (core 1
 * still has no copy: the bytes add up); core 1 reads 8-15: false.  Core 0
 * writes 12-15; core 1 reads 0-15 (touches 12-15): true.  A straddling
 * read of A+60..A+67 by core 1 after core 0 wrote B+0: B's part is a true
 * sharing miss, A's part hits. */
static void test_sharing(void)
{
	struct t t = make_model("hier", "D1:32k:8:64,LL:1M:16:64", 2, NULL);

	cache_set_core(t.m, 1);
	rd(&t, A);
	rd(&t, B);
	cache_set_core(t.m, 0);
	acc(&t, BLK(A), 4, ACC_WRITE);
	acc(&t, BLK(A) + 4, 4, ACC_WRITE);
	CHECK_U64(ev(&t, "CohInv"), 1);		/* the second found no copy */
	cache_set_core(t.m, 1);
	acc(&t, BLK(A) + 8, 8, ACC_READ);
	CHECK_U64(ev(&t, "CohF"), 1);
	CHECK_U64(ev(&t, "CohT"), 0);
	cache_set_core(t.m, 0);
	acc(&t, BLK(A) + 12, 4, ACC_MODIFY);
	cache_set_core(t.m, 1);
	acc(&t, BLK(A), 16, ACC_READ);
	CHECK_U64(ev(&t, "CohT"), 1);
	CHECK_U64(ev(&t, "CohF"), 1);
	cache_set_core(t.m, 0);
	acc(&t, BLK(B), 1, ACC_WRITE);
	cache_set_core(t.m, 1);
	acc(&t, BLK(A) + 60, 8, ACC_READ);
	CHECK_U64(ev(&t, "CohT"), 2);
	CHECK_U64(ev(&t, "CohF"), 1);
	CHECK_U64(ev(&t, "CohInv"), 3);
	/* Reads never invalidate. */
	cache_set_core(t.m, 0);
	rd(&t, A);
	CHECK_U64(ev(&t, "CohInv"), 3);
	done(&t);

	/* A line back by prefetch is no longer lost: core 1 holds A, core 0
	 * writes it, core 1 prefetches it back, B and C push it out of core
	 * 1's 2-way D1: the next miss on A is a capacity miss. */
	t = make_model("hier", "D1:128:2:64,LL:1M:16:64", 2, NULL);
	cache_set_core(t.m, 1);
	rd(&t, A);
	cache_set_core(t.m, 0);
	wr(&t, A);
	CHECK_U64(ev(&t, "CohInv"), 1);
	cache_set_core(t.m, 1);
	acc(&t, BLK(A), 1, ACC_PREFETCH);
	rd(&t, B);
	rd(&t, C);
	rd(&t, A);
	CHECK_U64(ev(&t, "D1mr"), 4);
	CHECK_U64(ev(&t, "CohT") + ev(&t, "CohF"), 0);
	done(&t);

	/* A bypassing non-temporal store invalidates too: core 1's next read
	 * of the stored bytes is true sharing. */
	t = make_model("hier", "D1:32k:8:64,LL:1M:16:64", 2, "yes");
	cache_set_core(t.m, 1);
	rd(&t, A);
	cache_set_core(t.m, 0);
	acc(&t, BLK(A), 8, ACC_NT_WRITE);
	CHECK_U64(ev(&t, "CohInv"), 1);
	cache_set_core(t.m, 1);
	rd(&t, A);
	CHECK_U64(ev(&t, "CohT"), 1);
	done(&t);

	/* One core: no coherence events at all. */
	t = make_model("hier", "D1:32k:8:64,LL:1M:16:64", 1, NULL);
	CHECK(!has_ev(&t, "CohF") && !has_ev(&t, "CohInv"));
	done(&t);
}

/* Software prefetch into D1 (2 ways, one set) over L2: prefetch A fills it
 * (nothing wasted, no miss counted), again: wasted in D1; B, C push A out
 * of D1 (not L2): prefetch A: wasted in L2, and fills D1 again.  rd A then
 * hits.  Non-temporal stores: counted, and with nt-bypass they leave no
 * line behind. */
static void test_prefetch_nt(void)
{
	struct t t = make_model("hier", "D1:128:2:64,L2:64k:4:64", 1, NULL);

	acc(&t, BLK(A), 1, ACC_PREFETCH);
	CHECK_U64(ev(&t, "Pf"), 1);
	CHECK_U64(ev(&t, "PfD1") + ev(&t, "PfL2"), 0);
	CHECK_U64(ev(&t, "D1mr") + ev(&t, "L2mr") + ev(&t, "Dr"), 0);
	acc(&t, BLK(A), 1, ACC_PREFETCH);
	CHECK_U64(ev(&t, "PfD1"), 1);
	rd(&t, B);
	rd(&t, C);
	acc(&t, BLK(A), 1, ACC_PREFETCH);
	CHECK_U64(ev(&t, "PfL2"), 1);
	CHECK_U64(ev(&t, "Pf"), 3);
	rd(&t, A);
	CHECK_U64(ev(&t, "D1mr"), 2);
	acc(&t, BLK(E), 8, ACC_NT_WRITE);
	CHECK_U64(ev(&t, "NTw"), 1);
	CHECK_U64(ev(&t, "Dw"), 1);
	CHECK_U64(ev(&t, "D1mw"), 1);	/* no bypass: an ordinary store */
	{
		char *buf = NULL;
		size_t len = 0;
		FILE *f = open_memstream(&buf, &len);

		cache_report(t.m, f, "", NULL);
		fclose(f);
		CHECK(strstr(buf, "Software prefetches: 3, 1 already in D1, 1 "
			     "already in L2 (66.7% wasted)\n") != NULL);
		CHECK(strstr(buf, "Non-temporal stores: 1\n") != NULL);
		free(buf);
	}
	done(&t);

	t = make_model("hier", "D1:128:2:64,L2:64k:4:64", 1, "yes");
	rd(&t, A);
	acc(&t, BLK(A), 8, ACC_NT_WRITE);
	acc(&t, BLK(B), 8, ACC_NT_WRITE);
	CHECK_U64(ev(&t, "NTw"), 2);
	CHECK_U64(ev(&t, "D1mw") + ev(&t, "L2mw"), 0);
	rd(&t, A);	/* the NT store took A out of both levels */
	CHECK_U64(ev(&t, "D1mr"), 2);
	CHECK_U64(ev(&t, "L2mr"), 2);
	done(&t);
}

/* Hardware prefetchers.  next: rd A misses and brings B (Hpf 1); rd B
 * hits a prefetched line (Hpfu 1) and, a hit, prefetches nothing; rd D
 * misses, brings E: D1 (one set, 4 ways) [A B D E*].  A, B, D used
 * again; rd G evicts E unused (useless 1) and prefetches H, evicting A:
 * 3 issued, 1 useful, 1 useless (H is still there, unused but not lost).
 * stride: one pc reads A, A+256, A+512, A+768 (the 4th sees the stride
 * twice: prefetch A+1024), then A+1024 hits. */
static void test_hw_prefetch(void)
{
	struct t t = make_model("hier", "D1:256:4:64:pf=next,L2:64k:4:64", 1,
				NULL);
	char *buf = NULL;
	size_t len = 0;
	FILE *f;

	rd(&t, A);
	CHECK_U64(ev(&t, "D1Hpf"), 1);
	CHECK_U64(ev(&t, "D1mr"), 1);
	rd(&t, B);
	CHECK_U64(ev(&t, "D1Hpfu"), 1);
	CHECK_U64(ev(&t, "D1mr"), 1);
	CHECK_U64(ev(&t, "D1Hpf"), 1);
	rd(&t, D);	/* D1 [A B D E*] */
	CHECK_U64(ev(&t, "D1Hpf"), 2);
	acc(&t, BLK(A), 4, ACC_WRITE);	/* keep A, B, D more recent than E */
	rd(&t, B);
	rd(&t, D);
	rd(&t, G);	/* evicts E unused; brings G+1, evicting A */
	f = open_memstream(&buf, &len);
	cache_report(t.m, f, "", NULL);
	fclose(f);
	CHECK(strstr(buf, "D1 next-line prefetcher: 3 issued, 1 useful, 1 "
		     "useless (evicted unused)\n") != NULL);
	if (test_failures)
		fputs(buf, stderr);
	free(buf);
	done(&t);

	t = make_model("hier", "D1:32k:8:64:pf=stride,L2:64k:4:64", 1, NULL);
	for (int i = 0; i < 4; i++) {
		cache_fetch(t.m, 0x401000, 4, t.row);
		acc(&t, BLK(0) + (uint64_t)i * 256, 8, ACC_READ);
	}
	CHECK_U64(ev(&t, "D1mr"), 4);
	CHECK_U64(ev(&t, "D1Hpf"), 1);
	cache_fetch(t.m, 0x401000, 4, t.row);
	acc(&t, BLK(0) + 1024, 8, ACC_READ);
	CHECK_U64(ev(&t, "D1mr"), 4);
	CHECK_U64(ev(&t, "D1Hpfu"), 1);
	done(&t);
}

/* hier as I1/D1/LL (non-inclusive, LRU, write-allocate) is Cachegrind's
 * model: the same random stream of fetches and accesses (many straddling
 * lines, small caches so that LL evicts) gives the same counts. */
static void test_equals_cachegrind(void)
{
	static const char *const cg_names[] = {
		"Ir", "I1mr", "ILmr", "Dr", "D1mr", "DLmr", "Dw", "D1mw", "DLmw"
	};
	static const char *const hier_names[] = {
		"Ir", "I1mr", "LLImr", "Dr", "D1mr", "LLmr", "Dw", "D1mw", "LLmw"
	};
	struct model_config cfg = {
		.i1 = { 1024, 2, 64 }, .d1 = { 2048, 4, 64 },
		.ll = { 8192, 4, 64 }, .cache_sim = true,
	};
	struct cache_model *cg, *hm;
	struct branch_model *bm;
	uint64_t rcg[9] = { 0 }, *rh;
	uint64_t seed = 12345;
	char err[256], note[256];
	struct t h;

	if (model_create(NULL, &cfg, &cg, &bm, err, sizeof(err), note,
			 sizeof(note)) < 0 ||
	    model_create("hier", &cfg, &hm, &bm, err, sizeof(err), note,
			 sizeof(note)) < 0) {
		fprintf(stderr, "%s\n", err);
		exit(1);
	}
	h.m = hm;
	rh = calloc(hm->n_events, sizeof(*rh));
	h.row = rh;
	for (int i = 0; i < 200000; i++) {
		uint64_t r, addr;
		struct mem_access a;

		seed ^= seed << 13;
		seed ^= seed >> 7;
		seed ^= seed << 17;
		r = seed;
		addr = 0x100000 + (r >> 8) % 24576;
		if (r % 4 == 0) {
			cache_fetch(cg, addr, 1 + (uint32_t)(r >> 40) % 15, rcg);
			cache_fetch(hm, addr, 1 + (uint32_t)(r >> 40) % 15, rh);
			continue;
		}
		a.addr = addr;
		a.size = 1u << ((r >> 50) % 6);
		/* R W M NT; not prefetches: Cachegrind ignores them, hier
		 * fills the line. */
		a.kind = (uint8_t)((r >> 4) % 4);
		if (a.kind == ACC_PREFETCH)
			a.kind = ACC_NT_WRITE;
		cache_access(cg, &a, rcg);
		cache_access(hm, &a, rh);
	}
	for (int e = 0; e < 9; e++)
		CHECK_U64(ev(&h, hier_names[e]), rcg[e]);
	CHECK(rcg[5] > 1000 && rcg[8] > 1000);	/* LL really evicted */
	(void)cg_names;
	cache_destroy(cg);
	done(&h);
}

/* Random streams through odd hierarchies, cores switching: the
 * invariants hold all along, the write invalidation one checked right
 * after writes (and ASan/UBSan builds watch the memory). */
static void test_stress(void)
{
	static const struct { const char *spec; unsigned cores; } cfgs[] = {
		{ "L1I:1k:2:64,L1D:1k:4:64:pf=stride,L2:4k:4:64:incl:plru,"
		  "L3:16k:8:64:incl:rand:seed=5", 4 },
		{ "D1:1k:2:64:pf=next,L2:2k:4:64:excl:fifo,L3:8k:4:64:incl", 2 },
		{ "L1I:512:2:64:share=2,L1D:1k:2:64:wt:nwa:share=2,"
		  "L2:4k:4:64:incl:share=4,L3:16k:16:64:excl", 8 },
	};
	char err[256];

	for (unsigned c = 0; c < sizeof(cfgs) / sizeof(cfgs[0]); c++) {
		struct t t = make_model("hier", cfgs[c].spec, cfgs[c].cores,
					c == 1 ? "yes" : NULL);
		uint64_t seed = 99 + c;
		int bad = 0;

		for (int i = 0; i < 100000 && !bad; i++) {
			uint64_t r;
			struct mem_access a;

			seed ^= seed << 13;
			seed ^= seed >> 7;
			seed ^= seed << 17;
			r = seed;
			if (i % 97 == 0)
				cache_set_core(t.m, (unsigned)(r >> 33) %
					       cfgs[c].cores);
			cache_fetch(t.m, 0x400000 + (r >> 12) % 8192, 4, t.row);
			a.addr = 0x600000 + (r >> 20) % 32768;
			a.size = 1u << ((r >> 50) % 5);
			a.kind = (uint8_t)((r >> 4) % 5);
			cache_access(t.m, &a, t.row);
			if ((i % 1000 == 999 || (a.kind != ACC_READ && i % 7 == 0)) &&
			    hier_check(t.m, err, sizeof(err))) {
				fprintf(stderr, "stress %u, step %d: %s\n", c, i,
					err);
				test_failures++;
				bad = 1;
			}
		}
		CHECK(ev(&t, "Dr") + ev(&t, "Dw") > 0);
		done(&t);
	}
}

static void test_spec_errors(void)
{
	static const char *const bad[] = {
		"", "L1:32k:8", "L1:32k:8:64:bogus", "L1:32k:8:64,",
		"L1:32k:8:64,L1:64k:8:64", "L-1:32k:8:64", "L1:32q:8:64",
		"L1:32k:8:64:share=0", "L1:32k:8:64:pf=far", "L1:32k:0:64",
	};
	static const char *const bad_at_create[] = {
		"L1:32k:8:64,L2:1M:8:128",	/* two line sizes */
		"L2:1M:8:64,L1D:32k:8:64",	/* split below unified */
		"L1:32k:8:64:excl",		/* exclusive first level */
		"L1:24k:6:64:plru",		/* PLRU needs 2^n ways */
		"L1:3k:8:64",			/* 6 sets */
		"L1:32k:8:64:share=2,L2:1M:8:64:share=3,L3:8M:8:64",
	};
	struct model_config cfg = { .cache_sim = true };
	char err[256], note[256];

	for (unsigned i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = '\0';
		if (model_parse_option(&cfg, "cache", bad[i], err,
				       sizeof(err)) != -1 || !err[0]) {
			fprintf(stderr, "spec '%s' accepted\n", bad[i]);
			test_failures++;
		}
	}
	CHECK(model_parse_option(&cfg, "no-such-option", "1", err,
				 sizeof(err)) == 0);
	CHECK(model_parse_option(&cfg, "nt-bypass", "maybe", err,
				 sizeof(err)) == -1);
	CHECK(model_parse_option(&cfg, "branch-opts", "tables=9", err,
				 sizeof(err)) == -1);
	CHECK_U64(cfg.n_opts, 0);
	for (unsigned i = 0; i < sizeof(bad_at_create) / sizeof(bad_at_create[0]);
	     i++) {
		struct model_config c = {
			.i1 = { 32768, 8, 64 }, .d1 = { 32768, 8, 64 },
			.ll = { 1048576, 16, 64 }, .cache_sim = true, .cores = 8,
		};
		struct cache_model *cm;
		struct branch_model *bm;

		CHECK(model_parse_option(&c, "cache", bad_at_create[i], err,
					 sizeof(err)) == 1);
		if (model_create("hier", &c, &cm, &bm, err, sizeof(err), note,
				 sizeof(note)) == 0) {
			fprintf(stderr, "spec '%s' built\n", bad_at_create[i]);
			test_failures++;
			cache_destroy(cm);
		}
		model_config_free_options(&c);
	}
	/* --cache belongs to hier. */
	{
		struct model_config c = {
			.i1 = { 32768, 8, 64 }, .d1 = { 32768, 8, 64 },
			.ll = { 1048576, 16, 64 }, .cache_sim = true,
		};
		struct cache_model *cm;
		struct branch_model *bm;

		CHECK(model_parse_option(&c, "cache", "L1:32k:8:64", err,
					 sizeof(err)) == 1);
		CHECK(model_create(NULL, &c, &cm, &bm, err, sizeof(err), note,
				   sizeof(note)) == -1);
		CHECK(model_create("nosuch", &c, &cm, &bm, err, sizeof(err),
				   note, sizeof(note)) == -1);
		model_config_free_options(&c);
		CHECK(model_parse_option(&c, "nt-bypass", "yes", err,
					 sizeof(err)) == 1);
		CHECK(model_create("cachegrind", &c, &cm, &bm, err, sizeof(err),
				   note, sizeof(note)) == -1);
		CHECK_STR(err, "--nt-bypass is an option of --model=hier, host "
			  "and jaguar");
		model_config_free_options(&c);
		CHECK_U64(c.n_opts, 0);
	}
}


static void cache_dir(const char *dir, unsigned idx, const char *level,
		      const char *type, const char *size, const char *ways,
		      const char *cpus)
{
	fakesys_put(dir, idx, "level", level);
	fakesys_put(dir, idx, "type", type);
	fakesys_put(dir, idx, "size", size);
	fakesys_put(dir, idx, "ways_of_associativity", ways);
	fakesys_put(dir, idx, "coherency_line_size", "64");
	fakesys_put(dir, idx, "shared_cpu_list", cpus);
}

/* A sysfs tree as this machine's (index order D, I, L2, L3), L3 300 MB
 * 20-way (245760 sets: tweaked to 131072 sets, 38 ways as Cachegrind). */
static void test_host_dir(void)
{
	char dir[] = "/tmp/test-hier-XXXXXX";
	struct hier_level_spec lv[16];
	char err[256], cmd[64];
	int n;

	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		exit(1);
	}
	cache_dir(dir, 0, "1", "Data", "48K", "12", "0,2");
	cache_dir(dir, 1, "1", "Instruction", "32K", "8", "0,2");
	cache_dir(dir, 2, "2", "Unified", "2048K", "16", "0,2");
	cache_dir(dir, 3, "3", "Unified", "307200K", "20", "0-3");
	n = host_levels_from_dir(dir, lv, 16, err, sizeof(err));
	CHECK(n == 4);
	if (n == 4) {
		CHECK_STR(lv[0].name, "L1I");
		CHECK_U64(lv[0].size, 32768);
		CHECK_U64(lv[0].side, 0);
		CHECK_STR(lv[1].name, "L1D");
		CHECK_U64(lv[1].size, 49152);
		CHECK_U64(lv[1].assoc, 12);
		CHECK_U64(lv[1].share, 2);
		CHECK_STR(lv[2].name, "L2");
		CHECK_U64(lv[2].side, 2);
		CHECK_STR(lv[3].name, "L3");
		CHECK_U64(lv[3].share, 4);
		CHECK_U64(lv[3].assoc, 38);
		CHECK_U64(lv[3].size, 318767104);
	}
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd) != 0)
		test_failures++;
}

int main(void)
{
	test_events();
	test_exclusive();
	test_replacement();
	test_write_back();
	test_inclusive();
	test_jaguar();
	test_sharing();
	test_prefetch_nt();
	test_hw_prefetch();
	test_equals_cachegrind();
	test_stress();
	test_spec_errors();
	test_host_dir();
	return test_summary("test-hier");
}
