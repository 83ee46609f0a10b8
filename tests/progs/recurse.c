/* Recursion: fib() recurses directly; ping() and pong() recurse through
 * each other, so every ping() returns to the same call site in pong():
 * --start=ping must stop at the outermost return (stack-pointer check),
 * not at the first time that return address is reached. */
#include <stdio.h>

static volatile long sink;

__attribute__((noinline)) static long fib(int n)
{
	return n < 2 ? n : fib(n - 1) + fib(n - 2);
}

__attribute__((noinline)) static long ping(int n);

__attribute__((noinline)) static long pong(int n)
{
	long r = ping(n);	/* the one call site of ping */

	return r + 1;
}

__attribute__((noinline)) static long ping(int n)
{
	if (n == 0)
		return 0;
	return pong(n - 1) * 2 + (n & 1);
}

__attribute__((noinline)) long work(void)
{
	return fib(15) + pong(40);
}

int main(void)
{
	sink = work();
	printf("%ld\n", (long)sink);
	return 0;
}
