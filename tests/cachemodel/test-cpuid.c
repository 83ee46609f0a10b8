/* The CPUID cache reader (cpuid_cache.c) on recorded leaf tables, and the
 * host chain (/sys, else CPUID, else Cachegrind's defaults) with every
 * probe given, so nothing here depends on the machine's caches.  Each
 * expected value is worked by hand from the encodings in the comments
 * (Intel SDM leaf 4; AMD APM 0x8000001D, 0x80000005, 0x80000006). */
#include "fakesys.h"
#include "model.h"
#include "models.h"

#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "hostenv.h"
#include "testutil.h"

struct leaf {
	uint32_t leaf, sub;
	uint32_t r[4];		/* EAX EBX ECX EDX */
};

/* A recorded table, ended by a leaf of 0xffffffff; leaves it lacks read
 * as zeros (a subleaf past the last cache is type 0). */
static void fake_cpuid(uint32_t leaf, uint32_t sub, uint32_t out[4],
		       void *ctx)
{
	const struct leaf *t = ctx;

	memset(out, 0, 4 * sizeof(*out));
	for (; t->leaf != 0xffffffff; t++)
		if (t->leaf == leaf && t->sub == sub) {
			memcpy(out, t->r, 4 * sizeof(*out));
			return;
		}
}

#define END { 0xffffffff, 0, { 0, 0, 0, 0 } }
/* Leaf 0: the highest basic leaf, then the vendor in EBX EDX ECX. */
#define INTEL(max) { 0, 0, { max, 0x756e6547, 0x6c65746e, 0x49656e69 } }
#define AMD(max) { 0, 0, { max, 0x68747541, 0x444d4163, 0x69746e65 } }
#define HYGON(max) { 0, 0, { max, 0x6f677948, 0x656e6975, 0x6e65476e } }

/* A Skylake-SP Xeon (leaf 4 as such a CPU gives it):
 * subleaf 0 EAX 0x7c004121: type 1 data, level 1 (0x20), self-init
 *   (0x100), EAX[25:14] = 1 -> shared by 2; EBX 0x01c0003f: ways 7+1 = 8,
 *   partitions 0+1, line 63+1 = 64; ECX 63 -> 64 sets: 8*1*64*64 = 32768.
 * subleaf 1 EAX 0x7c004122: type 2 instruction, level 1, the same sizes.
 * subleaf 2 EAX 0x7c004143: unified level 2, shared by 2; EBX 0x03c0003f:
 *   16 ways, 64 B; ECX 0x3ff -> 1024 sets: 16*64*1024 = 1048576.
 * subleaf 3 EAX 0x7c0fc163: unified level 3, EAX[25:14] = 63 -> 64;
 *   EBX 0x0280003f: 11 ways, 64 B; ECX 0xbfff -> 49152 sets (not a power
 *   of two): 11*64*49152 = 34603008 (33 MiB).
 * subleaf 4: type 0, the end. */
static const struct leaf xeon[] = {
	INTEL(0x16),
	{ 4, 0, { 0x7c004121, 0x01c0003f, 0x0000003f, 0 } },
	{ 4, 1, { 0x7c004122, 0x01c0003f, 0x0000003f, 0 } },
	{ 4, 2, { 0x7c004143, 0x03c0003f, 0x000003ff, 0 } },
	{ 4, 3, { 0x7c0fc163, 0x0280003f, 0x0000bfff, 4 } },
	END
};

/* A Zen 3 EPYC: 0x80000000 EAX 0x80000023; 0x80000001 ECX 0x75c237ff has
 * bit 22 (TopologyExtensions).  0x8000001D:
 * subleaf 0 EAX 0x4121: data, level 1, EAX[25:14] = 1 -> shared by 2;
 *   EBX 0x01c0003f: 8 ways, 64 B; ECX 63: 8*64*64 = 32768.
 * subleaf 1 EAX 0x4122: instruction, level 1, the same sizes.
 * subleaf 2 EAX 0x4143: unified level 2, by 2; EBX 0x01c0003f: 8 ways;
 *   ECX 0x3ff -> 1024 sets: 8*64*1024 = 524288.
 * subleaf 3 EAX 0x3c163: unified level 3, EAX[25:14] = 15 -> by 16;
 *   EBX 0x03c0003f: 16 ways; ECX 0x7fff -> 32768 sets: 33554432.
 * 0x80000005/6 as the same CPU gives them, which the reader must not use
 * here: L1 32 KiB 8-way, L2 512 KiB code 6, L3 code 9. */
#define ZEN3_LEAVES(feat_ecx) \
	{ 0x80000000, 0, { 0x80000023, 0x68747541, 0x444d4163, 0x69746e65 } }, \
	{ 0x80000001, 0, { 0x00a00f11, 0x40000000, feat_ecx, 0x2fd3fbff } }, \
	{ 0x80000005, 0, { 0xff40ff40, 0xff40ff40, 0x20080140, 0x20080140 } }, \
	{ 0x80000006, 0, { 0x48002200, 0x68004200, 0x02006140, 0x01009140 } }
#define ZEN3_1D \
	{ 0x8000001d, 0, { 0x00004121, 0x01c0003f, 0x0000003f, 0 } }, \
	{ 0x8000001d, 1, { 0x00004122, 0x01c0003f, 0x0000003f, 0 } }, \
	{ 0x8000001d, 2, { 0x00004143, 0x01c0003f, 0x000003ff, 2 } }, \
	{ 0x8000001d, 3, { 0x0003c163, 0x03c0003f, 0x00007fff, 1 } }
static const struct leaf zen3[] = {
	AMD(0x10), ZEN3_LEAVES(0x75c237ff), ZEN3_1D, END
};
static const struct leaf hygon[] = {
	HYGON(0xd), ZEN3_LEAVES(0x75c237ff), ZEN3_1D, END
};
/* The same CPU under a hypervisor that hides TopologyExtensions
 * (0x80000001 ECX 0x75c237ff & ~(1 << 22) = 0x758237ff), and one that
 * shows the bit but leaves 0x8000001D empty: both fall back to
 * 0x80000005/6.  0x80000005 ECX/EDX 0x20080140: 32 KiB, 8-way, 1 line per
 * tag, 64 B.  0x80000006 ECX 0x02006140: 0x0200 = 512 KiB, code 6 ->
 * 8-way, 64 B; EDX 0x01009140: 0x01009140 >> 18 = 64 -> 32 MiB, code 9
 * ("see leaf 0x8000001D"): L3 left out, LL is the L2. */
static const struct leaf zen3_hidden[] = {
	AMD(0x10), ZEN3_LEAVES(0x758237ff), ZEN3_1D, END
};
static const struct leaf zen3_empty_1d[] = {
	AMD(0x10), ZEN3_LEAVES(0x75c237ff), END
};

/* Recorded on the AMD EPYC VM of DESIGN.md ("Hypervisor detected: PVM",
 * no /sys cache directory): 0x80000001 ECX 0x440001f1 lacks bit 22, and
 * 0x8000001D is empty anyway.  0x80000005 ECX 0x300c0140: L1d 0x30 = 48
 * KiB, 0x0c = 12-way, 64 B; EDX 0x20080140: L1i 32 KiB, 8-way, 64 B.
 * 0x80000006 ECX 0x04006140: L2 0x0400 = 1024 KiB, code 6 -> 8-way, 64 B;
 * EDX 0x0fe09140: 0x0fe09140 >> 18 = 1016 -> 508 MiB, code 9: left out.
 * Valgrind 3.19's Cachegrind there: I1 32768 B 8-way, D1 49152 B 12-way
 * (ours agree) and LL 536870912 B 2-way (code 9 read as direct-mapped,
 * 508 MiB then tweaked; ours is the L2). */
static const struct leaf pvm_epyc[] = {
	AMD(0xd),
	{ 0x80000000, 0, { 0x80000021, 0x68747541, 0x444d4163, 0x69746e65 } },
	{ 0x80000001, 0, { 0x00b00f21, 0x40000000, 0x440001f1, 0x25d3fbff } },
	{ 0x80000005, 0, { 0xff60ff40, 0xff60ff40, 0x300c0140, 0x20080140 } },
	{ 0x80000006, 0, { 0x40802040, 0x60804040, 0x04006140, 0x0fe09140 } },
	END
};

/* A family 10h Opteron: no 0x8000001D (0x80000000 EAX 0x8000001b,
 * 0x80000001 ECX 0x000037ff without bit 22).  0x80000005 ECX/EDX
 * 0x40020140: 0x40 = 64 KiB, 2-way, 64 B.  0x80000006 ECX 0x02008140: 512
 * KiB, code 8 -> 16-way, 64 B; EDX 0x0030b140: 0x0030b140 >> 18 = 12 -> 12
 * * 512 KiB = 6 MiB = 6291456, code 0xB -> 48-way, 64 B, shared by all. */
static const struct leaf k10[] = {
	AMD(0x5),
	{ 0x80000000, 0, { 0x8000001b, 0x68747541, 0x444d4163, 0x69746e65 } },
	{ 0x80000001, 0, { 0x00100f42, 0x10000000, 0x000037ff, 0xefd3fbff } },
	{ 0x80000005, 0, { 0xff30ff10, 0xff30ff20, 0x40020140, 0x40020140 } },
	{ 0x80000006, 0, { 0x20800000, 0x42004200, 0x02008140, 0x0030b140 } },
	END
};

/* Odd encodings: a fully associative L1i (0x80000005 EDX 0x20ff0140: 32
 * KiB, assoc 0xFF, 64 B -> 32768/64 = 512 ways), an L2 of code 7
 * (reserved: left out) and no L3 (EDX 0). */
static const struct leaf odd_amd[] = {
	AMD(0x1),
	{ 0x80000000, 0, { 0x80000008, 0, 0, 0 } },
	{ 0x80000005, 0, { 0, 0, 0x20080140, 0x20ff0140 } },
	{ 0x80000006, 0, { 0, 0, 0x02007140, 0 } },
	END
};

/* No cache information: an Intel whose highest basic leaf is 2; an Intel
 * whose leaf 4 is empty; another vendor; an AMD without 0x80000006. */
static const struct leaf intel_old[] = {
	INTEL(0x2), { 4, 0, { 0x7c004121, 0x01c0003f, 0x3f, 0 } }, END
};
static const struct leaf intel_empty4[] = { INTEL(0xd), END };
static const struct leaf via[] = {
	{ 0, 0, { 0xd, 0x20414956, 0x20414956, 0x20414956 } },
	{ 4, 0, { 0x7c004121, 0x01c0003f, 0x3f, 0 } }, END
};
static const struct leaf amd_short[] = {
	AMD(0x1),
	{ 0x80000000, 0, { 0x80000004, 0, 0, 0 } },
	{ 0x80000005, 0, { 0, 0, 0x20080140, 0x20080140 } },
	END
};

static void check_level(const struct hier_level_spec *s, const char *name,
			uint8_t side, uint64_t size, uint32_t assoc,
			uint32_t line, unsigned share)
{
	CHECK_STR(s->name, name);
	CHECK_U64(s->side, side);
	CHECK_U64(s->size, size);
	CHECK_U64(s->assoc, assoc);
	CHECK_U64(s->line, line);
	CHECK(s->share_given);
	CHECK_U64(s->share, share);
}

static void check_geom(const struct cache_geom *g, uint64_t size,
		       uint32_t assoc, uint32_t line)
{
	CHECK_U64(g->size, size);
	CHECK_U64(g->assoc, assoc);
	CHECK_U64(g->line, line);
}

static void test_intel_leaf4(void)
{
	struct cpuid_caches c;
	struct cache_geom i1, d1, ll;
	struct hier_level_spec lv[16];
	const char *src = NULL;
	char err[256] = "";

	CHECK_U64(cpuid_cache_read(fake_cpuid, (void *)xeon, &c), 4);
	CHECK_STR(c.source, "CPUID leaf 4");
	check_level(&c.levels[0], "L1I", 0, 32768, 8, 64, 2);
	check_level(&c.levels[1], "L1D", 1, 32768, 8, 64, 2);
	check_level(&c.levels[2], "L2", 2, 1048576, 16, 64, 2);
	check_level(&c.levels[3], "L3", 2, 34603008, 11, 64, 64);
	CHECK_STR(c.skipped, "");
	CHECK(cpuid_cache_geoms(&c, &i1, &d1, &ll) == 0);
	check_geom(&i1, 32768, 8, 64);
	check_geom(&d1, 32768, 8, 64);
	check_geom(&ll, 34603008, 11, 64);	/* as CPUID says: no tweak */

	/* The host model's levels: L3's 49152 sets become 32768, the ways
	 * (int)(0.5 + 49152/32768 * 11) = 17, the size 64*17*32768. */
	CHECK(host_levels_probe(NULL, fake_cpuid, (void *)xeon, lv, 16, &src,
				err, sizeof(err)) == 4, "%s", err);
	CHECK_STR(src, "CPUID leaf 4");
	check_level(&lv[3], "L3", 2, 35651584, 17, 64, 64);
	check_level(&lv[2], "L2", 2, 1048576, 16, 64, 2);
}

static void test_amd_1d(void)
{
	struct cpuid_caches c;
	struct cache_geom i1, d1, ll;

	CHECK_U64(cpuid_cache_read(fake_cpuid, (void *)zen3, &c), 4);
	CHECK_STR(c.source, "CPUID leaf 0x8000001D");
	check_level(&c.levels[0], "L1I", 0, 32768, 8, 64, 2);
	check_level(&c.levels[1], "L1D", 1, 32768, 8, 64, 2);
	check_level(&c.levels[2], "L2", 2, 524288, 8, 64, 2);
	check_level(&c.levels[3], "L3", 2, 33554432, 16, 64, 16);
	CHECK(cpuid_cache_geoms(&c, &i1, &d1, &ll) == 0);
	check_geom(&ll, 33554432, 16, 64);

	/* Hygon is read as AMD. */
	CHECK_U64(cpuid_cache_read(fake_cpuid, (void *)hygon, &c), 4);
	CHECK_STR(c.source, "CPUID leaf 0x8000001D");
	check_level(&c.levels[3], "L3", 2, 33554432, 16, 64, 16);
}

static void test_amd_legacy(void)
{
	const struct leaf *const zen_fallbacks[] = { zen3_hidden,
						      zen3_empty_1d };
	struct cpuid_caches c;
	struct cache_geom i1, d1, ll;

	for (int k = 0; k < 2; k++) {
		CHECK_U64(cpuid_cache_read(fake_cpuid, (void *)zen_fallbacks[k],
					   &c), 3);
		CHECK_STR(c.source, "CPUID 0x80000005/6");
		check_level(&c.levels[0], "L1I", 0, 32768, 8, 64, 1);
		check_level(&c.levels[1], "L1D", 1, 32768, 8, 64, 1);
		check_level(&c.levels[2], "L2", 2, 524288, 8, 64, 1);
		CHECK_STR(c.skipped, "CPUID 0x80000006 gives the L3 "
			  "associativity as code 9 (see leaf 0x8000001D, which "
			  "this CPU lacks): L3 left out");
	}

	/* This machine's own table: I1 and D1 as Cachegrind's. */
	CHECK_U64(cpuid_cache_read(fake_cpuid, (void *)pvm_epyc, &c), 3);
	CHECK_STR(c.source, "CPUID 0x80000005/6");
	CHECK(cpuid_cache_geoms(&c, &i1, &d1, &ll) == 0);
	check_geom(&i1, 32768, 8, 64);
	check_geom(&d1, 49152, 12, 64);
	check_geom(&ll, 1048576, 8, 64);
	CHECK(strstr(c.skipped, "code 9") != NULL, "%s", c.skipped);

	CHECK_U64(cpuid_cache_read(fake_cpuid, (void *)k10, &c), 4);
	CHECK_STR(c.source, "CPUID 0x80000005/6");
	check_level(&c.levels[0], "L1I", 0, 65536, 2, 64, 1);
	check_level(&c.levels[1], "L1D", 1, 65536, 2, 64, 1);
	check_level(&c.levels[2], "L2", 2, 524288, 16, 64, 1);
	check_level(&c.levels[3], "L3", 2, 6291456, 48, 64, 0);
	CHECK_STR(c.skipped, "");
	CHECK(cpuid_cache_geoms(&c, &i1, &d1, &ll) == 0);
	check_geom(&ll, 6291456, 48, 64);

	/* Fully associative L1i, a reserved L2 code, no L3: no LL. */
	CHECK_U64(cpuid_cache_read(fake_cpuid, (void *)odd_amd, &c), 2);
	check_level(&c.levels[0], "L1I", 0, 32768, 512, 64, 1);
	check_level(&c.levels[1], "L1D", 1, 32768, 8, 64, 1);
	CHECK_STR(c.skipped, "CPUID 0x80000006 gives the L2 associativity "
		  "as code 7 (reserved): L2 left out");
	CHECK(cpuid_cache_geoms(&c, &i1, &d1, &ll) == -1);
}

static void test_no_cache_leaves(void)
{
	const struct leaf *const none[] = { intel_old, intel_empty4, via,
					     amd_short };
	struct cpuid_caches c;

	for (size_t k = 0; k < sizeof(none) / sizeof(none[0]); k++) {
		struct cache_geom i1, d1, ll;
		struct hier_level_spec lv[16];
		const char *src = "unset";
		char err[256] = "";

		CHECK_U64(cpuid_cache_read(fake_cpuid, (void *)none[k], &c), 0);
		CHECK(c.source == NULL);
		/* The chain ends at Cachegrind's defaults. */
		CHECK(cache_geom_probe(NULL, fake_cpuid, (void *)none[k], &i1,
				       &d1, &ll, &src, NULL, 0) == 1);
		CHECK_STR(src, CACHE_GEOM_DEFAULTS);
		check_geom(&i1, 32768, 8, 64);
		check_geom(&d1, 32768, 8, 64);
		check_geom(&ll, 8388608, 16, 64);
		/* The host model has no defaults: an error naming both. */
		CHECK(host_levels_probe(NULL, fake_cpuid, (void *)none[k], lv,
					16, &src, err, sizeof(err)) == -1);
		CHECK_STR(err, "no cache information in "
			  "/sys/devices/system/cpu/cpu0/cache nor in CPUID: "
			  "give --model=hier --cache=LEVEL,...");
	}
}

static char dir[64];

static void put(unsigned idx, const char *name, const char *val)
{
	fakesys_put(dir, idx, name, val);
}

static void put_cache(unsigned idx, const char *level, const char *type,
		      const char *size, const char *ways)
{
	put(idx, "level", level);
	put(idx, "type", type);
	put(idx, "size", size);
	put(idx, "ways_of_associativity", ways);
	put(idx, "coherency_line_size", "64");
	put(idx, "shared_cpu_list", "0-1");
}

/* /sys first, CPUID when /sys has nothing, defaults when neither. */
static void test_chain(void)
{
	struct cache_geom i1, d1, ll;
	struct hier_level_spec lv[16];
	const char *src = NULL;
	char err[256] = "", cmd[128];

	snprintf(dir, sizeof(dir), "/tmp/ct-cpuid-XXXXXX");
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		exit(1);
	}
	/* An empty directory: no cache information, on to CPUID. */
	CHECK(cache_geom_probe(dir, fake_cpuid, (void *)pvm_epyc, &i1, &d1,
			       &ll, &src, err, sizeof(err)) == 0);
	CHECK_STR(src, "CPUID 0x80000005/6");
	check_geom(&d1, 49152, 12, 64);
	CHECK(strstr(err, "L3 left out") != NULL, "%s", err);
	CHECK(host_levels_probe(dir, fake_cpuid, (void *)zen3, lv, 16, &src,
				err, sizeof(err)) == 4, "%s", err);
	CHECK_STR(src, "CPUID leaf 0x8000001D");

	put_cache(0, "1", "Data", "48K", "12");
	put_cache(1, "1", "Instruction", "32K", "8");
	put_cache(2, "2", "Unified", "1024K", "16");
	CHECK(cache_geom_probe(dir, fake_cpuid, (void *)xeon, &i1, &d1, &ll,
			       &src, err, sizeof(err)) == 0);
	CHECK_STR(src, CACHE_GEOM_SYSFS);
	CHECK_STR(err, "");
	check_geom(&d1, 49152, 12, 64);
	check_geom(&ll, 1048576, 16, 64);
	CHECK(host_levels_probe(dir, fake_cpuid, (void *)xeon, lv, 16, &src,
				err, sizeof(err)) == 3, "%s", err);
	CHECK_STR(src, CACHE_GEOM_SYSFS);
	check_level(&lv[2], "L2", 2, 1048576, 16, 64, 2);
	/* /sys skipped (sysfs-cache=no): CPUID. */
	CHECK(cache_geom_probe(NULL, fake_cpuid, (void *)xeon, &i1, &d1, &ll,
			       &src, NULL, 0) == 0);
	CHECK_STR(src, "CPUID leaf 4");
	/* Both skipped: the defaults. */
	CHECK(cache_geom_probe(NULL, NULL, NULL, &i1, &d1, &ll, &src, NULL,
			       0) == 1);
	CHECK_STR(src, CACHE_GEOM_DEFAULTS);

	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "cannot remove %s\n", dir);
}

/* CACHETRACE_HOST through the real entry points: with both probes forced
 * off every host gives the defaults; the registry says so in the note and
 * in the model's geometry source, and explicit levels are "given". */
static void test_forced(void)
{
	struct model_config cfg = { .cache_sim = true, .branch_sim = false };
	struct cache_model *cm;
	struct branch_model *bm;
	struct cache_geom i1, d1, ll;
	const char *src = NULL;
	char err[256], note[640];

	setenv("CACHETRACE_HOST", "sysfs-cache=no,cpuid-cache=no", 1);
	CHECK(cache_geom_host(&i1, &d1, &ll, &src) == 1);
	CHECK_STR(src, CACHE_GEOM_DEFAULTS);
	CHECK(model_create(NULL, &cfg, &cm, &bm, err, sizeof(err), note,
			   sizeof(note)) == 0, "%s", err);
	CHECK_STR(note, "no cache information in "
		  "/sys/devices/system/cpu/cpu0/cache (CACHETRACE_HOST="
		  "sysfs-cache=no) nor in CPUID: using Cachegrind's defaults "
		  "I1 32768,8,64 D1 32768,8,64 LL 8388608,16,64");
	CHECK_STR(cache_geom_source(cm), "Cachegrind's defaults");
	cache_destroy(cm);

	cfg = (struct model_config){ .ll = { 1048576, 16, 64 },
				     .cache_sim = true };
	CHECK(model_create(NULL, &cfg, &cm, &bm, err, sizeof(err), note,
			   sizeof(note)) == 0, "%s", err);
	CHECK_STR(cache_geom_source(cm), "--LL given, the rest from "
		  "Cachegrind's defaults");
	cache_destroy(cm);

	cfg = (struct model_config){ .i1 = { 32768, 8, 64 },
				     .d1 = { 32768, 8, 64 },
				     .ll = { 1048576, 16, 64 },
				     .cache_sim = true };
	CHECK(model_create(NULL, &cfg, &cm, &bm, err, sizeof(err), note,
			   sizeof(note)) == 0, "%s", err);
	CHECK_STR(note, "");
	CHECK_STR(cache_geom_source(cm), "given");
	cache_destroy(cm);

	/* The host model has nothing to build from. */
	cfg = (struct model_config){ .cache_sim = true };
	CHECK(model_create("host", &cfg, &cm, &bm, err, sizeof(err), note,
			   sizeof(note)) == MODEL_ERR_HOST);
	CHECK_STR(err, "no cache information in "
		  "/sys/devices/system/cpu/cpu0/cache nor in CPUID: give "
		  "--model=hier --cache=LEVEL,...");

	/* jaguar's levels are its own: no note about the host. */
	cfg = (struct model_config){ .cache_sim = true };
	CHECK(model_create("jaguar", &cfg, &cm, &bm, err, sizeof(err), note,
			   sizeof(note)) == 0, "%s", err);
	CHECK_STR(note, "");
	CHECK_STR(cache_geom_source(cm), "the jaguar model's own");
	cache_destroy(cm);
	unsetenv("CACHETRACE_HOST");
}

int main(void)
{
	test_intel_leaf4();
	test_amd_1d();
	test_amd_legacy();
	test_no_cache_leaves();
	test_chain();
	test_forced();
	return test_summary("test-cpuid");
}
