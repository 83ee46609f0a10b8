/* The bundled example: summing a 256x256 matrix of doubles (512 KiB, far
 * more than L1) by rows and by columns.  By rows, one D1 miss per 8
 * elements; by columns, one miss per element: the profile shows it. */
#include <stdio.h>

#define N 256
static double m[N][N];

__attribute__((noinline)) static double sum_rows(void)
{
	double s = 0;
	for (int i = 0; i < N; i++)
		for (int j = 0; j < N; j++)
			s += m[i][j];
	return s;
}

__attribute__((noinline)) static double sum_cols(void)
{
	double s = 0;
	for (int j = 0; j < N; j++)
		for (int i = 0; i < N; i++)
			s += m[i][j];
	return s;
}

__attribute__((noinline)) double compute(void)
{
	return sum_rows() + sum_cols();
}

int main(void)
{
	for (int i = 0; i < N; i++)
		for (int j = 0; j < N; j++)
			m[i][j] = i + j;
	printf("%.0f\n", compute());
	return 0;
}
