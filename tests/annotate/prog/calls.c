/* Cross-check program for the Callgrind reader: a getter called from a
 * hot and a cold caller (the talk's blame case), a caller of both, and
 * inlined code from calls.h. */
#include <stdio.h>

#include "calls.h"

#define N 4096
static int a[N * 16];

__attribute__((noinline)) static int get(int i)
{
	return a[(i * 16) % (N * 16)];
}

__attribute__((noinline)) static int hot(void)
{
	int s = 0;
	for (int i = 0; i < 3 * N; i++)
		s += get(i * 7);
	return s;
}

__attribute__((noinline)) static int cold(void)
{
	int s = 0;
	for (int i = 0; i < N; i++)
		s += get(i) + mix(i);
	return s;
}

__attribute__((noinline)) static int both(void)
{
	return hot() + cold();
}

int main(void)
{
	printf("%d %d\n", both(), cold());
	return 0;
}
