/* fork: parent and child each call work() once; each prints its pid.
 * forker exec PROG ARGS...: print our pid, then exec PROG.
 * forker vfork PROG ARGS...: vfork a child that execs PROG; print its pid. */
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static volatile unsigned sink[64];

__attribute__((noinline)) unsigned work(unsigned seed)
{
	unsigned s = seed | 1;

	for (unsigned i = 0; i < 120; i++) {
		s = s * 1103515245u + 12345u;
		sink[i & 63] += s >> 5;
	}
	return s;
}

int main(int argc, char **argv)
{
	pid_t child;
	int status;

	if (argc > 2 && !strcmp(argv[1], "exec")) {
		printf("exec %d\n", (int)getpid());
		fflush(stdout);
		execv(argv[2], argv + 2);
		perror(argv[2]);
		return 1;
	}
	if (argc > 2 && !strcmp(argv[1], "vfork")) {
		child = vfork();
		if (child == 0) {
			execv(argv[2], argv + 2);
			_exit(127);
		}
		if (child < 0 || waitpid(child, &status, 0) != child)
			return 1;
		printf("vforked %d\n", (int)child);
		return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
	}
	fflush(stdout);
	child = fork();
	if (child < 0)
		return 1;
	printf("%s %d work %u\n", child ? "parent" : "child", (int)getpid(),
	       work(child ? 1 : 2));
	fflush(stdout);
	if (!child)
		return 0;
	if (waitpid(child, &status, 0) != child || !WIFEXITED(status))
		return 1;
	return WEXITSTATUS(status);
}
