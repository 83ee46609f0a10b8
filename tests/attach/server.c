/* A target for the attach tests: a server that handles requests.
 *   server            requests from stdin, one a line: "h N" handler(N),
 *                     "s N" spin(N) (long: hundreds of millions of
 *                     steps, seconds at the fastest engine);
 *                     after each, prints the running checksum
 *   server -t MS N    N requests handler(0..N-1), one every MS ms
 * handler() runs the same instructions for every request: a fixed loop,
 * no data-dependent branch, no call, no rep string instruction. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static volatile unsigned table[256];

__attribute__((noinline)) unsigned handler(unsigned req)
{
	unsigned s = req * 2654435761u;

	for (unsigned i = 0; i < 300; i++) {
		s ^= s << 13;
		s ^= s >> 17;
		s ^= s << 5;
		table[i & 255] += s;
	}
	return s;
}

__attribute__((noinline)) unsigned spin(unsigned req)
{
	unsigned s = req;

	for (unsigned i = 0; i < 300000000; i++)
		s = s * 1103515245u + 12345u;
	return s;
}

__attribute__((noinline)) void report(unsigned n, unsigned sum)
{
	printf("request %u checksum %u\n", n, sum);
	fflush(stdout);
}

int main(int argc, char **argv)
{
	unsigned sum = 0, n = 0;
	char line[64];

	if (argc > 3 && !strcmp(argv[1], "-t")) {
		long ms = atol(argv[2]);
		unsigned count = (unsigned)atol(argv[3]);
		struct timespec ts = { ms / 1000, (ms % 1000) * 1000000 };

		for (n = 0; n < count; n++) {
			if (ms)
				nanosleep(&ts, NULL);
			sum += handler(n);
			report(n, sum);
		}
		return 0;
	}
	while (fgets(line, sizeof(line), stdin)) {
		unsigned arg = (unsigned)atol(line + 1);

		if (line[0] == 'h')
			sum += handler(arg);
		else if (line[0] == 's')
			sum += spin(arg);
		else
			continue;
		report(n++, sum);
	}
	return 0;
}
