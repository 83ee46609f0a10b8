/* Several threads in the instrument engine's code cache at once
 * (tests/attach/mtcache.sh).  run_all() starts NTHREADS workers (born
 * inside the window) and joins them; each runs work() on data of its
 * own: direct calls and their returns, calls through a table of
 * pointers, a switch (an indirect jump), loads and stores.  Worker K
 * begins its rounds at op K, so that different threads meet each block
 * first, and the cache's blocks are made and linked while the others run
 * them.  Nothing a worker counts depends on the others: Cachegrind's Ir,
 * Dr and Dw per function are the oracle.
 *
 *   mtcache [ROUNDS]	prints each worker's sum */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#define NTHREADS 4
#define WORDS 1024

static long data[NTHREADS][WORDS];
static long sums[NTHREADS];
static long rounds = 300000;
static pthread_barrier_t go;

static long __attribute__((noinline)) op_sum(long *p, long i)
{
	long s = 0;
	for (long j = 0; j < 8; j++)
		s += p[(i + j * 61) & (WORDS - 1)];
	return s;
}

static long __attribute__((noinline)) op_store(long *p, long i)
{
	p[(i * 7) & (WORDS - 1)] = i;
	p[(i * 13) & (WORDS - 1)] += 3;
	return p[(i * 3) & (WORDS - 1)];
}

static long __attribute__((noinline)) op_switch(long *p, long i)
{
	switch (i % 7) {
	case 0: return p[i & 15] + 1;
	case 1: return p[(i >> 1) & 31] * 3;
	case 2: return p[(i >> 2) & 63] - i;
	case 3: return p[(i >> 3) & 127] ^ i;
	case 4: return p[(i >> 4) & 255] << 1;
	case 5: return p[(i >> 5) & 511] >> 1;
	default: return i;
	}
}

static long __attribute__((noinline)) op_nested(long *p, long i)
{
	return op_sum(p, i + 1) + op_store(p, i + 2);
}

static long (*const ops[4])(long *, long) = {
	op_sum, op_store, op_switch, op_nested
};

static long __attribute__((noinline)) work(long k)
{
	long *p = data[k], s = 0;
	for (long i = 0; i < rounds; i++)
		s += ops[(i + k) & 3](p, i);
	return s;
}

static void *worker(void *arg)
{
	long k = (long)arg;
	pthread_barrier_wait(&go);
	sums[k] = work(k);
	return NULL;
}

static void __attribute__((noinline)) run_all(void)
{
	pthread_t th[NTHREADS];
	pthread_barrier_init(&go, NULL, NTHREADS);
	for (long k = 0; k < NTHREADS; k++)
		if (pthread_create(&th[k], NULL, worker, (void *)k)) {
			perror("pthread_create");
			exit(1);
		}
	for (int k = 0; k < NTHREADS; k++)
		pthread_join(th[k], NULL);
	pthread_barrier_destroy(&go);
}

int main(int argc, char **argv)
{
	if (argc > 1)
		rounds = atol(argv[1]);
	for (int k = 0; k < NTHREADS; k++)
		for (int j = 0; j < WORDS; j++)
			data[k][j] = j * (k + 1);
	run_all();
	for (int k = 0; k < NTHREADS; k++)
		printf("%ld\n", sums[k]);
	return 0;
}
