/* A target for tests/attach/sample.sh: work() reads one byte of each
 * 64-byte line of a 16 KiB buffer (256 lines, which an 8-way 32 KiB D1
 * holds), ROUNDS times; main calls it N times (no N: for ever). */
#include <stdio.h>
#include <stdlib.h>

static volatile unsigned char buf[16384];

__attribute__((noinline)) unsigned work(unsigned rounds)
{
	unsigned s = 0;

	for (unsigned r = 0; r < rounds; r++)
		for (unsigned i = 0; i < sizeof(buf); i += 64)
			s += buf[i];
	return s;
}

int main(int argc, char **argv)
{
	unsigned n = argc > 1 ? (unsigned)atoi(argv[1]) : 0, s = 0;

	for (unsigned i = 0; !n || i < n; i++)
		s += work(20);
	printf("%u\n", s);
	return 0;
}
