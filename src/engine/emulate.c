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
 * - --threads=all: each thread of the window runs a turn (EMU_TURN
 *   instructions, EMU_TURN_CORES on a model of several cores), then
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

#include <errno.h>
#include <stddef.h>
#include <inttypes.h>
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
#include "journal.h"
#include "modelq.h"
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

unsigned long long *emu_reg_slot(struct user_regs_struct *r, unsigned i)
{
	return (unsigned long long *)((char *)r + gpr_slots[i]);
}

/* The general registers of R from Unicorn (or, WRITE, into it): one batch
 * call (18 single calls cost twice as much). */
static int regs_batch(struct emu *em, struct user_regs_struct *r, bool write)
{
	void *vals[EMU_N_GPR];
	for (unsigned i = 0; i < EMU_N_GPR; i++)
		vals[i] = emu_reg_slot(r, i);
	uc_err err = write ? uc_reg_write_batch(em->uc, (int *)gpr_ids, vals, EMU_N_GPR)
			   : uc_reg_read_batch(em->uc, (int *)gpr_ids, vals, EMU_N_GPR);
	return err == UC_ERR_OK ? 0 : -1;
}

static int regs_read(struct emu *em, struct user_regs_struct *r)
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

static void slot_table_init(void)
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

static const uint64_t *find_gprs(uc_engine *uc)
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

static int regs_write(struct emu *em, struct user_regs_struct *r)
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

static int fp_to_uc(struct emu *em, const struct user_fpregs_struct *fp)
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
static void fp_merge(struct user_fpregs_struct *dst,
		     const struct user_fpregs_struct *src)
{
	dst->cwd = src->cwd;
	dst->swd = src->swd;
	dst->ftw = src->ftw;
	dst->mxcsr = src->mxcsr;
	memcpy(dst->st_space, src->st_space, sizeof(dst->st_space));
	memcpy(dst->xmm_space, src->xmm_space, sizeof(dst->xmm_space));
}

static bool fp_equal(const struct user_fpregs_struct *a,
		     const struct user_fpregs_struct *b)
{
	return a->cwd == b->cwd && a->swd == b->swd &&
	       (a->ftw & 0xff) == (b->ftw & 0xff) && a->mxcsr == b->mxcsr &&
	       !memcmp(a->st_space, b->st_space, sizeof(a->st_space)) &&
	       !memcmp(a->xmm_space, b->xmm_space, sizeof(a->xmm_space));
}

/* ---- the code hook ---- */

static bool is_mm_syscall(unsigned long long nr)
{
	return nr == SYS_mmap || nr == SYS_munmap || nr == SYS_mprotect ||
	       nr == SYS_brk || nr == SYS_mremap || nr == SYS_shmat ||
	       nr == SYS_shmdt || nr == SYS_pkey_mprotect ||
	       nr == SYS_madvise || nr == SYS_remap_file_pages;
}

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

static bool signal_pending(struct tracee *t);

/* A wait event of T's is waiting (left for the dispatcher: WNOWAIT): a
 * SIGKILL took it out of its stop into its exit stop. */
static bool event_pending(const struct tracee *t)
{
	siginfo_t si = { 0 };
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
	if (interrupted_by || toggle_requests)
		return true;
	double now = now_seconds();
	if (now <= em->deadline)
		return false;
	if (!em->alone || event_pending(em->t) || signal_pending(em->t))
		return true;
	em->deadline = now + SLICE_SECONDS;
	return false;
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
			if (n && n->pc == address && !n->needs_xstate) {
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
	if (!in->emulable) {
		not_emulable(em, in, regs);
		return;
	}
	if (regs && in->regs_in && regs_read_mask(em, regs, in->regs_in) < 0) {
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
	if (em->pending) {
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
			/* QEMU restarted it (see on_code) */
			if ((++em->budget_tick & 1023) == 0 && slice_over(em))
				stop(em, WHY_BUDGET);
			return;
		}
		bool finished_rep = rep_finished(p, nxt);
		if (finished_rep)
			nxt->rip = p->pc + p->len;
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
		/* The hooked instruction again, nothing changed: QEMU
		 * restarted it (a page mapped on its first touch), it did
		 * not execute twice.  (Or it jumps to itself forever: an
		 * interrupt still ends the slice.) */
		if ((++em->budget_tick & 1023) == 0 && slice_over(em))
			stop(em, WHY_BUDGET);
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

static void sync_for_unwind(void *ctx, pid_t tid);

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
	}
	if (err != UC_ERR_OK)
		error_msg_and_die("cannot start the emulator (Unicorn): %s",
				  uc_strerror(err));
	if (!host_forced("uc-regs", "api"))
		em->gprs = find_gprs(em->uc);
	em->fb = xcalloc(X86_INS_ENDING + EMU_FB_EXTRA, sizeof(*em->fb));
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
	free(em->fb);
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

/* ---- sync points ---- */

/* Give Unicorn T's state: registers always, the rest when stale. */
int emu_seed(struct tracer *tr, struct emu *em, struct tracee *t)
{
	if (em->t != t) {
		em->t = t;
		em->fp_stale = true;
	}
	if (em->maps_stale) {
		struct journal *j = guard_journal;
		if (j) {
			journal_wb_begin(j);
			emumem_record(em->mem, j);
			journal_wb_commit(j);
		}
		emumem_writeback(em->mem);
		if (j)
			journal_wb_done(j);
		if (emumem_refresh_maps(em->mem) < 0)
			return -1;
		em->maps_stale = false;
	}
	if (em->all_stale || em->mem_stale) {
		/* Read again what we hold, once the maps are known, and keep
		 * what did not change (issue 27: a window's fixed cost). */
		emumem_revalidate(em->mem, em->all_stale);
		em->all_stale = em->mem_stale = false;
	}
	if (em->fp_stale) {
		em->xs_valid = false;	/* the thread's vector state moved */
		em->xmm_in_xs = false;
		struct user_fpregs_struct fp;
		if (ptrace(PTRACE_GETFPREGS, t->tid, 0, &fp) < 0)
			return -1;
		if (!em->fp_valid || !fp_equal(&fp, &em->fp))
			if (fp_to_uc(em, &fp) < 0)
				return -1;
		em->fp = fp;
		em->fp_valid = true;
		em->fp_stale = false;
	}
	em->fp_dirty = false;
	return regs_write(em, &t->regs);
}

/* Write what Unicorn changed back to the real thread T.  With a
 * guardian (attached: guard.c), everything written is first recorded in
 * its journal, so that if cachetrace dies halfway the guardian writes it
 * all: the thread never runs on from registers that do not match its
 * memory. */
static int sync_out(struct emu *em, struct tracee *t,
		    const struct user_regs_struct *regs)
{
	struct journal *j = guard_journal;
	bool fp_out = em->fp_dirty, xs_out = em->xs_dirty;
	if (fp_out) {
		struct user_fpregs_struct fp;
		if (emu_fp_from_uc(em, &fp) < 0)
			return -1;
		fp_merge(&em->fp, &fp);
	}
	if (xs_out) {
		/* What ran on our CPU: the upper vector and mask state,
		 * with x87 and SSE as Unicorn has them (the fxsave part of
		 * the image, but its software-reserved bytes). */
		memcpy(em->xs, &em->fp, 464);
		uint64_t bv;
		memcpy(&bv, em->xs + 512, 8);
		bv |= 3;
		memcpy(em->xs + 512, &bv, 8);
	}
	if (j) {
		journal_wb_begin(j);
		emumem_record(em->mem, j);
		journal_wb_add(j, JREC_REGS, t->tid, 0, regs, sizeof(*regs));
		if (fp_out)
			journal_wb_add(j, JREC_FPREGS, t->tid, 0, &em->fp,
				       sizeof(em->fp));
		if (xs_out)
			journal_wb_add(j, JREC_XSTATE, t->tid, 0, em->xs,
				       em->xs_len);
		journal_wb_commit(j);
	}
	int rc = emumem_writeback(em->mem);
	guard_fault("wb");	/* memory written, registers not yet */
	if (tracee_setregs(t->tid, regs) < 0)
		rc = -1;
	if (fp_out) {
		if (ptrace(PTRACE_SETFPREGS, t->tid, 0, &em->fp) < 0)
			rc = -1;
		em->fp_dirty = false;
	}
	if (xs_out) {
		struct iovec iov = { em->xs, em->xs_len };
		if (ptrace(PTRACE_SETREGSET, t->tid, NT_X86_XSTATE, &iov) < 0)
			rc = -1;
		em->xs_dirty = false;
	}
	if (j)
		journal_wb_done(j);
	return rc;
}

static void sync_for_unwind(void *ctx, pid_t tid)
{
	struct emu *em = ctx;
	if (em->t && em->t->tid == tid && em->unwinding)
		sync_out(em, em->t, em->unwinding);
}

/* O, stopped by window_stop_others, ran nothing since it was last
 * restarted, so our copy of the memory still holds: its real step had
 * not begun (the stop is at the instruction it was given, not a rep
 * string's, which can stop there having run), or it was stopped inside
 * the system call the step began, which the kernel will restart (a thread
 * waiting in futex, nanosleep, read...). */
static bool ran_nothing(const struct tracee *o)
{
	struct user_regs_struct r;
	if (!o->has_deferred ||
	    (unsigned)o->deferred_status >> 16 != PTRACE_EVENT_STOP ||
	    tracee_getregs(o->tid, &r) < 0)
		return false;
	if (emu_syscall_restarts(&r))
		return true;
	return tracee_stepping(o) && o->insn && !o->insn->rep &&
	       r.rip == o->insn->pc && r.rip == o->regs.rip &&
	       r.rsp == o->regs.rsp && r.rcx == o->regs.rcx;
}

/* Stop the target's other threads while T is emulated. */
void emu_hold_others(struct tracer *tr, struct emu *em, struct tracee *t)
{
	unsigned n = 0;
	for (struct tracee *o = tr->tracees; o; o = o->next)
		if (o != t && !tracee_stopped(o)) {
			o->emu_flags |= EF_HELD;
			n++;
		}
	if (!n)
		return;
	window_stop_others(tr, t);
	for (struct tracee *o = tr->tracees; o; o = o->next) {
		if (!(o->emu_flags & EF_HELD))
			continue;
		o->emu_flags &= ~EF_HELD;
		if (ran_nothing(o))
			o->emu_flags |= EF_IDLE;
		else
			em->mem_stale = true;	/* it ran */
	}
}

/* Account the hooked instruction that completed before a fault on the
 * next one's fetch, then hook that one. */
static enum why after_fault(struct tracer *tr, struct emu *em,
			    struct tracee *t)
{
	struct user_regs_struct now = t->regs;
	if (regs_read(em, &now) < 0)
		return WHY_ERROR;
	if (!em->pending || now.rip == t->regs.rip)
		return WHY_FAULT;	/* the hooked instruction faulted */
	engine_account(&tr->eng, t, &now);
	em->pending = false;
	em->emulated++;
	if (tracee_leads(t) && engine_at_stop(&tr->eng, t))
		return WHY_STOP;
	tr->eng.decoding = t;
	return engine_prepare(&tr->eng, t) < 0 ? WHY_DECODE : WHY_FAULT;
}

/* The decoder's view while emulating: Unicorn's memory (code the
 * emulator wrote is not in the target yet), else the target's. */
static ssize_t mirror_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
	struct emu *em = ctx;
	/* Byte by byte at the end of a mapping: the instruction may be
	 * shorter than the 15 bytes asked for. */
	if (uc_mem_read(em->uc, addr, buf, len) == UC_ERR_OK)
		return (ssize_t)len;
	size_t n = 0;
	while (n < len && uc_mem_read(em->uc, addr + n, (char *)buf + n, 1) ==
	       UC_ERR_OK)
		n++;
	if (n)
		return (ssize_t)n;
	return tracee_read_mem(em->t->tid, addr, buf, len);
}

#ifdef CT_BENCH_FLOOR
/* bench/unicorn-floor.sh only (never in a normal build): the window run
 * by Unicorn alone to the start function's return, with no hook
 * (CT_FLOOR=bare), an empty code hook (code), empty block and memory
 * hooks (blockmem), or block and memory hooks that feed the cache model
 * each instruction's fetch and each access (model): what a design could
 * reach on this Unicorn at best.  Prints the time and exits. */
static uint64_t floor_n[3], floor_row[64];
static bool floor_model;		/* CT_FLOOR=model */

static void floor_code(uc_engine *uc, uint64_t a, uint32_t n, void *ctx)
{
	(void)uc; (void)a; (void)n; (void)ctx;
	floor_n[0]++;
}

static void floor_block(uc_engine *uc, uint64_t a, uint32_t n, void *ctx)
{
	struct emu *em = ctx;
	struct engine *e = &em->tr->eng;
	const char *err;
	(void)uc;
	floor_n[1]++;
	if (!floor_model)
		return;			/* blockmem: empty */
	for (uint64_t pc = a; pc < a + n; ) {
		const struct insn *in = decode_insn(e->dec, pc, &err);
		if (!in || !in->len)
			break;
		cache_fetch(e->cm, pc, in->len, floor_row);
		pc += in->len;
	}
}

static bool floor_mem(uc_engine *uc, uc_mem_type type, uint64_t a, int n,
		      int64_t v, void *ctx)
{
	struct emu *em = ctx;
	(void)uc; (void)v;
	floor_n[2]++;
	if (floor_model) {
		struct mem_access acc = { a, (uint32_t)n, type == UC_MEM_READ ?
					  ACC_READ : ACC_WRITE };
		cache_access(em->tr->eng.cm, &acc, floor_row);
	}
	return true;
}

static void bench_floor(struct emu *em, struct tracee *t, const char *mode)
{
	uint64_t ret = 0;
	uc_hook h;
	mirror_read(em, t->regs.rsp, &ret, 8);
	uc_hook_del(em->uc, em->code_hook);
	floor_model = !strcmp(mode, "model");
	if (!strcmp(mode, "code"))
		uc_hook_add(em->uc, &h, UC_HOOK_CODE, (void *)floor_code, em, 1, 0);
	if (!strcmp(mode, "blockmem") || floor_model) {
		uc_hook_add(em->uc, &h, UC_HOOK_BLOCK, (void *)floor_block, em, 1, 0);
		uc_hook_add(em->uc, &h, UC_HOOK_MEM_READ | UC_HOOK_MEM_WRITE,
			    (void *)floor_mem, em, 1, 0);
	}
	double t0 = now_seconds();
	uc_err err = uc_emu_start(em->uc, t->regs.rip, ret, 0, 0);
	double t1 = now_seconds();
	fprintf(stderr, "floor %s: %s, %.3f s (code hooks %" PRIu64 ", blocks %"
		PRIu64 ", accesses %" PRIu64 ")\n", mode, uc_strerror(err),
		t1 - t0, floor_n[0], floor_n[1], floor_n[2]);
	exit(err == UC_ERR_OK ? 0 : 1);
}
#endif

/* Emulate T from t->regs until a sync point.  On return the real thread
 * has T's state and t->insn is decoded at t->regs.rip (not executed). */
static enum why slice(struct tracer *tr, struct emu *em, struct tracee *t)
{
	emu_hold_others(tr, em, t);
	if (emu_seed(tr, em, t) < 0) {
		perror_msg("cannot give thread %d to the emulator", t->tid);
		return WHY_ERROR;
	}
	emu_set_int3s(tr, em);
	em->why = WHY_NONE;
	em->pending = false;
	em->deadline = now_seconds() + SLICE_SECONDS;
	em->alone = tr->tracees == t && !t->next;
	em->turns = !em->alone && tr->opt.threads_all;
	em->turn_left = tr->eng.cm->n_cores > 1 ? EMU_TURN_CORES : EMU_TURN;
	/* Call stacks read every register of every step (unwinding). */
	em->lazy = !tr->eng.cs;
	if (em->lazy) {
		/* both whole: the fields Unicorn has not (segment
		 * selectors, orig_rax) stay the thread's */
		em->r[0] = em->r[1] = t->regs;
		em->cur = &em->r[0];
		em->nxt = &em->r[1];
	}
	em->slices++;
	emumem_activate(em->mem);
	tr->eng.read_mem = mirror_read;
	tr->eng.read_mem_ctx = em;
#ifdef CT_BENCH_FLOOR
	if (getenv("CT_FLOOR"))
		bench_floor(em, t, getenv("CT_FLOOR"));
#endif
	/* The models on another CPU while the slice runs (modelq.h);
	 * with call stacks the unwinder reads the thread as it is, so the
	 * accounting stays in order in this thread. */
	struct engine *e = &tr->eng;
	if (em->lazy && !e->q_tried) {
		e->q_tried = true;
		if (!engine_models_costly(e))
			e->q_why = "Cachegrind's models cost less than the queue";
		else
			e->q = modelq_new(e, tr->pin_cpu >= 0 ?
					  &tr->saved_self : NULL, tr->pin_cpu,
					  &e->q_why);
	}
	/* Not for turns between threads: each ends a slice, and a drain
	 * every few dozen instructions costs more than the models. */
	e->q_on = em->lazy && e->q && !em->turns;
	uc_err err = uc_emu_start(em->uc, t->regs.rip, NEVER, 0, 0);
	if (e->q_on) {
		modelq_drain(e->q);
		e->q_on = false;
	}
	tr->eng.read_mem = NULL;
	emumem_deactivate(em->mem);
	if (em->lazy)
		t->regs = *em->cur;
	enum why why = em->why;
	if (err != UC_ERR_OK || why == WHY_FAULT)
		why = after_fault(tr, em, t);
	else if (why == WHY_NONE)
		why = WHY_ERROR;
	em->pending = false;
	if (em->lazy) {
		/* Read lazily, t->regs has only what accounting needed: take
		 * the rest from Unicorn, whose rip may still be a finished
		 * rep string's. */
		uint64_t rip = t->regs.rip;
		if (regs_read(em, &t->regs) < 0 && why != WHY_GONE)
			why = WHY_ERROR;
		t->regs.rip = rip;
	}
	bool synced = sync_out(em, t, &t->regs) == 0;
	struct user_regs_struct r;
	if ((!synced || why == WHY_DECODE || why == WHY_ERROR) &&
	    tracee_getregs(t->tid, &r) == -ESRCH) {
		/* Killed while we emulated it: its exit event follows and
		 * ends the window. */
		return WHY_GONE;
	}
	if (!synced && why != WHY_ERROR) {
		perror_msg("cannot give thread %d back to the CPU", t->tid);
		why = WHY_ERROR;
	}
	debug_msg("emulate: thread %d slice to 0x%llx: why %d, err %d",
		  t->tid, t->regs.rip, (int)why, (int)err);
	if (why == WHY_ERROR && err != UC_ERR_OK)
		error_msg("the emulator failed at 0x%llx: %s", t->regs.rip,
			  uc_strerror(err));
	return why;
}

void emu_note_fallback(struct emu *em, const struct insn *in)
{
	em->fallbacks++;
	char name[sizeof(em->fb->name)];
	size_t len = strcspn(in->text, " ");
	if (len >= sizeof(name))
		len = sizeof(name) - 1;
	memcpy(name, in->text, len);
	name[len] = '\0';
	struct emu_fb_count *c = NULL;
	if (in->id > 0 && in->id < X86_INS_ENDING) {
		c = &em->fb[in->id];
	} else {
		/* By name; the last slot takes what does not fit. */
		struct emu_fb_count *x = em->fb + X86_INS_ENDING;
		for (unsigned i = 0; i < em->n_fb_extra && !c; i++)
			if (!strcmp(x[i].name, name))
				c = &x[i];
		if (!c && em->n_fb_extra < EMU_FB_EXTRA)
			c = &x[em->n_fb_extra++];
		if (!c) {
			c = &x[EMU_FB_EXTRA - 1];
			snprintf(name, sizeof(name), "(more)");
		}
	}
	if (!c->n || in->id == 0)
		memcpy(c->name, name, sizeof(name));
	c->n++;
}

/* What a real step may have changed, for the next slice: the pages the
 * instruction touched; after a system call, a signal or an instruction we
 * do not know, every writable page (and the maps after mmap & co.). */
void emu_after_real_step(struct emu *em, const struct insn *in,
			    const struct user_regs_struct *after, bool moved)
{
	const struct step_events *ev = &em->tr->eng.ev;
	em->fp_stale = true;
	if (moved || in->unknown || in->branch == BR_OTHER ||
	    in->id == X86_INS_SYSCALL) {
		em->mem_stale = true;
		if (is_mm_syscall(after->orig_rax))
			em->maps_stale = true;
	}
	for (unsigned i = 0; i < ev->n_acc; i++)
		emumem_invalidate_range(em->mem, ev->acc[i].addr,
					ev->acc[i].size);
	/* A fault the real CPU took may have grown the stack or met a
	 * mapping made since. */
	if (!emumem_can_map(em->mem, after->rip))
		em->maps_stale = true;
}

bool emu_syscall_restarts(const struct user_regs_struct *r)
{
	long long rax = (long long)r->rax;
	return (long long)r->orig_rax >= 0 && rax >= -516 && rax <= -512;
}

/* A signal T does not block is pending for it (a system call sent it, or
 * it arrived meanwhile): the kernel delivers it when T next runs, so T
 * must run on the real CPU now, not in the emulator. */
static bool signal_pending(struct tracee *t)
{
	siginfo_t si;
	uint64_t blocked = 0;
	if (ptrace(PTRACE_GETSIGMASK, t->tid, sizeof(blocked), &blocked) < 0)
		return errno == ESRCH;	/* killed (SIGKILL): stop emulating */
	for (int shared = 0; shared < 2; shared++) {
		for (int off = 0; off < 64; off++) {
			struct __ptrace_peeksiginfo_args a = {
				.off = (uint64_t)off,
				.flags = shared ? PTRACE_PEEKSIGINFO_SHARED : 0,
				.nr = 1,
			};
			if (ptrace(PTRACE_PEEKSIGINFO, t->tid, &a, &si) != 1)
				break;
			if (si.si_signo < 1 || si.si_signo > 64 ||
			    !(blocked & (1ull << (si.si_signo - 1))))
				return true;
		}
	}
	return false;
}

/* ---- the emulate engine ---- */

int emu_begin_window(struct tracer *tr, struct tracee *t)
{
	struct emu *em = emu_get(tr);
	int rc = step_engine.begin_window(tr, t);
	if (rc < 0)
		return rc;
	/* Stopped inside a system call (interrupted while blocked, to join
	 * a --threads=all window): the kernel finishes or restarts it when
	 * the thread runs on, so its first step is on the CPU. */
	t->emu_flags &= ~EF_HANDOVER;
	t->emu_parked = 0;
	if ((long long)t->regs.orig_rax >= 0)
		t->emu_flags |= EF_ISSUED;
	/* The target ran natively since the last window: every page we
	 * hold is checked before use (emu_seed). */
	em->all_stale = em->maps_stale = em->fp_stale = true;
	em->t = NULL;
	return 0;
}

void emu_end_window(struct tracer *tr, struct tracee *t)
{
	struct emu *em = tr->emu;
	t->emu_flags &= ~EF_HANDOVER;
	if (em && em->t == t)
		em->t = NULL;
	if (em)
		window_replay_deferred(tr);	/* the others run on */
	step_engine.end_window(tr, t);
}

/* R: stopped inside a futex wait (FUTEX_WAIT, FUTEX_WAIT_BITSET) that the
 * kernel restarts when the thread next runs. */
static bool in_futex_wait(const struct user_regs_struct *r)
{
	unsigned cmd = (unsigned)r->rsi & 0x7f;	/* FUTEX_CMD_MASK */
	return r->orig_rax == SYS_futex && emu_syscall_restarts(r) &&
	       (cmd == 0 || cmd == 9);
}

/* --threads=all: T's turn came while it waits in a futex (pthread_join, a
 * mutex, a condition variable, a barrier), where our stopping the others
 * took it out of the wait (EF_IDLE: it ran nothing).  Its turn would be a real
 * step back into the wait, which blocks, and the next turn's stop takes
 * it out again: a sync point (every dirty page written back) and a real
 * step per turn, for a thread that does nothing.  While another thread
 * of the window can run, and its futex word still holds the value it
 * waits on, T gives its turn away instead, still outside the wait.  A
 * wake it misses is seen at its next turn: the word changed, and T goes
 * back into the wait, which returns at once (EAGAIN: the caller looks
 * again), as soon as it would have run after the wake.  At most
 * SLICE_SECONDS at a time, so that a thread that spins on what T
 * should do is not starved.  True: T handed over. */
static bool park(struct tracer *tr, struct tracee *t)
{
	if (!tr->opt.threads_all || !in_futex_wait(&t->regs))
		return false;
	/* Its word changed (a barrier's round, a join's tid, a mutex
	 * released): the wait would end at once, so T runs now, as it would
	 * after the wake it missed.  Every page is written back at a turn's
	 * end: the target has the word. */
	uint32_t word;
	if (tracee_read_mem(t->tid, t->regs.rdi, &word, sizeof(word)) !=
	    (ssize_t)sizeof(word) || word != (uint32_t)t->regs.rdx)
		return false;
	/* Another that will run: waiting for its turn, or the one whose
	 * turn is ending (its sync point replays T's event before it hands
	 * over).  Not one held with an event to replay: that waits for
	 * someone's sync point, and T would give its turns to nobody. */
	bool other = false;
	for (struct tracee *o = tr->tracees; o && !other; o = o->next)
		other = o != t && tracee_stepping(o) && tracee_stopped(o) &&
			!o->emu_parked &&
			((o->flags & TF_HANDOVER) || o == tr->emu->t);
	double now = now_seconds();
	if (!other || (t->emu_parked && now - t->emu_parked > SLICE_SECONDS))
		return false;
	if (!t->emu_parked)
		t->emu_parked = now;
	tr->emu->parked++;
	/* still outside the wait, having run nothing */
	t->emu_flags |= EF_REAL_NEXT | EF_HANDOVER | EF_IDLE;
	window_hand_over(tr, t);
	return true;
}

static void emu_run(struct tracer *tr, struct tracee *t)
{
	struct emu *em = tr->emu;
	bool real = false;
	for (;;) {
		if (!step_prepare(tr, t))
			return;
		if (t->emu_flags & EF_REAL_NEXT) {
			t->emu_flags &= ~EF_REAL_NEXT;
			real = true;
		}
		if (!(t->emu_flags & EF_ISSUED)) {
			enum super_outcome so = step_in_supervisor(tr, t);
			if (so == SUPER_ENDED) {
				window_replay_deferred(tr);
				return;
			}
			if (so == SUPER_DONE) {
				real = false;
				continue;
			}
		}
		if (t->emu_flags & EF_ISSUED) {
			/* A clone event took our step: the thread is still
			 * inside the system call (rax is not its result
			 * yet).  It goes on on the CPU, as under stepping,
			 * and the next slice assumes the worst, unless the
			 * step was stopped before anything ran (EF_IDLE:
			 * emu_hold_others stopped it). */
			t->emu_flags &= ~EF_ISSUED;
			t->emu_flags |= EF_CHECK_SIGNALS;
			if (!(t->emu_flags & EF_IDLE))
				em->mem_stale = em->maps_stale =
					em->fp_stale = true;
			real = true;
		}
		bool idle = t->emu_flags & EF_IDLE;
		t->emu_flags &= ~EF_IDLE;
		if (real && idle && park(tr, t))
			return;
		if (real)
			t->emu_parked = 0;
		if (real || t->inject || !t->insn->emulable)
			break;
		if (t->emu_flags & EF_CHECK_SIGNALS) {
			t->emu_flags &= ~EF_CHECK_SIGNALS;
			if (signal_pending(t))
				break;
		}
		enum why why = slice(tr, em, t);
		switch (why) {
		case WHY_STOP:
			window_replay_deferred(tr);
			window_end(tr, t, NULL);
			tracer_restart(tr, t, window_after(tr, t));
			return;
		case WHY_GONE:
			return;		/* its exit event is on its way */
		case WHY_DECODE:
		case WHY_ERROR:
			window_replay_deferred(tr);
			if (tracee_leads(t))
				window_end(tr, t, why == WHY_DECODE ?
					   "the next instruction could not be read" :
					   "the emulator failed");
			tr->engine->end_window(tr, t);
			tracer_restart(tr, t, RESTART_CONT);
			return;
		case WHY_BUDGET:
			window_replay_deferred(tr);	/* a sync point */
			if (!tracee_stepping(t) || !tracee_stopped(t))
				return;		/* its window ended meanwhile */
			if (em->turns && !tracee_ending(t)) {
				/* Its turn is over: the others have theirs in
				 * the emulator, and it goes on after them,
				 * with no real step. */
				t->emu_flags |= EF_HANDOVER;
				window_hand_over(tr, t);
				return;
			}
			real = true;
			break;
		case WHY_FAULT:
			t->emu_flags |= EF_FAULT_STEP;
			real = true;
			break;
		default:
			break;
		}
	}
	if (t->insn->id == X86_INS_SYSCALL || t->inject)
		window_replay_deferred(tr);
	emu_note_fallback(em, t->insn);
	debug_msg("emulate: thread %d steps 0x%llx %s (rax 0x%llx rdi 0x%llx "
		  "rsi 0x%llx rdx 0x%llx)", t->tid, t->regs.rip, t->insn->text,
		  t->regs.rax, t->regs.rdi, t->regs.rsi, t->regs.rdx);
	t->emu_flags |= EF_ISSUED;
	step_issue(tr, t);
}

static bool emu_trap(struct tracer *tr, struct tracee *t)
{
	struct emu *em = tr->emu;
	if (t->emu_flags & EF_HANDOVER) {
		/* its turn again: nothing ran since it gave it */
		t->emu_flags &= ~EF_HANDOVER;
		return true;
	}
	t->emu_flags &= ~EF_ISSUED;
	const struct insn *in = t->insn;
	bool injected = tracee_injected(t);
	if (!step_trap(tr, t))
		return false;
	emu_after_real_step(em, in, &t->regs, injected);
	t->emu_flags |= EF_CHECK_SIGNALS;
	/* A system call the kernel will restart (interrupted: rax holds an
	 * -ERESTART* code, or rip is back on it): the kernel's own state
	 * decides what runs next, not our copy of the registers. */
	if (emu_syscall_restarts(&t->regs) ||
	    (in->id == X86_INS_SYSCALL && t->regs.rip == in->pc))
		t->emu_flags |= EF_REAL_NEXT;
	if (t->emu_flags & EF_FAULT_STEP)
		em->maps_stale = true;	/* the stack grew, a new mapping */
	t->emu_flags &= ~EF_FAULT_STEP;
	return true;
}

const struct engine_ops emulate_engine = {
	.name = "emulate",
	.begin_window = emu_begin_window,
	.run = emu_run,
	.trap = emu_trap,
	.end_window = emu_end_window,
};

/* ---- the summary ---- */

void emu_describe(const struct tracer *tr, FILE *f, const char *prefix)
{
	const struct emu *em = tr->emu;
	if (!em)
		return;
	uint64_t reads, writes, bad, dropped;
	emumem_stats(em->mem, &reads, &writes, &bad, &dropped);
	fprintf(f, "%sEngine: %s: %" PRIu64 " instructions emulated", prefix,
		tr->engine->name, em->emulated);
	if (em->natives)
		fprintf(f, " (%" PRIu64 " of them VEX/EVEX/BMI on our own "
			"CPU)", em->natives);
	fprintf(f, ", %" PRIu64 " on the real CPU", em->fallbacks);
	fprintf(f, "; %" PRIu64 " pages read, %" PRIu64 " written back",
		reads, writes);
	if (bad)
		fprintf(f, ", %" PRIu64 " unreadable", bad);
	if (dropped)
		fprintf(f, ", %" PRIu64 " dropped past the mirror budget",
			dropped);
	if (em->parked)
		fprintf(f, "; %" PRIu64 " turns given away in a futex wait",
			em->parked);
	if (tr->eng.q)
		fprintf(f, "; the models on CPU %d", modelq_cpu(tr->eng.q));
	fputc('\n', f);
	if (em->lockstep)
		fprintf(f, "%sLockstep: %" PRIu64 " instructions compared, %"
			PRIu64 " divergence%s\n", prefix, em->compared,
			em->divergences, em->divergences == 1 ? "" : "s");
	/* The fallbacks that cost most: the five largest counts. */
	unsigned top[5], n_top = 0;
	const struct emu_fb_count *fb = em->fb;
	for (unsigned i = 0; i < X86_INS_ENDING + em->n_fb_extra; i++) {
		uint64_t c = fb[i].n;
		if (!c)
			continue;
		unsigned k = n_top;
		if (k == 5) {
			if (fb[top[4]].n >= c)
				continue;
			k = 4;
		} else {
			n_top++;
		}
		for (; k > 0 && fb[top[k - 1]].n < c; k--)
			top[k] = top[k - 1];
		top[k] = i;
	}
	if (!n_top)
		return;
	fprintf(f, "%sOn the real CPU most:", prefix);
	for (unsigned i = 0; i < n_top; i++)
		fprintf(f, "%s %s %" PRIu64, i ? "," : "", fb[top[i]].name,
			fb[top[i]].n);
	fputc('\n', f);
}

bool emu_diverged(const struct tracer *tr)
{
	return tr->emu && tr->emu->divergences;
}

uint64_t emu_emulated(const struct tracer *tr)
{
	return tr->emu ? tr->emu->emulated : 0;
}

/* ---- the self-test (cachetrace --check) ---- */

int emu_selftest(char *why, size_t len)
{
	/* mov ecx, 1000; xor eax, eax; 1: add rax, rcx; dec rcx; jnz 1b;
	 * mov [rip + 0x100], rax */
	static const uint8_t code[] = {
		0xb9, 0xe8, 0x03, 0x00, 0x00, 0x31, 0xc0, 0x48, 0x01, 0xc8,
		0x48, 0xff, 0xc9, 0x75, 0xf8, 0x48, 0x89, 0x05, 0x00, 0x01,
		0x00, 0x00,
	};
	const uint64_t base = 0x10000;
	uint64_t rax = 0, stored = 0;
	uc_engine *uc;
	uc_err err = uc_open(UC_ARCH_X86, UC_MODE_64, &uc);
	if (err != UC_ERR_OK) {
		snprintf(why, len, "uc_open: %s", uc_strerror(err));
		return -1;
	}
	err = uc_mem_map(uc, base, 4096, UC_PROT_ALL);
	if (err == UC_ERR_OK)
		err = uc_mem_write(uc, base, code, sizeof(code));
	if (err == UC_ERR_OK)
		err = uc_emu_start(uc, base, base + sizeof(code), 0, 0);
	if (err == UC_ERR_OK)
		err = uc_reg_read(uc, UC_X86_REG_RAX, &rax);
	if (err == UC_ERR_OK)
		err = uc_mem_read(uc, base + sizeof(code) + 0x100, &stored, 8);
	/* The registers in place (find_gprs), as a window would find them,
	 * and holding the loop's sum after a second run. */
	const char *regs = "read through its API (CACHETRACE_HOST=uc-regs=api)";
	if (err == UC_ERR_OK && !host_forced("uc-regs", "api")) {
		slot_table_init();
		const uint64_t *g = find_gprs(uc);
		regs = "read through its API (QEMU's register array not found)";
		if (g && uc_emu_start(uc, base, base + sizeof(code), 0, 0) ==
		    UC_ERR_OK && g[0] == 500500)
			regs = "read in place (QEMU's register array, found "
			       "and proven)";
	}
	uc_close(uc);
	if (err != UC_ERR_OK) {
		snprintf(why, len, "%s", uc_strerror(err));
		return -1;
	}
	/* 1 + 2 + ... + 1000 */
	if (rax != 500500 || stored != 500500) {
		snprintf(why, len, "a loop summing 1..1000 gave %" PRIu64
			 " (stored %" PRIu64 "), not 500500", rax, stored);
		return -1;
	}
	unsigned major, minor;
	uc_version(&major, &minor);
	snprintf(why, len, "Unicorn %u.%u runs the self-test program; its registers "
		 "are %s", major, minor, regs);
	return 0;
}
