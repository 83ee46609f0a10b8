#include "error.h"

#include <errno.h>
#include <stdint.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int debug_flag;

/* One write per message: stderr is unbuffered, and the cachetrace of a
 * child process (--trace-children) writes to the same one, so a message
 * made of several writes could be cut by another's (tests/attach/
 * children.sh saw "cachetrace: " and its note on two lines). */
static void vmsg(int err, const char *fmt, va_list ap)
{
	char line[2048];
	int n = snprintf(line, sizeof(line), "%s: ",
			 program_invocation_short_name);
	if (n > 0 && (size_t)n < sizeof(line))
		n += vsnprintf(line + n, sizeof(line) - (size_t)n, fmt, ap);
	if (n > 0 && (size_t)n < sizeof(line) && err)
		n += snprintf(line + n, sizeof(line) - (size_t)n, ": %s",
			      strerror(err));
	if (n > 0 && (size_t)n + 1 < sizeof(line)) {
		line[n++] = '\n';
		fflush(stdout);
		fwrite(line, 1, (size_t)n, stderr);
		return;
	}
	/* Too long for the buffer: written as far as it goes, cut. */
	fflush(stdout);
	line[sizeof(line) - 2] = '\n';
	line[sizeof(line) - 1] = 0;
	fputs(line, stderr);
}

void error_msg(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vmsg(0, fmt, ap);
	va_end(ap);
}

void perror_msg(const char *fmt, ...)
{
	int err = errno;
	va_list ap;
	va_start(ap, fmt);
	vmsg(err, fmt, ap);
	va_end(ap);
}

void error_msg_and_die(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vmsg(0, fmt, ap);
	va_end(ap);
	exit(1);
}

void perror_msg_and_die(const char *fmt, ...)
{
	int err = errno;
	va_list ap;
	va_start(ap, fmt);
	vmsg(err, fmt, ap);
	va_end(ap);
	exit(1);
}

static void vusage(const char *fmt, va_list ap)
{
	vmsg(0, fmt, ap);
	fprintf(stderr, "Try '%s --help' for more information.\n",
		program_invocation_short_name);
}

int error_usage(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vusage(fmt, ap);
	va_end(ap);
	return -1;
}

void error_usage_and_die(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vusage(fmt, ap);
	va_end(ap);
	exit(2);
}

void debug_msg_impl(const char *fmt, ...)
{
	va_list ap;
	fprintf(stderr, "%s: debug: ", program_invocation_short_name);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

static void *check_alloc(void *p, size_t n)
{
	if (!p && n)
		error_msg_and_die("out of memory allocating %zu bytes", n);
	return p;
}

void *xmalloc(size_t size)
{
	return check_alloc(malloc(size), size);
}

void *xcalloc(size_t nmemb, size_t size)
{
	return check_alloc(calloc(nmemb, size), nmemb * size);
}

void *xzalloc_lines(size_t size)
{
	void *p = NULL;
	if (posix_memalign(&p, 64, size))
		p = NULL;
	check_alloc(p, size);
	return memset(p, 0, size);
}

void *xreallocarray(void *ptr, size_t nmemb, size_t size)
{
	if (size && nmemb > SIZE_MAX / size)
		error_msg_and_die("allocation of %zu x %zu bytes overflows",
				  nmemb, size);
	return check_alloc(realloc(ptr, nmemb * size), nmemb * size);
}

char *xstrdup(const char *s)
{
	return check_alloc(strdup(s), strlen(s) + 1);
}

char *xasprintf(const char *fmt, ...)
{
	char *s;
	va_list ap;
	va_start(ap, fmt);
	if (vasprintf(&s, fmt, ap) < 0)
		error_msg_and_die("out of memory formatting a string");
	va_end(ap);
	return s;
}

void strbuf_add(struct strbuf *b, const char *s, size_t n)
{
	if (b->len + n + 1 > b->cap) {
		b->cap = (b->len + n + 1) * 2;
		b->s = xreallocarray(b->s, b->cap, 1);
	}
	memcpy(b->s + b->len, s, n);
	b->len += n;
	b->s[b->len] = '\0';
}
