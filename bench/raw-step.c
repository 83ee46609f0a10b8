/* The raw single-step loop cachetrace is measured against: fork PROG,
 * PTRACE_SINGLESTEP + waitpid + PTRACE_GETREGS from the first instruction
 * after exec to the exit, tracer and tracee pinned to one CPU, nothing
 * else.  Prints the number of steps and the rate.
 *
 *   raw-step PROG [ARGS...] */
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/ptrace.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: raw-step PROG [ARGS...]\n");
		return 2;
	}
	cpu_set_t one;
	CPU_ZERO(&one);
	CPU_SET(sched_getcpu(), &one);
	sched_setaffinity(0, sizeof(one), &one);	/* inherited by PROG */
	pid_t pid = fork();
	if (pid == 0) {
		ptrace(PTRACE_TRACEME, 0, NULL, NULL);
		execvp(argv[1], argv + 1);
		perror(argv[1]);
		_exit(127);
	}
	int status;
	waitpid(pid, &status, 0);	/* the exec SIGTRAP */
	unsigned long long steps = 0;
	struct user_regs_struct regs;
	double t0 = now();
	for (;;) {
		ptrace(PTRACE_SINGLESTEP, pid, NULL, NULL);
		if (waitpid(pid, &status, 0) < 0 || !WIFSTOPPED(status))
			break;
		ptrace(PTRACE_GETREGS, pid, NULL, &regs);
		steps++;
	}
	double t = now() - t0;
	printf("raw-step: %llu steps in %.3f s: %.1fk steps/s\n", steps, t,
	       steps / t / 1000);
	return 0;
}
