/* The emulation allow-list: which instructions the emulate engine runs in
 * the supervisor (Unicorn) and which go to the real CPU.
 *
 * The decoder decides, never Unicorn: Unicorn 2.0.1 computes some VEX
 * instructions wrongly instead of refusing them (vpcmpeqb into an xmm,
 * kmovd), so nothing VEX-, EVEX- or XOP-encoded is emulated.  What is:
 * every instruction Capstone decodes in the legacy encoding (integer,
 * MMX, SSE to SSE4.2, AES-NI, PCLMULQDQ) except x87 arithmetic (QEMU's
 * status word differs: the precision flag; its control and status word
 * moves are emulated), and those whose result
 * is the machine's, not the instruction set's (cpuid, xgetbv, rdtsc,
 * rdrand, rdpid), those that enter the kernel or change privileged or
 * segment state (syscall, int, hlt, far transfers, segment loads, fs/gs
 * base), the xsave family and fxsave/fxrstor (their image's reserved and
 * pointer fields are the CPU's), and transactional memory.  Lockstep
 * (--engine=lockstep) compares each emulated instruction with the real
 * CPU; the corpus of tests/emulate is what has proven this list. */
#include "decode_private.h"

#include <capstone/capstone.h>

/* The first byte after the legacy prefixes and REX: 0xc4/0xc5 (VEX),
 * 0x62 (EVEX) and 0x8f with a non-zero ModRM reg field (XOP) start a
 * vector encoding in 64-bit mode. */
static bool vector_encoded(const uint8_t *buf, size_t n)
{
	size_t i = 0;
	while (i < n) {
		uint8_t b = buf[i];
		if (b == 0xf0 || b == 0xf2 || b == 0xf3 || b == 0x2e ||
		    b == 0x36 || b == 0x3e || b == 0x26 || b == 0x64 ||
		    b == 0x65 || b == 0x66 || b == 0x67 || (b & 0xf0) == 0x40)
			i++;
		else
			break;
	}
	if (i >= n)
		return true;
	uint8_t b = buf[i];
	if (b == 0xc4 || b == 0xc5 || b == 0x62)
		return true;
	return b == 0x8f && i + 1 < n && (buf[i + 1] & 0x38) != 0;
}

static bool denied(unsigned int id)
{
	switch (id) {
	case X86_INS_CPUID: case X86_INS_XGETBV: case X86_INS_XSETBV:
	case X86_INS_RDTSC: case X86_INS_RDTSCP: case X86_INS_RDPMC:
	case X86_INS_RDRAND: case X86_INS_RDSEED:
	case X86_INS_RDFSBASE: case X86_INS_RDGSBASE:
	case X86_INS_WRFSBASE: case X86_INS_WRGSBASE:
	case X86_INS_SYSCALL: case X86_INS_SYSENTER: case X86_INS_SYSEXIT:
	case X86_INS_SYSRET: case X86_INS_INT: case X86_INS_INT1:
	case X86_INS_INT3: case X86_INS_INTO: case X86_INS_UD2:
	case X86_INS_UD2B: case X86_INS_HLT: case X86_INS_IRET:
	case X86_INS_IRETD: case X86_INS_IRETQ:
	case X86_INS_IN: case X86_INS_INSB: case X86_INS_INSW:
	case X86_INS_INSD: case X86_INS_OUT: case X86_INS_OUTSB:
	case X86_INS_OUTSW: case X86_INS_OUTSD:
	case X86_INS_LJMP: case X86_INS_LCALL: case X86_INS_RETF:
	case X86_INS_RETFQ: case X86_INS_LDS: case X86_INS_LES:
	case X86_INS_LFS: case X86_INS_LGS: case X86_INS_LSS:
	case X86_INS_SWAPGS: case X86_INS_CLI: case X86_INS_STI:
	case X86_INS_POPF: case X86_INS_POPFD: case X86_INS_POPFQ:
	case X86_INS_XSAVE: case X86_INS_XSAVEC: case X86_INS_XSAVEOPT:
	case X86_INS_XSAVES: case X86_INS_XSAVE64: case X86_INS_XSAVEC64:
	case X86_INS_XSAVEOPT64: case X86_INS_XSAVES64:
	case X86_INS_XRSTOR: case X86_INS_XRSTOR64: case X86_INS_XRSTORS:
	case X86_INS_XRSTORS64: case X86_INS_FXSAVE: case X86_INS_FXSAVE64:
	case X86_INS_FXRSTOR: case X86_INS_FXRSTOR64:
	case X86_INS_XBEGIN: case X86_INS_XEND: case X86_INS_XABORT:
	case X86_INS_XTEST: case X86_INS_MONITOR: case X86_INS_MWAIT:
	case X86_INS_MOVBE:	/* #UD in Unicorn 2.0.1: on our CPU */
	case X86_INS_LAR: case X86_INS_LSL: case X86_INS_VERR:
	case X86_INS_VERW: case X86_INS_SGDT: case X86_INS_SIDT:
	case X86_INS_SLDT: case X86_INS_STR: case X86_INS_SMSW:
		return true;
	default:
		return false;
	}
}

/* A segment register operand (mov from/to sreg, push/pop fs/gs). */
static bool uses_sreg(const cs_x86 *x)
{
	for (unsigned int i = 0; i < x->op_count; i++) {
		x86_reg r = x->operands[i].reg;
		if (x->operands[i].type == X86_OP_REG &&
		    (r == X86_REG_CS || r == X86_REG_DS || r == X86_REG_ES ||
		     r == X86_REG_FS || r == X86_REG_GS || r == X86_REG_SS))
			return true;
	}
	return false;
}

/* Touches the x87/MMX/SSE state (the engine then syncs it). */
static bool touches_fpu(const cs_insn *ci)
{
	const cs_x86 *x = &ci->detail->x86;
	if (x->opcode[0] >= 0xd8 && x->opcode[0] <= 0xdf)
		return true;		/* x87 escape */
	for (unsigned int i = 0; i < ci->detail->groups_count; i++)
		if (ci->detail->groups[i] == X86_GRP_FPU)
			return true;
	return decode_is_simd(ci->detail) || ci->id == X86_INS_EMMS ||
	       ci->id == X86_INS_LDMXCSR || ci->id == X86_INS_STMXCSR ||
	       ci->id == X86_INS_FEMMS;
}

/* Flags the SDM leaves undefined that Capstone 4.0.2 does not say are:
 * lockstep must not compare them (Unicorn and the CPU differ there). */
static uint16_t more_undefined(const cs_insn *ci)
{
	enum { CF = 1, PF = 4, AF = 0x10, ZF = 0x40, SF = 0x80, OF = 0x800 };
	switch (ci->id) {
	case X86_INS_SHL: case X86_INS_SAL: case X86_INS_SHR:
	case X86_INS_SAR: case X86_INS_SHLD: case X86_INS_SHRD:
		return OF | AF;		/* OF: counts other than 1 */
	case X86_INS_ROL: case X86_INS_ROR: case X86_INS_RCL:
	case X86_INS_RCR:
		return OF;
	case X86_INS_AND: case X86_INS_OR: case X86_INS_XOR:
	case X86_INS_TEST:
		return AF;
	case X86_INS_MUL: case X86_INS_IMUL:
		return SF | ZF | AF | PF;
	case X86_INS_DIV: case X86_INS_IDIV:
		return CF | OF | SF | ZF | AF | PF;
	case X86_INS_BSF: case X86_INS_BSR:
		return CF | OF | SF | AF | PF;
	case X86_INS_BT: case X86_INS_BTS: case X86_INS_BTR:
	case X86_INS_BTC:
		return OF | SF | AF | PF;
	case X86_INS_LZCNT: case X86_INS_TZCNT: case X86_INS_POPCNT:
		return OF | SF | AF | PF;
	default:
		return 0;
	}
}

void allow_classify(struct insn *in, const cs_insn *ci, const uint8_t *buf,
		    size_t n, bool allow_x87)
{
	const cs_x86 *x = &ci->detail->x86;
	in->fpu = touches_fpu(ci);
	/* x87 arithmetic: QEMU's softfloat leaves the precision flag (PE)
	 * of the status word clear where the CPU sets it: not proven.  The
	 * control and status word moves compute nothing: QEMU keeps the
	 * 16 bits given (fldcw), and the status word the real CPU's
	 * arithmetic left, synced at each real step (fnstsw).  CPython
	 * sets and restores the precision around every float conversion:
	 * 120,000 real steps in a json run, each ending a slice. */
	bool x87 = !allow_x87 && x->opcode[0] >= 0xd8 && x->opcode[0] <= 0xdf &&
		   ci->id != X86_INS_FNSTCW && ci->id != X86_INS_FLDCW &&
		   ci->id != X86_INS_FNSTSW;
	in->emulable = !in->unknown && in->len && !x87 &&
		       !vector_encoded(buf, n < in->len ? n : in->len) &&
		       !denied(ci->id) && !uses_sreg(x);
	uint16_t u = 0;
	uint64_t f = x->eflags;
	if (f & X86_EFLAGS_UNDEFINED_CF) u |= 1u << 0;
	if (f & X86_EFLAGS_UNDEFINED_PF) u |= 1u << 2;
	if (f & X86_EFLAGS_UNDEFINED_AF) u |= 1u << 4;
	if (f & X86_EFLAGS_UNDEFINED_ZF) u |= 1u << 6;
	if (f & X86_EFLAGS_UNDEFINED_SF) u |= 1u << 7;
	if (f & X86_EFLAGS_UNDEFINED_OF) u |= 1u << 11;
	in->undef_flags = u | more_undefined(ci);
}
