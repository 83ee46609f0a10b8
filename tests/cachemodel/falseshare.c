/* Two threads, each incrementing its own counter.  "shared": the two
 * counters sit in one 64-byte line (false sharing: each write takes the
 * line from the other core, and the other's next access misses on bytes
 * nobody else wrote); "padded": a line each (no coherence misses in the
 * loops).  The increments are on the lines marked LOOP-A and LOOP-B, which
 * the test script finds with grep. */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#define ITERS 3000

struct shared_pair {
	volatile long a;
	volatile long b;
} __attribute__((aligned(64)));

struct padded_pair {
	volatile long a;
	char pad[64 - sizeof(long)];
	volatile long b;
} __attribute__((aligned(64)));

struct shared_pair counters_shared;
struct padded_pair counters_padded;

/* The pointers and the barrier in lines of their own: only the counters
 * may be shared. */
static struct {
	volatile long *a, *b;
} ctr __attribute__((aligned(64)));
static pthread_barrier_t start __attribute__((aligned(64)));
static char after_start[64] __attribute__((aligned(64), used));

static void *worker_a(void *arg)
{
	pthread_barrier_wait(&start);
	for (int i = 0; i < ITERS; i++)
		(*ctr.a)++;	/* LOOP-A */
	return arg;
}

static void *worker_b(void *arg)
{
	pthread_barrier_wait(&start);
	for (int i = 0; i < ITERS; i++)
		(*ctr.b)++;	/* LOOP-B */
	return arg;
}

__attribute__((noinline)) int work(int padded)
{
	pthread_t ta, tb;

	if (padded) {
		ctr.a = &counters_padded.a;
		ctr.b = &counters_padded.b;
	} else {
		ctr.a = &counters_shared.a;
		ctr.b = &counters_shared.b;
	}
	pthread_barrier_init(&start, NULL, 2);
	if (pthread_create(&ta, NULL, worker_a, NULL) ||
	    pthread_create(&tb, NULL, worker_b, NULL))
		return 1;
	pthread_join(ta, NULL);
	pthread_join(tb, NULL);
	return *ctr.a != ITERS || *ctr.b != ITERS;
}

int main(int argc, char **argv)
{
	int padded = argc > 1 && !strcmp(argv[1], "padded");

	if (work(padded)) {
		fprintf(stderr, "falseshare: wrong counts\n");
		return 1;
	}
	return 0;
}
