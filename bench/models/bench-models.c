/* ns per access of each cache model and ns per branch of each branch
 * model, on a fixed synthetic stream (no tracing: the models alone).
 *
 * The stream, like a traced program's: per instruction one fetch (pcs
 * walking a 16 KiB loop body), and on 2 of 3 instructions a data access,
 * 8 bytes: sequential reads of a 256 KiB array, stack traffic (8 hot
 * lines), random writes and read-modify-writes over 8 MiB (LL misses),
 * in two mixes: "typical" 25/70/5 % (D1 miss rate about 5%, as in
 * ordinary code) and "hostile" 60/20/20 % (about 25%).  One "access" is
 * one fetch or one data access.
 *
 * Times are CPU time, the best of three passes after a warm-up one.
 *
 *   bench-models [N_INSNS]      (default 1000000) */
#include "model.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* 16 bytes an instruction: the pc follows from the index; size 0 = no
 * data access. */
struct ev {
	struct mem_access a;
};

#define EV_PC(i) (0x401000 + ((uint64_t)(i) * 4) % 16384)

static double now(void)
{
	struct timespec ts;

	/* CPU time: the machine is shared, wall time would count others. */
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static uint64_t rng = 88172645463325252ULL;

static uint64_t next(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

/* Percentages of sequential, stack and random accesses. */
struct mix {
	const char *name;
	unsigned seq, stack;	/* the rest random */
};

static struct ev *make_stream(size_t n, const struct mix *mx)
{
	struct ev *s = calloc(n, sizeof(*s));
	uint64_t seq = 0;

	if (!s)
		exit(1);
	for (size_t i = 0; i < n; i++) {
		uint64_t r = next();

		if (r % 3 == 0)
			continue;
		s[i].a.size = 8;
		unsigned pct = (unsigned)((r >> 8) % 100);

		if (pct < mx->seq) {
			s[i].a.addr = 0x600000 + (seq += 8) % (256 << 10);
			s[i].a.kind = ACC_READ;
		} else if (pct < mx->seq + mx->stack) {
			s[i].a.addr = 0x7ffffffde000 + ((r >> 20) % 512);
			s[i].a.kind = (r >> 30) & 1 ? ACC_WRITE : ACC_READ;
		} else {
			s[i].a.addr = 0x10000000 + ((r >> 20) % (8 << 20));
			s[i].a.kind = (r >> 40) & 1 ? ACC_WRITE : ACC_MODIFY;
		}
	}
	return s;
}

struct cfgspec {
	const char *label, *model, *cache, *branch;
	unsigned cores;
	bool runs;		/* through the model's insns op, 64 at a time
				 * (the emulator's runs of lean instructions) */
};

static struct model_config base_config(void)
{
	return (struct model_config){
		.i1 = { 32768, 8, 64 }, .d1 = { 32768, 8, 64 },
		.ll = { 8388608, 16, 64 }, .cache_sim = true, .branch_sim = true,
	};
}

/* D1 misses per data access, whichever the model calls them. */
static double d1_rate(const struct cache_model *cm, const uint64_t *row)
{
	uint64_t refs = 0, miss = 0;

	for (unsigned i = 0; i < cm->n_events; i++) {
		const char *e = cm->event_names[i];

		if (!strcmp(e, "Dr") || !strcmp(e, "Dw"))
			refs += row[i];
		else if (!strcmp(e, "D1mr") || !strcmp(e, "D1mw") ||
			 !strcmp(e, "L1Dmr") || !strcmp(e, "L1Dmw"))
			miss += row[i];
	}
	return refs ? 100.0 * (double)miss / (double)refs : 0;
}

static void bench_cache(const struct cfgspec *c, const struct ev *s, size_t n)
{
	struct model_config cfg = base_config();
	struct cache_model *cm;
	struct branch_model *bm;
	char err[256], note[256];
	uint64_t *row, accesses = 0;
	double t0, t, best;

	cfg.cores = c->cores;
	cfg.cache_sim = c->cores != 0;
	/* I1/D1/LL are Cachegrind's model's geometry: the other models
	 * refuse them (issue 26). */
	if (c->cache || (c->model && strcmp(c->model, "cachegrind")))
		cfg.i1 = cfg.d1 = cfg.ll = (struct cache_geom){ 0 };
	if (c->cache && model_parse_option(&cfg, "cache", c->cache, err,
					   sizeof(err)) != 1) {
		fprintf(stderr, "%s: %s\n", c->label, err);
		exit(1);
	}
	if (model_create(c->model, &cfg, &cm, &bm, err, sizeof(err), note,
			 sizeof(note)) < 0) {
		fprintf(stderr, "%s: %s\n", c->label, err);
		exit(1);
	}
	model_config_free_options(&cfg);
	row = calloc(cm->n_events, sizeof(*row));
	/* One warm-up pass (the tag arrays' pages, the stream in the host's
	 * caches), then the best of three timed ones. */
	best = 1e30;
	for (int pass = 0; pass < 4; pass++) {
	memset(row, 0, cm->n_events * sizeof(*row));
	accesses = 0;
	t0 = now();
	if (c->runs) {
		struct model_insn v[64];
		for (size_t i = 0; i < n; i += 64) {
			unsigned k = 0;
			for (size_t j = i; j < n && j < i + 64; j++, k++) {
				v[k].pc = EV_PC(j);
				v[k].row = row;
				v[k].acc = &s[j].a;
				v[k].len = 4;
				v[k].n_acc = s[j].a.size != 0;
				accesses += 1 + v[k].n_acc;
			}
			cm->ops->insns(cm, v, k);
		}
	} else {
	for (size_t i = 0; i < n; i++) {
		/* Two threads on two cores, switching every 1000 instructions. */
		if (c->cores > 1 && i % 1000 == 0)
			cache_set_core(cm, (unsigned)(i / 1000) % c->cores);
		cache_fetch(cm, EV_PC(i), 4, row);
		accesses++;
		if (s[i].a.size) {
			cache_access(cm, &s[i].a, row);
			accesses++;
		}
	}
	}
	t = now() - t0;
	if (pass && t < best)
		best = t;
	}
	t = best;
	printf("  %-44s %6.1f ns/access  (D1 misses %.1f%%)\n", c->label,
	       t * 1e9 / (double)accesses, d1_rate(cm, row));
	free(row);
	cache_destroy(cm);
	branch_destroy(bm);
}

static void bench_branch(const char *name, size_t n)
{
	struct model_config cfg = base_config();
	struct cache_model *cm;
	struct branch_model *bm;
	char err[256], note[256];
	uint64_t row[8] = { 0 };
	double t0, t;

	cfg.branch_model = name;
	cfg.cache_sim = false;
	if (model_create(NULL, &cfg, &cm, &bm, err, sizeof(err), note,
			 sizeof(note)) < 0) {
		fprintf(stderr, "%s: %s\n", name, err);
		exit(1);
	}
	rng = 12345;
	t0 = now();
	for (size_t i = 0; i < n; i++) {
		uint64_t r = next();
		uint64_t pc = 0x401000 + (r % 512) * 7;

		/* Mostly loop-like branches, some data-dependent ones. */
		branch_cond(bm, pc, (r >> 20) % 8 != 0 || (i % 13 == 0), row);
	}
	t = now() - t0;
	printf("%-44s %6.1f ns/branch  (%" PRIu64 " mispredicted of %zu)\n",
	       name, t * 1e9 / (double)n, row[1], n);
	cache_destroy(cm);
	branch_destroy(bm);
}

int main(int argc, char **argv)
{
	size_t n = argc > 1 ? strtoul(argv[1], NULL, 10) : 1000000;
	static const struct cfgspec cases[] = {
		{ "none (--cache-sim=no: the loop's own cost)", NULL, NULL,
		  NULL, 0, false },
		{ "cachegrind (I1/D1 32K 8-way, LL 8M 16-way)", NULL,
		  NULL, NULL, 1, false },
		{ "cachegrind, runs of 64 (its insns op)", NULL, NULL, NULL,
		  1, true },
		{ "hier, the same I1/D1/LL", "hier", NULL, NULL, 1, false },
		{ "hier, 4 levels (L3 32M)", "hier",
		  "L1I:32k:8:64,L1D:32k:8:64,L2:1M:8:64,L3:32M:16:64", NULL, 1, false },
		{ "hier, 4 levels, incl L3, plru, pf=stride", "hier",
		  "L1I:32k:8:64,L1D:32k:8:64:pf=stride,L2:1M:8:64:plru,"
		  "L3:32M:16:64:incl", NULL, 1, false },
		{ "hier, I1/D1/LL, 2 cores", "hier", NULL, NULL, 2, false },
		{ "host (this machine's sysfs)", "host", NULL, NULL, 1, false },
		{ "jaguar, 1 core", "jaguar", NULL, NULL, 1, false },
		{ "jaguar, 2 cores", "jaguar", NULL, NULL, 2, false },
	};

	static const struct mix mixes[] = {
		{ "typical", 25, 70 }, { "hostile", 60, 20 },
	};

	for (size_t m = 0; m < 2; m++) {
		struct ev *s = make_stream(n, &mixes[m]);

		printf("%s stream:\n", mixes[m].name);
		for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
			bench_cache(&cases[i], s, n);
		free(s);
	}
	bench_branch("cachegrind", n);
	bench_branch("tage", n);
	return 0;
}
