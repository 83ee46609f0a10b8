/* symbols.c on a live, traced process, against binutils' nm, addr2line
 * and objdump --dwarf=decodedline.
 *
 * argv[1]: the directory holding symprog.c (compiled here, cc -O2 -g
 * -no-pie, with its absolute path so that the line table's names are
 * absolute). */
#include "symbols.h"

#include <inttypes.h>
#include <stdbool.h>

#include "helpers.h"

static const char *exe;

/* The value of symbol NAME in `nm ARGS FILE` (versions ignored), and its
 * type letter. */
static uint64_t nm_value(const char *args, const char *file,
			 const char *name, char *type, bool want_default)
{
	char *cmd = fmt("nm %s '%s'", args, file);
	char *out = capture(cmd);
	uint64_t v = 0;

	free(cmd);
	for (char *line = out ? strtok(out, "\n") : NULL; line;
	     line = strtok(NULL, "\n")) {
		char t, n[256];
		unsigned long long a;

		if (sscanf(line, "%llx %c %255s", &a, &t, n) != 3)
			continue;
		char *at = strchr(n, '@');
		bool dflt = at && at[1] == '@';

		if (at)
			*at = '\0';
		if (strcmp(n, name) || (want_default && !dflt))
			continue;
		v = a;
		if (type)
			*type = t;
		break;
	}
	free(out);
	return v;
}

/* addr2line's "FILE:LINE" for ADDR. */
static void addr2line(uint64_t addr, char *file, size_t len, unsigned *line)
{
	char *cmd = fmt("addr2line -e '%s' 0x%" PRIx64, exe, addr);
	char *out = capture(cmd);
	char *colon;

	free(cmd);
	file[0] = '\0';
	*line = 0;
	if (!out)
		return;
	colon = strrchr(out, ':');
	if (colon) {
		*colon = '\0';
		snprintf(file, len, "%s", out);
		*line = (unsigned)strtoul(colon + 1, NULL, 10);
	}
	free(out);
}

/* The lowest is_stmt address objdump lists for BASENAME:LINE. */
static uint64_t objdump_stmt(const char *basename, unsigned line)
{
	char *cmd = fmt("objdump --dwarf=decodedline '%s'", exe);
	char *out = capture(cmd);
	uint64_t best = UINT64_MAX;

	free(cmd);
	for (char *l = out ? strtok(out, "\n") : NULL; l;
	     l = strtok(NULL, "\n")) {
		char f[256];
		unsigned n;
		unsigned long long a;
		int used = 0;

		if (sscanf(l, "%255s %u 0x%llx%n", f, &n, &a, &used) != 3)
			continue;
		/* the Stmt column is an "x" at the end of the row */
		if (!strcmp(f, basename) && n == line && strchr(l + used, 'x')
		    && a < best)
			best = a;
	}
	free(out);
	return best;
}

static uint64_t map_base(pid_t pid, const char *prefix, char *path,
			 size_t len)
{
	char *fn = fmt("/proc/%d/maps", (int)pid);
	FILE *f = fopen(fn, "r");
	char line[1024];
	uint64_t base = 0;

	free(fn);
	while (f && fgets(line, sizeof(line), f)) {
		unsigned long long lo, off;
		char p[512] = "";

		if (sscanf(line, "%llx-%*x %*s %llx %*s %*s %511s", &lo,
			   &off, p) < 2)
			continue;
		const char *b = strrchr(p, '/');

		if (b && !strncmp(b + 1, prefix, strlen(prefix)) && off == 0) {
			base = lo;
			snprintf(path, len, "%s", p);
			break;
		}
	}
	if (f)
		fclose(f);
	return base;
}

static void check_found(struct symbols *s, const char *loc, uint64_t want)
{
	char err[512] = "x";
	uint64_t a = 0;
	enum sym_resolve_result r = sym_resolve(s, loc, &a, err, sizeof(err));

	CHECK(r == SYM_FOUND && a == want,
	      "sym_resolve(%s) = %d, 0x%" PRIx64 " (%s), want 0x%" PRIx64,
	      loc, r, a, err, want);
}

static void check_lookup(struct symbols *s, uint64_t pc, const char *fn,
			 const char *file, unsigned line)
{
	struct src_loc l;

	sym_lookup(s, pc, &l);
	CHECK(!strcmp(l.fn, fn) && !strcmp(l.file, file) && l.line == line,
	      "sym_lookup(0x%" PRIx64 ") = %s %s:%u, want %s %s:%u", pc,
	      l.fn, l.file, l.line, fn, file, line);
}

int main(int argc, char **argv)
{
	char *dir, *src, *hdr, *cmd, err[1024], file[512], libc[512];
	struct symbols *s;
	uint64_t a_compute, a_mix, a_main, a_start, a, libc_base, v;
	unsigned l_loop, l_square, line;
	enum sym_resolve_result r;
	struct src_loc loc;
	pid_t pid;
	char type = 0;

	/* No skips: a missing tool (tests/install-deps.sh) or a set-up that
	 * fails here is a failure, never exit 77. */
	if (argc < 2) {
		fprintf(stderr, "usage: %s SRCDIR\n", argv[0]);
		return 1;
	}
	if (run("command -v cc nm addr2line objdump strip >/dev/null") != 0) {
		fprintf(stderr, "cc, nm, addr2line, objdump or strip missing\n");
		return 1;
	}
	dir = make_tmpdir();
	argv[1] = realpath(argv[1], NULL);
	if (!argv[1]) {
		perror("realpath");
		return 1;
	}
	src = fmt("%s/symprog.c", argv[1]);
	hdr = fmt("%s/symprog.h", argv[1]);
	exe = fmt("%s/symprog", dir);
	cmd = fmt("cd '%s' && cc -O2 -g -no-pie -o symprog '%s'", dir, src);
	if (run(cmd) != 0) {
		fprintf(stderr, "cannot compile %s\n", src);
		return 1;
	}
	free(cmd);
	l_loop = marker_line(src, "LINE_LOOP");
	l_square = marker_line(hdr, "LINE_SQUARE");

	a_compute = nm_value("", exe, "compute", NULL, false);
	a_mix = nm_value("", exe, "mix", NULL, false);
	a_main = nm_value("", exe, "main", NULL, false);
	a_start = nm_value("", exe, "_start", NULL, false);
	CHECK(a_compute && a_mix && a_main && a_start, "nm found nothing");

	pid = start_stopped(exe);
	if (pid < 0) {
		fprintf(stderr, "cannot start %s traced\n", exe);
		return 1;
	}
	s = sym_open(pid, err, sizeof(err));
	CHECK(s, "sym_open: %s", err);
	if (!s) {
		kill_child(pid);
		return 1;
	}

	/* names, offsets, addresses */
	check_found(s, "compute", a_compute);
	check_found(s, "compute+4", a_compute + 4);
	check_found(s, "compute+0x10", a_compute + 0x10);
	check_found(s, "mix", a_mix);			/* a local symbol */
	check_found(s, "0x401000", 0x401000);
	r = sym_resolve(s, "symprog.c:0", &a, err, sizeof(err));
	CHECK(r == SYM_BAD_SYNTAX, "line 0: %d %s", r, err);
	r = sym_resolve(s, "compute+zz", &a, err, sizeof(err));
	CHECK(r == SYM_BAD_SYNTAX, "compute+zz: %d %s", r, err);
	r = sym_resolve(s, "0xfoo", &a, err, sizeof(err));
	CHECK(r == SYM_BAD_SYNTAX, "0xfoo: %d %s", r, err);

	/* file:line, against objdump's decoded line table */
	v = objdump_stmt("symprog.c", l_loop);
	CHECK(v != UINT64_MAX, "objdump has no row for line %u", l_loop);
	cmd = fmt("symprog.c:%u", l_loop);
	check_found(s, cmd, v);
	free(cmd);
	cmd = fmt("report/symprog.c:%u", l_loop);
	check_found(s, cmd, v);
	free(cmd);
	v = objdump_stmt("symprog.h", l_square);
	cmd = fmt("symprog.h:%u", l_square);
	check_found(s, cmd, v);
	free(cmd);
	r = sym_resolve(s, "symprog.c:1", &a, err, sizeof(err));
	CHECK(r == SYM_NOT_FOUND && !strcmp(err, "no code at symprog.c:1"),
	      "symprog.c:1: %d '%s'", r, err);
	r = sym_resolve(s, "ymprog.c:20", &a, err, sizeof(err));
	CHECK(r == SYM_NOT_FOUND, "ymprog.c matched a file: %d", r);

	/* not found: modules searched and a suggestion */
	r = sym_resolve(s, "compte", &a, err, sizeof(err));
	CHECK(r == SYM_NOT_FOUND
	      && !strncmp(err, "symbol 'compte' not found in symprog, ld-linux-x86-64.so.2, [vdso]", 66)
	      && strstr(err, "did you mean 'compute'"),
	      "compte: %d '%s'", r, err);
	/* libc is not mapped at the exec stop */
	r = sym_resolve(s, "libc.so.6:malloc", &a, err, sizeof(err));
	CHECK(r == SYM_NOT_YET, "libc.so.6:malloc at exec: %d '%s'", r, err);

	/* lookups, against addr2line */
	addr2line(a_compute, file, sizeof(file), &line);
	check_lookup(s, a_compute, "compute", file, line);
	CHECK(!strcmp(file, src), "addr2line says %s, not %s", file, src);
	addr2line(a_mix, file, sizeof(file), &line);
	check_lookup(s, a_mix, "mix", file, line);
	addr2line(a_main, file, sizeof(file), &line);
	check_lookup(s, a_main, "main", file, line);
	/* inlined header code: the header's file and line, compute's name */
	v = objdump_stmt("symprog.h", l_square);
	check_lookup(s, v, "compute", hdr, l_square);
	/* _start has no line info; valgrind calls it (below main) */
	check_lookup(s, a_start, "(below main)", "???", 0);
	check_lookup(s, 0x10, "???", "???", 0);
	/* cached answers are the same strings */
	{
		struct src_loc l1, l2;

		sym_lookup(s, a_compute, &l1);
		sym_lookup(s, a_compute, &l2);
		CHECK(l1.file == l2.file && l1.fn == l2.fn, "cache");
	}

	/* function range, against nm -S */
	{
		char *q = fmt("nm -S '%s' | grep ' compute$'", exe);
		char *out = capture(q);
		unsigned long long lo = 0, size = 0;
		uint64_t flo, fhi;
		const char *name = NULL;

		if (out)
			sscanf(out, "%llx %llx", &lo, &size);
		CHECK(sym_function_range(s, a_compute + 5, &flo, &fhi, &name)
		      == 0 && flo == lo && fhi == lo + size
		      && !strcmp(name, "compute"),
		      "range [%" PRIx64 ", %" PRIx64 ") %s, want [%llx, %llx)",
		      flo, fhi, name ? name : "-", lo, lo + size);
		CHECK(sym_function_range(s, 0x10, &flo, &fhi, &name) < 0,
		      "range of 0x10");
		free(out);
		free(q);
	}

	/* after the loader: libc symbols */
	CHECK(run_to(pid, a_main) == 0, "cannot run to main");
	CHECK(sym_refresh(s, err, sizeof(err)) == 0, "refresh: %s", err);
	libc_base = map_base(pid, "libc.so.6", libc, sizeof(libc));
	CHECK(libc_base, "libc.so.6 not in the maps");
	v = nm_value("-D --defined-only", libc, "malloc", &type, false);
	check_found(s, "libc.so.6:malloc", libc_base + v);
	check_found(s, "libc.so:malloc", libc_base + v);
	r = sym_resolve(s, "libc.so.6:malloc+16", &a, err, sizeof(err));
	CHECK(r == SYM_FOUND && a == libc_base + v + 16, "malloc+16");
	sym_lookup(s, libc_base + v, &loc);
	CHECK(!strcmp(loc.fn, "malloc"), "libc malloc is named '%s'", loc.fn);
	/* memcpy is an IFUNC: found, with a word about it */
	v = nm_value("-D --defined-only", libc, "memcpy", &type, true);
	CHECK(type == 'i', "memcpy@@ is not an ifunc here (%c)", type);
	r = sym_resolve(s, "libc.so.6:memcpy", &a, err, sizeof(err));
	CHECK(r == SYM_FOUND && a == libc_base + v && strstr(err, "IFUNC"),
	      "memcpy: %d 0x%" PRIx64 " '%s'", r, a, err);
	r = sym_resolve(s, "libc.so.6:mallocc", &a, err, sizeof(err));
	CHECK(r == SYM_NOT_FOUND && strstr(err, "not found in libc.so.6")
	      && strstr(err, "'malloc'"), "mallocc: %d '%s'", r, err);
	r = sym_resolve(s, "libnothere.so:foo", &a, err, sizeof(err));
	CHECK(r == SYM_NOT_YET, "libnothere: %d '%s'", r, err);
	/* the executable still resolves the same */
	check_found(s, "compute", a_compute);
	addr2line(a_compute, file, sizeof(file), &line);
	check_lookup(s, a_compute, "compute", file, line);

	/* the process gone: refresh fails, lookups still answer */
	kill_child(pid);
	err[0] = '\0';
	CHECK(sym_refresh(s, err, sizeof(err)) < 0 && err[0],
	      "refresh of a dead process: '%s'", err);
	sym_lookup(s, a_compute, &loc);
	CHECK(loc.fn && loc.file, "lookup after a failed refresh");
	sym_close(s);

	/* a stripped copy: no symbol table */
	cmd = fmt("strip -o '%s.stripped' '%s'", exe, exe);
	CHECK(run(cmd) == 0, "strip failed");
	free(cmd);
	cmd = fmt("%s.stripped", exe);
	pid = start_stopped(cmd);
	CHECK(pid > 0, "cannot start the stripped copy");
	if (pid > 0) {
		s = sym_open(pid, err, sizeof(err));
		CHECK(s, "sym_open (stripped): %s", err);
		if (s) {
			r = sym_resolve(s, "compute", &a, err, sizeof(err));
			CHECK(r == SYM_NOT_FOUND
			      && strstr(err, "symprog.stripped has no symbol table"),
			      "stripped: %d '%s'", r, err);
			sym_lookup(s, a_compute, &loc);
			CHECK(!strcmp(loc.fn, "???") && !strcmp(loc.file, "???"),
			      "stripped lookup: %s %s", loc.fn, loc.file);
			sym_close(s);
		}
		kill_child(pid);
	}
	free(cmd);

	cmd = fmt("rm -rf '%s'", dir);
	run(cmd);
	free(cmd);
	free(dir);
	free(src);
	free(hdr);
	free((char *)exe);
	free(argv[1]);
	return test_summary("test-symbols");
}
