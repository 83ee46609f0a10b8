/* Two-thread targets for the attach tests.
 *   threads alt N [-w]  two threads call work() N times each, strictly
 *                       taking turns (no two calls overlap); with -w the
 *                       threads exist but start only after a line on stdin
 *   threads mutex       thread B holds a mutex for 300 ms while the main
 *                       thread calls locked_work(), which waits for it
 *   threads all         main calls fa(), which wakes B (pipe) and waits
 *                       for it; B runs fb() meanwhile
 * work, fa and fb run the same instructions on every call. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static volatile unsigned sink[64];
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static int turn, go, held;
static int calls;
static unsigned sum;
static int p1[2], p2[2];

__attribute__((noinline)) unsigned work(unsigned seed)
{
	unsigned s = seed | 1;

	for (unsigned i = 0; i < 100; i++) {
		s = s * 1103515245u + 12345u;
		sink[i & 63] += s >> 7;
	}
	return s;
}

__attribute__((noinline)) unsigned fb(unsigned seed)
{
	unsigned s = seed;

	for (unsigned i = 0; i < 50; i++)
		s = (s ^ (s >> 3)) * 2654435761u;
	return s;
}

__attribute__((noinline)) void fa(void)
{
	char c = 'x';

	if (write(p1[1], &c, 1) != 1 || read(p2[0], &c, 1) != 1)
		abort();
}

__attribute__((noinline)) unsigned locked_work(void)
{
	unsigned s;

	pthread_mutex_lock(&lock);
	s = work(7);
	pthread_mutex_unlock(&lock);
	return s;
}

static void *alt_thread(void *arg)
{
	int me = (int)(long)arg;

	pthread_mutex_lock(&lock);
	while (!go)
		pthread_cond_wait(&cond, &lock);
	for (;;) {
		while (turn != me && calls > 0)
			pthread_cond_wait(&cond, &lock);
		if (calls == 0)
			break;
		sum += work((unsigned)calls);
		calls--;
		turn = !me;
		pthread_cond_broadcast(&cond);
	}
	pthread_mutex_unlock(&lock);
	return NULL;
}

static void *mutex_thread(void *arg)
{
	struct timespec ts = { 0, 300 * 1000000 };

	pthread_mutex_lock(&lock);
	__atomic_store_n(&held, 1, __ATOMIC_SEQ_CST);
	nanosleep(&ts, NULL);
	pthread_mutex_unlock(&lock);
	return arg;
}

static void *all_thread(void *arg)
{
	char c;
	unsigned s;

	if (read(p1[0], &c, 1) != 1)
		abort();
	s = fb(3);
	sum += s;
	if (write(p2[1], &c, 1) != 1)
		abort();
	return arg;
}

int main(int argc, char **argv)
{
	pthread_t t[2];
	const char *mode = argc > 1 ? argv[1] : "";

	if (!strcmp(mode, "alt")) {
		calls = 2 * (argc > 2 ? atoi(argv[2]) : 3);
		for (long i = 0; i < 2; i++)
			pthread_create(&t[i], NULL, alt_thread, (void *)i);
		if (argc > 3 && !strcmp(argv[3], "-w")) {
			char line[16];

			printf("ready\n");
			fflush(stdout);
			if (!fgets(line, sizeof(line), stdin))
				return 1;
		}
		pthread_mutex_lock(&lock);
		go = 1;
		pthread_cond_broadcast(&cond);
		pthread_mutex_unlock(&lock);
		for (int i = 0; i < 2; i++)
			pthread_join(t[i], NULL);
	} else if (!strcmp(mode, "mutex")) {
		struct timespec ts = { 0, 1000000 };

		pthread_create(&t[0], NULL, mutex_thread, NULL);
		while (!__atomic_load_n(&held, __ATOMIC_SEQ_CST))
			nanosleep(&ts, NULL);
		sum = locked_work();
		pthread_join(t[0], NULL);
	} else if (!strcmp(mode, "all")) {
		if (pipe(p1) || pipe(p2))
			return 1;
		pthread_create(&t[0], NULL, all_thread, NULL);
		fa();
		pthread_join(t[0], NULL);
	} else {
		fprintf(stderr, "usage: threads alt N [-w] | mutex | all\n");
		return 2;
	}
	printf("%s checksum %u\n", mode, sum);
	return 0;
}
