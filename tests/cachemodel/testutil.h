/* Tiny check helpers for the cachemodel unit tests. */
#ifndef CT_TEST_CACHEMODEL_UTIL_H
#define CT_TEST_CACHEMODEL_UTIL_H

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

static int test_failures;

#define CHECK(cond) do { \
	if (!(cond)) { \
		fprintf(stderr, "%s:%d: check failed: %s\n", \
			__FILE__, __LINE__, #cond); \
		test_failures++; \
	} \
} while (0)

#define CHECK_U64(got, want) do { \
	uint64_t got_ = (got), want_ = (want); \
	if (got_ != want_) { \
		fprintf(stderr, "%s:%d: %s = %" PRIu64 ", want %" PRIu64 "\n", \
			__FILE__, __LINE__, #got, got_, want_); \
		test_failures++; \
	} \
} while (0)

#define CHECK_STR(got, want) do { \
	const char *got_ = (got), *want_ = (want); \
	if (!got_ || strcmp(got_, want_)) { \
		fprintf(stderr, "%s:%d: %s = \"%s\", want \"%s\"\n", \
			__FILE__, __LINE__, #got, got_ ? got_ : "(null)", \
			want_); \
		test_failures++; \
	} \
} while (0)

static inline int test_result(const char *name)
{
	if (test_failures) {
		fprintf(stderr, "%s: %d check(s) failed\n", name, test_failures);
		return 1;
	}
	return 0;
}

#endif
