/* The libc-heavy region of issue 18/19: work() sorts with qsort, copies
 * with memcpy, formats with snprintf and measures and compares strings
 * with strlen and strcmp, ROUNDS rounds (argv[1], default 4), about 10M
 * instructions per round.  glibc picks its AVX2 or EVEX string functions
 * on current hosts: each of their vector instructions runs on the CPU
 * under the emulate engine (issue 19).
 *   cachetrace --start=work -- ./region-libc 4 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N 4096

static unsigned vals[N];
static char strs[N][32], copy[N][32];

static int cmp_u(const void *a, const void *b)
{
	unsigned x = *(const unsigned *)a, y = *(const unsigned *)b;

	return x < y ? -1 : x > y;
}

__attribute__((noinline)) unsigned long work(unsigned rounds)
{
	unsigned long s = 0, seed = 7;

	for (unsigned r = 0; r < rounds; r++) {
		for (unsigned i = 0; i < N; i++) {
			seed = seed * 6364136223846793005ul + 1;
			vals[i] = (unsigned)(seed >> 35);
		}
		qsort(vals, N, sizeof(vals[0]), cmp_u);
		for (unsigned i = 0; i < N; i++)
			snprintf(strs[i], sizeof(strs[i]), "k%u-%u", vals[i], i);
		memcpy(copy, strs, sizeof(strs));
		for (unsigned i = 0; i + 1 < N; i++)
			s += strlen(copy[i]) + (strcmp(copy[i], copy[i + 1]) < 0);
	}
	return s;
}

int main(int argc, char **argv)
{
	printf("%lu\n", work(argc > 1 ? (unsigned)atoi(argv[1]) : 4));
	return 0;
}
