/* Per step: a step's instruction fetches, data accesses and branch
 * outcomes from its record and the registers before and after it
 * (decode_prepare, decode_step), and VEX's superblock without chasing.
 * The accounting rules are at the top of decode.c. */
#include "decode.h"
#include "decode_private.h"

#include <errno.h>
#include <string.h>

/* valgrind's --vex-guest-max-insns default: a superblock's length.
 * (valgrind's --help says 50; LibVEX_default_VexControl sets 60, and
 * nothing in valgrind 3.19 changes it.) */
#define VEX_MAX_INSNS VEX_GUEST_MAX_INSNS

/* ---- per step ---- */

typedef unsigned long long reg_t;	/* the type of user_regs_struct fields */

static inline uint64_t ea(const struct tmpl *t, const reg_t *regs,
			  const struct user_regs_struct *u)
{
	uint64_t a = (uint64_t)t->disp;

	if (t->base != SLOT_NONE)
		a += regs[t->base];
	if (t->index != SLOT_NONE)
		a += regs[t->index] * t->scale;
	if (t->addr32)
		a = (uint32_t)a;
	if (t->seg == 1)
		a += u->fs_base;
	else if (t->seg == 2)
		a += u->gs_base;
	return a;
}

static inline void add_acc(struct step_events *ev, uint64_t addr, uint32_t size,
			   uint8_t kind)
{
	if (ev->n_acc < DECODE_MAX_ACCESSES) {
		struct mem_access *a = &ev->acc[ev->n_acc++];
		a->addr = addr;
		a->size = size;
		a->kind = kind;
	}
}

/* The bytes an xsave-family instruction touches for edx:eax. */
static uint32_t xsave_extent(const struct decoder *d, const struct user_regs_struct *u,
			     bool compacted)
{
	uint64_t rfbm = (((u->rdx & 0xffffffffull) << 32) | (u->rax & 0xffffffffull)) &
			d->xcr0;
	uint32_t size = 576;

	for (unsigned int i = 2; i < 19; i++) {
		if (!(rfbm & (1ull << i)) || !d->comp_size[i])
			continue;
		if (compacted) {
			if (d->comp_align[i])
				size = (size + 63) & ~63u;
			size += d->comp_size[i];
		} else if (d->comp_off[i] + d->comp_size[i] > size) {
			size = d->comp_off[i] + d->comp_size[i];
		}
	}
	return size;
}

/* Bytes OFF..OFF+LEN of vector register REG (0..31) from the XSAVE
 * standard format, zero when the component is in its init state.  An
 * element never crosses a 16-byte lane. */
static void xs_vec(const struct decoder *d, size_t xlen, unsigned int reg,
		   unsigned int off, unsigned int len, uint8_t *out)
{
	uint64_t bv = 0;
	size_t pos;
	unsigned int bit;

	memset(out, 0, len);
	if (xlen >= 520)
		memcpy(&bv, d->xbuf + 512, 8);
	if (reg >= 16) {
		bit = 7;
		pos = d->off_hi16 + 64 * (reg - 16) + off;
	} else if (off < 16) {
		bit = 1;
		pos = 160 + 16 * reg + off;
	} else if (off < 32) {
		bit = 2;
		pos = d->off_ymmh + 16 * reg + (off - 16);
	} else {
		bit = 6;
		pos = d->off_zmmh + 32 * reg + (off - 32);
	}
	if (!(bv & (1ull << bit)) || pos + len > xlen)
		return;
	memcpy(out, d->xbuf + pos, len);
}

static uint64_t xs_kreg(const struct decoder *d, size_t xlen, unsigned int k)
{
	uint64_t bv = 0, v = 0;
	size_t pos = d->off_opmask + 8 * k;

	if (xlen >= 520)
		memcpy(&bv, d->xbuf + 512, 8);
	if ((bv & (1ull << 5)) && pos + 8 <= xlen)
		memcpy(&v, d->xbuf + pos, 8);
	return v;
}

static int step_vector(struct decoder *d, const struct drec *r,
		       const reg_t *regs, const struct user_regs_struct *u,
		       struct step_events *ev)
{
	size_t xlen;

	if (d->snap_valid && d->snap_pc == r->insn.pc) {
		xlen = d->snap_len;
	} else {
		/* No snapshot: the state after the step, right only when the
		 * mask survives it (masked moves not writing their mask). */
		if (!d->target.read_xstate)
			return -ENOSYS;
		ssize_t got = d->target.read_xstate(d->target.ctx, d->xbuf, d->xbuf_len);
		if (got < 0)
			return (int)got;
		xlen = (size_t)got;
	}
	d->snap_valid = false;
	uint64_t base = ea(&r->t, regs, u);
	uint64_t kmask = ~0ull;

	if (r->evex && r->vmask != 0)
		kmask = xs_kreg(d, xlen, r->vmask);
	for (unsigned int i = 0; i < r->nelem; i++) {
		bool active;
		if (r->evex) {
			active = (kmask >> i) & 1;
		} else {
			uint8_t m[8];
			xs_vec(d, xlen, r->vmask, i * r->esize, r->esize, m);
			active = m[r->esize - 1] & 0x80;
		}
		if (r->cls == SC_MASKMOV) {
			if (active)
				add_acc(ev, base + (uint64_t)i * r->esize, r->esize, r->t.kind);
			continue;
		}
		int64_t idx;
		if (r->idx_size == 8) {
			xs_vec(d, xlen, r->vidx, i * 8, 8, (uint8_t *)&idx);
		} else {
			int32_t i32;
			xs_vec(d, xlen, r->vidx, i * 4, 4, (uint8_t *)&i32);
			idx = i32;
		}
		uint64_t a = base + (uint64_t)idx * r->t.scale;
		if (r->t.addr32)
			a = (uint32_t)a;
		if (active)
			add_acc(ev, a, r->esize, r->t.kind);
		else if (!r->evex)
			add_acc(ev, u->rsp, r->esize, ACC_READ);
	}
	return 0;
}

static void step_string(const struct drec *r, const struct user_regs_struct *b,
			const struct user_regs_struct *a, struct step_events *ev)
{
	uint64_t count = r->addr32 ? (uint32_t)b->rcx : b->rcx;
	uint64_t si = r->addr32 ? (uint32_t)b->rsi : b->rsi;
	uint64_t di = r->addr32 ? (uint32_t)b->rdi : b->rdi;
	uint8_t rep = r->insn.rep;

	/* Exit(count == 0 -> next insn): inverted, taken = count != 0 */
	if (rep && count == 0) {
		ev->cond_taken[ev->n_cond++] = false;
		return;
	}
	if (rep)
		ev->cond_taken[ev->n_cond++] = true;
	switch (r->str_op) {
	case STR_MOVS:
		add_acc(ev, si, r->esize, ACC_READ);
		add_acc(ev, di, r->esize, ACC_WRITE);
		break;
	case STR_CMPS:
		add_acc(ev, di, r->esize, ACC_READ);
		add_acc(ev, si, r->esize, ACC_READ);
		break;
	case STR_STOS:
		add_acc(ev, di, r->esize, ACC_WRITE);
		break;
	case STR_LODS:
		add_acc(ev, si, r->esize, ACC_READ);
		break;
	case STR_SCAS:
		add_acc(ev, di, r->esize, ACC_READ);
		break;
	}
	if (!rep)
		return;
	bool again = true;		/* plain rep jumps back unconditionally */
	if (rep == REP_E || rep == REP_NE) {
		/* Between iterations (rip unchanged) the condition held; the
		 * CPU's flags there need not be the element's yet (this one
		 * shows ZF clear in the middle of a repe cmpsb).  Once the
		 * instruction completed, its flags say why. */
		bool zf = a->eflags & 0x40;
		again = a->rip == b->rip || (rep == REP_E ? zf : !zf);
		ev->cond_taken[ev->n_cond++] = again;
	}
	if (a->rip != b->rip && again) {
		/* rcx reached 0: Cachegrind runs it once more, and the
		 * count == 0 exit (inverted) is not taken */
		ev->n_fetch = 2;
		ev->cond_taken[ev->n_cond++] = false;
	}
}

int decode_prepare(struct decoder *d, const struct insn *insn)
{
	if (!insn->needs_xstate)
		return 0;
	d->snap_valid = false;
	if (!d->target.read_xstate)
		return -ENOSYS;
	ssize_t got = d->target.read_xstate(d->target.ctx, d->xbuf, d->xbuf_len);
	if (got < 0)
		return (int)got;
	d->snap_pc = insn->pc;
	d->snap_len = (size_t)got;
	d->snap_valid = true;
	return 0;
}

/* SC_GEN: the explicit operand (xsave's extent from edx:eax), read first
 * and followed by the CAS exit for locked read-modify-writes. */
static void step_gen(const struct decoder *d, const struct drec *r,
		     const reg_t *regs, const struct user_regs_struct *before,
		     struct step_events *ev)
{
	if (!(r->flags & RF_MEM) || (r->flags & RF_DEAD_LOAD))
		return;
	uint64_t a = ea(&r->t, regs, before);
	uint32_t size = r->t.size;
	if (r->flags & (RF_XSAVE | RF_XSAVEC))
		size = xsave_extent(d, before, r->flags & RF_XSAVEC);
	if (r->flags & RF_PRE_READ)
		add_acc(ev, a, size, ACC_READ);
	add_acc(ev, a, size, r->t.kind);
	if (r->flags & RF_CAS_EXIT)
		ev->cond_taken[ev->n_cond++] = false;
}

/* SC_POP: read [rsp]; pop [m] then writes m, whose address uses rsp after
 * the pop (SDM, POP). */
static void step_pop(const struct drec *r, const reg_t *regs,
		     const struct user_regs_struct *before,
		     struct step_events *ev)
{
	if (!(r->flags & RF_DEAD_LOAD))
		add_acc(ev, before->rsp, r->stack_size, ACC_READ);
	if (r->flags & RF_MEM) {
		uint64_t a = ea(&r->t, regs, before);
		if (r->t.base == SLOT(rsp))
			a += r->stack_size;
		add_acc(ev, a, r->t.size, ACC_WRITE);
	}
}

/* SC_ENTER: push rbp; copy level-1 frame pointers; push the new frame. */
static void step_enter(const struct drec *r,
		       const struct user_regs_struct *before,
		       struct step_events *ev)
{
	uint64_t rsp = before->rsp;

	add_acc(ev, rsp - 8, 8, ACC_WRITE);
	for (unsigned int i = 1; i < r->level; i++) {
		add_acc(ev, before->rbp - 8 * i, 8, ACC_READ);
		add_acc(ev, rsp - 8 - 8 * i, 8, ACC_WRITE);
	}
	if (r->level > 0)
		add_acc(ev, rsp - 8 - 8 * (uint64_t)r->level, 8, ACC_WRITE);
}

/* SC_BT: with a bit offset register, the byte at m + (reg >> 3), reg
 * sign-extended from its width.  The reg, reg forms go through memory
 * under VEX: the operand is stored at rsp - 288 (below the red zone), the
 * byte at rsp - 288 + ((offset & (bits - 1)) >> 3) is read (bt) or
 * modified (bts/btr/btc), and the modifying forms load the operand back. */
static void step_bt(const struct drec *r, const reg_t *regs,
		    const struct user_regs_struct *before,
		    struct step_events *ev)
{
	if (r->flags & RF_BT_REG) {
		uint64_t tmp = before->rsp - 288;
		uint64_t bit = regs[r->bt_slot] & (8u * r->bt_width - 1);
		add_acc(ev, tmp, r->bt_width, ACC_WRITE);
		add_acc(ev, tmp + (bit >> 3), 1, r->t.kind);
		if (r->t.kind != ACC_READ)
			add_acc(ev, tmp, r->bt_width, ACC_READ);
		return;
	}
	if (!(r->flags & RF_MEM))
		return;
	uint64_t a = ea(&r->t, regs, before);
	if (r->bt_slot != SLOT_NONE) {
		uint64_t v = regs[r->bt_slot];
		int64_t bit = r->bt_width == 8 ? (int64_t)v :
			      r->bt_width == 4 ? (int32_t)v : (int16_t)v;
		/* arithmetic shift: floor division by 8 */
		a += (uint64_t)(bit >> 3);
	}
	if (r->flags & RF_PRE_READ)
		add_acc(ev, a, r->t.size, ACC_READ);
	add_acc(ev, a, r->t.size, r->t.kind);
	if (r->flags & RF_CAS_EXIT)
		ev->cond_taken[ev->n_cond++] = false;
}

/* The entry of the superblock the instruction at PC (of the thread with
 * fs_base FS) continues, in *ENTRY; false when PC begins another one. */
static bool sb_entry_of(const struct decoder *d, uint64_t pc, uint64_t fs,
			uint64_t *entry)
{
	if (d->chase) {
		const struct chase_pos *c = &d->chase->pos[0];
		if (!d->chase->n_pos || c->thread != fs || !c->in_sb ||
		    c->expect != pc || c->phase == PH_CALLEE ||
		    c->phase == PH_SPEC)
			return false;
		*entry = d->chase->sbs[c->cur].entry;
		return true;
	}
	*entry = d->sb_entry;
	return d->sb_next && d->sb_next == pc;
}

/* The general registers (bit N: number N) that are constants VEX's iropt
 * sees before PC, in *KP: set in the superblock from AT, its entry, on
 * (mov imm, xor self, lea [rip + disp], and copies of those) and not
 * written since.  The walk goes through its first block, then the one a
 * chased jmp or call goes to; a conditional branch on the way (a merged
 * && pair) is false. */
static bool sb_walk(struct decoder *d, uint64_t at, uint64_t pc,
		    uint16_t *kp)
{
	unsigned k = 0;
	for (unsigned n = 0; at != pc; n++) {
		const char *err;
		const struct drec *r = (const struct drec *)(const void *)
			decode_insn(d, at, &err);
		if (n >= VEX_GUEST_MAX_INSNS || !r || !r->insn.len)
			return false;
		bool copied = r->k_src < 16 && (k & (1u << r->k_src));
		k = (k & ~(unsigned)r->k_kill) | r->k_set;
		if (copied)
			k |= 1u << r->k_dst;
		if (r->insn.branch == BR_NONE)
			at += r->insn.len;
		else if ((r->insn.branch == BR_JMP ||
			  r->insn.branch == BR_CALL) && r->target)
			at = r->target;
		else
			return false;
	}
	*kp = (uint16_t)k;
	return true;
}

/* A register-indirect jmp or call whose register is a constant in its
 * superblock (`lea rsi, [rip + f]; call g` chased into g's `call rsi`, as
 * ld.so's _dl_receive_error is called): VEX's block ends at a constant
 * address, and Cachegrind counts no Bi.  The verdict is kept per record
 * and superblock entry. */
static void fold_indirect(struct decoder *d, const struct drec *r,
			  uint64_t fs, struct step_events *ev)
{
	struct drec *w = (struct drec *)(uintptr_t)r;
	uint64_t entry;
	uint16_t k;
	if (!sb_entry_of(d, r->insn.pc, fs, &entry))
		return;		/* it begins a superblock: nothing known */
	if (w->ind_entry != entry || !w->ind_const) {
		w->ind_entry = entry;
		w->ind_const = sb_walk(d, entry, r->insn.pc, &k) &&
			       (k & (1u << r->ind_reg)) ? 1 : -1;
	}
	if (w->ind_const > 0)
		ev->indirect = false;
}

/* The xsave family as VEX runs it (guest_amd64_toIR.c: gen_XSAVE_SEQUENCE,
 * gen_XRSTOR_SEQUENCE, dis_XSAVE, dis_XRSTOR, dis_FXSAVE, dis_FXRSTOR)
 * and Cachegrind counts it (cg_main.c): a dirty helper's memory is one
 * access of at most the smallest cache line (64 bytes taken here), made
 * whether or not the helper's guard holds; a guarded store or load of a
 * register only when its guard holds.  RFBM is edx:eax & 7 (VEX's XCR0).
 * - xsave: writes of 64 bytes at A (x87, a helper) and 8 at A+24 (MXCSR,
 *   a helper), with SSE in RFBM the 16 xmm registers at A+160+16i, with
 *   AVX their upper halves at A+576+16i, then a 1-byte read-modify-write
 *   of XSTATE_BV at A+512 (ORed with RFBM).
 * - fxsave: the same with RFBM 3 and no XSTATE_BV.
 * - xrstor: reads of 8 bytes at A+512, A+520, A+528 (the header), 64 at A
 *   and 8 at A+24 (helpers), the xmm loads when both RFBM and XSTATE_BV
 *   have SSE, the upper halves when both have AVX.
 * - fxrstor: reads of 64 at A, 8 at A+24 and the 16 xmm registers.
 * XSTATE_BV is the header's in memory ORed with the RFBM of the last
 * xsave to A: VEX's xsave ORs it in, the CPU's writes only what is in
 * use (--cpuid=valgrind steps xsave with VEX's RFBM, src/engine/cpuid.c).
 * Where eax and edx are constants in the superblock (glibc's `mov eax,
 * 0xee; xor edx, edx; xsave`), iropt folds the helpers' guards and drops
 * a helper whose guard is false, and its access with it: the x87 one
 * without RFBM bit 0, the MXCSR one without bits 1 and 2. */
static bool xs_rfbm_const(struct decoder *d, uint64_t pc, uint64_t fs)
{
	uint64_t entry;
	uint16_t k;
	return sb_entry_of(d, pc, fs, &entry) && sb_walk(d, entry, pc, &k) &&
	       (k & 5) == 5;	/* rax, rdx */
}

static void step_vex_xs(struct decoder *d, const struct drec *r, uint64_t a,
			const struct user_regs_struct *before,
			struct step_events *ev)
{
	bool save = r->vex_xs == XS_XSAVE || r->vex_xs == XS_FXSAVE;
	bool full = r->vex_xs == XS_XSAVE || r->vex_xs == XS_XRSTOR;
	uint8_t kind = save ? ACC_WRITE : ACC_READ;
	unsigned rfbm = full ? (unsigned)before->rax & 7 : 3, use = rfbm;
	bool folded = full && xs_rfbm_const(d, r->insn.pc, before->fs_base);
	unsigned i;

	if (r->vex_xs == XS_XRSTOR) {
		uint64_t bv = 0;
		for (i = 0; i < XS_RECENT; i++)
			if (d->xs_recent[i].addr == a && d->xs_recent[i].rfbm)
				bv |= d->xs_recent[i].rfbm;
		uint8_t mem;
		if (d->target.read_mem(d->target.ctx, a + 512, &mem, 1) == 1)
			bv |= mem;
		use = rfbm & (unsigned)bv;
		for (i = 0; i < 3; i++)
			add_acc(ev, a + 512 + 8 * i, 8, ACC_READ);
	}
	if (!folded || (rfbm & 1))
		add_acc(ev, a, 64, kind);
	if (!folded || (rfbm & 6))
		add_acc(ev, a + 24, 8, kind);
	for (i = 0; (use & 2) && i < 16; i++)
		add_acc(ev, a + 160 + 16 * i, 16, kind);
	for (i = 0; (use & 4) && i < 16; i++)
		add_acc(ev, a + 576 + 16 * i, 16, kind);
	if (r->vex_xs == XS_XSAVE) {
		add_acc(ev, a + 512, 1, ACC_MODIFY);
		for (i = 0; i < XS_RECENT && d->xs_recent[i].addr != a; i++)
			;
		if (i == XS_RECENT)
			i = d->xs_next++ % XS_RECENT;
		d->xs_recent[i].addr = a;
		d->xs_recent[i].rfbm = (uint8_t)rfbm;
	}
}

/* The data accesses of one step, by record class. */
static int step_accesses(struct decoder *d, const struct drec *r,
			 const struct user_regs_struct *before,
			 const struct user_regs_struct *after,
			 struct step_events *ev)
{
	const reg_t *regs = (const reg_t *)(const void *)before;
	uint64_t rsp = before->rsp;

	switch (r->cls) {
	case SC_GEN:
		if (r->vex_xs && (r->flags & RF_MEM))
			step_vex_xs(d, r, ea(&r->t, regs, before), before, ev);
		else
			step_gen(d, r, regs, before, ev);
		break;
	case SC_PUSH:
	case SC_CALL:
		if (r->flags & RF_MEM)
			add_acc(ev, ea(&r->t, regs, before), r->t.size, ACC_READ);
		add_acc(ev, rsp - r->stack_size, r->stack_size, ACC_WRITE);
		break;
	case SC_POP:
		step_pop(r, regs, before, ev);
		break;
	case SC_RET:
		add_acc(ev, rsp, 8, ACC_READ);
		break;
	case SC_LEAVE:
		add_acc(ev, before->rbp, 8, ACC_READ);
		break;
	case SC_ENTER:
		step_enter(r, before, ev);
		break;
	case SC_STR:
		step_string(r, before, after, ev);
		break;
	case SC_BT:
		step_bt(r, regs, before, ev);
		break;
	case SC_XLAT: {
		uint64_t a = before->rbx + (before->rax & 0xff);
		if (r->addr32)
			a = (uint32_t)a;
		add_acc(ev, a, 1, ACC_READ);
		break;
	}
	case SC_MASKMOVDQU: {
		uint64_t a = r->addr32 ? (uint32_t)before->rdi : before->rdi;
		add_acc(ev, a, 16, ACC_MODIFY);
		break;
	}
	case SC_GATHER:
	case SC_SCATTER:
	case SC_MASKMOV:
		return step_vector(d, r, regs, before, ev);
	default:
		break;
	}
	return 0;
}

/* The branch outcome: jcc taken iff the next pc is not the fall through;
 * indirect jmp/call to the pc after the step. */
static inline void step_branch(const struct insn *insn, uint64_t next,
			struct step_events *ev)
{
	switch (insn->branch) {
	case BR_COND:
		ev->cond_taken[ev->n_cond++] = next != insn->pc + insn->len;
		break;
	case BR_JMP_IND:
	case BR_CALL_IND:
		ev->indirect = true;
		ev->ind_target = next;
		break;
	default:
		break;
	}
}

/* VEX folds a rep string's first Exit(rcx == 0) when rcx is a constant
 * in its superblock (`mov ecx, 13; ...; rep stos` as gcc inlines memset):
 * Cachegrind then has no Bc for the first trap.  A superblock, as VEX
 * builds them without chasing (--vex-guest-chase=no, what tests/real
 * compares with), runs from where execution entered until any branch
 * (a jcc ends it too: VEX stops at Exit + fall-through), a syscall, a rep
 * string (which jumps to itself or on) or 50 instructions.  With chasing
 * VEX also follows direct jumps and calls, and folds more.  Steps of another thread, or the first of a window, start
 * a new one.  Only the constants VEX's iropt sees directly are tracked:
 * mov ecx/rcx, imm and xor ecx, ecx; any other write to rcx ends it. */
static void superblock_step(struct decoder *d, const struct drec *r,
			    uint64_t pc, uint64_t next, struct step_events *ev)
{
	if (pc != d->sb_next || d->sb_insns >= VEX_MAX_INSNS) {
		d->sb_insns = 0;
		d->sb_rcx_const = false;
		d->sb_entry = pc;
	}
	d->sb_insns++;
	if (r->insn.rep && d->sb_rcx_const && ev->n_cond > 0) {
		ev->n_cond--;
		memmove(&ev->cond_taken[0], &ev->cond_taken[1],
			ev->n_cond * sizeof(ev->cond_taken[0]));
	}
	if (r->rcx_effect == RCX_CONST)
		d->sb_rcx_const = true;
	else if (r->rcx_effect == RCX_WRITE)
		d->sb_rcx_const = false;
	uint64_t len = r->insn.len;
	bool ends = r->insn.rep || !len || next != r->insn.pc + len ||
		    r->insn.branch != BR_NONE || r->insn.id == X86_INS_SYSCALL;
	d->sb_next = ends ? 0 : next;
}

/* VEX's superblock around the step of R (its thread's fs_base FS, rsp
 * before it RSP, the pc after it NEXT), chased or not. */
static inline __attribute__((always_inline)) void
step_superblock(struct decoder *d, const struct drec *r, uint64_t fs,
		uint64_t rsp, uint64_t next, struct step_events *ev)
{
	if (d->chase) {
		if (!chase_step_inside(d->chase, fs, r->insn.pc, &r->vex, next))
			chase_step(d, d->chase, fs, rsp, &r->insn, &r->vex,
				   next, ev);
	} else {
		superblock_step(d, r, r->insn.pc, next, ev);
	}
}

int decode_step(struct decoder *d, const struct insn *insn,
		const struct user_regs_struct *before,
		const struct user_regs_struct *after,
		struct step_events *ev)
{
	const struct drec *r = (const struct drec *)insn;
	int ret;

	ev->n_fetch = 1;
	ev->n_cond = 0;
	ev->indirect = false;
	ev->ind_target = 0;
	ev->n_acc = 0;
	ev->n_spec = 0;
	if (d->snap_valid && d->snap_pc != insn->pc)
		d->snap_valid = false;	/* not this step's: stale */
	if (insn->unknown) {
		if (d->chase)
			chase_step(d, d->chase, before->fs_base, before->rsp,
				   insn, &r->vex, after->rip, ev);
		return 0;
	}
	ret = step_accesses(d, r, before, after, ev);
	step_branch(insn, after->rip, ev);
	if (ev->indirect && r->ind_reg < 16)
		fold_indirect(d, r, before->fs_base, ev);
	step_superblock(d, r, before->fs_base, before->rsp, after->rip, ev);
	return ret;
}

/* ---- lean instructions (decode.h) ---- */

/* The encoding number of general register slot SLOT, or
 * DECODE_LEAN_NONE for SLOT_NONE; false for any other slot (rip). */
static bool lean_reg_of(uint8_t slot, uint8_t *num)
{
	if (slot == SLOT_NONE) {
		*num = DECODE_LEAN_NONE;
		return true;
	}
	for (unsigned int i = 0; i < 16; i++)
		if (gpr_slot(i) == slot) {
			*num = (uint8_t)i;
			return true;
		}
	return false;
}

/* One more access of L at BASE + DISP (no index, no segment). */
static struct lean_acc *lean_add(struct decode_lean *l, uint8_t base,
				 int64_t disp, uint32_t size, uint8_t kind)
{
	struct lean_acc *a = &l->acc[l->n_acc++];
	a->disp = disp;
	a->size = size;
	a->base = base;
	a->index = DECODE_LEAN_NONE;
	a->scale = 1;
	a->seg = 0;
	a->kind = kind;
	return a;
}

/* Template T (EXTRA added to its displacement) as an access of SIZE and
 * KIND: step_accesses' ea() for it. */
static bool lean_add_tmpl(struct decode_lean *l, const struct tmpl *t,
			  int64_t extra, uint32_t size, uint8_t kind)
{
	uint8_t base, index;
	if (t->addr32 || !lean_reg_of(t->base, &base) ||
	    !lean_reg_of(t->index, &index))
		return false;
	struct lean_acc *a = lean_add(l, base, t->disp + extra, size, kind);
	a->index = index;
	a->scale = t->scale;
	a->seg = t->seg;
	return true;
}

/* R's accesses as step_accesses makes them, for the classes whose
 * accesses need nothing but the registers before the step. */
bool lean_make(struct drec *r)
{
	const struct insn *in = &r->insn;
	struct decode_lean *l = &r->lean;
	const uint8_t rsp = 4, rbp = 5;		/* encoding numbers */

	memset(l, 0, sizeof(*l));
	/* (fxsave and fxrstor too: VEX's sequence of accesses, step_vex_xs,
	 * not their operand's 512 bytes) */
	if (in->unknown || !in->len || in->rep || in->needs_xstate ||
	    (in->regs_out & ~(1u << SLOT(rsp))) || r->vex_xs != XS_NONE ||
	    (r->flags & (RF_XSAVE | RF_XSAVEC | RF_CAS_EXIT | RF_BT_REG)))
		return false;
	switch (r->cls) {
	case SC_BT:
		/* an immediate bit offset: step_bt is step_gen's */
		if (r->bt_slot != SLOT_NONE)
			return false;
		/* fall through */
	case SC_GEN:
		if (!(r->flags & RF_MEM) || (r->flags & RF_DEAD_LOAD))
			return true;
		if ((r->flags & RF_PRE_READ) &&
		    !lean_add_tmpl(l, &r->t, 0, r->t.size, ACC_READ))
			return false;
		return lean_add_tmpl(l, &r->t, 0, r->t.size, r->t.kind);
	case SC_PUSH:
	case SC_CALL:
		if ((r->flags & RF_MEM) &&
		    !lean_add_tmpl(l, &r->t, 0, r->t.size, ACC_READ))
			return false;
		lean_add(l, rsp, -(int64_t)r->stack_size, r->stack_size,
			 ACC_WRITE);
		return true;
	case SC_POP:
		if (!(r->flags & RF_DEAD_LOAD))
			lean_add(l, rsp, 0, r->stack_size, ACC_READ);
		if (r->flags & RF_MEM)
			return lean_add_tmpl(l, &r->t, r->t.base == SLOT(rsp) ?
					     r->stack_size : 0, r->t.size,
					     ACC_WRITE);
		return true;
	case SC_RET:
		lean_add(l, rsp, 0, 8, ACC_READ);
		return true;
	case SC_LEAVE:
		lean_add(l, rbp, 0, 8, ACC_READ);
		return true;
	default:
		return false;
	}
}

static inline __attribute__((always_inline)) void
lean_events(const struct insn *insn, const struct decode_lean *l,
	    const uint64_t *addr, uint64_t next, struct step_events *ev)
{
	ev->n_fetch = 1;
	ev->n_cond = 0;
	ev->indirect = false;
	ev->ind_target = 0;
	ev->n_spec = 0;
	ev->n_acc = l->n_acc;
	for (unsigned int i = 0; i < l->n_acc; i++) {
		ev->acc[i].addr = addr[i];
		ev->acc[i].size = l->acc[i].size;
		ev->acc[i].kind = l->acc[i].kind;
	}
	step_branch(insn, next, ev);
}

void decode_lean_events(const struct insn *insn, const struct decode_lean *l,
			const uint64_t *addr, uint64_t next,
			struct step_events *ev)
{
	lean_events(insn, l, addr, next, ev);
}

bool decode_step_lean(struct decoder *d, const struct insn *insn,
		      const struct decode_lean *l, const uint64_t *addr,
		      uint64_t fs, uint64_t rsp, uint64_t next,
		      struct step_events *ev)
{
	lean_events(insn, l, addr, next, ev);
	if (d->snap_valid && d->snap_pc != insn->pc)
		d->snap_valid = false;	/* not this step's: stale */
	uint8_t n_acc = ev->n_acc, n_cond = ev->n_cond;
	bool ind = ev->indirect;
	const struct drec *r = (const struct drec *)insn;
	if (ind && r->ind_reg < 16)
		fold_indirect(d, r, fs, ev);
	step_superblock(d, r, fs, rsp, next, ev);
	return !ev->n_spec && ev->n_acc == n_acc && ev->n_cond == n_cond &&
	       ev->indirect == ind;
}

bool decode_sb_get(struct decoder *d, uint64_t fs,
		   struct decode_sbstate *s)
{
	memset(s, 0, sizeof(*s));
	s->w[3] = d->sb_gen;
	if (!d->chase) {
		/* a step at any pc but sb_next (never 0) starts afresh */
		if (d->sb_next) {
			s->w[0] = d->sb_next;
			s->w[1] = d->sb_insns;
			s->w[2] = d->sb_rcx_const | d->sb_entry << 8;
		}
		return true;
	}
	const struct chase *ch = d->chase;
	const struct chase_pos *c = &ch->pos[0];
	if (!ch->n_pos || c->thread != fs || (!c->in_sb && c->lost))
		return false;
	s->w[3] |= (uint64_t)1 << 32;
	if (c->in_sb) {		/* else all is set afresh at the next */
		s->w[0] = c->expect;
		s->w[1] = c->cur | (uint64_t)c->count << 32;
		s->w[2] = 1 | (uint64_t)c->phase << 8 |
			  (uint64_t)c->rcx_const << 16;
	}
	return true;
}

void decode_sb_set(struct decoder *d, uint64_t fs,
		   const struct decode_sbstate *s)
{
	d->snap_valid = false;
	if (!d->chase) {
		d->sb_next = s->w[0];
		d->sb_insns = (uint32_t)s->w[1];
		d->sb_rcx_const = s->w[2] & 1;
		d->sb_entry = s->w[2] >> 8;
		return;
	}
	struct chase_pos *c = &d->chase->pos[0];
	if (!d->chase->n_pos || c->thread != fs)
		return;		/* not decode_sb_get's: cannot be */
	c->in_sb = s->w[2] & 1;
	c->lost = false;
	c->expect = s->w[0];
	c->cur = (uint32_t)s->w[1];
	c->count = (uint32_t)(s->w[1] >> 32);
	c->phase = (uint8_t)(s->w[2] >> 8);
	c->rcx_const = (s->w[2] >> 16) & 1;
}

const struct native_code *decode_native(const struct insn *insn)
{
	return insn->native ? &((const struct drec *)insn)->nat : NULL;
}

uint64_t decode_mem_addr(const struct insn *insn,
			 const struct user_regs_struct *regs)
{
	const struct drec *r = (const struct drec *)insn;
	return ea(&r->t, (const reg_t *)regs, regs);
}
