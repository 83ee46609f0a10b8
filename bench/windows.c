/* Many short windows (issue 27: a window's fixed cost): main calls
 * work() N times, each call a window of about 20 instructions with
 * `cachetrace --start=work --intervals=N`.  Run by hand:
 *   cc -O2 -g -fno-pie -no-pie -o windows bench/windows.c
 *   time cachetrace -q --start=work --intervals=20000 -o w.cg -- ./windows 20000
 * The wall time over N is the cost of one window, start-up aside. */
#include <stdio.h>
#include <stdlib.h>

static volatile long sink;

__attribute__((noinline)) long work(long n)
{
	long s = 0;
	for (long i = 0; i < n; i++)
		s += i * i ^ (s >> 3);
	return s;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 2000;
	for (int i = 0; i < n; i++)
		sink += work(1 + (i & 1));	/* not hoisted out of the loop */
	printf("%ld\n", sink);
	return 0;
}
