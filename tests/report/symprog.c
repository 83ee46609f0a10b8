/* Tracee of the report tests: compiled at test time, cc -O2 -g -no-pie.
 * The LINE_* markers are found by the tests with grep. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "symprog.h"

int data[1000];

static __attribute__((noinline)) int mix(int a, int b)
{
	return (a << 3) ^ (b >> 1);	/* LINE_MIX */
}

__attribute__((noinline)) int compute(int n)
{
	int s = 0;

	for (int i = 0; i < n; i++)
		s += square(data[i % 1000]) + mix(i, s);	/* LINE_LOOP */
	return s;
}

__attribute__((noinline)) int compute_sum(const int *v, int n)
{
	int s = 0;

	for (int i = 0; i < n; i++)
		s += v[i];
	return s;
}

int main(int argc, char **argv)
{
	memset(data, 1, sizeof(data));	/* LINE_MEMSET */
	printf("%d %d\n", compute(argc * 500), compute_sum(data, 1000));
	return 0;
}
