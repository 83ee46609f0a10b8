/* Recursion shapes for the blame through recursion (issue 26): direct
 * recursion, mutual recursion (even <-> odd) and recursion inside the C
 * library (glibc's qsort sorts by merge sort, msort_with_tmp calling
 * itself).  Each shape has a leaf of its own that only that shape calls,
 * and main calls each shape's entry from one place: in the blame tree of
 * a leaf, every frame above the recursion must carry the leaf's whole
 * inclusive cost. */
#include <stdio.h>
#include <stdlib.h>

#define NOIPA __attribute__((noipa))

NOIPA int leaf_direct(int x)
{
	int s = 0;
	for (int i = 0; i < 40; i++)
		s += x ^ i;
	return s;
}

NOIPA int direct(int n)
{
	if (n == 0)
		return leaf_direct(0);
	int r = direct(n - 1);
	return leaf_direct(r ^ n);
}

NOIPA int leaf_mutual(int x)
{
	int s = 1;
	for (int i = 0; i < 30; i++)
		s = s * 3 + (x ^ i);
	return s;
}

NOIPA int odd(int n);

/* Only odd calls the leaf: its blame is leaf_mutual <- odd <- even <- main. */
NOIPA int even(int n)
{
	if (n == 0)
		return 1;
	return odd(n - 1) ^ n;
}

NOIPA int odd(int n)
{
	if (n == 0)
		return 0;
	int r = even(n - 1);
	return leaf_mutual(r + n);
}

NOIPA int cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;
	return (x > y) - (x < y);
}

static int arr[1000];

int main(void)
{
	int s = 0;
	for (int i = 0; i < 20; i++)
		s += direct(6 + i % 5);
	for (int i = 0; i < 20; i++)
		s += even(7 + i % 6);
	for (int i = 0; i < 1000; i++)
		arr[i] = (i * 7919) % 1000;
	qsort(arr, 1000, sizeof(*arr), cmp_int);
	printf("%d %d\n", s, arr[10]);
	return 0;
}
