/* Building a record: the struct drec of the instruction at a pc, from
 * Capstone's decode (or fallback.c's), with its address template, branch
 * kind, register sets and the facts chase.c reads; the records' pc ->
 * record map and decode_insn, which finds or builds one.  The accounting
 * rules are at the top of decode.c. */
#include "decode.h"
#include "decode_private.h"
#include "hashtab.h"

#include <capstone/capstone.h>
#include <stdlib.h>
#include <string.h>

static inline size_t recent_slot(uint64_t pc)
{
	return (size_t)((pc ^ (pc >> 12)) & (DECODE_RECENT - 1));
}

static const uint8_t gpr_slots[16] = {
	SLOT(rax), SLOT(rcx), SLOT(rdx), SLOT(rbx), SLOT(rsp), SLOT(rbp),
	SLOT(rsi), SLOT(rdi), SLOT(r8), SLOT(r9), SLOT(r10), SLOT(r11),
	SLOT(r12), SLOT(r13), SLOT(r14), SLOT(r15),
};

uint8_t gpr_slot(unsigned int num)
{
	return num < 16 ? gpr_slots[num] : SLOT_NONE;
}

unsigned decode_gpr_slot(unsigned num)
{
	return gpr_slots[num & 15];
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
 * dead.  With chasing, VEX appends the block of a direct jmp to the
 * superblock (chase.c): the scan follows one, and a register overwritten
 * in the chased block before any read or branch sets *IF_CHASED (dead only
 * when that superblock chases: `pop rax; pop rdx; jmp L` in libsqlite3's
 * sqlite3Parser, L: mov rax, ...).  Not a call, nor what VEX translates
 * with a dirty helper, a CAS or a fence: iropt keeps every register write
 * before those (ir_opt.c, handle_gets_Stmt: a call's AbiHint, a locked
 * instruction's CAS, cpuid's helper dump its whole environment), so a
 * load before them stays (perl's `mov rdi, [m]; ...; call
 * Perl_rsignal_state`, whose first instruction overwrites edi). */
/* Does VEX translate CI with a dirty helper, a CAS or a fence (iropt
 * keeps every register write before it)?  Locked instructions and xchg
 * with memory (CAS), the fences, and the helpers' instructions. */
/* The register-only instructions VEX translates with a dirty helper
 * (cpuid, rdtsc, xgetbv, rdrand, the string compares) or a fence (an
 * IRStmt_MBE). */
static bool vex_dirty_or_fence(unsigned id)
{
	switch (id) {
	case X86_INS_CPUID: case X86_INS_RDTSC: case X86_INS_RDTSCP:
	case X86_INS_XGETBV: case X86_INS_RDRAND: case X86_INS_RDSEED:
	case X86_INS_PCMPESTRI: case X86_INS_PCMPESTRM: case X86_INS_PCMPISTRI:
	case X86_INS_PCMPISTRM: case X86_INS_VPCMPESTRI: case X86_INS_VPCMPESTRM:
	case X86_INS_VPCMPISTRI: case X86_INS_VPCMPISTRM:
	case X86_INS_MFENCE: case X86_INS_LFENCE: case X86_INS_SFENCE:
		return true;
	default:
		return false;
	}
}

static bool keeps_puts(const cs_insn *ci)
{
	const cs_x86 *x = &ci->detail->x86;
	switch (ci->id) {
	case X86_INS_XCHG:
	case X86_INS_CMPXCHG: case X86_INS_CMPXCHG8B: case X86_INS_CMPXCHG16B:
	case X86_INS_XADD:
		for (uint8_t i = 0; i < x->op_count; i++)
			if (x->operands[i].type == X86_OP_MEM)
				return true;
		return false;
	/* state images and the x87 environment: helpers with memory */
	case X86_INS_FXSAVE: case X86_INS_FXSAVE64: case X86_INS_FXRSTOR:
	case X86_INS_FXRSTOR64: case X86_INS_XSAVE: case X86_INS_XSAVE64:
	case X86_INS_XRSTOR: case X86_INS_XRSTOR64: case X86_INS_FNSTENV:
	case X86_INS_FLDENV: case X86_INS_FNSAVE: case X86_INS_FRSTOR:
		return true;
	default:
		return vex_dirty_or_fence(ci->id);
	}
}

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
		if (!chased && d->ci->id == X86_INS_JMP &&
		    x->op_count == 1 && x->operands[0].type == X86_OP_IMM) {
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
		if (keeps_puts(d->ci))
			return false;
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
		 * Capstone 4 may not list: stop at them (and at lock) */
		if (d->ci->detail->x86.prefix[0] != 0)
			return false;
	}
	return false;
}

/* The general register a flag-free plain load (mov, movzx, movsx, movsxd,
 * cmovcc r, [m]) puts its value in, or -1: VEX drops such a load when
 * the register is overwritten before any read, as for pop (tests/emulate
 * lean.c's `cmovz rax, [m]; movzx eax, [m']`; a volatile read whose value
 * is unused). */
static int pure_load_reg(const struct decoder *d)
{
	const cs_x86 *x = &d->ci->detail->x86;
	unsigned int num, width;
	unsigned id = d->ci->id;
	bool mov = id == X86_INS_MOV || id == X86_INS_MOVZX ||
		   id == X86_INS_MOVSX || id == X86_INS_MOVSXD ||
		   !strncmp(d->ci->mnemonic, "cmov", 4);
	if (!mov || x->op_count != 2 || x->operands[0].type != X86_OP_REG ||
	    x->operands[1].type != X86_OP_MEM ||
	    !cs_gpr(x->operands[0].reg, &num, &width))
		return -1;
	return (int)num;
}

/* What the instruction does to the general registers' being constants
 * VEX's iropt sees (bit N: register number N): sets them (mov r32/r64,
 * imm; xor r, r; lea r, [rip + disp]) in R->k_set, copies one into
 * another (mov r64, r64; mov r32, r32) in R->k_dst and k_src, writes them
 * otherwise in R->k_kill.  A register-indirect branch's register in
 * R->ind_reg (16: none). */
static void const_effect_of(struct decoder *d, struct drec *r)
{
	const cs_x86 *x = &d->ci->detail->x86;
	cs_regs rd, wr;
	uint8_t nrd, nwr;
	unsigned int num, width, num2, width2;

	r->k_set = r->k_kill = 0;
	r->k_dst = r->k_src = r->ind_reg = 16;
	unsigned id = d->ci->id;
	if ((id == X86_INS_CALL || id == X86_INS_JMP) && x->op_count == 1 &&
	    x->operands[0].type == X86_OP_REG &&
	    cs_gpr(x->operands[0].reg, &num, &width) && width == 8)
		r->ind_reg = (uint8_t)num;
	if (x->op_count == 2 && x->operands[0].type == X86_OP_REG &&
	    cs_gpr(x->operands[0].reg, &num, &width) && width >= 4) {
		const cs_x86_op *o = &x->operands[1];
		if ((id == X86_INS_MOV && o->type == X86_OP_IMM) ||
		    (id == X86_INS_XOR && o->type == X86_OP_REG &&
		     o->reg == x->operands[0].reg) ||
		    (id == X86_INS_LEA && o->type == X86_OP_MEM &&
		     o->mem.base == X86_REG_RIP && o->mem.index == X86_REG_INVALID))
			r->k_set = (uint16_t)(1u << num);
		else if (id == X86_INS_MOV && o->type == X86_OP_REG &&
			 cs_gpr(o->reg, &num2, &width2) && width2 == width)
			r->k_dst = (uint8_t)num, r->k_src = (uint8_t)num2;
	}
	if (cs_regs_access(d->cs, d->ci, rd, &nrd, wr, &nwr) != CS_ERR_OK) {
		r->k_kill = (uint16_t)~r->k_set;
		return;
	}
	for (uint8_t i = 0; i < nwr; i++)
		if (cs_gpr_any(wr[i], &num, &width))
			r->k_kill |= (uint16_t)(1u << num);
	r->k_kill &= (uint16_t)~r->k_set;
}

static uint8_t cs_slot(x86_reg r)
{
	unsigned int num, width;

	if (r == X86_REG_INVALID || !cs_gpr(r, &num, &width))
		return SLOT_NONE;
	return gpr_slots[num];
}

/* ---- the pc -> record map ---- */

uint64_t rec_hash(const void *ctx, uint32_t i)
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

/* What decode_copy says of R: its bytes, and where its rip-relative
 * disp32 sits, checked against the bytes (a copy elsewhere must move it;
 * one we cannot place is no copy). */
static void copy_facts(struct decoder *d, struct drec *r, const uint8_t *buf)
{
	const cs_x86 *x = &d->ci->detail->x86;
	cs_regs rd, wr;
	uint8_t n_rd, n_wr;
	unsigned num, width;

	memcpy(r->bytes, buf, r->insn.len);
	/* Every register it reads or writes, implicit ones too (mul's rdx,
	 * a shift's cl): a copy's scratch registers must be none of them.
	 * Not known: all of them. */
	r->gprs = 0xffff;
	if (cs_regs_access(d->cs, d->ci, rd, &n_rd, wr, &n_wr) != CS_ERR_OK)
		return;
	r->gprs = 0;
	for (unsigned i = 0; i < n_rd + n_wr; i++) {
		uint16_t reg = i < n_rd ? rd[i] : wr[i - n_rd];
		if (cs_gpr_any((x86_reg)reg, &num, &width))
			r->gprs |= (uint16_t)(1u << num);
	}
	r->copyable = true;
	for (unsigned i = 0; i < x->op_count; i++) {
		const cs_x86_op *op = &x->operands[i];
		if (op->type != X86_OP_MEM || (op->mem.base != X86_REG_RIP &&
					       op->mem.base != X86_REG_EIP))
			continue;
		unsigned off = x->encoding.disp_offset;
		int32_t disp;
		if (op->mem.base == X86_REG_EIP || off == 0 ||
		    off + 4 > r->insn.len) {
			r->copyable = false;
			return;
		}
		memcpy(&disp, buf + off, 4);
		if (disp != op->mem.disp) {
			r->copyable = false;
			return;
		}
		r->copy_disp = (uint8_t)off;
	}
}

/* copy_facts for a VEX or EVEX instruction the fallback decoder read
 * (Capstone 4.0.2 rejects many): the registers are an over-estimate (any
 * general register its ModRM, vvvv or memory operand could name), which
 * only narrows the scratch registers a copy may take. */
static void copy_facts_vex(struct drec *r, const uint8_t *buf, size_t n)
{
	struct vex_info v;
	unsigned len = r->insn.len;

	if (!len || !vex_parse(buf, n, &v) || v.modrm_off >= len ||
	    v.seg == 2 || v.addr32)
		return;
	uint8_t modrm = buf[v.modrm_off];
	unsigned mod = modrm >> 6, reg = (modrm >> 3) & 7, rm = modrm & 7;
	size_t at = v.modrm_off + 1;
	uint16_t g = (uint16_t)(1u << (reg | (v.r ? 8 : 0)) |
				1u << (v.vvvv & 15));
	if (mod == 3) {
		g |= (uint16_t)(1u << (rm | (v.b ? 8 : 0)));
	} else {
		if (rm == 4 && at < len) {
			uint8_t sib = buf[at++];
			g |= (uint16_t)(1u << ((sib & 7) | (v.b ? 8 : 0)) |
					1u << (((sib >> 3) & 7) | (v.x ? 8 : 0)));
		} else {
			g |= (uint16_t)(1u << (rm | (v.b ? 8 : 0)));
		}
		if (mod == 0 && rm == 5) {
			if (at + 4 > len)
				return;
			r->copy_disp = (uint8_t)at;
		}
	}
	memcpy(r->bytes, buf, len);
	r->gprs = g;
	r->copyable = true;
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
	switch (r->insn.id) {
	case X86_INS_XSAVE: case X86_INS_XSAVE64:
		r->vex_xs = XS_XSAVE;
		break;
	case X86_INS_FXSAVE: case X86_INS_FXSAVE64:
		r->vex_xs = XS_FXSAVE;
		break;
	case X86_INS_XRSTOR: case X86_INS_XRSTOR64:
		r->vex_xs = XS_XRSTOR;
		break;
	case X86_INS_FXRSTOR: case X86_INS_FXRSTOR64:
		r->vex_xs = XS_FXRSTOR;
		break;
	default:
		break;
	}
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
	/* Iop_DivMod*: primopMightTrap; dirty helpers and fences */
	if (r->insn.id == X86_INS_DIV || r->insn.id == X86_INS_IDIV ||
	    vex_dirty_or_fence(r->insn.id))
		r->vex_guardable = false;
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

/* R, decoded from code that may change (decode_target.fixed), the target
 * having run since: its bytes read again.  False when they changed: R is
 * gone. */
static bool still_same(struct decoder *d, struct drec *r)
{
	uint8_t buf[16];
	unsigned len = r->insn.len;
	if (len && (d->target.read_mem(d->target.ctx, r->insn.pc, buf, len) !=
		    (ssize_t)len || memcmp(buf, r->bytes, len))) {
		decode_invalidate(d, r->insn.pc, r->insn.pc + len);
		return false;
	}
	r->epoch = d->target.epoch(d->target.ctx);
	return true;
}

static inline bool current(const struct decoder *d, const struct drec *r)
{
	return !r->vol || r->epoch == d->target.epoch(d->target.ctx);
}

const struct insn *decode_insn(struct decoder *d, uint64_t pc, const char **err)
{
	struct hashtab_probe probe;
	struct drec *r = d->recent[recent_slot(pc)];
	uint8_t buf[15];

	if (r && r->insn.pc == pc) {
		if (current(d, r) || still_same(d, r))
			return &r->insn;
		return decode_insn(d, pc, err);		/* anew */
	}
	r = map_find(d, pc, &probe);
	if (r) {
		if (!current(d, r) && !still_same(d, r))
			return decode_insn(d, pc, err);
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
		const_effect_of(d, r);
		if (r->insn.rep)
			r->k_kill |= 2, r->k_set &= (uint16_t)~2;
		r->rcx_effect = (r->k_set & 2) ? RCX_CONST :
				(r->k_kill & 2) ? RCX_WRITE : RCX_NONE;
		/* Before pop_value_dead, which decodes the instructions after
		 * this one into d->ci. */
		copy_facts(d, r, buf);
		names_rsp = operand_names_rsp(&d->ci->detail->x86);
		bool if_chased = false;
		int reg = -1;
		if (r->cls == SC_POP && !(r->flags & RF_MEM) && r->stack_size == 8)
			reg = r->pop_reg;
		else if (r->cls == SC_GEN && r->flags == RF_MEM &&
			 r->t.kind == ACC_READ && !r->insn.rep)
			reg = pure_load_reg(d);
		if (reg >= 0) {
			if (pop_value_dead(d, pc + r->insn.len, (unsigned)reg,
					   &if_chased))
				r->flags |= RF_DEAD_LOAD;
			else if (if_chased)
				r->flags |= RF_DEAD_IF_CHASED;
		}
		vex_facts(r);
		r->insn.writes_rsp = writes_rsp_of(d, r);
	} else {
		r->insn.writes_rsp = true;	/* not known: assume it */
		struct fb_insn fb;
		if (fallback_decode(buf, (size_t)got, &fb)) {
			build_from_fallback(r, &fb, buf, (size_t)got);
			if (!r->insn.unknown)
				copy_facts_vex(r, buf, (size_t)got);
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
	r->insn.lean = lean_make(r);
	vex_of(r, &r->vex);
	if (r->insn.len)
		memcpy(r->bytes, buf, r->insn.len);
	r->vol = d->target.fixed && !d->target.fixed(d->target.ctx, pc);
	r->insn.changes = r->vol;
	if (r->vol) {
		r->epoch = d->target.epoch(d->target.ctx);
		decode_add_volatile_page(d, pc);
		decode_add_volatile_page(d, pc + (r->insn.len ? r->insn.len - 1 :
						  0));
	}
	d->recent[recent_slot(pc)] = r;
	/* Nothing has touched the map since the probe. */
	d->recs[d->n_recs] = r;
	hashtab_insert(&d->map, &probe, d->n_recs++, rec_hash, d);
	return &r->insn;
}
