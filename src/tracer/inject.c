/* System calls run in a stopped thread of the target, as gdb's `call`
 * and CRIU's parasite do, the thread left exactly as it was.
 *
 * The rules:
 * - The instruction: never ours in the target's text.  A `syscall`
 *   (0f 05) already in an executable mapping of the target runs the call:
 *   the vDSO's first, else one in any r-xp mapping.  The bytes may sit in
 *   the middle of another instruction: the CPU decodes from where rip
 *   points.  Its address is kept per process and read again before each
 *   use (an exec or an munmap may have taken it away).
 * - Where we refuse: a seccomp filter or strict mode (a call it denies
 *   could kill the target), a thread stopped inside a system call (a
 *   PTRACE_EVENT stop of fork, clone, exec or exit, a system-call entry:
 *   the kernel would write that call's result over ours), a kernel trap
 *   still queued for the thread (its owner must drop it first: tracee_
 *   drop_queued_traps), 32-bit code.
 * - The call: the thread's registers saved whole, then rip at the
 *   instruction, rax the number, rdi rsi rdx r10 r8 r9 the arguments,
 *   orig_rax -1 (no system call: the kernel's restart of an interrupted
 *   one, in arch_do_signal_or_restart on the way out of this stop, has
 *   nothing to act on), no trap flag.  One single step runs it: the
 *   kernel reports the step at the call's exit, rip two bytes on, before
 *   the next instruction runs.  Ours interrupted by a signal (-ERESTART*)
 *   is run again.  The thread's own registers, put back whole, and its
 *   stop, still inside get_signal, keep the restart of a call of its own
 *   (a read interrupted for our stop) intact.
 * - A signal that arrives first is taken from the thread at its delivery
 *   stop (it would run a handler on our registers), kept, and sent again
 *   once the thread's registers are back: it is pending for the thread as
 *   before.  Asynchronous signals lose nothing by it but, for those the
 *   kernel or kill() sent, their siginfo (they come again from cachetrace,
 *   SI_TKILL); a sigqueue'd one keeps its value.  A fault at the
 *   instruction means it is no longer there: looked for again, once.
 * - The thread's stop is put back: a signal-delivery stop keeps its
 *   siginfo (a restart with its signal delivers it as it came), an
 *   interrupt or group stop of a seized thread (PTRACE_EVENT_STOP) is
 *   made again, so that PTRACE_LISTEN still applies.  A non-seized
 *   group stop becomes a signal-delivery stop of SIGTRAP.
 * - An rseq critical section the thread was in: the kernel forgets it
 *   when the thread returns to user space outside it (at our
 *   instruction), and it would not be aborted as it must after our stop;
 *   its rseq_cs word is written back.
 * - With a guardian (attached), the saved registers (and that rseq_cs
 *   word) are a write-back in its journal from before ours are set to
 *   after they are restored: if cachetrace dies in between, the guardian
 *   sets them again (guard.c's redo: PTRACE_SETREGS).
 * Calls that keep state for a restart of their own (nanosleep, poll,
 * futex waits: the thread's restart block) must not be injected. */
#include "tracer.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "error.h"
#include "hostenv.h"
#include "journal.h"
#include "procmaps.h"

/* memfd_create's flags of Linux 6.3 (glibc 2.36 does not have them). */
#ifndef MFD_NOEXEC_SEAL
#define MFD_NOEXEC_SEAL	0x0008U
#endif
#ifndef MFD_EXEC
#define MFD_EXEC	0x0010U
#endif

#define USER64_CS	0x33	/* __USER_CS: 64-bit code */
#define EFLAGS_TF	0x100

/* The kernel's restart codes (include/linux/errno.h): our call was
 * interrupted and is run again. */
#define ERESTARTSYS		512
#define ERESTARTNOINTR		513
#define ERESTARTNOHAND		514
#define ERESTART_RESTARTBLOCK	516

/* Signals taken from the thread during one call; more is a flood we do
 * not wait out. */
#define MAX_KEPT 32

/* For reasons that carry a value. */
static char why_buf[192];

CT_FMT(2, 3)
static const char *why_fmt(const char **why, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(why_buf, sizeof(why_buf), fmt, ap);
	va_end(ap);
	return *why = why_buf;
}

/* ---- where the syscall instruction is ---------------------------------- */

static bool is_syscall_insn(pid_t tid, uint64_t addr)
{
	uint8_t b[2];
	return tracee_read_mem(tid, addr, b, 2) == 2 && b[0] == 0x0f &&
	       b[1] == 0x05;
}

/* The first 0f 05 in [LO, HI) of TID's memory, or 0. */
static uint64_t scan_range(pid_t tid, uint64_t lo, uint64_t hi)
{
	static uint8_t buf[65536];
	uint8_t prev = 0;	/* the last byte of the previous chunk */
	for (uint64_t at = lo; at < hi; ) {
		size_t want = hi - at < sizeof(buf) ? hi - at : sizeof(buf);
		ssize_t n = tracee_read_mem(tid, at, buf, want);
		if (n <= 0)
			return 0;
		if (at > lo && prev == 0x0f && buf[0] == 0x05)
			return at - 1;
		for (ssize_t i = 0; i + 1 < n; i++)
			if (buf[i] == 0x0f && buf[i + 1] == 0x05)
				return at + i;
		prev = buf[n - 1];
		at += n;
	}
	return 0;
}

/* A syscall instruction in TID's executable mappings: the vDSO's (it is
 * there in every process), else the first in an r-xp mapping.  0: none. */
static uint64_t find_site(pid_t tid)
{
	for (int pass = 0; pass < 2; pass++) {
		struct maps_iter it;
		struct maps_entry m;
		if (!maps_open(&it, tid))
			return 0;
		uint64_t found = 0;
		while (!found && maps_next(&it, &m)) {
			bool vdso = !strncmp(m.name, "[vdso]", 6);
			/* [vsyscall] is execute-only and emulated: a call
			 * there is no system call. */
			if (pass == 0 ? !vdso :
			    strcmp(m.perms, "r-xp") || vdso ||
			    !strncmp(m.name, "[vsyscall]", 10))
				continue;
			found = scan_range(tid, m.lo, m.hi);
		}
		maps_close(&it);
		if (found)
			return found;
	}
	return 0;
}

/* The instruction for T's process, found again after an exec or when it
 * is no longer there.  0 with *WHY when there is none. */
static uint64_t get_site(struct tracer *tr, struct tracee *t, const char **why)
{
	if (tr->inject_site && tr->inject_site_pid == tr->target_pid &&
	    tr->inject_site_execs == tr->execs &&
	    is_syscall_insn(t->tid, tr->inject_site))
		return tr->inject_site;
	tr->inject_site = find_site(t->tid);
	tr->inject_site_pid = tr->target_pid;
	tr->inject_site_execs = tr->execs;
	if (!tr->inject_site)
		*why = "no syscall instruction is mapped executable in the "
		       "target";
	else
		debug_msg("inject: thread %d: syscall instruction at "
			  "0x%" PRIx64, t->tid, tr->inject_site);
	return tr->inject_site;
}

/* ---- can it be done ---------------------------------------------------- */

static int refused(pid_t tid, const char **why)
{
	char buf[32];
	if (host_forced("inject", "no")) {
		*why = "system calls are not injected: forced by "
		       "CACHETRACE_HOST";
		return -EPERM;
	}
	/* The thread's own mode: filters need not be shared by all the
	 * threads of a process. */
	const char *mode = proc_status_field(tid, "Seccomp", buf, sizeof(buf));
	if (mode && atoi(mode) == 2) {
		*why = "the target has a seccomp filter: cachetrace does not "
		       "inject system calls into it";
		return -EPERM;
	}
	if (mode && atoi(mode) == 1) {
		*why = "the target runs in seccomp strict mode: cachetrace "
		       "does not inject system calls into it";
		return -EPERM;
	}
	return 0;
}

/* What stop T is in, from its siginfo: 0 and *SI when there is one (a
 * signal-delivery stop, a PTRACE_EVENT stop); 1 for a group stop of a
 * thread not seized (no siginfo); -errno when the stop does not allow a
 * call, with *WHY. */
static int stop_kind(pid_t tid, siginfo_t *si, const char **why)
{
	if (ptrace(PTRACE_GETSIGINFO, tid, NULL, si) < 0) {
		if (errno == EINVAL)
			return 1;
		*why = "the thread is gone or not in a ptrace stop";
		return -ESRCH;
	}
	unsigned event = (unsigned)si->si_code >> 8;
	if (si->si_signo == SIGTRAP && event == PTRACE_EVENT_EXIT) {
		*why = "the thread is exiting";
		return -ESRCH;
	}
	if (si->si_signo == SIGTRAP && event && event != PTRACE_EVENT_STOP) {
		*why = "the thread is stopped inside a system call (a "
		       "PTRACE_EVENT stop): the call would take its result";
		return -EBUSY;
	}
	struct __ptrace_syscall_info sc;
	long n = ptrace(PTRACE_GET_SYSCALL_INFO, tid, (void *)sizeof(sc), &sc);
	if (n > 0 && (sc.op == PTRACE_SYSCALL_INFO_ENTRY ||
		      sc.op == PTRACE_SYSCALL_INFO_SECCOMP)) {
		*why = "the thread is stopped at a system call's entry: the "
		       "call would be lost";
		return -EBUSY;
	}
	return 0;
}

/* ---- running it -------------------------------------------------------- */

/* One injected call in progress. */
struct run {
	struct tracee *t;
	uint64_t site;
	siginfo_t kept[MAX_KEPT];	/* taken from the thread meanwhile */
	unsigned n_kept;
	bool overflow;			/* more came than kept holds */
	bool gone;			/* dead: no stop to leave it in */
	bool ended;			/* gone, or at its PTRACE_EVENT_EXIT
					 * (the status deferred) */
	bool stopped;			/* in a ptrace stop (registers can
					 * be set) */
};

/* The signal of the delivery stop the thread is in, kept to be sent
 * again (a standard signal once: the kernel would merge it too). */
static void keep_signal(struct run *run, const siginfo_t *si)
{
	for (unsigned i = 0; si->si_signo < SIGRTMIN && i < run->n_kept; i++)
		if (run->kept[i].si_signo == si->si_signo)
			return;
	if (run->n_kept == MAX_KEPT) {
		run->overflow = true;
		return;
	}
	run->kept[run->n_kept++] = *si;
}

static void send_kept(struct run *run)
{
	pid_t tid = run->t->tid, tgid = 0;
	char buf[32];
	if (run->n_kept && proc_status_field(tid, "Tgid", buf, sizeof(buf)))
		tgid = atoi(buf);
	for (unsigned i = 0; i < run->n_kept; i++) {
		siginfo_t *si = &run->kept[i];
		/* The kernel lets another process queue a siginfo of its
		 * own choosing only with a negative code other than
		 * SI_TKILL (sigqueue, timers, AIO): those keep theirs. */
		if (tgid && si->si_code < 0 && si->si_code != SI_TKILL &&
		    syscall(SYS_rt_tgsigqueueinfo, tgid, tid, si->si_signo,
			    si) == 0)
			continue;
		if (tgid)
			syscall(SYS_tgkill, tgid, tid, si->si_signo);
		else
			syscall(SYS_tkill, tid, si->si_signo);
	}
}

/* STATUS is not a stop: the thread is gone, or (PTRACE_EVENT_EXIT) going.
 * Its status is the dispatcher's (replayed later). */
static void defer(struct run *run, int status)
{
	run->t->deferred_status = status;
	run->t->has_deferred = true;
}

/* Resume the thread (REQUEST) and wait for its next stop, with its
 * registers in *R and its status in *STATUS.  0; -ESRCH when it is gone
 * or going (its status deferred). */
static int resume_wait(struct run *run, int request,
		       struct user_regs_struct *r, int *status)
{
	pid_t tid = run->t->tid;
	int rc = tracee_restart_pid(tid, request, 0);
	if (rc < 0 && rc != -ESRCH)
		return rc;
	run->stopped = false;
	/* out of any PTRACE_SYSEMU stop (instrument.c's flush_sysemu would
	 * run the thread on to its next system call) */
	run->t->sysemu = false;
	if (tracee_wait(tid, status) < 0) {
		run->gone = run->ended = true;	/* dead: no status */
		return -ESRCH;
	}
	if (!WIFSTOPPED(*status)) {
		run->gone = run->ended = true;
		defer(run, *status);
		return -ESRCH;
	}
	run->stopped = true;
	if ((unsigned)*status >> 16 == PTRACE_EVENT_EXIT) {
		run->ended = true;
		defer(run, *status);
		return -ESRCH;
	}
	if (tracee_getregs(tid, r) < 0) {
		run->stopped = false;	/* killed meanwhile */
		run->ended = true;
		return -ESRCH;
	}
	return 0;
}

/* The call ran (the thread is at the instruction after it): take the
 * step's trap if the kernel still holds it (a group stop reported
 * first), keeping any other signal met on the way.  0 or -ESRCH. */
static int settle_after(struct run *run, int status)
{
	pid_t tid = run->t->tid;
	for (int tries = 0; tries < 4; tries++) {
		siginfo_t si;
		if ((unsigned)status >> 16 == 0 &&
		    ptrace(PTRACE_GETSIGINFO, tid, NULL, &si) == 0 &&
		    (si.si_signo != SIGTRAP || si_code_is_sent(si.si_code)))
			keep_signal(run, &si);
		if (!tracee_trap_queued(tid))
			return 0;
		struct user_regs_struct r;
		int rc = resume_wait(run, PTRACE_CONT, &r, &status);
		if (rc < 0)
			return rc;
	}
	return 0;
}

/* Run the call whose registers are CALL until it has run: 0 with its
 * return value in *RES, or -errno with *WHY. */
static int run_call(struct run *run, const struct user_regs_struct *call,
		    long *res, const char **why)
{
	pid_t tid = run->t->tid;
	if (tracee_setregs(tid, call) < 0) {
		*why = "the thread's registers cannot be set";
		return -ESRCH;
	}
	for (unsigned steps = 0; steps < 2 * MAX_KEPT; steps++) {
		struct user_regs_struct r;
		int status;
		int rc = resume_wait(run, PTRACE_SINGLESTEP, &r, &status);
		if (rc < 0) {
			*why = "the thread ended during the call";
			return rc;
		}
		unsigned event = (unsigned)status >> 16;
		if (r.rip == run->site + 2) {
			*res = (long)r.rax;
			rc = settle_after(run, status);
			if (rc < 0) {
				*why = "the thread ended during the call";
				return rc;
			}
			if (*res != -ERESTARTSYS && *res != -ERESTARTNOINTR &&
			    *res != -ERESTARTNOHAND &&
			    *res != -ERESTART_RESTARTBLOCK)
				return 0;
			/* Interrupted by a signal (taken, and kept, at the
			 * next step's delivery stop): again. */
			if (tracee_setregs(tid, call) < 0) {
				*why = "the thread's registers cannot be set";
				return -ESRCH;
			}
			continue;
		}
		if (r.rip != run->site) {
			why_fmt(why, "the step over the syscall instruction at "
				"0x%" PRIx64 " stopped at 0x%llx",
				run->site, r.rip);
			return -EIO;
		}
		if (event)
			continue;	/* a group stop, an interrupt: on */
		siginfo_t si;
		if (ptrace(PTRACE_GETSIGINFO, tid, NULL, &si) < 0) {
			*why = "the thread is gone";
			return -ESRCH;
		}
		int sig = si.si_signo;
		if ((sig == SIGSEGV || sig == SIGBUS || sig == SIGILL ||
		     sig == SIGFPE || sig == SIGTRAP) && si.si_code > 0) {
			/* Raised by the instruction itself: it is not (or no
			 * longer) a syscall we may execute. */
			why_fmt(why, "the syscall instruction at 0x%" PRIx64
				" faulted (signal %d)", run->site, sig);
			return -EFAULT;
		}
		keep_signal(run, &si);
		if (run->overflow) {
			why_fmt(why, "more than %d signals arrived before the "
				"call could run", MAX_KEPT);
			return -EAGAIN;
		}
	}
	*why = "the call was interrupted again and again";
	return -EAGAIN;
}

/* Put T's stop back as it was (see the top): siginfo of a signal-delivery
 * stop, an interrupt or group stop made again.  0, or -ESRCH when the
 * thread ended meanwhile. */
static int restore_stop(struct run *run, int kind, const siginfo_t *si)
{
	pid_t tid = run->t->tid;
	if (kind != 0)
		return 0;
	if ((unsigned)si->si_code >> 8 != PTRACE_EVENT_STOP) {
		ptrace(PTRACE_SETSIGINFO, tid, NULL, si);
		return 0;
	}
	/* Our step's trap was a signal-delivery stop; the interrupt taken
	 * now is reported by the same pass of get_signal, before any
	 * pending signal and before the thread returns to user space. */
	struct user_regs_struct r;
	int status;
	if (tracee_interrupt(tid) < 0)
		return 0;
	for (int tries = 0; tries < 4; tries++) {
		if (resume_wait(run, PTRACE_CONT, &r, &status) < 0)
			return -ESRCH;
		if ((unsigned)status >> 16 == PTRACE_EVENT_STOP)
			return 0;
		siginfo_t other;	/* a signal first: kept */
		if (ptrace(PTRACE_GETSIGINFO, tid, NULL, &other) == 0)
			keep_signal(run, &other);
	}
	return 0;
}

/* The thread's rseq_cs word (the critical section it is in), 0 when none
 * or unknown; *AT its address. */
static uint64_t read_rseq_cs(pid_t tid, uint64_t *at)
{
	struct __ptrace_rseq_configuration conf;
	uint64_t cs = 0;
	*at = 0;
	if (ptrace(PTRACE_GET_RSEQ_CONFIGURATION, tid, (void *)sizeof(conf),
		   &conf) <= 0 || !conf.rseq_abi_pointer)
		return 0;
	*at = conf.rseq_abi_pointer + 8;	/* struct rseq's rseq_cs */
	if (tracee_read_mem(tid, *at, &cs, 8) != 8)
		return 0;
	return cs;
}

int inject_syscall(struct tracer *tr, struct tracee *t, long nr,
		   const long args[6], long *result, const char **why)
{
	const char *dummy;
	if (!why)
		why = &dummy;
	int rc = refused(t->tid, why);
	if (rc < 0)
		return rc;
	struct user_regs_struct saved;
	if (tracee_getregs(t->tid, &saved) < 0) {
		*why = "the thread is gone or not in a ptrace stop";
		return -ESRCH;
	}
	if (saved.cs != USER64_CS) {
		*why = "the thread runs 32-bit code";
		return -EINVAL;
	}
	siginfo_t stop_si;
	int kind = stop_kind(t->tid, &stop_si, why);
	if (kind < 0)
		return kind;
	if (tracee_trap_queued(t->tid)) {
		*why = "a trap the kernel raised is queued for the thread";
		return -EBUSY;
	}
	struct run run = { .t = t, .stopped = true };
	bool ran = false;	/* the thread was resumed */
	for (int attempt = 0; ; attempt++) {
		run.site = get_site(tr, t, why);
		if (!run.site) {
			rc = -ENOEXEC;
			break;
		}
		struct user_regs_struct call = saved;
		call.rip = run.site;
		call.rax = nr;
		call.orig_rax = -1;
		call.rdi = args[0];
		call.rsi = args[1];
		call.rdx = args[2];
		call.r10 = args[3];
		call.r8 = args[4];
		call.r9 = args[5];
		call.eflags &= ~(unsigned long long)EFLAGS_TF;

		uint64_t rseq_at;
		uint64_t rseq_cs = read_rseq_cs(t->tid, &rseq_at);
		struct journal *j = guard_journal;
		if (j) {
			journal_wb_begin(j);
			journal_wb_add(j, JREC_REGS, t->tid, 0, &saved,
				       sizeof(saved));
			if (rseq_cs)
				journal_wb_add(j, JREC_MEM, 0, rseq_at,
					       &rseq_cs, 8);
			journal_wb_commit(j);
		}
		ran = true;
		rc = run_call(&run, &call, result, why);
		/* tests/attach/kill9.sh: the thread at its step's trap
		 * after the call, its registers ours */
		guard_fault("inject");
		if (run.stopped && tracee_setregs(t->tid, &saved) < 0)
			run.stopped = false;
		if (run.stopped && rseq_cs)
			tracee_write_mem(t->tid, rseq_at, &rseq_cs, 8);
		if (j)
			journal_wb_done(j);
		if (rc == -EFAULT && attempt == 0 && run.stopped) {
			/* The instruction went away (an munmap, an mmap over
			 * it): look for another, once. */
			tr->inject_site = 0;
			continue;
		}
		break;
	}
	if (rc == -EFAULT)
		tr->inject_site = 0;
	if (ran && !run.ended && restore_stop(&run, kind, &stop_si) < 0 &&
	    rc == 0) {
		*why = "the thread ended after the call";
		rc = -ESRCH;
	}
	send_kept(&run);
	if (rc == 0)
		debug_msg("inject: thread %d: system call %ld = %ld", t->tid,
			  nr, *result);
	else
		debug_msg("inject: thread %d: system call %ld failed: %s",
			  t->tid, nr, *why);
	return rc;
}

/* ---- shared memory ----------------------------------------------------- */

/* A call that may only fail with an errno: 0 with *RES, or -errno with
 * *WHY naming WHAT. */
static int checked_call(struct tracer *tr, struct tracee *t, const char *what,
			long nr, const long args[6], long *res,
			const char **why)
{
	int rc = inject_syscall(tr, t, nr, args, res, why);
	if (rc < 0)
		return rc;
	if (*res < 0 && *res > -4096) {
		why_fmt(why, "%s in the target failed: %s", what,
			strerror((int)-*res));
		return (int)*res;
	}
	return 0;
}

/* Undo, its failure being of no more interest than the first one's. */
static void undo(struct tracer *tr, struct tracee *t, long nr, long a0,
		 long a1)
{
	const long args[6] = { a0, a1 };
	const char *why;
	long res;
	inject_syscall(tr, t, nr, args, &res, &why);
}

/* memfd_create(NAME) in T: the target's descriptor, or -errno.  NAME is
 * written below the red zone (the 128 bytes under rsp a leaf function may
 * use; the ABI gives what lies below to nobody: a signal frame would go
 * there), and what was there is put back. */
static int target_memfd(struct tracer *tr, struct tracee *t, const char *name,
			int prot, const char **why)
{
	struct user_regs_struct r;
	if (tracee_getregs(t->tid, &r) < 0) {
		*why = "the thread is gone or not in a ptrace stop";
		return -ESRCH;
	}
	char orig[256];
	size_t len = strlen(name) + 1;
	if (len > 250) {	/* the kernel's limit: 249 characters */
		*why = "the memfd's name is too long";
		return -ENAMETOOLONG;
	}
	uint64_t at = (r.rsp - 128 - sizeof(orig)) & ~15ULL;
	if (tracee_read_mem(t->tid, at, orig, sizeof(orig)) !=
	    (ssize_t)sizeof(orig) || tracee_write_mem(t->tid, at, name, len) < 0) {
		*why = "the memfd's name cannot be written below the thread's "
		       "stack pointer";
		return -EFAULT;
	}
	/* Say whether the file may be mapped executable (vm.memfd_noexec
	 * may decide otherwise); kernels before 6.3 know neither flag. */
	long args[6] = { (long)at, MFD_CLOEXEC |
			 (prot & PROT_EXEC ? MFD_EXEC : MFD_NOEXEC_SEAL) };
	long fd;
	int rc = checked_call(tr, t, "memfd_create", SYS_memfd_create, args,
			      &fd, why);
	if (rc == -EINVAL) {
		args[1] = MFD_CLOEXEC;
		rc = checked_call(tr, t, "memfd_create", SYS_memfd_create,
				  args, &fd, why);
	}
	tracee_write_mem(t->tid, at, orig, len);
	return rc < 0 ? rc : (int)fd;
}

int inject_map_shared(struct tracer *tr, struct tracee *t, uint64_t hint,
		      size_t len, int prot, const char *name,
		      uint64_t *target_addr, void **local, const char **why)
{
	const char *dummy;
	if (!why)
		why = &dummy;
	int tfd = target_memfd(tr, t, name, prot, why);
	if (tfd < 0)
		return tfd;

	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/fd/%d", t->tid, tfd);
	int lfd = open(path, O_RDWR | O_CLOEXEC);
	int rc = lfd < 0 ? -errno : 0;
	if (rc < 0) {
		why_fmt(why, "cannot open the target's memfd (%s): %s", path,
			strerror(-rc));
		undo(tr, t, SYS_close, tfd, 0);
		return rc;
	}
	if (ftruncate(lfd, (off_t)len) < 0) {
		rc = -errno;
		why_fmt(why, "cannot size the memfd to %zu bytes: %s", len,
			strerror(-rc));
		goto fail;
	}
	long res;
	const long margs[6] = { (long)hint, (long)len, prot,
		MAP_SHARED | (hint ? MAP_FIXED_NOREPLACE : 0), tfd, 0 };
	rc = checked_call(tr, t, "mmap", SYS_mmap, margs, &res, why);
	if (rc == -EEXIST || (rc == 0 && hint && (uint64_t)res != hint)) {
		/* A kernel before 4.17 takes MAP_FIXED_NOREPLACE for a
		 * hint. */
		if (rc == 0)
			undo(tr, t, SYS_munmap, res, (long)len);
		rc = -EEXIST;
		why_fmt(why, "the range at 0x%" PRIx64 " is not free in the "
			"target", hint);
	}
	if (rc < 0)
		goto fail;
	uint64_t addr = (uint64_t)res;
	const long cargs[6] = { tfd };
	rc = checked_call(tr, t, "close", SYS_close, cargs, &res, why);
	if (rc < 0) {
		undo(tr, t, SYS_munmap, (long)addr, (long)len);
		close(lfd);
		return rc;
	}
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, lfd, 0);
	close(lfd);
	if (p == MAP_FAILED) {
		rc = -errno;
		why_fmt(why, "cannot map the memfd here: %s", strerror(-rc));
		undo(tr, t, SYS_munmap, (long)addr, (long)len);
		return rc;
	}
	*target_addr = addr;
	*local = p;
	debug_msg("inject: thread %d: %zu bytes of memfd:%s at 0x%" PRIx64
		  " (here %p)", t->tid, len, name, addr, p);
	return 0;

fail:
	close(lfd);
	undo(tr, t, SYS_close, tfd, 0);
	return rc;
}

int inject_unmap(struct tracer *tr, struct tracee *t, uint64_t addr,
		 size_t len, const char **why)
{
	const char *dummy;
	const long args[6] = { (long)addr, (long)len };
	long res;
	return checked_call(tr, t, "munmap", SYS_munmap, args, &res,
			    why ? why : &dummy);
}
