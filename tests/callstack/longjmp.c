/* longjmp out of three frames, four times: the frames must go, and the
 * costs after each jump belong to work() again, not to down3(). */
#include <setjmp.h>
#include <stdio.h>

static jmp_buf env;
static volatile long sink;

__attribute__((noinline)) static void down3(int n)
{
	sink += n;
	longjmp(env, n + 1);
}

__attribute__((noinline)) static void down2(int n) { down3(n); sink++; }
__attribute__((noinline)) static void down1(int n) { down2(n); sink++; }

__attribute__((noinline)) static long after_jump(long x)
{
	for (int i = 0; i < 10; i++)
		sink += x + i;
	return sink;
}

__attribute__((noinline)) long work(void)
{
	long r = 0;

	for (volatile int i = 0; i < 4; i++) {
		if (!setjmp(env))
			down1(i);
		r += after_jump(i);
	}
	return r;
}

int main(void)
{
	sink = work();
	printf("%ld\n", (long)sink);
	return 0;
}
