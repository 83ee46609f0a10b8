/* Two threads, each incrementing a counter (lock add: one read-modify-
 * write).  "shared": their two counters sit in one 64-byte line (false
 * sharing: each write takes the line from the other core, and the other's
 * next access misses on bytes nobody else wrote); "padded": a line each
 * (no coherence misses in the loops); "true": both increment the same
 * counter (true sharing).  The increments are on the lines marked LOOP-A
 * and LOOP-B, which the test script finds with grep.  "plain": as
 * "shared", with plain increments (a load and a store each, on the lines
 * PLAIN-A and PLAIN-B), which the instrument engine runs from its code
 * cache where it steps a locked one: only its turns interleave them. */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#define ITERS 3000

struct shared_pair {
	long a;
	long b;
} __attribute__((aligned(64)));

struct padded_pair {
	long a;
	char pad[64 - sizeof(long)];
	long b;
} __attribute__((aligned(64)));

struct shared_pair counters_shared;
struct padded_pair counters_padded;

/* The pointers and the barrier in lines of their own: only the counters
 * may be shared. */
static struct {
	long *a, *b;
} ctr __attribute__((aligned(64)));
static pthread_barrier_t start __attribute__((aligned(64)));
static char after_start[64] __attribute__((aligned(64), used));
static int plain;

static void *worker_a(void *arg)
{
	pthread_barrier_wait(&start);
	if (plain)
		for (int i = 0; i < ITERS; i++)
			(*(volatile long *)ctr.a)++;		/* PLAIN-A */
	else
		for (int i = 0; i < ITERS; i++)
			__atomic_fetch_add(ctr.a, 1, __ATOMIC_RELAXED); /* LOOP-A */
	return arg;
}

static void *worker_b(void *arg)
{
	pthread_barrier_wait(&start);
	if (plain)
		for (int i = 0; i < ITERS; i++)
			(*(volatile long *)ctr.b)++;		/* PLAIN-B */
	else
		for (int i = 0; i < ITERS; i++)
			__atomic_fetch_add(ctr.b, 1, __ATOMIC_RELAXED); /* LOOP-B */
	return arg;
}

/* MODE: 0 shared, 1 padded, 2 true. */
__attribute__((noinline)) int work(int mode)
{
	pthread_t ta, tb;

	if (mode == 2) {
		ctr.a = &counters_shared.a;
		ctr.b = &counters_shared.a;
	} else if (mode == 1) {
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
	if (mode == 2)
		return *ctr.a != 2 * ITERS;
	return *ctr.a != ITERS || *ctr.b != ITERS;
}

int main(int argc, char **argv)
{
	int mode = argc < 2 ? 0 : !strcmp(argv[1], "padded") ? 1 :
		!strcmp(argv[1], "true") ? 2 : 0;
	plain = argc > 1 && !strcmp(argv[1], "plain");

	if (work(mode)) {
		fprintf(stderr, "falseshare: wrong counts\n");
		return 1;
	}
	return 0;
}
