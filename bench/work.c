/* The stepping benchmark's target: a mix of loads, stores, branches and
 * calls over 256 KiB, N rounds (argv[1], default 20: ~1.4M instructions
 * with the dynamic loader's start-up). */
#include <stdio.h>
#include <stdlib.h>

static unsigned a[65536];

__attribute__((noinline)) static unsigned mix(unsigned x)
{
	return x * 2654435761u ^ (x >> 13);
}

__attribute__((noinline)) unsigned work(int rounds)
{
	unsigned s = 0;
	for (int r = 0; r < rounds; r++)
		for (unsigned i = 0; i < 8192; i++) {
			unsigned j = mix(i + r) & 65535;
			s += a[j];
			if (s & 1)
				a[i] = s;
		}
	return s;
}

int main(int argc, char **argv)
{
	printf("%u\n", work(argc > 1 ? atoi(argv[1]) : 20));
	return 0;
}
