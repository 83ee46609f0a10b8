/* A target for the terminal tests (tty.py).
 *   rounds N R:   R rounds of work(N), each followed by a line
 *                 "workround K" on stdout (the progress line must never
 *                 be left under it);
 *   rounds serve: tick() every 10 ms until killed; never() is never
 *                 called (a start event that does not come). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static volatile unsigned sink;

__attribute__((noinline)) unsigned work(unsigned n)
{
	unsigned s = n;
	for (unsigned i = 0; i < n; i++)
		s = s * 1103515245u + 12345u;
	return s;
}

__attribute__((noinline)) void tick(void)
{
	sink += work(100);
}

__attribute__((noinline)) void never(void)
{
	sink = 0;
}

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "serve")) {
		struct timespec ts = { 0, 10 * 1000 * 1000 };
		for (;;) {
			nanosleep(&ts, NULL);
			tick();
		}
	}
	unsigned n = argc > 1 ? (unsigned)atoi(argv[1]) : 1000;
	int rounds = argc > 2 ? atoi(argv[2]) : 3;
	for (int r = 0; r < rounds; r++) {
		sink += work(n);
		printf("workround %d\n", r);
		fflush(stdout);
	}
	if (sink == 1)
		never();
	return 0;
}
