/* One error vocabulary for all of cachetrace (after strace's error_prints.h).
 *
 * Only the front ends (src/tracer/main.c, the annotator's main) exit; the
 * decode, cachemodel and report libraries return errors to them.  The
 * *_and_die and x*alloc helpers are for the front ends and for allocation
 * failure, which nothing here can recover from. */
#ifndef CT_ERROR_H
#define CT_ERROR_H

#include <stddef.h>
#include <stdnoreturn.h>

/* Messages start with glibc's program_invocation_short_name. */
/* Set by -d / CACHETRACE_DEBUG; debug_msg prints only when it is set. */
extern int debug_flag;

#define CT_FMT(a, b) __attribute__((format(printf, a, b)))

void error_msg(const char *fmt, ...) CT_FMT(1, 2);
/* Appends ": strerror(errno)". */
void perror_msg(const char *fmt, ...) CT_FMT(1, 2);
noreturn void error_msg_and_die(const char *fmt, ...) CT_FMT(1, 2);
noreturn void perror_msg_and_die(const char *fmt, ...) CT_FMT(1, 2);
/* Bad usage: the message and a --help hint; returns -1 (the caller exits
 * with status 2), or exits with status 2. */
int error_usage(const char *fmt, ...) CT_FMT(1, 2);
noreturn void error_usage_and_die(const char *fmt, ...) CT_FMT(1, 2);
#define debug_msg(...) \
	do { if (debug_flag) debug_msg_impl(__VA_ARGS__); } while (0)
void debug_msg_impl(const char *fmt, ...) CT_FMT(1, 2);

/* Allocation that dies with a message on failure. */
void *xmalloc(size_t size);
void *xcalloc(size_t nmemb, size_t size);
/* SIZE zeroed bytes on cache lines of their own (64-byte aligned). */
void *xzalloc_lines(size_t size);
void *xreallocarray(void *ptr, size_t nmemb, size_t size);
char *xstrdup(const char *s);
char *xasprintf(const char *fmt, ...) CT_FMT(1, 2);

/* A growing NUL-terminated string; start with { 0 }, free(.s) when done. */
struct strbuf {
	char *s;
	size_t len, cap;
};
/* Append N bytes of S (dies on allocation failure). */
void strbuf_add(struct strbuf *b, const char *s, size_t n);

#endif
