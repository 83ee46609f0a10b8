/* A target that checks its own computation (issue 28): round after round,
 * work() updates an array in place and the thread recomputes every element
 * from a copy taken before; a wrong value exits 1 at once, a stray signal
 * kills it.  rare() runs every 64 rounds; phase() (2000 rounds of work in
 * one call, checked after) once, PHASE_AT seconds in.
 *   verify SECONDS [PHASE_AT [THREADS]]: THREADS threads (default 1), each
 *   with its own array, for SECONDS or until a SIGUSR1; then "ok ROUNDS"
 *   and exit 0. */
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define N 512
#define K 6364136223846793005ull

struct arr {
	uint64_t a[N], prev[N];
};

static volatile uint64_t sink;
static volatile sig_atomic_t stop;

static void on_usr1(int sig)
{
	(void)sig;
	stop = 1;
}
static double secs, phase_at, t0;

__attribute__((noinline)) void work(struct arr *x, uint64_t r)
{
	for (unsigned i = 0; i < N; i++)
		x->a[i] = x->a[i] * K + r + i;
}

__attribute__((noinline)) void rare(uint64_t r)
{
	sink += r;
}

__attribute__((noinline)) void phase(struct arr *x)
{
	for (uint64_t r = 0; r < 2000; r++)
		work(x, r);
}

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void *run(void *arg)
{
	struct arr *x = arg;
	uint64_t r = 0;
	int phased = phase_at < 0;	/* negative: no phase() */
	for (unsigned i = 0; i < N; i++)
		x->a[i] = i * 7919;
	while (!stop && now() - t0 < secs) {
		memcpy(x->prev, x->a, sizeof(x->a));
		work(x, r);
		for (unsigned i = 0; i < N; i++)
			if (x->a[i] != x->prev[i] * K + r + i) {
				fprintf(stderr, "verify: wrong value in round "
					"%llu\n", (unsigned long long)r);
				exit(1);
			}
		if (r % 64 == 0)
			rare(r);
		if (!phased && now() - t0 >= phase_at) {
			phased = 1;
			memcpy(x->prev, x->a, sizeof(x->a));
			phase(x);
			for (uint64_t k = 0; k < 2000; k++)
				for (unsigned i = 0; i < N; i++)
					x->prev[i] = x->prev[i] * K + k + i;
			if (memcmp(x->prev, x->a, sizeof(x->a))) {
				fprintf(stderr, "verify: wrong value after "
					"phase()\n");
				exit(1);
			}
		}
		r++;
	}
	return (void *)(uintptr_t)r;
}

int main(int argc, char **argv)
{
	secs = argc > 1 ? atof(argv[1]) : 5;
	phase_at = argc > 2 ? atof(argv[2]) : 1;
	int n = argc > 3 ? atoi(argv[3]) : 1;
	pthread_t th[8];
	static struct arr arrs[8];
	t0 = now();
	signal(SIGUSR1, on_usr1);
	if (n < 1 || n > 8)
		n = 1;
	for (int i = 1; i < n; i++)
		pthread_create(&th[i], NULL, run, &arrs[i]);
	uint64_t rounds = (uintptr_t)run(&arrs[0]);
	for (int i = 1; i < n; i++) {
		void *r;
		pthread_join(th[i], &r);
		rounds += (uintptr_t)r;
	}
	printf("ok %llu\n", (unsigned long long)rounds);
	return 0;
}
