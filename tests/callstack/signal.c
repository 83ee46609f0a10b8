/* A signal handler runs inside the window (raise() delivers it before
 * returning): its costs sit under the interrupted frames, and once it has
 * returned through sigreturn the costs are work()'s again. */
#include <signal.h>
#include <stdio.h>

static volatile long sink;

__attribute__((noinline)) static long in_handler(long x)
{
	for (int i = 0; i < 10; i++)
		sink += x + i;
	return sink;
}

static void handler(int sig)
{
	sink += in_handler(sig);
}

__attribute__((noinline)) static long after_signal(long x)
{
	for (int i = 0; i < 10; i++)
		sink += x * i;
	return sink;
}

__attribute__((noinline)) long work(void)
{
	long r = 0;

	for (int i = 0; i < 3; i++) {
		raise(SIGUSR1);
		r += after_signal(i);
	}
	return r;
}

int main(void)
{
	signal(SIGUSR1, handler);
	sink = work();
	printf("%ld\n", (long)sink);
	return 0;
}
