/* The single-step engine: a thread in a window executes one instruction
 * per PTRACE_SINGLESTEP, and every trap is one instruction accounted.
 *
 * Its rules:
 * - Before each step the next instruction is decoded (a decode-cache
 *   lookup); an instruction that cannot be read ends the window and the
 *   thread runs on natively.
 * - An instruction under our int3 (--breakpoints=sw) is the tracer's to
 *   execute (VERDICT_INT3: it steps it over with the other threads
 *   stopped), then stepping goes on from there.
 * - A trap right after a signal was injected, with si_code SIGTRAP, is the
 *   entry of the signal's handler: nothing executed, the pc moved.
 * - A SIGTRAP sent by a process (raise, kill) is the target's: delivered
 *   with the next step, never taken for a step of ours.
 * - A trap at a system call's exit with the pc unchanged finished (or
 *   restarted) a call the thread had been interrupted in: nothing ran.
 * - cpuid is never stepped: the supervisor executes it (cpuid.c).
 * - Every step's landing is checked against where the instruction can
 *   go; a step that ran more than one instruction ends the window with an
 *   error (step_check_landing).
 * - The debug registers of a stepped thread are off (its own window must
 *   not trap on them); the thread and the tracer are pinned to one CPU. */
#include "engine.h"

#include <capstone/capstone.h>
#include <errno.h>
#include <inttypes.h>
#include <sys/ptrace.h>

#include "error.h"
#include "hostenv.h"
#include "tracer.h"

int step_join(struct tracer *tr, struct tracee *t)
{
	(void)tr;
	if (!(t->flags & TF_REGS_READ)) {
		int rc = tracee_getregs(t->tid, &t->regs);
		if (rc < 0)
			return rc;
	}
	t->flags |= TF_STEPPING;
	t->insn = NULL;
	t->win.lost = NULL;
	/* Stopped inside a system call (an exec, a thread interrupted while
	 * blocked): orig_rax is its number until a real step finishes it. */
	t->in_syscall = (long long)t->regs.orig_rax >= 0;
	t->syscall_at_start = (long long)t->regs.orig_rax;
	return 0;
}

static int step_begin_window(struct tracer *tr, struct tracee *t)
{
	int rc = step_join(tr, t);
	if (rc == 0)
		tracee_pin(tr, t);
	return rc;
}

static void step_end_window(struct tracer *tr, struct tracee *t)
{
	t->flags &= ~TF_STEPPING;
	t->step_on = false;	/* (the gather goes on natively) */
	tracee_unpin(t);
	if (tr->eng.current == t)
		tr->eng.current = NULL;
}

enum verdict step_prepare(struct tracer *tr, struct tracee *t)
{
	struct engine *e = &tr->eng;
	e->decoding = t;
	if (t->step_on && t->insn && t->insn->pc == t->regs.rip) {
		t->step_on = false;
		return VERDICT_READY;	/* its state from before it stands */
	}
	t->step_on = false;
	if (engine_prepare(e, t) < 0) {
		t->win.fail = "the next instruction could not be read";
		return VERDICT_FAILED;
	}
	t->win.int3 = breakpoint_at_pc(tr, t);
	return t->win.int3 ? VERDICT_INT3 : VERDICT_READY;
}

/* Tests only (cpuid.c): a host whose step over cpuid traps late,
 * imitated: one step more, unseen, as that hypervisor loses the trap. */
static void imitate_late_cpuid(struct tracer *tr, struct tracee *t)
{
	int status;
	static int forced = -1;
	if (forced < 0)
		forced = host_forced("cpuid-step", "late");
	if (!forced || t->insn->id != X86_INS_CPUID || t->inject)
		return;
	if (tracee_restart(t, PTRACE_SINGLESTEP, 0) == 0)
		tracee_wait(t->tid, &status);
}

void step_issue(struct tracer *tr, struct tracee *t)
{
	int sig = t->inject;
	/* The target may write to our terminal: no progress line under its
	 * text (redrawn at the next update). */
	if (t->insn && t->insn->id == X86_INS_SYSCALL)
		engine_clear_progress(&tr->eng);
	imitate_late_cpuid(tr, t);
	cpuid_vg_before_step(tr, t);
	t->inject = 0;
	hwbp_sync(tr, t);
	/* Pinned before its first real step (the emulator's windows may
	 * have none: four sched_setaffinity calls a window saved). */
	tracee_pin(tr, t);
	if (tracee_restart(t, PTRACE_SINGLESTEP, sig) < 0)
		error_msg("cannot step thread %d", t->tid);
}

static enum verdict step_run(struct tracer *tr, struct tracee *t)
{
	for (;;) {
		enum verdict v = step_prepare(tr, t);
		if (v != VERDICT_READY)
			return v;
		switch (step_in_supervisor(tr, t)) {
		case SUPER_NO:
			step_issue(tr, t);
			return VERDICT_RUNNING;
		case SUPER_ENDED:
			return VERDICT_STOP;
		case SUPER_DONE:
			break;
		}
	}
}

/* A real step of T landed at AFTER's rip: where its instruction goes (the
 * fall through, the branch target, the return address, back on a system
 * call the kernel restarts)?  Else the CPU ran something we did not see
 * (a host whose single step traps late, or code patched in place that
 * codemap could not see change): the window ends with an error naming
 * the instruction, never a silently short profile. */
void step_check_landing(struct tracer *tr, struct tracee *t,
			const struct user_regs_struct *after)
{
	const struct insn *in = t->insn;
	if (decode_lands_ok(tr->eng.dec, in, &t->regs, after->rip))
		return;
	struct src_loc loc = { "???", "???", 0 };
	if (tr->syms)
		sym_lookup(tr->syms, in->pc, &loc);
	error_msg("error: the step over 0x%" PRIx64 " in %s (%s) landed at "
		  "0x%llx, where that instruction cannot go: the CPU ran "
		  "instructions unseen (this host's single steps are not "
		  "precise there: see cachetrace --check; or that code was "
		  "patched in place since it was read); the window ends",
		  in->pc, loc.fn, in->text, after->rip);
	t->win.lost = "a single step ran instructions unseen";
	tr->had_error = true;
}

/* The step trapped at a system call's exit (orig_rax is its number) with
 * the pc unchanged: it finished or restarted a call the thread was
 * interrupted in (our PTRACE_INTERRUPT, to hold it while another thread
 * ran), and IN did not run.  A rep string or a syscall at that pc is the
 * instruction itself. */
static bool syscall_resumed(const struct insn *in,
			    const struct user_regs_struct *before,
			    const struct user_regs_struct *after)
{
	return (long long)after->orig_rax >= 0 && after->rip == before->rip &&
	       !in->rep && in->id != X86_INS_SYSCALL;
}

bool step_trap(struct tracer *tr, struct tracee *t)
{
	t->in_syscall = false;
	int code = tracee_si_code(t->tid);
	/* A signal with a handler was delivered: the kernel reports the
	 * handler's entry with si_code SIGTRAP before running anything. */
	bool handler_entry = tracee_injected(t) && code == SIGTRAP;
	struct user_regs_struct after;
	if (tracee_getregs(t->tid, &after) < 0)
		return false;		/* dying: its exit event follows */
	cpuid_vg_after_step(t, &after, !handler_entry);
	if (si_code_is_sent(code)) {
		/* A SIGTRAP the target raised (or was sent): it is its own,
		 * delivered with the next step.  A raise() is a tgkill that
		 * completed, and the step's own trap merged into the pending
		 * SIGTRAP: the pc moved means the instruction ran. */
		t->inject = SIGTRAP;
		if (after.rip != t->regs.rip)
			engine_account(&tr->eng, t, &after);
		return true;
	}
	if (handler_entry || syscall_resumed(t->insn, &t->regs, &after)) {
		engine_moved(&tr->eng, t, &after);
		return true;
	}
	if (after.rip == t->regs.rip && t->insn->needs_xstate &&
	    !t->insn->rep) {
		/* A gather or scatter that a fault interrupted, its mask
		 * showing the elements done: measured on an AMD EPYC KVM
		 * guest, its step's trap comes there when an element first
		 * touches a page (tests/progs/avx2.c, counted twice).  It
		 * is stepped on to its end and accounted once, from its
		 * vector state before it (decode_prepare's). */
		t->step_on = true;
		return true;
	}
	step_check_landing(tr, t, &after);
	engine_account(&tr->eng, t, &after);
	return true;
}

const struct engine_ops step_engine = {
	.name = "step",
	.begin_window = step_begin_window,
	.run = step_run,
	.trap = step_trap,
	.end_window = step_end_window,
};
