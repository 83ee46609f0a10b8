/* Instructions the supervisor executes for the target instead of
 * single-stepping them: cpuid, and xgetbv under --cpuid=valgrind.
 *
 * Why: under some hypervisors a PTRACE_SINGLESTEP over cpuid traps one
 * instruction late (the hypervisor emulates cpuid and loses the pending
 * debug trap), so the next instruction runs unseen: measured on an AMD
 * EPYC guest of "PVM", where glibc's loader then stored cpuid's answer
 * behind the emulator's back and exited ("CPU ISA level is lower than
 * required").  Unicorn's own cpuid answers QEMU's CPU, not the host's.
 *
 * The rules:
 * - cpuid runs here, on the CPU the thread is pinned to with us (leaf 1's
 *   APIC id and leaf 0xb's x2APIC id are per CPU); eax and ecx are the
 *   thread's; rax, rbx, rcx and rdx get the answer zero-extended, as the
 *   CPU writes them, and rip moves past the instruction.  Flags and memory
 *   are untouched, as by the CPU.  This is what valgrind does: its cpuid
 *   is a helper that runs the host's cpuid.
 * - It is accounted like any instruction (one fetch, no data access).
 * - Not when a signal is to be delivered with the thread's next restart
 *   (the real step delivers it, nothing executes), and not when the
 *   thread is still inside a system call (its first real step finishes
 *   the call): the caller decides (SUPER_NO).
 * - CACHETRACE_CPUID_ON_CPU=1 (tests only) steps cpuid on the CPU again,
 *   so that the suite can show what the landing check (step.c) does when
 *   a host's step is late; with CACHETRACE_HOST=cpuid-step=late the
 *   lost trap is imitated on any host (step_issue).
 * - --cpuid=valgrind (cpuid_vg.c): cpuid answers as valgrind 3.19 does
 *   on this host, xgetbv(0) as VEX does (7: x87, SSE, AVX) where that CPU
 *   has AVX (xgetbv with another ecx, or on the others, runs on the CPU),
 *   and an xsave-family instruction is stepped with edx:eax & 7, as VEX
 *   saves and restores (glibc sized its buffer by that CPU's leaf 0xd:
 *   a host's AVX-512 state must not be written past it); its own rax and
 *   rdx are put back after the step.  Only in windows: code run before
 *   (the loader, when the window is not the whole run) saw the host's. */
#include "tracer.h"

#include <capstone/capstone.h>
#include <cpuid.h>
#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "hostenv.h"

/* The CPU thread TID last ran on (/proc's stat field 39), or -1. */
static int thread_cpu(pid_t pid, pid_t tid)
{
	char path[64], buf[1024];
	snprintf(path, sizeof(path), "/proc/%d/task/%d/stat", pid, tid);
	FILE *f = fopen(path, "re");
	if (!f)
		return -1;
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	/* Fields after the command (which may hold spaces) start at ") ". */
	char *p = strrchr(buf, ')');
	for (int field = 2; p && field < 39; field++)
		p = strchr(p + 1, ' ');
	return p ? atoi(p + 1) : -1;
}

/* cpuid(LEAF, SUBLEAF) on CPU (-1: wherever we are), our affinity kept. */
static void cpuid_on(int cpu, unsigned leaf, unsigned subleaf,
		     unsigned out[4])
{
	cpu_set_t saved, one;
	bool moved = false;
	if (cpu >= 0 && sched_getcpu() != cpu &&
	    sched_getaffinity(0, sizeof(saved), &saved) == 0) {
		CPU_ZERO(&one);
		CPU_SET(cpu, &one);
		moved = sched_setaffinity(0, sizeof(one), &one) == 0;
	}
	__cpuid_count(leaf, subleaf, out[0], out[1], out[2], out[3]);
	if (moved)
		sched_setaffinity(0, sizeof(saved), &saved);
}

static bool vg_xgetbv(const struct tracer *tr, const struct tracee *t)
{
	return t->insn->id == X86_INS_XGETBV && tr->opt.cpuid_valgrind &&
	       vg_cpuid_avx(&tr->vg) && (uint32_t)t->regs.rcx == 0;
}

/* Is the cpuid we run the CPU's the target runs on?  Not where
 * cachetrace itself runs under a binary translator: valgrind answers its
 * own CPU's (leaf 0xd: an XSAVE area of 832 bytes on a host whose CPU
 * writes 11,008), and glibc's loader, sizing its lazy-binding save area
 * by our answer, had its stack overwritten by the real xsavec (the
 * target died at a return to 0).  The kernel's XSAVE area for the
 * target (NT_X86_XSTATE) larger than our leaf 0xd's says so; then the
 * target's cpuid runs on the CPU, with a note (on a host whose step over
 * cpuid is late, step.c's landing check then ends the window).
 * CACHETRACE_HOST=cpuid-own=no forces it. */
static bool own_cpuid(const struct tracer *tr, pid_t tid)
{
	static int own = -1;
	if (own >= 0)
		return own;
	own = 1;
	static uint8_t xs[64 * 1024];
	unsigned out[4];
	ssize_t len;
	char why[96] = "CACHETRACE_HOST=cpuid-own=no";
	if (host_forced("cpuid-own", "no")) {
		own = 0;
	} else if (__get_cpuid_max(0, NULL) >= 0xd &&
		   (len = tracee_read_xstate(tid, xs, sizeof(xs))) > 0) {
		cpuid_on(-1, 0xd, 0, out);
		own = (size_t)len <= out[1];
		if (!own)
			snprintf(why, sizeof(why), "its XSAVE area %u bytes, "
				 "the kernel's %zd: run under an emulator?",
				 out[1], len);
	}
	if (!own && !tr->opt.quiet)
		error_msg("note: cachetrace's own cpuid is not the CPU's (%s): "
			  "the target's cpuid runs on the CPU", why);
	return own;
}

static bool cpuid_by_supervisor(const struct tracer *tr,
				const struct tracee *t)
{
	static int on_cpu = -1;
	if (on_cpu < 0)
		on_cpu = getenv("CACHETRACE_CPUID_ON_CPU") != NULL;
	if (!t->insn || t->inject)
		return false;
	if (vg_xgetbv(tr, t))
		return true;
	return t->insn->id == X86_INS_CPUID && !on_cpu &&
	       (tr->opt.cpuid_valgrind || own_cpuid(tr, t->tid));
}

void cpuid_vg_before_step(struct tracer *tr, struct tracee *t)
{
	struct user_regs_struct *r = &t->regs;
	if (!tr->opt.cpuid_valgrind || !t->insn ||
	    !decode_xsave_family(t->insn) ||
	    (!((uint32_t)r->rax & ~7u) && !(uint32_t)r->rdx))
		return;
	struct user_regs_struct m = *r;
	m.rax = (r->rax & ~0xffffffffull) | (r->rax & 7);
	m.rdx = r->rdx & ~0xffffffffull;
	if (tracee_setregs(t->tid, &m) < 0)
		return;		/* dying: its exit event follows */
	t->vg_masked = true;
	t->vg_rax = r->rax;
	t->vg_rdx = r->rdx;
	*r = m;			/* what the accounting sees, as VEX does */
}

void cpuid_vg_after_step(struct tracee *t, struct user_regs_struct *after,
			 bool ran)
{
	if (!t->vg_masked)
		return;
	t->vg_masked = false;
	if (!ran)
		return;		/* a handler's entry: its frame keeps them */
	after->rax = t->vg_rax;
	after->rdx = t->vg_rdx;
	tracee_setregs(t->tid, after);
}

enum super_outcome step_in_supervisor(struct tracer *tr, struct tracee *t)
{
	/* Inside a system call (the window began at its stop): the real
	 * step finishes it before anything else runs. */
	if (!cpuid_by_supervisor(tr, t) || t->in_syscall)
		return SUPER_NO;
	int cpu = -1;		/* the host's cpuid's, where it runs */
	unsigned out[4];
	struct user_regs_struct after = t->regs;
	if (t->insn->id == X86_INS_XGETBV) {
		after.rax = 7;
		after.rdx = 0;
		goto done;
	}
	if (tr->opt.cpuid_valgrind) {
		vg_cpuid(&tr->vg, (uint32_t)t->regs.rax, (uint32_t)t->regs.rcx,
			 out);
	} else {
		cpu = t->pinned && !t->pin_apart ? tr->pin_cpu :
		      thread_cpu(tr->target_pid, t->tid);
		cpuid_on(cpu, (unsigned)t->regs.rax, (unsigned)t->regs.rcx,
			 out);
	}
	after.rax = out[0];
	after.rbx = out[1];
	after.rcx = out[2];
	after.rdx = out[3];
done:
	after.rip += t->insn->len;
	int rc = tracee_setregs(t->tid, &after);
	if (rc < 0) {
		/* Dying (ESRCH): its exit event follows; let the real step
		 * find that out. */
		debug_msg("cpuid for thread %d: setregs: %s", t->tid,
			  strerror(-rc));
		return SUPER_NO;
	}
	debug_msg("%s(0x%x, 0x%x) for thread %d on CPU %d: %08llx %08llx "
		  "%08llx %08llx", t->insn->id == X86_INS_CPUID ? "cpuid" :
		  "xgetbv", (unsigned)t->regs.rax, (unsigned)t->regs.rcx,
		  t->tid, cpu, after.rax, after.rbx, after.rcx, after.rdx);
	tr->n_cpuid += t->insn->id == X86_INS_CPUID;
	engine_account(&tr->eng, t, &after);
	if (tracee_leads(t) && engine_at_stop(&tr->eng, t))
		return SUPER_ENDED;	/* VERDICT_STOP */
	return SUPER_DONE;
}
