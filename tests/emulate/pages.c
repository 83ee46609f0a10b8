/* A window over many pages (tests/emulate/mirror.sh): work() reads one
 * byte of every page of a 24 MiB buffer in address order (the mirror's
 * read-ahead), writes every 7th page, then reads the pages in a scattered
 * order (4093 pages apart, wrapping), each result depending on what it
 * read; main prints the sums and a checksum of the buffer. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PAGES 6144u	/* 24 MiB: six times mirror.sh's budget */

__attribute__((noinline)) uint64_t work(unsigned char *p)
{
	uint64_t s = 0;
	for (unsigned i = 0; i < PAGES; i++)
		s = s * 31 + p[(size_t)i << 12];
	for (unsigned i = 0; i < PAGES; i += 7)
		p[((size_t)i << 12) + (s & 4095)] ^= (unsigned char)(i + s);
	for (unsigned i = 0, k = 0; i < PAGES; i++, k = (k + 4093) % PAGES)
		s = s * 33 + p[((size_t)k << 12) + (i & 4095)];
	return s;
}

int main(void)
{
	unsigned char *p = malloc((size_t)PAGES << 12);
	if (!p)
		return 1;
	for (size_t i = 0; i < (size_t)PAGES << 12; i++)
		p[i] = (unsigned char)(i * 2654435761u >> 13);
	uint64_t s = work(p), c = 0;
	for (size_t i = 0; i < (size_t)PAGES << 12; i++)
		c = c * 131 + p[i];
	printf("%llu %llu\n", (unsigned long long)s, (unsigned long long)c);
	return 0;
}
