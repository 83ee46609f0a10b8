/* What the emulate engine (emulate.c) and the lockstep engine
 * (lockstep.c) share: Unicorn, the emulator's memory, the thread being
 * emulated, the sync points.  Not for the rest of cachetrace. */
#ifndef CT_EMULATE_H
#define CT_EMULATE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/user.h>
#include <unicorn/unicorn.h>

#include "engine.h"

struct tracer;
struct tracee;

#define SLICE_SECONDS 0.010
#define STUB_ADDR 0x1000ull		/* below vm.mmap_min_addr */
#define STUB_DATA 0x200u		/* the fxsave image in the stub page */
#define NEVER 1ull			/* uc_emu_start's until: never reached */

enum why {
	WHY_NONE,
	WHY_FALLBACK,		/* the next instruction is not emulated */
	WHY_FAULT,		/* it faulted in Unicorn: the real CPU runs it */
	WHY_BUDGET,		/* 10 ms with other threads, a signal for
				 * it, an interrupt: a sync point */
	WHY_STOP,		/* the window's stop event */
	WHY_DECODE,		/* the next instruction cannot be read */
	WHY_ERROR,		/* Unicorn failed */
	WHY_GONE,		/* the thread died meanwhile (killed) */
};

/* Lockstep, per thread: what the emulator made of the instruction the
 * thread is stepping on the CPU. */
struct emu_thread {
	bool armed;			/* compare its next trap */
	bool faulted;			/* the emulator faulted on it */
	struct user_regs_struct after;
	struct user_fpregs_struct fp;	/* with insn->fpu */
	bool native;			/* it ran on our CPU: compare xs too */
	uint8_t xs[4096];		/* the XSAVE image it left (a bigger
					 * one is compared in its first 4 KiB) */
};

/* Per thread (struct tracee.emu_flags). */
enum {
	EF_ISSUED = 1,		/* a real step not seen by our trap op (a
				 * clone event took it): assume the worst */
	EF_CHECK_SIGNALS = 2,	/* a real step ran: a signal may be pending */
	EF_FAULT_STEP = 4,	/* the real step is a fault's */
	EF_REAL_NEXT = 8,	/* the next instruction runs on the CPU too */
	EF_HANDOVER = 16,	/* its turn given (window_hand_over): the trap
				 * the dispatcher replays ran nothing */
	EF_HELD = 32,		/* being stopped by emu_hold_others */
	EF_IDLE = 64,		/* ... and its real step had run nothing */
};

#define EMU_LEAN_BUF ENGINE_LEAN_RUN
struct emu {
	uc_engine *uc;
	const uint64_t *gprs;		/* QEMU's sixteen general registers,
					 * found in place; NULL: the API */
	struct emumem *mem;
	uc_hook code_hook, intr_hook;
	struct tracer *tr;
	struct tracee *t;		/* the thread being emulated */
	bool lockstep;
	bool pending;			/* t->insn hooked, not yet accounted */
	enum why why;
	double deadline;
	uint32_t budget_tick;
	bool alone;			/* the target has no other thread */
	bool turns;			/* other threads share the window */
	uint32_t turn_left;		/* instructions of this turn */
	bool lazy;			/* the hook reads only the registers
					 * accounting needs (insn.regs_in) */
	const struct user_regs_struct *unwinding; /* the regs being accounted */
	/* Lazily, the thread's registers in the hook: *cur before the
	 * pending instruction, *nxt after it, two of r[] that change
	 * places (only what accounting reads is current: rip, rsp, fs/gs
	 * base and what was read). */
	struct user_regs_struct r[2];
	struct user_regs_struct *cur, *nxt;
	const uint32_t *dgen;		/* decode_generation: insn.next */
	const uint32_t *dvol;		/* decode_volatile_pages */
	/* Lean instructions (decode_lean), read lazily with the registers
	 * in place: the pending one's templates (NULL: it is not lean; its
	 * step is lean_buf[n_lean], made by the hook before it ran). */
	bool lean_on;
	const struct decode_lean *lean;
	/* Lean steps run, not yet accounted (emu_lean_flush): accounted
	 * in a row, before anything else is. */
	unsigned n_lean;
	struct lean_step lean_buf[EMU_LEAN_BUF];

	/* What the real thread may have changed since Unicorn last had it. */
	bool fp_stale;			/* re-read its x87/SSE state */
	bool fp_dirty;			/* Unicorn changed it: write it back */
	bool mem_stale;			/* every writable page */
	bool all_stale;			/* every page: the target ran since */
	bool maps_stale;		/* /proc/PID/maps */
	bool fp_valid;
	struct user_fpregs_struct fp;	/* as Unicorn has it (if fp_valid) */

	/* VEX/EVEX/BMI instructions run on our CPU (native.c); NULL when
	 * the host cannot (or CACHETRACE_HOST=native=no), and in lockstep. */
	struct native *nx;
	uint8_t *xs;			/* the thread's XSAVE image: its
					 * upper vector and mask state */
	uint8_t *xs_spare;		/* where the executor saves: the
					 * two change places */
	size_t xs_cap, xs_len;
	bool xs_valid;			/* read from the thread since its
					 * last real step */
	bool xs_dirty;			/* changed: write it back */
	bool xmm_in_xs;			/* Unicorn's xmm0..15 and MXCSR are
					 * xs's (a native step left them so,
					 * and no emulated instruction that
					 * touches them has run since) */

	/* lockstep: the outcome of the one instruction being emulated,
	 * copied to its thread's record (struct emu_thread) */
	struct user_regs_struct ls_after;

	uint64_t compared, divergences;

	/* statistics */
	uint64_t emulated, fallbacks, slices;
	uint64_t natives;		/* of emulated: run on our CPU */
	uint64_t parked;		/* turns given away in a futex wait */
	struct insn_tally *fb;		/* the fallbacks, per mnemonic */
};

/* The general registers Unicorn and struct user_regs_struct share, in
 * one batch's order (emulate.c): rip, rflags, rsp, fs/gs base, the 15
 * others. */
#define EMU_N_GPR 20
unsigned long long *emu_reg_slot(struct user_regs_struct *r, unsigned i);

/* How Unicorn's guest stores are checked for translated code, for
 * --check (ucpages.c). */
const char *emu_store_path(void);
/* The run's emulator, made on first use. */
struct emu *emu_get(struct tracer *tr);
/* Give Unicorn T's state: registers always, the rest when stale. */
int emu_seed(struct tracer *tr, struct emu *em, struct tracee *t);
/* Our int3s, for the mirror: the emulator reads what they replaced. */
void emu_set_int3s(struct tracer *tr, struct emu *em);
/* Stop the target's other threads while T is emulated. */
void emu_hold_others(struct tracer *tr, struct emu *em, struct tracee *t);
/* Unicorn's x87/SSE state to FP (fxsave through the stub page). */
int emu_fp_from_uc(struct emu *em, struct user_fpregs_struct *fp);
/* One more instruction that ran on the CPU, for the summary. */
void emu_note_fallback(struct emu *em, const struct insn *in);
/* What a real step may have changed, for the next slice. */
void emu_after_real_step(struct emu *em, const struct insn *in,
			 const struct user_regs_struct *after, bool moved);
/* R stopped at a system call's exit with an -ERESTART* code: the kernel
 * restarts the call when the thread runs on, so the thread must run on
 * the CPU, not in the emulator (the code is no result). */
bool emu_syscall_restarts(const struct user_regs_struct *r);
/* The emulate and lockstep engines' begin_window and end_window. */
int emu_begin_window(struct tracer *tr, struct tracee *t);
void emu_end_window(struct tracer *tr, struct tracee *t);

/* Shared by emulate.c (the registers, the code hook, the set-up) and
 * its other parts, emusync.c (the sync points, the engine's ops) and
 * emucheck.c (the summary, the self-test). */
/* The general registers of R from Unicorn, or into it. */
int regs_read(struct emu *em, struct user_regs_struct *r);
int regs_write(struct emu *em, struct user_regs_struct *r);
/* The tables of struct user_regs_struct slots, once. */
void slot_table_init(void);
/* QEMU's sixteen general registers in place, found and proven; NULL:
 * not found. */
const uint64_t *find_gprs(uc_engine *uc);
/* Account the lean steps run and not yet accounted. */
void emu_lean_flush(struct emu *em);
/* FP into Unicorn's x87/SSE state (fxrstor through the stub page). */
int fp_to_uc(struct emu *em, const struct user_fpregs_struct *fp);
/* The parts of an fxsave image an instruction can change: SRC's into
 * DST; equal in A and B. */
void fp_merge(struct user_fpregs_struct *dst,
	      const struct user_fpregs_struct *src);
bool fp_equal(const struct user_fpregs_struct *a,
	      const struct user_fpregs_struct *b);
/* A signal T does not block is pending for it. */
bool signal_pending(struct tracee *t);
/* The call stacks' unwinder reads thread TID: the emulator's state
 * written back first (callstack_set_sync). */
void sync_for_unwind(void *ctx, pid_t tid);

#endif
