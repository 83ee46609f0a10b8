/* Two threads of integer work (bench/README, --threads=all): each fills
 * and sums its own array ARGV[1] times; work() starts and joins them. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#define N 4096

static int rounds;

static void *worker(void *arg)
{
	unsigned *a = arg, s = 0;
	for (int r = 0; r < rounds; r++)
		for (unsigned i = 0; i < N; i++) {
			a[(i * 17) & (N - 1)] += i ^ s;
			s = s * 1103515245u + a[i];
		}
	return (void *)(unsigned long)s;
}

__attribute__((noinline)) unsigned long work(void)
{
	static unsigned a[N], b[N];
	pthread_t ta, tb;
	void *ra, *rb;
	pthread_create(&ta, NULL, worker, a);
	pthread_create(&tb, NULL, worker, b);
	pthread_join(ta, &ra);
	pthread_join(tb, &rb);
	return (unsigned long)ra + (unsigned long)rb;
}

int main(int argc, char **argv)
{
	rounds = argc > 1 ? atoi(argv[1]) : 10;
	printf("%lu\n", work());
	return 0;
}
