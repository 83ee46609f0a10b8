/* The lockstep engine (--engine=lockstep): the step engine, with every
 * instruction on the allow-list also emulated from the same state and
 * compared: rip, the general registers, the defined flags, the x87/SSE
 * state and the bytes written.  The first divergence is reported in
 * full; the count of all of them is in the summary and makes the exit
 * status 1.  An instruction class joins the allow-list (src/decode/
 * allow.c) only once lockstep has proven it. */
#include "emulate.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <unicorn/unicorn.h>

#include <elf.h>
#include <sys/uio.h>

#include "emumem.h"
#include "error.h"
#include "native.h"
#include "tracer.h"

/* ---- the lockstep engine ---- */

static void report_divergence(struct tracer *tr, struct emu *em,
			      const struct insn *in,
			      const struct user_regs_struct *real,
			      const char *what, uint64_t a, uint64_t b)
{
	em->divergences++;
	if (em->divergences > (debug_flag ? 20u : 1u))
		return;
	struct src_loc loc = { "???", "???", 0 };
	if (tr->syms)
		sym_lookup(tr->syms, in->pc, &loc);
	error_msg("lockstep: divergence at 0x%" PRIx64 " in %s (%s:%u), thread %d: %s: "
		  "%s emulated 0x%" PRIx64 ", real 0x%" PRIx64 " (rip after "
		  "0x%llx)", in->pc, loc.fn, loc.file, loc.line, em->t->tid, in->text,
		  what, a, b, real->rip);
}

static void compare_regs(struct tracer *tr, struct emu *em,
			 const struct insn *in,
			 const struct user_regs_struct *emu,
			 const struct user_regs_struct *real)
{
	static const char *names[EMU_N_GPR] = {
		"r15", "r14", "r13", "r12", "rbp", "rbx", "r11", "r10", "r9",
		"r8", "rax", "rcx", "rdx", "rsi", "rdi", "rip", "rflags",
		"rsp", "fs_base", "gs_base",
	};
	struct user_regs_struct a = *emu, b = *real;
	/* The arithmetic flags and DF; undefined ones not. */
	unsigned long long mask = 0x8d5 | 0x400;
	mask &= ~(unsigned long long)in->undef_flags;
	/* A rep string between iterations: the CPU need not have set the
	 * flags of the element yet. */
	if (in->rep && real->rip == in->pc)
		mask = 0;
	a.eflags &= mask;
	b.eflags &= mask;
	for (unsigned i = 0; i < EMU_N_GPR; i++)
		if (*emu_reg_slot(&a, i) != *emu_reg_slot(&b, i)) {
			report_divergence(tr, em, in, real, names[i],
					  *emu_reg_slot(&a, i), *emu_reg_slot(&b, i));
			return;
		}
}

/* N registers of an fxsave image (16 bytes apart, BYTES of each
 * compared): report the first that differs. */
static bool regs_differ(struct tracer *tr, struct emu *em,
			const struct insn *in, const struct user_regs_struct *real,
			const char *what, const unsigned *mine,
			const unsigned *theirs, unsigned n, size_t bytes)
{
	for (unsigned i = 0; i < n; i++) {
		if (!memcmp(&mine[4 * i], &theirs[4 * i], bytes))
			continue;
		/* The first 8 bytes that differ (an x87 register's
		 * exponent and sign are its bytes 8-9), zero-extended. */
		const char *a = (const char *)&mine[4 * i];
		const char *b = (const char *)&theirs[4 * i];
		size_t off = memcmp(a, b, 8) ? 0 : 8;
		size_t len = bytes - off < 8 ? bytes - off : 8;
		uint64_t x = 0, y = 0;
		memcpy(&x, a + off, len);
		memcpy(&y, b + off, len);
		report_divergence(tr, em, in, real, what, x, y);
		return true;
	}
	return false;
}

static void compare_fp(struct tracer *tr, struct emu *em,
		       const struct insn *in,
		       const struct user_fpregs_struct *emu_fp,
		       const struct user_regs_struct *real)
{
	struct user_fpregs_struct mine = *emu_fp, theirs;
	if (ptrace(PTRACE_GETFPREGS, em->t->tid, 0, &theirs) < 0)
		return;
	if (mine.mxcsr != theirs.mxcsr) {
		report_divergence(tr, em, in, real, "mxcsr", mine.mxcsr,
				  theirs.mxcsr);
		return;
	}
	if (regs_differ(tr, em, in, real, "an xmm register", mine.xmm_space,
			theirs.xmm_space, 16, 16) ||
	    regs_differ(tr, em, in, real, "an x87 register", mine.st_space,
			theirs.st_space, 8, 10))
		return;
	if ((mine.swd & 0x3fff) != (theirs.swd & 0x3fff) ||
	    mine.cwd != theirs.cwd)
		report_divergence(tr, em, in, real, "the x87 status or control",
				  mine.swd, theirs.swd);
}

/* Component I of the XSAVE image XS (size LEN), zeros when its
 * XSTATE_BV bit says it is in its initial state. */
static void component(const uint8_t *xs, size_t len, unsigned i,
		      uint32_t off, uint32_t size, uint8_t *out)
{
	uint64_t bv;
	memcpy(&bv, xs + 512, 8);
	memset(out, 0, size);
	if ((bv & (1ull << i)) && off + size <= len)
		memcpy(out, xs + off, size);
}

/* What an instruction run on our CPU left in the vector and mask
 * registers (the xmm registers, MXCSR, the upper halves, the opmasks,
 * zmm16..31) against what the real CPU left. */
static void compare_xstate(struct tracer *tr, struct emu *em,
			   const struct insn *in, const uint8_t *mine,
			   const struct user_regs_struct *real)
{
	static uint8_t theirs[sizeof(((struct emu_thread *)0)->xs)];
	struct iovec iov = { theirs, sizeof(theirs) };
	if (ptrace(PTRACE_GETREGSET, em->t->tid, NT_X86_XSTATE, &iov) < 0)
		return;
	size_t len = iov.iov_len;
	uint32_t a32, b32;
	memcpy(&a32, mine + 24, 4);
	memcpy(&b32, theirs + 24, 4);
	if (a32 != b32) {
		report_divergence(tr, em, in, real, "mxcsr", a32, b32);
		return;
	}
	static const struct { unsigned i; const char *what; } comps[] = {
		{ 1, "an xmm register" }, { 2, "an upper ymm half" },
		{ 5, "an opmask register" }, { 6, "an upper zmm half" },
		{ 7, "zmm16..31" },
	};
	for (unsigned k = 0; k < sizeof(comps) / sizeof(comps[0]); k++) {
		uint32_t off = 160, size = 256;	/* SSE: xmm0..15 */
		if (comps[k].i != 1 &&
		    !native_component(em->nx, comps[k].i, &off, &size))
			continue;
		uint8_t x[1024], y[1024];
		if (size > sizeof(x) || off + size > len)
			continue;
		component(mine, len, comps[k].i, off, size, x);
		component(theirs, len, comps[k].i, off, size, y);
		for (uint32_t j = 0; j < size; j += 8) {
			uint64_t p, q;
			memcpy(&p, x + j, 8);
			memcpy(&q, y + j, 8);
			if (p != q) {
				report_divergence(tr, em, in, real,
						  comps[k].what, p, q);
				return;
			}
		}
	}
}

/* The bytes the instruction wrote, in Unicorn and in the target. */
static void compare_writes(struct tracer *tr, struct emu *em,
			   const struct insn *in,
			   const struct user_regs_struct *real)
{
	const struct step_events *ev = &tr->eng.ev;
	for (unsigned i = 0; i < ev->n_acc; i++) {
		const struct mem_access *a = &ev->acc[i];
		if (a->kind != ACC_WRITE && a->kind != ACC_MODIFY &&
		    a->kind != ACC_NT_WRITE)
			continue;
		uint8_t mine[64], theirs[64];
		size_t n = a->size < sizeof(mine) ? a->size : sizeof(mine);
		emumem_activate(em->mem);
		uc_err err = uc_mem_read(em->uc, a->addr, mine, n);
		emumem_deactivate(em->mem);
		if (err != UC_ERR_OK ||
		    tracee_read_mem(em->t->tid, a->addr, theirs, n) != (ssize_t)n)
			continue;
		if (memcmp(mine, theirs, n)) {
			uint64_t x = 0, y = 0;
			memcpy(&x, mine, n < 8 ? n : 8);
			memcpy(&y, theirs, n < 8 ? n : 8);
			report_divergence(tr, em, in, real, "memory written",
					  x, y);
			return;
		}
	}
}

/* Lockstep: emulate T's next instruction from its registers and keep the
 * outcome (registers, x87/SSE state) in its record. */
static void ls_emulate(struct tracer *tr, struct emu *em, struct tracee *t)
{
	struct emu_thread *et = t->emu;
	struct user_regs_struct before = t->regs;
	const struct insn *in = t->insn;
	/* What Unicorn wrote for an emulation whose step never trapped (the
	 * thread stopped first: held for another thread's turn, then run
	 * again) is not memory: a lock it took seemed held to itself
	 * (tests/callstack/threads.c, 1 run in 30). */
	emumem_discard(em->mem);
	if (emu_seed(tr, em, t) < 0) {
		perror_msg("cannot give thread %d to the emulator", t->tid);
		return;
	}
	emu_set_int3s(tr, em);
	em->pending = false;
	em->why = WHY_NONE;
	em->deadline = now_seconds() + 3600;
	emumem_activate(em->mem);
	uc_err err = uc_emu_start(em->uc, before.rip, NEVER, 0, 0);
	emumem_deactivate(em->mem);
	/* The hook decoded the instruction again: the same record. */
	t->regs = before;
	t->insn = in;
	et->armed = true;
	/* not compared: a fault, or an instruction that went to the CPU
	 * after all (one for our own CPU whose operand it could not take) */
	et->faulted = err != UC_ERR_OK || em->why == WHY_FAULT ||
		      em->why == WHY_FALLBACK || em->pending;
	et->native = in->native && !in->emulable && !et->faulted;
	if (et->native)
		memcpy(et->xs, em->xs, em->xs_len < sizeof(et->xs) ?
		       em->xs_len : sizeof(et->xs));
	em->xs_dirty = false;		/* the CPU's own step is the truth */
	et->after = em->ls_after;
	if (in->fpu && !et->faulted && emu_fp_from_uc(em, &et->fp) < 0)
		et->faulted = true;
	em->pending = false;
}

static enum verdict ls_run(struct tracer *tr, struct tracee *t)
{
	struct emu *em = tr->emu;
	if (!t->emu)
		t->emu = xcalloc(1, sizeof(*t->emu));
	enum super_outcome so;
	do {
		enum verdict v = step_prepare(tr, t);
		if (v != VERDICT_READY)
			return v;
		so = step_in_supervisor(tr, t);
	} while (so == SUPER_DONE);
	if (so == SUPER_ENDED)
		return VERDICT_STOP;
	/* Inside a system call (the exec stop that begins a whole run):
	 * the step finishes it first, which the emulator cannot. */
	bool in_syscall = (t->emu_flags & EF_ISSUED) ||
			  emu_syscall_restarts(&t->regs);
	t->emu_flags &= ~EF_ISSUED;
	t->emu->armed = false;
	if ((t->insn->emulable || (t->insn->native && em->nx)) &&
	    !t->inject && !in_syscall) {
		/* Nothing else runs between the emulation and the step. */
		emu_hold_others(tr, em, t);
		ls_emulate(tr, em, t);
	}
	if (!t->emu->armed)
		emu_note_fallback(em, t->insn);
	step_issue(tr, t);
	return VERDICT_RUNNING;
}

static bool ls_trap(struct tracer *tr, struct tracee *t)
{
	struct emu *em = tr->emu;
	struct emu_thread *et = t->emu;
	const struct insn *in = t->insn;
	bool injected = tracee_injected(t);
	if (!step_trap(tr, t))
		return false;
	if (et && et->armed && et->faulted) {
		/* The emulator stopped on a fault (a page its maps do not
		 * have yet: the stack grew): the emulate engine runs such an
		 * instruction on the CPU too.  Not compared. */
		emu_note_fallback(em, in);
	} else if (et && et->armed && !injected) {
		em->compared++;
		em->emulated++;
		em->t = t;
		{
			compare_regs(tr, em, in, &et->after, &t->regs);
			if (in->fpu)
				compare_fp(tr, em, in, &et->fp, &t->regs);
			compare_writes(tr, em, in, &t->regs);
			if (et->native)
				compare_xstate(tr, em, in, et->xs, &t->regs);
		}
	}
	if (et && et->armed && (in->fpu || et->native))
		em->fp_valid = false;	/* give Unicorn the real state */
	if (et)
		et->armed = false;
	/* The real CPU is the truth: what Unicorn wrote stays only where
	 * the page is now the target's (one read, not a fault, a read and
	 * three mprotect calls when the page is next touched). */
	emumem_settle(em->mem);
	emu_after_real_step(em, in, &t->regs, injected);
	if (et && et->faulted)
		em->maps_stale = true;
	tr->eng.others_run(tr);
	return true;
}

const struct engine_ops lockstep_engine = {
	.name = "lockstep",
	.begin_window = emu_begin_window,
	.run = ls_run,
	.trap = ls_trap,
	.end_window = emu_end_window,
};
