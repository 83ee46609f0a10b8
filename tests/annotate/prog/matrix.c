/* Cross-check program: a column-wise walk (D1 misses), a row-wise walk and
 * a data-dependent branch, in separate functions. */
#include <stdio.h>

#define N 256
static int m[N][N];

static long by_rows(void)
{
	long s = 0;
	for (int i = 0; i < N; i++)
		for (int j = 0; j < N; j++)
			s += m[i][j];
	return s;
}

static long by_cols(void)
{
	long s = 0;
	for (int j = 0; j < N; j++)
		for (int i = 0; i < N; i++)
			s += m[i][j];
	return s;
}

static int odd_ones(void)
{
	int c = 0;
	for (int i = 0; i < N * N; i++)
		if ((m[i / N][i % N] * 2654435761u) >> 31)
			c++;
	return c;
}

int main(void)
{
	for (int i = 0; i < N; i++)
		for (int j = 0; j < N; j++)
			m[i][j] = i * 31 + j;
	printf("%ld %ld %d\n", by_rows(), by_cols(), odd_ones());
	return 0;
}
