/* The thread table and the ptrace plumbing shared by every mode. */
#include "tracer.h"

#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/uio.h>
#include <sys/wait.h>

#include "error.h"

volatile sig_atomic_t interrupted_by;

static struct tracee *tracees;

struct tracee *tracee_find(pid_t tid)
{
	for (struct tracee *t = tracees; t; t = t->next)
		if (t->tid == tid)
			return t;
	return NULL;
}

struct tracee *tracee_add(pid_t tid)
{
	struct tracee *t = tracee_find(tid);
	if (t)
		return t;
	static unsigned next_seq;
	t = xcalloc(1, sizeof(*t));
	t->tid = tid;
	t->seq = next_seq++;
	t->next = tracees;
	tracees = t;
	return t;
}

void tracee_remove(pid_t tid)
{
	for (struct tracee **pp = &tracees; *pp; pp = &(*pp)->next) {
		if ((*pp)->tid == tid) {
			struct tracee *t = *pp;
			*pp = t->next;
			free(t);
			return;
		}
	}
}

struct tracee *tracee_first(void)
{
	return tracees;
}

ssize_t tracee_read_mem(pid_t tid, uint64_t addr, void *buf, size_t len)
{
	struct iovec local = { buf, len };
	struct iovec remote = { (void *)(uintptr_t)addr, len };
	ssize_t n = process_vm_readv(tid, &local, 1, &remote, 1, 0);
	if (n >= 0)
		return n;
	/* process_vm_readv stops at an unreadable page and fails with EFAULT
	 * when the first byte is unreadable; PEEKDATA word by word gives the
	 * readable prefix (an instruction at the end of a mapping). */
	size_t done = 0;
	while (done < len) {
		uint64_t a = addr + done;
		uint64_t aligned = a & ~7ULL;
		errno = 0;
		long w = ptrace(PTRACE_PEEKDATA, tid, (void *)aligned, NULL);
		if (errno)
			break;
		size_t off = a - aligned, k = 8 - off;
		if (k > len - done)
			k = len - done;
		memcpy((char *)buf + done, (char *)&w + off, k);
		done += k;
	}
	return done ? (ssize_t)done : -EFAULT;
}

pid_t tracee_wait(pid_t tid, int *status)
{
	pid_t r;
	while ((r = waitpid(tid, status, __WALL)) < 0 && errno == EINTR)
		;
	return r;
}

void tracee_decode_status(pid_t tid, int status, struct event_info *ei)
{
	memset(ei, 0, sizeof(*ei));
	ei->tid = tid;
	ei->status = status;
	if (WIFEXITED(status) || WIFSIGNALED(status)) {
		ei->ev = TE_EXITED;
		ei->sig = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
		return;
	}
	ei->sig = WSTOPSIG(status);
	ei->ptrace_event = (unsigned)status >> 16;
	switch (ei->ptrace_event) {
	case 0:
		ei->ev = ei->sig == SIGTRAP ? TE_TRAP : TE_SIGNAL;
		break;
	case PTRACE_EVENT_STOP:
		ei->ev = TE_GROUP_STOP;
		break;
	case PTRACE_EVENT_EXEC:
		ei->ev = TE_EXEC;
		break;
	case PTRACE_EVENT_CLONE:
	case PTRACE_EVENT_FORK:
	case PTRACE_EVENT_VFORK:
		ei->ev = TE_CLONE;
		break;
	case PTRACE_EVENT_EXIT:
		ei->ev = TE_EXIT;
		break;
	default:
		/* An event we did not ask for: treat as a plain trap stop. */
		ei->ev = TE_GROUP_STOP;
		break;
	}
}

void tracee_next_event(struct event_info *ei)
{
	int status;
	pid_t tid = waitpid(-1, &status, __WALL);
	if (tid < 0) {
		int err = errno;
		memset(ei, 0, sizeof(*ei));
		ei->ev = (err == EINTR && interrupted_by) ? TE_INTERRUPTED
							 : TE_NONE;
		errno = err;
		return;
	}
	tracee_decode_status(tid, status, ei);
}

/* The CPU everything stepped runs on, and the tracer's own mask. */
static cpu_set_t saved_self;
static int pin_cpu = -1;

void tracee_pin(struct tracee *t)
{
	if (t->pinned)
		return;
	if (sched_getaffinity(t->tid, sizeof(t->saved_affinity),
			      &t->saved_affinity) < 0)
		return;
	if (pin_cpu < 0) {
		if (sched_getaffinity(0, sizeof(saved_self), &saved_self) < 0)
			return;
		int cpu = sched_getcpu();
		if (cpu < 0 || !CPU_ISSET(cpu, &t->saved_affinity)) {
			/* The first CPU both may run on. */
			cpu = -1;
			for (int i = 0; i < CPU_SETSIZE && cpu < 0; i++)
				if (CPU_ISSET(i, &saved_self) &&
				    CPU_ISSET(i, &t->saved_affinity))
					cpu = i;
			if (cpu < 0)
				return;
		}
		cpu_set_t one;
		CPU_ZERO(&one);
		CPU_SET(cpu, &one);
		if (sched_setaffinity(0, sizeof(one), &one) < 0)
			return;
		pin_cpu = cpu;
		debug_msg("pinned the tracer to CPU %d", cpu);
	}
	cpu_set_t one;
	CPU_ZERO(&one);
	CPU_SET(pin_cpu, &one);
	if (sched_setaffinity(t->tid, sizeof(one), &one) == 0)
		t->pinned = true;
}

void tracee_unpin(struct tracee *t)
{
	if (!t->pinned)
		return;
	/* ESRCH: the thread is gone; nothing to restore. */
	sched_setaffinity(t->tid, sizeof(t->saved_affinity),
			  &t->saved_affinity);
	t->pinned = false;
}

void tracee_unpin_self(void)
{
	if (pin_cpu < 0)
		return;
	sched_setaffinity(0, sizeof(saved_self), &saved_self);
	pin_cpu = -1;
}

int tracee_restart(struct tracee *t, int request, int sig)
{
	t->flags &= ~TF_STOPPED;
	if (sig)
		t->flags |= TF_INJECTED;
	else
		t->flags &= ~TF_INJECTED;
	if (ptrace(request, t->tid, NULL, (void *)(long)sig) < 0) {
		if (errno == ESRCH)
			return 0;
		return -errno;
	}
	return 0;
}

void tracee_stop_all(void)
{
	for (struct tracee *t = tracees; t; t = t->next)
		if (!(t->flags & TF_STOPPED))
			ptrace(PTRACE_INTERRUPT, t->tid, NULL, NULL);
	struct tracee *next;
	for (struct tracee *t = tracees; t; t = next) {
		next = t->next;
		while (!(t->flags & TF_STOPPED)) {
			int status;
			if (tracee_wait(t->tid, &status) < 0) {
				tracee_remove(t->tid);	/* gone */
				break;
			}
			if (WIFEXITED(status) || WIFSIGNALED(status)) {
				tracee_remove(t->tid);
				break;
			}
			t->flags |= TF_STOPPED;
			unsigned event = (unsigned)status >> 16;
			int sig = WSTOPSIG(status);
			/* A signal on its way to the thread: keep it for the
			 * detach, so that the target still receives it. */
			if (event == 0 && sig != SIGTRAP)
				t->pending_sig = sig;
		}
	}
}

/* A thread single-stepped into a syscall has a SIGTRAP queued when it
 * leaves the syscall (the kernel's syscall-exit step report), even when we
 * interrupted it there: detached, that SIGTRAP would kill it.  Let it
 * reach the signal-delivery stop and drop the signal there. */
static void drop_queued_step_trap(struct tracee *t)
{
	for (int tries = 0; tries < 4; tries++) {
		siginfo_t si[8];
		struct __ptrace_peeksiginfo_args args = {
			.off = 0, .flags = 0, .nr = 8 };
		int n = (int)ptrace(PTRACE_PEEKSIGINFO, t->tid, &args, si);
		bool trap = false;
		for (int i = 0; i < n; i++)
			if (si[i].si_signo == SIGTRAP &&
			    si[i].si_code != SI_USER && si[i].si_code != SI_TKILL)
				trap = true;
		if (!trap)
			return;
		if (ptrace(PTRACE_CONT, t->tid, NULL, NULL) < 0)
			return;
		int status;
		if (tracee_wait(t->tid, &status) < 0 || !WIFSTOPPED(status))
			return;
		int sig = WSTOPSIG(status);
		if (((unsigned)status >> 16) == 0 && sig != SIGTRAP &&
		    !t->pending_sig)
			t->pending_sig = sig;	/* another one: keep it */
	}
}

void tracee_detach_all(void)
{
	struct tracee *next;
	for (struct tracee *t = tracees; t; t = next) {
		next = t->next;
		drop_queued_step_trap(t);
		ptrace(PTRACE_DETACH, t->tid, NULL,
		       (void *)(long)t->pending_sig);
		tracee_remove(t->tid);
	}
}
