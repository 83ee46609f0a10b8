/* Kill -9 of cachetrace never harms an attached target (issue 28).
 *
 * What the kernel does when a tracer dies (exit_ptrace, __ptrace_unlink;
 * each checked here by experiment, tests/attach/kill9.sh checks them as
 * a whole): every tracee is detached where it stands, and
 *   - a thread in a signal-delivery stop gets that signal delivered: one
 *     stopped on our single step, int3 or debug register dies of SIGTRAP;
 *   - a thread single-stepping keeps the trap flag and dies of SIGTRAP
 *     after one instruction;
 *   - int3 bytes stay in the text and debug registers stay programmed:
 *     the next thread to pass dies of SIGTRAP;
 *   - a write-back of the emulator's memory cut halfway leaves the thread
 *     to run on from registers that do not match its memory;
 *   - but when the process is in a job-control stop (SIGSTOP in effect,
 *     even while we run its threads with PTRACE_CONT), every detached
 *     thread goes into that stop before it runs or takes any signal.
 *
 * So an attached target is held in a job-control stop of ours from the
 * attach to the detach (the threads run all the same: a ptraced thread
 * resumed with PTRACE_CONT runs while the stop is in effect), and a
 * guardian process watches cachetrace.  When cachetrace dies, the
 * guardian seizes every (stopped) thread, finishes a write-back the
 * journal records, restores the int3 bytes, clears the debug registers
 * and the trap flag, gives a thread pinned to our CPU its own CPUs back,
 * detaches, sends again the signals cachetrace held,
 * and ends the stop with SIGCONT.  The target has not run an instruction
 * meanwhile.  What it can see: its parent is told it stopped and
 * continued (a shell lists it as Stopped, then running), and it receives
 * a SIGCONT when cachetrace detaches.
 *
 * The guardian is a grandchild (not ours to reap, not in our process
 * group or session: a signal to the terminal's foreground group or to
 * cachetrace's group does not reach it); it learns of our end from a pipe
 * whose only writer is us (end of file), and reads the journal
 * (include/journal.h) from shared memory. */
#include "tracer.h"

#include <dirent.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>

#include "error.h"
#include "hostenv.h"
#include "journal.h"
#include "itrans.h"

struct journal *guard_journal;

/* ---- the guardian ------------------------------------------------------ */

#define MAX_THREADS 4096

struct gthread {
	pid_t tid;
	bool stopped;
};

/* Is any thread of PID still traced (TracerPid in its status)? */
static bool traced(pid_t pid)
{
	char dir[64], buf[32];
	snprintf(dir, sizeof(dir), "/proc/%d/task", pid);
	DIR *d = opendir(dir);
	bool any = false;
	struct dirent *de;
	while (d && !any && (de = readdir(d)))
		any = de->d_name[0] != '.' &&
		      proc_status_field(atoi(de->d_name), "TracerPid", buf,
					sizeof(buf)) && atoi(buf) != 0;
	if (d)
		closedir(d);
	return any;
}

/* The threads of PID (getdents64 on /proc/PID/task: no allocation, for
 * the crash handler too) not yet in TH[0..*N), appended; false when the
 * process is gone. */
static bool list_threads(pid_t pid, struct gthread *th, int *n, int max)
{
	char dir[64];
	snprintf(dir, sizeof(dir), "/proc/%d/task", pid);
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return false;
	char buf[4096];
	long len;
	while ((len = syscall(SYS_getdents64, fd, buf, sizeof(buf))) > 0) {
		for (long at = 0; at < len; ) {
			struct { uint64_t ino; int64_t off; unsigned short reclen;
				 unsigned char type; char name[]; } *de =
				(void *)(buf + at);
			at += de->reclen;
			pid_t tid = atoi(de->name);
			bool known = tid <= 0;
			/* negative: listed already but not ours (a zombie
			 * leader cannot be seized): not listed again */
			for (int i = 0; i < *n && !known; i++)
				known = th[i].tid == tid || th[i].tid == -tid;
			if (!known && *n < max)
				th[(*n)++] = (struct gthread){ .tid = tid };
		}
	}
	close(fd);
	return true;
}

/* The state letter of task TID in /proc/TID/stat (R, S, t, T...), or 0.
 * System calls only (the crash handler uses it). */
static char task_state(pid_t tid)
{
	char buf[512];
	const char *p = proc_stat_fields(tid, buf, sizeof(buf));
	return p && p[0] == ' ' ? p[1] : 0;
}

/* In a stop: ours (t) or a job-control one (T). */
static bool thread_stopped(pid_t tid)
{
	char c = task_state(tid);
	return c == 't' || c == 'T';
}

/* Take every thread of PID and stop it: seized (the guardian), or ours
 * already (IN_PROCESS: the crash handler).  The number, or -1. */
static int take_over(pid_t pid, struct gthread *th, int max,
		     bool in_process)
{
	int n = 0, seized = 0;
	/* Our pipe closes before the kernel detaches the dying cachetrace's
	 * tracees (exit_files comes before exit_notify): wait until it has,
	 * or the threads cannot be seized yet. */
	for (int ms = 0; !in_process && ms < 10000 && traced(pid); ms++)
		usleep(1000);
	for (int before = -1; before != n; ) {
		before = n;
		if (!list_threads(pid, th, &n, max))
			return n ? n : -1;
		for (; seized < n; seized++)
			if (!in_process &&
			    ptrace(PTRACE_SEIZE, th[seized].tid, NULL, NULL) < 0)
				th[seized].tid = -th[seized].tid;	/* not ours */
	}
	for (int i = 0; i < n; i++)
		if (th[i].tid > 0 &&
		    ptrace(PTRACE_INTERRUPT, th[i].tid, NULL, NULL) < 0)
			th[i].tid = -th[i].tid;
	for (int i = 0; i < n; i++) {
		int status;
		if (th[i].tid <= 0)
			continue;
		/* In process, a stop we have not collected yet comes first:
		 * collected, its signal is no longer delivered at our exit;
		 * then the interrupt's. */
		for (;;) {
			/* tracee_wait: never a blocking wait on a group
			 * leader that exited while its threads live (a
			 * server whose main thread called pthread_exit). */
			pid_t r = in_process ?
				  tracee_reap(th[i].tid, &status) :
				  tracee_wait(th[i].tid, &status);
			if (r < 0 && errno == EINTR)
				continue;
			if (r <= 0 || !WIFSTOPPED(status))
				break;
			th[i].stopped = true;
			if (!in_process)
				break;
		}
		/* Stopped and collected already: the interrupt waits for
		 * its next resume, nothing more comes now. */
		if (in_process && !th[i].stopped && thread_stopped(th[i].tid))
			th[i].stopped = true;
		if (in_process && !th[i].stopped)
			th[i].stopped = tracee_wait(th[i].tid, &status) > 0 &&
					WIFSTOPPED(status);
	}
	return n;
}

/* Write back what the journal says was being written. */
static unsigned redo(const struct journal *j)
{
	unsigned done = 0;
	for (size_t at = 0; at + sizeof(struct journal_rec_hdr) <= j->h->wb_len; ) {
		struct journal_rec_hdr r;
		memcpy(&r, j->data + at, sizeof(r));
		const uint8_t *p = j->data + at + sizeof(r);
		at += sizeof(r) + ((r.len + 7) & ~(uint64_t)7);
		switch (r.kind) {
		case JREC_MEM: {
			struct iovec l = { (void *)p, r.len };
			struct iovec rm = { (void *)(uintptr_t)r.addr, r.len };
			if (process_vm_writev(j->h->pid, &l, 1, &rm, 1, 0) ==
			    (ssize_t)r.len)
				done++;
			break;
		}
		case JREC_REGS:
			done += ptrace(PTRACE_SETREGS, r.tid, NULL, p) == 0;
			break;
		case JREC_FPREGS:
			done += ptrace(PTRACE_SETFPREGS, r.tid, NULL, p) == 0;
			break;
		case JREC_XSTATE: {
			struct iovec iov = { (void *)p, r.len };
			done += ptrace(PTRACE_SETREGSET, r.tid,
				       (void *)NT_X86_XSTATE, &iov) == 0;
			break;
		}
		default:
			return done;
		}
	}
	return done;
}

/* Does byte B make a whole instruction by itself in 64-bit code (push or
 * pop of a register, nop, ret, leave, the string instructions, the flag
 * instructions...)?  Then one byte past it is an instruction boundary a
 * thread may stand at without having trapped there. */
static bool one_byte_insn(uint8_t b)
{
	return (b >= 0x50 && b <= 0x5f) || (b >= 0x90 && b <= 0x9f) ||
	       (b >= 0xa4 && b <= 0xa7) || (b >= 0xaa && b <= 0xaf) ||
	       b == 0xc3 || b == 0xc9 || b == 0xcb || b == 0xcc ||
	       b == 0xcf || b == 0xd7 || (b >= 0xec && b <= 0xef) ||
	       (b >= 0xf4 && b <= 0xf5) || (b >= 0xf8 && b <= 0xfd);
}

/* Did thread TID stop on an int3 at ADDR (a SIGTRAP the kernel sent,
 * rip one past it)?  From its signal-delivery stop when it is in one
 * (the crash handler: ours), else from the instruction the int3
 * replaced: one byte past an instruction longer than one byte, only a
 * trap puts a thread there; one past a one-byte one, only when the int3
 * was still in (IN). */
static bool trapped_at(pid_t tid, const struct journal_int3 *e, bool in)
{
	siginfo_t si;
	if (ptrace(PTRACE_GETSIGINFO, tid, NULL, &si) == 0)
		return si.si_signo == SIGTRAP && si.si_code == SI_KERNEL;
	return !one_byte_insn(e->orig) || in;
}

/* Put back the bytes our int3s replaced, the text's and a code cache's
 * (the proof's, writable then); a thread one byte past one (it trapped
 * there as cachetrace died) goes back to execute it, also when a text
 * int3 was out by then (taken out while the trap was on its way).  One
 * byte past a code cache's, a thread trapped there, whatever its stop
 * (its SIGTRAP may be queued still): its entry lasts until cachetrace
 * has taken it back, and no thread runs that byte while the int3 is in. */
static unsigned restore_int3s(const struct journal *j, struct gthread *th,
			      int n)
{
	unsigned done = 0;
	pid_t pid = j->h->pid;
	for (unsigned i = 0; i < JOURNAL_INT3 + JOURNAL_CACHE_INT3; i++) {
		const struct journal_int3 *e = i < JOURNAL_INT3 ?
			&j->h->int3[i] : &j->h->cache_int3[i - JOURNAL_INT3];
		uint8_t state = __atomic_load_n(&e->in, __ATOMIC_ACQUIRE);
		if (!state)
			continue;
		bool was_in = false;
		errno = 0;
		long word = ptrace(PTRACE_PEEKTEXT, pid, (void *)e->addr, NULL);
		if (!errno && (word & 0xff) == 0xcc && state == JOURNAL_INT3_IN) {
			long fixed = (word & ~0xffL) | e->orig;
			was_in = ptrace(PTRACE_POKETEXT, pid, (void *)e->addr,
					(void *)fixed) == 0;
			done += was_in;
		}
		for (int k = 0; k < n; k++) {
			struct user_regs_struct r;
			if (th[k].stopped && th[k].tid > 0 &&
			    ptrace(PTRACE_GETREGS, th[k].tid, NULL, &r) == 0 &&
			    r.rip == e->addr + 1 &&
			    (i >= JOURNAL_INT3 ||
			     trapped_at(th[k].tid, e, was_in))) {
				r.rip = e->addr;
				ptrace(PTRACE_SETREGS, th[k].tid, NULL, &r);
			}
		}
	}
	return done;
}

/* A SIGTRAP the kernel queued for the thread (a step or a debug register
 * that trapped as cachetrace died, a step's syscall-exit report, our
 * int3 hit just as we stopped it) would kill it once detached: let it
 * come to its delivery stop and drop it there, the thread rewound when it
 * is our int3's (the stop after it is the thread's group stop again). */
static void drop_queued_traps(const struct journal *j, pid_t tid)
{
	for (int tries = 0; tries < 4; tries++) {
		if (!journal_trap_queued(tid) ||
		    ptrace(PTRACE_CONT, tid, NULL, NULL) < 0)
			return;
		int status;
		if (tracee_wait(tid, &status) <= 0 || !WIFSTOPPED(status))
			return;
		struct user_regs_struct r;
		siginfo_t got;
		if (ptrace(PTRACE_GETSIGINFO, tid, NULL, &got) < 0 ||
		    got.si_signo != SIGTRAP || got.si_code != SI_KERNEL ||
		    ptrace(PTRACE_GETREGS, tid, NULL, &r) < 0)
			continue;
		for (unsigned i = 0; i < JOURNAL_INT3; i++)
			if (j->h->int3[i].in && r.rip == j->h->int3[i].addr + 1) {
				r.rip--;
				ptrace(PTRACE_SETREGS, tid, NULL, &r);
				break;
			}
	}
}

/* Is ADDR in one of the instrument engine's code caches? */
static bool in_cache(const struct journal *j, uint64_t addr)
{
	for (unsigned i = 0; i < JOURNAL_CACHES; i++) {
		uint64_t hi = __atomic_load_n(&j->h->cache[i][1],
					      __ATOMIC_ACQUIRE);
		if (hi && addr >= j->h->cache[i][0] && addr < hi)
			return true;
	}
	return false;
}

/* tracee_wait for thread TID, which runs from the code cache: 20 ms at
 * most, then it is interrupted (seized by take_over).  A thread that left
 * the cache by a stub whose system call was skipped runs natively from
 * there, and may make no system call for as long as it lives (a loop):
 * it kept its guardian, its pin and the cache while it ran
 * (tests/attach/kill9.sh's toggle windows, once its targets ran until
 * told to end). */
static pid_t wait_run(pid_t tid, int *status)
{
	pid_t r = tracee_wait_within(tid, status, 20000);
	if (r != 0)
		return r;
	if (ptrace(PTRACE_INTERRUPT, tid, NULL, NULL) < 0 && errno != ESRCH)
		return -1;
	return tracee_wait(tid, status);
}

/* Thread TID, stopped in the instrument engine's code cache: run it to
 * where it leaves the cache by design (src/engine/itrans.h), an exit's
 * stub: run with PTRACE_SYSCALL, it stops at the stub's getpid, and at
 * the detach that runs and the stub takes it on natively to the original
 * pc, its registers as they were.  The ring's end bounds how long it runs
 * (a few milliseconds at most): a full ring leaves by a stub too, to the
 * block's own pc.  Or it stood past a stub's system call already (taken
 * at its stop, skipped when cachetrace died) and runs out: stopped at its
 * next system call, natively, which runs at the detach (PTRACE_SYSEMU
 * would skip it: a server's write lost, tests/attach/ringfill.sh), or
 * stopped by wait_run's interrupt, out of the cache.
 * Signals that come meanwhile are kept in SIGS (*N_SIGS of at most MAX)
 * for the detach; a fault of the program's own there (not ours) cannot be
 * put at its original pc without the engine: after three the thread is
 * left as it stands.  True when it is on its way out. */
static bool run_out_of_cache(const struct journal *j, pid_t tid, int *sigs,
			     unsigned *n_sigs, unsigned max)
{
	int sig = 0;
	unsigned faults = 0;
	for (unsigned round = 0; round < 100000; round++) {
		struct user_regs_struct r;
		if (ptrace(PTRACE_GETREGS, tid, NULL, &r) < 0)
			return false;
		if (!in_cache(j, r.rip))
			return true;
		if (round && sig == SIGTRAP && r.orig_rax == ITRANS_STUB_NR)
			return true;	/* at a stub's system call */
		int deliver = 0;
		if (round && sig == SIGSEGV) {
			if (++faults >= 3)
				return false;
			deliver = SIGSEGV;
		} else if (round && sig && sig != SIGTRAP && *n_sigs < max) {
			sigs[(*n_sigs)++] = sig;
		}
		int status;
		if (ptrace(PTRACE_SYSCALL, tid, NULL, (void *)(long)deliver) < 0 ||
		    wait_run(tid, &status) <= 0 || !WIFSTOPPED(status))
			return false;
		sig = (unsigned)status >> 16 ? 0 : WSTOPSIG(status);
	}
	return false;
}

/* Release the target as the journal describes it: by the guardian, or
 * (IN_PROCESS) by cachetrace's crash handler, which is still its tracer:
 * only system calls then, and what the guardian would send again is sent
 * here, the journal marked released. */
static void rescue(struct journal *j, bool in_process)
{
	static struct gthread th[MAX_THREADS];
	pid_t pid = j->h->pid;
	int n = take_over(pid, th, MAX_THREADS, in_process);
	if (n < 0) {
		if (!in_process)
			error_msg("guard: process %d is gone", pid);
		return;
	}
	unsigned redone = 0;
	if (__atomic_load_n(&j->h->wb, __ATOMIC_ACQUIRE)) {
		if (j->h->wb_overflow && !in_process)
			error_msg("guard: a write-back to process %d larger "
				  "than the journal was cut short", pid);
		else if (!j->h->wb_overflow)
			redone = redo(j);
	}
	unsigned int3s = restore_int3s(j, th, n);
	for (int i = 0; i < n; i++) {
		if (!th[i].stopped || th[i].tid <= 0)
			continue;
		if (j->h->dr_used)
			ptrace(PTRACE_POKEUSER, th[i].tid, (void *)
			       offsetof(struct user, u_debugreg[7]), NULL);
		struct user_regs_struct r;
		if (ptrace(PTRACE_GETREGS, th[i].tid, NULL, &r) == 0 &&
		    (r.eflags & 0x100)) {
			r.eflags &= ~0x100ULL;	/* the trap flag */
			ptrace(PTRACE_SETREGS, th[i].tid, NULL, &r);
		}
	}
	/* Threads in the instrument engine's code cache, run out of it
	 * (the signals they took meanwhile sent again after the detach). */
	static int cache_sigs[64];
	static pid_t cache_sig_tids[64];
	unsigned n_cache_sigs = 0, left = 0;
	for (int i = 0; i < n; i++) {
		struct user_regs_struct r;
		if (!th[i].stopped || th[i].tid <= 0 ||
		    ptrace(PTRACE_GETREGS, th[i].tid, NULL, &r) < 0 ||
		    !in_cache(j, r.rip))
			continue;
		unsigned before = n_cache_sigs;
		if (run_out_of_cache(j, th[i].tid, cache_sigs, &n_cache_sigs,
				     64))
			left++;
		for (unsigned k = before; k < n_cache_sigs; k++)
			cache_sig_tids[k] = th[i].tid;
	}
	/* The threads pinned to the tracer's CPU for a window: their own
	 * CPUs back (a server's thread must not stay on one CPU). */
	for (unsigned i = 0; i < JOURNAL_PINS; i++) {
		const struct journal_pin *e = &j->h->pin[i];
		pid_t tid = __atomic_load_n(&e->tid, __ATOMIC_ACQUIRE);
		if (tid > 0 && e->words)
			sched_setaffinity(tid, e->words * sizeof(uint64_t),
					  (const cpu_set_t *)(const void *)
					  e->mask);
	}
	int ours = 0;
	for (int i = 0; i < n; i++) {
		if (th[i].tid <= 0)
			continue;
		if (th[i].stopped)
			drop_queued_traps(j, th[i].tid);
		ptrace(PTRACE_DETACH, th[i].tid, NULL, NULL);
		ours++;
	}
	unsigned sigs = 0;
	for (unsigned k = 0; k < n_cache_sigs; k++)
		if (syscall(SYS_tgkill, pid, cache_sig_tids[k],
			    cache_sigs[k]) == 0)
			sigs++;
	for (unsigned i = 0; i < JOURNAL_SIGS; i++) {
		const struct journal_sig *e = &j->h->sig[i];
		if (e->tid && e->sig &&
		    syscall(SYS_tgkill, pid, e->tid, e->sig) == 0)
			sigs++;
	}
	if (j->h->hold)
		kill(pid, SIGCONT);
	if (in_process) {
		journal_state(j, JOURNAL_RELEASED);
		static const char msg[] = "cachetrace: crashed; the target "
			"was released as it stood (breakpoints removed)\n";
		if (write(2, msg, sizeof(msg) - 1) < 0)
			return;
		return;
	}
	error_msg("guard: cachetrace ended without releasing process %d: "
		  "%d thread%s taken back, %u int3 byte%s restored, %u record%s "
		  "of a write-back redone, %u held signal%s sent again, %u "
		  "thread%s run out of the code cache; it runs on", pid, ours,
		  ours == 1 ? "" : "s", int3s, int3s == 1 ? "" : "s", redone,
		  redone == 1 ? "" : "s", sigs, sigs == 1 ? "" : "s", left,
		  left == 1 ? "" : "s");
}

static noreturn void guardian(int rfd, int jfd)
{
	/* Out of cachetrace's session and process group; deaf to the
	 * signals that end it. */
	setsid();
	prctl(PR_SET_NAME, "cachetrace-grd");
	tracee_forget_held();		/* (cachetrace's) */
	struct sigaction sa = { .sa_handler = SIG_IGN };
	for (int sig = 1; sig < NSIG; sig++)
		if (sig != SIGKILL && sig != SIGSTOP && sig != SIGSEGV &&
		    sig != SIGBUS && sig != SIGABRT && sig != SIGCHLD)
			sigaction(sig, &sa, NULL);
	sigset_t none;
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	char c;
	while (read(rfd, &c, 1) < 0 && errno == EINTR)
		;
	struct journal j;
	if (journal_map(&j, jfd) < 0)
		_exit(1);
	if (__atomic_load_n(&j.h->state, __ATOMIC_ACQUIRE) == JOURNAL_ARMED)
		rescue(&j, false);
	_exit(0);
}

/* ---- in cachetrace ----------------------------------------------------- */

static struct journal journal;
static int guard_wfd = -1;
static pid_t guard_pid;		/* the target */
static int hold_expect;		/* our SIGSTOPs not yet seen delivered */

static bool all_stopped(const struct tracer *tr)
{
	for (const struct tracee *t = tr->tracees; t; t = t->next)
		if (!tracee_stopped(t))
			return false;
	return true;
}

/* Put the target in our job-control stop: SIGSTOP, every thread through
 * its group stop (each reported: a stop of ours), left stopped for
 * tracer_run to resume.  Every thread is in an interrupt stop. */
static void establish_hold(struct tracer *tr)
{
	tracee_hold_sig = SIGSTOP;
	hold_expect++;
	journal_hold(&journal, true);
	kill(tr->target_pid, SIGSTOP);
	for (struct tracee *t = tr->tracees; t; t = t->next) {
		int sig = t->inject;
		t->inject = 0;
		tracee_restart(t, PTRACE_CONT, sig);
	}
	while (tr->tracees && !all_stopped(tr)) {
		struct event_info ei;
		tracee_next_event(&ei);
		if (ei.ev == TE_NONE && errno != EINTR)
			break;
		if (ei.ev == TE_NONE || ei.ev == TE_INTERRUPTED)
			continue;
		struct tracee *t = tracee_find(tr, ei.tid);
		if (!t && ei.ev != TE_EXITED)
			t = tracee_add(tr, ei.tid);	/* born meanwhile */
		if (ei.ev == TE_EXITED) {
			if (t)
				tracee_remove(tr, ei.tid);
			continue;
		}
		t->flags |= TF_STOPPED;
		if (ei.ev == TE_GROUP_STOP)
			continue;	/* in the stop: left there */
		int sig = 0;
		if (ei.ev == TE_SIGNAL && ei.sig == SIGSTOP && hold_expect)
			hold_expect--, sig = SIGSTOP;	/* ours: deliver */
		else if (ei.ev == TE_SIGNAL || ei.ev == TE_TRAP)
			sig = guard_deliverable(tr, ei.tid, ei.sig);
		tracee_restart(t, PTRACE_CONT, sig);
	}
}

/* cachetrace crashed (a fault, an abort): while it is still the tracer,
 * it stops every thread, collects every stop the kernel holds for it (a
 * trap not collected is a SIGTRAP delivered to the target at our exit)
 * and releases the target as the guardian would, from the journal.
 * Only system calls.  The default action follows (the handler is reset:
 * the fault happens again, abort raises again). */
static void on_crash(int sig)
{
	(void)sig;
	if (guard_journal &&
	    __atomic_load_n(&guard_journal->h->state, __ATOMIC_ACQUIRE) ==
	    JOURNAL_ARMED)
		rescue(guard_journal, true);
}

static void catch_crashes(void)
{
	static const int fatal[] = { SIGSEGV, SIGBUS, SIGABRT, SIGFPE,
				     SIGILL };
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_crash;
	sa.sa_flags = SA_RESETHAND | SA_NODEFER;
	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < sizeof(fatal) / sizeof(fatal[0]); i++)
		sigaction(fatal[i], &sa, NULL);
}

int guard_start(struct tracer *tr)
{
	/* Without shared memory (a seccomp filter, CACHETRACE_HOST=
	 * memfd=no), the journal is ours only: the crash handler uses it,
	 * there is no guardian, and so no stop of ours (nobody would end
	 * it). */
	bool shared = !host_forced("memfd", "no");
	int rc = shared ? journal_open(&journal, tr->target_pid, true) : -1;
	if (rc < 0 && journal_open(&journal, tr->target_pid, false) < 0)
		return -1;
	if (rc < 0) {
		guard_journal = &journal;
		guard_pid = tr->target_pid;
		catch_crashes();
		if (!tr->opt.quiet)
			error_msg("note: no shared memory for a guardian%s: a "
				  "SIGKILL of the tracer process itself may "
				  "harm process %d", shared ? "" :
				  " (CACHETRACE_HOST=memfd=no)",
				  tr->target_pid);
		return 0;
	}
	int p[2];
	if (pipe2(p, O_CLOEXEC) < 0) {
		journal_close(&journal);
		return -1;
	}
	pid_t mid = fork();
	if (mid == 0) {
		/* The middle process: the guardian is its child, then it
		 * ends, so the guardian is nobody's child of ours. */
		if (fork() == 0) {
			close(p[1]);
			guardian(p[0], journal.fd);
		}
		_exit(0);
	}
	close(p[0]);
	if (mid < 0) {
		close(p[1]);
		journal_close(&journal);
		return -1;
	}
	while (waitpid(mid, NULL, 0) < 0 && errno == EINTR)
		;
	guard_wfd = p[1];
	guard_journal = &journal;
	guard_pid = tr->target_pid;
	catch_crashes();
	/* A process stopped already (by its user) stays so: our stop
	 * comes when it is continued (guard_on_signal). */
	if (task_state(tr->target_pid) == 'T')
		journal_hold(&journal, true);
	else
		establish_hold(tr);
	return 0;
}

void guard_fault(const char *site)
{
	/* CACHETRACE_FAULT=kill@SITE:N: the Nth pass at SITE (passes
	 * elsewhere do not count) */
	static const char *f;
	static long countdown = -1;
	if (countdown < 0) {
		f = getenv("CACHETRACE_FAULT");
		countdown = f && !strncmp(f, "kill@", 5) && strchr(f, ':') ?
			    atol(strchr(f, ':') + 1) : 0;
	}
	size_t n = strlen(site);
	if (countdown > 0 && !strncmp(f + 5, site, n) && f[5 + n] == ':' &&
	    --countdown == 0)
		kill(getpid(), SIGKILL);
}

void guard_fault_stopped(pid_t tid, const char *site)
{
	/* read once: this is on the way of every entry into the cache */
	static const char *f;
	static bool read;
	if (!read)
		f = getenv("CACHETRACE_FAULT"), read = true;
	size_t n = strlen(site);
	if (!f || strncmp(f, "kill@", 5) || strncmp(f + 5, site, n) ||
	    f[5 + n] != ':')
		return;
	for (int ms = 0; ms < 5000 && task_state(tid) != 't'; ms++)
		usleep(1000);
	guard_fault(site);
}

void guard_signal(struct tracee *t, int sig)
{
	if (guard_journal)
		journal_signal(guard_journal, &t->guard_slot, t->tid, sig);
}

/* The process TID belongs to (Tgid in /proc/TID/status), or 0. */
static pid_t tgid_of(pid_t tid)
{
	char buf[32];
	return proc_status_field(tid, "Tgid", buf, sizeof(buf)) ? atoi(buf) : 0;
}

void guard_int3(pid_t tid, uint64_t addr, uint8_t orig, bool in)
{
	/* The target's text only: a forked child's copy is not its. */
	if (guard_journal && (tid == guard_pid || tgid_of(tid) == guard_pid))
		journal_int3(guard_journal, addr, orig, in);
}

void guard_cache_int3(unsigned k, uint64_t addr, uint8_t orig)
{
	if (guard_journal)
		journal_cache_int3(guard_journal, k, addr, orig);
}

void guard_pin(struct tracee *t, const cpu_set_t *saved)
{
	if (guard_journal)
		journal_pin(guard_journal, t->tid, saved ?
			    (const uint64_t *)(const void *)saved : NULL,
			    sizeof(cpu_set_t) / sizeof(uint64_t));
}

void guard_dr_used(void)
{
	if (guard_journal && !guard_journal->h->dr_used)
		journal_dr_used(guard_journal);
}

void guard_on_signal(struct tracer *tr, int sig)
{
	if (!guard_journal || guard_wfd < 0)
		return;		/* no guardian: no stop of ours */
	if (sig == SIGSTOP && hold_expect) {
		hold_expect--;
		tracee_hold_sig = SIGSTOP;	/* ours again */
	} else if (sig == SIGSTOP) {
		tracee_hold_sig = 0;	/* the user's: its stops are real */
	} else if (sig == SIGCONT) {
		/* Whoever sent it ended the stop: ours again (the target
		 * still gets its SIGCONT). */
		hold_expect++;
		tracee_hold_sig = SIGSTOP;
		kill(tr->target_pid, SIGSTOP);
	}
}

/* /proc/PID/stat's parent, process group and session. */
static bool proc_ids(pid_t pid, pid_t *ppid, pid_t *pgrp, pid_t *sid)
{
	char buf[512];
	const char *p = proc_stat_fields(pid, buf, sizeof(buf));
	int a, b, c;
	if (!p || sscanf(p, " %*c %d %d %d", &a, &b, &c) != 3)
		return false;
	*ppid = a, *pgrp = b, *sid = c;
	return true;
}

/* Is process group PGRP of session SID orphaned (POSIX): the parent of
 * each member in the group or outside the session? */
static bool pgrp_orphaned(pid_t pgrp, pid_t sid)
{
	DIR *d = opendir("/proc");
	if (!d)
		return false;
	bool orphaned = true;
	struct dirent *de;
	while (orphaned && (de = readdir(d))) {
		pid_t pid = (pid_t)atoi(de->d_name), ppid, g, s, pg, ps, x;
		if (pid <= 0 || !proc_ids(pid, &ppid, &g, &s) || g != pgrp)
			continue;
		if (ppid > 0 && proc_ids(ppid, &x, &pg, &ps) && pg != pgrp &&
		    ps == sid)
			orphaned = false;
	}
	closedir(d);
	return orphaned;
}

int guard_deliverable(struct tracer *tr, pid_t tid, int sig)
{
	pid_t ppid, pgrp, sid;
	if (sig != SIGHUP || !guard_journal || tracee_hold_sig != SIGSTOP ||
	    tracee_si_code(tid) != SI_KERNEL ||
	    !proc_ids(tr->target_pid, &ppid, &pgrp, &sid) ||
	    !pgrp_orphaned(pgrp, sid))
		return sig;
	if (!tr->opt.quiet)
		error_msg("note: process %d's group became orphaned while "
			  "cachetrace held it stopped: the kernel's SIGHUP for "
			  "that not delivered", tr->target_pid);
	return 0;
}

void guard_release(struct tracer *tr)
{
	(void)tr;
	if (!guard_journal)
		return;
	/* Every thread is detached and back in our stop: end it, unless
	 * the user's own stop is in effect (they continue it). */
	if (tracee_hold_sig == SIGSTOP)
		kill(guard_pid, SIGCONT);
	tracee_hold_sig = 0;
	journal_hold(guard_journal, false);
	guard_gone();
}

void guard_gone(void)
{
	if (!guard_journal)
		return;
	journal_state(guard_journal, JOURNAL_RELEASED);
	if (guard_wfd >= 0)
		close(guard_wfd);	/* the guardian reads the end, leaves */
	guard_wfd = -1;
	guard_journal = NULL;
	journal_close(&journal);
}
