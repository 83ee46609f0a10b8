/* Cache geometry: parsing --I1/--D1/--LL values, checking them as
 * Cachegrind's cg_arch.c check_cache does, reading the host's caches from
 * sysfs, the host's chain (sysfs, else CPUID through cpuid_cache.c, else
 * Cachegrind's defaults), and Cachegrind's LL "tweak" for hosts whose last
 * level has a set count that is not a power of two.
 *
 * Limits follow Cachegrind, which keeps these numbers in an Int: a given
 * value above INT32_MAX is "too large" rather than silently wrapped. */
#include "model.h"
#include "models.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "hostenv.h"

#define SYSFS_CACHE_DIR CACHE_GEOM_SYSFS
#define MIN_LINE_SIZE 16	/* smaller lets one insn straddle 3 lines */
#define MAX_CACHE_INDEX 64

static bool is_pow2(uint64_t x)
{
	return x && !(x & (x - 1));
}

/* Parse one decimal field ending at END_CH; 0 ok, -1 junk, -2 too large. */
static int parse_field(const char **sp, char end_ch, uint64_t *out)
{
	const char *s = *sp;
	uint64_t v = 0;

	if (*s < '0' || *s > '9')
		return -1;
	for (; *s >= '0' && *s <= '9'; s++) {
		v = v * 10 + (uint64_t)(*s - '0');
		if (v > INT32_MAX) {
			while (*s >= '0' && *s <= '9')
				s++;
			*sp = s;
			return *s == end_ch ? -2 : -1;
		}
	}
	if (*s != end_ch)
		return -1;
	*sp = s + (end_ch ? 1 : 0);
	*out = v;
	return 0;
}

int cache_geom_parse(const char *s, struct cache_geom *g, char *err,
		     size_t errlen)
{
	static const char *const field_names[3] = {
		"size", "associativity", "line size"
	};
	static const char end_chars[3] = { ',', ',', '\0' };
	const char *p = s;
	uint64_t v[3];

	for (int i = 0; i < 3; i++) {
		int r = parse_field(&p, end_chars[i], &v[i]);

		if (r == -1) {
			snprintf(err, errlen, "bad cache geometry '%.40s': "
				 "expected size,assoc,line_size (e.g. 32768,8,64)",
				 s);
			return -1;
		}
		if (r == -2) {
			snprintf(err, errlen, "bad cache geometry '%.40s': "
				 "%s is too large", s, field_names[i]);
			return -1;
		}
		if (v[i] == 0) {
			snprintf(err, errlen, "bad cache geometry '%.40s': "
				 "%s must not be 0", s, field_names[i]);
			return -1;
		}
	}
	g->size = v[0];
	g->assoc = (uint32_t)v[1];
	g->line = (uint32_t)v[2];
	return 0;
}

const char *cache_geom_check(const char *name, const struct cache_geom *g,
			     char *err, size_t errlen)
{
	uint64_t lines, sets;

	if (!is_pow2(g->line)) {
		snprintf(err, errlen, "%s: line size %" PRIu32
			 " is not a power of two", name, g->line);
		return err;
	}
	if (g->line < MIN_LINE_SIZE) {
		snprintf(err, errlen, "%s: line size %" PRIu32
			 " is smaller than %d bytes", name, g->line,
			 MIN_LINE_SIZE);
		return err;
	}
	if (g->assoc < 1) {
		snprintf(err, errlen, "%s: associativity must be at least 1",
			 name);
		return err;
	}
	/* Cachegrind rejects size <= line size too (one line, one set). */
	if (g->size <= g->line) {
		snprintf(err, errlen, "%s: size %" PRIu64
			 " is not larger than the line size %" PRIu32,
			 name, g->size, g->line);
		return err;
	}
	lines = g->size / g->line;
	if (g->assoc > lines) {
		snprintf(err, errlen, "%s: associativity %" PRIu32
			 " exceeds the number of lines %" PRIu64,
			 name, g->assoc, lines);
		return err;
	}
	if (g->size % ((uint64_t)g->line * g->assoc)) {
		snprintf(err, errlen, "%s: size %" PRIu64
			 " is not a multiple of line size * associativity %" PRIu64,
			 name, g->size, (uint64_t)g->line * g->assoc);
		return err;
	}
	sets = lines / g->assoc;
	if (!is_pow2(sets)) {
		snprintf(err, errlen, "%s: set count %" PRIu64
			 " is not a power of two", name, sets);
		return err;
	}
	return NULL;
}

/* Largest power of two <= x (x > 0). */
static uint64_t floor_pow2(uint64_t x)
{
	while (x & (x - 1))
		x &= x - 1;
	return x;
}

/* cg_arch.c's maybe_tweak_LLc, rule for rule: with S = size/(line*assoc)
 * sets (integer division), a power-of-two S only trims the size to
 * line*assoc*S; otherwise S' = the power of two below S, assoc' =
 * (int)(0.5 + (double)S/S' * assoc) and size' = line*assoc'*S'.  The double
 * arithmetic is Cachegrind's: keep it, it decides the rounding.  E.g. 300 MB,
 * 20-way, 64 B: 245760 sets -> 131072 sets, 38-way, 318767104 B. */
bool cache_geom_tweak_ll(struct cache_geom *g)
{
	uint64_t sets, new_sets, new_size;
	uint32_t new_assoc = g->assoc;

	if (!g->size || !g->assoc || !g->line)
		return false;
	sets = g->size / ((uint64_t)g->assoc * g->line);
	if (!sets)
		return false;
	if (is_pow2(sets)) {
		new_sets = sets;
	} else {
		double factor;

		new_sets = floor_pow2(sets);
		factor = (double)sets / (double)new_sets;
		new_assoc = (uint32_t)(0.5 + factor * (double)g->assoc);
	}
	new_size = (uint64_t)g->line * new_assoc * new_sets;
	if (new_size == g->size && new_assoc == g->assoc)
		return false;
	g->size = new_size;
	g->assoc = new_assoc;
	return true;
}

/* Read the first line of DIR/indexN/NAME into BUF without the newline. */
int sysfs_cache_attr(const char *dir, unsigned idx, const char *name,
		     char *buf, size_t len)
{
	char path[512];
	FILE *f;
	bool ok;

	snprintf(path, sizeof(path), "%s/index%u/%s", dir, idx, name);
	f = fopen(path, "re");
	if (!f)
		return -1;
	ok = fgets(buf, (int)len, f) != NULL;
	fclose(f);
	if (!ok)
		return -1;
	buf[strcspn(buf, "\n")] = '\0';
	return 0;
}

/* "48K", "2048K", "300M", "64": a number with an optional binary suffix. */
static int parse_sysfs_size(const char *s, uint64_t *out)
{
	uint64_t v = 0, mult = 1;

	if (*s < '0' || *s > '9')
		return -1;
	for (; *s >= '0' && *s <= '9'; s++) {
		if (v > UINT64_MAX / 10 - 9)
			return -1;
		v = v * 10 + (uint64_t)(*s - '0');
	}
	switch (*s) {
	case 'K': mult = 1ULL << 10; s++; break;
	case 'M': mult = 1ULL << 20; s++; break;
	case 'G': mult = 1ULL << 30; s++; break;
	default: break;
	}
	if (*s || v > UINT64_MAX / mult)
		return -1;
	*out = v * mult;
	return 0;
}

int sysfs_cache_num(const char *dir, unsigned idx, const char *name,
		    uint64_t *out)
{
	char buf[64];

	if (sysfs_cache_attr(dir, idx, name, buf, sizeof(buf)) < 0)
		return -1;
	return parse_sysfs_size(buf, out);
}

int cache_geom_pick(const struct hier_level_spec *lv, const unsigned *level_of,
		    unsigned n, struct cache_geom *i1, struct cache_geom *d1,
		    struct cache_geom *ll)
{
	struct cache_geom gi = { 0 }, gd = { 0 }, gl = { 0 };
	unsigned ll_level = 0;
	bool ll_unified = false;

	for (unsigned k = 0; k < n; k++) {
		struct cache_geom g = { lv[k].size, lv[k].assoc, lv[k].line };
		bool unified = lv[k].side == 2;

		if (level_of[k] == 1) {
			if (lv[k].side != 1)
				gi = g;
			if (lv[k].side != 0)
				gd = g;
		} else if (lv[k].side != 0 && (level_of[k] > ll_level ||
			   (level_of[k] == ll_level && unified &&
			    !ll_unified))) {
			/* The last level; at equal levels prefer unified. */
			gl = g;
			ll_level = level_of[k];
			ll_unified = unified;
		}
	}
	if (!gi.size || !gd.size || !gl.size)
		return -1;
	*i1 = gi;
	*d1 = gd;
	*ll = gl;
	return 0;
}

int cache_geom_from_dir(const char *dir, struct cache_geom *i1,
			struct cache_geom *d1, struct cache_geom *ll)
{
	struct hier_level_spec lv[MAX_CACHE_INDEX];
	unsigned level_of[MAX_CACHE_INDEX], n = 0;

	for (unsigned idx = 0; idx < MAX_CACHE_INDEX; idx++) {
		char type[32];
		uint64_t level, size, ways, line;

		if (sysfs_cache_attr(dir, idx, "type", type, sizeof(type)) < 0)
			continue;
		if (sysfs_cache_num(dir, idx, "level", &level) < 0 ||
		    sysfs_cache_num(dir, idx, "size", &size) < 0 ||
		    sysfs_cache_num(dir, idx, "ways_of_associativity", &ways) < 0 ||
		    sysfs_cache_num(dir, idx, "coherency_line_size", &line) < 0)
			return -1;
		if (!line || line > UINT32_MAX || size < line)
			return -1;
		/* The kernel reports 0 ways for a fully associative cache. */
		if (!ways)
			ways = size / line;
		if (ways > UINT32_MAX || level > UINT32_MAX)
			return -1;
		if (strcmp(type, "Instruction") && strcmp(type, "Data") &&
		    strcmp(type, "Unified"))
			continue;
		lv[n] = (struct hier_level_spec){
			.size = size, .assoc = (uint32_t)ways,
			.line = (uint32_t)line,
			.side = !strcmp(type, "Instruction") ? 0 :
				!strcmp(type, "Data") ? 1 : 2,
		};
		level_of[n++] = (unsigned)level;
	}
	return cache_geom_pick(lv, level_of, n, i1, d1, ll);
}

int cache_geom_from_sysfs(struct cache_geom *i1, struct cache_geom *d1,
			  struct cache_geom *ll)
{
	return cache_geom_from_dir(SYSFS_CACHE_DIR, i1, d1, ll);
}

/* Cachegrind's defaults when it cannot detect the caches (cg_arch.c). */
static const struct cache_geom default_i1 = { 32768, 8, 64 };
static const struct cache_geom default_d1 = { 32768, 8, 64 };
static const struct cache_geom default_ll = { 8388608, 16, 64 };

int cache_geom_probe(const char *dir, cpuid_fn *cpuid, void *ctx,
		     struct cache_geom *i1, struct cache_geom *d1,
		     struct cache_geom *ll, const char **source,
		     char *skipped, size_t skippedlen)
{
	struct cpuid_caches c;

	if (skipped && skippedlen)
		skipped[0] = '\0';
	if (dir && cache_geom_from_dir(dir, i1, d1, ll) == 0) {
		*source = CACHE_GEOM_SYSFS;
		return 0;
	}
	if (cpuid && cpuid_cache_read(cpuid, ctx, &c) &&
	    cpuid_cache_geoms(&c, i1, d1, ll) == 0) {
		*source = c.source;
		if (skipped && skippedlen)
			snprintf(skipped, skippedlen, "%s", c.skipped);
		return 0;
	}
	*i1 = default_i1;
	*d1 = default_d1;
	*ll = default_ll;
	*source = CACHE_GEOM_DEFAULTS;
	return 1;
}

const char *host_sysfs_cache_dir(void)
{
	return host_forced("sysfs-cache", "no") ? NULL : SYSFS_CACHE_DIR;
}

cpuid_fn *host_cpuid_fn(void)
{
	return host_forced("cpuid-cache", "no") ? NULL : cpuid_host;
}

int cache_geom_host(struct cache_geom *i1, struct cache_geom *d1,
		    struct cache_geom *ll, const char **source)
{
	const char *src;
	int rc = cache_geom_probe(host_sysfs_cache_dir(), host_cpuid_fn(),
				  NULL, i1, d1, ll, &src, NULL, 0);

	if (source)
		*source = src;
	return rc;
}

const char *cache_geom_source(const struct cache_model *m)
{
	return m ? m->geom_source : "";
}
