/* Launching the target: execvp's PATH search done by us (so that a
 * missing program is an error before anything is forked), fork, stop,
 * PTRACE_SEIZE, exec; and at the end killing or reaping it. */
#include "tracer.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <stdnoreturn.h>
#include <sys/personality.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "error.h"

char *launch_find_program(const char *prog)
{
	struct stat st;
	if (strchr(prog, '/')) {
		if (stat(prog, &st) < 0)
			perror_msg("%s", prog);
		else if (S_ISDIR(st.st_mode))
			error_msg("%s: is a directory", prog);
		else if (access(prog, X_OK) < 0)
			error_msg("%s: not executable", prog);
		else
			return xstrdup(prog);
		return NULL;
	}
	const char *path = getenv("PATH");
	if (!path)
		path = "/usr/bin:/bin";
	bool found_non_exec = false;
	for (const char *p = path; ; ) {
		/* An empty element is the current directory, as for
		 * execvp. */
		const char *colon = strchrnul(p, ':');
		char *cand = colon == p ? xasprintf("./%s", prog)
					: xasprintf("%.*s/%s", (int)(colon - p),
						    p, prog);
		if (stat(cand, &st) == 0 && S_ISREG(st.st_mode)) {
			if (access(cand, X_OK) == 0)
				return cand;
			found_non_exec = true;
		}
		free(cand);
		if (!*colon)
			break;
		p = colon + 1;
	}
	error_msg(found_non_exec ? "%s: not executable"
				 : "%s: command not found in PATH", prog);
	return NULL;
}

int launch_check_elf(const char *path, const char *what)
{
	unsigned char h[20];
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n = fd < 0 ? -1 : read(fd, h, sizeof(h));
	if (fd >= 0)
		close(fd);
	if (n < 4 || memcmp(h, ELFMAG, SELFMAG))
		return 0;	/* a script: its interpreter is checked by exec */
	unsigned machine = n >= 20 ? h[18] | h[19] << 8 : 0;
	if (n < 20 || h[EI_CLASS] != ELFCLASS64 || machine != EM_X86_64) {
		error_msg("%s is a %s ELF file (machine %u): cachetrace traces "
			  "x86-64 programs only", what,
			  n >= 20 && h[EI_CLASS] == ELFCLASS32 ? "32-bit"
							      : "non-x86-64",
			  machine);
		return -1;
	}
	return 0;
}

long launch_trace_options(const struct tracer *tr)
{
	long opts = PTRACE_O_TRACEEXEC | PTRACE_O_TRACEEXIT |
		    PTRACE_O_TRACECLONE;
	/* Forks are followed to hand them off, or (int3 in the text) to
	 * take our breakpoint out of the child's copy before it runs. */
	if (tr->opt.trace_children || tr->opt.sw_breakpoints)
		opts |= PTRACE_O_TRACEFORK | PTRACE_O_TRACEVFORK |
			PTRACE_O_TRACEVFORKDONE;
	/* A launched target is ours: if cachetrace dies (kill -9) it dies
	 * too, rather than of a SIGTRAP from a leftover trap flag or int3.
	 * An attached one is never killed by us. */
	if (!tr->opt.pid)
		opts |= PTRACE_O_EXITKILL;
	return opts;
}

/* With PTRACE_O_TRACEEXIT even SIGKILL stops each thread at its exit
 * event: let them go until all are reaped. */
void launch_kill_and_reap(pid_t pid)
{
	int status;
	pid_t r;
	kill(pid, SIGKILL);
	while ((r = tracee_reap(-1, &status)) > 0)	/* reaped already */
		if (WIFSTOPPED(status))
			tracee_restart_pid(r, PTRACE_CONT, 0);
	while ((r = waitpid(-1, &status, __WALL)) > 0 || errno == EINTR)
		if (r > 0 && WIFSTOPPED(status))
			tracee_restart_pid(r, PTRACE_CONT, 0);
}

/* The child: stop, so that the parent can seize it, then exec; an exec
 * error goes back through the close-on-exec pipe. */
static noreturn void launch_child(const struct tracer *tr, const char *path,
				  char **argv, int err_fd)
{
	if (!tr->opt.aslr)
		personality(personality(0xffffffff) | ADDR_NO_RANDOMIZE);
	if (!strcmp(tr->opt.out, "-"))
		dup2(2, 1);	/* the pipe carries nothing but the profile */
	/* The program gets the dispositions we were given (we ignore
	 * SIGPIPE, and exec would keep that). */
	for (int sig = 1; sig < NSIG; sig++)
		if (sig != SIGKILL && sig != SIGSTOP)
			sigaction(sig, &tr->orig_sigaction[sig], NULL);
	raise(SIGSTOP);
	execv(path, argv);
	int err = errno;
	if (write(err_fd, &err, sizeof(err)) < 0)
		_exit(127);
	_exit(127);
}

/* Run the seized child T to its exec stop: a SIGCONT delivery stop and
 * the seize's own PTRACE_EVENT_STOP come first.  0, or -1 (reported, the
 * child reaped). */
static int run_to_exec(struct tracer *tr, struct tracee *t, const char *path,
		       int err_fd)
{
	for (;;) {
		struct event_info ei;
		tracee_next_event(&ei);
		if (ei.ev == TE_NONE || ei.tid != t->tid)
			continue;
		t->flags |= TF_STOPPED;
		switch (ei.ev) {
		case TE_EXEC:
			return 0;
		case TE_EXITED: {
			int err = 0;
			if (read(err_fd, &err, sizeof(err)) == sizeof(err)) {
				errno = err;
				perror_msg("cannot execute %s", path);
			} else {
				error_msg("%s exited before it started", path);
			}
			tr->exit_status = 1;
			return -1;
		}
		case TE_SIGNAL:
			tracee_restart(t, PTRACE_CONT,
				       ei.sig == SIGSTOP ? 0 : ei.sig);
			break;
		case TE_INTERRUPTED:
			launch_kill_and_reap(t->tid);
			tr->exit_status = 128 + interrupted_by;
			return -1;
		default:
			tracee_restart(t, PTRACE_CONT, 0);
			break;
		}
	}
}

pid_t launch(struct tracer *tr, const char *path, char **argv)
{
	int pfd[2];
	tr->exit_status = 1;
	if (pipe2(pfd, O_CLOEXEC) < 0) {
		perror_msg("pipe");
		return -1;
	}
	pid_t pid = fork();
	if (pid < 0) {
		perror_msg("fork");
		return -1;
	}
	if (pid == 0) {
		close(pfd[0]);
		launch_child(tr, path, argv, pfd[1]);
	}
	close(pfd[1]);
	int status;
	if (waitpid(pid, &status, WSTOPPED) < 0 || !WIFSTOPPED(status)) {
		perror_msg("waiting for the new process");
		close(pfd[0]);
		return -1;
	}
	if (tracee_seize(pid, launch_trace_options(tr)) < 0) {
		int err = errno;
		launch_kill_and_reap(pid);
		errno = err;
		perror_msg("ptrace(PTRACE_SEIZE, %d)", pid);
		close(pfd[0]);
		return -1;
	}
	struct tracee *t = tracee_add(tr, pid);
	kill(pid, SIGCONT);
	int rc = run_to_exec(tr, t, path, pfd[0]);
	close(pfd[0]);
	if (rc < 0)
		return -1;
	if (tr->opt.auxv_valgrind && auxv_as_valgrind(t) < 0) {
		launch_kill_and_reap(pid);
		return -1;
	}
	tr->exit_status = 0;
	return pid;
}

int launch_wait_exit(struct tracer *tr)
{
	if (tr->target_status < 0) {
		int status;
		for (;;) {
			/* (its exit reaped already, with another event) */
			pid_t r = tracee_event_held(tr->target_pid) ?
				  tracee_reap(tr->target_pid, &status) :
				  waitpid(tr->target_pid, &status, 0);
			if (r == tr->target_pid)
				break;
			if (r < 0 && errno == EINTR)
				continue;
			if (r < 0)
				return 0;
		}
		tr->target_status = status;
	}
	if (WIFSIGNALED(tr->target_status)) {
		if (!tr->opt.quiet)
			error_msg("the target was killed by %s",
				  strsignal(WTERMSIG(tr->target_status)));
		return 128 + WTERMSIG(tr->target_status);
	}
	return WEXITSTATUS(tr->target_status);
}
