/* The emulate engine: a window's thread runs inside the
 * supervisor, in Unicorn, and goes to the real CPU (one PTRACE_SINGLESTEP)
 * only for what the decoder's allow-list says not to emulate.
 *
 * Emulate (--engine=emulate):
 * - A slice runs the thread in Unicorn from its current registers.  The
 *   code hook, called before each instruction, reads the registers the
 *   previous instruction's accounting needs from its after-state (rsp
 *   when it may have changed it; a rep string's), accounts it with the
 *   same engine_account the step engine uses, checks the stop event, and
 *   decodes the next one: if it is not on the allow-list, the slice stops
 *   before it; else the registers its accesses use (insn.regs_in) are
 *   read.  So the two engines cannot disagree on Cachegrind's rules: only
 *   the registers come from elsewhere.  Read so (on_code_lazy), they live
 *   in two buffers that change places per instruction (before, after).
 *   With call stacks every register is read (the unwinder's, on_code).
 *   At the end of a slice all of them are.
 * - cpuid is executed by the supervisor (cpuid.c), never stepped.
 * - A slice ends at a fallback instruction, at a fault (the real CPU takes
 *   it, so the kernel delivers the real signal), at the stop event, at
 *   an interrupt or toggle of ours, and every 10 ms when the target has
 *   other threads, or when a signal or a wait event (a SIGKILL) is
 *   pending for the thread.  The thread's registers, x87/SSE state and
 *   dirty pages
 *   are then written back (a sync point) and the instruction runs on the
 *   real CPU; consecutive fallbacks are stepped without going back to
 *   Unicorn in between.
 * - After a real step the pages the instruction accessed are read again
 *   on their next touch; after a system call, a signal's delivery or
 *   another thread's run, every writable page; after a system call that
 *   maps memory, /proc/PID/maps too.
 * - Other threads of the target are stopped while one is emulated, and
 *   let run during its real system calls and every 10 ms.  One stopped
 *   before its real step ran anything, or inside the system call the step
 *   began (the kernel restarts it), leaves the mirror valid (EF_IDLE).
 * - --threads=all: each thread of the window runs a turn (TURN
 *   instructions, TURN_CORES on a model of several cores), then
 *   hands over (window_hand_over): it stays stopped, its state written
 *   back, and tracer_run gives the turn to the thread that has waited
 *   longest, with no real step; its own comes back as a trap of no
 *   instruction (EF_HANDOVER).
 * - A rep string instruction: Unicorn calls the code hook once per
 *   iteration, as ptrace traps once per iteration, and once more at the
 *   same pc when rcx reached 0: that call finishes the instruction.
 *
 * The lockstep engine (lockstep.c) shares the emulator, the mirror and
 * the sync points with this one (emulate.h). */
#include "engine.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <capstone/capstone.h>
#include <unicorn/unicorn.h>

#include <elf.h>

#include "emulate.h"
#include "emumem.h"
#include "error.h"
#include "hostenv.h"
#include "native.h"
#include "tracer.h"

static const int gpr_ids[EMU_N_GPR] = {
	UC_X86_REG_R15, UC_X86_REG_R14, UC_X86_REG_R13, UC_X86_REG_R12,
	UC_X86_REG_RBP, UC_X86_REG_RBX, UC_X86_REG_R11, UC_X86_REG_R10,
	UC_X86_REG_R9, UC_X86_REG_R8, UC_X86_REG_RAX, UC_X86_REG_RCX,
	UC_X86_REG_RDX, UC_X86_REG_RSI, UC_X86_REG_RDI, UC_X86_REG_RIP,
	UC_X86_REG_RFLAGS, UC_X86_REG_RSP, UC_X86_REG_FS_BASE,
	UC_X86_REG_GS_BASE,
};


/* Where each of gpr_ids lives in struct user_regs_struct. */
#define SLOT_OF(f) offsetof(struct user_regs_struct, f)
_Static_assert(sizeof(gpr_ids) / sizeof(gpr_ids[0]) == EMU_N_GPR,
	       "gpr_ids and EMU_N_GPR");
static const size_t gpr_slots[EMU_N_GPR] = {
	SLOT_OF(r15), SLOT_OF(r14), SLOT_OF(r13), SLOT_OF(r12), SLOT_OF(rbp),
	SLOT_OF(rbx), SLOT_OF(r11), SLOT_OF(r10), SLOT_OF(r9), SLOT_OF(r8),
	SLOT_OF(rax), SLOT_OF(rcx), SLOT_OF(rdx), SLOT_OF(rsi), SLOT_OF(rdi),
	SLOT_OF(rip), SLOT_OF(eflags), SLOT_OF(rsp), SLOT_OF(fs_base),
	SLOT_OF(gs_base),
};

static inline unsigned long long *reg_slot(struct user_regs_struct *r,
					   unsigned i)
{
	return (unsigned long long *)((char *)r + gpr_slots[i]);
}

unsigned long long *emu_reg_slot(struct user_regs_struct *r, unsigned i)
{
	return reg_slot(r, i);
}

/* The general registers of R from Unicorn (or, WRITE, into it): one batch
 * call (18 single calls cost twice as much). */
static int regs_batch(struct emu *em, struct user_regs_struct *r, bool write)
{
	void *vals[EMU_N_GPR];
	for (unsigned i = 0; i < EMU_N_GPR; i++)
		vals[i] = reg_slot(r, i);
	uc_err err = write ? uc_reg_write_batch(em->uc, (int *)gpr_ids, vals, EMU_N_GPR)
			   : uc_reg_read_batch(em->uc, (int *)gpr_ids, vals, EMU_N_GPR);
	return err == UC_ERR_OK ? 0 : -1;
}

int regs_read(struct emu *em, struct user_regs_struct *r)
{
	return regs_batch(em, r, false);
}

/* The general registers in the encoding's order (rax, rcx, rdx, rbx,
 * rsp, rbp, rsi, rdi, r8 .. r15), as struct user_regs_struct offsets. */
static const size_t enc_slots[16] = {
	SLOT_OF(rax), SLOT_OF(rcx), SLOT_OF(rdx), SLOT_OF(rbx), SLOT_OF(rsp),
	SLOT_OF(rbp), SLOT_OF(rsi), SLOT_OF(rdi), SLOT_OF(r8), SLOT_OF(r9),
	SLOT_OF(r10), SLOT_OF(r11), SLOT_OF(r12), SLOT_OF(r13), SLOT_OF(r14),
	SLOT_OF(r15),
};

/* Unicorn's id of each struct user_regs_struct slot (offsetof / 8), or 0
 * (UC_X86_REG_INVALID) for the slots Unicorn does not share; the slot's
 * index in the encoding's order, or -1 for the slots that are not one of
 * the sixteen. */
static int uc_id_of_slot[sizeof(struct user_regs_struct) / 8];
static signed char enc_of_slot[sizeof(struct user_regs_struct) / 8];
static uint32_t enc_slot_mask;		/* the sixteen's slots */

void slot_table_init(void)
{
	for (unsigned i = 0; i < EMU_N_GPR; i++)
		uc_id_of_slot[gpr_slots[i] / 8] = gpr_ids[i];
	memset(enc_of_slot, -1, sizeof(enc_of_slot));
	for (unsigned i = 0; i < 16; i++) {
		enc_of_slot[enc_slots[i] / 8] = (signed char)i;
		enc_slot_mask |= 1u << (enc_slots[i] / 8);
	}
}

/* ---- the general registers in place ----
 * Unicorn 2.0.1's uc_reg_read_batch costs about 90 host instructions a
 * call (a switch per register), and the lazy hook makes one or two calls
 * per instruction: ~6% of a window.  QEMU keeps the sixteen general
 * registers in its CPUX86State as one array in the encoding's order; a
 * code hook (a TCG helper, after which the generated code keeps nothing
 * in host registers) sees it current, and uc_reg_read reads it there.
 * We look for that array once: sixteen distinct values written through
 * the API, searched for in the memory the handle's first words point to
 * (read with process_vm_readv on ourselves: a word that is no pointer
 * costs an EFAULT, never a crash), then proven both ways: new values
 * written through the API seen in place, and a value written in place
 * read back through the API.  Not found (another Unicorn, another
 * layout), or CACHETRACE_HOST=uc-regs=api: the API, as before. */
static size_t self_read(void *dst, uintptr_t src, size_t n)
{
	struct iovec l = { dst, n }, r = { (void *)src, n };
	ssize_t got = process_vm_readv(getpid(), &l, 1, &r, 1, 0);
	return got < 0 ? 0 : (size_t)got;
}

static bool gprs_match(uc_engine *uc, const uint64_t *at, uint64_t salt)
{
	uint64_t v[16], back = 0;
	void *vals[16];
	int ids[16];
	for (unsigned i = 0; i < 16; i++) {
		v[i] = salt ^ ((uint64_t)(i + 1) << 44) ^ (i * 0x9e3779b9u);
		vals[i] = &v[i];
		ids[i] = uc_id_of_slot[enc_slots[i] / 8];
	}
	if (uc_reg_write_batch(uc, ids, vals, 16) != UC_ERR_OK ||
	    memcmp(at, v, sizeof(v)))
		return false;
	((uint64_t *)at)[11] = salt + 11;	/* r11, in place */
	return uc_reg_read(uc, UC_X86_REG_R11, &back) == UC_ERR_OK &&
	       back == salt + 11;
}

const uint64_t *find_gprs(uc_engine *uc)
{
	static uint64_t words[2048];
	static uint8_t buf[64 << 10];
	uint64_t pat[16];
	void *vals[16];
	int ids[16];
	uint64_t salt = 0x5ca1ab1e00000000ull ^ (uintptr_t)&pat;
	for (unsigned i = 0; i < 16; i++) {
		pat[i] = salt ^ ((uint64_t)i << 40);
		vals[i] = &pat[i];
		ids[i] = uc_id_of_slot[enc_slots[i] / 8];
	}
	if (uc_reg_write_batch(uc, ids, vals, 16) != UC_ERR_OK)
		return NULL;
	size_t nw = self_read(words, (uintptr_t)uc, sizeof(words)) / 8;
	for (size_t i = 0; i < nw; i++) {
		uintptr_t w = words[i];
		if (w < 0x10000 || (w & 7))
			continue;
		size_t got = self_read(buf, w, sizeof(buf));
		const uint8_t *f = memmem(buf, got, pat, sizeof(pat));
		if (!f || (f - buf) % 8)
			continue;
		const uint64_t *at = (const uint64_t *)(w + (uintptr_t)(f - buf));
		if (gprs_match(uc, at, ~salt) && gprs_match(uc, at, salt * 3))
			return at;
	}
	return NULL;
}

/* The registers of R whose slots are in MASK, all of them among the
 * sixteen, from QEMU's array in place (em->gprs). */
static inline __attribute__((always_inline)) void
gprs_in_place(const struct emu *em, struct user_regs_struct *r, uint32_t mask)
{
	while (mask) {
		unsigned slot = (unsigned)__builtin_ctz(mask);
		mask &= mask - 1;
		((unsigned long long *)r)[slot] = em->gprs[enc_of_slot[slot]];
	}
}

/* The registers of R whose slots (offsetof / 8) are in MASK, from
 * Unicorn: what the next instruction's accounting needs, no more (rip is
 * the hook's address, never read).  Each register costs (rflags most:
 * QEMU computes its lazy flags). */
static __attribute__((noinline)) int
regs_read_slow(struct emu *em, struct user_regs_struct *r,
			  uint32_t mask)
{
	int ids[EMU_N_GPR];
	void *vals[EMU_N_GPR];
	int n = 0;
	mask &= ~(1u << (offsetof(struct user_regs_struct, rip) / 8));
	if (em->gprs) {
		gprs_in_place(em, r, mask & enc_slot_mask);
		mask &= ~enc_slot_mask;
	}
	while (mask) {
		unsigned slot = (unsigned)__builtin_ctz(mask);
		mask &= mask - 1;
		if (slot >= sizeof(uc_id_of_slot) / sizeof(uc_id_of_slot[0]) ||
		    !uc_id_of_slot[slot])
			continue;
		ids[n] = uc_id_of_slot[slot];
		vals[n++] = (unsigned long long *)r + slot;
	}
	if (!n)
		return 0;
	return uc_reg_read_batch(em->uc, ids, vals, n) == UC_ERR_OK ? 0 : -1;
}

/* regs_read_slow, inline where every register of MASK is one of the
 * sixteen and they are read in place (most instructions). */
static inline __attribute__((always_inline)) int
regs_read_mask(struct emu *em, struct user_regs_struct *r, uint32_t mask)
{
	if (!em->gprs || (mask & ~enc_slot_mask))
		return regs_read_slow(em, r, mask);
	gprs_in_place(em, r, mask);
	return 0;
}

#define RSLOT(f) (1u << (offsetof(struct user_regs_struct, f) / 8))

/* Reading lazily, the hook at the pending instruction's pc again with
 * NOW, its after-state as insn.regs_out (M) read: QEMU restarted it (a page
 * mapped on its first touch) rather than ran it twice?  Only a rep string
 * or a loop comes back to its own pc by running, and those change rcx; a
 * call to itself changes rsp.  (Reading every register, the whole set is
 * compared instead.) */
static bool restarted(uint32_t m, const struct user_regs_struct *now,
		      const struct user_regs_struct *before)
{
	return (!(m & RSLOT(rcx)) || now->rcx == before->rcx) &&
	       (!(m & RSLOT(rsp)) || now->rsp == before->rsp);
}

int regs_write(struct emu *em, struct user_regs_struct *r)
{
	return regs_batch(em, r, true);
}

/* Run the stub at OFF of the stub page (fxrstor or fxsave of the image),
 * the thread's rip kept. */
static int run_stub(struct emu *em, unsigned off, unsigned len)
{
	uint64_t rip;
	uc_reg_read(em->uc, UC_X86_REG_RIP, &rip);
	uc_err err = uc_emu_start(em->uc, STUB_ADDR + off,
				  STUB_ADDR + off + len, 0, 0);
	uc_reg_write(em->uc, UC_X86_REG_RIP, &rip);
	return err == UC_ERR_OK ? 0 : -1;
}

/* Unicorn's x87/SSE state to FP (fxsave through the stub). */
int emu_fp_from_uc(struct emu *em, struct user_fpregs_struct *fp)
{
	if (run_stub(em, 16, 8) < 0 ||
	    uc_mem_read(em->uc, STUB_ADDR + STUB_DATA, fp, sizeof(*fp)) !=
	    UC_ERR_OK)
		return -1;
	return 0;
}

int fp_to_uc(struct emu *em, const struct user_fpregs_struct *fp)
{
	struct user_fpregs_struct img = *fp;
	img.mxcr_mask = 0;
	em->xmm_in_xs = false;
	if (uc_mem_write(em->uc, STUB_ADDR + STUB_DATA, &img, sizeof(img)) !=
	    UC_ERR_OK)
		return -1;
	return run_stub(em, 0, 8);
}

/* The parts of an fxsave image an instruction can change. */
void fp_merge(struct user_fpregs_struct *dst,
	      const struct user_fpregs_struct *src)
{
	dst->cwd = src->cwd;
	dst->swd = src->swd;
	dst->ftw = src->ftw;
	dst->mxcsr = src->mxcsr;
	memcpy(dst->st_space, src->st_space, sizeof(dst->st_space));
	memcpy(dst->xmm_space, src->xmm_space, sizeof(dst->xmm_space));
}

bool fp_equal(const struct user_fpregs_struct *a,
	      const struct user_fpregs_struct *b)
{
	return a->cwd == b->cwd && a->swd == b->swd &&
	       (a->ftw & 0xff) == (b->ftw & 0xff) && a->mxcsr == b->mxcsr &&
	       !memcmp(a->st_space, b->st_space, sizeof(a->st_space)) &&
	       !memcmp(a->xmm_space, b->xmm_space, sizeof(a->xmm_space));
}

/* ---- the code hook ---- */

/* The hooked instruction P (pending) at the same pc again with its count
 * used up: a rep string that finished in its last iteration. */
static bool rep_finished(const struct insn *p, const struct user_regs_struct *now)
{
	return p->rep && now->rip == p->pc && now->rcx == 0;
}

static void stop(struct emu *em, enum why why)
{
	em->why = why;
	uc_emu_stop(em->uc);
}

/* A wait event of T's is waiting (left for the dispatcher: WNOWAIT): a
 * SIGKILL took it out of its stop into its exit stop. */
static bool event_pending(const struct tracee *t)
{
	siginfo_t si = { 0 };
	if (tracee_event_held(t->tid))
		return true;
	return waitid(P_PID, (id_t)t->tid, &si, WSTOPPED | WEXITED | WNOHANG |
		      WNOWAIT | __WALL) == 0 && si.si_pid != 0;
}

/* Checked every 1024 instructions: does the slice end here?  An
 * interrupt or a toggle of ours ends it at once.  After SLICE_SECONDS a
 * target with other threads gets a sync point (they run); a thread alone
 * goes on, unless a signal is pending for it (sent from outside while it
 * was emulated) or it was killed (nothing it did after is counted): a
 * sync point costs a write-back of every page written, for nothing when
 * nobody else runs. */
static bool slice_over(struct emu *em)
{
	if (interrupted_by || toggle_requests != toggles_done)
		return true;
	double now = now_seconds();
	if (now <= em->deadline)
		return false;
	if (!em->alone || event_pending(em->t) || signal_pending(em->t))
		return true;
	em->deadline = now + SLICE_SECONDS;
	return false;
}

/* The hooked instruction again, nothing changed: QEMU restarted it (a
 * page mapped on its first touch), it did not execute twice.  (Or it
 * jumps to itself forever: the slice's checks still end it.) */
static inline void restarted_again(struct emu *em)
{
	if ((++em->budget_tick & 1023) == 0 && slice_over(em))
		stop(em, WHY_BUDGET);
}

/* Unicorn's xmm0..15 and MXCSR into the legacy area of the XSAVE image
 * XS. */
static int xmm_from_uc(struct emu *em, uint8_t *xs)
{
	int ids[17];
	void *vals[17];
	for (unsigned i = 0; i < 16; i++) {
		ids[i] = UC_X86_REG_XMM0 + (int)i;
		vals[i] = xs + 160 + 16 * i;
	}
	ids[16] = UC_X86_REG_MXCSR;
	vals[16] = xs + 24;
	return uc_reg_read_batch(em->uc, ids, vals, 17) == UC_ERR_OK ? 0 : -1;
}

/* To Unicorn, what of xmm0..15 and MXCSR differs between the images OLD
 * and NEW (an image whose SSE bit is clear has its xmm registers zero). */
static int xmm_to_uc(struct emu *em, uint8_t *old, uint8_t *new)
{
	uint64_t bv;
	memcpy(&bv, new + 512, 8);
	if (!(bv & 2))
		memset(new + 160, 0, 256);
	int ids[17];
	void *vals[17];
	int n = 0;
	for (unsigned i = 0; i < 16; i++)
		if (memcmp(old + 160 + 16 * i, new + 160 + 16 * i, 16)) {
			ids[n] = UC_X86_REG_XMM0 + (int)i;
			vals[n++] = new + 160 + 16 * i;
		}
	if (memcmp(old + 24, new + 24, 4)) {
		ids[n] = UC_X86_REG_MXCSR;
		vals[n++] = new + 24;
	}
	return !n || uc_reg_write_batch(em->uc, ids, vals, n) == UC_ERR_OK ?
	       0 : -1;
}

/* Run IN (insn.native) on our CPU from the thread's registers R (every
 * one current), its outcome into Unicorn with rip past it: 0.  -1: the
 * real CPU runs it (its operand is not all readable, or writable, or it
 * faulted here); nothing changed.  -2: Unicorn refused the outcome. */
static int native_step(struct emu *em, const struct insn *in,
		       const struct user_regs_struct *R)
{
	const struct native_code *nc = decode_native(in);
	if (!em->xs_valid) {
		/* Once per slice: the two images then differ only in what
		 * the executor loads and saves. */
		struct iovec iov = { em->xs, em->xs_cap };
		if (ptrace(PTRACE_GETREGSET, em->t->tid, NT_X86_XSTATE, &iov) < 0)
			return -1;
		em->xs_len = iov.iov_len;
		memcpy(em->xs_spare, em->xs, em->xs_len);
		em->xs_valid = true;
		em->xmm_in_xs = false;
	}
	if (!em->xmm_in_xs && xmm_from_uc(em, em->xs) < 0)
		return -1;
	em->xmm_in_xs = false;		/* until Unicorn has the outcome */
	uint64_t bv;
	memcpy(&bv, em->xs + 512, 8);
	bv |= 2;			/* the SSE state is as given */
	memcpy(em->xs + 512, &bv, 8);
	/* The operand's 64-byte blocks: one, or two when it crosses */
	uint8_t mem[NATIVE_MEM], orig[NATIVE_MEM];
	uint64_t ea = 0, blk = 0;
	size_t n = 0;
	bool may_write = nc->mem && nc->kind != ACC_READ;
	if (nc->mem) {
		ea = decode_mem_addr(in, R);
		blk = ea & ~63ull;
		n = ((ea + nc->size - 1) & ~63ull) == blk ? 64 : 128;
		memset(mem, 0, sizeof(mem));
		if (!emumem_access_ok(em->mem, ea, nc->size, may_write) ||
		    !emumem_access_ok(em->mem, blk, n, false) ||
		    uc_mem_read(em->uc, blk, mem, n) != UC_ERR_OK)
			return -1;
		memcpy(orig, mem, sizeof(mem));
	}
	struct native_regs nr;
	const unsigned long long *rw = (const unsigned long long *)R;
	for (unsigned i = 0; i < 16; i++)
		nr.gpr[i] = rw[enc_slots[i] / 8];
	nr.rflags = R->eflags;
	nr.xsave = em->xs;
	nr.xsave_out = em->xs_spare;
	int sig = native_run(em->nx, in->pc, nc, &nr, mem, (unsigned)(ea & 63));
	if (sig) {
		/* Our SIGSEGV handler gave way to the executor's. */
		emumem_activate(em->mem);
		return -1;
	}
	/* What it wrote: the changed bytes (a store of equal bytes
	 * changes nothing to write back) */
	size_t w0 = 0, w1 = 0;
	if (nc->mem) {
		while (w0 < n && mem[w0] == orig[w0])
			w0++;
		w1 = n;
		while (w1 > w0 && mem[w1 - 1] == orig[w1 - 1])
			w1--;
	}
	bool wrote = w1 > w0;
	if (wrote && !emumem_access_ok(em->mem, blk + w0, w1 - w0, true))
		return -1;
	/* The outcome: the general registers and flags that changed (never
	 * rsp: the executor keeps its own), and rip past it. */
	int ids[18];
	void *vals[18];
	unsigned long long rip = in->pc + in->len;	/* Unicorn goes on */
	int k = 0;
	for (unsigned g = 0; g < 16; g++)
		if (g != 4 && nr.gpr[g] != rw[enc_slots[g] / 8]) {
			ids[k] = uc_id_of_slot[enc_slots[g] / 8];
			vals[k++] = &nr.gpr[g];
		}
	if (nr.rflags != R->eflags) {
		ids[k] = UC_X86_REG_RFLAGS;
		vals[k++] = &nr.rflags;
	}
	ids[k] = UC_X86_REG_RIP;
	vals[k++] = &rip;
	uint8_t *old = em->xs;
	em->xs = em->xs_spare;		/* the new image is the truth */
	em->xs_spare = old;
	if (uc_reg_write_batch(em->uc, ids, vals, k) != UC_ERR_OK ||
	    xmm_to_uc(em, old, em->xs) < 0 ||
	    (wrote && uc_mem_write(em->uc, blk + w0, mem + w0, w1 - w0) !=
	     UC_ERR_OK))
		return -2;
	if (wrote && *em->dvol &&
	    (decode_volatile_page(em->tr->eng.dec, blk + w0) ||
	     decode_volatile_page(em->tr->eng.dec, blk + w1 - 1))) {
		/* into a JIT's code: Unicorn does not see a uc_mem_write
		 * there (its translation ran on: tests/emulate/jit.sh, avx),
		 * and the decoder reads it again */
		uc_ctl_remove_cache(em->uc, blk + w0, blk + w1);
		tracee_mem_changed();
	}
	em->xs_dirty = true;
	em->xmm_in_xs = true;		/* xmm_to_uc made them equal */
	em->natives++;
	return 0;
}

/* The instruction at ADDRESS, which ran after PREV (NULL: none known):
 * through PREV's links when they hold it, else decoded and linked. */
static inline int next_insn(struct emu *em, const struct insn *prev,
		     uint64_t address)
{
	struct engine *e = &em->tr->eng;
	struct tracee *t = em->t;
	if (prev && prev->next_gen == *em->dgen) {
		for (unsigned i = 0; i < 2; i++) {
			const struct insn *n = prev->next[i];
			if (n && n->pc == address && !n->needs_xstate &&
			    !n->changes) {
				t->insn = n;
				return 0;
			}
		}
	}
	if (engine_prepare_at(e, t, address) < 0)
		return -1;
	if (prev) {
		struct insn *w = (struct insn *)prev;	/* insn.next is ours */
		if (w->next_gen != *em->dgen) {
			w->next[0] = w->next[1] = NULL;
			w->next_gen = *em->dgen;
		}
		w->next[address != prev->pc + prev->len] = t->insn;
	}
	return 0;
}

void emu_lean_flush(struct emu *em)
{
	if (!em->n_lean)
		return;
	engine_account_leans(&em->tr->eng, em->t, em->lean_buf, em->n_lean,
			     em->cur->fs_base);
	em->n_lean = 0;
}

/* Not for Unicorn: IN runs on our CPU (pending, then), or the slice
 * stops before it (REGS: as for hook_next). */
static __attribute__((noinline)) void
not_emulable(struct emu *em, const struct insn *in,
	     struct user_regs_struct *regs)
{
	if (in->native && em->nx) {
		/* on our CPU: every register is needed */
		struct user_regs_struct *R = regs ? regs : &em->t->regs;
		if (regs && regs_read_mask(em, R, DECODE_REGS_ALL) < 0) {
			stop(em, WHY_ERROR);
			return;
		}
		int rc = native_step(em, in, R);
		if (rc == 0) {
			em->fp_dirty = true;
			em->pending = true;
			return;
		}
		if (rc == -2) {
			stop(em, WHY_ERROR);
			return;
		}
	}
	stop(em, WHY_FALLBACK);
}

/* A lean instruction's stores (at ADDR, its templates L) into a page of
 * code that may change (a JIT's writable and executable one): what was
 * decoded there is read again before it runs next (tests/emulate/jit.sh,
 * rwx). */
static void jit_stores(struct emu *em, const struct decode_lean *l,
		       const uint64_t *addr)
{
	for (unsigned i = 0; i < l->n_acc; i++)
		if (l->acc[i].kind != ACC_READ &&
		    decode_volatile_page(em->tr->eng.dec, addr[i]))
			tracee_mem_changed();
}

/* The hook's second half: the slice's checks, then the instruction at
 * ADDRESS (which ran after PREV, when not NULL) decoded and made
 * pending, or the slice stopped before it.  Reading lazily, its memory
 * operand's registers go into REGS. */
static inline __attribute__((always_inline)) void
hook_next(struct emu *em, const struct insn *prev,
		      uint64_t address, struct user_regs_struct *regs)
{
	struct engine *e = &em->tr->eng;
	struct tracee *t = em->t;
	if (((++em->budget_tick & 1023) == 0 && slice_over(em)) ||
	    (em->turns && !em->turn_left--)) {
		stop(em, WHY_BUDGET);
		return;
	}
	e->decoding = t;
	if (next_insn(em, prev, address) < 0) {
		stop(em, WHY_DECODE);
		return;
	}
	const struct insn *in = t->insn;
	em->lean = NULL;
	if (!in->emulable) {
		not_emulable(em, in, regs);
		return;
	}
	const struct decode_lean *l = em->lean_on ? decode_lean(in) : NULL;
	if (l) {
		/* Its step now, from the registers before it, in the
		 * buffer's next slot (taken when it has run). */
		const uint64_t *g = em->gprs;
		struct lean_step *ls = &em->lean_buf[em->n_lean];
		ls->in = in;
		ls->l = l;
		ls->rsp = g[4];
		for (unsigned i = 0; i < l->n_acc; i++)
			ls->addr[i] = decode_lean_addr(&l->acc[i], g,
						       regs->fs_base,
						       regs->gs_base);
		if (*em->dvol)
			jit_stores(em, l, ls->addr);
		em->lean = l;
	} else if (regs && in->regs_in &&
		   regs_read_mask(em, regs, in->regs_in) < 0) {
		stop(em, WHY_ERROR);
		return;
	}
	if (in->fpu) {
		em->fp_dirty = true;
		em->xmm_in_xs = false;
	}
	em->pending = true;
}

/* The hook when reading lazily (no call stacks, not lockstep): the
 * pending instruction's before-registers are em->cur, its after-state
 * goes into em->nxt (rip, rsp and the segment bases carried over, what
 * insn.regs_out names read), and the two change places. */
static void on_code_lazy(struct emu *em, uint64_t address)
{
	struct engine *e = &em->tr->eng;
	struct tracee *t = em->t;
	struct user_regs_struct *cur = em->cur;
	const struct insn *prev = NULL;
	if (em->lean) {
		/* A lean instruction (pending): its step was made before it
		 * ran; rsp after it is the one register it needs. */
		const struct insn *p = t->insn;
		uint64_t rsp = em->gprs[4];
		struct lean_step *ls = &em->lean_buf[em->n_lean];
		if (address == p->pc && rsp == ls->rsp) {
			restarted_again(em);
			return;
		}
		ls->next = address;
		t->win.steps++;
		if (++em->n_lean == EMU_LEAN_BUF)
			emu_lean_flush(em);
		cur->rip = address;
		cur->rsp = rsp;
		em->pending = false;
		em->lean = NULL;
		em->emulated++;
		if (tracee_leads(t) && engine_at_stop_regs(e, t, cur)) {
			stop(em, WHY_STOP);
			return;
		}
		prev = p;
	} else if (em->pending) {
		const struct insn *p = t->insn;
		struct user_regs_struct *nxt = em->nxt;
		uint32_t m = p->regs_out;
		nxt->rip = address;
		nxt->rsp = cur->rsp;
		nxt->fs_base = cur->fs_base;
		nxt->gs_base = cur->gs_base;
		if (m && regs_read_mask(em, nxt, m) < 0) {
			stop(em, WHY_ERROR);
			return;
		}
		if (address == p->pc && restarted(m, nxt, cur)) {
			restarted_again(em);
			return;
		}
		bool finished_rep = rep_finished(p, nxt);
		if (finished_rep)
			nxt->rip = p->pc + p->len;
		emu_lean_flush(em);
		engine_account_regs(e, t, cur, nxt);
		em->nxt = cur;
		em->cur = cur = nxt;
		em->pending = false;
		em->emulated++;
		if (tracee_leads(t) && engine_at_stop_regs(e, t, cur)) {
			stop(em, WHY_STOP);
			return;
		}
		if (finished_rep)
			return;		/* Unicorn leaves it; no new hook */
		prev = p;
	} else {
		cur->rip = address;
	}
	hook_next(em, prev, address, cur);
}

static void on_code(uc_engine *uc, uint64_t address, uint32_t size, void *ctx)
{
	(void)uc; (void)size;
	struct emu *em = ctx;
	if (address >= STUB_ADDR && address < STUB_ADDR + 4096)
		return;
	if (em->lazy) {
		on_code_lazy(em, address);
		return;
	}
	struct tracer *tr = em->tr;
	struct engine *e = &tr->eng;
	struct tracee *t = em->t;
	struct user_regs_struct now = t->regs;
	now.rip = address;
	if (regs_read(em, &now) < 0) {
		stop(em, WHY_ERROR);
		return;
	}
	bool finished_rep = false;
	if (em->pending && address == t->insn->pc &&
	    !memcmp(&now, &t->regs, sizeof(now))) {
		restarted_again(em);
		return;
	}
	if (em->pending) {
		const struct insn *p = t->insn;
		if (em->lockstep) {
			/* One instruction: its after-state is here. */
			em->ls_after = now;
			if (rep_finished(p, &now))
				em->ls_after.rip = p->pc + p->len;
			em->pending = false;
			stop(em, WHY_NONE);
			return;
		}
		if (rep_finished(p, &now)) {
			/* Unicorn is back at the pc with rcx == 0: the
			 * instruction completed (ptrace shows the next pc). */
			now.rip = p->pc + p->len;
			finished_rep = true;
		}
		em->unwinding = &now;
		engine_account(e, t, &now);
		em->unwinding = NULL;
		em->pending = false;
		em->emulated++;
		if (tracee_leads(t) && engine_at_stop(e, t)) {
			stop(em, WHY_STOP);
			return;
		}
		if (finished_rep)
			return;		/* Unicorn leaves it; no new hook */
	} else {
		t->regs = now;
	}
	hook_next(em, NULL, address, NULL);
}

static void on_intr(uc_engine *uc, uint32_t intno, void *ctx)
{
	(void)intno;
	struct emu *em = ctx;
	em->why = WHY_FAULT;
	uc_emu_stop(uc);
}

/* ---- set-up ---- */

struct emu *emu_get(struct tracer *tr)
{
	if (tr->emu)
		return tr->emu;
	struct emu *em = xcalloc(1, sizeof(*em));
	em->tr = tr;
	slot_table_init();
	em->lockstep = tr->engine == &lockstep_engine;
	uc_err err = uc_open(UC_ARCH_X86, UC_MODE_64, &em->uc);
	if (err == UC_ERR_OK)
		err = uc_ctl_set_cpu_model(em->uc, UC_CPU_X86_HASWELL);
	/* CR4.OSFXSR and OSXMMEXCPT, as Linux sets them: without them
	 * fxsave and fxrstor leave the xmm registers out. */
	uint64_t cr4 = 0;
	if (err == UC_ERR_OK)
		err = uc_reg_read(em->uc, UC_X86_REG_CR4, &cr4);
	cr4 |= 0x600;
	if (err == UC_ERR_OK)
		err = uc_reg_write(em->uc, UC_X86_REG_CR4, &cr4);
	if (err == UC_ERR_OK)
		err = uc_mem_map(em->uc, STUB_ADDR, 4096, UC_PROT_ALL);
	static const uint8_t stub[] = {
		/* 0: fxrstor64 [rip + STUB_DATA - 8]; nop */
		0x48, 0x0f, 0xae, 0x0d, (STUB_DATA - 8) & 0xff,
		(STUB_DATA - 8) >> 8, 0, 0, 0x90,
	};
	static const uint8_t stub_save[] = {
		/* 16: fxsave64 [rip + STUB_DATA - 24]; nop */
		0x48, 0x0f, 0xae, 0x05, (STUB_DATA - 24) & 0xff,
		(STUB_DATA - 24) >> 8, 0, 0, 0x90,
	};
	if (err == UC_ERR_OK)
		err = uc_mem_write(em->uc, STUB_ADDR, stub, sizeof(stub));
	if (err == UC_ERR_OK)
		err = uc_mem_write(em->uc, STUB_ADDR + 16, stub_save,
				   sizeof(stub_save));
	if (err == UC_ERR_OK)
		err = uc_hook_add(em->uc, &em->code_hook, UC_HOOK_CODE,
				  (void *)on_code, em, 1, 0);
	if (err == UC_ERR_OK)
		err = uc_hook_add(em->uc, &em->intr_hook, UC_HOOK_INTR,
				  (void *)on_intr, em, 1, 0);
	if (err == UC_ERR_OK) {
		em->mem = emumem_new(em->uc, tr->target_pid);
		if (!em->mem)
			err = UC_ERR_NOMEM;
		else
			emumem_set_budget(em->mem, tr->opt.mirror_budget);
		if (em->mem && !em->lockstep && !host_forced("vvar", "no"))
			(void)emumem_share_vvar(em->mem);
	}
	if (err != UC_ERR_OK)
		error_msg_and_die("cannot start the emulator (Unicorn): %s",
				  uc_strerror(err));
	if (!host_forced("uc-regs", "api"))
		em->gprs = find_gprs(em->uc);
	em->fb = insn_tally_new();
	char why[160];
	if (!host_forced("native", "no")) {
		em->nx = native_new(why, sizeof(why));
		if (!em->nx)
			error_msg("note: VEX/EVEX/BMI instructions run on the "
				  "real CPU (one step each): %s", why);
	}
	if (em->nx) {
		em->xs_cap = native_xsave_size(em->nx);
		em->xs = aligned_alloc(64, em->xs_cap);
		em->xs_spare = aligned_alloc(64, em->xs_cap);
		if (!em->xs || !em->xs_spare)
			error_msg_and_die("out of memory");
		memset(em->xs, 0, em->xs_cap);
		memset(em->xs_spare, 0, em->xs_cap);
	}
	em->dgen = decode_generation(tr->eng.dec);
	em->dvol = decode_volatile_pages(tr->eng.dec);
	em->fp_stale = em->maps_stale = em->mem_stale = true;
	if (tr->eng.cs)
		callstack_set_sync(tr->eng.cs, sync_for_unwind, em);
	tr->emu = em;
	return em;
}

void emu_free(struct tracer *tr)
{
	struct emu *em = tr->emu;
	if (!em)
		return;
	emumem_free(em->mem);
	uc_close(em->uc);
	insn_tally_free(em->fb);
	native_free(em->nx);
	free(em->xs);
	free(em->xs_spare);
	free(em);
	tr->emu = NULL;
}

/* Our int3s, for the mirror: the emulator reads what they replaced. */
void emu_set_int3s(struct tracer *tr, struct emu *em)
{
	uint64_t addr[N_INT3];
	uint8_t orig[N_INT3];
	unsigned n = 0;
	for (unsigned i = 0; i < N_INT3; i++) {
		struct breakpoint *bp = tracer_int3(tr, i);
		if (!bp->inserted)
			continue;
		addr[n] = bp->addr;
		orig[n++] = (uint8_t)bp->orig_word;
	}
	emumem_set_int3s(em->mem, addr, orig, n);
}
