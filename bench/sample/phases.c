/* bench/sample: a program of distinct phases for --sample's accuracy
 * (issue 31).  Each round: stream() reads a 64 MiB array in order, a
 * word at a time; compute() runs integer arithmetic in registers;
 * probe() reads a 16 MiB table at random.  ROUNDS (argv[1], default 8)
 * rounds. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

static uint64_t big[8u << 20];		/* 64 MiB */
static uint32_t table[4u << 20];	/* 16 MiB */

__attribute__((noinline)) uint64_t stream(void)
{
	uint64_t s = 0;

	for (size_t i = 0; i < sizeof(big) / sizeof(big[0]); i++)
		s += big[i];
	return s;
}

__attribute__((noinline)) uint64_t compute(uint64_t x)
{
	for (unsigned i = 0; i < 20000000; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
	}
	return x;
}

__attribute__((noinline)) uint64_t probe(uint64_t x)
{
	uint64_t s = 0;

	for (unsigned i = 0; i < 4000000; i++) {
		x = x * 6364136223846793005ull + 1442695040888963407ull;
		s += table[(x >> 33) & ((4u << 20) - 1)];
	}
	return s;
}

int main(int argc, char **argv)
{
	unsigned rounds = argc > 1 ? (unsigned)atoi(argv[1]) : 8;
	uint64_t s = 1;

	for (size_t i = 0; i < sizeof(big) / sizeof(big[0]); i++)
		big[i] = i;
	for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++)
		table[i] = (uint32_t)i;
	for (unsigned r = 0; r < rounds; r++)
		s += stream() + compute(s) + probe(s);
	printf("%llu\n", (unsigned long long)s);
	return 0;
}
