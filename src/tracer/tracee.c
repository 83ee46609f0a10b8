/* The thread table and the ptrace plumbing shared by every mode. */
#include "tracer.h"


#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "error.h"
#include "journal.h"

/* The threads in the table: with one, no other thread's stop can wait
 * behind its own (held_reap). */
static unsigned n_traced;

struct tracee *tracee_find(struct tracer *tr, pid_t tid)
{
	for (struct tracee *t = tr->tracees; t; t = t->next)
		if (t->tid == tid)
			return t;
	return NULL;
}

struct tracee *tracee_add(struct tracer *tr, pid_t tid)
{
	struct tracee *t = tracee_find(tr, tid);
	if (t)
		return t;
	t = xcalloc(1, sizeof(*t));
	t->tid = tid;
	t->seq = tr->next_seq++;
	t->next = tr->tracees;
	tr->tracees = t;
	n_traced++;
	return t;
}

void tracee_remove(struct tracer *tr, pid_t tid)
{
	for (struct tracee **pp = &tr->tracees; *pp; pp = &(*pp)->next) {
		if ((*pp)->tid == tid) {
			struct tracee *t = *pp;
			*pp = t->next;
			n_traced--;
			if (t->pinned)
				guard_pin(t, NULL);	/* gone: its tid free */
			free(t->emu);
			free(t);
			return;
		}
	}
}

int tracee_getregs(pid_t tid, struct user_regs_struct *r)
{
	return ptrace(PTRACE_GETREGS, tid, NULL, r) < 0 ? -errno : 0;
}

int tracee_setregs(pid_t tid, const struct user_regs_struct *r)
{
	return ptrace(PTRACE_SETREGS, tid, NULL, r) < 0 ? -errno : 0;
}

int tracee_si_code(pid_t tid)
{
	siginfo_t si;
	if (ptrace(PTRACE_GETSIGINFO, tid, NULL, &si) < 0)
		return SI_CODE_NONE;
	return si.si_code;
}

int tracee_interrupt(pid_t tid)
{
	return ptrace(PTRACE_INTERRUPT, tid, NULL, NULL) < 0 ? -errno : 0;
}

int tracee_seize(pid_t tid, long options)
{
	return ptrace(PTRACE_SEIZE, tid, NULL, (void *)options) < 0 ? -errno
								   : 0;
}

int tracee_event_msg(pid_t tid, unsigned long *msg)
{
	return ptrace(PTRACE_GETEVENTMSG, tid, NULL, msg) < 0 ? -errno : 0;
}

/* Changes when the target's memory may have (tracee_read_code) */
static uint64_t mem_gen = 1;

int tracee_detach(pid_t tid, int sig)
{
	mem_gen++;
	return ptrace(PTRACE_DETACH, tid, NULL, (void *)(long)sig) < 0 ? -errno
									: 0;
}

int tracee_restart_pid(pid_t tid, int request, int sig)
{
	mem_gen++;		/* it may write anything */
	return ptrace(request, tid, NULL, (void *)(long)sig) < 0 ? -errno : 0;
}

ssize_t tracee_read_xstate(pid_t tid, void *buf, size_t len)
{
	struct iovec iov = { buf, len };
	if (ptrace(PTRACE_GETREGSET, tid, (void *)NT_X86_XSTATE, &iov) < 0)
		return -errno;
	return iov.iov_len;
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

/* tracee_read_code's pages, good while no thread was let run and nothing
 * was written (MEM_GEN): a block's translation reads tens of instructions
 * of one page, and a read is a system call. */
static struct code_page {
	pid_t tid;
	uint64_t page, gen;
	uint8_t b[4096];
} code_pages[2];
static unsigned code_last;

void tracee_mem_changed(void)
{
	mem_gen++;
}

uint64_t tracee_mem_gen(void)
{
	return mem_gen;
}

static const uint8_t *code_page(pid_t tid, uint64_t page)
{
	for (unsigned i = 0; i < 2; i++) {
		struct code_page *p = &code_pages[i];
		if (p->gen == mem_gen && p->tid == tid && p->page == page) {
			code_last = i;
			return p->b;
		}
	}
	code_last ^= 1;		/* the other one: a pair for a straddler */
	struct code_page *p = &code_pages[code_last];
	struct iovec local = { p->b, sizeof(p->b) };
	struct iovec remote = { (void *)(uintptr_t)page, sizeof(p->b) };
	if (process_vm_readv(tid, &local, 1, &remote, 1, 0) !=
	    (ssize_t)sizeof(p->b)) {
		p->gen = 0;
		return NULL;
	}
	p->tid = tid;
	p->page = page;
	p->gen = mem_gen;
	return p->b;
}

ssize_t tracee_read_code(pid_t tid, uint64_t addr, void *buf, size_t len)
{
	size_t done = 0;
	while (done < len) {
		uint64_t a = addr + done, page = a & ~4095ull;
		const uint8_t *pb = code_page(tid, page);
		if (!pb)
			break;
		size_t k = page + 4096 - a;
		if (k > len - done)
			k = len - done;
		memcpy((char *)buf + done, pb + (a - page), k);
		done += k;
	}
	if (done == len)
		return (ssize_t)len;
	/* a page that cannot be read whole: the usual way for the rest */
	ssize_t n = tracee_read_mem(tid, addr + done, (char *)buf + done,
				    len - done);
	return n > 0 ? (ssize_t)done + n : done ? (ssize_t)done : n;
}

int tracee_write_mem(pid_t tid, uint64_t addr, const void *buf, size_t len)
{
	mem_gen++;
	struct iovec local = { (void *)buf, len };
	struct iovec remote = { (void *)(uintptr_t)addr, len };
	if (process_vm_writev(tid, &local, 1, &remote, 1, 0) == (ssize_t)len)
		return 0;
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/mem", tid);
	int fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	ssize_t n = pwrite(fd, buf, len, (off_t)addr);
	int err = n < 0 ? errno : EIO;
	close(fd);
	return n == (ssize_t)len ? 0 : -err;
}

/* TID is dead or a zombie: a group leader that exited while its other
 * threads live, whose wait status the kernel keeps until they are
 * reaped. */
static bool thread_dead(pid_t tid)
{
	char buf[128];
	const char *f = proc_stat_fields(tid, buf, sizeof(buf));
	return !f || f[1] == 'Z' || f[1] == 'X';
}

/* Wait events reaped but not dispatched yet, oldest first.  waitpid(-1)
 * looks in the kernel's order (our own children oldest first, the
 * threads we only trace newest first): a thread that stops again within
 * microseconds of its resume (a ring of 64 instructions' records, a
 * step) would be reported every time, and another one's stop never
 * (tests/cachemodel/falseshare.sh: one worker ran its 3000 increments,
 * 265 turns, before the other's first was collected).  So each wait that
 * finds one event reaps every other waiting, and those are dispatched in
 * turn before the next wait, as strace does.  Every wait for one thread
 * looks here first. */
#define HELD_MAX 64
static struct {
	pid_t tid;
	int status;
} held[HELD_MAX];
static unsigned n_held;

/* The held event of TID (-1: the oldest), taken: its tid, or 0. */
static pid_t held_take(pid_t tid, int *status)
{
	for (unsigned i = 0; i < n_held; i++) {
		if (tid != -1 && held[i].tid != tid)
			continue;
		pid_t r = held[i].tid;
		*status = held[i].status;
		memmove(&held[i], &held[i + 1], (n_held - i - 1) * sizeof(held[0]));
		n_held--;
		return r;
	}
	return 0;
}

/* Reap what else is waiting (after a wait that found an event): not
 * with one thread traced, whose steps would each pay a wait more (a new
 * thread's first stop, not in the table yet, is the next wait's). */
static void held_reap(void)
{
	while (n_traced > 1 && n_held < HELD_MAX) {
		int status;
		pid_t r = waitpid(-1, &status, __WALL | WNOHANG);
		if (r <= 0)
			break;
		held[n_held].tid = r;
		held[n_held++].status = status;
	}
}

bool tracee_event_held(pid_t tid)
{
	for (unsigned i = 0; i < n_held; i++)
		if (held[i].tid == tid)
			return true;
	return false;
}

void tracee_forget_held(void)
{
	n_held = 0;
}

pid_t tracee_reap(pid_t tid, int *status)
{
	pid_t r = held_take(tid, status);
	return r ? r : waitpid(tid, status, __WALL | WNOHANG);
}

pid_t tracee_wait(pid_t tid, int *status)
{
	return tracee_wait_within(tid, status, -1);
}

pid_t tracee_wait_within(pid_t tid, int *status, long us)
{
	/* Not a blocking waitpid: on a group leader that died while we held
	 * its other threads (another one called exit_group as the leader
	 * stepped over our int3), it would never return (the others' exits
	 * are reported first, and only to a wait on them): cachetrace hung
	 * in attach/verify-threads.  A step reports within microseconds;
	 * after the first tries we look at the thread every 16. */
	double until = us < 0 ? 0 : now_seconds() + us / 1e6;
	for (unsigned i = 0;; i++) {
		pid_t r = tracee_reap(tid, status);
		if (r < 0 && errno == EINTR)
			continue;
		if (r != 0)
			return r;
		if (us >= 0 && (i & 15) == 15 && now_seconds() >= until)
			return 0;
		if ((i & 15) == 15 && thread_dead(tid)) {
			r = waitpid(tid, status, __WALL | WNOHANG);
			if (r != 0)
				return r;	/* it was reportable after all */
			errno = ESRCH;
			return -1;
		}
		if (i < 64) {
			sched_yield();
		} else {
			struct timespec ts = { 0, i < 1024 ? 20000 : 1000000 };
			nanosleep(&ts, NULL);
		}
	}
}

int tracee_hold_sig;

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
		/* Under our own job-control stop (guard.c) every interrupt
		 * stop reports its signal: it is ours, as a SIGTRAP is. */
		if (tracee_hold_sig && ei->sig == tracee_hold_sig)
			ei->sig = SIGTRAP;
		break;
	case PTRACE_EVENT_EXEC:
		ei->ev = TE_EXEC;
		break;
	case PTRACE_EVENT_CLONE:
	case PTRACE_EVENT_FORK:
	case PTRACE_EVENT_VFORK:
		ei->ev = TE_CLONE;
		break;
	case PTRACE_EVENT_VFORK_DONE:
		ei->ev = TE_VFORK_DONE;
		break;
	case PTRACE_EVENT_EXIT:
		ei->ev = TE_EXIT;
		break;
	default:
		/* An event we did not ask for: dispatched like a group-stop,
		 * so the thread is restarted with PTRACE_CONT. */
		ei->ev = TE_GROUP_STOP;
		break;
	}
}

/* No event: the wait ended with ERR (EINTR: a signal of ours came). */
static void no_event(struct event_info *ei, int err)
{
	memset(ei, 0, sizeof(*ei));
	ei->ev = err == EINTR && interrupted_by ? TE_INTERRUPTED : TE_NONE;
	errno = err;
}

void tracee_next_event(struct event_info *ei)
{
	int status;
	pid_t tid = held_take(-1, &status);
	if (!tid) {
		tid = waitpid(-1, &status, __WALL);
		if (tid < 0) {
			no_event(ei, errno);
			return;
		}
		held_reap();
	}
	tracee_decode_status(tid, status, ei);
}

void tracee_next_event_within(struct event_info *ei, long us)
{
	int status, err = 0;
	pid_t tid = held_take(-1, &status);
	if (tid) {
		tracee_decode_status(tid, status, ei);
		return;
	}
	sigset_t chld, old;
	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	/* blocked from before the look to the wait: a state change after
	 * the look stays pending for sigtimedwait */
	sigprocmask(SIG_BLOCK, &chld, &old);
	tid = waitpid(-1, &status, __WALL | WNOHANG);
	if (tid == 0) {
		struct timespec ts = { us / 1000000, (us % 1000000) * 1000 };
		if (sigtimedwait(&chld, NULL, &ts) < 0)
			err = errno;		/* EAGAIN: the time is up */
		else
			tid = waitpid(-1, &status, __WALL | WNOHANG);
	} else if (tid < 0) {
		err = errno;
	}
	sigprocmask(SIG_SETMASK, &old, NULL);
	if (tid <= 0) {
		no_event(ei, err ? err : EAGAIN);
		return;
	}
	held_reap();
	tracee_decode_status(tid, status, ei);
}

bool tracee_poll_event(struct event_info *ei)
{
	int status;
	pid_t tid = held_take(-1, &status);
	if (!tid) {
		tid = waitpid(-1, &status, __WALL | WNOHANG);
		if (tid <= 0)
			return false;
		held_reap();
	}
	tracee_decode_status(tid, status, ei);
	return true;
}

/* tr->pin_cpu: the CPU everything stepped runs on; tr->saved_self: the
 * tracer's own mask, restored when nothing is stepped.
 * pin_self: T's own mask kept (once: it may be pinned already) and the
 * tracer pinned to a CPU T may run on; false when either cannot be. */
static bool pin_self(struct tracer *tr, struct tracee *t)
{
	if (!t->pinned && sched_getaffinity(t->tid, sizeof(t->saved_affinity),
					    &t->saved_affinity) < 0)
		return false;
	if (tr->pin_cpu < 0) {
		if (sched_getaffinity(0, sizeof(tr->saved_self), &tr->saved_self) < 0)
			return false;
		int cpu = sched_getcpu();
		if (cpu < 0 || !CPU_ISSET(cpu, &t->saved_affinity)) {
			/* The first CPU both may run on. */
			cpu = -1;
			for (int i = 0; i < CPU_SETSIZE && cpu < 0; i++)
				if (CPU_ISSET(i, &tr->saved_self) &&
				    CPU_ISSET(i, &t->saved_affinity))
					cpu = i;
			if (cpu < 0)
				return false;
		}
		cpu_set_t one;
		CPU_ZERO(&one);
		CPU_SET(cpu, &one);
		if (sched_setaffinity(0, sizeof(one), &one) < 0)
			return false;
		tr->pin_cpu = cpu;
		debug_msg("pinned the tracer to CPU %d", cpu);
	}
	return true;
}

/* T on the CPUs of MASK (its own mask given back if we die). */
static void pin_to(struct tracee *t, const cpu_set_t *mask, bool apart)
{
	guard_pin(t, &t->saved_affinity);
	if (sched_setaffinity(t->tid, sizeof(*mask), mask) == 0) {
		t->pinned = true;
		t->pin_apart = apart;
	} else if (!t->pinned) {
		guard_pin(t, NULL);
	}
}

void tracee_pin(struct tracer *tr, struct tracee *t)
{
	if ((t->pinned && !t->pin_apart) || !pin_self(tr, t))
		return;
	cpu_set_t one;
	CPU_ZERO(&one);
	CPU_SET(tr->pin_cpu, &one);
	pin_to(t, &one, false);
}

void tracee_pin_apart(struct tracer *tr, struct tracee *t)
{
	if ((t->pinned && t->pin_apart) || !pin_self(tr, t))
		return;
	cpu_set_t others = t->saved_affinity;
	CPU_CLR(tr->pin_cpu, &others);
	if (CPU_COUNT(&others) == 0)
		tracee_pin(tr, t);
	else
		pin_to(t, &others, true);
}

void tracee_unpin(struct tracee *t)
{
	if (!t->pinned)
		return;
	/* ESRCH: the thread is gone; nothing to restore. */
	sched_setaffinity(t->tid, sizeof(t->saved_affinity),
			  &t->saved_affinity);
	guard_pin(t, NULL);
	t->pinned = false;
	t->pin_apart = false;
}

void tracee_unpin_self(struct tracer *tr)
{
	if (tr->pin_cpu < 0)
		return;
	sched_setaffinity(0, sizeof(tr->saved_self), &tr->saved_self);
	tr->pin_cpu = -1;
}

int tracee_restart(struct tracee *t, int request, int sig)
{
	guard_signal(t, 0);	/* delivered, or dropped on purpose */
	if (t->flags & TF_HANDOVER) {
		/* restarted before its turn came: no turn to take */
		t->flags &= ~TF_HANDOVER;
		t->has_deferred = false;
	}
	t->flags &= ~TF_STOPPED;
	if (sig)
		t->flags |= TF_INJECTED;
	else
		t->flags &= ~TF_INJECTED;
	int rc = tracee_restart_pid(t->tid, request, sig);
	return rc == -ESRCH ? 0 : rc;
}

void tracee_stop_all(struct tracer *tr)
{
	for (struct tracee *t = tr->tracees; t; t = t->next)
		if (!tracee_stopped(t))
			tracee_interrupt(t->tid);
	struct tracee *next;
	for (struct tracee *t = tr->tracees; t; t = next) {
		next = t->next;
		while (!tracee_stopped(t)) {
			int status;
			pid_t r = tracee_wait(t->tid, &status);
			if (r < 0 || WIFEXITED(status) || WIFSIGNALED(status)) {
				/* Gone: the target's own status is ours. */
				if (r >= 0 && t->tid == tr->target_pid)
					tr->target_status = status;
				tracee_remove(tr, t->tid);
				break;
			}
			t->flags |= TF_STOPPED;
			unsigned event = (unsigned)status >> 16;
			int sig = WSTOPSIG(status);
			/* A signal on its way to the thread: keep it for the
			 * detach, so that the target still receives it.  A
			 * SIGTRAP may be our int3 (the thread is then one byte
			 * past it): window_release decides. */
			if (event == 0 && sig == SIGTRAP)
				t->flags |= TF_TRAPPED;
			else if (event == 0) {
				t->pending_sig = guard_deliverable(tr, t->tid,
								   sig);
				guard_signal(t, t->pending_sig);
			}
		}
	}
}

/* T is in the delivery stop of a SIGTRAP: if the kernel sent it for our
 * int3 (si_code SI_KERNEL, rip one byte past one of our int3 addresses),
 * T must go back to execute the original instruction, which the int3
 * (taken out by now) replaced.  The int3 was hit just as we stopped T, its
 * signal still queued: dropped without the rewind, T resumed in the
 * middle of the instruction and died of SIGILL (faults-sw-threads, about
 * one run in ten). */
static void rewind_our_int3(struct tracer *tr, struct tracee *t)
{
	siginfo_t si;
	struct user_regs_struct r;
	if (ptrace(PTRACE_GETSIGINFO, t->tid, NULL, &si) < 0 ||
	    si.si_code != SI_KERNEL || tracee_getregs(t->tid, &r) < 0)
		return;
	for (unsigned i = 0; i < N_INT3; i++) {
		const struct breakpoint *bp = tracer_int3(tr, i);
		if (bp->addr && r.rip == bp->addr + 1) {
			r.rip = bp->addr;
			tracee_setregs(t->tid, &r);
			return;
		}
	}
}

bool tracee_trap_queued(pid_t tid)
{
	return journal_trap_queued(tid);
}

void tracee_drop_queued_traps(struct tracer *tr, struct tracee *t, int *keep)
{
	for (int tries = 0; tries < 4; tries++) {
		if (!tracee_trap_queued(t->tid))
			return;
		if (tracee_restart_pid(t->tid, PTRACE_CONT, 0) < 0)
			return;
		int status;
		if (tracee_wait(t->tid, &status) < 0 || !WIFSTOPPED(status))
			return;
		int sig = WSTOPSIG(status);
		if (((unsigned)status >> 16) == 0 && sig == SIGTRAP)
			rewind_our_int3(tr, t);
		else if (((unsigned)status >> 16) == 0 && !*keep)
			*keep = sig;	/* another one: keep it */
	}
}

void tracee_detach_all(struct tracer *tr)
{
	struct tracee *next;
	for (struct tracee *t = tr->tracees; t; t = next) {
		next = t->next;
		tracee_drop_queued_traps(tr, t, &t->pending_sig);
		tracee_detach(t->tid, t->pending_sig);
		tracee_remove(tr, t->tid);
	}
}

/* A line "KEY:\tvalue" of /proc/PID/status, or NULL. */
char *proc_status_field(pid_t pid, const char *key, char *buf,
			       size_t len)
{
	char path[64], line[256];
	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	FILE *f = fopen(path, "r");
	if (!f)
		return NULL;
	size_t klen = strlen(key);
	char *found = NULL;
	while (fgets(line, sizeof(line), f)) {
		if (!strncmp(line, key, klen) && line[klen] == ':') {
			char *v = line + klen + 1;
			v += strspn(v, " \t");
			v[strcspn(v, "\n")] = 0;
			snprintf(buf, len, "%s", v);
			found = buf;
			break;
		}
	}
	fclose(f);
	return found;
}

const char *proc_stat_fields(pid_t tid, char *buf, size_t len)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/stat", tid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n = fd < 0 ? -1 : read(fd, buf, len - 1);
	if (fd >= 0)
		close(fd);
	if (n <= 0)
		return NULL;
	buf[n] = 0;
	/* pid (comm) state...: the comm may hold spaces and parentheses,
	 * so count from its last ')'. */
	char *p = strrchr(buf, ')');
	return p ? p + 1 : NULL;
}
