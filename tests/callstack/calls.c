/* Call shapes for the call-stack tests, all inside work(): direct and
 * mutual recursion, qsort with a callback, a deep call chain and a leaf
 * called from several callers.  Inclusive costs and call counts are
 * compared with valgrind's Callgrind on the same program. */
#include <stdio.h>
#include <stdlib.h>

static volatile long sink;

__attribute__((noinline)) static long fib(int n)
{
	return n < 2 ? n : fib(n - 1) + fib(n - 2);
}

__attribute__((noinline)) static long ping(int n);

__attribute__((noinline)) static long pong(int n)
{
	long r = ping(n);

	return r + 1;
}

__attribute__((noinline)) static long ping(int n)
{
	if (n == 0)
		return 0;
	return pong(n - 1) * 2 + (n & 1);
}

static int cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return (x > y) - (x < y);
}

__attribute__((noinline)) static long sort_some(void)
{
	int v[64];

	for (int i = 0; i < 64; i++)
		v[i] = (i * 37) % 64;
	qsort(v, 64, sizeof(v[0]), cmp_int);
	return v[10];
}

/* A leaf reached from three callers. */
__attribute__((noinline)) static long leaf(long x)
{
	sink = x;
	return x * 3 + 1;
}

__attribute__((noinline)) static long caller_a(long x) { return leaf(x) + 1; }
__attribute__((noinline)) static long caller_b(long x) { return leaf(x) + leaf(x + 1); }
__attribute__((noinline)) static long caller_c(long x) { return leaf(x) ^ caller_a(x); }

/* A chain eight deep. */
__attribute__((noinline)) static long d8(long x) { return leaf(x) + 8; }
__attribute__((noinline)) static long d7(long x) { return d8(x) + 7; }
__attribute__((noinline)) static long d6(long x) { return d7(x) + 6; }
__attribute__((noinline)) static long d5(long x) { return d6(x) + 5; }
__attribute__((noinline)) static long d4(long x) { return d5(x) + 4; }
__attribute__((noinline)) static long d3(long x) { return d4(x) + 3; }
__attribute__((noinline)) static long d2(long x) { return d3(x) + 2; }
__attribute__((noinline)) static long d1(long x) { return d2(x) + 1; }

__attribute__((noinline)) long work(void)
{
	long r = fib(12) + pong(20) + sort_some();

	for (int i = 0; i < 5; i++)
		r += caller_a(i) + caller_b(i) + caller_c(i);
	for (int i = 0; i < 3; i++)
		r += d1(i);
	return r;
}

int main(void)
{
	sink = work();
	printf("%ld\n", (long)sink);
	return 0;
}
