/* The `jaguar` model: AMD Jaguar as in the game-studio talk
 * (../shared/reference/cachesim-talk-transcript.txt) and the issue.
 *
 * Two modules of four cores.  Per core a 32 KiB 8-way D1 and a 32 KiB
 * 2-way I1; per module a shared 2 MiB 16-way L2, inclusive (an L2 victim
 * leaves the module's L1s); 64 B lines.  A write removes the line from
 * every other core's L1s, from the other module's L2 and from all of that
 * module's L1s: hier.c's coherence rule (every instance not serving the
 * writer), which is exactly where the talk's tool stops short (it forgets
 * the other module's L1s).  Cores are numbered 0-3 in module 0, 4-7 in
 * module 1; with --cores=N the tracer uses cores 0..N-1 (so --cores=2 is
 * two cores of one module; --core-map places threads anywhere), without
 * all eight, threads round robin in creation order. */
#include "model.h"
#include "models.h"

#include <string.h>

#define JAGUAR_CORES 8

static const struct hier_level_spec jaguar_levels[] = {
	{ .name = "I1", .size = 32768, .assoc = 2, .line = 64, .side = 0,
	  .share = 1 },
	{ .name = "D1", .size = 32768, .assoc = 8, .line = 64, .side = 1,
	  .share = 1 },
	{ .name = "L2", .size = 2 << 20, .assoc = 16, .line = 64, .side = 2,
	  .incl = 1, .share = 4 },
};

struct cache_model *jaguar_cache_new(const struct model_config *cfg, bool sim,
				     char *err, size_t errlen)
{
	if (!sim)
		return cg_cache_new(cfg, false, err, errlen);
	if (cfg->cores > JAGUAR_CORES) {
		snprintf(err, errlen, "--cores: jaguar has %d cores, not %u",
			 JAGUAR_CORES, cfg->cores);
		return NULL;
	}
	return hier_new(jaguar_levels,
			sizeof(jaguar_levels) / sizeof(jaguar_levels[0]),
			JAGUAR_CORES, model_option_bool(cfg, "nt-bypass", false),
			"jaguar", err, errlen);
}
