/* Signals delivered inside the region: work() raises SIGUSR1 three times;
 * the handler must be traced like any code and the program's result must
 * be unchanged. */
#include <signal.h>
#include <stdio.h>
#include <string.h>

static volatile unsigned hits, acc;

__attribute__((noinline)) static void on_usr1(int sig)
{
	for (int i = 0; i < 100; i++)
		acc += (unsigned)sig * i;
	hits++;
}

__attribute__((noinline)) unsigned work(void)
{
	unsigned s = 0;
	for (int r = 0; r < 3; r++) {
		for (int i = 0; i < 500; i++)
			s += i ^ r;
		raise(SIGUSR1);
	}
	return s;
}

int main(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_usr1;
	sigaction(SIGUSR1, &sa, NULL);
	unsigned s = work();
	printf("hits %u acc %u s %u\n", hits, acc, s);
	return hits == 3 ? 0 : 1;
}
