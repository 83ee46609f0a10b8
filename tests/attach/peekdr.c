/* peekdr PID: attach to every thread of PID for a moment and check that
 * its DR7 is 0 (no debug register left enabled); detach. Exit 0 when all
 * are clear, 1 (naming the thread and its DR7) otherwise, 2 on error.
 * peekdr --hold PID: seize PID (it keeps running) and stay its tracer
 * until killed: "already traced by another debugger". */
#include <dirent.h>
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>

static int peek_one(pid_t tid, unsigned long *dr7)
{
	int status;

	if (ptrace(PTRACE_SEIZE, tid, 0, 0) < 0)
		return errno == ESRCH ? 1 : -1;
	if (ptrace(PTRACE_INTERRUPT, tid, 0, 0) < 0 ||
	    waitpid(tid, &status, __WALL) < 0)
		return -1;
	/* A signal-delivery stop may come first: pass it on later. */
	while (WIFSTOPPED(status) && (status >> 16) != PTRACE_EVENT_STOP) {
		if (ptrace(PTRACE_CONT, tid, 0, WSTOPSIG(status)) < 0 ||
		    waitpid(tid, &status, __WALL) < 0)
			return -1;
	}
	if (!WIFSTOPPED(status))
		return 1;	/* it exited */
	errno = 0;
	*dr7 = (unsigned long)ptrace(PTRACE_PEEKUSER, tid,
			offsetof(struct user, u_debugreg[7]), 0);
	if (errno)
		return -1;
	ptrace(PTRACE_DETACH, tid, 0, 0);
	return 0;
}

int main(int argc, char **argv)
{
	char path[64];
	struct dirent *d;
	DIR *dir;
	int bad = 0, seen = 0;

	if (argc == 3 && !strcmp(argv[1], "--hold")) {
		pid_t pid = atoi(argv[2]);

		if (ptrace(PTRACE_SEIZE, pid, 0, 0) < 0) {
			perror("PTRACE_SEIZE");
			return 2;
		}
		printf("holding %d\n", pid);
		fflush(stdout);
		for (;;)
			pause();
	}
	if (argc != 2) {
		fprintf(stderr, "usage: peekdr PID | peekdr --hold PID\n");
		return 2;
	}
	snprintf(path, sizeof(path), "/proc/%s/task", argv[1]);
	dir = opendir(path);
	if (!dir) {
		perror(path);
		return 2;
	}
	while ((d = readdir(dir))) {
		unsigned long dr7 = 0;
		pid_t tid = atoi(d->d_name);
		int r;

		if (tid <= 0)
			continue;
		r = peek_one(tid, &dr7);
		if (r < 0) {
			fprintf(stderr, "thread %d: %s\n", tid, strerror(errno));
			return 2;
		}
		if (r > 0)
			continue;
		seen++;
		if (dr7) {
			printf("thread %d: DR7 = %#lx\n", tid, dr7);
			bad = 1;
		}
	}
	closedir(dir);
	if (!seen) {
		fprintf(stderr, "no thread of %s seen\n", argv[1]);
		return 2;
	}
	return bad;
}
