/* A target for the native engine's tests (gated.sh): windows whose counts
 * are known, between phases outside them that are much larger.
 *   gated pages N...    window(N) for each N: N fresh pages written;
 *                       3000 fresh pages before the first, 1000 after
 *   gated deep D        deep(D): 2 fresh pages per level of a recursion
 *                       D deep (the window is the outermost call)
 *   gated spin MS       outside(3 MS), timed(MS), outside(3 MS): busy
 *                       loops of MS ms of this thread's CPU time; prints
 *                       timed()'s own CPU time in ns
 *   gated hot           outside(), work() = hot() 9 parts, cold() 1 part,
 *                       outside()
 *   gated thread N M    window_thread(): N pages here, and M in a thread
 *                       it starts and joins
 *   gated sleep S N     sleep S seconds (time to attach), then window(N)
 *   gated busy N        busy(N): N iterations of a loop in user space
 * It prints "done" last. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

static volatile unsigned long sink;

static char *fresh(long pages)
{
	char *p = mmap(NULL, 4096 * pages, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED) {
		perror("mmap");
		exit(1);
	}
	return p;
}

__attribute__((noinline)) static void write_pages(char *p, long n)
{
	for (long i = 0; i < n; i++)
		p[i * 4096] = 1;
}

__attribute__((noinline)) void window(char *p, long n)
{
	write_pages(p, n);
}

__attribute__((noinline)) void deep(char *p, int d)
{
	p[0] = 1;
	if (d > 1)
		deep(p + 2 * 4096, d - 1);
	p[4096] = 1;
}

static double cpu_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

__attribute__((noinline)) void outside(double ms)
{
	double end = cpu_ns() + ms * 1e6;
	while (cpu_ns() < end)
		sink++;
}

__attribute__((noinline)) void timed(double ms)
{
	double end = cpu_ns() + ms * 1e6;
	while (cpu_ns() < end)
		sink++;
}

__attribute__((noinline)) void hot(long n)
{
	for (long i = 0; i < n; i++)
		sink += i * 3;
}

__attribute__((noinline)) void cold(long n)
{
	for (long i = 0; i < n; i++)
		sink += i;
}

__attribute__((noinline)) void work(long n)
{
	hot(9 * n);
	cold(n);
}

__attribute__((noinline)) void spin(long n)
{
	for (long i = 0; i < n; i++)
		sink ^= i;
}

__attribute__((noinline)) void busy(long n)
{
	for (long i = 0; i < n; i++)
		sink += i;
}

static long thread_pages;

static void *toucher(void *arg)
{
	write_pages(arg, thread_pages);
	return NULL;
}

__attribute__((noinline)) void window_thread(char *p, long n, char *q)
{
	pthread_t th;
	write_pages(p, n);
	if (pthread_create(&th, NULL, toucher, q) || pthread_join(th, NULL))
		exit(1);
}

/* The stack the windows will use, written now: no fault of it in them. */
__attribute__((noinline)) static void prefault_stack(void)
{
	volatile char buf[256 * 1024];
	for (size_t i = 0; i < sizeof(buf); i += 4096)
		buf[i] = 0;
}

int main(int argc, char **argv)
{
	if (argc < 2)
		return 2;
	prefault_stack();
	const char *mode = argv[1];
	if (!strcmp(mode, "pages")) {
		write_pages(fresh(3000), 3000);
		for (int i = 2; i < argc; i++) {
			long n = atol(argv[i]);
			window(fresh(n), n);
		}
		write_pages(fresh(1000), 1000);
	} else if (!strcmp(mode, "deep") && argc > 2) {
		int d = atoi(argv[2]);
		write_pages(fresh(3000), 3000);
		deep(fresh(2L * d), d);
	} else if (!strcmp(mode, "spin") && argc > 2) {
		double ms = atof(argv[2]);
		outside(3 * ms);
		double t0 = cpu_ns();
		timed(ms);
		double t1 = cpu_ns();
		outside(3 * ms);
		printf("timed %.0f\n", t1 - t0);
	} else if (!strcmp(mode, "hot")) {
		spin(20000000);
		work(20000000);
		spin(20000000);
	} else if (!strcmp(mode, "thread") && argc > 3) {
		long n = atol(argv[2]);
		thread_pages = atol(argv[3]);
		window_thread(fresh(n), n, fresh(thread_pages));
	} else if (!strcmp(mode, "busy") && argc > 2) {
		busy(atol(argv[2]));
	} else if (!strcmp(mode, "sleep") && argc > 3) {
		long n = atol(argv[3]);
		char *p = fresh(n);
		sleep((unsigned)atoi(argv[2]));
		window(p, n);
	} else {
		return 2;
	}
	printf("done\n");
	return 0;
}
