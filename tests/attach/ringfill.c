/* A target for tests/attach/ringq.sh: one loop with no call and no exit
 * from the instrument engine's code cache, whose loads and stores fill its
 * ring (4 MiB of records) several times over. */
#include <stdio.h>

static volatile unsigned table[4096];

__attribute__((noinline)) unsigned fill(unsigned n)
{
	unsigned s = 1;

	for (unsigned i = 0; i < n; i++) {
		s = s * 1103515245u + 12345u;
		table[s >> 20] += s;
	}
	return s;
}

int main(void)
{
	printf("%u\n", fill(5000000));
	return 0;
}
