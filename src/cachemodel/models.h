/* Private to src/cachemodel: constructors behind the registry, and the
 * geometry helpers the registry and the unit tests share. */
#ifndef CT_CACHEMODEL_MODELS_H
#define CT_CACHEMODEL_MODELS_H

#include <stdbool.h>
#include <stddef.h>

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

#endif
