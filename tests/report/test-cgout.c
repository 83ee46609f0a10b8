/* The Cachegrind writer, the end-of-run summary and file-name expansion.
 *
 * Expected texts are written by hand: the profile from the format rules in
 * cgout.h, the summaries copied from valgrind 3.19's own output for the
 * same totals (valgrind --tool=cachegrind --cache-sim=yes --branch-sim=yes
 * on a small program here), or worked out from cg_fini's formulas; the
 * expansion errors are valgrind's messages for the same patterns.  The
 * written profile must also pass valgrind's cg_annotate without a word on
 * stderr. */
#include "cgout.h"

#include <inttypes.h>

#include "helpers.h"

static char *slurp(FILE *f)
{
	long n;
	char *s;

	fflush(f);
	n = ftell(f);
	rewind(f);
	s = calloc(1, (size_t)n + 1);
	if (fread(s, 1, (size_t)n, f) != (size_t)n)
		s[0] = '\0';
	return s;
}

static void check_text(const char *what, const char *got, const char *want)
{
	CHECK(!strcmp(got, want), "%s differs:\n--- got\n%s--- want\n%s", what,
	      got, want);
}

/* Write the profile of CCS to DIR/NAME and check its text is WANT;
 * the path (malloc'd), or NULL when the file cannot be written. */
static char *write_checked(const char *dir, const char *name,
			   const struct cgout_meta *meta, struct cgout_cc *ccs,
			   size_t n, uint64_t *totals, const char *want)
{
	char *path = fmt("%s/%s", dir, name), *text;
	FILE *f = fopen(path, "w+");

	CHECK(f && cgout_write_resolved(f, meta, ccs, n, totals) == 0,
	      "%s: cgout_write_resolved failed", name);
	if (!f) {
		free(path);
		return NULL;
	}
	text = slurp(f);
	fclose(f);
	check_text(name, text, want);
	free(text);
	return path;
}

/* valgrind's own annotator reads PATH silently (cg_annotate is installed
 * by tests/install-deps.sh: missing, this fails), and its PROGRAM TOTALS
 * line is TOTALS. */
static void check_cg_annotate(const char *dir, const char *path,
			      const char *totals)
{
	char *cmd, *out;

	CHECK(access("/usr/bin/cg_annotate", X_OK) == 0,
	      "no /usr/bin/cg_annotate: run tests/install-deps.sh");
	cmd = fmt("cd '%s' && /usr/bin/cg_annotate '%s' 2>&1 >/dev/null; "
		  "echo rc=$?", dir, path);
	out = capture(cmd);
	CHECK(out && !strcmp(out, "rc=0\n"), "cg_annotate complained: %s",
	      out ? out : "(nothing)");
	free(out);
	free(cmd);
	cmd = fmt("cd '%s' && /usr/bin/cg_annotate '%s' | "
		  "grep -m1 'PROGRAM TOTALS'", dir, path);
	out = capture(cmd);
	CHECK(out && !strcmp(out, totals), "cg_annotate totals: %s, want %s",
	      out ? out : "(nothing)", totals);
	free(out);
	free(cmd);
}

static void test_writer(void)
{
	static const char *const desc[] = {
		"I1 cache:         32768 B, 64 B, 8-way associative",
		"note: hand-built", NULL,
	};
	static const char *const ev[] = { "Ir", "Dr", "Dw" };
	const struct cgout_meta meta = {
		.desc = desc, .cmd = "./prog arg", .n_events = 3, .events = ev,
	};
	static const uint64_t r[][3] = {
		{ 3, 1, 0 }, { 2, 0, 1 }, { 1, 1, 1 }, { 1, 0, 0 },
		{ 0, 0, 0 }, { 5, 2, 0 }, { 10, 0, 4 }, { 0, 3, 0 },
	};
	struct cgout_cc ccs[] = {
		{ { "b.c", "main", 5 }, r[0] },
		{ { "a.c", "foo", 10 }, r[1] },
		{ { "b.c", "main", 5 }, r[2] },	/* merged with the first */
		{ { "a.c", "foo", 2 }, r[3] },
		{ { "a.c", "bar", 7 }, r[4] },	/* all zero: left out */
		{ { "???", "???", 0 }, r[5] },
		{ { "a.c", "bar", 8 }, r[6] },
		{ { "a.c", "foo", 10 }, r[7] },	/* merged with the second */
	};
	static const char want[] =
		"desc: I1 cache:         32768 B, 64 B, 8-way associative\n"
		"desc: note: hand-built\n"
		"cmd: ./prog arg\n"
		"events: Ir Dr Dw\n"
		"fl=???\n"
		"fn=???\n"
		"0 5 2 0\n"
		"fl=a.c\n"
		"fn=bar\n"
		"8 10 0 4\n"
		"fn=foo\n"
		"2 1 0 0\n"
		"10 2 3 1\n"
		"fl=b.c\n"
		"fn=main\n"
		"5 4 2 1\n"
		"summary: 22 7 6\n";
	uint64_t totals[3] = { 99, 99, 99 };
	char *dir = make_tmpdir(), *path, *text, *cmd;
	FILE *f;

	path = write_checked(dir, "cachegrind.out.1", &meta, ccs, 8, totals,
			     want);
	if (!path)
		return;
	CHECK(totals[0] == 22 && totals[1] == 7 && totals[2] == 6,
	      "totals %" PRIu64 " %" PRIu64 " %" PRIu64, totals[0], totals[1],
	      totals[2]);

	check_cg_annotate(dir, path, "22 (100.0%) 7 (100.0%) 6 (100.0%)  "
			  "PROGRAM TOTALS\n");

	/* an empty table: header and a zero summary */
	f = tmpfile();
	CHECK(cgout_write_resolved(f, &meta, NULL, 0, totals) == 0, "empty");
	text = slurp(f);
	fclose(f);
	check_text("empty profile", text,
		   "desc: I1 cache:         32768 B, 64 B, 8-way associative\n"
		   "desc: note: hand-built\n"
		   "cmd: ./prog arg\n"
		   "events: Ir Dr Dw\n"
		   "summary: 0 0 0\n");
	free(text);

	/* a write error is reported with errno */
	f = fopen("/dev/full", "w");
	CHECK(f, "cannot open /dev/full");
	if (f) {
		errno = 0;
		CHECK(cgout_write_resolved(f, &meta, ccs, 8, totals) == -1
		      && errno == ENOSPC, "/dev/full: errno %d", errno);
		fclose(f);
	}

	/* cgout_write: a table whose event count differs from meta's */
	{
		struct cost_table *t = costs_new(2);

		costs_row(t, 0x401000)[0] = 1;
		f = tmpfile();
		errno = 0;
		CHECK(cgout_write(f, &meta, t, NULL, totals) == -1
		      && errno == EINVAL, "event count mismatch accepted");
		fclose(f);
		costs_free(t);
	}

	cmd = fmt("rm -rf '%s'", dir);
	run(cmd);
	free(cmd);
	free(path);
	free(dir);
}

/* A newline in the command line, a desc: text, a file or a function name
 * is written as backslash-n: a program argument "x\nfn=evil\n1 1000000"
 * must not add a function and a million Ir to the profile.  Then
 * cg_annotate reads it silently and its totals are the summary's. */
static void test_escape(void)
{
	static const char *const desc[] = { "note: two\nlines", NULL };
	static const char *const ev[] = { "Ir" };
	const struct cgout_meta meta = {
		.desc = desc, .n_events = 1, .events = ev,
		.cmd = "./prog x\nfl=evil.c\nfn=evil\n1 1000000\n",
	};
	static const uint64_t r[][1] = { { 3 }, { 4 } };
	struct cgout_cc ccs[] = {
		{ { "dir\nfl=x.c", "f\n2 99", 1 }, r[0] },
		{ { "b\\n.c", "g", 2 }, r[1] },
	};
	static const char want[] =
		"desc: note: two\\nlines\n"
		"cmd: ./prog x\\nfl=evil.c\\nfn=evil\\n1 1000000\\n\n"
		"events: Ir\n"
		"fl=b\\n.c\n"
		"fn=g\n"
		"2 4\n"
		"fl=dir\\nfl=x.c\n"
		"fn=f\\n2 99\n"
		"1 3\n"
		"summary: 7\n";
	uint64_t totals[1];
	char *dir = make_tmpdir(), *path, *cmd;

	path = write_checked(dir, "cachegrind.out.2", &meta, ccs, 2, totals,
			     want);
	if (!path)
		return;
	check_cg_annotate(dir, path, "7 (100.0%)  PROGRAM TOTALS\n");
	cmd = fmt("rm -rf '%s'", dir);
	run(cmd);
	free(cmd);
	free(path);
	free(dir);
}

static void check_summary(const char *what, const char *prefix,
			  unsigned n, const char *const *ev,
			  const uint64_t *totals, const char *want)
{
	FILE *f = tmpfile();
	char *text;

	cgout_print_summary(f, prefix, n, ev, totals);
	text = slurp(f);
	fclose(f);
	check_text(what, text, want);
	free(text);
}

static void test_cgout_summary(void)
{
	static const char *const all[] = {
		"Ir", "I1mr", "ILmr", "Dr", "D1mr", "DLmr", "Dw", "D1mw",
		"DLmw", "Bc", "Bcm", "Bi", "Bim", "Extra",
	};
	/* valgrind 3.19, cachegrind --cache-sim=yes --branch-sim=yes */
	static const uint64_t t1[] = {
		140752, 1242, 1222, 29488, 1150, 996, 10840, 432, 410,
		26686, 3234, 308, 165, 123456789,
	};
	static const char w1[] =
		"==4800== I   refs:      140,752\n"
		"==4800== I1  misses:      1,242\n"
		"==4800== LLi misses:      1,222\n"
		"==4800== I1  miss rate:    0.88%\n"
		"==4800== LLi miss rate:    0.87%\n"
		"==4800== \n"
		"==4800== D   refs:       40,328  (29,488 rd   + 10,840 wr)\n"
		"==4800== D1  misses:      1,582  ( 1,150 rd   +    432 wr)\n"
		"==4800== LLd misses:      1,406  (   996 rd   +    410 wr)\n"
		"==4800== D1  miss rate:     3.9% (   3.9%     +    4.0%  )\n"
		"==4800== LLd miss rate:     3.5% (   3.4%     +    3.8%  )\n"
		"==4800== \n"
		"==4800== LL refs:         2,824  ( 2,392 rd   +    432 wr)\n"
		"==4800== LL misses:       2,628  ( 2,218 rd   +    410 wr)\n"
		"==4800== LL miss rate:      1.5% (   1.3%     +    3.8%  )\n"
		"==4800== \n"
		"==4800== Branches:       26,994  (26,686 cond +    308 ind)\n"
		"==4800== Mispredicts:     3,399  ( 3,234 cond +    165 ind)\n"
		"==4800== Mispred rate:     12.6% (  12.1%     +   53.6%   )\n";
	/* valgrind 3.19, --cache-sim=no --branch-sim=yes */
	static const char *const br[] = { "Ir", "Bc", "Bcm", "Bi", "Bim" };
	static const uint64_t t2[] = { 140806, 26691, 3237, 308, 165 };
	static const char w2[] =
		"==10007== I   refs:      140,806\n"
		"==10007== \n"
		"==10007== Branches:       26,999  (26,691 cond + 308 ind)\n"
		"==10007== Mispredicts:     3,402  ( 3,237 cond + 165 ind)\n"
		"==10007== Mispred rate:     12.6% (  12.1%     + 53.6%   )\n";
	/* valgrind 3.19, --cache-sim=no */
	static const char w3[] = "==10003== I   refs:      140,806\n";
	/* worked by hand from cg_fini: widths 1 (all numbers < 10), zero
	 * D refs counted as 1 in the rates, LL rate 1 / (8 + 1) */
	static const uint64_t t4[] = { 8, 1, 1, 0, 0, 0, 0, 0, 0 };
	static const char w4[] =
		"I   refs:      8\n"
		"I1  misses:    1\n"
		"LLi misses:    1\n"
		"I1  miss rate: 12.50%\n"
		"LLi miss rate: 12.50%\n"
		"\n"
		"D   refs:      0  (0 rd   + 0 wr)\n"
		"D1  misses:    0  (0 rd   + 0 wr)\n"
		"LLd misses:    0  (0 rd   + 0 wr)\n"
		"D1  miss rate: 0.0% (0.0%     + 0.0%  )\n"
		"LLd miss rate: 0.0% (0.0%     + 0.0%  )\n"
		"\n"
		"LL refs:       1  (1 rd   + 0 wr)\n"
		"LL misses:     1  (1 rd   + 0 wr)\n"
		"LL miss rate:  11.1% (11.1%     + 0.0%  )\n";
	/* by hand: 1,234,567 Ir sets width 9; 3 / 400 = 0.75% prints as
	 * 0.7 with valgrind's %f (the half is not rounded up), 1 / 3 of the
	 * writes 33.3; events in another order than Cachegrind's */
	static const char *const mixed[] = {
		"Dw", "Ir", "D1mw", "Dr", "D1mr", "I1mr", "ILmr", "DLmr", "DLmw",
	};
	static const uint64_t t5[] = { 3, 1234567, 1, 400, 3, 0, 0, 2, 1 };
	static const char w5[] =
		"I   refs:      1,234,567\n"
		"I1  misses:            0\n"
		"LLi misses:            0\n"
		"I1  miss rate:      0.00%\n"
		"LLi miss rate:      0.00%\n"
		"\n"
		"D   refs:            403  (400 rd   + 3 wr)\n"
		"D1  misses:            4  (  3 rd   + 1 wr)\n"
		"LLd misses:            3  (  2 rd   + 1 wr)\n"
		"D1  miss rate:       1.0% (0.7%     + 33.3%  )\n"
		"LLd miss rate:       0.7% (0.5%     + 33.3%  )\n"
		"\n"
		"LL refs:               4  (  3 rd   + 1 wr)\n"
		"LL misses:             3  (  2 rd   + 1 wr)\n"
		"LL miss rate:        0.0% (0.0%     + 33.3%  )\n";

	/* by hand: no indirect branch is "0 ind", not cg_fini's "1 ind"
	 * (issue 17); the rates 1 / 4 and 0 / 1 */
	static const uint64_t t6[] = { 10, 4, 1, 0, 0 };
	static const char w6[] =
		"I   refs:      10\n"
		"\n"
		"Branches:       4  (4 cond + 0 ind)\n"
		"Mispredicts:    1  (1 cond + 0 ind)\n"
		"Mispred rate:  25.0% (25.0%     + 0.0%   )\n";
	/* by hand: nothing traced (a start event that never came) */
	static const uint64_t t7[] = { 0, 0, 0, 0, 0 };
	static const char w7[] =
		"I   refs:      0\n"
		"\n"
		"Branches:      0  (0 cond + 0 ind)\n"
		"Mispredicts:   0  (0 cond + 0 ind)\n"
		"Mispred rate:  0.0% (0.0%     + 0.0%   )\n";

	check_summary("zero indirect branches", "", 5, br, t6, w6);
	check_summary("nothing traced", "", 5, br, t7, w7);
	check_summary("full summary", "==4800== ", 14, all, t1, w1);
	check_summary("branch summary", "==10007== ", 5, br, t2, w2);
	check_summary("Ir summary", "==10003== ", 1, br, t2, w3);
	check_summary("tiny summary", "", 9, all, t4, w4);
	check_summary("mixed summary", NULL, 9, mixed, t5, w5);
}

static void check_name(const char *pattern, const char *want,
		       const char *want_err)
{
	char err[256] = "";
	char *got = cgout_expand_name(pattern, 1234, err, sizeof(err));

	if (want)
		CHECK(got && !strcmp(got, want), "'%s' -> '%s' (%s), want '%s'",
		      pattern, got ? got : "NULL", err, want);
	else
		CHECK(!got && !strcmp(err, want_err),
		      "'%s' -> '%s', error '%s', want error '%s'", pattern,
		      got ? got : "NULL", err, want_err);
	free(got);
}

static void test_names(void)
{
	setenv("CT_TEST_RANK", "r7", 1);
	unsetenv("CT_TEST_UNSET");
	check_name("cachegrind.out.%p", "cachegrind.out.1234", NULL);
	check_name("x%%y%p", "x%y1234", NULL);
	check_name("/tmp/%q{CT_TEST_RANK}/o.%p.%q{CT_TEST_RANK}",
		   "/tmp/r7/o.1234.r7", NULL);
	check_name("plain", "plain", NULL);
	check_name("a%n", "a1", NULL);
	check_name("%%%%", "%%", NULL);
	check_name("a%z", NULL, "expected p, q{VAR}, n or % after %");
	check_name("a%", NULL, "expected p, q{VAR}, n or % after %");
	check_name("a%q", NULL, "expected '{' after '%q'");
	check_name("a%q{CT_TEST_RANK", NULL, "missing '}' in a %q{VAR}");
	check_name("a%q{CT_TEST_UNSET}", NULL,
		   "environment variable 'CT_TEST_UNSET' is not set");
	check_name("", NULL, "no file name given");
}

int main(void)
{
	test_writer();
	test_escape();
	test_cgout_summary();
	test_names();
	return test_summary("test-cgout");
}
