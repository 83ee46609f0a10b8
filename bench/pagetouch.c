/* The page-touch window (issues 27 and 29): work() writes one byte of
 * every page of a 2 GiB heap the program has not touched before, and
 * reads them back; main allocates it and prints a checksum. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>

#define BYTES (2ull << 30)

__attribute__((noinline)) uint64_t work(unsigned char *p)
{
	uint64_t s = 0;
	for (uint64_t i = 0; i < BYTES; i += 4096)
		p[i] = (unsigned char)(i >> 12);
	for (uint64_t i = 0; i < BYTES; i += 4096)
		s += p[i];
	return s;
}

int main(void)
{
	unsigned char *p = mmap(NULL, BYTES, PROT_READ | PROT_WRITE,
				MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return 1;
	printf("%llu\n", (unsigned long long)work(p));
	return 0;
}
