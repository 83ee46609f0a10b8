/* Differential test against valgrind 3.19's Cachegrind, without our tracer.
 *
 * 1. The desc: lines: Cachegrind's own I1/D1/LL lines (its detection),
 *    given back to us as explicit geometry, must be described exactly as
 *    Cachegrind writes them, with --cache-sim=yes and with --cache-sim=no.
 *    Nothing depends on the machine's caches: our host chain is printed
 *    beside Cachegrind's detection for the log, not compared (DESIGN.md:
 *    Cachegrind's LL is bogus on some hosts).
 * 2. Counts: cg-pattern.c's ct_kernel touches memory only through a
 *    pseudo-random pattern the test can recompute (loads, stores,
 *    read-modify-writes, 16-byte and 1-byte loads, unaligned so some
 *    straddle lines).  Its buffer is never touched before, so the lines
 *    already in the caches when it starts are never referenced again: they
 *    behave like the empty (zero) tags of a cold model.  Replaying the
 *    pattern into a fresh model must give Cachegrind's Dr, D1mr, DLmr, Dw,
 *    D1mw, DLmw for fn=ct_kernel exactly, for several D1 geometries.
 *
 * Usage: test-cg-oracle PATH/cg-pattern.c.  Fails without valgrind/cc. */
#include "model.h"

#include <stdlib.h>
#include <unistd.h>

#include "testutil.h"

enum { IR, I1MR, ILMR, DR, D1MR, DLMR, DW, D1MW, DLMW, N_EV };

static const char *const ev_names[N_EV] = {
	"Ir", "I1mr", "ILmr", "Dr", "D1mr", "DLmr", "Dw", "D1mw", "DLmw"
};

static char dir[64];

static int run(const char *cmd)
{
	int rc = system(cmd);

	if (rc != 0)
		fprintf(stderr, "command failed (%d): %s\n", rc, cmd);
	return rc;
}

/* The first three lines of FILE into BUF. */
static int read_desc(const char *file, char *buf, size_t len)
{
	FILE *f = fopen(file, "r");
	char line[512];
	size_t used = 0;

	if (!f)
		return -1;
	buf[0] = '\0';
	for (int i = 0; i < 3 && fgets(line, sizeof(line), f); i++)
		used += (size_t)snprintf(buf + used, len - used, "%s", line);
	fclose(f);
	return 0;
}

/* One "desc: NAME cache:   SIZE B, LINE B, N-way associative" (or
 * "direct-mapped") line of Cachegrind's into G; 0 or -1. */
static int parse_desc_line(const char *line, const char *name,
			   struct cache_geom *g)
{
	char want[32];
	unsigned long long size;
	unsigned line_size, assoc;
	int at = 0;

	snprintf(want, sizeof(want), "desc: %s cache:", name);
	if (strncmp(line, want, strlen(want)) ||
	    sscanf(line + strlen(want), " %llu B, %u B, %n", &size, &line_size,
		   &at) != 2 || !at)
		return -1;
	if (!strncmp(line + strlen(want) + at, "direct-mapped", 13))
		assoc = 1;
	else if (sscanf(line + strlen(want) + at, "%u-way", &assoc) != 1)
		return -1;
	*g = (struct cache_geom){ size, assoc, line_size };
	return 0;
}

/* The desc: lines, never depending on the machine's caches: Cachegrind
 * runs with its own detection, its I1/D1/LL lines are read back and given
 * to us explicitly, and our lines for that geometry must be Cachegrind's,
 * byte for byte, with --cache-sim=yes and no; explicit geometry makes no
 * note.  What our own host chain derives is printed beside Cachegrind's
 * for the log (it differs on some hosts: DESIGN.md). */
static void test_desc(const char *prog)
{
	char err[256], note[640], cmd[1024], want[1024], path[128];
	struct cache_geom i1, d1, ll;
	const char *source;

	for (int sim = 0; sim < 2; sim++) {
		struct model_config cfg = { .cache_sim = sim,
					    .branch_sim = false };
		struct cache_model *cm;
		struct branch_model *bm;
		char *ours = NULL, *nl1, *nl2;
		size_t len = 0;
		FILE *f;

		snprintf(path, sizeof(path), "%s/desc%d.out", dir, sim);
		snprintf(cmd, sizeof(cmd), "valgrind --tool=cachegrind "
			 "--cache-sim=%s --cachegrind-out-file=%s %s 1 1 1 "
			 ">/dev/null 2>%s/desc%d.err", sim ? "yes" : "no",
			 path, prog, dir, sim);
		if (run(cmd) || read_desc(path, want, sizeof(want)) < 0) {
			test_failures++;
			continue;
		}
		nl1 = strchr(want, '\n');
		nl2 = nl1 ? strchr(nl1 + 1, '\n') : NULL;
		if (!CHECK(nl2 && parse_desc_line(want, "I1", &cfg.i1) == 0 &&
			   parse_desc_line(nl1 + 1, "D1", &cfg.d1) == 0 &&
			   parse_desc_line(nl2 + 1, "LL", &cfg.ll) == 0,
			   "Cachegrind's desc lines:\n%s", want))
			continue;
		if (!CHECK(model_create(NULL, &cfg, &cm, &bm, err, sizeof(err),
					note, sizeof(note)) == 0, "%s", err))
			continue;
		CHECK_STR(note, "");
		CHECK_STR(cache_geom_source(cm), "given");
		f = open_memstream(&ours, &len);
		cache_describe(cm, f);
		fclose(f);
		cache_destroy(cm);
		if (strcmp(ours, want)) {
			fprintf(stderr, "desc lines (cache-sim=%s) differ:\n"
				"ours:\n%scachegrind:\n%s", sim ? "yes" : "no",
				ours, want);
			test_failures++;
		}
		if (sim) {
			cache_geom_host(&i1, &d1, &ll, &source);
			fprintf(stderr, "Cachegrind's own detection here:\n%s"
				"our host chain (%s): I1 %" PRIu64 ",%" PRIu32
				",%" PRIu32 " D1 %" PRIu64 ",%" PRIu32 ",%" PRIu32
				" LL %" PRIu64 ",%" PRIu32 ",%" PRIu32 "\n",
				want, source, i1.size, i1.assoc, i1.line,
				d1.size, d1.assoc, d1.line, ll.size, ll.assoc,
				ll.line);
		}
		free(ours);
	}
}

/* Sum the counts of fn=FN in a cachegrind.out into SUM (by event name). */
static int read_fn_counts(const char *file, const char *fn, uint64_t *sum)
{
	FILE *f = fopen(file, "r");
	char line[4096];
	int col_of[32];
	int ncols = 0;
	bool in_fn = false;

	if (!f)
		return -1;
	memset(sum, 0, N_EV * sizeof(*sum));
	while (fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = '\0';
		if (!strncmp(line, "events: ", 8)) {
			for (char *tok = strtok(line + 8, " "); tok && ncols < 32;
			     tok = strtok(NULL, " ")) {
				col_of[ncols] = -1;
				for (int e = 0; e < N_EV; e++)
					if (!strcmp(tok, ev_names[e]))
						col_of[ncols] = e;
				ncols++;
			}
		} else if (!strncmp(line, "fn=", 3)) {
			in_fn = !strcmp(line + 3, fn);
		} else if (!strncmp(line, "fl=", 3)) {
			in_fn = false;
		} else if (in_fn && line[0] >= '0' && line[0] <= '9') {
			char *p = line, *end;

			strtoull(p, &end, 10);	/* the line number */
			for (int c = 0; c < ncols; c++) {
				p = end;
				while (*p == ' ')
					p++;
				if (!*p)
					break;
				if (*p == '.') {
					end = p + 1;
					continue;
				}
				uint64_t v = strtoull(p, &end, 10);

				if (col_of[c] >= 0)
					sum[col_of[c]] += v;
			}
		}
	}
	fclose(f);
	return 0;
}

static void replay(struct cache_model *m, uint64_t base, long n,
		   uint64_t x, uint64_t mask, uint64_t *row)
{
	for (long i = 0; i < n; i++) {
		struct mem_access a;
		unsigned op;

		x = x * 6364136223846793005ULL + 1442695040888963407ULL;
		a.addr = base + ((x >> 33) & mask);
		op = (unsigned)(x >> 60);
		if (op < 4) {
			a.size = 8;
			a.kind = ACC_READ;
		} else if (op < 8) {
			a.size = 8;
			a.kind = ACC_WRITE;
		} else if (op < 10) {
			a.size = 8;
			a.kind = ACC_MODIFY;
		} else if (op < 12) {
			a.size = 16;
			a.kind = ACC_READ;
		} else {
			a.size = 1;
			a.kind = ACC_READ;
		}
		cache_access(m, &a, row);
	}
}

static void test_pattern(const char *prog, const char *d1, const char *ll,
			 long n, uint64_t seed, uint64_t mask)
{
	struct model_config cfg = { .cache_sim = true, .branch_sim = false };
	struct cache_model *cm;
	struct branch_model *bm;
	char err[256], note[512], cmd[1024], out[128];
	uint64_t want[N_EV], got[N_EV] = { 0 };
	unsigned long long base = 0;
	FILE *p;

	snprintf(out, sizeof(out), "%s/pat.out", dir);
	snprintf(cmd, sizeof(cmd), "valgrind --tool=cachegrind --cache-sim=yes "
		 "--I1=32768,8,64 --D1=%s --LL=%s --cachegrind-out-file=%s "
		 "%s %ld %#llx %#llx 2>%s/pat.err", d1, ll, out, prog, n,
		 (unsigned long long)seed, (unsigned long long)mask, dir);
	p = popen(cmd, "r");
	if (!p || fscanf(p, "%llx", &base) != 1) {
		fprintf(stderr, "no buffer address from: %s\n", cmd);
		test_failures++;
		if (p)
			pclose(p);
		return;
	}
	if (pclose(p) != 0 || read_fn_counts(out, "ct_kernel", want) < 0) {
		fprintf(stderr, "failed: %s\n", cmd);
		test_failures++;
		return;
	}

	if (cache_geom_parse("32768,8,64", &cfg.i1, err, sizeof(err)) < 0 ||
	    cache_geom_parse(d1, &cfg.d1, err, sizeof(err)) < 0 ||
	    cache_geom_parse(ll, &cfg.ll, err, sizeof(err)) < 0 ||
	    model_create(NULL, &cfg, &cm, &bm, err, sizeof(err), note,
			 sizeof(note)) < 0) {
		fprintf(stderr, "%s\n", err);
		test_failures++;
		return;
	}
	replay(cm, base, n, seed, mask, got);
	cache_destroy(cm);

	CHECK_U64(want[DR] + want[DW], (uint64_t)n);	/* sanity */
	for (int e = DR; e < N_EV; e++) {
		if (got[e] != want[e]) {
			fprintf(stderr, "D1 %s LL %s: %s ours %" PRIu64
				", cachegrind %" PRIu64 "\n", d1, ll,
				ev_names[e], got[e], want[e]);
			test_failures++;
		}
	}
}

int main(int argc, char **argv)
{
	char prog[128], cmd[512];

	if (argc != 2) {
		fprintf(stderr, "usage: %s cg-pattern.c\n", argv[0]);
		return 1;
	}
	if (system("valgrind --version >/dev/null 2>&1") != 0 ||
	    system("cc --version >/dev/null 2>&1") != 0) {
		/* installed by tests/install-deps.sh: missing is a failure */
		fprintf(stderr, "valgrind or cc not available\n");
		return 1;
	}
	strcpy(dir, "/tmp/ct-cg-oracle-XXXXXX");
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	snprintf(prog, sizeof(prog), "%s/cg-pattern", dir);
	snprintf(cmd, sizeof(cmd), "cc -O2 -g -no-pie -o %s '%s'", prog,
		 argv[1]);
	if (run(cmd))
		return 1;

	test_desc(prog);
	/* 2-way, direct-mapped, 3-way (odd associativity) D1s on 64 KiB;
	 * a small 4-way LL so LL replacement matters too, on 16 KiB. */
	test_pattern(prog, "4096,2,64", "8388608,16,64", 100000, 1, 0xffff);
	test_pattern(prog, "2048,1,64", "8388608,16,64", 100000, 7, 0xffff);
	test_pattern(prog, "3072,3,64", "1048576,16,64", 100000, 42, 0x3fff);
	test_pattern(prog, "1024,2,32", "8192,4,64", 100000, 5, 0x3fff);

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (!test_failures && system(cmd) != 0)
		fprintf(stderr, "cannot remove %s\n", dir);
	return test_summary("test-cg-oracle");
}
