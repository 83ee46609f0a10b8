/* A target for tests/attach/sample.sh's untouched memory (DLuf): each
 * call of touch() reads one byte of each 64-byte line of 64 KiB (1,024
 * lines in 16 pages) that nobody has touched yet, but main, which writes
 * a byte of the first PRE of those pages first.  N calls, each on 64 KiB
 * of its own: a mapping of its own made just before, or (MODE "one") the
 * next 64 KiB of one mapping made at the start.  Nothing is unmapped (no
 * address comes back); small pages.  MODE "again": every call on the same
 * 64 KiB, given back to the kernel (MADV_DONTNEED) before each call but
 * the first: absent from the page map, and touched before.  MODE "many":
 * as without, after 20,000 mappings more (10,000 of 8 KiB, each half
 * read-only), never touched. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define SPAN 65536

__attribute__((noinline)) unsigned touch(volatile unsigned char *p)
{
	unsigned s = 0;

	for (unsigned i = 0; i < SPAN; i += 64)
		s += p[i];
	return s;
}

static unsigned char *map(size_t len)
{
	unsigned char *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
				MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		exit(1);
	madvise(p, len, MADV_NOHUGEPAGE);	/* 4 KiB pages */
	return p;
}

int main(int argc, char **argv)
{
	unsigned n = argc > 1 ? (unsigned)atoi(argv[1]) : 1;
	unsigned pre = argc > 2 ? (unsigned)atoi(argv[2]) : 0, s = 0;
	const char *mode = argc > 3 ? argv[3] : "";
	bool again = !strcmp(mode, "again");
	unsigned char *one = again || !strcmp(mode, "one") ?
			     map((size_t)n * SPAN) : NULL;

	for (unsigned k = 0; !strcmp(mode, "many") && k < 10000; k++)
		mprotect(map(8192), 4096, PROT_READ);

	for (unsigned k = 0; k < n; k++) {
		unsigned char *p = again ? one : one ? one + (size_t)k * SPAN :
			map(SPAN);
		if (again && k)
			madvise(p, SPAN, MADV_DONTNEED);
		for (unsigned g = 0; g < pre; g++)
			p[g * 4096 + 32] = 1;
		s += touch(p);
	}
	printf("%u\n", s);
	return 0;
}
