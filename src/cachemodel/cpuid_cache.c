/* The host's caches as CPUID describes them: the source after
 * /sys/devices/system/cpu/cpu0/cache, which some hosts lack (DESIGN.md,
 * "Hosts differ").  The reader takes the cpuid instruction as a function,
 * so the unit tests feed it leaf tables recorded on real CPUs.
 *
 * Rules:
 * - Vendor from leaf 0 (EBX EDX ECX): "GenuineIntel" reads leaf 4;
 *   "AuthenticAMD" and "HygonGenuine" (Zen-derived) read the AMD leaves;
 *   any other vendor describes no cache here.
 * - Intel leaf 4 (Intel SDM vol. 2A, CPUID, "Deterministic Cache
 *   Parameters Leaf"), subleaves 0, 1, ... until type 0: EAX[4:0] type
 *   (1 data, 2 instruction, 3 unified), EAX[7:5] level, EAX[9] fully
 *   associative, EAX[25:14] + 1 logical processors sharing the cache;
 *   EBX[31:22] + 1 ways, EBX[21:12] + 1 partitions, EBX[11:0] + 1 line
 *   size, ECX + 1 sets; size = ways * partitions * line * sets.  Needs
 *   leaf 0's EAX (the highest basic leaf) >= 4.
 * - AMD leaf 0x8000001D (AMD APM vol. 3, "Cache Topology Information"):
 *   the same fields as leaf 4 (EAX[25:14] + 1 is NumSharingCache), read
 *   when 0x80000000's EAX reaches it and 0x80000001 ECX bit 22
 *   (TopologyExtensions) says it exists, and used when its subleaf 0
 *   names a cache (hypervisors set the bit and leave the leaf empty).
 * - Else AMD 0x80000005 and 0x80000006 (AMD APM vol. 3, "L1 Cache and TLB
 *   Information", "L2 Cache and TLB and L3 Cache Information"), needing
 *   0x80000000's EAX >= 0x80000006: 0x80000005 ECX is L1 data, EDX L1
 *   instruction, each size KiB [31:24], associativity [23:16] (0xFF fully
 *   associative, 0 reserved), line size [7:0]; 0x80000006 ECX is L2 with
 *   size KiB [31:16], 0x80000006 EDX is L3 with size in 512 KiB units
 *   [31:18], both with an associativity code [15:12] and line size
 *   [7:0].  The code, per the APM's table: 1 direct-mapped, 2 2-way, 3
 *   3-way, 4 4-way, 5 6-way, 6 8-way, 8 16-way, 0xA 32-way, 0xB 48-way,
 *   0xC 64-way, 0xD 96-way, 0xE 128-way, 0xF fully associative; 0 means no
 *   such cache, 7 is reserved and 9 means "see leaf 0x8000001D": such a
 *   level is left out (Cachegrind's m_cache.c simulates it direct-mapped,
 *   which is how it gets a 2-way 512 MiB LL on the AMD VM of DESIGN.md),
 *   and the reader says so in `skipped`.  These leaves say nothing of
 *   sharing: L1 and L2 are per core (share 1), L3 is shared by all.
 * - Fully associative means ways = size / line.  Sizes are as CPUID says
 *   them: making a set count a power of two (Cachegrind's LL tweak) is the
 *   caller's business, with its note.
 * - Levels come sorted by level, then instruction, data, unified; names
 *   as host.c gives them: L1I, L1D, L2, L3 (L2D, L2I for split levels). */
#include "model.h"
#include "models.h"

#include <cpuid.h>
#include <stdio.h>
#include <string.h>

/* A CPU lists a handful of caches; a table that never ends is broken. */
#define MAX_SUBLEAVES 32

enum cpuid_vendor { VENDOR_OTHER, VENDOR_INTEL, VENDOR_AMD };

void cpuid_host(uint32_t leaf, uint32_t subleaf, uint32_t out[4], void *ctx)
{
	unsigned a = 0, b = 0, c = 0, d = 0;

	(void)ctx;
	__cpuid_count(leaf, subleaf, a, b, c, d);
	out[0] = a;
	out[1] = b;
	out[2] = c;
	out[3] = d;
}

static enum cpuid_vendor vendor_of(const uint32_t r[4])
{
	char v[13];

	memcpy(v, &r[1], 4);
	memcpy(v + 4, &r[3], 4);
	memcpy(v + 8, &r[2], 4);
	v[12] = '\0';
	if (!strcmp(v, "GenuineIntel"))
		return VENDOR_INTEL;
	if (!strcmp(v, "AuthenticAMD") || !strcmp(v, "HygonGenuine"))
		return VENDOR_AMD;
	return VENDOR_OTHER;
}

/* Insert one level, keeping the order of the rules; false when full. */
static bool add_level(struct cpuid_caches *c, unsigned level, uint8_t side,
		      uint64_t size, uint32_t assoc, uint32_t line,
		      unsigned share)
{
	struct hier_level_spec s = { 0 };
	unsigned j;

	if (c->n_levels == CPUID_MAX_LEVELS)
		return false;
	s.size = size;
	s.assoc = assoc;
	s.line = line;
	s.side = side;
	s.share_given = true;
	s.share = share;
	snprintf(s.name, sizeof(s.name), "L%u%s", level,
		 side == 0 ? "I" : side == 1 ? "D" : "");
	for (j = c->n_levels; j > 0 && (c->level_of[j - 1] > level ||
		     (c->level_of[j - 1] == level &&
		      c->levels[j - 1].side > side)); j--) {
		c->levels[j] = c->levels[j - 1];
		c->level_of[j] = c->level_of[j - 1];
	}
	c->levels[j] = s;
	c->level_of[j] = level;
	c->n_levels++;
	return true;
}

/* Leaf 4 or 0x8000001D: one subleaf per cache, until type 0. */
static void read_deterministic(cpuid_fn *cpuid, void *ctx, uint32_t leaf,
			       struct cpuid_caches *c)
{
	for (uint32_t sub = 0; sub < MAX_SUBLEAVES; sub++) {
		uint32_t r[4] = { 0 };
		unsigned type, level, share;
		uint64_t ways, parts, line, sets, size;

		cpuid(leaf, sub, r, ctx);
		type = r[0] & 0x1f;
		if (!type)
			break;
		if (type > 3)
			continue;	/* reserved types */
		level = (r[0] >> 5) & 7;
		share = ((r[0] >> 14) & 0xfff) + 1;
		ways = (r[1] >> 22) + 1;
		parts = ((r[1] >> 12) & 0x3ff) + 1;
		line = (r[1] & 0xfff) + 1;
		sets = (uint64_t)r[2] + 1;
		size = ways * parts * line * sets;
		if (!level)
			continue;
		if (r[0] & (1u << 9))
			ways = size / line;
		if (ways > UINT32_MAX)
			continue;
		/* type 1 data -> side 1, 2 instruction -> 0, 3 unified -> 2 */
		if (!add_level(c, level, type == 1 ? 1 : type == 2 ? 0 : 2, size,
			       (uint32_t)ways, (uint32_t)line, share))
			break;
	}
}

/* The ways of an L2/L3 associativity code of 0x80000006; 0 for "no such
 * cache", reserved codes and 9 ("see leaf 0x8000001D"); ~0u for fully
 * associative. */
static uint32_t amd_l2l3_ways(unsigned code)
{
	static const uint32_t ways[16] = {
		[1] = 1, [2] = 2, [3] = 3, [4] = 4, [5] = 6, [6] = 8,
		[8] = 16, [0xA] = 32, [0xB] = 48, [0xC] = 64, [0xD] = 96,
		[0xE] = 128, [0xF] = ~0u,
	};

	return ways[code & 0xf];
}

/* One cache of 0x80000005/6: SIZE bytes, WAYS (~0u: fully associative),
 * LINE bytes; an empty one is left out. */
static void add_legacy(struct cpuid_caches *c, unsigned level, uint8_t side,
		       uint64_t size, uint32_t ways, uint32_t line,
		       unsigned share)
{
	if (!size || !ways || !line)
		return;
	if (ways == ~0u)
		ways = (uint32_t)(size / line);
	add_level(c, level, side, size, ways, line, share);
}

/* Why a cache of 0x80000006 is left out, for the caller's note. */
static void note_skipped(struct cpuid_caches *c, const char *name,
			 unsigned code)
{
	snprintf(c->skipped, sizeof(c->skipped), "CPUID 0x80000006 gives "
		 "the %s associativity as code %u (%s): %s left out", name,
		 code, code == 9 ? "see leaf 0x8000001D, which this CPU lacks" :
		 "reserved", name);
}

static void read_amd_legacy(cpuid_fn *cpuid, void *ctx,
			    struct cpuid_caches *c)
{
	uint32_t l1[4] = { 0 }, l23[4] = { 0 };
	unsigned l2code, l3code;
	uint64_t l3size;

	cpuid(0x80000005, 0, l1, ctx);
	cpuid(0x80000006, 0, l23, ctx);
	for (int i = 0; i < 2; i++) {	/* ECX data, EDX instruction */
		uint32_t r = l1[2 + i], assoc = (r >> 16) & 0xff;

		add_legacy(c, 1, i ? 0 : 1, (uint64_t)(r >> 24) << 10,
			   assoc == 0xff ? ~0u : assoc, r & 0xff, 1);
	}
	l2code = (l23[2] >> 12) & 0xf;
	add_legacy(c, 2, 2, (uint64_t)(l23[2] >> 16) << 10,
		   amd_l2l3_ways(l2code), l23[2] & 0xff, 1);
	l3code = (l23[3] >> 12) & 0xf;
	l3size = (uint64_t)(l23[3] >> 18) << 19;
	add_legacy(c, 3, 2, l3size, amd_l2l3_ways(l3code), l23[3] & 0xff, 0);
	if (l2code == 7 || l2code == 9)
		note_skipped(c, "L2", l2code);
	else if (l3size && (l3code == 7 || l3code == 9))
		note_skipped(c, "L3", l3code);
}

unsigned cpuid_cache_read(cpuid_fn *cpuid, void *ctx, struct cpuid_caches *c)
{
	uint32_t r[4] = { 0 }, ext[4] = { 0 }, feat[4] = { 0 };
	enum cpuid_vendor vendor;

	memset(c, 0, sizeof(*c));
	cpuid(0, 0, r, ctx);
	vendor = vendor_of(r);
	if (vendor == VENDOR_INTEL) {
		if (r[0] >= 4)
			read_deterministic(cpuid, ctx, 4, c);
		if (c->n_levels)
			c->source = "CPUID leaf 4";
		return c->n_levels;
	}
	if (vendor != VENDOR_AMD)
		return 0;
	cpuid(0x80000000, 0, ext, ctx);
	if (ext[0] >= 0x80000001)
		cpuid(0x80000001, 0, feat, ctx);
	if (ext[0] >= 0x8000001D && ext[0] <= 0x8000ffff &&
	    (feat[2] & (1u << 22))) {
		read_deterministic(cpuid, ctx, 0x8000001D, c);
		if (c->n_levels) {
			c->source = "CPUID leaf 0x8000001D";
			return c->n_levels;
		}
	}
	if (ext[0] >= 0x80000006 && ext[0] <= 0x8000ffff) {
		read_amd_legacy(cpuid, ctx, c);
		if (c->n_levels)
			c->source = "CPUID 0x80000005/6";
	}
	if (!c->n_levels)	/* nothing read: nothing worth a note either */
		c->skipped[0] = '\0';
	return c->n_levels;
}

int cpuid_cache_geoms(const struct cpuid_caches *c, struct cache_geom *i1,
		      struct cache_geom *d1, struct cache_geom *ll)
{
	return cache_geom_pick(c->levels, c->level_of, c->n_levels, i1, d1,
			       ll);
}
