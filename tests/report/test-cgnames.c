/* Our names against valgrind's: Cachegrind's own profile of symprog
 * (cached-sim off, Ir only) must equal the profile cgout_write makes from
 * Lackey's instruction trace of the same run, resolved with symbols.c on a
 * live copy of the program.  Per (file, function, line) for the program's
 * own files (exactly) and for glibc's (libc.so.6 and ld.so, relocated from
 * valgrind's load addresses to the live process's).
 *
 * Cachegrind and Lackey instrument the same guest instructions, so their
 * instruction counts agree (checked: the summaries are equal).  Valgrind's
 * load addresses come from the trace itself: its first instruction is
 * ld.so's entry point, and the first one outside the program after the
 * program's first is __libc_start_main (called by _start).
 * argv[1]: the directory holding symprog.c. */
#include "cgout.h"

#include <inttypes.h>
#include <stdbool.h>

#include "helpers.h"

struct range {
	char path[512];
	uint64_t lo, hi;
};

/* Mapped ranges of libc and ld.so from maps-format lines in FILE. */
static size_t read_ranges(const char *file, struct range *r, size_t max)
{
	FILE *f = fopen(file, "r");
	char line[1024];
	size_t n = 0;

	while (f && fgets(line, sizeof(line), f)) {
		unsigned long long lo, hi;
		char path[512];
		size_t i;

		if (sscanf(line, "%llx-%llx %*s %*s %*s %*s %511s", &lo, &hi,
			   path) != 3)
			continue;
		if (!strstr(path, "/libc.so") && !strstr(path, "/ld-linux"))
			continue;
		for (i = 0; i < n; i++)
			if (!strcmp(r[i].path, path))
				break;
		if (i == n) {
			if (n == max)
				continue;
			snprintf(r[n].path, sizeof(r[n].path), "%s", path);
			r[n].lo = lo;
			r[n].hi = hi;
			n++;
		}
		if (lo < r[i].lo)
			r[i].lo = lo;
		if (hi > r[i].hi)
			r[i].hi = hi;
	}
	if (f)
		fclose(f);
	return n;
}

static uint64_t first_hex(const char *cmd)
{
	char *out = capture(cmd);
	unsigned long long v = 0;

	if (out)
		sscanf(out, "%llx", &v);
	free(out);
	return v;
}

/* Valgrind's ranges of the libraries in LIVE, from Lackey's trace. */
static size_t vg_ranges(const char *dir, const struct range *live,
			size_t n_live, struct range *vg)
{
	char *p = fmt("%s/lk.out", dir);
	FILE *f = fopen(p, "r");
	char line[256];
	uint64_t first = 0, libc_entry = 0;
	bool in_prog = false;
	size_t n = 0;

	free(p);
	while (f && fgets(line, sizeof(line), f)) {
		unsigned long long a;

		if (line[0] != 'I' || sscanf(line + 1, " %llx", &a) != 1)
			continue;
		if (!first)
			first = a;
		if (a < 0x1000000) {
			in_prog = true;
		} else if (in_prog) {
			libc_entry = a;
			break;
		}
	}
	if (f)
		fclose(f);
	for (size_t i = 0; i < n_live; i++) {
		uint64_t base = 0;
		char *cmd;

		if (strstr(live[i].path, "/ld-linux")) {
			cmd = fmt("readelf -h '%s' | sed -n 's/.*Entry point "
				  "address: *//p'", live[i].path);
			base = first - first_hex(cmd);
		} else {
			cmd = fmt("nm -D --defined-only '%s' | "
				  "grep ' __libc_start_main@@'", live[i].path);
			base = libc_entry - first_hex(cmd);
		}
		free(cmd);
		vg[n] = live[i];
		vg[n].lo = base;
		vg[n].hi = base + (live[i].hi - live[i].lo);
		n++;
	}
	return n;
}

struct cc {
	char *key;		/* "file\tfn\tline" */
	uint64_t ir;
};

struct profile {
	struct cc *v;
	size_t n, cap;
};

static void prof_add(struct profile *p, const char *fl, const char *fn,
		     const char *line, uint64_t ir)
{
	char *key = fmt("%s\t%s\t%s", fl, fn, line);

	for (size_t i = 0; i < p->n; i++)
		if (!strcmp(p->v[i].key, key)) {
			p->v[i].ir += ir;
			free(key);
			return;
		}
	if (p->n == p->cap) {
		p->cap = p->cap ? 2 * p->cap : 256;
		p->v = realloc(p->v, p->cap * sizeof(*p->v));
	}
	p->v[p->n++] = (struct cc){ key, ir };
}

static void prof_free(struct profile *p)
{
	for (size_t i = 0; i < p->n; i++)
		free(p->v[i].key);
	free(p->v);
}

static uint64_t prof_get(const struct profile *p, const char *key)
{
	for (size_t i = 0; i < p->n; i++)
		if (!strcmp(p->v[i].key, key))
			return p->v[i].ir;
	return 0;
}

/* A Cachegrind file's Ir per (fl, fn, line); fl= and fn= of the short
 * form only (neither tool writes the compressed one). */
static int read_profile(const char *file, struct profile *p)
{
	FILE *f = fopen(file, "r");
	char line[4096], fl[4096] = "", fn[4096] = "";

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		char num[32];
		unsigned long long ir;

		line[strcspn(line, "\n")] = '\0';
		if (!strncmp(line, "fl=", 3))
			snprintf(fl, sizeof(fl), "%s", line + 3);
		else if (!strncmp(line, "fn=", 3))
			snprintf(fn, sizeof(fn), "%s", line + 3);
		else if (line[0] >= '0' && line[0] <= '9'
			 && sscanf(line, "%31s %llu", num, &ir) == 2)
			prof_add(p, fl, fn, num, ir);
	}
	fclose(f);
	return 0;
}

/* The program's own files, or glibc's (relative "./dir/..." names). */
static bool compared(const char *key, const char *dir)
{
	return !strncmp(key, dir, strlen(dir)) || !strncmp(key, "./", 2)
		|| !strncmp(key, "???\t(below main)", 16);
}

int main(int argc, char **argv)
{
	char *dir, *cmd, err[512], *srcdir;
	struct range vg[4], live[4];
	size_t n_vg, n_live;
	struct cost_table *t;
	struct symbols *s;
	struct profile mine = { 0 }, theirs = { 0 };
	uint64_t totals[1], a_main = 0;
	size_t compared_n = 0, glibc_n = 0, glibc_bad = 0;
	FILE *f;
	pid_t pid;

	/* No skips: a missing tool (tests/install-deps.sh) or a set-up that
	 * fails here is a failure, never exit 77. */
	if (argc < 2 || !(srcdir = realpath(argv[1], NULL))) {
		fprintf(stderr, "usage: %s SRCDIR\n", argv[0]);
		return 1;
	}
	if (run("command -v valgrind cc nm >/dev/null") != 0) {
		fprintf(stderr, "valgrind, cc or nm missing\n");
		return 1;
	}
	dir = make_tmpdir();
	/* compiled by relative name: the line table's directory 0 is the
	 * compilation directory */
	cmd = fmt("cp '%s/symprog.c' '%s/symprog.h' '%s' && cd '%s' && "
		  "cc -O2 -g -no-pie -o symprog symprog.c", srcdir, srcdir,
		  dir, dir);
	if (run(cmd) != 0) {
		fprintf(stderr, "cannot compile: %s\n", cmd);
		return 1;
	}
	free(cmd);
	cmd = fmt("cd '%s' && valgrind --tool=cachegrind "
		  "--cache-sim=no --cachegrind-out-file=cg.out "
		  "--log-file=cg.log ./symprog >/dev/null && "
		  "valgrind --tool=lackey --trace-mem=yes "
		  "--log-file=lk.out ./symprog >/dev/null", dir);
	if (run(cmd) != 0) {
		fprintf(stderr, "valgrind failed: %s\n", cmd);
		return 1;
	}
	free(cmd);

	cmd = fmt("%s/symprog", dir);
	{
		char *q = fmt("nm '%s' | grep ' T main$'", cmd);
		char *out = capture(q);
		unsigned long long m = 0;

		if (out)
			sscanf(out, "%llx", &m);
		a_main = m;
		free(q);
		free(out);
	}
	pid = start_stopped(cmd);
	free(cmd);
	if (pid < 0 || !a_main || run_to(pid, a_main) < 0) {
		fprintf(stderr, "cannot run symprog to main traced\n");
		kill_child(pid);
		return 1;
	}
	cmd = fmt("/proc/%d/maps", (int)pid);
	n_live = read_ranges(cmd, live, 4);
	free(cmd);
	CHECK(n_live == 2, "libc/ld.so ranges: %zu", n_live);
	n_vg = vg_ranges(dir, live, n_live, vg);
	CHECK(n_vg == 2, "valgrind's libc/ld.so bases: %zu", n_vg);

	/* Lackey's trace, relocated into the live process */
	t = costs_new(1);
	cmd = fmt("%s/lk.out", dir);
	f = fopen(cmd, "r");
	free(cmd);
	{
		char line[256];
		uint64_t n_ir = 0, kept = 0;

		while (f && fgets(line, sizeof(line), f)) {
			unsigned long long a;
			bool ok = false;

			if (line[0] != 'I' || sscanf(line + 1, " %llx", &a) != 1)
				continue;
			n_ir++;
			if (a < 0x1000000) {
				ok = true;		/* the non-PIE program */
			} else {
				for (size_t i = 0; i < n_vg; i++)
					for (size_t j = 0; j < n_live; j++)
						if (!strcmp(vg[i].path,
							    live[j].path)
						    && a >= vg[i].lo
						    && a < vg[i].hi) {
							a = a - vg[i].lo
								+ live[j].lo;
							ok = true;
						}
			}
			if (ok) {
				costs_row(t, a)[0]++;
				kept++;
			}
		}
		if (f)
			fclose(f);
		CHECK(n_ir > 1000 && kept > n_ir / 2, "lackey trace: %" PRIu64
		      " instructions, %" PRIu64 " kept", n_ir, kept);
	}

	s = sym_open(pid, err, sizeof(err));
	CHECK(s, "sym_open: %s", err);
	if (s) {
		static const char *const ev[] = { "Ir" };
		struct cgout_meta meta = {
			.cmd = "symprog", .n_events = 1, .events = ev,
		};

		cmd = fmt("%s/ours.out", dir);
		f = fopen(cmd, "w");
		CHECK(f && cgout_write(f, &meta, t, s, totals) == 0,
		      "cgout_write");
		if (f)
			fclose(f);
		sym_close(s);
		read_profile(cmd, &mine);
		free(cmd);
	}
	kill_child(pid);
	costs_free(t);

	cmd = fmt("%s/cg.out", dir);
	CHECK(read_profile(cmd, &theirs) == 0, "no cachegrind profile");
	free(cmd);

	/* Every compared cost centre of one side is in the other, equal:
	 * exactly for the program's own files; for glibc's we allow 1% of
	 * misses (seen: 3 of ~4100 centres in ld.so, where valgrind keeps a
	 * line-table row's file across a file switch at the same address, a
	 * rule we have not pinned down). */
	for (int side = 0; side < 2; side++) {
		const struct profile *a = side ? &theirs : &mine;
		const struct profile *b = side ? &mine : &theirs;

		for (size_t i = 0; i < a->n; i++) {
			const char *key = a->v[i].key;
			bool glibc = !strncmp(key, "./", 2);
			uint64_t other;

			if (!compared(key, dir))
				continue;
			other = prof_get(b, key);
			if (!side) {
				compared_n++;
				glibc_n += glibc;
			}
			if (other == a->v[i].ir)
				continue;
			if (glibc) {
				glibc_bad++;
				printf("note: %s: %s %" PRIu64 ", %s %" PRIu64
				       "\n", key, side ? "cachegrind" : "ours",
				       a->v[i].ir, side ? "ours" : "cachegrind",
				       other);
				continue;
			}
			CHECK(false, "%s: %s %" PRIu64 ", %s %" PRIu64, key,
			      side ? "cachegrind" : "ours", a->v[i].ir,
			      side ? "ours" : "cachegrind", other);
		}
	}
	CHECK(compared_n - glibc_n >= 8, "compared only %zu of the program's",
	      compared_n - glibc_n);
	if (glibc_n < 100)	/* no libc6-dbg: glibc's files are unknown */
		printf("note: only %zu glibc cost centres compared\n", glibc_n);
	CHECK(glibc_bad * 100 <= glibc_n * 2,	/* both sides count */
	      "%zu glibc mismatches of %zu", glibc_bad, glibc_n);
	printf("compared %zu cost centres, %zu of them glibc's (%zu differ)\n",
	       compared_n, glibc_n, glibc_bad);

	if (!test_failures) {
		cmd = fmt("rm -rf '%s'", dir);
		run(cmd);
		free(cmd);
	} else {
		fprintf(stderr, "files kept in %s\n", dir);
	}
	prof_free(&mine);
	prof_free(&theirs);
	free(dir);
	free(srcdir);
	return test_summary("test-cgnames");
}
