/* A target for the tracer tests: prints a checksum computed by work(),
 * called ARGV[1] times (default 3), sleeping ARGV[2] ms before each call. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static volatile unsigned data[4096];

__attribute__((noinline)) unsigned work(unsigned seed)
{
	unsigned s = seed;
	for (unsigned i = 0; i < 2000; i++) {
		data[(i * 17) & 4095] += s;
		s = s * 1103515245u + 12345u;
	}
	return s;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 3;
	long ms = argc > 2 ? atol(argv[2]) : 0;
	unsigned sum = 0;
	for (int i = 0; i < n; i++) {
		if (ms) {
			struct timespec ts = { ms / 1000, (ms % 1000) * 1000000 };
			nanosleep(&ts, NULL);
		}
		sum += work(i);
	}
	printf("checksum %u\n", sum);
	return 0;
}
