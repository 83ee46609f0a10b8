/* The "A && B" / "A || B" idiom VEX merges with chasing on (valgrind's
 * default): a conditional branch whose other side is a short
 * register-only block ending in a second conditional branch to the same
 * place.  Cachegrind then counts the second block's instructions every
 * time the first branch runs, taken or not, and no Bc for the first
 * branch (src/decode/chase.c). */
#include <stdio.h>

static volatile long sink;

__attribute__((noinline)) static void hit(long i)
{
	sink += i;
}

/* Outcomes vary with i, so both sides of both branches run. */
__attribute__((noinline)) static long both(const int *a, int n)
{
	long c = 0;
	for (int i = 0; i < n; i++) {
		int x = a[i];
		if (x > 3 && x < 9) {
			hit(i);
			c += 2;
		}
		if (x == 1 || x == 6) {
			hit(-i);
			c++;
		}
	}
	return c;
}

__attribute__((noinline)) static long work(void)
{
	int a[200];
	for (int i = 0; i < 200; i++)
		a[i] = (i * 7 + i / 3) % 10;
	return both(a, 200) + both(a + 50, 100);
}

int main(void)
{
	printf("%ld\n", work());
	return 0;
}
