/* Checks for the C unit tests: every check counts, a failed one prints
 * FILE:LINE, the condition and an optional printf-style message, and the
 * test ends with `return test_summary("name");`. */
#ifndef CT_TESTUTIL_H
#define CT_TESTUTIL_H

#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

static unsigned test_checks;
static unsigned test_failures;

/* Counts a check; when it failed, starts its message. */
__attribute__((unused))
static bool testutil_check(bool ok, const char *file, int line,
			   const char *cond)
{
	test_checks++;
	if (!ok) {
		test_failures++;
		fprintf(stderr, "%s:%d: check failed: %s", file, line, cond);
	}
	return ok;
}

/* Ends a failed check's message with ": FMT..."; false. */
__attribute__((format(printf, 1, 2), unused))
static bool testutil_check_failed(const char *fmt, ...)
{
	if (fmt[0]) {
		va_list ap;
		va_start(ap, fmt);
		fputs(": ", stderr);
		vfprintf(stderr, fmt, ap);
		va_end(ap);
	}
	fputc('\n', stderr);
	return false;
}

/* CHECK(cond) or CHECK(cond, "fmt", ...): the message's arguments are
 * evaluated only when COND fails.  True when it holds, so that a test
 * can stop early: if (!CHECK(p, ...)) return 1;  Without a message the
 * format is "", on purpose: the warning is off for the whole test file,
 * since it is given where the macro expands. */
#pragma GCC diagnostic ignored "-Wformat-zero-length"
#define CHECK(cond, ...) ({ \
	bool ok_ = testutil_check(!!(cond), __FILE__, __LINE__, #cond); \
	if (!ok_) \
		testutil_check_failed("" __VA_ARGS__); \
	ok_; \
})

#define CHECK_U64(got, want) ({ \
	uint64_t got_ = (got), want_ = (want); \
	bool ok_ = testutil_check(got_ == want_, __FILE__, __LINE__, \
			      #got " == " #want); \
	if (!ok_) \
		testutil_check_failed("%" PRIu64 ", want %" PRIu64, got_, want_); \
	ok_; \
})

#define CHECK_STR(got, want) ({ \
	const char *got_ = (got), *want_ = (want); \
	bool ok_ = testutil_check(got_ && !strcmp(got_, want_), __FILE__, \
			      __LINE__, #got " == " #want); \
	if (!ok_) \
		testutil_check_failed("\"%s\", want \"%s\"", \
				  got_ ? got_ : "(null)", want_); \
	ok_; \
})

/* "NAME: N checks, N failed" on stderr; 1 if any failed. */
__attribute__((unused))
static int test_summary(const char *name)
{
	fprintf(stderr, "%s: %u checks, %u failed\n", name, test_checks,
		test_failures);
	return test_failures ? 1 : 0;
}

#endif
