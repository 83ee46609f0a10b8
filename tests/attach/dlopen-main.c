/* dlopen.sh's driver: dlopen(LIB) (after FILE exists when a second
 * argument names one, for attaching first), call its foo_work, then
 * dlclose it when a third argument says "close", and do some more work
 * after.  With "fork" a child dlopen()s libm first (its copy of ld.so
 * must not keep our int3 on the loader's hook) and its status is
 * printed. */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: %s LIB [GO-FILE [close|fork]]\n",
			argv[0]);
		return 2;
	}
	if (argc > 2 && strcmp(argv[2], "-")) {
		printf("ready %d\n", getpid());
		fflush(stdout);
		struct timespec ts = { 0, 10 * 1000 * 1000 };
		for (int i = 0; i < 3000 && access(argv[2], F_OK); i++)
			nanosleep(&ts, NULL);
	}
	if (argc > 3 && !strcmp(argv[3], "fork")) {
		pid_t child = fork();
		if (child == 0)
			_exit(dlopen("libm.so.6", RTLD_NOW) ? 0 : 1);
		int status = -1;
		waitpid(child, &status, 0);
		printf("child status %d\n", status);
	}
	void *h = dlopen(argv[1], RTLD_NOW);
	if (!h) {
		fprintf(stderr, "dlopen: %s\n", dlerror());
		return 1;
	}
	uint64_t (*work)(unsigned) = (uint64_t (*)(unsigned))dlsym(h,
							       "foo_work");
	if (!work) {
		fprintf(stderr, "dlsym: %s\n", dlerror());
		return 1;
	}
	uint64_t r = work(3);
	if (argc > 3 && !strcmp(argv[3], "close"))
		dlclose(h);
	/* The second dlopen of the same library loads nothing: one more
	 * RT_CONSISTENT call of the loader hook. */
	void *again = dlopen("libm.so.6", RTLD_NOW);
	printf("result %llu %s\n", (unsigned long long)r,
	       again ? "libm" : "no libm");
	return 0;
}
