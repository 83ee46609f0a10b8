/* Pointer chasing through a linked list whose order is a fixed-seed
 * shuffle of 2048 nodes, one node per 64-byte line (128 KiB): every hop
 * is a dependent load from a random line. setup() builds the list outside
 * the region work() measures. */
#include <stdio.h>

#define NODES	2048

struct node {
	struct node *next;
	long value;
	char pad[48];
};

static struct node nodes[NODES] __attribute__((aligned(64)));
static unsigned order[NODES];
static volatile long sink;

/* A small LCG so the shuffle is the same everywhere (no libc rand). */
static unsigned lcg(unsigned *state)
{
	*state = *state * 1103515245u + 12345u;
	return *state >> 8;
}

__attribute__((noinline)) static void setup(void)
{
	unsigned seed = 42;

	for (unsigned i = 0; i < NODES; i++)
		order[i] = i;
	for (unsigned i = NODES - 1; i > 0; i--) {
		unsigned j = lcg(&seed) % (i + 1);
		unsigned t = order[i];

		order[i] = order[j];
		order[j] = t;
	}
	for (unsigned i = 0; i < NODES; i++) {
		nodes[order[i]].next = &nodes[order[(i + 1) % NODES]];
		nodes[order[i]].value = i;
	}
}

__attribute__((noinline)) static long chase(const struct node *n, unsigned hops)
{
	long s = 0;

	while (hops--) {
		s += n->value;
		n = n->next;
	}
	return s;
}

__attribute__((noinline)) long work(void)
{
	/* Twice round the list: the second lap misses too (128 KiB > L1). */
	return chase(&nodes[order[0]], 2 * NODES);
}

int main(void)
{
	setup();
	sink = work();
	printf("%ld\n", (long)sink);
	return 0;
}
