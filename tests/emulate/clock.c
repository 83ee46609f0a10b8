/* The vDSO's clock in a window (tests/emulate/vvar.sh): N calls of
 * clock_gettime(CLOCK_MONOTONIC), each checked not to go back, and the
 * real-time clock checked against time(2); prints "bad 0" when all held. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
__attribute__((noinline)) long work(int n) {
	struct timespec a, b; long bad = 0;
	clock_gettime(CLOCK_MONOTONIC, &a);
	for (int i = 0; i < n; i++) {
		clock_gettime(CLOCK_MONOTONIC, &b);
		if (b.tv_sec < a.tv_sec || (b.tv_sec == a.tv_sec && b.tv_nsec < a.tv_nsec)) bad++;
		a = b;
	}
	struct timespec r; clock_gettime(CLOCK_REALTIME, &r);
	time_t now = time(NULL);
	if (r.tv_sec < now - 1 || r.tv_sec > now + 1) bad += 1000;
	return bad;
}
int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 2000;
	printf("bad %ld\n", work(n));
	return 0;
}
