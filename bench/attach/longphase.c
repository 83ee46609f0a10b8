/* A target with a long native phase: each "r" line on stdin runs a fixed
 * amount of arithmetic (calibrated at start to about 2 s) and prints its
 * wall time in microseconds; "e" calls event() (the start event the
 * attached cachetrace waits for) and ends. */
#include <stdio.h>
#include <time.h>

static volatile unsigned sink;

__attribute__((noinline)) unsigned event(unsigned x)
{
	return x * 3 + 1;
}

__attribute__((noinline)) static unsigned crunch(unsigned long n)
{
	unsigned s = 1;

	for (unsigned long i = 0; i < n; i++)
		s = s * 1103515245u + 12345u;
	return s;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(void)
{
	unsigned long n = 100000000;
	char line[16];
	double t;

	t = now();
	sink = crunch(n);
	n = (unsigned long)(n * 2.0 / (now() - t));
	printf("calibrated %lu\n", n);
	fflush(stdout);
	while (fgets(line, sizeof(line), stdin)) {
		if (line[0] == 'e') {
			sink = event(sink);
			break;
		}
		t = now();
		sink = crunch(n);
		printf("%.0f\n", (now() - t) * 1e6);
		fflush(stdout);
	}
	return 0;
}
