/* What this host gives a tracer, found out by experiment (after CRIU's
 * kerndat and rr's start-up checks), once per run and only when needed.
 *
 * One throw-away child, forked from us, runs a few instructions of ours
 * (probe_code below) under PTRACE_TRACEME:
 * - single steps over cpuid, rdtsc and syscall: each must land on the
 *   next instruction.  Under some hypervisors (measured: an AMD EPYC guest
 *   of "PVM") a step over cpuid traps one instruction late, the next one
 *   run unseen.  cachetrace never steps cpuid (cpuid.c executes it for the
 *   target), and every real step's landing is checked (step.c): the answer
 *   is for --check.
 * - a debug register on an instruction the child then runs: the same host
 *   accepts DR0/DR7 and never traps.  Where they do not fire, the start
 *   events are int3s (--breakpoints=sw) and data watches are refused.
 * The child cannot hang us: its code ends in an int3 and an exit, and a
 * SIGALRM of its own ends it if something stalls.
 *
 * Every answer can be forced (CACHETRACE_HOST, include/hostenv.h) so that
 * the suite runs the fallbacks on every host. */
#include "tracer.h"

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "error.h"
#include "hostenv.h"

/* The child's code.  Registers are set by the parent before each step;
 * the labels are the instructions and where each step must land (global
 * but hidden: with link-time optimization this asm and the C that names
 * its labels may land in different partitions). */
__asm__(
	".pushsection .text\n"
	".globl ct_probe_code\n.hidden ct_probe_code\n"
	".globl ct_probe_cpuid\n.hidden ct_probe_cpuid\n"
	".globl ct_probe_after_cpuid\n.hidden ct_probe_after_cpuid\n"
	".globl ct_probe_rdtsc\n.hidden ct_probe_rdtsc\n"
	".globl ct_probe_after_rdtsc\n.hidden ct_probe_after_rdtsc\n"
	".globl ct_probe_syscall\n.hidden ct_probe_syscall\n"
	".globl ct_probe_after_syscall\n.hidden ct_probe_after_syscall\n"
	".globl ct_probe_hw_before\n.hidden ct_probe_hw_before\n"
	".globl ct_probe_hw\n.hidden ct_probe_hw\n"
	".globl ct_probe_hw_missed\n.hidden ct_probe_hw_missed\n"
	".p2align 4\n"
	".type ct_probe_code, @function\n"
	"ct_probe_code:\n"
	"	int3\n"				/* the parent takes over */
	"ct_probe_cpuid:\n"
	"	cpuid\n"
	"ct_probe_after_cpuid:\n"
	"	nop\n"
	"ct_probe_rdtsc:\n"
	"	rdtsc\n"
	"ct_probe_after_rdtsc:\n"
	"	nop\n"
	"ct_probe_syscall:\n"
	"	syscall\n"
	"ct_probe_after_syscall:\n"
	"	nop\n"
	"ct_probe_hw_before:\n"
	"	nop\n"
	"ct_probe_hw:\n"			/* DR0 */
	"	nop\n"
	"	int3\n"				/* DR0 did not fire */
	"ct_probe_hw_missed:\n"
	"	mov $60, %eax\n"
	"	xor %edi, %edi\n"
	"	syscall\n"
	".size ct_probe_code, .-ct_probe_code\n"
	".popsection\n");
extern const char ct_probe_code[], ct_probe_cpuid[], ct_probe_after_cpuid[],
	ct_probe_rdtsc[], ct_probe_after_rdtsc[], ct_probe_syscall[],
	ct_probe_after_syscall[], ct_probe_hw_before[], ct_probe_hw[],
	ct_probe_hw_missed[];

static noreturn void probe_child(void)
{
	alarm(5);
	if (ptrace(PTRACE_TRACEME, 0, 0, 0) < 0)
		_exit(100 + (errno < 100 ? errno : 99));
	((void (*)(void))(uintptr_t)ct_probe_code)();
	_exit(0);
}

/* Wait for the child's next stop: the signal that stopped it, 0 when it
 * exited or died. */
static int wait_stop(pid_t pid, int *status)
{
	while (waitpid(pid, status, __WALL) < 0)
		if (errno != EINTR)
			return 0;
	return WIFSTOPPED(*status) ? WSTOPSIG(*status) : 0;
}

/* Step the instruction at AT (registers as they are, but rip and rax);
 * where it landed, 0 on failure. */
static uint64_t probe_step(pid_t pid, const char *at, unsigned long long rax)
{
	struct user_regs_struct r;
	int status;
	if (ptrace(PTRACE_GETREGS, pid, 0, &r) < 0)
		return 0;
	r.rip = (uintptr_t)at;
	r.rax = rax;
	r.rcx = 0;
	if (ptrace(PTRACE_SETREGS, pid, 0, &r) < 0 ||
	    ptrace(PTRACE_SINGLESTEP, pid, 0, 0) < 0 ||
	    wait_stop(pid, &status) != SIGTRAP ||
	    ptrace(PTRACE_GETREGS, pid, 0, &r) < 0)
		return 0;
	return r.rip;
}

static enum landing landing_of(uint64_t rip, const char *next,
			       const char *after_next)
{
	if (rip == (uintptr_t)next)
		return LANDING_PRECISE;
	if (rip == (uintptr_t)after_next)
		return LANDING_LATE;
	return LANDING_UNKNOWN;
}

/* DR0 on ct_probe_hw, then run: does it trap there? */
static bool probe_hwbp(pid_t pid)
{
	struct user_regs_struct r;
	int status;
	size_t dr = offsetof(struct user, u_debugreg);
	if (ptrace(PTRACE_GETREGS, pid, 0, &r) < 0)
		return false;
	r.rip = (uintptr_t)ct_probe_hw_before;
	if (ptrace(PTRACE_SETREGS, pid, 0, &r) < 0 ||
	    ptrace(PTRACE_POKEUSER, pid, dr, (uintptr_t)ct_probe_hw) < 0 ||
	    ptrace(PTRACE_POKEUSER, pid, dr + 7 * sizeof(long), 1L) < 0 ||
	    ptrace(PTRACE_CONT, pid, 0, 0) < 0 ||
	    wait_stop(pid, &status) != SIGTRAP ||
	    ptrace(PTRACE_GETREGS, pid, 0, &r) < 0)
		return false;
	return r.rip == (uintptr_t)ct_probe_hw;
}

static void run_probe(struct hostcaps *hc)
{
	int status;
	pid_t pid = fork();
	if (pid < 0) {
		hc->ptrace_err = errno;
		return;
	}
	if (pid == 0)
		probe_child();
	int sig = wait_stop(pid, &status);
	if (sig != SIGTRAP) {
		hc->ptrace_err = !sig && WIFEXITED(status) &&
				 WEXITSTATUS(status) > 100 ?
				 WEXITSTATUS(status) - 100 : EPERM;
		if (sig)
			kill(pid, SIGKILL);
		waitpid(pid, &status, __WALL);
		return;
	}
	/* process_vm_readv, as the emulator reads its pages. */
	unsigned char byte = 0;
	struct iovec local = { &byte, 1 };
	struct iovec remote = { (void *)(uintptr_t)ct_probe_code, 1 };
	hc->vm_readv = process_vm_readv(pid, &local, 1, &remote, 1, 0) == 1 &&
		       byte == 0xcc;
	hc->cpuid = landing_of(probe_step(pid, ct_probe_cpuid, 0),
			       ct_probe_after_cpuid, ct_probe_rdtsc);
	hc->rdtsc = landing_of(probe_step(pid, ct_probe_rdtsc, 0),
			       ct_probe_after_rdtsc, ct_probe_syscall);
	hc->syscall = landing_of(probe_step(pid, ct_probe_syscall, SYS_getpid),
				 ct_probe_after_syscall, ct_probe_hw_before);
	hc->hwbp = probe_hwbp(pid);
	kill(pid, SIGKILL);
	waitpid(pid, &status, __WALL);
}

void hostcaps_probe(struct hostcaps *hc)
{
	if (hc->probed)
		return;
	double t0 = now_seconds();
	run_probe(hc);
	hc->probed = true;
	hc->seconds = now_seconds() - t0;
	/* hostenv_check has vetted the values: yes|no, precise|late. */
	char v[16];
	hc->hwbp_forced = hostenv_get("hwbp", v, sizeof(v)) != NULL;
	if (hc->hwbp_forced)
		hc->hwbp = !strcmp(v, "yes");
	hc->cpuid_forced = hostenv_get("cpuid-step", v, sizeof(v)) != NULL;
	if (hc->cpuid_forced)
		hc->cpuid = !strcmp(v, "late") ? LANDING_LATE : LANDING_PRECISE;
	debug_msg("host probe (%.1f ms): ptrace %d, process_vm_readv %d, "
		  "hw breakpoints %d%s, steps over cpuid %d%s, rdtsc %d, "
		  "syscall %d", hc->seconds * 1e3, hc->ptrace_err, hc->vm_readv,
		  hc->hwbp, hc->hwbp_forced ? " (forced)" : "", hc->cpuid,
		  hc->cpuid_forced ? " (forced)" : "", hc->rdtsc, hc->syscall);
}

const char *hostcaps_landing_name(enum landing l)
{
	switch (l) {
	case LANDING_PRECISE:
		return "precise";
	case LANDING_LATE:
		return "one instruction late";
	default:
		return "lands elsewhere";
	}
}

int hostcaps_apply(struct tracer *tr)
{
	struct options *o = &tr->opt;
	bool want_hw = (o->start && !o->sw_breakpoints) || o->start_watch;
	if (!want_hw)
		return 0;
	hostcaps_probe(&tr->host);
	if (tr->host.hwbp)
		return 0;
	const char *why = tr->host.hwbp_forced ?
		"the debug registers do not fire (CACHETRACE_HOST=hwbp=no)" :
		"this host's debug registers do not fire (accepted, never "
		"trapping: cachetrace --check)";
	if (o->start_watch) {
		error_msg("--start-watch needs a hardware watchpoint, and %s",
			  why);
		return -1;
	}
	if (o->breakpoints_given) {
		error_msg("--breakpoints=hw: %s; use --breakpoints=sw", why);
		return -1;
	}
	o->sw_breakpoints = true;
	if (!o->quiet && !o->forked_child)
		error_msg("note: %s: --start=%s is an int3 "
			  "(--breakpoints=sw)", why, o->start);
	return 0;
}

bool hostcaps_vm_rw(void)
{
	/* A seccomp filter (a container's) refuses the calls whatever the
	 * target: try them on ourselves. */
	static volatile char cell = 1;
	char byte = 2;
	struct iovec local = { &byte, 1 };
	struct iovec remote = { (void *)&cell, 1 };
	return process_vm_writev(getpid(), &local, 1, &remote, 1, 0) == 1 &&
	       process_vm_readv(getpid(), &local, 1, &remote, 1, 0) == 1 &&
	       cell == 2;
}
