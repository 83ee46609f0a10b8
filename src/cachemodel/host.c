/* The `host` model: `hier` built from the machine's own caches, every
 * level the host lists: from /sys/devices/system/cpu/cpu0/cache, else from
 * CPUID (cpuid_cache.c, whose rules apply then), else an error asking for
 * --model=hier --cache=... (there are no defaults to fall back on for a
 * whole hierarchy).
 *
 * Rules: levels sorted by level number, at level 1 the instruction cache
 * before the data cache; names L1I, L1D, L2, L3...; share = the number of
 * cpus in shared_cpu_list, or CPUID's count of logical processors sharing
 * the cache (capped by --cores, as every share); 0 ways (fully
 * associative) means size / line ways.  A level whose set count is
 * not a power of two goes through Cachegrind's LL tweak (fewer sets, more
 * ways).  Inclusion is not in sysfs: every level is non-inclusive (nine),
 * LRU, write-back, write-allocate.  Cores: --cores, else with
 * --threads=all HIER_THREAD_CORES (a core per thread, as a user of
 * --threads=all expects; the shares above repeat over them), else one. */
#include "model.h"
#include "models.h"

#include <stdlib.h>
#include <string.h>

#define MAX_INDEX 64

/* "0-3,8-11" -> 8. */
static unsigned count_cpus(const char *s)
{
	unsigned n = 0;

	while (*s) {
		char *end;
		unsigned long a = strtoul(s, &end, 10), b = a;

		if (end == s)
			return n ? n : 1;
		if (*end == '-')
			b = strtoul(end + 1, &end, 10);
		if (b >= a)
			n += (unsigned)(b - a + 1);
		s = *end == ',' ? end + 1 : end;
		if (*end && *end != ',')
			break;
	}
	return n ? n : 1;
}

static int level_order(const struct hier_level_spec *a, unsigned la,
		       const struct hier_level_spec *b, unsigned lb)
{
	if (la != lb)
		return la < lb ? -1 : 1;
	return (int)a->side - (int)b->side;	/* I, D, unified */
}

int host_levels_from_dir(const char *dir, struct hier_level_spec *out,
			 unsigned max, char *err, size_t errlen)
{
	unsigned lvl[16], n = 0;

	for (unsigned idx = 0; idx < MAX_INDEX; idx++) {
		char type[32], cpus[256];
		uint64_t level, size, ways, line;
		struct hier_level_spec s = { 0 };
		struct cache_geom g;
		unsigned j;

		if (sysfs_cache_attr(dir, idx, "type", type, sizeof(type)) < 0)
			continue;
		if (sysfs_cache_num(dir, idx, "level", &level) < 0 ||
		    sysfs_cache_num(dir, idx, "size", &size) < 0 ||
		    sysfs_cache_num(dir, idx, "ways_of_associativity", &ways) < 0 ||
		    sysfs_cache_num(dir, idx, "coherency_line_size", &line) < 0 ||
		    !line || line > UINT32_MAX || size < line || level > 9) {
			snprintf(err, errlen, "%s/index%u: unreadable", dir, idx);
			return -1;
		}
		if (!strcmp(type, "Instruction"))
			s.side = 0;
		else if (!strcmp(type, "Data"))
			s.side = 1;
		else if (!strcmp(type, "Unified"))
			s.side = 2;
		else
			continue;
		if (!ways)
			ways = size / line;
		g = (struct cache_geom){ size, (uint32_t)ways, (uint32_t)line };
		cache_geom_tweak_ll(&g);
		s.size = g.size;
		s.assoc = g.assoc;
		s.line = g.line;
		s.share_given = true;
		s.share = sysfs_cache_attr(dir, idx, "shared_cpu_list", cpus,
				    sizeof(cpus)) < 0 ? 1 : count_cpus(cpus);
		snprintf(s.name, sizeof(s.name), "L%u%s", (unsigned)level,
			 s.side == 0 ? "I" : s.side == 1 ? "D" : "");
		if (n == max || n == 16) {
			snprintf(err, errlen, "%s: too many levels", dir);
			return -1;
		}
		/* Insertion sort by level, then side. */
		for (j = n; j > 0 && level_order(&s, (unsigned)level, &out[j - 1],
						 lvl[j - 1]) < 0; j--) {
			out[j] = out[j - 1];
			lvl[j] = lvl[j - 1];
		}
		out[j] = s;
		lvl[j] = (unsigned)level;
		n++;
	}
	if (!n) {
		snprintf(err, errlen, "no caches in %s", dir);
		return -1;
	}
	return (int)n;
}

int host_levels_probe(const char *dir, cpuid_fn *cpuid, void *ctx,
		      struct hier_level_spec *out, unsigned max,
		      const char **source, char *err, size_t errlen)
{
	struct cpuid_caches c;
	char sysfs_err[256] = "";
	int n;

	if (dir) {
		n = host_levels_from_dir(dir, out, max, sysfs_err,
					 sizeof(sysfs_err));
		if (n > 0) {
			*source = CACHE_GEOM_SYSFS;
			return n;
		}
	}
	if (cpuid && cpuid_cache_read(cpuid, ctx, &c)) {
		if (c.n_levels > max) {
			snprintf(err, errlen, "%s: too many levels", c.source);
			return -1;
		}
		for (unsigned i = 0; i < c.n_levels; i++) {
			struct cache_geom g = { c.levels[i].size,
						c.levels[i].assoc,
						c.levels[i].line };

			/* As for sysfs: hier takes power-of-two sets. */
			cache_geom_tweak_ll(&g);
			out[i] = c.levels[i];
			out[i].size = g.size;
			out[i].assoc = g.assoc;
		}
		*source = c.source;
		return (int)c.n_levels;
	}
	/* An unreadable directory is worth naming; an absent one is the
	 * host's normal state on some VMs (DESIGN.md, "Hosts differ"). */
	if (dir && strncmp(sysfs_err, "no caches in ", 13))
		snprintf(err, errlen, "%s, and no cache information in CPUID: "
			 "give --model=hier --cache=LEVEL,...", sysfs_err);
	else
		snprintf(err, errlen, "no cache information in "
			 CACHE_GEOM_SYSFS " nor in CPUID: give --model=hier "
			 "--cache=LEVEL,...");
	return -1;
}

struct cache_model *host_cache_new(const struct model_config *cfg, bool sim,
				   char *err, size_t errlen)
{
	struct hier_level_spec levels[16];
	struct cache_model *m;
	const char *source;
	int n;

	if (!sim)
		return cg_cache_new(cfg, false, err, errlen);
	n = host_levels_probe(host_sysfs_cache_dir(), host_cpuid_fn(), NULL,
			      levels, 16, &source, err, errlen);
	if (n < 0)
		return NULL;
	m = hier_new(levels, (unsigned)n,
		     hier_default_cores(cfg, HIER_THREAD_CORES),
		     model_option_bool(cfg, "nt-bypass", false), "host",
		     err, errlen);
	if (m)
		snprintf(m->geom_source, sizeof(m->geom_source), "%s", source);
	return m;
}
