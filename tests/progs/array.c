/* Loops over a 128 KiB array (4x L1d): one strided write pass (one store
 * per 64-byte line), a strided read pass, and a sequential read pass.
 * The array is a global so its address (and so its cache sets) is the
 * same natively and under valgrind (non-PIE). */
#include <stdio.h>

#define ARRAY_BYTES	(128 * 1024)
#define LINE		64

static unsigned char buf[ARRAY_BYTES] __attribute__((aligned(64)));
static volatile long sink;

__attribute__((noinline)) static void fill_strided(unsigned char v)
{
	for (unsigned i = 0; i < ARRAY_BYTES; i += LINE)
		buf[i] = (unsigned char)(v + i);
}

__attribute__((noinline)) static long sum_strided(unsigned stride)
{
	long s = 0;

	for (unsigned i = 0; i < ARRAY_BYTES; i += stride)
		s += buf[i];
	return s;
}

__attribute__((noinline)) static long sum_sequential(void)
{
	const long *p = (const long *)buf;
	long s = 0;

	/* 16384 8-byte loads, eight per line. */
	for (unsigned i = 0; i < ARRAY_BYTES / sizeof(long); i++)
		s ^= p[i];
	return s;
}

__attribute__((noinline)) long work(void)
{
	long s;

	fill_strided(3);
	s = sum_strided(LINE);
	s += sum_strided(4 * LINE);
	s += sum_sequential();
	return s;
}

int main(void)
{
	sink = work();
	printf("%ld\n", (long)sink);
	return 0;
}
