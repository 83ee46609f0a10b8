/* Decoding x86-64 instructions into memory accesses and branch outcomes.
 *
 * Accounting rules (Cachegrind's, as valgrind 3.19's VEX translates each
 * instruction; where the Intel SDM and VEX differ we follow VEX, checked
 * against Lackey's --trace-mem=yes output, since our counts must match):
 *
 * - Every trap is one instruction fetch, then the data accesses in the
 *   order the CPU (VEX) makes them, then conditional branch outcomes.
 * - A load and a store of the same location is ONE access of kind
 *   ACC_MODIFY (Cachegrind's Dm, counted as one Dr): add [m],r; inc, neg,
 *   not, shifts and rotates of [m]; adc/sbb [m]; xadd; cmpxchg, cmpxchg8b,
 *   cmpxchg16b (locked or not: one CAS).  setcc [m] is a plain write.
 * - lock-prefixed arithmetic (lock add/or/and/sub/xor/inc/dec/neg/not/
 *   xadd/bts/btr/btc) and xchg [m], r (implicitly locked) load first and
 *   then do a CAS: a read, then a modify, of the same location.
 * - Those locked read-modify-writes go through VEX's casLE: an IRCAS,
 *   then Exit(CAS failed -> restart this insn), one Bc, not inverted and
 *   never taken single-threaded.  cmpxchg, cmpxchg8b and cmpxchg16b
 *   (locked or not) have no such exit, nor do unlocked read-modify-writes
 *   (Cachegrind --branch-sim=yes per-line Bc, valgrind 3.19).
 * - Reading one place and writing another are separate accesses, read
 *   first: push [m] (read m, write [rsp-8]), pop [m] (read [rsp], write m,
 *   whose address uses rsp+8 as the SDM says), call [m] (read m, write
 *   [rsp-8]), movs (read [rsi], write [rdi]).  cmps reads [rdi] and then
 *   [rsi] (VEX's order); scas reads [rdi]; lods reads [rsi]; stos writes
 *   [rdi].  Addresses come from the registers before the step, whatever DF.
 * - Stack: push/pushfq/call/enter write 8 bytes below rsp; pop/popfq/ret
 *   read [rsp]; leave reads [rbp].
 * - cmp and test of [m] only read; bt [m], imm reads the operand; bt/bts/
 *   btr/btc [m], reg touch ONE BYTE at m + (reg >> 3), reg sign-extended
 *   from the operand size (VEX's translation; the SDM allows an operand-
 *   sized access at m + (reg >> 6) * 8, Lackey shows the byte).  The
 *   reg, reg forms go through memory too: VEX stores the operand at
 *   rsp - 288 (below the red zone), reads (bt) or modifies (bts/btr/btc)
 *   the byte at + ((offset & (bits - 1)) >> 3), and the modifying forms
 *   load the operand back (zlib's inflateReset2: bt rbp, rdx; Lackey:
 *   S 8, L 1; S 8, M 1, L 8).
 * - Loads whose value VEX's iropt proves dead are not made: `pop reg`
 *   followed, before any read of reg, a branch or a partial write, by an
 *   instruction that writes all of reg (64 or 32 bits) has no Dr
 *   (libsqlite3's sqlite3Select: pop rax; mov eax, 0x40).  rsp and rbp
 *   are exempt (VEX keeps them precise at memory accesses).  The same
 *   pass drops bt reg, reg's byte load when its CF is dead; we keep it.
 * - A rep string whose count VEX's iropt sees as a constant in the
 *   superblock (mov ecx, imm or xor ecx, ecx earlier in the same basic
 *   block) loses its first Exit(rcx == 0): no Bc on its first trap
 *   (decode_step's superblock_step).
 * - lea, nop, prefetch* and clflush* access nothing (the latter two are
 *   reported as ACC_PREFETCH, which Cachegrind ignores).
 * - Vector loads and stores are one access of their full size (a 32-byte
 *   vmovdqu is one 32-byte access), also when an AVX-512 k mask limits
 *   them.  maskmovdqu is a 16-byte ACC_MODIFY at [rdi] (VEX loads, merges
 *   and stores).  vmaskmov/vpmaskmov access each element whose mask sign
 *   bit is set.  AVX2 gathers load every element: enabled ones at their
 *   address, disabled ones at [rsp] (VEX substitutes a safe address).
 *   AVX-512 gathers and scatters (which valgrind does not run) access the
 *   elements enabled in their k mask.  Masks are read from the state
 *   before the step (decode_prepare): gathers clear them as they go.
 * - fxsave/fxrstor: one 512-byte access; xsave family: one access over
 *   the XSAVE area the instruction uses: 576 bytes of legacy area and
 *   header, plus the components in edx:eax & XCR0 (standard format: up to
 *   the end of the highest; xsavec/xsaves: the sum of their sizes; sizes
 *   and offsets from CPUID 0xd).  VEX splits these into many stores and
 *   does not run xsavec at all, so Cachegrind differs here.
 * - rep string instructions: ptrace traps once per iteration.  VEX turns
 *   one execution into: Exit(rcx == 0 -> next insn) (a Bc), one element,
 *   then back to itself (rep), or for repe/repne a second Exit(cond ->
 *   this insn) (a Bc).  Cachegrind records an exit whose destination is
 *   the fall through as inverted: taken = NOT guard.  So the first Bc is
 *   taken when the count (rcx, ecx with 0x67) is NOT zero; the second is
 *   taken when the repeat condition holds after the element.  A rep with
 *   count n >= 1 thus runs n + 1 times under Cachegrind.  Per trap: count
 *   0: one fetch, no access, Bc not taken.  Count >= 1: Bc taken, the
 *   element's accesses, for repe/repne the condition Bc; and when the
 *   trap finished the instruction because rcx reached 0 (rep, or the
 *   condition still held) one more fetch and a not-taken Bc (rcx == 0).
 * - jcc, jrcxz, loop*: one Bc, taken iff the next pc is not the fall
 *   through.  jmp/call through a register or memory: one Bi (indirect,
 *   target = the pc after the step).  Direct jmp/call, ret, syscall: none.
 * - rip-relative: next instruction + disp; fs:/gs: add fs_base/gs_base;
 *   the 0x67 prefix truncates the address (before the segment base) to
 *   32 bits.
 * - An instruction we do not know costs one fetch and nothing else, and is
 *   flagged (insn.unknown) so that the tracer can say so once per pc. */
#include "decode.h"
#include "decode_private.h"
#include "hashtab.h"

#include <capstone/capstone.h>
#include <cpuid.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SLOT(reg) ((uint8_t)(offsetof(struct user_regs_struct, reg) / 8))

/* An address template: base + index * scale + disp, truncated, segment. */
struct tmpl {
	int64_t disp;		/* rip-relative: already plus the next pc */
	uint32_t size;
	uint8_t base;		/* slot or SLOT_NONE */
	uint8_t index;
	uint8_t scale;
	uint8_t seg;		/* 0, 1 fs, 2 gs */
	bool addr32;
	uint8_t kind;
};

/* Record flags */
enum {
	RF_MEM = 1 << 0,	/* t holds the explicit memory operand */
	RF_PRE_READ = 1 << 1,	/* read t before the modify (lock, xchg) */
	RF_XSAVE = 1 << 2,	/* size from edx:eax, standard format */
	RF_XSAVEC = 1 << 3,	/* size from edx:eax, compacted format */
	RF_CAS_EXIT = 1 << 4,	/* VEX casLE's restart exit: one Bc, not taken */
	RF_BT_REG = 1 << 5,	/* bt family reg, reg: VEX goes through the stack */
	RF_DEAD_LOAD = 1 << 6,	/* pop reg whose value VEX's iropt drops: no read */
	RF_DEAD_IF_CHASED = 1 << 7, /* ... when the jmp/call after it is
				 * chased in its superblock (chase.c) */
};

/* What an instruction does to rcx, for VEX's constant folding of a rep's
 * first rcx == 0 exit (decode_step). */
enum rcx_effect { RCX_NONE, RCX_WRITE, RCX_CONST };

enum str_op { STR_MOVS, STR_CMPS, STR_STOS, STR_LODS, STR_SCAS };

/* One cached instruction.  struct insn first: callers hold its address. */
struct drec {
	struct insn insn;
	uint8_t cls;		/* enum sem_class */
	uint8_t flags;		/* RF_* */
	uint8_t esize;		/* string / vector element bytes */
	uint8_t str_op;		/* enum str_op */
	bool addr32;		/* string, xlat, maskmovdqu: 0x67 */
	uint8_t stack_size;	/* push/pop: 8, or 2 with 0x66 */
	uint8_t bt_slot;	/* bt family: bit offset register, or none */
	uint8_t bt_width;	/* its width in bytes */
	uint8_t level;		/* enter: nesting level */
	uint8_t pop_reg;	/* pop reg: its encoding number (4: not a gpr) */
	uint8_t rcx_effect;	/* enum rcx_effect */
	struct tmpl t;
	uint8_t vex_end;	/* enum vex_end: how VEX's block ends here */
	bool vex_guardable;	/* VEX could run it speculatively (chase.c) */
	struct vex_insn vex;	/* what chase.c reads, made once */
	uint64_t target;	/* direct jmp/call/jcc: the destination */
	/* gathers, scatters, masked moves */
	bool evex;
	uint8_t vidx;		/* VSIB index vector register number */
	uint8_t vmask;		/* mask: vector register or k register */
	uint8_t nelem;
	uint8_t idx_size;	/* 4 or 8 */
	struct native_code nat;	/* with insn.native */
	char text[48];		/* insn.text */
};

#define DECODE_RECENT 4096	/* a power of two */

static inline size_t recent_slot(uint64_t pc)
{
	return (size_t)((pc ^ (pc >> 12)) & (DECODE_RECENT - 1));
}

struct decoder {
	csh cs;
	cs_insn *ci;
	struct decode_target target;
	/* The cache: records in first-decoded order (each its own
	 * allocation: callers hold &r->insn), found through MAP by pc. */
	struct drec **recs;
	uint32_t n_recs, cap_recs;
	struct hashtab map;	/* pc -> index in recs */
	/* In front of MAP, for the emulator's one lookup per instruction: a
	 * direct-mapped cache of the last record at each slot (NULL: none),
	 * emptied whenever a record is freed. */
	struct drec *recent[DECODE_RECENT];
	uint32_t gen;		/* decode_generation */
	uint64_t xcr0;
	/* CPUID 0xd.i for components 2..18: size, offset, 64-byte aligned */
	uint32_t comp_size[19], comp_off[19];
	bool comp_align[19];
	/* XSAVE standard-format component offsets (CPUID 0xd.i EBX) */
	uint32_t off_ymmh, off_opmask, off_zmmh, off_hi16;
	uint8_t *xbuf;
	size_t xbuf_len;
	/* xbuf holds the state before the step of snap_pc (decode_prepare):
	 * gathers and scatters clear their mask as elements complete, so
	 * the state after the trap no longer says which were enabled */
	bool snap_valid;
	uint64_t snap_pc;
	size_t snap_len;
	/* VEX's superblock the steps are in (decode_step): the pc the next
	 * step must have to stay in it, its instructions so far, and whether
	 * rcx holds a constant set inside it */
	uint64_t sb_next;
	uint32_t sb_insns;
	bool sb_rcx_const;
	bool allow_x87;		/* decode_allow_x87 */
	/* VEX's superblock chasing (chase.c), NULL when off */
	struct chase *chase;
};

/* valgrind's --vex-guest-max-insns default: a superblock's length.
 * (valgrind's --help says 50; LibVEX_default_VexControl sets 60, and
 * nothing in valgrind 3.19 changes it.) */
#define VEX_MAX_INSNS VEX_GUEST_MAX_INSNS

static const uint8_t gpr_slots[16] = {
	SLOT(rax), SLOT(rcx), SLOT(rdx), SLOT(rbx), SLOT(rsp), SLOT(rbp),
	SLOT(rsi), SLOT(rdi), SLOT(r8), SLOT(r9), SLOT(r10), SLOT(r11),
	SLOT(r12), SLOT(r13), SLOT(r14), SLOT(r15),
};

uint8_t gpr_slot(unsigned int num)
{
	return num < 16 ? gpr_slots[num] : SLOT_NONE;
}

/* Capstone general register -> (encoding number, width in bytes). */
static bool cs_gpr(x86_reg r, unsigned int *num, unsigned int *width)
{
	static const x86_reg r64[16] = {
		X86_REG_RAX, X86_REG_RCX, X86_REG_RDX, X86_REG_RBX,
		X86_REG_RSP, X86_REG_RBP, X86_REG_RSI, X86_REG_RDI,
		X86_REG_R8, X86_REG_R9, X86_REG_R10, X86_REG_R11,
		X86_REG_R12, X86_REG_R13, X86_REG_R14, X86_REG_R15,
	};
	static const x86_reg r32[16] = {
		X86_REG_EAX, X86_REG_ECX, X86_REG_EDX, X86_REG_EBX,
		X86_REG_ESP, X86_REG_EBP, X86_REG_ESI, X86_REG_EDI,
		X86_REG_R8D, X86_REG_R9D, X86_REG_R10D, X86_REG_R11D,
		X86_REG_R12D, X86_REG_R13D, X86_REG_R14D, X86_REG_R15D,
	};
	static const x86_reg r16[16] = {
		X86_REG_AX, X86_REG_CX, X86_REG_DX, X86_REG_BX,
		X86_REG_SP, X86_REG_BP, X86_REG_SI, X86_REG_DI,
		X86_REG_R8W, X86_REG_R9W, X86_REG_R10W, X86_REG_R11W,
		X86_REG_R12W, X86_REG_R13W, X86_REG_R14W, X86_REG_R15W,
	};
	for (unsigned int i = 0; i < 16; i++) {
		if (r == r64[i] || r == r32[i] || r == r16[i]) {
			*num = i;
			*width = r == r64[i] ? 8 : r == r32[i] ? 4 : 2;
			return true;
		}
	}
	return false;
}

/* Any general register, 8-bit ones too -> encoding number, width. */
static bool cs_gpr_any(x86_reg r, unsigned int *num, unsigned int *width)
{
	static const x86_reg r8[20] = {
		X86_REG_AL, X86_REG_CL, X86_REG_DL, X86_REG_BL,
		X86_REG_SPL, X86_REG_BPL, X86_REG_SIL, X86_REG_DIL,
		X86_REG_R8B, X86_REG_R9B, X86_REG_R10B, X86_REG_R11B,
		X86_REG_R12B, X86_REG_R13B, X86_REG_R14B, X86_REG_R15B,
		X86_REG_AH, X86_REG_CH, X86_REG_DH, X86_REG_BH,
	};
	if (cs_gpr(r, num, width))
		return true;
	for (unsigned int i = 0; i < 20; i++) {
		if (r == r8[i]) {
			*num = i < 16 ? i : i - 16;
			*width = 1;
			return true;
		}
	}
	return false;
}

/* Is the value a `pop reg` at PC loads dead in VEX's superblock?  VEX's
 * iropt removes a Put to a guest register that a later Put overwrites
 * with no Get of it and no side exit in between, and then the load whose
 * only use was that Put (register state need only be precise at exits;
 * at memory accesses only rsp, rbp and rip: --vex-iropt-register-updates'
 * default).  Cachegrind instruments after iropt, so such a pop has no Dr
 * (`pop rax; mov eax, 0x40`: Lackey shows no load).  We look at the next
 * few instructions: dead when one writes the whole register (64-bit, or
 * 32-bit which zero-extends) before any reads it, any partial write, any
 * control transfer or anything we cannot decode.  rsp and rbp are never
 * dead.  With chasing, VEX appends the block of a direct jmp or call to
 * the superblock (chase.c): the scan follows one, and a register
 * overwritten in the chased block before any read or branch sets
 * *IF_CHASED (dead only when that superblock chases: `pop rax; pop rdx;
 * jmp L` in libsqlite3's sqlite3Parser, L: mov rax, ...). */
static bool pop_value_dead(struct decoder *d, uint64_t pc, unsigned int reg,
			   bool *if_chased)
{
	uint8_t buf[64];
	cs_regs rd, wr;
	uint8_t nrd, nwr;

	*if_chased = false;
	if (reg == 4 || reg == 5)
		return false;
	ssize_t got = d->target.read_mem(d->target.ctx, pc, buf, sizeof(buf));
	if (got <= 0)
		return false;
	const uint8_t *p = buf;
	size_t n = (size_t)got;
	uint64_t addr = pc;
	bool chased = false;
	for (int k = 0; k < 8 && cs_disasm_iter(d->cs, &p, &n, &addr, d->ci); k++) {
		const cs_detail *det = d->ci->detail;
		const cs_x86 *x = &det->x86;
		if (!chased && (d->ci->id == X86_INS_JMP || d->ci->id == X86_INS_CALL) &&
		    x->op_count == 1 && x->operands[0].type == X86_OP_IMM) {
			/* a call's push reads no general register but rsp */
			addr = (uint64_t)x->operands[0].imm;
			got = d->target.read_mem(d->target.ctx, addr, buf, sizeof(buf));
			if (got <= 0)
				return false;
			p = buf;
			n = (size_t)got;
			chased = true;
			continue;
		}
		for (uint8_t g = 0; g < det->groups_count; g++) {
			uint8_t gr = det->groups[g];
			if (gr == CS_GRP_JUMP || gr == CS_GRP_CALL || gr == CS_GRP_RET ||
			    gr == CS_GRP_INT || gr == CS_GRP_IRET ||
			    gr == CS_GRP_BRANCH_RELATIVE)
				return false;
		}
		if (cs_regs_access(d->cs, d->ci, rd, &nrd, wr, &nwr) != CS_ERR_OK)
			return false;
		unsigned int num, width;
		for (uint8_t i = 0; i < nrd; i++)
			if (cs_gpr_any(rd[i], &num, &width) && num == reg)
				return false;
		for (uint8_t i = 0; i < nwr; i++) {
			if (cs_gpr_any(wr[i], &num, &width) && num == reg) {
				if (width < 4 || !chased)
					return width >= 4;
				*if_chased = true;
				return false;
			}
		}
		/* rep prefixes and string instructions use registers that
		 * Capstone 4 may not list: stop at them */
		if (d->ci->detail->x86.prefix[0] != 0 && d->ci->detail->x86.prefix[0] != 0xf0)
			return false;
	}
	return false;
}

/* RCX_CONST for mov ecx/rcx, imm and xor ecx, ecx; RCX_WRITE for any
 * other instruction that writes some part of rcx. */
static uint8_t rcx_effect_of(struct decoder *d)
{
	const cs_x86 *x = &d->ci->detail->x86;
	cs_regs rd, wr;
	uint8_t nrd, nwr;
	unsigned int num, width;

	if (x->op_count == 2 && x->operands[0].type == X86_OP_REG &&
	    (x->operands[0].reg == X86_REG_ECX || x->operands[0].reg == X86_REG_RCX)) {
		if (d->ci->id == X86_INS_MOV && x->operands[1].type == X86_OP_IMM)
			return RCX_CONST;
		if (d->ci->id == X86_INS_XOR && x->operands[1].type == X86_OP_REG &&
		    x->operands[1].reg == x->operands[0].reg)
			return RCX_CONST;
	}
	if (cs_regs_access(d->cs, d->ci, rd, &nrd, wr, &nwr) != CS_ERR_OK)
		return RCX_WRITE;
	for (uint8_t i = 0; i < nwr; i++)
		if (cs_gpr_any(wr[i], &num, &width) && num == 1)
			return RCX_WRITE;
	return RCX_NONE;
}

static uint8_t cs_slot(x86_reg r)
{
	unsigned int num, width;

	if (r == X86_REG_INVALID || !cs_gpr(r, &num, &width))
		return SLOT_NONE;
	return gpr_slots[num];
}

/* ---- the pc -> record map ---- */

static uint64_t rec_hash(const void *ctx, uint32_t i)
{
	const struct decoder *d = ctx;
	return hash_u64(d->recs[i]->insn.pc);
}

static struct drec *map_find(const struct decoder *d, uint64_t pc,
			     struct hashtab_probe *p)
{
	for (uint32_t i = hashtab_first(&d->map, hash_u64(pc), p);
	     i != HASHTAB_NONE; i = hashtab_next(&d->map, p))
		if (d->recs[i]->insn.pc == pc)
			return d->recs[i];
	return NULL;
}

/* ---- setup ---- */

static void xsave_layout(struct decoder *d)
{
	unsigned int a, b, c, dx;

	/* Defaults: the standard layout of current Intel CPUs. */
	d->xcr0 = 7;
	d->comp_size[2] = 256;
	d->comp_off[2] = 576;
	d->off_ymmh = 576;
	d->off_opmask = 1088;
	d->off_zmmh = 1152;
	d->off_hi16 = 1664;
	d->xbuf_len = 4096;
	if (!__get_cpuid(1, &a, &b, &c, &dx) || !(c & bit_OSXSAVE))
		return;
	uint32_t lo, hi;
	__asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
	d->xcr0 = ((uint64_t)hi << 32) | lo;
	if (!__get_cpuid_count(0xd, 0, &a, &b, &c, &dx) || b == 0)
		return;
	for (unsigned int i = 2; i < 19; i++) {
		unsigned int ea_, eb, ec, ed;
		if (__get_cpuid_count(0xd, i, &ea_, &eb, &ec, &ed)) {
			d->comp_size[i] = ea_;
			d->comp_off[i] = eb;
			d->comp_align[i] = ec & 2;
		}
	}
	if (c > d->xbuf_len && c <= 65536)
		d->xbuf_len = c;
	if (__get_cpuid_count(0xd, 2, &a, &b, &c, &dx) && b)
		d->off_ymmh = b;
	if (__get_cpuid_count(0xd, 5, &a, &b, &c, &dx) && b)
		d->off_opmask = b;
	if (__get_cpuid_count(0xd, 6, &a, &b, &c, &dx) && b)
		d->off_zmmh = b;
	if (__get_cpuid_count(0xd, 7, &a, &b, &c, &dx) && b)
		d->off_hi16 = b;
}

struct decoder *decode_new(const struct decode_target *target, const char **err)
{
	struct decoder *d = calloc(1, sizeof(*d));

	if (!d) {
		*err = "out of memory";
		return NULL;
	}
	if (!target || !target->read_mem) {
		*err = "decode target without read_mem";
		free(d);
		return NULL;
	}
	d->target = *target;
	d->gen = 1;
	if (cs_open(CS_ARCH_X86, CS_MODE_64, &d->cs) != CS_ERR_OK) {
		*err = "cannot open Capstone for x86-64";
		free(d);
		return NULL;
	}
	cs_option(d->cs, CS_OPT_DETAIL, CS_OPT_ON);
	d->ci = cs_malloc(d->cs);
	xsave_layout(d);
	d->xbuf = malloc(d->xbuf_len);
	if (!d->ci || !d->xbuf) {
		*err = "out of memory";
		decode_free(d);
		return NULL;
	}
	return d;
}

void decode_free(struct decoder *d)
{
	if (!d)
		return;
	for (uint32_t i = 0; i < d->n_recs; i++)
		free(d->recs[i]);
	free(d->recs);
	hashtab_free(&d->map);
	if (d->ci)
		cs_free(d->ci, 1);
	cs_close(&d->cs);
	free(d->xbuf);
	if (d->chase)
		chase_free(d->chase);
	free(d);
}

void decode_allow_x87(struct decoder *d, bool on)
{
	d->allow_x87 = on;
}

bool decode_lands_ok(struct decoder *d, const struct insn *in,
		     const struct user_regs_struct *before, uint64_t landed)
{
	const struct drec *r = (const struct drec *)in;
	uint64_t next = in->pc + in->len, ret;

	/* Unknown length; nothing completed (a system call interrupted and
	 * restarted, a rep between iterations); the fall through. */
	if (!in->len || landed == in->pc)
		return true;
	switch (in->branch) {
	case BR_NONE:
		/* A step inside a transaction aborts it: to the fallback. */
		return landed == next || in->id == X86_INS_XBEGIN ||
		       in->id == X86_INS_XEND || in->id == X86_INS_XABORT;
	case BR_COND:
		return landed == next || landed == r->target || !r->target;
	case BR_JMP:
	case BR_CALL:
		return landed == r->target || !r->target;
	case BR_RET:
		if (d->target.read_mem(d->target.ctx, before->rsp, &ret,
				       sizeof(ret)) != sizeof(ret))
			return true;
		return landed == ret;
	case BR_OTHER:
		/* A system call returns to the next instruction, except
		 * rt_sigreturn, which goes where the signal frame says. */
		return in->id != X86_INS_SYSCALL || landed == next ||
		       before->rax == 15 /* rt_sigreturn */;
	default:
		return true;	/* through a register or memory */
	}
}

const uint32_t *decode_generation(const struct decoder *d)
{
	return &d->gen;
}

size_t decode_cached_count(const struct decoder *d)
{
	return d->n_recs;
}

void decode_invalidate(struct decoder *d, uint64_t start, uint64_t end)
{
	uint32_t kept = 0;

	/* Rare (exec, munmap, text writes): drop the records in range and
	 * rebuild the map from the rest, which keeps linear probing's chains
	 * intact without tombstones. */
	if (d->chase)
		chase_clear(d->chase);	/* superblocks span many pcs */
	for (uint32_t i = 0; i < d->n_recs; i++) {
		struct drec *r = d->recs[i];
		if (r->insn.pc >= start && r->insn.pc < end)
			free(r);
		else
			d->recs[kept++] = r;
	}
	if (kept == d->n_recs)
		return;
	if (!++d->gen)
		d->gen = 1;
	memset(d->recent, 0, sizeof(d->recent));
	d->n_recs = kept;
	hashtab_clear(&d->map);
	for (uint32_t i = 0; i < kept; i++)
		hashtab_add(&d->map, rec_hash(d, i), i, rec_hash, d);
}

/* ---- building a record ---- */

static void tmpl_from_mem(struct tmpl *t, const cs_x86_op *op, uint64_t next_pc,
			  bool addr32)
{
	const x86_op_mem *m = &op->mem;

	t->disp = m->disp;
	t->base = SLOT_NONE;
	if (m->base == X86_REG_RIP || m->base == X86_REG_EIP)
		t->disp += (int64_t)next_pc;
	else
		t->base = cs_slot(m->base);
	t->index = cs_slot(m->index);
	t->scale = (uint8_t)(m->scale ? m->scale : 1);
	t->seg = m->segment == X86_REG_FS ? 1 : m->segment == X86_REG_GS ? 2 : 0;
	t->addr32 = addr32;
	t->size = op->size;
}

/* "mnemonic operands", cut to fit. */
static void set_text(char *out, size_t size, const char *mnem, const char *ops)
{
	size_t i = 0;

	for (; *mnem && i + 1 < size; mnem++)
		out[i++] = *mnem;
	if (*ops && i + 1 < size)
		out[i++] = ' ';
	for (; *ops && i + 1 < size; ops++)
		out[i++] = *ops;
	out[i] = 0;
}

bool decode_is_simd(const cs_detail *det)
{
	/* Capstone leaves some (vsqrtss) without a group: a vector register
	 * operand says SIMD too. */
	for (unsigned int i = 0; i < det->x86.op_count; i++) {
		const cs_x86_op *op = &det->x86.operands[i];
		if (op->type == X86_OP_REG &&
		    ((op->reg >= X86_REG_XMM0 && op->reg <= X86_REG_XMM31) ||
		     (op->reg >= X86_REG_YMM0 && op->reg <= X86_REG_YMM31) ||
		     (op->reg >= X86_REG_ZMM0 && op->reg <= X86_REG_ZMM31) ||
		     (op->reg >= X86_REG_MM0 && op->reg <= X86_REG_MM7)))
			return true;
	}
	for (unsigned int i = 0; i < det->groups_count; i++) {
		switch (det->groups[i]) {
		case X86_GRP_SSE1: case X86_GRP_SSE2: case X86_GRP_SSE3:
		case X86_GRP_SSE41: case X86_GRP_SSE42: case X86_GRP_SSSE3:
		case X86_GRP_AVX: case X86_GRP_AVX2: case X86_GRP_AVX512:
		case X86_GRP_FMA: case X86_GRP_F16C: case X86_GRP_AES:
		case X86_GRP_SHA: case X86_GRP_PCLMUL: case X86_GRP_MMX:
		case X86_GRP_CDI: case X86_GRP_DQI: case X86_GRP_BWI:
		case X86_GRP_VLX:
			return true;
		default:
			break;
		}
	}
	return false;
}

/* Gathers, scatters, masked moves: registers from the raw encoding. */
static bool build_vector(struct drec *r, const struct sem *s, const uint8_t *buf,
			 size_t n, int memop, unsigned int scale)
{
	struct vex_info v;

	if (memop < 0 || !vex_parse(buf, n, &v) || v.modrm_off >= n)
		return false;
	r->evex = v.form == 4;
	r->esize = s->esize;
	r->flags |= RF_MEM;
	r->insn.needs_xstate = true;
	if (s->cls == SC_MASKMOV) {
		if (r->evex)
			return false;
		r->vmask = v.vvvv & 15;
		r->nelem = (uint8_t)(v.vl / s->esize);
		r->t.kind = memop == 0 ? ACC_WRITE : ACC_READ;
		r->t.size = s->esize;
		return true;
	}
	if (v.modrm_off + 1 >= n)
		return false;
	uint8_t modrm = buf[v.modrm_off];
	uint8_t sib = buf[v.modrm_off + 1];
	if ((modrm >> 6) == 3 || (modrm & 7) != 4)
		return false;
	r->vidx = (uint8_t)(((sib >> 3) & 7) | (v.x << 3) | (v.vprime << 4));
	if (r->evex) {
		r->vmask = v.aaa;
	} else {
		if (s->cls == SC_SCATTER)
			return false;
		r->vmask = v.vvvv & 15;
	}
	r->idx_size = (s->flags & SF_Q_INDEX) ? 8 : 4;
	r->nelem = (uint8_t)(v.vl / ((s->flags & SF_Q_INDEX) ? 8 : s->esize));
	r->t.index = SLOT_NONE;		/* the vector index is added per element */
	r->t.scale = (uint8_t)(scale ? scale : 1);
	r->t.kind = s->cls == SC_SCATTER ? ACC_WRITE : ACC_READ;
	r->t.size = s->esize;
	return true;
}

/* The index of the first memory operand, or -1. */
static int first_mem_operand(const cs_x86 *x)
{
	for (int i = 0; i < x->op_count; i++)
		if (x->operands[i].type == X86_OP_MEM)
			return i;
	return -1;
}

/* String forms by opcode: Capstone's movsd/cmpsd ids are shared with the
 * SSE instructions.  False when CI is no string instruction. */
static bool build_string(struct drec *r, const cs_insn *ci,
			 const struct sem *s, bool addr32)
{
	const cs_x86 *x = &ci->detail->x86;
	bool str_id = s->cls == SC_STR || ci->id == X86_INS_MOVSD ||
		      ci->id == X86_INS_CMPSD;

	if (!str_id || x->opcode[0] < 0xa4 || x->opcode[0] > 0xaf ||
	    x->opcode[0] == 0xa8 || x->opcode[0] == 0xa9)
		return false;
	static const uint8_t ops[] = {
		STR_MOVS, STR_MOVS, STR_CMPS, STR_CMPS, 0, 0,
		STR_STOS, STR_STOS, STR_LODS, STR_LODS, STR_SCAS, STR_SCAS,
	};
	unsigned int op = x->opcode[0];
	r->cls = SC_STR;
	r->str_op = ops[op - 0xa4];
	r->esize = (op & 1) == 0 ? 1 : (x->rex & 8) ? 8 :
		   x->prefix[2] == 0x66 ? 2 : 4;
	r->addr32 = addr32;
	bool cond = r->str_op == STR_CMPS || r->str_op == STR_SCAS;
	if (x->prefix[0] == X86_PREFIX_REP)
		r->insn.rep = cond ? REP_E : REP_PLAIN;
	else if (x->prefix[0] == X86_PREFIX_REPNE)
		r->insn.rep = cond ? REP_NE : REP_PLAIN;
	return true;
}

/* A jmp or call is indirect unless its operand is an immediate. */
static void set_branch(struct drec *r, const struct sem *s, const cs_x86 *x)
{
	r->insn.branch = s->branch;
	if (s->branch == BR_JMP || s->branch == BR_CALL) {
		bool direct = x->op_count > 0 && x->operands[0].type == X86_OP_IMM;
		if (!direct)
			r->insn.branch = s->branch == BR_JMP ? BR_JMP_IND : BR_CALL_IND;
	}
}

/* SC_GEN: the memory operand's kind and size from the semantics table;
 * locked (or xchg) read-modify-writes read first and have a CAS exit. */
static void build_gen(struct drec *r, const struct sem *s, const cs_x86 *x,
		      int memop)
{
	if (memop < 0)
		return;
	uint8_t kind = memop == 0 ? s->dst : s->src;
	if (kind == KIND_NONE)
		return;
	if (kind == KIND_UNKNOWN) {
		r->insn.unknown = true;
		return;
	}
	r->t.kind = kind;
	if (s->size == SZ_XSAVE)
		r->flags |= RF_XSAVE;
	else if (s->size == SZ_XSAVEC)
		r->flags |= RF_XSAVEC;
	else if (s->size)
		r->t.size = s->size;
	r->flags |= RF_MEM;
	if (kind == ACC_MODIFY && (((s->flags & SF_LOCK2) &&
	    x->prefix[0] == X86_PREFIX_LOCK) || (s->flags & SF_XCHG)))
		r->flags |= RF_PRE_READ | RF_CAS_EXIT;
}

/* SC_BT: bt [m], reg touches one byte, found from the bit offset
 * register at step time. */
static void build_bt(struct drec *r, const struct sem *s, const cs_x86 *x,
		     int memop)
{
	r->bt_slot = SLOT_NONE;
	if (memop < 0 && x->op_count >= 2 && x->operands[0].type == X86_OP_REG &&
	    x->operands[1].type == X86_OP_REG) {
		unsigned int num, width;
		if (!cs_gpr(x->operands[1].reg, &num, &width)) {
			r->insn.unknown = true;
			return;
		}
		r->bt_slot = gpr_slots[num];
		r->bt_width = (uint8_t)width;
		r->t.kind = s->dst;
		r->flags |= RF_BT_REG;
		return;
	}
	if (memop != 0)
		return;		/* bt reg, imm: no access */
	r->t.kind = s->dst;
	r->flags |= RF_MEM;
	if ((s->flags & SF_LOCK2) && x->prefix[0] == X86_PREFIX_LOCK)
		r->flags |= RF_PRE_READ | RF_CAS_EXIT;
	if (x->op_count >= 2 && x->operands[1].type == X86_OP_REG) {
		unsigned int num, width;
		if (!cs_gpr(x->operands[1].reg, &num, &width)) {
			r->insn.unknown = true;
			r->flags = 0;
			return;
		}
		r->bt_slot = gpr_slots[num];
		r->bt_width = (uint8_t)width;
		r->t.size = 1;
	}
}

/* An access of the explicit memory operand, its kind fixed by the class. */
static void build_mem_kind(struct drec *r, int memop, uint8_t kind)
{
	if (memop >= 0) {
		r->t.kind = kind;
		r->flags |= RF_MEM;
	}
}

static void build_from_capstone(struct decoder *d, struct drec *r,
				const uint8_t *buf, size_t n)
{
	const cs_insn *ci = d->ci;
	const cs_x86 *x = &ci->detail->x86;
	const struct sem *s = sem_lookup(ci->id);
	uint64_t next = ci->address + ci->size;
	bool addr32 = x->addr_size == 4;
	int memop = first_mem_operand(x);

	r->insn.id = (uint16_t)ci->id;
	set_text(r->text, sizeof(r->text), ci->mnemonic, ci->op_str);
	if (s->cls == SC_UNKNOWN && decode_is_simd(ci->detail))
		s = sem_vector_rule();
	if (build_string(r, ci, s, addr32))
		return;
	if (s->cls == SC_STR) {
		r->insn.unknown = true;
		return;
	}
	r->cls = s->cls;
	set_branch(r, s, x);
	if ((r->insn.branch == BR_JMP || r->insn.branch == BR_CALL ||
	     r->insn.branch == BR_COND) && x->op_count > 0 &&
	    x->operands[0].type == X86_OP_IMM)
		r->target = (uint64_t)x->operands[0].imm;
	if (memop >= 0)
		tmpl_from_mem(&r->t, &x->operands[memop], next, addr32);
	r->stack_size = x->prefix[2] == 0x66 ? 2 : 8;

	switch (s->cls) {
	case SC_UNKNOWN:
		r->insn.unknown = true;
		return;
	case SC_GEN:
		build_gen(r, s, x, memop);
		return;
	case SC_PUSH:
	case SC_CALL:
		build_mem_kind(r, memop, ACC_READ);
		return;
	case SC_POP:
		build_mem_kind(r, memop, ACC_WRITE);
		if (memop < 0 && x->op_count >= 1 && x->operands[0].type == X86_OP_REG) {
			unsigned int num, width;
			if (cs_gpr(x->operands[0].reg, &num, &width))
				r->pop_reg = (uint8_t)num;
			else
				r->pop_reg = 4;	/* never dead */
		} else {
			r->pop_reg = 4;
		}
		return;
	case SC_ENTER:
		if (x->op_count >= 2 && x->operands[1].type == X86_OP_IMM)
			r->level = (uint8_t)(x->operands[1].imm & 31);
		return;
	case SC_BT:
		build_bt(r, s, x, memop);
		return;
	case SC_XLAT:
	case SC_MASKMOVDQU:
		r->addr32 = addr32;
		return;
	case SC_GATHER:
	case SC_SCATTER:
	case SC_MASKMOV:
		if (!build_vector(r, s, buf, n, memop,
				  memop >= 0 ? (unsigned int)x->operands[memop].mem.scale : 1)) {
			r->insn.unknown = true;
			r->insn.needs_xstate = false;
			r->flags = 0;
		}
		return;
	default:
		return;
	}
}

static void build_from_fallback(struct drec *r, const struct fb_insn *fb,
				const uint8_t *buf, size_t n)
{
	r->insn.len = fb->len;
	r->insn.id = X86_INS_INVALID;
	set_text(r->text, sizeof(r->text), fb->text, "");
	r->cls = SC_GEN;
	if (!fb->known) {
		r->insn.unknown = true;
		return;
	}
	if (!fb->has_mem)
		return;
	r->flags = RF_MEM;
	r->t.disp = fb->disp;
	if (fb->rip_rel)
		r->t.disp += (int64_t)(r->insn.pc + fb->len);
	r->t.base = fb->base;
	r->t.index = fb->index;
	r->t.scale = fb->scale;
	r->t.seg = fb->seg;
	r->t.addr32 = fb->addr32;
	r->t.kind = fb->kind;
	r->t.size = fb->size;
	if (fb->vsib) {
		/* EVEX gathers/scatters Capstone rejects (index zmm16..31) */
		struct sem s = {
			.cls = fb->kind == ACC_WRITE ? SC_SCATTER : SC_GATHER,
			.esize = (uint8_t)fb->size,
			.flags = fb->q_index ? SF_Q_INDEX : 0,
		};
		r->t.index = SLOT_NONE;
		r->cls = s.cls;
		r->flags = 0;
		if (!build_vector(r, &s, buf, n, 0, fb->scale)) {
			r->insn.unknown = true;
			r->insn.needs_xstate = false;
			r->flags = 0;
		}
	}
}

/* How VEX's amd64 front end ends a block at this instruction, and whether
 * its IR could be guarded (run speculatively: guest_generic_bb_to_IR.c's
 * stmt_is_guardable: no load, store, dirty helper, CAS, fence, exit or
 * trapping division). */
static void vex_facts(struct drec *r)
{
	/* indirect jmp/call, ret, syscall, int: VEX_END_STOP */
	static const uint8_t end_of[] = {
		[BR_NONE] = VEX_END_NONE, [BR_COND] = VEX_END_COND,
		[BR_JMP] = VEX_END_JMP, [BR_CALL] = VEX_END_CALL,
		[BR_JMP_IND] = VEX_END_STOP, [BR_CALL_IND] = VEX_END_STOP,
		[BR_RET] = VEX_END_STOP, [BR_OTHER] = VEX_END_STOP,
	};
	r->vex_end = r->insn.branch < sizeof(end_of) ? end_of[r->insn.branch] :
		     VEX_END_STOP;
	switch (r->insn.id) {
	case X86_INS_PAUSE:	/* Ijk_Yield */
	case X86_INS_HLT:
	case X86_INS_UD2:
	case X86_INS_INT3:
	case X86_INS_INT:
	case X86_INS_INTO:
	case X86_INS_SYSCALL:
	case X86_INS_SYSENTER:
		r->vex_end = VEX_END_STOP;
		break;
	default:
		break;
	}
	if (r->insn.rep || !r->insn.len)
		r->vex_end = VEX_END_STOP;	/* jumps to itself or on */
	bool mem = (r->flags & RF_MEM) && r->t.kind != ACC_PREFETCH;
	r->vex_guardable = !r->insn.unknown && r->cls == SC_GEN && !mem &&
			   !(r->flags & (RF_BT_REG | RF_CAS_EXIT));
	switch (r->insn.id) {
	case X86_INS_DIV:	/* Iop_DivMod*: primopMightTrap */
	case X86_INS_IDIV:
	case X86_INS_CPUID:	/* dirty helpers */
	case X86_INS_RDTSC:
	case X86_INS_RDTSCP:
	case X86_INS_XGETBV:
	case X86_INS_RDRAND:
	case X86_INS_RDSEED:
	case X86_INS_PCMPESTRI:
	case X86_INS_PCMPESTRM:
	case X86_INS_PCMPISTRI:
	case X86_INS_PCMPISTRM:
	case X86_INS_VPCMPESTRI:
	case X86_INS_VPCMPESTRM:
	case X86_INS_VPCMPISTRI:
	case X86_INS_VPCMPISTRM:
	case X86_INS_MFENCE:	/* IRStmt_MBE */
	case X86_INS_LFENCE:
	case X86_INS_SFENCE:
		r->vex_guardable = false;
		break;
	default:
		break;
	}
}

bool decode_vex_insn(struct decoder *d, uint64_t pc, struct vex_insn *vi)
{
	const char *err;
	const struct insn *in = decode_insn(d, pc, &err);
	if (!in)
		return false;
	decode_vex_of(in, vi);
	return true;
}

static void vex_of(const struct drec *r, struct vex_insn *vi)
{
	const struct insn *in = &r->insn;
	vi->len = in->len;
	vi->end = r->vex_end;
	vi->guardable = r->vex_guardable;
	vi->exit_inside = (r->flags & RF_CAS_EXIT) != 0;
	vi->dead_if_chased = (r->flags & RF_DEAD_IF_CHASED) != 0;
	vi->rcx_effect = r->rcx_effect == RCX_CONST ? VEX_RCX_CONST :
			 r->rcx_effect == RCX_WRITE ? VEX_RCX_WRITE : VEX_RCX_NONE;
	vi->rep = in->rep != 0;
	vi->target = r->target;
}

void decode_vex_of(const struct insn *in, struct vex_insn *vi)
{
	*vi = ((const struct drec *)in)->vex;
}

bool decode_called_directly(struct decoder *d, uint64_t pc, uint64_t rsp)
{
	uint64_t ret;
	uint8_t call[5];

	if (d->target.read_mem(d->target.ctx, rsp, &ret, sizeof(ret)) != sizeof(ret) ||
	    d->target.read_mem(d->target.ctx, ret - 5, call, sizeof(call)) != sizeof(call))
		return false;
	int32_t rel;
	memcpy(&rel, call + 1, sizeof(rel));
	return call[0] == 0xe8 && ret + (uint64_t)(int64_t)rel == pc;
}

struct chase *decode_chase(struct decoder *d)
{
	return d->chase;
}

void decode_set_chase(struct decoder *d, bool on)
{
	if (on && !d->chase)
		d->chase = chase_new();
	else if (!on && d->chase) {
		chase_free(d->chase);
		d->chase = NULL;
	}
}

#define RBIT(reg) (1u << SLOT(reg))

/* The registers decode_step reads from BEFORE for R, besides rip, rsp
 * and fs_base (which an engine that reads registers lazily always keeps):
 * the memory operand's base and index, and what each class's implicit
 * accesses use.  DECODE_REGS_ALL where the class is not listed. */
static uint32_t regs_in_of(const struct drec *r)
{
	uint32_t m = 0;

	if (r->insn.unknown)
		return 0;
	if (r->t.base != SLOT_NONE)
		m |= 1u << r->t.base;
	if (r->t.index != SLOT_NONE)
		m |= 1u << r->t.index;
	if (r->t.seg == 2)
		m |= RBIT(gs_base);
	if (r->flags & (RF_XSAVE | RF_XSAVEC))
		m |= RBIT(rax) | RBIT(rdx);
	switch (r->cls) {
	case SC_GEN:
	case SC_PUSH:
	case SC_POP:
	case SC_CALL:
	case SC_RET:
		return m;
	case SC_LEAVE:
	case SC_ENTER:
		return m | RBIT(rbp);
	case SC_STR:
		return m | RBIT(rsi) | RBIT(rdi) | RBIT(rcx) | RBIT(eflags);
	case SC_BT:
		return r->bt_slot != SLOT_NONE ? m | 1u << r->bt_slot : m;
	case SC_XLAT:
		return m | RBIT(rax) | RBIT(rbx);
	case SC_MASKMOVDQU:
		return m | RBIT(rdi);
	default:
		return DECODE_REGS_ALL;
	}
}

static uint32_t regs_out_of(const struct insn *in)
{
	uint32_t m = in->writes_rsp ? RBIT(rsp) : 0;

	if (in->rep)
		m |= RBIT(rcx) | RBIT(rsi) | RBIT(rdi) | RBIT(eflags);
	else if (in->id == X86_INS_LOOP || in->id == X86_INS_LOOPE ||
		 in->id == X86_INS_LOOPNE)
		m |= RBIT(rcx);
	return m;
}

/* A register operand is rsp, esp, sp or spl. */
static bool operand_names_rsp(const cs_x86 *x)
{
	for (unsigned i = 0; i < x->op_count; i++) {
		x86_reg g = x->operands[i].reg;
		if (x->operands[i].type == X86_OP_REG &&
		    (g == X86_REG_RSP || g == X86_REG_ESP || g == X86_REG_SP ||
		     g == X86_REG_SPL))
			return true;
	}
	return false;
}

/* The instruction may change rsp (Capstone's implicit and explicit
 * writes; the stack classes always). */
static bool writes_rsp_of(struct decoder *d, const struct drec *r)
{
	cs_regs rd, wr;
	uint8_t nrd, nwr;
	unsigned int num, width;

	if (r->cls == SC_PUSH || r->cls == SC_POP || r->cls == SC_CALL ||
	    r->cls == SC_RET || r->cls == SC_LEAVE || r->cls == SC_ENTER)
		return true;
	if (cs_regs_access(d->cs, d->ci, rd, &nrd, wr, &nwr) != CS_ERR_OK)
		return true;
	for (uint8_t i = 0; i < nwr; i++)
		if (wr[i] == X86_REG_RSP || wr[i] == X86_REG_ESP ||
		    wr[i] == X86_REG_SP || wr[i] == X86_REG_SPL ||
		    (cs_gpr_any(wr[i], &num, &width) && num == 4))
			return true;
	return false;
}

const struct insn *decode_insn(struct decoder *d, uint64_t pc, const char **err)
{
	struct hashtab_probe probe;
	struct drec *r = d->recent[recent_slot(pc)];
	uint8_t buf[15];

	if (r && r->insn.pc == pc)
		return &r->insn;
	r = map_find(d, pc, &probe);
	if (r) {
		d->recent[recent_slot(pc)] = r;
		return &r->insn;
	}
	ssize_t got = d->target.read_mem(d->target.ctx, pc, buf, sizeof(buf));
	if (got <= 0) {
		*err = "cannot read the instruction bytes";
		return NULL;
	}
	/* On a cache line of its own: a step reads struct insn (64 bytes)
	 * and the next line. */
	r = aligned_alloc(64, (sizeof(*r) + 63) & ~(size_t)63);
	if (!r) {
		*err = "out of memory";
		return NULL;
	}
	memset(r, 0, sizeof(*r));
	r->insn.pc = pc;
	r->insn.text = r->text;
	r->t.base = r->t.index = SLOT_NONE;
	r->bt_slot = SLOT_NONE;

	const uint8_t *p = buf;
	size_t n = (size_t)got;
	uint64_t addr = pc;
	bool names_rsp = false;
	if (cs_disasm_iter(d->cs, &p, &n, &addr, d->ci)) {
		r->insn.len = (uint8_t)d->ci->size;
		build_from_capstone(d, r, buf, (size_t)got);
		allow_classify(&r->insn, d->ci, buf, (size_t)got, d->allow_x87);
		r->rcx_effect = r->insn.rep ? RCX_WRITE : rcx_effect_of(d);
		bool if_chased = false;
		if (r->cls == SC_POP && !(r->flags & RF_MEM) && r->stack_size == 8) {
			if (pop_value_dead(d, pc + r->insn.len, r->pop_reg, &if_chased))
				r->flags |= RF_DEAD_LOAD;
			else if (if_chased)
				r->flags |= RF_DEAD_IF_CHASED;
		}
		vex_facts(r);
		r->insn.writes_rsp = writes_rsp_of(d, r);
		names_rsp = operand_names_rsp(&d->ci->detail->x86);
	} else {
		r->insn.writes_rsp = true;	/* not known: assume it */
		struct fb_insn fb;
		if (fallback_decode(buf, (size_t)got, &fb)) {
			build_from_fallback(r, &fb, buf, (size_t)got);
		} else {
			/* Neither knows it: an unknown instruction of unknown
			 * length (len 0); the CPU still runs it, and the
			 * tracer takes its length from the pc after. */
			r->insn.unknown = true;
			r->insn.len = 0;
			r->insn.id = X86_INS_INVALID;
			set_text(r->text, sizeof(r->text), "(bad)", "");
		}
	}
	if (d->n_recs == d->cap_recs) {
		uint32_t cap = d->cap_recs ? d->cap_recs * 2 : 1024;
		struct drec **a = d->n_recs < HASHTAB_MAX_ENTRIES ?
			reallocarray(d->recs, cap, sizeof(*a)) : NULL;
		if (!a) {
			free(r);
			*err = "out of memory";
			return NULL;
		}
		d->recs = a;
		d->cap_recs = cap;
	}
	native_classify(&r->insn, &r->nat,
			r->cls == SC_GEN && !(r->flags & ~RF_MEM),
			r->flags & RF_MEM, r->t.size, r->t.kind,
			names_rsp, buf, (size_t)got);
	r->insn.regs_in = regs_in_of(r);
	r->insn.regs_out = regs_out_of(&r->insn);
	vex_of(r, &r->vex);
	d->recent[recent_slot(pc)] = r;
	/* Nothing has touched the map since the probe. */
	d->recs[d->n_recs] = r;
	hashtab_insert(&d->map, &probe, d->n_recs++, rec_hash, d);
	return &r->insn;
}

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
	if (!(r->flags & RF_MEM))
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
static void step_branch(const struct insn *insn,
			const struct user_regs_struct *after,
			struct step_events *ev)
{
	switch (insn->branch) {
	case BR_COND:
		ev->cond_taken[ev->n_cond++] = after->rip != insn->pc + insn->len;
		break;
	case BR_JMP_IND:
	case BR_CALL_IND:
		ev->indirect = true;
		ev->ind_target = after->rip;
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
			    const struct user_regs_struct *before,
			    const struct user_regs_struct *after,
			    struct step_events *ev)
{
	if (before->rip != d->sb_next || d->sb_insns >= VEX_MAX_INSNS) {
		d->sb_insns = 0;
		d->sb_rcx_const = false;
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
	bool ends = r->insn.rep || !len || after->rip != r->insn.pc + len ||
		    r->insn.branch != BR_NONE || r->insn.id == X86_INS_SYSCALL;
	d->sb_next = ends ? 0 : after->rip;
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
	step_branch(insn, after, ev);
	if (d->chase) {
		if (!chase_step_inside(d->chase, before->fs_base, insn->pc,
				       &r->vex, after->rip))
			chase_step(d, d->chase, before->fs_base, before->rsp,
				   insn, &r->vex, after->rip, ev);
	}
	else
		superblock_step(d, r, before, after, ev);
	return ret;
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
