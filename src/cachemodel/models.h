/* Private to src/cachemodel: constructors behind the registry, and the
 * geometry helpers the registry and the unit tests share. */
#ifndef CT_CACHEMODEL_MODELS_H
#define CT_CACHEMODEL_MODELS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model.h"

/* Cachegrind's simulator (I1, D1, LL) with CFG's geometry, already checked.
 * With SIM false the "none" model: Ir only, same desc lines (as valgrind
 * writes them with --cache-sim=no).  NULL and a message in ERR on failure. */
struct cache_model *cg_cache_new(const struct model_config *cfg, bool sim,
				 char *err, size_t errlen);

/* Cachegrind's branch predictor (cg_branchpred.c). */
struct branch_model *cg_branch_new(char *err, size_t errlen);

/* One level of the `hier` model, as parsed from --cache=SPEC (hier_build.c). */
struct hier_level_spec {
	char name[12];		/* letters and digits: event name prefix */
	uint64_t size;
	uint32_t assoc, line;
	uint8_t side;		/* 0 instruction, 1 data, 2 unified */
	uint8_t incl;		/* 0 non-inclusive, 1 inclusive, 2 exclusive */
	uint8_t repl;		/* 0 LRU, 1 tree-PLRU, 2 FIFO, 3 random */
	uint8_t pf;		/* 0 none, 1 next-line, 2 stride */
	bool write_through, no_write_allocate;
	bool share_given;
	unsigned share;		/* cores per instance; 0 = all */
	uint64_t seed;		/* random replacement; 0 = the default */
};

/* cpuid_cache.c: the caches as CPUID describes them (the rules are at the
 * top of that file).  The cpuid instruction as a function: LEAF and
 * SUBLEAF in, EAX EBX ECX EDX out; CTX is the caller's (the unit tests'
 * recorded tables).  cpuid_host is the real instruction. */
typedef void cpuid_fn(uint32_t leaf, uint32_t subleaf, uint32_t out[4],
		      void *ctx);
void cpuid_host(uint32_t leaf, uint32_t subleaf, uint32_t out[4], void *ctx);

#define CPUID_MAX_LEVELS 16
struct cpuid_caches {
	const char *source;	/* "CPUID leaf 4", "CPUID leaf 0x8000001D",
				 * "CPUID 0x80000005/6"; NULL: none */
	unsigned n_levels;
	/* Sorted by level, then instruction, data, unified; sizes as
	 * CPUID gives them (no tweak); share_given, share 0 = all. */
	struct hier_level_spec levels[CPUID_MAX_LEVELS];
	unsigned level_of[CPUID_MAX_LEVELS];	/* 1 for L1... */
	char skipped[160];	/* a cache left out and why, or "" */
};
/* Read C through CPUID; returns C->n_levels (0: no cache information). */
unsigned cpuid_cache_read(cpuid_fn *cpuid, void *ctx, struct cpuid_caches *c);
/* geometry.c: I1, D1 and LL from N levels (LEVEL_OF[k]: 1 for L1...):
 * the level-1 instruction and data caches (a unified one is both), LL
 * the highest level above 1 that is unified or data, unified first at
 * equal levels.  0, or -1 when one of them is missing.  The one rule for
 * /sys and CPUID. */
int cache_geom_pick(const struct hier_level_spec *lv, const unsigned *level_of,
		    unsigned n, struct cache_geom *i1, struct cache_geom *d1,
		    struct cache_geom *ll);
/* I1, D1 and LL from C's levels: LL is the highest level above 1 that is
 * unified or data (unified first at equal levels), as for sysfs.  0, or
 * -1 when one of them is missing. */
int cpuid_cache_geoms(const struct cpuid_caches *c, struct cache_geom *i1,
		      struct cache_geom *d1, struct cache_geom *ll);

/* The host probes as CACHETRACE_HOST leaves them (hostenv.h): the sysfs
 * cache directory, NULL under sysfs-cache=no; the cpuid instruction, NULL
 * under cpuid-cache=no. */
const char *host_sysfs_cache_dir(void);
cpuid_fn *host_cpuid_fn(void);

/* geometry.c: cache_geom_host's chain with its probes given: DIR laid out
 * as /sys/devices/system/cpu/cpu0/cache (NULL: skipped), then CPUID
 * through CPUID (NULL: skipped), then Cachegrind's defaults.  The LL is
 * as the host gives it (no tweak).  *SOURCE: one of the names of
 * cache_geom_host; SKIPPED (when not NULL): CPUID's note on a cache it
 * left out, or "".  Returns 0 from the host, 1 with the defaults. */
int cache_geom_probe(const char *dir, cpuid_fn *cpuid, void *ctx,
		     struct cache_geom *i1, struct cache_geom *d1,
		     struct cache_geom *ll, const char **source,
		     char *skipped, size_t skippedlen);

/* Parse "NAME:SIZE:ASSOC:LINE[:FLAG...],..." into at most MAX levels. */
int hier_parse_spec(const char *spec, struct hier_level_spec *out,
		    unsigned max, unsigned *n_out, char *err, size_t errlen);
/* The hierarchy of N_LEVELS levels over N_CORES cores (0: one).  DESC_NAME
 * names the model in messages and the desc: line. */
struct cache_model *hier_new(const struct hier_level_spec *specs,
			     unsigned n_levels, unsigned n_cores,
			     bool nt_bypass, const char *desc_name,
			     char *err, size_t errlen);

/* The cores of a model whose core count is free (hier, host): --cores, or
 * with --threads=all and no --cores PER_THREAD (a core per thread up to
 * that many; the threads are not known yet when the model is made), else
 * one. */
unsigned hier_default_cores(const struct model_config *cfg,
			    unsigned per_thread);
/* hier's and host's cores with --threads=all and no --cores: as many as
 * jaguar, more than the threads of most programs one steps (a core each);
 * the cores no thread uses hold nothing and cost only the coherence
 * probes of each write.  Threads beyond share cores round robin. */
#define HIER_THREAD_CORES 8

/* For the tests: 0 when M's state keeps the hier invariants, else -1 and
 * the broken one in ERR. */
int hier_check(const struct cache_model *m, char *err, size_t errlen);

/* Model options kept in struct model_config: the last value of NAME, or
 * NULL. */
const char *model_option(const struct model_config *cfg, const char *name);
/* yes/no options: DEF when not given. */
bool model_option_bool(const struct model_config *cfg, const char *name,
		       bool def);

/* The constructors behind the registry (SIM false: cache simulation off,
 * which makes every model the Ir-only "none" model). */
struct cache_model *hier_cache_new(const struct model_config *cfg, bool sim,
				   char *err, size_t errlen);
struct cache_model *host_cache_new(const struct model_config *cfg, bool sim,
				   char *err, size_t errlen);
struct cache_model *jaguar_cache_new(const struct model_config *cfg, bool sim,
				     char *err, size_t errlen);
/* Build `hier` levels from DIR laid out as /sys/devices/system/cpu/cpu0/cache
 * (all levels, share from shared_cpu_list); returns the level count or -1. */
int host_levels_from_dir(const char *dir, struct hier_level_spec *out,
			 unsigned max, char *err, size_t errlen);

/* The host model's levels by the chain of cache_geom_host: DIR laid out
 * as /sys/devices/system/cpu/cpu0/cache (NULL: skipped), else CPUID
 * through CPUID (NULL: skipped), each level's set count made a power of
 * two as Cachegrind's LL tweak does.  Returns the level count, *SOURCE
 * naming where they came from, or -1 with a message in ERR. */
int host_levels_probe(const char *dir, cpuid_fn *cpuid, void *ctx,
		      struct hier_level_spec *out, unsigned max,
		      const char **source, char *err, size_t errlen);

/* tage's sizes, from --branch-opts=KEY=N,... */
struct tage_params {
	unsigned tables, bits, base_bits, min_hist, max_hist, tag_bits;
	unsigned btb, ras;
};

/* Parse S into P (P NULL: only check); defaults for keys not given. */
int tage_parse_opts(const char *s, struct tage_params *p, char *err,
		    size_t errlen);

/* The modern branch predictor (branch_tage.c): TAGE conditional predictor,
 * BTB for indirect branches, return-address stack. */
struct branch_model *tage_branch_new(const struct model_config *cfg,
				     char *err, size_t errlen);

/* geometry.c: DIR/indexIDX/NAME of a sysfs cache directory: its first line
 * (without the newline), or a number with an optional K/M/G suffix.
 * Return 0, or -1 when missing or malformed. */
int sysfs_cache_attr(const char *dir, unsigned idx, const char *name,
		     char *buf, size_t len);
int sysfs_cache_num(const char *dir, unsigned idx, const char *name,
		    uint64_t *out);

#endif
