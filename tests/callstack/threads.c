/* Two threads stepped in one window (--threads=all): each keeps its own
 * stack, so worker()'s calls never show under work() nor the other way
 * round, and both sides' call counts are Callgrind's. */
#include <pthread.h>
#include <stdio.h>

static volatile long sink;

__attribute__((noinline)) static long leaf_w(long x)
{
	sink += x;
	return x * 3;
}

__attribute__((noinline)) static long leaf_m(long x)
{
	sink -= x;
	return x * 5;
}

__attribute__((noinline)) static void *worker(void *arg)
{
	long s = 0;

	for (long i = 0; i < 200; i++)
		s += leaf_w(i);
	sink += s + (long)arg;
	return NULL;
}

__attribute__((noinline)) long work(void)
{
	pthread_t t;
	long s = 0;

	if (pthread_create(&t, NULL, worker, NULL) != 0)
		return -1;
	for (long i = 0; i < 200; i++)
		s += leaf_m(i);
	pthread_join(t, NULL);
	return s;
}

int main(void)
{
	sink = work();
	printf("%ld\n", (long)sink);
	return 0;
}
