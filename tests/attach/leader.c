/* A process whose main thread leaves it early (pthread_exit after
 * DELAY seconds) while a worker calls work() until SECS have passed, then
 * prints "ok" and exits 0.  Its leader is then a zombie the kernel
 * reports only after the other threads are gone, and that cannot be
 * seized: what cachetrace and its guardian must not wait on forever nor
 * count as a thread they took back.
 *   leader SECS DELAY */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static volatile long sink;

__attribute__((noinline)) long work(long n)
{
	long s = 0;
	for (long i = 0; i < n; i++)
		s += i * i ^ (s >> 3);
	return s;
}

static void *loop(void *arg)
{
	double secs = atof(arg);
	struct timespec t0, t;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		sink += work(100000);
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while ((t.tv_sec - t0.tv_sec) + (t.tv_nsec - t0.tv_nsec) / 1e9 < secs);
	printf("ok\n");
	fflush(stdout);
	exit(0);
}

int main(int argc, char **argv)
{
	if (argc < 3)
		return 2;
	pthread_t th;
	if (pthread_create(&th, NULL, loop, argv[1]))
		return 1;
	usleep((useconds_t)(atof(argv[2]) * 1e6));
	pthread_exit(NULL);
}
