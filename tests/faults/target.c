/* The target of the fault-injection tests: each mode one way a traced
 * program can behave badly or be harmed.  Built non-PIE -O2 -g.
 *   target mt N          N threads call handle_request in a hot loop (a
 *                        100 us sleep every 64 calls) until killed; the
 *                        main thread prints "ready" once all run
 *   target fork N        N times: handle_request, then fork a child that
 *                        calls handle_request and exits 7; prints each
 *                        child's fate ("child exit 7" or "child signal N")
 *   target spawn N       N times: handle_request, then posix_spawn
 *                        /bin/true (a vfork); prints "child exit 0"
 *   target exit CODE     work() exits with CODE
 *   target abort         work() calls abort()
 *   target segv          work() writes through a null pointer
 *   target threadexit N  N threads each call work_exit(), which calls
 *                        pthread_exit inside; then work() runs 3 times
 *   target raise         work() raises SIGTRAP (a handler counts it), then
 *                        prints "traps 1"
 *   target longjmp       work() longjmps out of itself 3 times; prints
 *                        "jumps 3"
 *   target loop          prints "ready", then calls work() every 10 ms
 *                        forever */
#include <pthread.h>
#include <spawn.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static volatile unsigned table[256];
static volatile sig_atomic_t traps;
static jmp_buf jb;
static volatile int mode_longjmp;
static volatile int *volatile null_ptr;

__attribute__((noinline)) unsigned handle_request(unsigned req)
{
	unsigned s = req * 2654435761u;
	for (unsigned i = 0; i < 50; i++) {
		s ^= s << 13;
		s ^= s >> 17;
		s ^= s << 5;
		table[i & 255] += s;
	}
	return s;
}

static const char *mode;
static int code;

__attribute__((noinline)) unsigned work(unsigned n)
{
	unsigned s = handle_request(n);
	if (!strcmp(mode, "exit"))
		exit(code);
	if (!strcmp(mode, "abort"))
		abort();
	if (!strcmp(mode, "segv"))
		*null_ptr = 1;
	if (!strcmp(mode, "raise"))
		raise(SIGTRAP);
	if (mode_longjmp)
		longjmp(jb, 1);
	return s + handle_request(s);
}

__attribute__((noinline)) void work_exit(void)
{
	handle_request(1);
	pthread_exit(NULL);
}

static void *hot(void *arg)
{
	unsigned n = (unsigned)(long)arg;
	for (unsigned i = 0;; i++) {
		handle_request(n + i);
		if ((i & 63) == 0)
			usleep(100);
	}
	return NULL;
}

static void *exiter(void *arg)
{
	(void)arg;
	work_exit();
	return NULL;
}

static void on_trap(int sig)
{
	(void)sig;
	traps++;
}

/* Reap child C and say how it ended. */
static void print_fate(pid_t c)
{
	int st;
	waitpid(c, &st, 0);
	if (WIFEXITED(st))
		printf("child exit %d\n", WEXITSTATUS(st));
	else
		printf("child signal %d\n", WTERMSIG(st));
}

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
	nanosleep(&ts, NULL);
}

int main(int argc, char **argv)
{
	if (argc < 2)
		return 2;
	mode = argv[1];
	int n = argc > 2 ? atoi(argv[2]) : 1;
	code = n;
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (!strcmp(mode, "mt")) {
		pthread_t t;
		for (int i = 0; i < n; i++)
			pthread_create(&t, NULL, hot, (void *)(long)i);
		printf("ready\n");
		for (;;)
			pause();
	}
	if (!strcmp(mode, "fork")) {
		for (int i = 0; i < n; i++) {
			handle_request(i);
			fflush(stdout);
			pid_t c = fork();
			if (c == 0) {
				handle_request(i);
				_exit(7);
			}
			print_fate(c);
		}
		return 0;
	}
	if (!strcmp(mode, "spawn")) {
		extern char **environ;
		char *args[] = { "true", NULL };
		for (int i = 0; i < n; i++) {
			handle_request(i);
			pid_t c;
			if (posix_spawn(&c, "/bin/true", NULL, NULL, args,
					environ) != 0)
				return 1;
			print_fate(c);
		}
		return 0;
	}
	if (!strcmp(mode, "threadexit")) {
		for (int i = 0; i < n; i++) {
			pthread_t t;
			pthread_create(&t, NULL, exiter, NULL);
			pthread_join(t, NULL);
		}
		for (int i = 0; i < 3; i++)
			work(i);
		printf("done\n");
		return 0;
	}
	if (!strcmp(mode, "raise")) {
		signal(SIGTRAP, on_trap);
		work(1);
		printf("traps %d\n", (int)traps);
		return 0;
	}
	if (!strcmp(mode, "longjmp")) {
		int jumps = 0;
		mode_longjmp = 1;
		for (int i = 0; i < 3; i++)
			if (setjmp(jb) == 0)
				work(i);
			else
				jumps++;
		mode_longjmp = 0;
		handle_request(99);
		printf("jumps %d\n", jumps);
		return 0;
	}
	if (!strcmp(mode, "loop")) {
		printf("ready\n");
		for (unsigned i = 0;; i++) {
			work(i);
			sleep_ms(10);
		}
	}
	return (int)(work(1) & 0) + (!strcmp(mode, "exit") ? 0 : 0);
}
