/* The semantics table: what each x86-64 instruction really accesses.
 *
 * Keyed by Capstone 4.0.2 instruction id.  Every entry is decided from the
 * Intel SDM (and, where Cachegrind's VEX translation differs, from
 * valgrind 3.19's Lackey trace, as noted), never from Capstone's operand
 * access flags, which are wrong for many instructions (DESIGN.md).
 *
 * Most entries are "the explicit memory operand, with kind DST when it is
 * operand 0 (Intel order: the destination) and kind SRC otherwise, size
 * from the operand unless fixed here".  Instructions with implicit or
 * multiple accesses have their own class, handled in decode_build.c and decode_step.c.
 *
 * SIMD instructions not listed explicitly follow one rule (see
 * sem_lookup): a memory operand after operand 0 is a source, so a read of
 * the operand's size; a memory operand 0 (a store) must be listed. */
#include "decode.h"
#include "decode_private.h"

#include <capstone/capstone.h>

#define R ACC_READ
#define W ACC_WRITE
#define M ACC_MODIFY
#define P ACC_PREFETCH
#define NT ACC_NT_WRITE

#define E(id, ...) [X86_INS_##id] = { __VA_ARGS__ }
/* mov-like: destination written, source read */
#define MOV(id) E(id, SC_GEN, W, R)
/* read-modify-write of the destination; lock: read + modify (VEX) */
#define RMW(id) E(id, SC_GEN, M, R, SF_LOCK2)
/* shifts, rotates: never lockable */
#define SHF(id) E(id, SC_GEN, M, R)
/* only reads, wherever the memory operand is */
#define LD(id) E(id, SC_GEN, R, R)
/* only writes */
#define ST(id) E(id, SC_GEN, W, W)
/* no memory access at all (register-only, or an operand not accessed) */
#define NONE(id) E(id, SC_GEN, KIND_NONE, KIND_NONE)
#define LDSZ(id, sz) E(id, SC_GEN, R, R, .size = (sz))
#define STSZ(id, sz) E(id, SC_GEN, W, W, .size = (sz))
#define JCC(id) E(id, SC_GEN, R, R, .branch = BR_COND)

static const struct sem table[X86_INS_ENDING] = {
	/* integer moves */
	MOV(MOV), MOV(MOVABS), MOV(MOVBE), LD(MOVZX), LD(MOVSX), LD(MOVSXD),
	E(MOVNTI, SC_GEN, NT, R),
	LD(CMOVA), LD(CMOVAE), LD(CMOVB), LD(CMOVBE), LD(CMOVE), LD(CMOVG),
	LD(CMOVGE), LD(CMOVL), LD(CMOVLE), LD(CMOVNE), LD(CMOVNO),
	LD(CMOVNP), LD(CMOVNS), LD(CMOVO), LD(CMOVP), LD(CMOVS),
	ST(SETAE), ST(SETA), ST(SETBE), ST(SETB), ST(SETE), ST(SETGE),
	ST(SETG), ST(SETLE), ST(SETL), ST(SETNE), ST(SETNO), ST(SETNP),
	ST(SETNS), ST(SETO), ST(SETP), ST(SETS),

	/* integer arithmetic: a memory destination is read and written */
	RMW(ADD), RMW(OR), RMW(ADC), RMW(SBB), RMW(AND), RMW(SUB), RMW(XOR),
	RMW(INC), RMW(DEC), RMW(NEG), RMW(NOT), RMW(XADD),
	SHF(SHL), SHF(SAL), SHF(SHR), SHF(SAR), SHF(ROL), SHF(ROR), SHF(RCL),
	SHF(RCR), SHF(SHLD), SHF(SHRD),
	/* cmpxchg writes back even when unequal; VEX: one CAS, one M (Lackey) */
	E(CMPXCHG, SC_GEN, M, M), E(CMPXCHG8B, SC_GEN, M, M),
	E(CMPXCHG16B, SC_GEN, M, M, .size = 16),
	E(XCHG, SC_GEN, M, M, SF_XCHG),
	/* cmp/test only read, whatever Capstone says of test [m], imm */
	LD(CMP), LD(TEST), LD(MUL), LD(IMUL), LD(DIV), LD(IDIV),
	LD(BSF), LD(BSR), LD(TZCNT), LD(LZCNT), LD(POPCNT), LD(CRC32),
	LD(ANDN), LD(BEXTR), LD(BLSI), LD(BLSMSK), LD(BLSR), LD(BZHI),
	LD(PDEP), LD(PEXT), LD(SARX), LD(SHLX), LD(SHRX), LD(RORX), LD(MULX),
	LD(ADCX), LD(ADOX),
	NONE(BSWAP), NONE(CBW), NONE(CWDE), NONE(CDQE), NONE(CWD), NONE(CDQ),
	NONE(CQO), NONE(CLC), NONE(STC), NONE(CMC), NONE(CLD), NONE(STD),
	NONE(LAHF), NONE(SAHF),
	/* bt family: register offsets in SC_BT; immediate forms are plain */
	E(BT, SC_BT, R, R), E(BTS, SC_BT, M, R, SF_LOCK2),
	E(BTR, SC_BT, M, R, SF_LOCK2), E(BTC, SC_BT, M, R, SF_LOCK2),

	/* no access: lea computes, nop's operand is not touched */
	NONE(LEA), NONE(NOP), NONE(PAUSE), NONE(ENDBR64), NONE(ENDBR32),
	NONE(CPUID), NONE(RDTSC), NONE(RDTSCP), NONE(XGETBV), NONE(RDRAND),
	NONE(RDSEED), NONE(LFENCE), NONE(MFENCE), NONE(SFENCE), NONE(UD2),
	NONE(INT3), NONE(HLT), NONE(VZEROUPPER), NONE(VZEROALL), NONE(EMMS),
	NONE(XBEGIN), NONE(XEND), NONE(XABORT), NONE(XTEST),
	NONE(RDFSBASE), NONE(RDGSBASE), NONE(WRFSBASE), NONE(WRGSBASE),
	E(PREFETCHT0, SC_GEN, P, P), E(PREFETCHT1, SC_GEN, P, P),
	E(PREFETCHT2, SC_GEN, P, P), E(PREFETCHNTA, SC_GEN, P, P),
	E(PREFETCHW, SC_GEN, P, P), E(PREFETCH, SC_GEN, P, P),
	E(CLFLUSH, SC_GEN, P, P), E(CLFLUSHOPT, SC_GEN, P, P),
	E(CLWB, SC_GEN, P, P),

	/* stack */
	E(PUSH, SC_PUSH, R, R), E(POP, SC_POP, W, W),
	E(PUSHFQ, SC_PUSH), E(POPFQ, SC_POP),
	E(CALL, SC_CALL, R, R, .branch = BR_CALL),
	E(RET, SC_RET, .branch = BR_RET),
	E(LEAVE, SC_LEAVE), E(ENTER, SC_ENTER),

	/* control flow */
	E(JMP, SC_GEN, R, R, .branch = BR_JMP),
	JCC(JAE), JCC(JA), JCC(JBE), JCC(JB), JCC(JE), JCC(JGE), JCC(JG),
	JCC(JLE), JCC(JL), JCC(JNE), JCC(JNO), JCC(JNP), JCC(JNS), JCC(JO),
	JCC(JP), JCC(JS), JCC(JRCXZ), JCC(JECXZ), JCC(LOOP), JCC(LOOPE),
	JCC(LOOPNE),
	E(SYSCALL, SC_GEN, KIND_NONE, KIND_NONE, .branch = BR_OTHER),
	E(INT, SC_GEN, KIND_NONE, KIND_NONE, .branch = BR_OTHER),

	/* strings: element accesses in SC_STR (SSE movsd/cmpsd share ids
	 * with movsd/cmpsd strings: decode.c tells them apart by opcode) */
	E(MOVSB, SC_STR), E(MOVSW, SC_STR), MOV(MOVSD), E(MOVSQ, SC_STR),
	E(STOSB, SC_STR), E(STOSW, SC_STR), E(STOSD, SC_STR), E(STOSQ, SC_STR),
	E(LODSB, SC_STR), E(LODSW, SC_STR), E(LODSD, SC_STR), E(LODSQ, SC_STR),
	E(CMPSB, SC_STR), E(CMPSW, SC_STR), LD(CMPSD), E(CMPSQ, SC_STR),
	E(SCASB, SC_STR), E(SCASW, SC_STR), E(SCASD, SC_STR), E(SCASQ, SC_STR),
	E(XLATB, SC_XLAT),

	/* x87: loads, stores, environment images (32/64-bit mode sizes) */
	LD(FLD), LD(FILD), LD(FADD), LD(FIADD), LD(FSUB), LD(FSUBR),
	LD(FISUB), LD(FISUBR), LD(FMUL), LD(FIMUL), LD(FDIV), LD(FDIVR),
	LD(FIDIV), LD(FIDIVR), LD(FCOM), LD(FCOMP), LD(FICOM), LD(FICOMP),
	LD(FBLD),
	ST(FST), ST(FSTP), ST(FIST), ST(FISTP), ST(FISTTP), ST(FBSTP),
	LDSZ(FLDCW, 2), STSZ(FNSTCW, 2), STSZ(FNSTSW, 2),
	LDSZ(FLDENV, 28), STSZ(FNSTENV, 28), LDSZ(FRSTOR, 108),
	STSZ(FNSAVE, 108),
	NONE(FADDP), NONE(FSUBP), NONE(FSUBRP), NONE(FMULP), NONE(FDIVP),
	NONE(FDIVRP), NONE(FXCH), NONE(FCHS), NONE(FABS), NONE(FLDZ),
	NONE(FLD1), NONE(FLDPI), NONE(FLDL2E), NONE(FLDL2T), NONE(FLDLG2),
	NONE(FLDLN2), NONE(FUCOMI), NONE(FUCOMIP), NONE(FCOMI), NONE(FCOMIP),
	NONE(FUCOM), NONE(FUCOMP), NONE(FUCOMPP), NONE(FCOMPP), NONE(FTST),
	NONE(FXAM), NONE(FSQRT), NONE(FRNDINT), NONE(FSCALE), NONE(FPREM),
	NONE(FPREM1), NONE(F2XM1), NONE(FYL2X), NONE(FYL2XP1), NONE(FPATAN),
	NONE(FPTAN), NONE(FSIN), NONE(FCOS), NONE(FSINCOS), NONE(FXTRACT),
	NONE(FNCLEX), NONE(FNINIT), NONE(FFREE), NONE(FFREEP), NONE(FINCSTP),
	NONE(FDECSTP), NONE(WAIT), NONE(FCMOVB), NONE(FCMOVBE), NONE(FCMOVE),
	NONE(FCMOVNB), NONE(FCMOVNBE), NONE(FCMOVNE), NONE(FCMOVNU),
	NONE(FCMOVU),

	/* processor state images.  fxsave: 512 bytes by the SDM (VEX splits
	 * it into 18 stores of 464 bytes in all).  xsave*: the legacy area
	 * and header (576 bytes) plus the components requested in edx:eax
	 * and enabled in XCR0: standard format up to the end of the highest
	 * one, compacted format the sum of their sizes (CPUID 0xd.i).
	 * xrstor* use the standard extent (an upper bound for compacted
	 * images, whose layout is in memory).  Init-state optimisation of
	 * xsaveopt/xsavec is ignored: the whole extent counts. */
	STSZ(FXSAVE, 512), LDSZ(FXRSTOR, 512), STSZ(FXSAVE64, 512),
	LDSZ(FXRSTOR64, 512),
	STSZ(XSAVE, SZ_XSAVE), STSZ(XSAVEC, SZ_XSAVEC), STSZ(XSAVEOPT, SZ_XSAVE),
	STSZ(XSAVES, SZ_XSAVEC), LDSZ(XRSTOR, SZ_XSAVE), LDSZ(XRSTORS, SZ_XSAVE),
	STSZ(XSAVE64, SZ_XSAVE), STSZ(XSAVEC64, SZ_XSAVEC),
	STSZ(XSAVEOPT64, SZ_XSAVE), LDSZ(XRSTOR64, SZ_XSAVE),
	STSZ(STMXCSR, 4), LDSZ(LDMXCSR, 4), STSZ(VSTMXCSR, 4),
	LDSZ(VLDMXCSR, 4),

	/* SIMD moves: operand 0 in memory is a store (Capstone says read) */
	MOV(MOVD), MOV(MOVQ), MOV(MOVSS), MOV(MOVAPS), MOV(MOVAPD),
	MOV(MOVUPS), MOV(MOVUPD), MOV(MOVDQA), MOV(MOVDQU), MOV(MOVLPS),
	MOV(MOVLPD), MOV(MOVHPS), MOV(MOVHPD), MOV(MOVQ2DQ), MOV(MOVDQ2Q),
	MOV(VMOVD), MOV(VMOVQ), MOV(VMOVSS), MOV(VMOVSD), MOV(VMOVAPS),
	MOV(VMOVAPD), MOV(VMOVUPS), MOV(VMOVUPD), MOV(VMOVDQA), MOV(VMOVDQU),
	MOV(VMOVDQA32), MOV(VMOVDQA64), MOV(VMOVDQU8), MOV(VMOVDQU16),
	MOV(VMOVDQU32), MOV(VMOVDQU64), MOV(VMOVLPS), MOV(VMOVLPD),
	MOV(VMOVHPS), MOV(VMOVHPD),
	E(MOVNTDQ, SC_GEN, NT, R), E(MOVNTPS, SC_GEN, NT, R),
	E(MOVNTPD, SC_GEN, NT, R), E(MOVNTQ, SC_GEN, NT, R),
	E(MOVNTSS, SC_GEN, NT, R), E(MOVNTSD, SC_GEN, NT, R),
	E(VMOVNTDQ, SC_GEN, NT, R), E(VMOVNTPS, SC_GEN, NT, R),
	E(VMOVNTPD, SC_GEN, NT, R),
	LD(MOVNTDQA), LD(VMOVNTDQA), LD(LDDQU), LD(VLDDQU),
	/* extracts to memory are stores */
	MOV(PEXTRB), MOV(PEXTRW), MOV(PEXTRD), MOV(PEXTRQ), MOV(EXTRACTPS),
	MOV(VPEXTRB), MOV(VPEXTRW), MOV(VPEXTRD), MOV(VPEXTRQ),
	MOV(VEXTRACTPS), MOV(VEXTRACTI128), MOV(VEXTRACTF128),
	MOV(VEXTRACTI32X4), MOV(VEXTRACTI64X4), MOV(VEXTRACTF32X4),
	MOV(VEXTRACTF64X4),
	/* AVX-512 down-converting stores */
	MOV(VPMOVDB), MOV(VPMOVQB), MOV(VPMOVDW), MOV(VPMOVQW),
	MOV(VPMOVQD),
	/* gathers, scatters, masked moves: per element (decode_step.c) */
	E(VGATHERDPS, SC_GATHER, .esize = 4),
	E(VGATHERDPD, SC_GATHER, .esize = 8),
	E(VGATHERQPS, SC_GATHER, .esize = 4, .flags = SF_Q_INDEX),
	E(VGATHERQPD, SC_GATHER, .esize = 8, .flags = SF_Q_INDEX),
	E(VPGATHERDD, SC_GATHER, .esize = 4),
	E(VPGATHERDQ, SC_GATHER, .esize = 8),
	E(VPGATHERQD, SC_GATHER, .esize = 4, .flags = SF_Q_INDEX),
	E(VPGATHERQQ, SC_GATHER, .esize = 8, .flags = SF_Q_INDEX),
	E(VSCATTERDPS, SC_SCATTER, .esize = 4),
	E(VSCATTERDPD, SC_SCATTER, .esize = 8),
	E(VSCATTERQPS, SC_SCATTER, .esize = 4, .flags = SF_Q_INDEX),
	E(VSCATTERQPD, SC_SCATTER, .esize = 8, .flags = SF_Q_INDEX),
	E(VPSCATTERDD, SC_SCATTER, .esize = 4),
	E(VPSCATTERDQ, SC_SCATTER, .esize = 8),
	E(VPSCATTERQD, SC_SCATTER, .esize = 4, .flags = SF_Q_INDEX),
	E(VPSCATTERQQ, SC_SCATTER, .esize = 8, .flags = SF_Q_INDEX),
	E(VMASKMOVPS, SC_MASKMOV, .esize = 4),
	E(VMASKMOVPD, SC_MASKMOV, .esize = 8),
	E(VPMASKMOVD, SC_MASKMOV, .esize = 4),
	E(VPMASKMOVQ, SC_MASKMOV, .esize = 8),
	E(MASKMOVDQU, SC_MASKMOVDQU), E(VMASKMOVDQU, SC_MASKMOVDQU),
};

/* The SIMD group rule: instructions of these Capstone groups with a
 * memory source and no table entry read that operand. */
static const struct sem vector_read = { SC_GEN, KIND_UNKNOWN, R, SF_VECTOR, 0, 0, 0 };

const struct sem *sem_lookup(unsigned int id)
{
	if (id >= X86_INS_ENDING)
		return &table[X86_INS_INVALID];
	return &table[id];
}

const struct sem *sem_vector_rule(void)
{
	return &vector_read;
}
