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

/* Cachegrind's cg_arch.c maybe_tweak_LLc: make LL's set count a power of
 * two by rounding it down and raising the associativity to keep about the
 * size.  Returns true when G changed. */
bool cache_geom_tweak_ll(struct cache_geom *g);

/* One level of the `hier` model, as parsed from --cache=SPEC (hier.c). */
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
