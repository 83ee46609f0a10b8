/* The model registry and the dispatch wrappers.
 *
 * Geometry: a level given explicitly (size != 0) is checked and a bad one
 * is an error, never adjusted (as Cachegrind treats --I1/--D1/--LL).  A
 * level left at 0 comes from the host's sysfs, standing in for
 * Cachegrind's CPUID detection: its LL goes through Cachegrind's
 * maybe_tweak_LLc (with a note, like Cachegrind's warning), a host I1/D1
 * the simulator cannot take is an error asking for --I1/--D1.  When sysfs
 * cannot be read, Cachegrind's x86 defaults are used, with a note. */
#include "model.h"
#include "models.h"

#include <inttypes.h>
#include <stdarg.h>
#include <string.h>

struct cache_model_entry {
	const char *name;
	struct cache_model *(*create)(const struct model_config *cfg,
				      bool sim, char *err, size_t errlen);
};

static const struct cache_model_entry cache_models[] = {
	{ "cachegrind", cg_cache_new },	/* the default: first */
};

#define N_CACHE_MODELS (sizeof(cache_models) / sizeof(cache_models[0]))

/* Cachegrind's defaults when it cannot detect the caches (cg_arch.c). */
static const struct cache_geom default_i1 = { 32768, 8, 64 };
static const struct cache_geom default_d1 = { 32768, 8, 64 };
static const struct cache_geom default_ll = { 8388608, 16, 64 };

/* Append one sentence to NOTE, "; "-separated, staying one line. */
static void note_add(char *note, size_t notelen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void note_add(char *note, size_t notelen, const char *fmt, ...)
{
	size_t used;
	va_list ap;

	if (!note || !notelen)
		return;
	used = strlen(note);
	if (used && used + 2 < notelen) {
		strcpy(note + used, "; ");
		used += 2;
	}
	if (used + 1 >= notelen)
		return;
	va_start(ap, fmt);
	vsnprintf(note + used, notelen - used, fmt, ap);
	va_end(ap);
}

static int fill_geometry(struct model_config *cfg, char *err, size_t errlen,
			 char *note, size_t notelen)
{
	struct cache_geom host_i1, host_d1, host_ll;
	const char *bad;
	bool need = !cfg->i1.size || !cfg->d1.size || !cfg->ll.size;

	if (need && cache_geom_from_sysfs(&host_i1, &host_d1, &host_ll) < 0) {
		host_i1 = default_i1;
		host_d1 = default_d1;
		host_ll = default_ll;
		note_add(note, notelen, "cannot read the host's caches from "
			 "/sys/devices/system/cpu/cpu0/cache, using Cachegrind's "
			 "defaults I1 32768,8,64 D1 32768,8,64 LL 8388608,16,64");
	} else if (need && !cfg->ll.size) {
		struct cache_geom old = host_ll;

		if (cache_geom_tweak_ll(&host_ll))
			note_add(note, notelen, "host LL cache %" PRIu64 " B, %"
				 PRIu32 " B, %" PRIu32 "-way simulated as %"
				 PRIu64 " B, %" PRIu32 " B, %" PRIu32
				 "-way (a power-of-two set count, as Cachegrind)",
				 old.size, old.line, old.assoc, host_ll.size,
				 host_ll.line, host_ll.assoc);
	}

	if (!cfg->i1.size) {
		cfg->i1 = host_i1;
		if ((bad = cache_geom_check("host I1", &cfg->i1, err, errlen)))
			goto host_bad;
	}
	if (!cfg->d1.size) {
		cfg->d1 = host_d1;
		if ((bad = cache_geom_check("host D1", &cfg->d1, err, errlen)))
			goto host_bad;
	}
	if (!cfg->ll.size) {
		cfg->ll = host_ll;
		if ((bad = cache_geom_check("host LL", &cfg->ll, err, errlen)))
			goto host_bad;
	}
	if ((bad = cache_geom_check("I1", &cfg->i1, err, errlen)) ||
	    (bad = cache_geom_check("D1", &cfg->d1, err, errlen)) ||
	    (bad = cache_geom_check("LL", &cfg->ll, err, errlen)))
		return -1;
	return 0;

host_bad:
	{
		size_t used = strlen(err);

		snprintf(err + used, errlen - used,
			 " (give its geometry with --I1/--D1/--LL)");
	}
	return -1;
}

int model_create(const char *model_name, struct model_config *cfg,
		 struct cache_model **cm, struct branch_model **bm,
		 char *err, size_t errlen, char *note, size_t notelen)
{
	const struct cache_model_entry *e = NULL;

	*cm = NULL;
	*bm = NULL;
	if (note && notelen)
		note[0] = '\0';
	if (!model_name)
		model_name = cache_models[0].name;
	for (size_t i = 0; i < N_CACHE_MODELS; i++) {
		if (!strcmp(cache_models[i].name, model_name)) {
			e = &cache_models[i];
			break;
		}
	}
	if (!e) {
		size_t used = (size_t)snprintf(err, errlen,
			"unknown cache model '%.40s' (known:", model_name);

		for (size_t i = 0; i < N_CACHE_MODELS && used < errlen; i++)
			used += (size_t)snprintf(err + used, errlen - used,
						 " %s", cache_models[i].name);
		if (used < errlen)
			snprintf(err + used, errlen - used, ")");
		return -1;
	}
	if (fill_geometry(cfg, err, errlen, note, notelen) < 0)
		return -1;
	*cm = e->create(cfg, cfg->cache_sim, err, errlen);
	if (!*cm)
		return -1;
	if (cfg->branch_sim) {
		*bm = cg_branch_new(err, errlen);
		if (!*bm) {
			cache_destroy(*cm);
			*cm = NULL;
			return -1;
		}
	}
	return 0;
}

void cache_describe(const struct cache_model *m, FILE *out)
{
	if (m && m->ops->describe)
		m->ops->describe(m, out);
}

void cache_destroy(struct cache_model *m)
{
	if (m && m->ops->destroy)
		m->ops->destroy(m);
}

void branch_destroy(struct branch_model *m)
{
	if (m && m->ops->destroy)
		m->ops->destroy(m);
}

void cache_set_core(struct cache_model *m, unsigned core)
{
	if (m && m->ops->set_core)
		m->ops->set_core(m, core);
}

void cache_report(const struct cache_model *m, FILE *out, const char *prefix,
		  const struct model_resolver *res)
{
	if (m && m->ops->report)
		m->ops->report(m, out, prefix, res);
}

int model_parse_option(struct model_config *cfg, const char *name,
		       const char *value, char *err, size_t errlen)
{
	(void)cfg; (void)name; (void)value; (void)err; (void)errlen;
	return 0;	/* no model options yet */
}

void model_usage(FILE *out)
{
	fprintf(out, "  --model=NAME            cache model [cachegrind]\n");
}
