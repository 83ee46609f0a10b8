/* The model registry and the dispatch wrappers.
 *
 * Geometry: a level given explicitly (size != 0) is checked and a bad one
 * is an error, never adjusted (as Cachegrind treats --I1/--D1/--LL).  A
 * level left at 0 comes from the host (cache_geom_host): sysfs, which is
 * right where it exists (DESIGN.md), else CPUID as Cachegrind itself
 * reads it, else Cachegrind's x86 defaults.  A host LL goes through
 * Cachegrind's maybe_tweak_LLc (with a note, like Cachegrind's warning), a
 * host I1/D1 the simulator cannot take is an error asking for --I1/--D1.
 * A source other than sysfs gets a note, and every model says its source
 * in geom_source, which the profile's desc: lines show. */
#include "model.h"
#include "models.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

struct cache_model_entry {
	const char *name;
	struct cache_model *(*create)(const struct model_config *cfg,
				      bool sim, char *err, size_t errlen);
};

static const struct cache_model_entry cache_models[] = {
	{ "cachegrind", cg_cache_new },	/* the default: first */
	{ "hier", hier_cache_new },
	{ "host", host_cache_new },
	{ "jaguar", jaguar_cache_new },
};

struct branch_model_entry {
	const char *name;
	struct branch_model *(*create)(const struct model_config *cfg,
				       char *err, size_t errlen);
};

static struct branch_model *cg_branch_create(const struct model_config *cfg,
					     char *err, size_t errlen)
{
	return cg_branch_new(err, errlen);
}

static const struct branch_model_entry branch_models[] = {
	{ "cachegrind", cg_branch_create },	/* the default: first */
	{ "tage", tage_branch_new },
};

#define N_BRANCH_MODELS (sizeof(branch_models) / sizeof(branch_models[0]))

#define N_CACHE_MODELS (sizeof(cache_models) / sizeof(cache_models[0]))

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

/* "--I1, --LL given, the rest from SOURCE" into BUF: where CFG's
 * geometry came from, GIVEN_* saying which levels were on the command
 * line. */
static void describe_source(char *buf, size_t len, bool given_i1,
			    bool given_d1, bool given_ll, const char *source)
{
	if (given_i1 && given_d1 && given_ll)
		snprintf(buf, len, CACHE_GEOM_GIVEN);
	else if (!given_i1 && !given_d1 && !given_ll)
		snprintf(buf, len, "%s", source);
	else
		snprintf(buf, len, "%s%s%s%s%s given, the rest from %s",
			 given_i1 ? "--I1" : "",
			 given_i1 && (given_d1 || given_ll) ? ", " : "",
			 given_d1 ? "--D1" : "",
			 given_d1 && given_ll ? ", " : "",
			 given_ll ? "--LL" : "", source);
}

/* Fill CFG's levels left at size 0 from the host (cache_geom_host's
 * chain), check all three, and say in SOURCE_DESC where they came from.
 * TELL: the model simulates this geometry (or the host's own levels,
 * which come from the same chain), so a source other than sysfs and an
 * adjusted LL are worth a note. */
static int fill_geometry(struct model_config *cfg, bool tell,
			 char *source_desc, size_t desclen,
			 char *err, size_t errlen, char *note, size_t notelen)
{
	struct cache_geom host_i1, host_d1, host_ll;
	const char *bad, *source = CACHE_GEOM_GIVEN;
	bool given_i1 = cfg->i1.size, given_d1 = cfg->d1.size;
	bool given_ll = cfg->ll.size;

	if (!given_i1 || !given_d1 || !given_ll) {
		const char *dir = host_sysfs_cache_dir();
		char skipped[160];
		int rc = cache_geom_probe(dir, host_cpuid_fn(), NULL, &host_i1,
					  &host_d1, &host_ll, &source, skipped,
					  sizeof(skipped));

		if (tell && strcmp(source, CACHE_GEOM_SYSFS)) {
			const char *forced = dir ? "" :
				" (CACHETRACE_HOST=sysfs-cache=no)";

			if (rc == 0)
				note_add(note, notelen, "no cache information "
					 "in " CACHE_GEOM_SYSFS "%s: the caches "
					 "are from %s", forced, source);
			else
				note_add(note, notelen, "no cache information "
					 "in " CACHE_GEOM_SYSFS "%s nor in CPUID: "
					 "using Cachegrind's defaults I1 "
					 "32768,8,64 D1 32768,8,64 LL "
					 "8388608,16,64", forced);
			if (skipped[0])
				note_add(note, notelen, "%s", skipped);
		}
		if (!given_ll && rc == 0) {
			struct cache_geom old = host_ll;

			if (cache_geom_tweak_ll(&host_ll) && tell)
				note_add(note, notelen, "host LL cache %" PRIu64
					 " B, %" PRIu32 " B, %" PRIu32 "-way "
					 "simulated as %" PRIu64 " B, %" PRIu32
					 " B, %" PRIu32 "-way (a power-of-two "
					 "set count, as Cachegrind)", old.size,
					 old.line, old.assoc, host_ll.size,
					 host_ll.line, host_ll.assoc);
		}
	}
	describe_source(source_desc, desclen, given_i1, given_d1, given_ll,
			source);

	if (!given_i1) {
		cfg->i1 = host_i1;
		if ((bad = cache_geom_check("host I1 cache", &cfg->i1, err, errlen)))
			goto host_bad;
	}
	if (!given_d1) {
		cfg->d1 = host_d1;
		if ((bad = cache_geom_check("host D1 cache", &cfg->d1, err, errlen)))
			goto host_bad;
	}
	if (!given_ll) {
		cfg->ll = host_ll;
		if ((bad = cache_geom_check("host LL cache", &cfg->ll, err, errlen)))
			goto host_bad;
	}
	if ((bad = cache_geom_check("I1 cache", &cfg->i1, err, errlen)) ||
	    (bad = cache_geom_check("D1 cache", &cfg->d1, err, errlen)) ||
	    (bad = cache_geom_check("LL cache", &cfg->ll, err, errlen)))
		return MODEL_ERR_USAGE;
	return 0;

host_bad:
	{
		size_t used = strlen(err);

		snprintf(err + used, errlen - used, " (from %s; give its "
			 "geometry with --I1/--D1/--LL)", source);
	}
	return MODEL_ERR_HOST;
}

/* "PREFIX: " before the message in ERR. */
static void err_prefix(char *err, size_t errlen, const char *prefix)
{
	size_t n = strlen(prefix) + 2, len = strlen(err);

	if (errlen < n + 1)
		return;
	if (n + len + 1 > errlen)
		len = errlen > n + 1 ? errlen - n - 1 : 0;
	memmove(err + n, err, len);
	memcpy(err, prefix, n - 2);
	memcpy(err + n - 2, ": ", 2);
	err[n + len] = '\0';
}

static const struct cache_model_entry *find_cache_model(const char *name)
{
	for (size_t i = 0; i < N_CACHE_MODELS; i++)
		if (!strcmp(cache_models[i].name, name))
			return &cache_models[i];
	return NULL;
}

static const struct branch_model_entry *find_branch_model(const char *name)
{
	for (size_t i = 0; i < N_BRANCH_MODELS; i++)
		if (!strcmp(branch_models[i].name, name))
			return &branch_models[i];
	return NULL;
}

/* Does model E simulate levels of its own rather than I1/D1/LL?  jaguar
 * and host do, hier with --cache; none with the caches off. */
static bool has_own_levels(const struct cache_model_entry *e,
			   const struct model_config *cfg)
{
	return cfg->cache_sim && (!strcmp(e->name, "jaguar") ||
		!strcmp(e->name, "host") ||
		(!strcmp(e->name, "hier") && model_option(cfg, "cache")));
}

int model_check(const char *model_name, const struct model_config *cfg,
		char *err, size_t errlen)
{
	const char *bname = cfg->branch_model ? cfg->branch_model :
		branch_models[0].name;
	const struct cache_model_entry *e;
	const struct branch_model_entry *be;

	if (!model_name)
		model_name = cache_models[0].name;
	e = find_cache_model(model_name);
	if (!e) {
		size_t used = (size_t)snprintf(err, errlen,
			"--model: unknown cache model '%.40s' (known:",
			model_name);

		for (size_t i = 0; i < N_CACHE_MODELS && used < errlen; i++)
			used += (size_t)snprintf(err + used, errlen - used,
						 " %s", cache_models[i].name);
		if (used < errlen)
			snprintf(err + used, errlen - used, ")");
		return -1;
	}
	be = find_branch_model(bname);
	if (!be) {
		snprintf(err, errlen, "--branch-model: unknown branch model "
			 "'%.40s' (known: cachegrind tage)", bname);
		return -1;
	}
	if (model_option(cfg, "cache") && strcmp(e->name, "hier")) {
		snprintf(err, errlen, "--cache is an option of --model=hier");
		return -1;
	}
	if (model_option(cfg, "nt-bypass") && !strcmp(e->name, "cachegrind")) {
		snprintf(err, errlen, "--nt-bypass is an option of --model=hier, "
			 "host and jaguar");
		return -1;
	}
	if (model_option(cfg, "branch-opts") && strcmp(be->name, "tage")) {
		snprintf(err, errlen, "--branch-opts is an option of "
			 "--branch-model=tage");
		return -1;
	}
	/* A geometry the model would not use is a mistake, not a wish to
	 * ignore silently (issue 26: --I1 with --model=hier --cache=...). */
	if (has_own_levels(e, cfg) &&
	    (cfg->i1.size || cfg->d1.size || cfg->ll.size)) {
		const char *opt = cfg->i1.size ? "--I1" :
				  cfg->d1.size ? "--D1" : "--LL";

		snprintf(err, errlen, "%s: --model=%s%s simulates %s, not "
			 "I1/D1/LL: %s", opt, e->name,
			 strcmp(e->name, "hier") ? "" : " with --cache",
			 !strcmp(e->name, "hier") ? "the levels of --cache" :
			 !strcmp(e->name, "host") ? "this host's own levels" :
			 "its own levels",
			 !strcmp(e->name, "hier") ? "give the level's geometry "
			 "in --cache" : "leave out --I1, --D1 and --LL");
		return -1;
	}
	return 0;
}

int model_create(const char *model_name, struct model_config *cfg,
		 struct cache_model **cm, struct branch_model **bm,
		 char *err, size_t errlen, char *note, size_t notelen)
{
	const struct cache_model_entry *e;
	const struct branch_model_entry *be;
	char source[sizeof((*cm)->geom_source)];
	bool own_levels;
	int rc;

	*cm = NULL;
	*bm = NULL;
	if (note && notelen)
		note[0] = '\0';
	if (model_check(model_name, cfg, err, errlen) < 0)
		return MODEL_ERR_USAGE;
	e = find_cache_model(model_name ? model_name : cache_models[0].name);
	be = find_branch_model(cfg->branch_model ? cfg->branch_model :
			       branch_models[0].name);
	/* jaguar's levels are its own, hier's with --cache given; the
	 * others simulate I1/D1/LL or the host's levels. */
	own_levels = has_own_levels(e, cfg) && strcmp(e->name, "host");
	rc = fill_geometry(cfg, !own_levels, source, sizeof(source), err,
			   errlen, note, notelen);
	if (rc < 0)
		return rc;
	*cm = e->create(cfg, cfg->cache_sim, err, errlen);
	if (!*cm) {
		/* host: what the host gave; else what was given, said with
		 * the option first. */
		if (!strcmp(e->name, "host"))
			return MODEL_ERR_HOST;
		if (err[0] != '-')
			err_prefix(err, errlen, model_option(cfg, "cache") ?
				   "--cache" : !strcmp(e->name, "jaguar") ?
				   "--cores" : "--model");
		return MODEL_ERR_USAGE;
	}
	/* A model that knows better (host) has said it already. */
	if (!(*cm)->geom_source[0])
		snprintf((*cm)->geom_source, sizeof((*cm)->geom_source), "%s",
			 !own_levels ? source : !strcmp(e->name, "jaguar") ?
			 "the jaguar model's own" : "given (--cache)");
	if (cfg->branch_sim) {
		*bm = be->create(cfg, err, errlen);
		if (!*bm) {
			cache_destroy(*cm);
			*cm = NULL;
			if (err[0] != '-')
				err_prefix(err, errlen, "--branch-opts");
			return MODEL_ERR_USAGE;
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

void cache_flush(struct cache_model *m)
{
	if (m && m->ops->flush)
		m->ops->flush(m);
}

void cache_begin_sample(struct cache_model *m, const struct sample_mem *mem)
{
	if (m && m->ops->begin_sample)
		m->ops->begin_sample(m, mem);
}

void branch_flush(struct branch_model *m)
{
	if (m && m->ops->flush)
		m->ops->flush(m);
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

const char *model_option(const struct model_config *cfg, const char *name)
{
	for (unsigned i = cfg->n_opts; i-- > 0;)
		if (!strcmp(cfg->opt_names[i], name))
			return cfg->opt_values[i];
	return NULL;
}

bool model_option_bool(const struct model_config *cfg, const char *name,
		       bool def)
{
	const char *v = model_option(cfg, name);

	return v ? !strcmp(v, "yes") : def;
}

const char *const model_option_names[] = {
	"cache", "nt-bypass", "branch-opts", NULL,
};

/* The model options: each value checked now, so a typo is a usage error
 * before the target starts. */
int model_parse_option(struct model_config *cfg, const char *name,
		       const char *value, char *err, size_t errlen)
{
	if (!strcmp(name, "cache")) {
		struct hier_level_spec levels[16];
		unsigned n;

		if (hier_parse_spec(value, levels, 16, &n, err, errlen) < 0)
			return -1;
	} else if (!strcmp(name, "nt-bypass")) {
		if (strcmp(value, "yes") && strcmp(value, "no")) {
			snprintf(err, errlen, "yes or no, not '%.40s'", value);
			return -1;
		}
	} else if (!strcmp(name, "branch-opts")) {
		if (tage_parse_opts(value, NULL, err, errlen) < 0)
			return -1;
	} else {
		return 0;
	}
	if (cfg->n_opts == sizeof(cfg->opt_names) / sizeof(cfg->opt_names[0])) {
		snprintf(err, errlen, "too many model options");
		return -1;
	}
	cfg->opt_names[cfg->n_opts] = strdup(name);
	cfg->opt_values[cfg->n_opts] = strdup(value);
	if (!cfg->opt_names[cfg->n_opts] || !cfg->opt_values[cfg->n_opts]) {
		free(cfg->opt_names[cfg->n_opts]);
		free(cfg->opt_values[cfg->n_opts]);
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	cfg->n_opts++;
	return 1;
}

void model_config_free_options(struct model_config *cfg)
{
	for (unsigned i = 0; i < cfg->n_opts; i++) {
		free(cfg->opt_names[i]);
		free(cfg->opt_values[i]);
		cfg->opt_names[i] = cfg->opt_values[i] = NULL;
	}
	cfg->n_opts = 0;
}

void model_usage(FILE *out)
{
	fputs(
"  --model=NAME            cache model: cachegrind hier host jaguar\n"
"                          [cachegrind]; branch models: cachegrind tage\n"
"  --cache=LEVEL,...       hier's levels, core outwards; LEVEL is\n"
"                          NAME:SIZE:ASSOC:LINE[:FLAG...], SIZE with k/M/G,\n"
"                          FLAGs: i d u (side; default from the name: *I/I1\n"
"                          instruction, *D/D1 data), incl excl nine [nine],\n"
"                          lru plru fifo rand [lru], wb wt [wb], wa nwa [wa],\n"
"                          pf=none|next|stride [none], share=N|all (cores per\n"
"                          instance) [1; the last level all], seed=N (rand)\n"
"                          e.g. L1I:32k:8:64,L1D:32k:8:64,L2:1M:8:64,L3:32M:16:64\n"
"                          [I1:<I1>:i,D1:<D1>:d,LL:<LL>: Cachegrind's]\n"
"  --nt-bypass=yes|no      hier/host/jaguar: non-temporal stores bypass the\n"
"                          caches [no]\n"
"  --branch-opts=KEY=N,... tage's sizes: tables=N (tagged tables, 1-8) [4],\n"
"                          bits=N (log2 entries per table) [10], base=N\n"
"                          (log2 bimodal entries) [14], minhist=N [4],\n"
"                          maxhist=N (up to 256) [128], tagbits=N [9],\n"
"                          btb=N (entries per indirect table) [4096], ras=N\n"
"                          (return stack entries) [32]\n"
"                          (docs/models.md describes every model and event)\n",
		out);
}
