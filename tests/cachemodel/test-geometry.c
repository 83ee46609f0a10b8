/* Geometry: parsing, checking (each message), sysfs reading from a fake
 * directory, and Cachegrind's LL tweak (cg_arch.c maybe_tweak_LLc). */
#include "fakesys.h"
#include "model.h"
#include "models.h"

#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "testutil.h"

static void parse_ok(const char *s, uint64_t size, uint32_t assoc,
		     uint32_t line)
{
	struct cache_geom g = { 0 };
	char err[256] = "";

	if (cache_geom_parse(s, &g, err, sizeof(err)) < 0) {
		fprintf(stderr, "parse '%s' failed: %s\n", s, err);
		test_failures++;
		return;
	}
	CHECK_U64(g.size, size);
	CHECK_U64(g.assoc, assoc);
	CHECK_U64(g.line, line);
}

static void parse_bad(const char *s, const char *want)
{
	struct cache_geom g = { 1, 1, 1 };
	char err[256] = "";

	CHECK(cache_geom_parse(s, &g, err, sizeof(err)) == -1);
	CHECK_STR(err, want);
	CHECK(strchr(err, '\n') == NULL);
	CHECK(g.size == 1 && g.assoc == 1 && g.line == 1);	/* untouched */
}

#define SYNTAX(s) "bad cache geometry '" s "': expected size,assoc,line_size " \
	"(e.g. 32768,8,64)"

static void test_parse(void)
{
	parse_ok("32768,8,64", 32768, 8, 64);
	parse_ok("318767104,38,64", 318767104, 38, 64);
	parse_ok("2147483647,1,16", 2147483647, 1, 16);

	parse_bad("", SYNTAX(""));
	parse_bad("32768", SYNTAX("32768"));
	parse_bad("32768,8", SYNTAX("32768,8"));
	parse_bad("32768,8,", SYNTAX("32768,8,"));
	parse_bad("32768,8,64,", SYNTAX("32768,8,64,"));
	parse_bad("32768,8,64x", SYNTAX("32768,8,64x"));
	parse_bad("32k,8,64", SYNTAX("32k,8,64"));
	parse_bad("a,8,64", SYNTAX("a,8,64"));
	parse_bad("-1,8,64", SYNTAX("-1,8,64"));
	parse_bad(" 32768,8,64", SYNTAX(" 32768,8,64"));
	parse_bad("32768,,64", SYNTAX("32768,,64"));
	parse_bad("0,8,64",
		  "bad cache geometry '0,8,64': size must not be 0");
	parse_bad("32768,0,64",
		  "bad cache geometry '32768,0,64': associativity must not be 0");
	parse_bad("32768,8,0",
		  "bad cache geometry '32768,8,0': line size must not be 0");
	parse_bad("2147483648,8,64",
		  "bad cache geometry '2147483648,8,64': size is too large");
	parse_bad("32768,99999999999999999999999,64",
		  "bad cache geometry '32768,99999999999999999999999,64': "
		  "associativity is too large");
	parse_bad("32768,8,4294967360",
		  "bad cache geometry '32768,8,4294967360': line size is too large");
}

static void check_ok(uint64_t size, uint32_t assoc, uint32_t line)
{
	struct cache_geom g = { size, assoc, line };
	char err[256] = "";
	const char *msg = cache_geom_check("D1 cache", &g, err, sizeof(err));

	if (msg) {
		fprintf(stderr, "check %" PRIu64 ",%u,%u: %s\n", size, assoc,
			line, msg);
		test_failures++;
	}
}

static void check_bad(const char *name, uint64_t size, uint32_t assoc,
		      uint32_t line, const char *want)
{
	struct cache_geom g = { size, assoc, line };
	char err[256] = "";

	CHECK_STR(cache_geom_check(name, &g, err, sizeof(err)), want);
}

static void test_check(void)
{
	check_ok(32768, 8, 64);
	check_ok(49152, 12, 64);	/* 64 sets: assoc need not be 2^n */
	check_ok(318767104, 38, 64);
	check_ok(1024, 1, 64);
	check_ok(1024, 16, 64);		/* fully associative: one set */
	check_ok(128, 1, 64);		/* two lines */

	check_bad("I1 cache", 98304, 1, 64,
		  "I1 cache: set count 1536 is not a power of two");
	check_bad("LL cache", 314572800, 20, 64,
		  "LL cache: set count 245760 is not a power of two");
	check_bad("D1 cache", 32768, 8, 48,
		  "D1 cache: line size 48 is not a power of two");
	check_bad("D1 cache", 32768, 8, 8,
		  "D1 cache: line size 8 is smaller than 16 bytes");
	check_bad("D1 cache", 32768, 0, 64,
		  "D1 cache: associativity must be at least 1");
	check_bad("D1 cache", 1024, 32, 64,
		  "D1 cache: associativity 32 exceeds the number of lines 16");
	check_bad("D1 cache", 32768, 3, 64,
		  "D1 cache: size 32768 is not a multiple of line size * "
		  "associativity 192");
	check_bad("LL cache", 64, 1, 64,
		  "LL cache: size 64 is not larger than the line size 64");
	check_bad("LL cache", 0, 1, 64,
		  "LL cache: size 0 is not larger than the line size 64");
}

static void test_tweak(void)
{
	/* This machine's L3: 300 MB, 20-way, 64 B.  245760 sets -> 131072,
	 * factor 1.875, assoc (int)(0.5 + 37.5) = 38, size 64*38*131072;
	 * valgrind 3.19 here says "simulated LL cache: line_size 64 assoc 38
	 * total_size 318,767,104". */
	struct cache_geom g = { 314572800, 20, 64 };

	CHECK(cache_geom_tweak_ll(&g));
	CHECK_U64(g.size, 318767104);
	CHECK_U64(g.assoc, 38);
	CHECK_U64(g.line, 64);

	/* cg_arch.c's own examples: 12 MB 16-way -> 8192 sets, 24-way, same
	 * size; 5 MB 48-way -> 1706 sets (integer division) -> 1024, assoc
	 * (int)(0.5 + 1.666015625 * 48) = 80, 5242880 B. */
	g = (struct cache_geom){ 12582912, 16, 64 };
	CHECK(cache_geom_tweak_ll(&g));
	CHECK_U64(g.size, 12582912);
	CHECK_U64(g.assoc, 24);
	g = (struct cache_geom){ 5242880, 48, 64 };
	CHECK(cache_geom_tweak_ll(&g));
	CHECK_U64(g.assoc, 80);
	CHECK_U64(g.size, 5242880);

	/* A power-of-two set count: only the size is trimmed to fit. */
	g = (struct cache_geom){ 8388608, 16, 64 };
	CHECK(!cache_geom_tweak_ll(&g));
	CHECK_U64(g.size, 8388608);
	CHECK_U64(g.assoc, 16);
	g = (struct cache_geom){ 8388608 + 100, 16, 64 };
	CHECK(cache_geom_tweak_ll(&g));
	CHECK_U64(g.size, 8388608);
	CHECK_U64(g.assoc, 16);
}

static char tmpdir[64];

static void put(unsigned idx, const char *name, const char *val)
{
	fakesys_put(tmpdir, idx, name, val);
}

static void put_cache(unsigned idx, const char *level, const char *type,
		      const char *size, const char *ways, const char *line)
{
	put(idx, "level", level);
	put(idx, "type", type);
	put(idx, "size", size);
	put(idx, "ways_of_associativity", ways);
	put(idx, "coherency_line_size", line);
}

static void rm_tree(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	if (system(cmd) != 0)
		fprintf(stderr, "cannot remove %s\n", tmpdir);
}

static void fresh_dir(void)
{
	if (tmpdir[0])
		rm_tree();
	strcpy(tmpdir, "/tmp/ct-sysfs-XXXXXX");
	if (!mkdtemp(tmpdir)) {
		perror("mkdtemp");
		exit(1);
	}
}

static void test_sysfs(void)
{
	struct cache_geom i1, d1, ll;

	/* This machine's layout (index order as the kernel lists it). */
	fresh_dir();
	put_cache(0, "1", "Data", "48K", "12", "64");
	put_cache(1, "1", "Instruction", "32K", "8", "64");
	put_cache(2, "2", "Unified", "2048K", "16", "64");
	put_cache(3, "3", "Unified", "307200K", "20", "64");
	CHECK(cache_geom_from_dir(tmpdir, &i1, &d1, &ll) == 0);
	CHECK_U64(i1.size, 32768); CHECK_U64(i1.assoc, 8); CHECK_U64(i1.line, 64);
	CHECK_U64(d1.size, 49152); CHECK_U64(d1.assoc, 12); CHECK_U64(d1.line, 64);
	CHECK_U64(ll.size, 314572800); CHECK_U64(ll.assoc, 20);
	CHECK_U64(ll.line, 64);

	/* "300M" spelling; L2 listed after L3; the highest level wins. */
	fresh_dir();
	put_cache(0, "3", "Unified", "300M", "20", "64");
	put_cache(1, "1", "Instruction", "32K", "8", "64");
	put_cache(2, "1", "Data", "32K", "8", "64");
	put_cache(3, "2", "Unified", "1024K", "8", "64");
	CHECK(cache_geom_from_dir(tmpdir, &i1, &d1, &ll) == 0);
	CHECK_U64(ll.size, 314572800);
	CHECK_U64(d1.size, 32768);

	/* Two levels: LL is L2. */
	fresh_dir();
	put_cache(0, "1", "Data", "32K", "8", "64");
	put_cache(1, "1", "Instruction", "32K", "8", "64");
	put_cache(2, "2", "Unified", "1024K", "16", "64");
	CHECK(cache_geom_from_dir(tmpdir, &i1, &d1, &ll) == 0);
	CHECK_U64(ll.size, 1048576);
	CHECK_U64(ll.assoc, 16);

	/* No level above 1: no LL, an error. */
	fresh_dir();
	put_cache(0, "1", "Data", "32K", "8", "64");
	put_cache(1, "1", "Instruction", "32K", "8", "64");
	CHECK(cache_geom_from_dir(tmpdir, &i1, &d1, &ll) == -1);

	/* Junk in a size. */
	fresh_dir();
	put_cache(0, "1", "Data", "32Q", "8", "64");
	put_cache(1, "1", "Instruction", "32K", "8", "64");
	put_cache(2, "2", "Unified", "1024K", "16", "64");
	CHECK(cache_geom_from_dir(tmpdir, &i1, &d1, &ll) == -1);

	/* A missing attribute. */
	fresh_dir();
	put_cache(0, "1", "Data", "32K", "8", "64");
	put(1, "level", "1");
	put(1, "type", "Instruction");
	put(1, "size", "32K");
	put(1, "coherency_line_size", "64");
	put_cache(2, "2", "Unified", "1024K", "16", "64");
	CHECK(cache_geom_from_dir(tmpdir, &i1, &d1, &ll) == -1);

	rm_tree();
	CHECK(cache_geom_from_dir("/nonexistent/ct", &i1, &d1, &ll) == -1);
}

/* model_create's registry errors. */
static void test_registry(void)
{
	struct model_config cfg = {
		.i1 = { 32768, 8, 64 }, .d1 = { 32768, 8, 64 },
		.ll = { 8388608, 16, 64 }, .cache_sim = true, .branch_sim = true,
	};
	struct cache_model *cm = (void *)1;
	struct branch_model *bm = (void *)1;
	char err[256] = "", note[256] = "x";

	CHECK(model_create("lru-ideal", &cfg, &cm, &bm, err, sizeof(err),
			   note, sizeof(note)) == -1);
	CHECK_STR(err, "--model: unknown cache model 'lru-ideal' (known: cachegrind hier "
		 "host jaguar)");
	CHECK(cm == NULL && bm == NULL);

	/* Explicit geometry is checked, never adjusted. */
	cfg.ll = (struct cache_geom){ 314572800, 20, 64 };
	CHECK(model_create(NULL, &cfg, &cm, &bm, err, sizeof(err), note,
			   sizeof(note)) == -1);
	CHECK_STR(err, "LL cache: set count 245760 is not a power of two");
	CHECK(cm == NULL && bm == NULL);

	cfg.ll = (struct cache_geom){ 8388608, 16, 64 };
	cfg.i1 = (struct cache_geom){ 32768, 8, 32 };
	CHECK(model_create("cachegrind", &cfg, &cm, &bm, err, sizeof(err),
			   note, sizeof(note)) == 0);
	CHECK_STR(note, "");
	CHECK(cm && bm);
	CHECK_U64(cfg.i1.line, 32);
	cache_destroy(cm);
	branch_destroy(bm);
	cache_destroy(NULL);
	branch_destroy(NULL);
	cache_describe(NULL, stdout);
}

int main(void)
{
	test_parse();
	test_check();
	test_tweak();
	test_sysfs();
	test_registry();
	return test_summary("test-geometry");
}
