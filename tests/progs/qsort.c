/* qsort with a callback: libc calls back into the program through an
 * indirect call (the comparator runs only inside qsort). 250 ints = 1000
 * bytes, below glibc's 1024-byte limit for its on-stack merge buffer, so
 * no malloc is involved. */
#include <stdio.h>
#include <stdlib.h>

#define N	250

static int values[N];
static volatile long sink;

__attribute__((noinline)) static void setup(void)
{
	unsigned s = 7;

	for (int i = 0; i < N; i++) {
		s = s * 1103515245u + 12345u;
		values[i] = (int)(s >> 8) % 10000;
	}
}

static int cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return (x > y) - (x < y);
}

__attribute__((noinline)) long work(void)
{
	long s = 0;

	qsort(values, N, sizeof(values[0]), cmp_int);
	for (int i = 1; i < N; i++)
		s += values[i] >= values[i - 1];
	return s;
}

int main(void)
{
	setup();
	sink = work();
	printf("%ld\n", (long)sink);
	return sink == N - 1 ? 0 : 1;
}
