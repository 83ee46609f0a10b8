/* dlopen.sh's threaded driver: two threads dlopen and dlclose libm in a
 * loop (every one a pair of loader-hook hits, while the others run), and
 * a third dlopen()s LIB and calls its foo_work(3). */
#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>

static atomic_int stop;
static const char *lib;

static void *churn(void *arg)
{
	(void)arg;
	while (!atomic_load(&stop)) {
		void *h = dlopen("libm.so.6", RTLD_NOW);
		if (h)
			dlclose(h);
	}
	return NULL;
}

static void *loader(void *arg)
{
	(void)arg;
	void *h = dlopen(lib, RTLD_NOW);
	if (!h) {
		fprintf(stderr, "dlopen: %s\n", dlerror());
		return NULL;
	}
	uint64_t (*work)(unsigned) = (uint64_t (*)(unsigned))dlsym(h,
							       "foo_work");
	if (work)
		printf("result %llu\n", (unsigned long long)work(3));
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t a, b, c;
	if (argc != 2) {
		fprintf(stderr, "usage: %s LIB\n", argv[0]);
		return 2;
	}
	lib = argv[1];
	if (pthread_create(&a, NULL, churn, NULL) ||
	    pthread_create(&b, NULL, churn, NULL))
		return 1;
	for (volatile int i = 0; i < 1000000; i++)
		;
	if (pthread_create(&c, NULL, loader, NULL))
		return 1;
	pthread_join(c, NULL);
	atomic_store(&stop, 1);
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	return 0;
}
