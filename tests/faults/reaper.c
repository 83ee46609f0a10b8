/* reaper CMD ARGS...: run CMD as a child subreaper, so that the fate of
 * every process it leaves behind (a launched target whose cachetrace was
 * killed) can be seen: for each descendant that ends, one line
 * "PID exit N" or "PID signal N[ core]" on stderr; CMD's own line is
 * "cmd exit N" / "cmd signal N".  Exits when every descendant is gone. */
#include <errno.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	if (argc < 2 || prctl(PR_SET_CHILD_SUBREAPER, 1) < 0)
		return 2;
	pid_t cmd = fork();
	if (cmd == 0) {
		execvp(argv[1], argv + 1);
		_exit(127);
	}
	int st;
	pid_t p;
	while ((p = wait(&st)) > 0 || errno == EINTR) {
		if (p <= 0)
			continue;
		char who[32];
		if (p == cmd)
			snprintf(who, sizeof(who), "cmd");
		else
			snprintf(who, sizeof(who), "%d", p);
		if (WIFEXITED(st))
			fprintf(stderr, "%s exit %d\n", who, WEXITSTATUS(st));
		else
			fprintf(stderr, "%s signal %d%s\n", who, WTERMSIG(st),
				WCOREDUMP(st) ? " core" : "");
	}
	return 0;
}
