/* -p PID: seizing every thread of a running process, and saying exactly
 * why when it cannot be done; the target is left untouched then. */
#include "tracer.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <unistd.h>

#include "error.h"

static int attach_denied(pid_t pid)
{
	char why[160] = "";
	FILE *f = fopen("/proc/sys/kernel/yama/ptrace_scope", "r");
	int scope = -1;
	if (f) {
		if (fscanf(f, "%d", &scope) != 1)
			scope = -1;
		fclose(f);
	}
	char uid[64];
	bool other_user = false;
	if (proc_status_field(pid, "Uid", uid, sizeof(uid)))
		other_user = (uid_t)strtoul(uid, NULL, 10) != geteuid();
	if (scope >= 1 && geteuid() != 0)
		snprintf(why, sizeof(why), "kernel.yama.ptrace_scope is %d: "
			 "run as root, or with CAP_SYS_PTRACE", scope);
	else if (geteuid() != 0 && other_user)
		snprintf(why, sizeof(why), "it belongs to another user: run "
			 "as root, or with CAP_SYS_PTRACE");
	else if (geteuid() != 0)
		snprintf(why, sizeof(why), "not root and no CAP_SYS_PTRACE, "
			 "or the process is not dumpable");
	else
		snprintf(why, sizeof(why), "refused by the kernel (a security "
			 "module, or the process is exiting)");
	error_msg("cannot attach to process %d: permission denied (%s)",
		  pid, why);
	return -1;
}

/* A kernel thread: PF_KTHREAD in the flags of /proc/PID/stat. */
static bool is_kernel_thread(pid_t pid)
{
	char buf[1024];
	const char *p = proc_stat_fields(pid, buf, sizeof(buf));
	unsigned long flags = 0;
	/* state ppid pgrp session tty tpgid flags */
	if (!p || sscanf(p, " %*c %*d %*d %*d %*d %*d %lu", &flags) != 1)
		return false;
	return flags & 0x00200000;	/* PF_KTHREAD */
}

/* Reasons to refuse before touching the process. */
static int check_target(const struct tracer *tr, pid_t pid)
{
	char buf[128];
	if ((kill(pid, 0) < 0 && errno == ESRCH) ||
	    !proc_status_field(pid, "State", buf, sizeof(buf))) {
		error_msg("no such process: %d", pid);
		return -1;
	}
	if (pid == getpid() || pid == tr->front_pid) {
		error_msg("process %d is cachetrace itself: it cannot trace "
			  "itself", pid);
		return -1;
	}
	if (is_kernel_thread(pid)) {
		error_msg("process %d is a kernel thread: it runs no user "
			  "code to trace", pid);
		return -1;
	}
	if (buf[0] == 'Z' || buf[0] == 'X') {
		error_msg("process %d is a zombie: nothing to trace", pid);
		return -1;
	}
	char exe[64];
	snprintf(exe, sizeof(exe), "/proc/%d/exe", pid);
	snprintf(buf, sizeof(buf), "process %d", pid);
	if (launch_check_elf(exe, buf) < 0)
		return -1;
	if (proc_status_field(pid, "TracerPid", buf, sizeof(buf)) &&
	    atoi(buf)) {
		pid_t tracer = atoi(buf);
		char name[64] = "?";
		proc_status_field(tracer, "Name", name, sizeof(name));
		error_msg("process %d is already traced by process %d (%s)",
			  pid, tracer, name);
		return -1;
	}
	return 0;
}

/* Seize the threads listed in /proc/PID/task until a pass finds no new
 * one (threads created meanwhile). */
static int seize_all(struct tracer *tr, pid_t pid)
{
	long opts = launch_trace_options(tr);
	char dir[64];
	snprintf(dir, sizeof(dir), "/proc/%d/task", pid);
	for (bool added = true; added; ) {
		added = false;
		DIR *d = opendir(dir);
		if (!d) {
			if (tr->tracees)
				break;
			error_msg("no such process: %d", pid);
			return -1;
		}
		struct dirent *de;
		while ((de = readdir(d))) {
			pid_t tid = atoi(de->d_name);
			if (tid <= 0 || tracee_find(tr, tid))
				continue;
			if (tracee_seize(tid, opts) < 0) {
				if (errno == ESRCH)
					continue;	/* it just exited */
				int err = errno;
				closedir(d);
				if (tr->tracees)
					tracee_detach_all(tr);
				if (err == EPERM)
					return attach_denied(pid);
				errno = err;
				perror_msg("cannot attach to thread %d", tid);
				return -1;
			}
			tracee_add(tr, tid);
			added = true;
		}
		closedir(d);
	}
	return 0;
}

/* Wait until every thread is in its interrupt stop; a signal that arrives
 * first is kept for the thread's first restart. */
static void wait_interrupt_stops(struct tracer *tr)
{
	for (struct tracee *t = tr->tracees, *next; t; t = next) {
		next = t->next;
		while (!tracee_stopped(t)) {
			int status;
			pid_t r = tracee_wait(t->tid, &status);
			if (r < 0 || WIFEXITED(status) || WIFSIGNALED(status)) {
				tracee_remove(tr, t->tid);
				break;
			}
			unsigned event = (unsigned)status >> 16;
			if (event == PTRACE_EVENT_STOP) {
				t->flags |= TF_STOPPED;
			} else if (event == 0) {
				t->inject = guard_deliverable(tr, t->tid,
							      WSTOPSIG(status));
				t->flags |= TF_STOPPED;
			} else {
				tracee_restart(t, PTRACE_CONT, 0);
			}
		}
	}
}

int attach(struct tracer *tr, pid_t pid)
{
	if (check_target(tr, pid) < 0 || seize_all(tr, pid) < 0)
		return -1;
	for (struct tracee *t = tr->tracees; t; t = t->next)
		tracee_interrupt(t->tid);
	wait_interrupt_stops(tr);
	if (!tracee_find(tr, pid)) {
		error_msg("process %d exited while attaching", pid);
		return -1;
	}
	/* Nothing is armed yet: from here on, our death must not harm it
	 * (guard.c). */
	tr->target_pid = pid;
	if (guard_start(tr) < 0 && !tr->opt.quiet)
		perror_msg("note: no guardian for process %d (if cachetrace "
			   "is killed, the target may die of SIGTRAP)", pid);
	return 0;
}

char *attach_read_cmdline(pid_t pid)
{
	char path[64], buf[4096];
	snprintf(path, sizeof(path), "/proc/%d/cmdline", pid);
	int fd = open(path, O_RDONLY);
	ssize_t n = fd < 0 ? -1 : read(fd, buf, sizeof(buf) - 1);
	if (fd >= 0)
		close(fd);
	if (n <= 0)
		return xasprintf("(pid %d)", pid);
	buf[n] = 0;
	for (ssize_t i = 0; i < n - 1; i++)
		if (!buf[i])
			buf[i] = ' ';
	return xstrdup(buf);
}
