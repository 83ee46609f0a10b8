/* A region of ordinary integer C for the emulate engine's pace (issue 18):
 * work() inserts into and looks up an open-addressing hash table, merge
 * sorts an array and walks a binary tree, about 14M instructions per
 * round; main() sets up and runs ROUNDS rounds (argv[1], default 10).
 * No libc call inside work(): the libc-heavy case is bench/region-libc.c.
 *   cachetrace --start=work -- ./region 10
 *   valgrind --tool=cachegrind ./region 10     (the whole program) */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define HBITS 16
#define HSIZE (1u << HBITS)
#define NSORT 32768
#define NTREE 8192

static uint64_t keys[HSIZE];
static uint32_t vals[HSIZE];
static uint32_t sortbuf[NSORT], tmpbuf[NSORT];
static struct node {
	struct node *l, *r;
	uint32_t key, sum;
} nodes[NTREE];
static struct node *root;

static uint64_t hash64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	return x;
}

__attribute__((noinline)) static void ht_insert(uint64_t k, uint32_t v)
{
	uint32_t i = (uint32_t)hash64(k) & (HSIZE - 1);

	while (keys[i] && keys[i] != k)
		i = (i + 1) & (HSIZE - 1);
	keys[i] = k;
	vals[i] = v;
}

__attribute__((noinline)) static uint32_t ht_lookup(uint64_t k)
{
	uint32_t i = (uint32_t)hash64(k) & (HSIZE - 1);

	while (keys[i]) {
		if (keys[i] == k)
			return vals[i];
		i = (i + 1) & (HSIZE - 1);
	}
	return 0;
}

static void merge_sort(uint32_t *a, uint32_t *t, unsigned n)
{
	if (n < 2)
		return;
	unsigned h = n / 2;
	merge_sort(a, t, h);
	merge_sort(a + h, t, n - h);
	unsigned i = 0, j = h, k = 0;
	while (i < h && j < n)
		t[k++] = a[i] <= a[j] ? a[i++] : a[j++];
	while (i < h)
		t[k++] = a[i++];
	while (j < n)
		t[k++] = a[j++];
	for (k = 0; k < n; k++)
		a[k] = t[k];
}

static uint32_t tree_walk(const struct node *n)
{
	uint32_t s = 0;

	while (n) {
		s += n->key + tree_walk(n->l);
		n = n->r;
	}
	return s;
}

__attribute__((noinline)) uint64_t work(unsigned rounds)
{
	uint64_t s = 0, seed = 1;

	for (unsigned r = 0; r < rounds; r++) {
		for (unsigned i = 0; i < HSIZE / 2; i++)
			ht_insert(i * 2654435761u + r + 1, i);
		for (unsigned i = 0; i < HSIZE; i++)
			s += ht_lookup(i * 2654435761u + r + 1);
		for (unsigned i = 0; i < NSORT; i++) {
			seed = seed * 6364136223846793005ull + 1442695040888963407ull;
			sortbuf[i] = (uint32_t)(seed >> 33);
		}
		merge_sort(sortbuf, tmpbuf, NSORT);
		s += sortbuf[NSORT / 2] + tree_walk(root);
		for (unsigned i = 0; i < HSIZE; i++)
			keys[i] = 0;
	}
	return s;
}

int main(int argc, char **argv)
{
	unsigned rounds = argc > 1 ? (unsigned)atoi(argv[1]) : 10;

	/* A tree of NTREE nodes, keys inserted in a scrambled order. */
	for (unsigned i = 0; i < NTREE; i++) {
		struct node *n = &nodes[i], **p = &root;

		n->key = (uint32_t)(hash64(i) >> 40);
		while (*p)
			p = n->key < (*p)->key ? &(*p)->l : &(*p)->r;
		*p = n;
	}
	printf("%llu\n", (unsigned long long)work(rounds));
	return 0;
}
