/* Table-driven test of src/decode: instruction bytes (assembled with GNU
 * as, the encodings are facts) plus registers in, accesses, fetches and
 * branch outcomes out.  The expectations are worked out by hand from the
 * Intel SDM, and where Cachegrind's VEX translation differs from it, from
 * valgrind 3.19 Lackey --trace-mem=yes runs of the same instructions
 * (marked "Lackey").  No ptrace: a fake target serves the bytes and a
 * synthetic XSAVE image. */
#include "decode.h"

#include <cpuid.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

/* Register values used by the rows */
#define RBX 0x600000001000ull
#define RSP 0x7ffc00002000ull
#define RBP 0x7ffc00003000ull
#define RSI 0x500000000100ull
#define RDI 0x500000000800ull
#define RAX 0x600000004000ull
#define FSB 0x7f0000001000ull
#define GSB 0x7f0000009000ull

#define ZF 0x40ull

enum { NEED_NONE, NEED_AVX512, NEED_XCR0_AVX, NEED_XCR0_AVX512 };

struct exp_acc {
	uint8_t kind;
	uint64_t addr;
	uint32_t size;		/* 0 ends the list */
};

struct row {
	const char *what;
	uint8_t code[15];
	uint8_t code_len;
	struct user_regs_struct r;	/* rip is set to the row's pc */
	bool same_rip;			/* after the trap rip == pc (rep) */
	uint64_t after_off;		/* after rip = pc + after_off, if set */
	uint64_t after_eflags;
	uint8_t n_fetch;		/* 0 means 1 */
	bool pcrel;			/* acc[0].addr is relative to pc */
	struct exp_acc acc[17];
	uint8_t n_cond;
	bool cond[3];
	bool indirect;
	bool unknown;
	bool no_len;			/* undecodable: insn len 0 expected */
	uint8_t insn_len;		/* the first insn's length when code
					 * holds more (0: code_len) */
	int need;
};

#define CODE(...) .code = { __VA_ARGS__ }, .code_len = sizeof((uint8_t[]){ __VA_ARGS__ })
#define R_(a, s) { ACC_READ, (a), (s) }
#define W_(a, s) { ACC_WRITE, (a), (s) }
#define M_(a, s) { ACC_MODIFY, (a), (s) }
#define P_(a, s) { ACC_PREFETCH, (a), (s) }
#define NT_(a, s) { ACC_NT_WRITE, (a), (s) }
#define REGS(...) .r = { .rsp = RSP, .rbp = RBP, __VA_ARGS__ }

static const struct row rows[] = {
	/* CET shadow-stack instructions (Capstone 4.0.2 rejects them; libgcc's
	 * unwinder runs them): register forms, no data access (SDM: RDSSP
	 * reads the SSP register, INCSSP pops the shadow stack only) */
	{ "rdsspq rax", CODE(0xf3, 0x48, 0x0f, 0x1e, 0xc8), REGS(.rax = 0) },
	{ "incsspq rax", CODE(0xf3, 0x48, 0x0f, 0xae, 0xe8), REGS(.rax = 1) },
	/* explicit loads and stores of every width */
	{ "mov al,[rbx]", CODE(0x8a, 0x03), REGS(.rbx = RBX), .acc = { R_(RBX, 1) } },
	{ "mov ax,[rbx+2]", CODE(0x66, 0x8b, 0x43, 0x02), REGS(.rbx = RBX),
	  .acc = { R_(RBX + 2, 2) } },
	{ "mov eax,[rbx+rcx*4+8]", CODE(0x8b, 0x44, 0x8b, 0x08), REGS(.rbx = RBX, .rcx = 3),
	  .acc = { R_(RBX + 12 + 8, 4) } },
	/* negative displacement and index 1 */
	{ "mov al,[rbx+rcx-8]", CODE(0x8a, 0x44, 0x0b, 0xf8), REGS(.rbx = RBX, .rcx = 2),
	  .acc = { R_(RBX - 6, 1) } },
	{ "mov [rbx],rax", CODE(0x48, 0x89, 0x03), REGS(.rbx = RBX), .acc = { W_(RBX, 8) } },
	{ "movzx eax,word [rbx]", CODE(0x0f, 0xb7, 0x03), REGS(.rbx = RBX), .acc = { R_(RBX, 2) } },
	/* read-modify-write of one location: one ACC_MODIFY (one Dr) */
	{ "add [rbx],eax", CODE(0x01, 0x03), REGS(.rbx = RBX), .acc = { M_(RBX, 4) } },
	{ "inc byte [rbx]", CODE(0xfe, 0x03), REGS(.rbx = RBX), .acc = { M_(RBX, 1) } },
	{ "neg qword [rbx]", CODE(0x48, 0xf7, 0x1b), REGS(.rbx = RBX), .acc = { M_(RBX, 8) } },
	{ "shl dword [rbx],1", CODE(0xd1, 0x23), REGS(.rbx = RBX), .acc = { M_(RBX, 4) } },
	{ "adc [rbx],rax", CODE(0x48, 0x11, 0x03), REGS(.rbx = RBX), .acc = { M_(RBX, 8) } },
	{ "xor [rbx],ax", CODE(0x66, 0x31, 0x03), REGS(.rbx = RBX), .acc = { M_(RBX, 2) } },
	/* setcc only writes */
	{ "sete [rbx]", CODE(0x0f, 0x94, 0x03), REGS(.rbx = RBX), .acc = { W_(RBX, 1) } },
	{ "cmp [rbx],eax", CODE(0x39, 0x03), REGS(.rbx = RBX), .acc = { R_(RBX, 4) } },
	/* Capstone flags test [m],imm read-write: it only reads */
	{ "test byte [rbx],1", CODE(0xf6, 0x03, 0x01), REGS(.rbx = RBX), .acc = { R_(RBX, 1) } },
	/* Lackey: lock add = load, then CAS: L then M.  Cachegrind: VEX's
	 * casLE adds Exit(CAS failed -> this insn), one Bc, not taken
	 * (per-line Bc of lock add/or/adc/sbb/and/sub/xor/inc/dec/not/neg/
	 * xadd/bts/btr/btc and xchg [m] under cachegrind --branch-sim=yes:
	 * one per execution; plain add [m], xadd, bts, inc: none) */
	{ "lock add [rbx],eax", CODE(0xf0, 0x01, 0x03), REGS(.rbx = RBX),
	  .acc = { R_(RBX, 4), M_(RBX, 4) }, .n_cond = 1, .cond = { false } },
	/* Lackey: L 8, M 8 for lock xadd, lock inc, lock bts imm */
	{ "lock xadd [rbx],rcx", CODE(0xf0, 0x48, 0x0f, 0xc1, 0x0b), REGS(.rbx = RBX),
	  .acc = { R_(RBX, 8), M_(RBX, 8) }, .n_cond = 1, .cond = { false } },
	{ "lock xadd [rbx],cl", CODE(0xf0, 0x0f, 0xc0, 0x0b), REGS(.rbx = RBX),
	  .acc = { R_(RBX, 1), M_(RBX, 1) }, .n_cond = 1, .cond = { false } },
	{ "lock inc qword [rbx]", CODE(0xf0, 0x48, 0xff, 0x03), REGS(.rbx = RBX),
	  .acc = { R_(RBX, 8), M_(RBX, 8) }, .n_cond = 1, .cond = { false } },
	{ "lock neg word [rbx]", CODE(0xf0, 0x66, 0xf7, 0x1b), REGS(.rbx = RBX),
	  .acc = { R_(RBX, 2), M_(RBX, 2) }, .n_cond = 1, .cond = { false } },
	/* GNU as puts 66 before f0 */
	{ "lock neg word [rbx] (66 f0)", CODE(0x66, 0xf0, 0xf7, 0x1b), REGS(.rbx = RBX),
	  .acc = { R_(RBX, 2), M_(RBX, 2) }, .n_cond = 1, .cond = { false } },
	{ "lock and byte [rbx],1", CODE(0xf0, 0x80, 0x23, 0x01), REGS(.rbx = RBX),
	  .acc = { R_(RBX, 1), M_(RBX, 1) }, .n_cond = 1, .cond = { false } },
	{ "lock bts qword [rbx],3", CODE(0xf0, 0x48, 0x0f, 0xba, 0x2b, 0x03), REGS(.rbx = RBX),
	  .acc = { R_(RBX, 8), M_(RBX, 8) }, .n_cond = 1, .cond = { false } },
	{ "xadd [rbx],eax", CODE(0x0f, 0xc1, 0x03), REGS(.rbx = RBX), .acc = { M_(RBX, 4) } },
	/* Lackey: xchg (implicitly locked) = load, then CAS */
	{ "xchg [rbx],rcx", CODE(0x48, 0x87, 0x0b), REGS(.rbx = RBX),
	  .acc = { R_(RBX, 8), M_(RBX, 8) }, .n_cond = 1, .cond = { false } },
	{ "lock xchg [rbx],rcx", CODE(0xf0, 0x48, 0x87, 0x0b), REGS(.rbx = RBX),
	  .acc = { R_(RBX, 8), M_(RBX, 8) }, .n_cond = 1, .cond = { false } },
	/* 8- and 16-bit xchg: one Bc each too (Cachegrind) */
	{ "xchg [rbx],cl", CODE(0x86, 0x0b), REGS(.rbx = RBX),
	  .acc = { R_(RBX, 1), M_(RBX, 1) }, .n_cond = 1, .cond = { false } },
	{ "xchg [rbx],cx", CODE(0x66, 0x87, 0x0b), REGS(.rbx = RBX),
	  .acc = { R_(RBX, 2), M_(RBX, 2) }, .n_cond = 1, .cond = { false } },
	/* registers only: no CAS */
	{ "xchg ebx,ecx", CODE(0x87, 0xcb), REGS(.rbx = RBX) },
	/* Capstone says read only; cmpxchg always writes (SDM): one CAS */
	{ "cmpxchg [rbx],ecx", CODE(0x0f, 0xb1, 0x0b), REGS(.rbx = RBX), .acc = { M_(RBX, 4) } },
	{ "lock cmpxchg [rbx],rcx", CODE(0xf0, 0x48, 0x0f, 0xb1, 0x0b), REGS(.rbx = RBX),
	  .acc = { M_(RBX, 8) } },
	/* cmpxchg* (locked or not): one CAS and no restart exit (Cachegrind:
	 * 0 Bc on their lines; Lackey: one M) */
	{ "cmpxchg16b [rbx]", CODE(0x48, 0x0f, 0xc7, 0x0b), REGS(.rbx = RBX),
	  .acc = { M_(RBX, 16) } },
	{ "lock cmpxchg16b [rbx]", CODE(0xf0, 0x48, 0x0f, 0xc7, 0x0b), REGS(.rbx = RBX),
	  .acc = { M_(RBX, 16) } },
	{ "lock cmpxchg8b [rbx]", CODE(0xf0, 0x0f, 0xc7, 0x0b), REGS(.rbx = RBX),
	  .acc = { M_(RBX, 8) } },
	{ "cmpxchg8b [rbx]", CODE(0x0f, 0xc7, 0x0b), REGS(.rbx = RBX), .acc = { M_(RBX, 8) } },

	/* stores Capstone 4.0.2 reports as reads */
	{ "movups [rbx],xmm0", CODE(0x0f, 0x11, 0x03), REGS(.rbx = RBX), .acc = { W_(RBX, 16) } },
	{ "movdqa [rbx],xmm1", CODE(0x66, 0x0f, 0x7f, 0x0b), REGS(.rbx = RBX),
	  .acc = { W_(RBX, 16) } },
	{ "vmovdqu [rbx],ymm0", CODE(0xc5, 0xfe, 0x7f, 0x03), REGS(.rbx = RBX),
	  .acc = { W_(RBX, 32) } },
	/* a 32-byte load is one access of 32 bytes */
	{ "vmovdqu ymm0,[rbx]", CODE(0xc5, 0xfe, 0x6f, 0x03), REGS(.rbx = RBX),
	  .acc = { R_(RBX, 32) } },
	{ "vmovdqa [rbx],ymm0", CODE(0xc5, 0xfd, 0x7f, 0x03), REGS(.rbx = RBX),
	  .acc = { W_(RBX, 32) } },
	{ "vmovdqu64 [rbx],zmm0", CODE(0x62, 0xf1, 0xfe, 0x48, 0x7f, 0x03), REGS(.rbx = RBX),
	  .acc = { W_(RBX, 64) } },
	/* k-masked store: one access of the full vector (our rule) */
	{ "vmovdqu64 [rbx]{k1},zmm0", CODE(0x62, 0xf1, 0xfe, 0x49, 0x7f, 0x03),
	  REGS(.rbx = RBX), .acc = { W_(RBX, 64) } },
	{ "vmovdqu8 zmm4,[rax]", CODE(0x62, 0xf1, 0x7f, 0x48, 0x6f, 0x20), REGS(.rax = RAX),
	  .acc = { R_(RAX, 64) } },
	{ "vmovups [rbx],ymm0", CODE(0xc5, 0xfc, 0x11, 0x03), REGS(.rbx = RBX),
	  .acc = { W_(RBX, 32) } },
	{ "movntdq [rbx],xmm0", CODE(0x66, 0x0f, 0xe7, 0x03), REGS(.rbx = RBX),
	  .acc = { NT_(RBX, 16) } },
	{ "vmovntdq [rbx],ymm0", CODE(0xc5, 0xfd, 0xe7, 0x03), REGS(.rbx = RBX),
	  .acc = { NT_(RBX, 32) } },
	{ "movnti [rbx],eax", CODE(0x0f, 0xc3, 0x03), REGS(.rbx = RBX), .acc = { NT_(RBX, 4) } },
	{ "movq [rbx],xmm0", CODE(0x66, 0x0f, 0xd6, 0x03), REGS(.rbx = RBX), .acc = { W_(RBX, 8) } },
	{ "vmovq [rbx],xmm0", CODE(0xc5, 0xf9, 0xd6, 0x03), REGS(.rbx = RBX), .acc = { W_(RBX, 8) } },
	{ "vmovd [rbx],xmm0", CODE(0xc5, 0xf9, 0x7e, 0x03), REGS(.rbx = RBX), .acc = { W_(RBX, 4) } },
	{ "vmovss [rbx],xmm0", CODE(0xc5, 0xfa, 0x11, 0x03), REGS(.rbx = RBX), .acc = { W_(RBX, 4) } },
	{ "vmovsd [rbx],xmm0", CODE(0xc5, 0xfb, 0x11, 0x03), REGS(.rbx = RBX), .acc = { W_(RBX, 8) } },
	{ "pextrq [rbx],xmm0,1", CODE(0x66, 0x48, 0x0f, 0x3a, 0x16, 0x03, 0x01), REGS(.rbx = RBX),
	  .acc = { W_(RBX, 8) } },
	{ "pextrb [rbx],xmm0,1", CODE(0x66, 0x0f, 0x3a, 0x14, 0x03, 0x01), REGS(.rbx = RBX),
	  .acc = { W_(RBX, 1) } },
	{ "movhps [rbx],xmm0", CODE(0x0f, 0x17, 0x03), REGS(.rbx = RBX), .acc = { W_(RBX, 8) } },
	{ "movlps [rbx],xmm0", CODE(0x0f, 0x13, 0x03), REGS(.rbx = RBX), .acc = { W_(RBX, 8) } },
	{ "vextracti128 [rbx],ymm0,1", CODE(0xc4, 0xe3, 0x7d, 0x39, 0x03, 0x01), REGS(.rbx = RBX),
	  .acc = { W_(RBX, 16) } },
	/* x87: m80, m32, m64 */
	{ "fstp tbyte [rbx+16]", CODE(0xdb, 0x7b, 0x10), REGS(.rbx = RBX),
	  .acc = { W_(RBX + 16, 10) } },
	{ "fistp dword [rbx]", CODE(0xdb, 0x1b), REGS(.rbx = RBX), .acc = { W_(RBX, 4) } },
	{ "fisttp qword [rbx]", CODE(0xdd, 0x0b), REGS(.rbx = RBX), .acc = { W_(RBX, 8) } },
	{ "fld tbyte [rbx]", CODE(0xdb, 0x2b), REGS(.rbx = RBX), .acc = { R_(RBX, 10) } },
	{ "fild qword [rbx]", CODE(0xdf, 0x2b), REGS(.rbx = RBX), .acc = { R_(RBX, 8) } },
	{ "fst dword [rbx]", CODE(0xd9, 0x13), REGS(.rbx = RBX), .acc = { W_(RBX, 4) } },
	{ "stmxcsr [rbx]", CODE(0x0f, 0xae, 0x1b), REGS(.rbx = RBX), .acc = { W_(RBX, 4) } },
	{ "fnstcw [rbx]", CODE(0xd9, 0x3b), REGS(.rbx = RBX), .acc = { W_(RBX, 2) } },
	{ "fldcw [rbx]", CODE(0xd9, 0x2b), REGS(.rbx = RBX), .acc = { R_(RBX, 2) } },
	{ "fnstsw [rbx]", CODE(0xdd, 0x3b), REGS(.rbx = RBX), .acc = { W_(RBX, 2) } },
	/* 64-bit mode environment 28 bytes, full state 108 (SDM, Lackey) */
	{ "fnstenv [rbx]", CODE(0xd9, 0x33), REGS(.rbx = RBX), .acc = { W_(RBX, 28) } },
	{ "fldenv [rbx]", CODE(0xd9, 0x23), REGS(.rbx = RBX), .acc = { R_(RBX, 28) } },
	{ "fnsave [rbx]", CODE(0xdd, 0x33), REGS(.rbx = RBX), .acc = { W_(RBX, 108) } },
	{ "frstor [rbx]", CODE(0xdd, 0x23), REGS(.rbx = RBX), .acc = { R_(RBX, 108) } },
	{ "movbe [rbx],eax", CODE(0x0f, 0x38, 0xf1, 0x03), REGS(.rbx = RBX), .acc = { W_(RBX, 4) } },
	{ "movbe eax,[rbx]", CODE(0x0f, 0x38, 0xf0, 0x03), REGS(.rbx = RBX), .acc = { R_(RBX, 4) } },
	/* state images: fxsave, fxrstor, xsave and xrstor as VEX runs them
	 * are check_vex_xsave's; xsavec (which VEX does not run) is one
	 * access over its area, compacted, eax=0xe6 (SSE, AVX, opmask, ZMM_Hi256,
	 * Hi16_ZMM): 576 + 256 + 64 + 512 + 1024 */
	{ "xsavec [rbx] eax=0xe6", CODE(0x0f, 0xc7, 0x23), REGS(.rbx = RBX, .rax = 0xe6),
	  .acc = { W_(RBX, 2432) }, .need = NEED_XCR0_AVX512 },

	/* stack traffic, 8 bytes */
	{ "push rax", CODE(0x50), REGS(.rax = 1), .acc = { W_(RSP - 8, 8) } },
	{ "push 0x12", CODE(0x6a, 0x12), REGS(.rax = 1), .acc = { W_(RSP - 8, 8) } },
	/* Lackey: load [m], then store at rsp-8 */
	{ "push [rbx]", CODE(0xff, 0x33), REGS(.rbx = RBX),
	  .acc = { R_(RBX, 8), W_(RSP - 8, 8) } },
	{ "pop rax", CODE(0x58), REGS(.rax = 1), .acc = { R_(RSP, 8) } },
	{ "pop [rbx+8]", CODE(0x8f, 0x43, 0x08), REGS(.rbx = RBX),
	  .acc = { R_(RSP, 8), W_(RBX + 8, 8) } },
	/* SDM POP: an rsp base is taken after the increment */
	{ "pop [rsp+8]", CODE(0x8f, 0x44, 0x24, 0x08), REGS(.rbx = RBX),
	  .acc = { R_(RSP, 8), W_(RSP + 16, 8) } },
	{ "pushfq", CODE(0x9c), REGS(.rax = 1), .acc = { W_(RSP - 8, 8) } },
	/* pop reg whose value the next instructions overwrite before any
	 * read: VEX's iropt drops the Put and then the load (libsqlite3's
	 * sqlite3Select: `pop rax; mov eax, 0x40`, Lackey shows no load) */
	{ "pop rax; mov eax,0x40", CODE(0x58, 0xb8, 0x40, 0x00, 0x00, 0x00), REGS(.rax = 1),
	  .after_off = 1, .insn_len = 1 },
	{ "pop rdx; mov rdi,rbp; mov edx,0x80", CODE(0x5a, 0x48, 0x89, 0xef, 0xba, 0x80, 0, 0, 0),
	  REGS(.rax = 1), .after_off = 1, .insn_len = 1 },
	/* still live: read first, partial write, a branch, rbp */
	{ "pop rax; add rax,1", CODE(0x58, 0x48, 0x83, 0xc0, 0x01), REGS(.rax = 1),
	  .after_off = 1, .insn_len = 1, .acc = { R_(RSP, 8) } },
	{ "pop rax; mov al,1", CODE(0x58, 0xb0, 0x01), REGS(.rax = 1),
	  .after_off = 1, .insn_len = 1, .acc = { R_(RSP, 8) } },
	{ "pop rax; mov ax,1", CODE(0x58, 0x66, 0xb8, 0x01, 0x00), REGS(.rax = 1),
	  .after_off = 1, .insn_len = 1, .acc = { R_(RSP, 8) } },
	{ "pop rax; je; mov eax,1", CODE(0x58, 0x74, 0x00, 0xb8, 0x01, 0, 0, 0), REGS(.rax = 1),
	  .after_off = 1, .insn_len = 1, .acc = { R_(RSP, 8) } },
	{ "pop rax; mov ecx,[rax]", CODE(0x58, 0x8b, 0x08, 0xb8, 0x01, 0, 0, 0), REGS(.rax = 1),
	  .after_off = 1, .insn_len = 1, .acc = { R_(RSP, 8) } },
	{ "pop rbp; mov ebp,1", CODE(0x5d, 0xbd, 0x01, 0, 0, 0), REGS(.rax = 1),
	  .after_off = 1, .insn_len = 1, .acc = { R_(RSP, 8) } },
	{ "popfq", CODE(0x9d), REGS(.rax = 1), .acc = { R_(RSP, 8) } },
	/* the same for a plain load into a register (tests/emulate/lean.c:
	 * `cmovz rax, [m]; movzx eax, [m']`, Cachegrind counts no read) */
	{ "mov rax,[rbx]; mov eax,5", CODE(0x48, 0x8b, 0x03, 0xb8, 5, 0, 0, 0),
	  REGS(.rbx = RBX), .after_off = 3, .insn_len = 3 },
	{ "cmovz rax,[rbx]; movzx eax,[rbx]", CODE(0x48, 0x0f, 0x44, 0x03, 0x0f, 0xb6, 0x03),
	  REGS(.rbx = RBX), .after_off = 4, .insn_len = 4 },
	/* ...but VEX keeps every register write before a CAS, a dirty
	 * helper or a call (their IR dumps iropt's environment) */
	{ "mov rax,[rbx]; lock inc [rcx]; mov eax,1",
	  CODE(0x48, 0x8b, 0x03, 0xf0, 0x48, 0xff, 0x01, 0xb8, 1, 0, 0, 0),
	  REGS(.rbx = RBX), .after_off = 3, .insn_len = 3, .acc = { R_(RBX, 8) } },
	{ "mov rax,[rbx]; cpuid; mov eax,1", CODE(0x48, 0x8b, 0x03, 0x0f, 0xa2, 0xb8, 1, 0, 0, 0),
	  REGS(.rbx = RBX), .after_off = 3, .insn_len = 3, .acc = { R_(RBX, 8) } },
	{ "add rax,[rbx]; mov eax,1", CODE(0x48, 0x03, 0x03, 0xb8, 1, 0, 0, 0),
	  REGS(.rbx = RBX), .after_off = 3, .insn_len = 3, .acc = { R_(RBX, 8) } },
	/* direct call: return address, no branch event */
	{ "call rel32", CODE(0xe8, 0xfb, 0x00, 0x00, 0x00), REGS(.rax = 1),
	  .after_off = 0x100, .acc = { W_(RSP - 8, 8) } },
	{ "call rax", CODE(0xff, 0xd0), REGS(.rax = 0x401234), .after_off = 0x777,
	  .acc = { W_(RSP - 8, 8) }, .indirect = true },
	/* Lackey: load the target, then push */
	{ "call [rbx]", CODE(0xff, 0x13), REGS(.rbx = RBX), .after_off = 0x999,
	  .acc = { R_(RBX, 8), W_(RSP - 8, 8) }, .indirect = true },
	{ "ret", CODE(0xc3), REGS(.rax = 1), .after_off = 0x55, .acc = { R_(RSP, 8) } },
	{ "ret 8", CODE(0xc2, 0x08, 0x00), REGS(.rax = 1), .after_off = 0x55,
	  .acc = { R_(RSP, 8) } },
	/* leave: rsp = rbp, pop rbp */
	{ "leave", CODE(0xc9), REGS(.rax = 1), .acc = { R_(RBP, 8) } },
	{ "enter 16,0", CODE(0xc8, 0x10, 0x00, 0x00), REGS(.rax = 1),
	  .acc = { W_(RSP - 8, 8) } },
	/* SDM ENTER level 2: push rbp; push [rbp-8]; push frame temp */
	{ "enter 16,2", CODE(0xc8, 0x10, 0x00, 0x02), REGS(.rax = 1),
	  .acc = { W_(RSP - 8, 8), R_(RBP - 8, 8), W_(RSP - 16, 8), W_(RSP - 24, 8) } },

	/* rep strings.  VEX: Exit(rcx == 0 -> next insn), the element, and
	 * for repe/repne Exit(cond -> this insn).  Cachegrind (cg_main.c)
	 * records an exit to the fall through as inverted, taken = NOT
	 * guard, so the first outcome is taken iff the count is NOT zero; the
	 * second is taken iff the repeat condition holds.  (These rows were
	 * re-derived from that rule: an earlier version had the first
	 * outcome's sense reversed, which valgrind's Bcm on tests/progs/rep.c
	 * showed wrong.)  Count 0: one fetch, nothing accessed, not taken. */
	{ "rep movsb rcx=0", CODE(0xf3, 0xa4), REGS(.rsi = RSI, .rdi = RDI, .rcx = 0),
	  .n_cond = 1, .cond = { false } },
	/* count 1: taken (rcx != 0), one element; finished, so one more
	 * execution (fetch 2, Lackey: I L S I) with rcx == 0: not taken */
	{ "rep movsb rcx=1", CODE(0xf3, 0xa4), REGS(.rsi = RSI, .rdi = RDI, .rcx = 1),
	  .n_fetch = 2, .acc = { R_(RSI, 1), W_(RDI, 1) }, .n_cond = 2, .cond = { true, false } },
	/* mid-loop: rip stays */
	{ "rep movsb mid", CODE(0xf3, 0xa4), REGS(.rsi = RSI, .rdi = RDI, .rcx = 5),
	  .same_rip = true, .acc = { R_(RSI, 1), W_(RDI, 1) }, .n_cond = 1, .cond = { true } },
	{ "rep stosq rcx=0", CODE(0xf3, 0x48, 0xab), REGS(.rdi = RDI, .rcx = 0),
	  .n_cond = 1, .cond = { false } },
	{ "rep stosq rcx=1", CODE(0xf3, 0x48, 0xab), REGS(.rdi = RDI, .rcx = 1),
	  .n_fetch = 2, .acc = { W_(RDI, 8) }, .n_cond = 2, .cond = { true, false } },
	{ "rep stosq mid", CODE(0xf3, 0x48, 0xab), REGS(.rdi = RDI, .rcx = 3), .same_rip = true,
	  .acc = { W_(RDI, 8) }, .n_cond = 1, .cond = { true } },
	/* repe cmpsb: Lackey loads [rdi] before [rsi] */
	{ "repe cmpsb rcx=0", CODE(0xf3, 0xa6), REGS(.rsi = RSI, .rdi = RDI, .rcx = 0),
	  .n_cond = 1, .cond = { false } },
	/* count 1, equal (ZF=1): count exit taken, repeat condition held
	 * (taken), rcx hit 0: the extra execution's count exit not taken */
	{ "repe cmpsb rcx=1 equal", CODE(0xf3, 0xa6), REGS(.rsi = RSI, .rdi = RDI, .rcx = 1),
	  .after_eflags = ZF, .n_fetch = 2, .acc = { R_(RDI, 1), R_(RSI, 1) },
	  .n_cond = 3, .cond = { true, true, false } },
	/* mid-loop, equal: goes round again */
	{ "repe cmpsb mid equal", CODE(0xf3, 0xa6), REGS(.rsi = RSI, .rdi = RDI, .rcx = 7),
	  .same_rip = true, .after_eflags = ZF, .acc = { R_(RDI, 1), R_(RSI, 1) },
	  .n_cond = 2, .cond = { true, true } },
	/* mid-loop, unequal: leaves without the extra execution */
	{ "repe cmpsb mid unequal", CODE(0xf3, 0xa6), REGS(.rsi = RSI, .rdi = RDI, .rcx = 7),
	  .after_eflags = 0, .acc = { R_(RDI, 1), R_(RSI, 1) },
	  .n_cond = 2, .cond = { true, false } },
	{ "repne scasb rcx=0", CODE(0xf2, 0xae), REGS(.rdi = RDI, .rcx = 0),
	  .n_cond = 1, .cond = { false } },
	/* count 1, no match (ZF=0): condition held, rcx hit 0: extra */
	{ "repne scasb rcx=1 nomatch", CODE(0xf2, 0xae), REGS(.rdi = RDI, .rcx = 1),
	  .after_eflags = 0, .n_fetch = 2, .acc = { R_(RDI, 1) },
	  .n_cond = 3, .cond = { true, true, false } },
	/* count 1, match: Lackey shows no second I */
	{ "repne scasb rcx=1 match", CODE(0xf2, 0xae), REGS(.rdi = RDI, .rcx = 1),
	  .after_eflags = ZF, .acc = { R_(RDI, 1) }, .n_cond = 2, .cond = { true, false } },
	{ "repne scasb mid", CODE(0xf2, 0xae), REGS(.rdi = RDI, .rcx = 9), .same_rip = true,
	  .after_eflags = 0, .acc = { R_(RDI, 1) }, .n_cond = 2, .cond = { true, true } },
	/* addr32: the count is ecx (0 here, though rcx is not) */
	{ "addr32 rep stosb ecx=0", CODE(0x67, 0xf3, 0xaa),
	  REGS(.rdi = RDI, .rcx = 0x100000000ull), .n_cond = 1, .cond = { false } },
	/* addr32: edi, truncated */
	{ "addr32 rep stosb ecx=2", CODE(0x67, 0xf3, 0xaa),
	  REGS(.rdi = 0x100001000ull, .rcx = 0x2), .same_rip = true,
	  .acc = { W_(0x1000, 1) }, .n_cond = 1, .cond = { true } },
	/* addr32, ecx = 1 with rcx's upper half set: finishes (ecx hits 0) */
	{ "addr32 rep stosb ecx=1", CODE(0x67, 0xf3, 0xaa),
	  REGS(.rdi = 0x100001000ull, .rcx = 0x700000001ull), .n_fetch = 2,
	  .acc = { W_(0x1000, 1) }, .n_cond = 2, .cond = { true, false } },
	/* non-rep strings: plain instructions */
	{ "movsb", CODE(0xa4), REGS(.rsi = RSI, .rdi = RDI), .acc = { R_(RSI, 1), W_(RDI, 1) } },
	{ "movsq", CODE(0x48, 0xa5), REGS(.rsi = RSI, .rdi = RDI),
	  .acc = { R_(RSI, 8), W_(RDI, 8) } },
	{ "lodsd", CODE(0xad), REGS(.rsi = RSI, .rdi = RDI), .acc = { R_(RSI, 4) } },
	{ "stosw", CODE(0x66, 0xab), REGS(.rsi = RSI, .rdi = RDI), .acc = { W_(RDI, 2) } },
	{ "scasq", CODE(0x48, 0xaf), REGS(.rsi = RSI, .rdi = RDI), .acc = { R_(RDI, 8) } },
	{ "cmpsq", CODE(0x48, 0xa7), REGS(.rsi = RSI, .rdi = RDI),
	  .acc = { R_(RDI, 8), R_(RSI, 8) } },

	/* addressing: rip-relative is the next instruction + disp */
	{ "mov eax,[rip+0x100]", CODE(0x8b, 0x05, 0x00, 0x01, 0x00, 0x00), REGS(.rax = 1),
	  .pcrel = true, .acc = { R_(6 + 0x100, 4) } },
	{ "mov rax,fs:[0x28]", CODE(0x64, 0x48, 0x8b, 0x04, 0x25, 0x28, 0x00, 0x00, 0x00),
	  REGS(.fs_base = FSB), .acc = { R_(FSB + 0x28, 8) } },
	{ "mov rax,gs:[rbx]", CODE(0x65, 0x48, 0x8b, 0x03), REGS(.gs_base = GSB, .rbx = 0x40),
	  .acc = { R_(GSB + 0x40, 8) } },
	/* addr32: eax + ebx wraps at 32 bits */
	{ "mov eax,[eax+ebx]", CODE(0x67, 0x8b, 0x04, 0x18),
	  REGS(.rax = 0xabcd0000fffffff0ull, .rbx = 0x20), .acc = { R_(0x10, 4) } },
	{ "mov eax,[eip+0x100]", CODE(0x67, 0x8b, 0x05, 0x00, 0x01, 0x00, 0x00), REGS(.rax = 1),
	  .pcrel = true, .acc = { R_(7 + 0x100, 4) } },

	/* bt [m], reg: Lackey shows one byte at m + (offset >> 3), the
	 * offset signed in the operand size: -70 >> 3 = -9 */
	{ "bt [rbx],rax -70", CODE(0x48, 0x0f, 0xa3, 0x03), REGS(.rbx = RBX, .rax = (uint64_t)-70),
	  .acc = { R_(RBX - 9, 1) } },
	{ "bts [rbx],rax 70", CODE(0x48, 0x0f, 0xab, 0x03), REGS(.rbx = RBX, .rax = 70),
	  .acc = { M_(RBX + 8, 1) } },
	/* eax = -40 as 32 bits (upper half of rax clear): byte -5 */
	{ "bt [rbx],eax -40", CODE(0x0f, 0xa3, 0x03), REGS(.rbx = RBX, .rax = 0xffffffd8ull),
	  .acc = { R_(RBX - 5, 1) } },
	{ "btc [rbx],ax 20", CODE(0x66, 0x0f, 0xbb, 0x03), REGS(.rbx = RBX, .rax = 0x10014),
	  .acc = { M_(RBX + 2, 1) } },
	/* ax = 0xfff0 = -16: byte -2 */
	{ "btc [rbx],ax -16", CODE(0x66, 0x0f, 0xbb, 0x03), REGS(.rbx = RBX, .rax = 0xfff0),
	  .acc = { M_(RBX - 2, 1) } },
	/* immediate offset: the operand itself (Lackey: L 8) */
	{ "bt qword [rbx],3", CODE(0x48, 0x0f, 0xba, 0x23, 0x03), REGS(.rbx = RBX),
	  .acc = { R_(RBX, 8) } },
	/* Lackey: lock bts = byte load, then CAS */
	{ "lock bts [rbx],rax", CODE(0xf0, 0x48, 0x0f, 0xab, 0x03), REGS(.rbx = RBX, .rax = 70),
	  .acc = { R_(RBX + 8, 1), M_(RBX + 8, 1) }, .n_cond = 1, .cond = { false } },
	/* unlocked: no CAS, no Bc (Cachegrind) */
	{ "bts [rbx],rax 3", CODE(0x48, 0x0f, 0xab, 0x03), REGS(.rbx = RBX, .rax = 3),
	  .acc = { M_(RBX, 1) } },

	/* bt family reg, reg: VEX stores the operand at rsp - 288, then reads
	 * (bt) or modifies (bts/btr/btc) the byte at offset (bit & (bits-1))
	 * >> 3 and loads the operand back (Lackey: S 8; L 1 | S 8, M 1, L 8) */
	{ "bt rax,rdx", CODE(0x48, 0x0f, 0xa3, 0xd0), REGS(.rdx = 0x1234),
	  .acc = { W_(RSP - 288, 8), R_(RSP - 288 + 6, 1) } },
	{ "bts rax,rdx", CODE(0x48, 0x0f, 0xab, 0xd0), REGS(.rdx = 0x1234),
	  .acc = { W_(RSP - 288, 8), M_(RSP - 288 + 6, 1), R_(RSP - 288, 8) } },
	{ "btr eax,edx", CODE(0x0f, 0xb3, 0xd0), REGS(.rdx = 0x1234),
	  .acc = { W_(RSP - 288, 4), M_(RSP - 288 + 2, 1), R_(RSP - 288, 4) } },
	{ "btc ax,dx", CODE(0x66, 0x0f, 0xbb, 0xd0), REGS(.rdx = 0x1234),
	  .acc = { W_(RSP - 288, 2), M_(RSP - 288, 1), R_(RSP - 288, 2) } },
	/* bt reg, imm: no memory */
	{ "bt rax,3", CODE(0x48, 0x0f, 0xba, 0xe0, 0x03), REGS(.rax = 1) },

	/* no access */
	{ "lea rax,[rbx+8]", CODE(0x48, 0x8d, 0x43, 0x08), REGS(.rbx = RBX) },
	{ "nop dword [rax+rax]", CODE(0x0f, 0x1f, 0x04, 0x00), REGS(.rax = RAX) },
	{ "cs nopw [rax+rax]", CODE(0x2e, 0x66, 0x0f, 0x1f, 0x04, 0x00), REGS(.rax = RAX) },
	{ "prefetcht0 [rbx]", CODE(0x0f, 0x18, 0x0b), REGS(.rbx = RBX), .acc = { P_(RBX, 1) } },
	{ "clflush [rbx]", CODE(0x0f, 0xae, 0x3b), REGS(.rbx = RBX), .acc = { P_(RBX, 1) } },
	/* Lackey: maskmovdqu is M 16 at rdi (VEX loads, merges, stores) */
	{ "maskmovdqu xmm0,xmm1", CODE(0x66, 0x0f, 0xf7, 0xc1), REGS(.rdi = RDI),
	  .acc = { M_(RDI, 16) } },
	/* xlatb: al = [rbx + al], al zero-extended */
	{ "xlatb", CODE(0xd7), REGS(.rbx = RBX, .rax = 0x12345683), .acc = { R_(RBX + 0x83, 1) } },

	/* AVX2 gathers.  ymm1 dword indices {0,1,2,-1,4,5,6,7}, ymm2 mask
	 * dwords {80000000,0,ffffffff,80000001,0,7fffffff,0,0}: sign bits
	 * on elements 0, 2, 3.  Lackey: VEX loads every element, the
	 * disabled ones from [rsp]. */
	{ "vgatherdps ymm0,[rbx+ymm1*4],ymm2", CODE(0xc4, 0xe2, 0x6d, 0x92, 0x04, 0x8b),
	  REGS(.rbx = RBX),
	  .acc = { R_(RBX, 4), R_(RSP, 4), R_(RBX + 8, 4), R_(RBX - 4, 4),
		   R_(RSP, 4), R_(RSP, 4), R_(RSP, 4), R_(RSP, 4) } },
	{ "vpgatherdd xmm0,[rbx+xmm1*4+0x10],xmm2",
	  CODE(0xc4, 0xe2, 0x69, 0x90, 0x44, 0x8b, 0x10), REGS(.rbx = RBX),
	  .acc = { R_(RBX + 0x10, 4), R_(RSP, 4), R_(RBX + 0x18, 4), R_(RBX + 0xc, 4) } },
	/* qword indices ymm3 {-2, 3, 16, 1}, scale 8, mask xmm2 */
	{ "vgatherqps xmm0,[rbx+ymm3*8],xmm2", CODE(0xc4, 0xe2, 0x6d, 0x93, 0x04, 0xdb),
	  REGS(.rbx = RBX),
	  .acc = { R_(RBX - 16, 4), R_(RSP, 4), R_(RBX + 128, 4), R_(RBX + 8, 4) } },
	/* vmaskmovps: only the enabled elements (Lackey), 4 bytes each */
	{ "vmaskmovps [rbx],ymm2,ymm0", CODE(0xc4, 0xe2, 0x6d, 0x2e, 0x03), REGS(.rbx = RBX),
	  .acc = { W_(RBX, 4), W_(RBX + 8, 4), W_(RBX + 12, 4) } },
	{ "vmaskmovps ymm0,ymm2,[rbx]", CODE(0xc4, 0xe2, 0x6d, 0x2c, 0x03), REGS(.rbx = RBX),
	  .acc = { R_(RBX, 4), R_(RBX + 8, 4), R_(RBX + 12, 4) } },
	/* AVX-512: zmm1 indices {0,1,2,-1,4,...,14,-3}, k1 = 0x8005: elements
	 * 0, 2, 15 */
	{ "vgatherdps zmm0{k1},[rax+zmm1*4]", CODE(0x62, 0xf2, 0x7d, 0x49, 0x92, 0x04, 0x88),
	  REGS(.rax = RAX), .acc = { R_(RAX, 4), R_(RAX + 8, 4), R_(RAX - 12, 4) },
	  .need = NEED_AVX512 },
	{ "vpscatterdd [rax+zmm1*4]{k1},zmm0", CODE(0x62, 0xf2, 0x7d, 0x49, 0xa0, 0x04, 0x88),
	  REGS(.rax = RAX), .acc = { W_(RAX, 4), W_(RAX + 8, 4), W_(RAX - 12, 4) },
	  .need = NEED_AVX512 },
	/* zmm17 (Hi16_ZMM) indices {100, x, -16, ..., 7}; disp8 0x10 * 4 */
	{ "vgatherdps zmm0{k1},[rax+zmm17*4+0x40]",
	  CODE(0x62, 0xf2, 0x7d, 0x41, 0x92, 0x44, 0x88, 0x10), REGS(.rax = RAX),
	  .acc = { R_(RAX + 0x40 + 400, 4), R_(RAX + 0x40 - 64, 4), R_(RAX + 0x40 + 28, 4) },
	  .need = NEED_AVX512 },

	/* branches */
	{ "je taken", CODE(0x74, 0x1e), REGS(.rax = 1), .after_off = 0x20,
	  .n_cond = 1, .cond = { true } },
	{ "je not taken", CODE(0x74, 0x1e), REGS(.rax = 1), .n_cond = 1, .cond = { false } },
	/* target == fall through: cannot be seen taken, counts not taken */
	{ "je degenerate", CODE(0x74, 0x00), REGS(.rax = 1), .n_cond = 1, .cond = { false } },
	{ "jrcxz taken", CODE(0xe3, 0x0e), REGS(.rcx = 0), .after_off = 0x10,
	  .n_cond = 1, .cond = { true } },
	{ "loop not taken", CODE(0xe2, 0x0e), REGS(.rcx = 1), .n_cond = 1, .cond = { false } },
	{ "loop taken", CODE(0xe2, 0x0e), REGS(.rcx = 5), .after_off = 0x10,
	  .n_cond = 1, .cond = { true } },
	{ "jmp rax", CODE(0xff, 0xe0), REGS(.rax = 0x1234), .after_off = 0x321, .indirect = true },
	{ "jmp [rbx]", CODE(0xff, 0x23), REGS(.rbx = RBX), .after_off = 0x321,
	  .acc = { R_(RBX, 8) }, .indirect = true },
	{ "jmp rel32", CODE(0xe9, 0xfb, 0x00, 0x00, 0x00), REGS(.rax = 1), .after_off = 0x100 },
	{ "syscall", CODE(0x0f, 0x05), REGS(.rax = 39) },
	/* not in the table: fetch only, flagged */
	{ "rdmsr (unknown)", CODE(0x0f, 0x32), REGS(.rax = 1), .unknown = true },
	/* 0xd6 (SALC) is invalid in 64-bit mode (SDM opcode map): neither
	 * decoder knows it, so it is unknown with no length (the tracer takes
	 * the length from the pc after the step), and it accesses nothing */
	{ "(bad) d6", CODE(0xd6), REGS(.rax = 1), .unknown = true, .no_len = true },

	/* bytes Capstone 4.0.2 cannot decode (our fallback) */
	{ "kmovd eax,k0", CODE(0xc5, 0xfb, 0x93, 0xc0), REGS(.rax = 1) },
	{ "kmovq k1,[rbx]", CODE(0xc4, 0xe1, 0xf8, 0x90, 0x0b), REGS(.rbx = RBX),
	  .acc = { R_(RBX, 8) } },
	{ "kmovd [rbx+8],k1", CODE(0xc4, 0xe1, 0xf9, 0x91, 0x4b, 0x08), REGS(.rbx = RBX),
	  .acc = { W_(RBX + 8, 4) } },
	/* EVEX disp8 * N, N = 64 for a full zmm operand */
	{ "vpcmpneqb k0{k2},zmm4,[rbx+0x40]",
	  CODE(0x62, 0xf3, 0x5d, 0x4a, 0x3f, 0x43, 0x01, 0x04), REGS(.rbx = RBX),
	  .acc = { R_(RBX + 0x40, 64) } },
	{ "vpbroadcastb zmm3,[rax]", CODE(0x62, 0xf2, 0x7d, 0x48, 0x78, 0x18), REGS(.rax = RAX),
	  .acc = { R_(RAX, 1) } },
	{ "vpcmpeqb k6{k1},zmm3,[r11]", CODE(0x62, 0xd1, 0x65, 0x49, 0x74, 0x33),
	  REGS(.r11 = RBX), .acc = { R_(RBX, 64) } },
	{ "kortestd k4,k2", CODE(0xc4, 0xe1, 0xf9, 0x98, 0xe2), REGS(.rax = 1) },
	/* SIMD rule: a memory source is read (Capstone gives no group) */
	{ "vsqrtss xmm0,xmm0,[rbx]", CODE(0xc5, 0xfa, 0x51, 0x03), REGS(.rbx = RBX),
	  .acc = { R_(RBX, 4) } },
	/* a 32-byte store; disp8 1 * N 32 */
	{ "vextracti32x8 [rbx+0x20],zmm0,1", CODE(0x62, 0xf3, 0x7d, 0x48, 0x3b, 0x43, 0x01, 0x01),
	  REGS(.rbx = RBX), .acc = { W_(RBX + 0x20, 32) } },
	/* broadcast: one element is read */
	{ "vpaddd zmm0,zmm0,[rax]{1to16}", CODE(0x62, 0xf1, 0x7d, 0x58, 0xfe, 0x00),
	  REGS(.rax = RAX), .acc = { R_(RAX, 4) } },
};

/* ---- the fake target ---- */

static const uint8_t *cur_code;
static size_t cur_len;
static uint64_t cur_pc;
/* Data the fake target serves besides the code (an XSAVE header) */
static uint8_t data[64];
static uint64_t data_at;
static uint8_t xstate[16384];
static int read_calls;
static int xstate_calls;

static ssize_t fake_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
	(void)ctx;
	read_calls++;
	if (data_at && addr >= data_at && addr + len <= data_at + sizeof(data)) {
		memcpy(buf, data + (addr - data_at), len);
		return (ssize_t)len;
	}
	if (addr < cur_pc || addr >= cur_pc + cur_len)
		return -EFAULT;
	/* a short read, as at the end of a mapping; the decoder may look at
	 * the instructions after the row's first (pop) */
	size_t off = (size_t)(addr - cur_pc);
	size_t n = cur_len - off < len ? cur_len - off : len;
	memcpy(buf, cur_code + off, n);
	return (ssize_t)n;
}

static ssize_t fake_xstate(void *ctx, void *buf, size_t len)
{
	(void)ctx;
	xstate_calls++;
	size_t n = len < sizeof(xstate) ? len : sizeof(xstate);
	memcpy(buf, xstate, n);
	return (ssize_t)n;
}

static unsigned int comp_off(unsigned int i)
{
	unsigned int a, b, c, d;

	if (!__get_cpuid_count(0xd, i, &a, &b, &c, &d))
		return 0;
	return b;
}

static uint64_t xcr0(void)
{
	unsigned int a, b, c, d;
	uint32_t lo, hi;

	if (!__get_cpuid(1, &a, &b, &c, &d) || !(c & bit_OSXSAVE))
		return 0;
	__asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
	return ((uint64_t)hi << 32) | lo;
}

static void put32(unsigned int off, int32_t v)
{
	memcpy(xstate + off, &v, 4);
}

static void put64(unsigned int off, int64_t v)
{
	memcpy(xstate + off, &v, 8);
}

/* The vector registers the rows use, in XSAVE standard format: XMM i at
 * 160 + 16 i, the upper halves at CPUID 0xd.2 EBX + 16 i, k at 0xd.5 +
 * 8 k, ZMM_Hi256 at 0xd.6 + 32 i, Hi16_ZMM at 0xd.7 + 64 (i - 16);
 * XSTATE_BV at 512 (SDM vol. 1, 13.4). */
static bool build_xstate(void)
{
	unsigned int ymmh = comp_off(2), kreg = comp_off(5), zmmh = comp_off(6),
		     hi16 = comp_off(7);
	static const int32_t idx1[16] = { 0, 1, 2, -1, 4, 5, 6, 7,
					  8, 9, 10, 11, 12, 13, 14, -3 };
	static const uint32_t mask2[8] = { 0x80000000u, 0, 0xffffffffu, 0x80000001u,
					   0, 0x7fffffffu, 0, 0 };
	static const int64_t idx3[4] = { -2, 3, 16, 1 };

	memset(xstate, 0, sizeof(xstate));
	put64(512, 0xe7);	/* x87, SSE, AVX, opmask, ZMM_Hi256, Hi16_ZMM */
	if (!ymmh)
		return false;
	for (unsigned int i = 0; i < 4; i++) {
		put32(160 + 16 * 1 + 4 * i, idx1[i]);
		put32(ymmh + 16 * 1 + 4 * i, idx1[4 + i]);
		put32(160 + 16 * 2 + 4 * i, (int32_t)mask2[i]);
		put32(ymmh + 16 * 2 + 4 * i, (int32_t)mask2[4 + i]);
	}
	put64(160 + 16 * 3, idx3[0]);
	put64(160 + 16 * 3 + 8, idx3[1]);
	put64(ymmh + 16 * 3, idx3[2]);
	put64(ymmh + 16 * 3 + 8, idx3[3]);
	if (!kreg || !zmmh || !hi16)
		return true;
	for (unsigned int i = 0; i < 8; i++)
		put32(zmmh + 32 * 1 + 4 * i, idx1[8 + i]);
	put64(kreg + 8 * 1, 0x8005);
	/* zmm17: element 0 in the low 16 bytes, 15 in the last 4 */
	put32(hi16 + 64 * 1 + 0, 100);
	put32(hi16 + 64 * 1 + 8, -16);
	put32(hi16 + 64 * 1 + 60, 7);
	return true;
}

static const char *kind_name(unsigned int k)
{
	static const char *const names[] = { "R", "W", "M", "P", "NT" };
	return k < 5 ? names[k] : "?";
}

/* CODE (LEN bytes) decoded at PC, as the fake target holds it. */
static const struct insn *decode_bytes(struct decoder *d, const uint8_t *code,
				       size_t len, uint64_t pc, const char **err)
{
	cur_code = code;
	cur_len = len;
	cur_pc = pc;
	return decode_insn(d, pc, err);
}

static unsigned int n_lean;

/* A lean instruction (decode_lean): its templates over the registers
 * before it and the pc after it give the row's accesses and outcomes,
 * as decode_step does. */
static void check_lean(const struct insn *in, const struct row *row,
		       const struct user_regs_struct *b,
		       const struct user_regs_struct *a, uint64_t pc)
{
	const struct decode_lean *l = decode_lean(in);
	if (!l)
		return;
	n_lean++;
	const uint64_t gpr[16] = {
		b->rax, b->rcx, b->rdx, b->rbx, b->rsp, b->rbp, b->rsi, b->rdi,
		b->r8, b->r9, b->r10, b->r11, b->r12, b->r13, b->r14, b->r15,
	};
	uint64_t addr[2] = { 0, 0 };
	for (unsigned int i = 0; i < l->n_acc; i++)
		addr[i] = decode_lean_addr(&l->acc[i], gpr, b->fs_base, b->gs_base);
	struct step_events ev;
	memset(&ev, 0xa5, sizeof(ev));
	decode_lean_events(in, l, addr, a->rip, &ev);
	unsigned int n = 0;
	while (n < 17 && row->acc[n].size)
		n++;
	if (!CHECK(ev.n_fetch == 1 && ev.n_acc == n && !ev.n_spec,
		   "%s: lean: %u accesses, want %u", row->what, ev.n_acc, n))
		return;
	for (unsigned int i = 0; i < n; i++) {
		uint64_t want = row->acc[i].addr + (row->pcrel && i == 0 ? pc : 0);
		CHECK(ev.acc[i].kind == row->acc[i].kind && ev.acc[i].addr == want &&
		      ev.acc[i].size == row->acc[i].size,
		      "%s: lean: access %u is %s %#" PRIx64 ",%u, want %s %#" PRIx64 ",%u",
		      row->what, i, kind_name(ev.acc[i].kind), ev.acc[i].addr,
		      ev.acc[i].size, kind_name(row->acc[i].kind), want, row->acc[i].size);
	}
	CHECK(ev.n_cond == row->n_cond &&
	      (!row->n_cond || ev.cond_taken[0] == row->cond[0]) &&
	      ev.indirect == row->indirect && (!row->indirect || ev.ind_target == a->rip),
	      "%s: lean: outcomes", row->what);
}

static void check_row(struct decoder *d, const struct row *row, uint64_t pc, bool have512,
		      uint64_t x0)
{
	const char *err = NULL;

	if ((row->need == NEED_AVX512 && !have512) ||
	    (row->need == NEED_XCR0_AVX && (x0 & 7) != 7) ||
	    (row->need == NEED_XCR0_AVX512 && (x0 & 0xe7) != 0xe7)) {
		printf("skip %s\n", row->what);
		return;
	}
	const struct insn *in = decode_bytes(d, row->code, row->code_len, pc, &err);
	if (!CHECK(in, "%s: decode_insn: %s", row->what, err))
		return;
	unsigned int want_len = row->no_len ? 0 : row->insn_len ? row->insn_len : row->code_len;
	CHECK(in->len == want_len, "%s: len %u, want %u", row->what, in->len, want_len);
	CHECK(in->unknown == row->unknown, "%s: unknown %d (%s)", row->what, in->unknown,
	      in->text);
	struct user_regs_struct b = row->r, a = row->r;
	b.rip = pc;
	a.rip = row->same_rip ? pc : row->after_off ? pc + row->after_off : pc + row->code_len;
	a.eflags = row->after_eflags;
	struct step_events ev;
	memset(&ev, 0xa5, sizeof(ev));
	int ret = decode_step(d, in, &b, &a, &ev);
	if (!CHECK(ret == 0, "%s: decode_step %d", row->what, ret))
		return;
	unsigned int want_fetch = row->n_fetch ? row->n_fetch : 1;
	CHECK(ev.n_fetch == want_fetch, "%s: n_fetch %u, want %u", row->what, ev.n_fetch,
	      want_fetch);
	unsigned int n = 0;
	while (n < 17 && row->acc[n].size)
		n++;
	CHECK(ev.n_acc == n, "%s: %u accesses, want %u", row->what, ev.n_acc, n);
	for (unsigned int i = 0; i < n && i < ev.n_acc; i++) {
		uint64_t want = row->acc[i].addr + (row->pcrel && i == 0 ? pc : 0);
		CHECK(ev.acc[i].kind == row->acc[i].kind && ev.acc[i].addr == want &&
		      ev.acc[i].size == row->acc[i].size,
		      "%s: access %u is %s %#" PRIx64 ",%u, want %s %#" PRIx64 ",%u",
		      row->what, i, kind_name(ev.acc[i].kind), ev.acc[i].addr,
		      ev.acc[i].size, kind_name(row->acc[i].kind), want, row->acc[i].size);
	}
	if (CHECK(ev.n_cond == row->n_cond, "%s: %u cond outcomes, want %u", row->what,
		  ev.n_cond, row->n_cond)) {
		for (unsigned int i = 0; i < ev.n_cond; i++)
			CHECK(ev.cond_taken[i] == row->cond[i], "%s: cond %u is %d", row->what, i,
			      ev.cond_taken[i]);
	}
	CHECK(ev.indirect == row->indirect && (!row->indirect || ev.ind_target == a.rip),
	      "%s: indirect %d target %#" PRIx64, row->what, ev.indirect, ev.ind_target);
	check_lean(in, row, &b, &a, pc);
}

static void expect_accs(const char *what, const struct step_events *ev,
			const struct exp_acc *want, unsigned int n)
{
	if (!CHECK(ev->n_acc == n, "%s: %u accesses, want %u", what, ev->n_acc, n))
		return;
	for (unsigned int i = 0; i < n; i++) {
		CHECK(ev->acc[i].kind == want[i].kind && ev->acc[i].addr == want[i].addr &&
		      ev->acc[i].size == want[i].size,
		      "%s: access %u is %s %#" PRIx64 ",%u, want %s %#" PRIx64 ",%u",
		      what, i, kind_name(ev->acc[i].kind), ev->acc[i].addr,
		      ev->acc[i].size, kind_name(want[i].kind), want[i].addr, want[i].size);
	}
}

/* decode_prepare: a gather clears its mask as it completes, so the state
 * after the trap shows every element disabled.  The fake target's xstate
 * changes between decode_prepare and decode_step as the CPU's would; the
 * accesses must follow the state before the step. */
static void check_prepare(struct decoder *d, bool have512)
{
	static const uint8_t gather[] = { 0xc4, 0xe2, 0x6d, 0x92, 0x04, 0x8b };
	static const uint8_t kgather[] = { 0x62, 0xf2, 0x7d, 0x49, 0x92, 0x04, 0x88 };
	static const uint8_t movrr[] = { 0x48, 0x89, 0xd8 };	/* mov rax,rbx */
	/* the mask of ymm2 before the step: elements 0, 2, 3 (see rows) */
	static const struct exp_acc pre[8] = {
		R_(RBX, 4), R_(RSP, 4), R_(RBX + 8, 4), R_(RBX - 4, 4),
		R_(RSP, 4), R_(RSP, 4), R_(RSP, 4), R_(RSP, 4),
	};
	/* the mask after: all clear, every element at [rsp] (VEX's rule) */
	static const struct exp_acc post[8] = {
		R_(RSP, 4), R_(RSP, 4), R_(RSP, 4), R_(RSP, 4),
		R_(RSP, 4), R_(RSP, 4), R_(RSP, 4), R_(RSP, 4),
	};
	unsigned int ymmh = comp_off(2);
	struct user_regs_struct b = { .rbx = RBX, .rsp = RSP, .rax = RAX }, a;
	struct step_events ev;
	const char *err;

	if (!build_xstate())
		return;
	cur_code = gather;
	cur_len = sizeof(gather);
	cur_pc = 0x800000;
	const struct insn *in = decode_insn(d, cur_pc, &err);
	cur_code = movrr;
	cur_len = sizeof(movrr);
	cur_pc = 0x800100;
	const struct insn *mov = decode_insn(d, cur_pc, &err);
	if (!CHECK(in && mov && in->needs_xstate && !mov->needs_xstate, "prepare: decode"))
		return;
	b.rip = in->pc;
	a = b;
	a.rip = in->pc + in->len;

	/* no-op for an instruction without vector state */
	int calls = xstate_calls;
	CHECK(decode_prepare(d, mov) == 0 && xstate_calls == calls,
	      "prepare: read xstate for %s", mov->text);
	CHECK(decode_prepare(d, in) == 0 && xstate_calls == calls + 1,
	      "prepare: no xstate read for the gather");
	/* the step: the CPU clears the mask (ymm2) */
	memset(xstate + 160 + 16 * 2, 0, 16);
	memset(xstate + ymmh + 16 * 2, 0, 16);
	calls = xstate_calls;
	CHECK(decode_step(d, in, &b, &a, &ev) == 0 && xstate_calls == calls,
	      "prepare: decode_step read the state again");
	expect_accs("gather after prepare", &ev, pre, 8);
	/* the snapshot is used once: without decode_prepare the step sees
	 * the state after it */
	CHECK(decode_step(d, in, &b, &a, &ev) == 0);
	expect_accs("gather without prepare", &ev, post, 8);
	/* a snapshot not followed by its own step is not used later */
	build_xstate();
	decode_prepare(d, in);
	memset(xstate + 160 + 16 * 2, 0, 16);
	memset(xstate + ymmh + 16 * 2, 0, 16);
	struct user_regs_struct mb = b, ma = b;
	mb.rip = mov->pc;
	ma.rip = mov->pc + mov->len;
	decode_step(d, mov, &mb, &ma, &ev);
	CHECK(decode_step(d, in, &b, &a, &ev) == 0);
	expect_accs("gather after a stale prepare", &ev, post, 8);

	/* AVX-512: k1 = 0x8005 before, 0 after */
	unsigned int kreg = comp_off(5);
	if (have512 && kreg) {
		static const struct exp_acc kpre[3] = {
			R_(RAX, 4), R_(RAX + 8, 4), R_(RAX - 12, 4),
		};
		build_xstate();
		cur_code = kgather;
		cur_len = sizeof(kgather);
		cur_pc = 0x800200;
		const struct insn *k = decode_insn(d, cur_pc, &err);
		if (!CHECK(k, "prepare: decode k gather"))
			return;
		b.rip = k->pc;
		a.rip = k->pc + k->len;
		decode_prepare(d, k);
		memset(xstate + kreg + 8, 0, 8);
		CHECK(decode_step(d, k, &b, &a, &ev) == 0);
		expect_accs("k gather after prepare", &ev, kpre, 3);
		CHECK(decode_step(d, k, &b, &a, &ev) == 0);
		expect_accs("k gather without prepare", &ev, kpre, 0);
	}
	build_xstate();
}

/* Which instructions are lean: the register-addressed ones of the
 * common classes, not what needs more than the registers before them. */
static void check_lean_classes(struct decoder *d)
{
	static const struct {
		const char *what;
		uint8_t code[15];
		uint8_t len;
		bool lean;
	} c[] = {
		{ "mov rax,[rbx+rcx*8+16]", { 0x48, 0x8b, 0x44, 0xcb, 0x10 }, 5, true },
		{ "add [rdi],eax", { 0x01, 0x07 }, 2, true },
		{ "mov rax,fs:[0x28]", { 0x64, 0x48, 0x8b, 0x04, 0x25, 0x28, 0, 0, 0 }, 9, true },
		{ "mov eax,[rip+16]", { 0x8b, 0x05, 0x10, 0, 0, 0 }, 6, true },
		{ "push rbx", { 0x53 }, 1, true },
		{ "pop rbx", { 0x5b }, 1, true },
		{ "push qword [rax]", { 0xff, 0x30 }, 2, true },
		{ "call rel32", { 0xe8, 0, 0, 0, 0 }, 5, true },
		{ "call [rax]", { 0xff, 0x10 }, 2, true },
		{ "ret", { 0xc3 }, 1, true },
		{ "leave", { 0xc9 }, 1, true },
		{ "jne rel8", { 0x75, 0x02 }, 2, true },
		{ "lock xadd [rdi],eax", { 0xf0, 0x0f, 0xc1, 0x07 }, 4, false },
		{ "rep movsb", { 0xf3, 0xa4 }, 2, false },
		{ "movsb", { 0xa4 }, 1, false },
		{ "mov eax,[ebx]", { 0x67, 0x8b, 0x03 }, 3, false },
		{ "bt [rax],rcx", { 0x48, 0x0f, 0xa3, 0x08 }, 4, false },
		{ "bts qword [rax],3", { 0x48, 0x0f, 0xba, 0x28, 0x03 }, 5, true },
		{ "bt rax,rcx", { 0x48, 0x0f, 0xa3, 0xc8 }, 4, false },
		{ "loop rel8", { 0xe2, 0xfe }, 2, false },
		{ "xsave [rdi]", { 0x0f, 0xae, 0x27 }, 3, false },
	};
	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		const char *err = NULL;
		const struct insn *in = decode_bytes(d, c[i].code, c[i].len,
						     0x7f0000 + 0x1000 * i, &err);
		if (CHECK(in, "lean %s: decode_insn: %s", c[i].what, err))
			CHECK(!!decode_lean(in) == c[i].lean, "lean %s: %d, want %d",
			      c[i].what, !!decode_lean(in), c[i].lean);
	}
}

/* The cache: same record per pc, invalidation drops it, growth keeps
 * records where they are. */
static void check_cache(struct decoder *d)
{
	static const uint8_t nop[] = { 0x90 };
	const char *err;

	cur_code = nop;
	cur_len = 1;
	size_t base = decode_cached_count(d);
	cur_pc = 0x900000;
	const struct insn *a = decode_insn(d, cur_pc, &err);
	int calls = read_calls;
	const struct insn *b = decode_insn(d, cur_pc, &err);
	CHECK(a && a == b && read_calls == calls, "cache: second lookup decoded again");
	CHECK(decode_cached_count(d) == base + 1, "cache: count %zu", decode_cached_count(d));
	/* fill beyond the initial table size */
	const struct insn *keep[3000];
	for (unsigned int i = 0; i < 3000; i++) {
		cur_pc = 0xa00000 + i;
		keep[i] = decode_insn(d, cur_pc, &err);
		if (!CHECK(keep[i] && keep[i]->pc == cur_pc, "cache: decode %u", i))
			return;
	}
	for (unsigned int i = 0; i < 3000; i++) {
		cur_pc = 0xa00000 + i;
		if (!CHECK(decode_insn(d, cur_pc, &err) == keep[i],
			   "cache: record %u moved or lost", i))
			return;
	}
	/* drop [0xa00000, 0xa00800): 2048 records, the rest stay */
	size_t before = decode_cached_count(d);
	decode_invalidate(d, 0xa00000, 0xa00800);
	CHECK(decode_cached_count(d) == before - 2048, "cache: invalidate left %zu of %zu",
	      decode_cached_count(d), before);
	for (unsigned int i = 2048; i < 3000; i++) {
		cur_pc = 0xa00000 + i;
		calls = read_calls;
		if (!CHECK(decode_insn(d, cur_pc, &err) == keep[i] && read_calls == calls,
			   "cache: record %u lost by invalidate", i))
			return;
	}
	cur_pc = 0xa00000;
	calls = read_calls;
	CHECK(decode_insn(d, cur_pc, &err) && read_calls == calls + 1,
	      "cache: invalidated pc not decoded again");
	cur_pc = 0x900000;
	decode_invalidate(d, 0x900000, 0x900001);
	cur_pc = 0x123;		/* the target reads fail elsewhere */
	err = NULL;
	CHECK(!decode_insn(d, 0x900000, &err) && err, "cache: unreadable pc decoded");
}

/* Step the instructions of CODE at PC in order (each falls through), the
 * last with rcx = COUNT; return the last step's Bc count. */
static unsigned int run_seq(struct decoder *d, const uint8_t *code, size_t len, uint64_t pc,
			    uint64_t count)
{
	const char *err = NULL;
	struct step_events ev = { 0 };
	struct user_regs_struct b = { .rsp = RSP, .rdi = RDI, .rcx = count }, a;

	cur_code = code;
	cur_len = len;
	cur_pc = pc;
	for (uint64_t at = pc; at < pc + len;) {
		const struct insn *in = decode_insn(d, at, &err);
		if (!CHECK(in && in->len, "seq: decode at +%u", (unsigned int)(at - pc)))
			return 99;
		b.rip = at;
		a = b;
		a.rip = at + in->len;
		if (in->rep && count)	/* the first of count traps */
			a.rip = at, a.rcx = count - 1;
		CHECK(decode_step(d, in, &b, &a, &ev) == 0, "seq: step");
		at += in->len;
	}
	return ev.n_cond;
}

/* VEX folds the first rcx == 0 exit of a rep whose count is a constant
 * in its superblock (libsqlite3's sqlite3SchemaClear: mov ecx, 0x69;
 * ...; rep stos: Cachegrind has one Bc fewer per call). */
static void check_rep_const(struct decoder *d)
{
	/* mov ecx, 13; mov rdi, rbp; rep stosq */
	static const uint8_t konst[] = { 0xb9, 0x0d, 0, 0, 0, 0x48, 0x89, 0xef, 0xf3, 0x48, 0xab };
	/* xor ecx, ecx; rep stosq (count 0: the exit is always taken) */
	static const uint8_t zero[] = { 0x31, 0xc9, 0xf3, 0x48, 0xab };
	/* mov ecx, 13; mov rcx, rdx; rep stosq: rcx no longer constant */
	static const uint8_t var[] = { 0xb9, 0x0d, 0, 0, 0, 0x48, 0x89, 0xd1, 0xf3, 0x48, 0xab };
	/* mov ecx, 13; test eax, eax; je +0; rep stosq: a jcc ends VEX's
	 * superblock (without chasing), so the rep starts a new one */
	static const uint8_t jcc[] = { 0xb9, 0x0d, 0, 0, 0, 0x85, 0xc0, 0x74, 0x00, 0xf3, 0x48, 0xab };
	unsigned int n;

	n = run_seq(d, konst, sizeof(konst), 0xb00000, 13);
	CHECK(n == 0, "rep const: %u Bc on the first trap, want 0", n);
	n = run_seq(d, zero, sizeof(zero), 0xb01000, 0);
	CHECK(n == 0, "rep const 0: %u Bc, want 0", n);
	n = run_seq(d, var, sizeof(var), 0xb02000, 13);
	CHECK(n == 1, "rep var: %u Bc, want 1", n);
	n = run_seq(d, jcc, sizeof(jcc), 0xb03000, 13);
	CHECK(n == 1, "rep after a jcc: %u Bc, want 1", n);
	/* the rep alone (entered by a jump: a new superblock) */
	n = run_seq(d, konst + 8, 3, 0xb00008, 13);
	CHECK(n == 1, "rep entered alone: %u Bc, want 1", n);
}

/* The xsave family as Cachegrind counts VEX's translation of it, worked
 * out by hand from valgrind 3.19's guest_amd64_toIR.c (gen_XSAVE_SEQUENCE,
 * gen_XRSTOR_SEQUENCE: a helper for the x87 part, 160 bytes at A, and
 * one for MXCSR, 8 at A+24; a guarded 16-byte store or load per xmm
 * register at A+160+16i and per upper half at A+576+16i; xsave ORs RFBM
 * into the header's byte at A+512; xrstor first loads 8 bytes at A+512,
 * A+520, A+528) and cg_main.c (a helper's access clamped to the
 * smallest line, 64 here, and made whatever its guard; a guarded store or
 * load only when its guard holds; a load and a store of the same byte
 * one modify, counted as a read).  RFBM is edx:eax & 7; iropt folds the
 * guards when eax and edx are constants in the superblock. */
struct xs_exp {
	bool x87, mxcsr;	/* the helpers' accesses */
	bool xmm, ymm;		/* the guarded registers' */
	bool header_rmw;	/* xsave's XSTATE_BV */
	bool header_reads;	/* xrstor's */
};

static void check_xs(struct decoder *d, const char *what, const uint8_t *code,
		     size_t len, uint64_t pc, uint64_t area, uint64_t rax,
		     bool save, struct xs_exp x)
{
	struct step_events ev = { 0 };
	struct user_regs_struct b = { .rsp = RSP, .rbx = area, .rax = rax }, a;
	const char *err = NULL;
	uint64_t want[40][3];
	unsigned n = 0, i;
	uint8_t k = save ? ACC_WRITE : ACC_READ;

	cur_code = code;
	cur_len = len;
	cur_pc = pc;
	for (uint64_t at = pc; at < pc + len;) {
		const struct insn *in = decode_insn(d, at, &err);
		if (!CHECK(in && in->len, "%s: decode at +%u", what, (unsigned)(at - pc)))
			return;
		b.rip = at;
		a = b;
		a.rip = at + in->len;
		CHECK(decode_step(d, in, &b, &a, &ev) == 0, "%s: step", what);
		const uint8_t *c = code + (at - pc);
		if (c[0] == 0xb8)	/* mov eax, imm32 */
			b.rax = (uint64_t)c[1] | (uint64_t)c[2] << 8 |
				(uint64_t)c[3] << 16 | (uint64_t)c[4] << 24;
		if (c[0] == 0x31 && c[1] == 0xd2)	/* xor edx, edx */
			b.rdx = 0;
		at += in->len;
	}
	if (x.header_reads)
		for (i = 0; i < 3; i++) {
			want[n][0] = ACC_READ, want[n][1] = area + 512 + 8 * i;
			want[n++][2] = 8;
		}
	if (x.x87)
		want[n][0] = k, want[n][1] = area, want[n++][2] = 64;
	if (x.mxcsr)
		want[n][0] = k, want[n][1] = area + 24, want[n++][2] = 8;
	for (i = 0; x.xmm && i < 16; i++)
		want[n][0] = k, want[n][1] = area + 160 + 16 * i, want[n++][2] = 16;
	for (i = 0; x.ymm && i < 16; i++)
		want[n][0] = k, want[n][1] = area + 576 + 16 * i, want[n++][2] = 16;
	if (x.header_rmw)
		want[n][0] = ACC_MODIFY, want[n][1] = area + 512, want[n++][2] = 1;
	if (!CHECK(ev.n_acc == n, "%s: %u accesses, want %u", what, ev.n_acc, n))
		return;
	for (i = 0; i < n; i++)
		CHECK(ev.acc[i].kind == want[i][0] && ev.acc[i].addr == want[i][1] &&
		      ev.acc[i].size == want[i][2], "%s: access %u is %u %#" PRIx64
		      " %u, want %u %#" PRIx64 " %u", what, i, ev.acc[i].kind,
		      ev.acc[i].addr, ev.acc[i].size, (unsigned)want[i][0], want[i][1],
		      (unsigned)want[i][2]);
}

/* A sequence stepped from PC (a new superblock): every direct jmp and
 * call in it goes to the next instruction, a register-indirect call to
 * 0xd10000 (rsi's and rdi's value).  Its reads, counted; whether its last
 * step was an indirect branch, in *INDIRECT. */
static unsigned step_seq(struct decoder *d, const uint8_t *code, size_t len, uint64_t pc,
			 bool *indirect)
{
	struct step_events ev;
	struct user_regs_struct b = { .rsp = RSP, .rbx = RBX, .rsi = 0xd10000,
				      .rdi = 0xd10000 }, a;
	const char *err = NULL;
	unsigned reads = 0;

	cur_code = code;
	cur_len = len;
	cur_pc = pc;
	*indirect = false;
	for (uint64_t at = pc; at < pc + len;) {
		const struct insn *in = decode_insn(d, at, &err);
		if (!CHECK(in && in->len, "seq: decode at +%u", (unsigned)(at - pc)))
			return 99;
		b.rip = at;
		a = b;
		a.rip = in->branch == BR_CALL_IND ? 0xd10000 : at + in->len;
		if (in->branch == BR_CALL || in->branch == BR_CALL_IND)
			a.rsp -= 8;
		memset(&ev, 0, sizeof(ev));
		CHECK(decode_step(d, in, &b, &a, &ev) == 0, "seq: step");
		for (unsigned i = 0; i < ev.n_acc; i++)
			reads += ev.acc[i].kind == ACC_READ;
		*indirect = ev.indirect;
		b.rsp = a.rsp;
		at += in->len;
	}
	return reads;
}

/* A register-indirect call whose register VEX's superblock holds as a
 * constant ends the block at a constant: Cachegrind counts no Bi (ld.so's
 * `lea rsi, [rip + f]; call _dl_receive_error` chased into its `call
 * rsi`). */
static bool ind_seq(struct decoder *d, const uint8_t *code, size_t len, uint64_t pc)
{
	bool indirect;
	step_seq(d, code, len, pc, &indirect);
	return indirect;
}

static void check_ind_const(bool chase)
{
	struct decode_target t = { .read_mem = fake_read, .read_xstate = fake_xstate };
	const char *err = NULL;
	struct decoder *d = decode_new(&t, &err);
	/* lea rsi, [rip + 0x100]; call rsi */
	static const uint8_t lea[] = { 0x48, 0x8d, 0x35, 0, 1, 0, 0, 0xff, 0xd6 };
	/* mov esi, 0xd10000; mov rax, rsi; call rax: a copy of a constant */
	static const uint8_t cpy[] = { 0xbe, 0, 0, 0xd1, 0, 0x48, 0x89, 0xf0, 0xff, 0xd0 };
	/* lea rsi, [rip + 0x100]; add rsi, rdi; call rsi: no longer one */
	static const uint8_t add[] = { 0x48, 0x8d, 0x35, 0, 1, 0, 0, 0x48, 0x01, 0xfe, 0xff, 0xd6 };
	/* mov rsi, rdi; call rsi: from outside the superblock */
	static const uint8_t var[] = { 0x48, 0x89, 0xfe, 0xff, 0xd6 };

	if (!CHECK(d, "ind: decode_new: %s", err))
		return;
	decode_set_chase(d, chase);
	CHECK(!ind_seq(d, lea, sizeof(lea), 0xd20000), "ind: lea rsi, [rip]; call rsi: a Bi");
	CHECK(!ind_seq(d, cpy, sizeof(cpy), 0xd21000), "ind: a copied constant: a Bi");
	CHECK(ind_seq(d, add, sizeof(add), 0xd22000), "ind: rsi changed: no Bi");
	CHECK(ind_seq(d, var, sizeof(var), 0xd23000), "ind: rsi from outside: no Bi");
	/* the call alone, entered by a jump: a new superblock */
	CHECK(ind_seq(d, lea + 7, 2, 0xd20007), "ind: call rsi alone: no Bi");
	decode_free(d);
}

/* Reads of a sequence stepped from PC (a new superblock). */
static unsigned seq_reads(struct decoder *d, const uint8_t *code, size_t len, uint64_t pc)
{
	bool indirect;
	return step_seq(d, code, len, pc, &indirect);
}

/* A load whose register the block a chased jmp goes to overwrites is dead
 * in VEX's superblock; across a chased call it is not (the call's
 * AbiHint keeps every register write before it: perl's `mov rdi, [m];
 * mov esi, ebp; call Perl_rsignal_state`, which overwrites edi first). */
static void check_dead_chased(void)
{
	struct decode_target t = { .read_mem = fake_read, .read_xstate = fake_xstate };
	const char *err = NULL;
	struct decoder *d = decode_new(&t, &err);
	/* mov rdi, [rbx]; jmp +0; mov edi, esi; ret */
	static const uint8_t jmp[] = { 0x48, 0x8b, 0x3b, 0xe9, 0, 0, 0, 0, 0x89, 0xf7, 0xc3 };
	/* mov rdi, [rbx]; call +0; mov edi, esi; ret */
	static const uint8_t call[] = { 0x48, 0x8b, 0x3b, 0xe8, 0, 0, 0, 0, 0x89, 0xf7, 0xc3 };
	unsigned n;

	if (!CHECK(d, "dead chased: decode_new: %s", err))
		return;
	decode_set_chase(d, true);
	n = seq_reads(d, jmp, sizeof(jmp) - 1, 0xd30000);
	CHECK(n == 0, "dead chased: load before a chased jmp: %u reads, want 0", n);
	n = seq_reads(d, call, sizeof(call) - 1, 0xd31000);
	CHECK(n == 1, "dead chased: load before a chased call: %u reads, want 1", n);
	decode_set_chase(d, false);
	n = seq_reads(d, jmp, sizeof(jmp) - 1, 0xd32000);
	CHECK(n == 1, "dead chased: load before a jmp, no chasing: %u reads, want 1", n);
	decode_free(d);
}

static void check_vex_xsave(bool chase)
{
	struct decode_target t = { .read_mem = fake_read, .read_xstate = fake_xstate };
	const char *err = NULL;
	struct decoder *d = decode_new(&t, &err);
	static const uint8_t xsave[] = { 0x0f, 0xae, 0x23 };		/* xsave [rbx] */
	static const uint8_t xrstor[] = { 0x0f, 0xae, 0x2b };		/* xrstor [rbx] */
	static const uint8_t fxsave[] = { 0x0f, 0xae, 0x03 };		/* fxsave [rbx] */
	static const uint8_t fxrstor[] = { 0x0f, 0xae, 0x0b };		/* fxrstor [rbx] */
	/* glibc's _dl_runtime_resolve_xsave: mov eax, 0xee; xor edx, edx;
	 * then xsave [rbx] or xrstor [rbx] */
	static const uint8_t k_xsave[] = { 0xb8, 0xee, 0, 0, 0, 0x31, 0xd2, 0x0f, 0xae, 0x23 };
	static const uint8_t k_xrstor[] = { 0xb8, 0xee, 0, 0, 0, 0x31, 0xd2, 0x0f, 0xae, 0x2b };
	/* mov eax, 7; xor edx, edx; xsave [rbx] */
	static const uint8_t k7_xsave[] = { 0xb8, 7, 0, 0, 0, 0x31, 0xd2, 0x0f, 0xae, 0x23 };
	const uint64_t A1 = 0x600000010000ull, A2 = 0x600000020000ull,
		       A3 = 0x600000030000ull;
	const struct xs_exp all_save = { true, true, true, true, true, false };

	if (!CHECK(d, "xsave: decode_new: %s", err))
		return;
	decode_set_chase(d, chase);
	/* eax = 0xee from outside the superblock: RFBM 6, both helpers */
	check_xs(d, "xsave eax=0xee", xsave, sizeof(xsave), 0xd00000, A1, 0xee, true,
		 all_save);
	/* the same set in the superblock: the x87 helper folded away */
	check_xs(d, "const xsave eax=0xee", k_xsave, sizeof(k_xsave), 0xd01000, A2, 0, true,
		 (struct xs_exp){ false, true, true, true, true, false });
	/* RFBM 7 constant: nothing folded */
	check_xs(d, "const xsave eax=7", k7_xsave, sizeof(k7_xsave), 0xd02000, A3, 0, true,
		 all_save);
	/* eax=1 from outside: the SSE and AVX stores' guards fail */
	check_xs(d, "xsave eax=1", xsave, sizeof(xsave), 0xd03000, A3 + 0x1000, 1, true,
		 (struct xs_exp){ true, true, false, false, true, false });
	/* xrstor of A1 (saved with RFBM 6; its header in memory 0): XSTATE_BV
	 * is 6, as VEX's xsave left it; eax=7 from outside */
	memset(data, 0, sizeof(data));
	data_at = A1 + 512;
	check_xs(d, "xrstor eax=7 after xsave 6", xrstor, sizeof(xrstor), 0xd04000, A1, 7,
		 false, (struct xs_exp){ true, true, true, true, false, true });
	/* an area no xsave here wrote, XSTATE_BV 3 in memory: no AVX loads */
	data_at = A3 + 0x2000 + 512;
	data[0] = 3;
	check_xs(d, "xrstor eax=7 bv=3", xrstor, sizeof(xrstor), 0xd05000, A3 + 0x2000, 7,
		 false, (struct xs_exp){ true, true, true, false, false, true });
	/* glibc's constant xrstor of A2 (saved with RFBM 6): the x87 helper's
	 * guard folds to false; MXCSR's depends on XSTATE_BV: kept */
	memset(data, 0, sizeof(data));
	data_at = A2 + 512;
	check_xs(d, "const xrstor eax=0xee", k_xrstor, sizeof(k_xrstor), 0xd06000, A2, 0,
		 false, (struct xs_exp){ false, true, true, true, false, true });
	data_at = 0;
	/* fxsave, fxrstor: RFBM 3, no header */
	check_xs(d, "fxsave", fxsave, sizeof(fxsave), 0xd07000, A3, 0, true,
		 (struct xs_exp){ true, true, true, false, false, false });
	check_xs(d, "fxrstor", fxrstor, sizeof(fxrstor), 0xd08000, A3, 0, false,
		 (struct xs_exp){ true, true, true, false, false, false });
	decode_free(d);
}

/* VEX's superblocks with chasing (src/decode/chase.c), worked out by hand
 * from valgrind 3.19's guest_generic_bb_to_IR.c (bb_to_IR,
 * analyse_block_end). */
static const uint8_t and_ft[] = {
	0x85, 0xc0,			/* 00 test eax, eax */
	0x74, 0x07,			/* 02 je 0x0b (A) */
	0x83, 0xfa, 0x05,		/* 04 cmp edx, 5 (X: A's fall-through) */
	0x75, 0x02,			/* 07 jne 0x0b */
	0x31, 0xc0,			/* 09 xor eax, eax */
	0xb8, 0x01, 0, 0, 0,		/* 0b mov eax, 1 (Y: 3 instructions, */
	0x01, 0xd0,			/* 10 add eax, edx   cut by the spec */
	0x01, 0xc8,			/* 12 add eax, ecx   limit: Uncond) */
	0xc3,				/* 14 ret */
};

static bool sb_at(struct decoder *d, const uint8_t *code, size_t len, uint64_t base,
		  uint64_t entry, struct vex_superblock *sb)
{
	cur_code = code;
	cur_len = len;
	cur_pc = base;
	return CHECK(decode_superblock(d, entry, sb), "chase: no superblock at %#" PRIx64,
		     entry);
}

/* One step at PC to NEXT (registers do not matter to these instructions). */
static void step_to(struct decoder *d, uint64_t pc, uint64_t next, struct step_events *ev)
{
	const char *err = NULL;
	struct user_regs_struct b = { .rsp = RSP, .rip = pc }, a = b;
	a.rip = next;
	const struct insn *in = decode_insn(d, pc, &err);
	if (CHECK(in, "chase: decode %#" PRIx64, pc))
		CHECK(decode_step(d, in, &b, &a, ev) == 0, "chase: step");
}

static void check_chase(void)
{
	struct decode_target t = { .read_mem = fake_read, .read_xstate = fake_xstate };
	const char *err = NULL;
	struct decoder *d = decode_new(&t, &err);
	struct vex_superblock sb;
	struct step_events ev;
	const uint64_t B = 0xc00000;

	if (!CHECK(d, "chase: decode_new: %s", err))
		return;
	decode_set_chase(d, true);
	/* A && B with X on A's fall-through: X's jcc goes to A's taken
	 * target Y (idiom 2 after VEX's swap); Y is a 3-instruction cut
	 * block, so it definitely does not jump back to X */
	if (sb_at(d, and_ft, sizeof(and_ft), B, B, &sb)) {
		CHECK(sb.kind == VEX_SB_AND && sb.n_first == 2 && sb.first_last == B + 2,
		      "and/ft: kind %u n_first %u", sb.kind, sb.n_first);
		CHECK(sb.spec == B + 4 && sb.n_spec == 2 && sb.other == B + 0xb &&
		      sb.spec_to_other_taken, "and/ft: spec %#" PRIx64 " n %u other %#"
		      PRIx64, sb.spec, sb.n_spec, sb.other);
	}
	/* A went to Y: no Bc for A, X's two instructions counted, X's Bc
	 * taken (its taken target is Y) */
	step_to(d, B, B + 2, &ev);
	step_to(d, B + 2, B + 0xb, &ev);
	CHECK(ev.n_cond == 0 && ev.n_spec == 2 && ev.spec_pc[0] == B + 4 &&
	      ev.spec_pc[1] == B + 7 && ev.spec_len[0] == 3 && ev.spec_len[1] == 2 &&
	      ev.spec_taken, "and/ft to Y: n_cond %u n_spec %u", ev.n_cond, ev.n_spec);
	/* A went to X: no Bc for A, nothing speculative; X's jcc as usual */
	step_to(d, B, B + 2, &ev);
	step_to(d, B + 2, B + 4, &ev);
	CHECK(ev.n_cond == 0 && ev.n_spec == 0, "and/ft to X: n_cond %u n_spec %u",
	      ev.n_cond, ev.n_spec);
	step_to(d, B + 4, B + 7, &ev);
	step_to(d, B + 7, B + 9, &ev);
	CHECK(ev.n_cond == 1 && !ev.cond_taken[0] && ev.n_spec == 0,
	      "and/ft X's jcc: n_cond %u", ev.n_cond);
	/* entered at X (a new superblock): X alone, a plain block */
	if (sb_at(d, and_ft, sizeof(and_ft), B, B + 4, &sb))
		CHECK(sb.kind == VEX_SB_PLAIN && sb.n_first == 2, "and/ft at X: kind %u",
		      sb.kind);

	/* X on A's taken side (idiom 0/1): A jne 0x0e, Y at the
	 * fall-through, X's je goes back to Y */
	static const uint8_t and_sx[] = {
		0x85, 0xc0,			/* 00 test eax, eax */
		0x75, 0x0a,			/* 02 jne 0x0e (A) */
		0xb8, 0x01, 0, 0, 0,		/* 04 mov eax, 1 (Y) */
		0x01, 0xd0,			/* 09 add eax, edx */
		0x01, 0xc8,			/* 0b add eax, ecx */
		0xc3,				/* 0d ret */
		0x83, 0xfa, 0x05,		/* 0e cmp edx, 5 (X) */
		0x74, 0xf1,			/* 11 je 0x04 */
		0xc3,				/* 13 ret */
	};
	if (sb_at(d, and_sx, sizeof(and_sx), B + 0x100, B + 0x100, &sb))
		CHECK(sb.kind == VEX_SB_AND && sb.spec == B + 0x10e && sb.n_spec == 2 &&
		      sb.other == B + 0x104 && sb.spec_to_other_taken,
		      "and/sx: kind %u spec %#" PRIx64, sb.kind, sb.spec);

	/* X loads: not guardable, no merge */
	static const uint8_t and_load[] = {
		0x85, 0xc0, 0x74, 0x07,
		0x83, 0x3f, 0x05,		/* 04 cmp dword [rdi], 5 */
		0x75, 0x02, 0x31, 0xc0,
		0xb8, 0x01, 0, 0, 0, 0x01, 0xd0, 0x01, 0xc8, 0xc3,
	};
	if (sb_at(d, and_load, sizeof(and_load), B + 0x200, B + 0x200, &sb))
		CHECK(sb.kind == VEX_SB_PLAIN, "and/load: kind %u, want plain", sb.kind);
	/* Y ends in a ret within 3 instructions: "Other", which might jump
	 * anywhere (X too): no merge */
	static const uint8_t and_ret[] = {
		0x85, 0xc0, 0x74, 0x07, 0x83, 0xfa, 0x05, 0x75, 0x02, 0x31, 0xc0,
		0xc3,				/* 0b ret (Y) */
	};
	if (sb_at(d, and_ret, sizeof(and_ret), B + 0x300, B + 0x300, &sb))
		CHECK(sb.kind == VEX_SB_PLAIN, "and/ret: kind %u, want plain", sb.kind);
	/* X's block has 3 instructions before its jcc: cut, no Cond */
	static const uint8_t and_long[] = {
		0x85, 0xc0, 0x74, 0x0b,		/* 02 je 0x0f */
		0x01, 0xd0, 0x01, 0xd0,		/* 04 add eax, edx (twice) */
		0x83, 0xfa, 0x05,		/* 08 cmp edx, 5 */
		0x75, 0x02, 0x31, 0xc0,		/* 0b jne 0x0f */
		0xb8, 0x01, 0, 0, 0, 0x01, 0xd0, 0x01, 0xc8, 0xc3,
	};
	if (sb_at(d, and_long, sizeof(and_long), B + 0x400, B + 0x400, &sb))
		CHECK(sb.kind == VEX_SB_PLAIN, "and/long: kind %u, want plain", sb.kind);

	/* one direct jmp is chased, and the rep count set before it is
	 * still a constant: the first trap has no Bc */
	static const uint8_t chase_rep[] = {
		0xb9, 0x05, 0, 0, 0,		/* 00 mov ecx, 5 */
		0xeb, 0x02,			/* 05 jmp 0x09 */
		0x90, 0x90,
		0xf3, 0xaa,			/* 09 rep stosb */
	};
	if (sb_at(d, chase_rep, sizeof(chase_rep), B + 0x500, B + 0x500, &sb))
		CHECK(sb.kind == VEX_SB_CHASE && sb.chase_to == B + 0x509 &&
		      sb.chase_max == VEX_GUEST_MAX_INSNS - 2,
		      "chase: kind %u to %#" PRIx64, sb.kind, sb.chase_to);
	{
		struct user_regs_struct b = { .rsp = RSP, .rdi = RDI, .rcx = 5 }, a;
		unsigned int pcs[3] = { 0x500, 0x505, 0x509 }, next[3] = { 0x505, 0x509, 0x509 };
		for (int i = 0; i < 3; i++) {
			const struct insn *in = decode_insn(d, B + pcs[i], &err);
			if (!CHECK(in, "chase rep: decode"))
				break;
			b.rip = B + pcs[i];
			a = b;
			a.rip = B + next[i];
			if (in->rep)
				a.rcx = 4;
			CHECK(decode_step(d, in, &b, &a, &ev) == 0, "chase rep: step");
		}
		CHECK(ev.n_cond == 0, "chase rep: %u Bc on the first trap, want 0", ev.n_cond);
	}
	/* a window starting at a function (the return address on the stack
	 * follows a call rel32 to it): VEX chased the call from the caller's
	 * block, so the callee's first block merges nothing */
	{
		static uint8_t callee[0x48];
		memcpy(callee, and_ft, sizeof(and_ft));
		callee[0x20] = 0xe8;		/* 20 call 0x00 (rel32 -0x25) */
		int32_t rel = -0x25;
		memcpy(callee + 0x21, &rel, 4);
		uint64_t ret = B + 0x725;	/* 40: the return address */
		memcpy(callee + 0x40, &ret, 8);
		struct decoder *d2 = decode_new(&t, &err);
		if (CHECK(d2, "callee: decode_new")) {
			decode_set_chase(d2, true);
			cur_code = callee;
			cur_len = sizeof(callee);
			cur_pc = B + 0x700;
			struct user_regs_struct b = { .rsp = B + 0x740, .rip = B + 0x700 }, a;
			const struct insn *in = decode_insn(d2, B + 0x700, &err);
			a = b;
			a.rip = B + 0x702;
			CHECK(in && decode_step(d2, in, &b, &a, &ev) == 0, "callee: step");
			in = decode_insn(d2, B + 0x702, &err);
			b.rip = B + 0x702;
			a.rip = B + 0x70b;
			CHECK(in && decode_step(d2, in, &b, &a, &ev) == 0, "callee: step");
			CHECK(ev.n_cond == 1 && ev.cond_taken[0] && ev.n_spec == 0,
			      "callee: n_cond %u n_spec %u, want 1 0", ev.n_cond, ev.n_spec);
			decode_free(d2);
		}
	}
	/* a 58-instruction first block leaves 2 of the 60: nothing chased */
	static uint8_t long_block[58 + 2];
	memset(long_block, 0x90, 58);
	long_block[57] = 0xeb;		/* jmp +0 as the 58th */
	long_block[58] = 0x00;
	long_block[59] = 0x90;
	if (sb_at(d, long_block, sizeof(long_block), B + 0x600, B + 0x600, &sb))
		CHECK(sb.kind == VEX_SB_PLAIN && sb.n_first == 58,
		      "budget: kind %u n_first %u", sb.kind, sb.n_first);
	decode_free(d);
}

/* The emulation allow-list (src/decode/allow.c): what the emulate engine
 * may run in Unicorn.  Bytes assembled with GNU as; expectations from the
 * encodings (VEX/EVEX prefix bytes) and the list's rules. */
static void check_allow(struct decoder *d)
{
	static const struct {
		const char *what;
		uint8_t code[15];
		uint8_t len;
		bool emulable;
		bool fpu;
	} cases[] = {
		{ "add rax, rbx", { 0x48, 0x01, 0xd8 }, 3, true, false },
		{ "mov rax, [rbx+8]", { 0x48, 0x8b, 0x43, 0x08 }, 4, true, false },
		{ "lock xadd [rdi], eax", { 0xf0, 0x0f, 0xc1, 0x07 }, 4, true, false },
		{ "rep movsb", { 0xf3, 0xa4 }, 2, true, false },
		{ "movdqu xmm0, [rsi]", { 0xf3, 0x0f, 0x6f, 0x06 }, 4, true, true },
		{ "pcmpeqb xmm1, xmm2", { 0x66, 0x0f, 0x74, 0xca }, 4, true, true },
		{ "syscall", { 0x0f, 0x05 }, 2, false, false },
		{ "cpuid", { 0x0f, 0xa2 }, 2, false, false },
		{ "rdtsc", { 0x0f, 0x31 }, 2, false, false },
		{ "xgetbv", { 0x0f, 0x01, 0xd0 }, 3, false, false },
		{ "int3", { 0xcc }, 1, false, false },
		{ "vmovdqu ymm0, [rsi] (VEX)", { 0xc5, 0xfe, 0x6f, 0x06 }, 4, false, true },
		{ "vpxorq zmm0, zmm0, zmm0 (EVEX)",
		  { 0x62, 0xf1, 0xfd, 0x48, 0xef, 0xc0 }, 6, false, true },
		{ "andn eax, ebx, ecx (VEX BMI)", { 0xc4, 0xe2, 0x60, 0xf2, 0xc1 }, 5,
		  false, false },
		{ "fld qword [rax] (x87)", { 0xdd, 0x00 }, 2, false, true },
		{ "xsave [rdi]", { 0x0f, 0xae, 0x27 }, 3, false, false },
		{ "fxsave [rdi]", { 0x0f, 0xae, 0x07 }, 3, false, false },
		{ "mov eax, fs (segment)", { 0x8c, 0xe0 }, 2, false, false },
		{ "wrfsbase rax", { 0xf3, 0x48, 0x0f, 0xae, 0xd0 }, 5, false, false },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *err = NULL;
		const struct insn *in = decode_bytes(d, cases[i].code, cases[i].len,
						     0xc00000 + 0x100 * i, &err);
		if (!CHECK(in, "allow: %s: not decoded (%s)", cases[i].what,
			   err ? err : "?"))
			continue;
		CHECK(in->emulable == cases[i].emulable, "allow: %s: emulable %d, "
		      "want %d", cases[i].what, in->emulable, cases[i].emulable);
		if (cases[i].emulable || cases[i].fpu)
			CHECK(in->fpu == cases[i].fpu, "allow: %s: fpu %d, want %d",
			      cases[i].what, in->fpu, cases[i].fpu);
	}
}

/* Code that is not fixed (a JIT's): what was decoded there is read again
 * once the target ran (its epoch moved), and decoded anew when it
 * changed; fixed code is decoded once. */
static bool jit_fixed;
static uint64_t jit_epoch;
static bool fake_fixed(void *ctx, uint64_t pc)
{
	(void)ctx; (void)pc;
	return jit_fixed;
}
static uint64_t fake_epoch(void *ctx)
{
	(void)ctx;
	return jit_epoch;
}

static void check_volatile(void)
{
	struct decode_target t = { .read_mem = fake_read,
				   .read_xstate = fake_xstate,
				   .fixed = fake_fixed, .epoch = fake_epoch };
	const char *err = NULL;
	struct decoder *d = decode_new(&t, &err);
	if (!CHECK(d, "volatile: decode_new: %s", err))
		return;
	/* mov eax, [rdi] then, rewritten, mov [rdi], eax */
	uint8_t code[3] = { 0x8b, 0x07, 0xc3 };
	cur_code = code;
	cur_pc = 0xe00000;
	cur_len = sizeof(code);
	for (int fixed = 0; fixed < 2; fixed++) {
		jit_fixed = fixed;
		uint64_t pc = 0xe00000;
		decode_invalidate(d, pc, pc + 16);
		code[0] = 0x8b;
		const struct insn *a = decode_insn(d, pc, &err);
		code[0] = 0x89;			/* rewritten, the epoch the same */
		const struct insn *b = decode_insn(d, pc, &err);
		jit_epoch++;			/* the target ran */
		const struct insn *c = decode_insn(d, pc, &err);
		uint32_t gen = *decode_generation(d);
		const struct insn *e = decode_insn(d, pc, &err);
		if (!CHECK(a && b && c && e, "volatile: decode: %s", err))
			break;
		CHECK(b == a, "volatile: the same epoch: not read again");
		if (fixed) {
			CHECK(c == a && strstr(c->text, "mov") &&
			      decode_lean(c)->acc[0].kind == ACC_READ,
			      "fixed code: decoded once (%s)", c->text);
		} else {
			CHECK(decode_lean(c)->n_acc == 1 &&
			      decode_lean(c)->acc[0].kind == ACC_WRITE,
			      "volatile: the new bytes decoded (%s)", c->text);
			CHECK(e == c && *decode_generation(d) == gen,
			      "volatile: unchanged bytes kept");
		}
	}
	cur_code = NULL;
	decode_free(d);
}

int main(void)
{
	struct decode_target t = { .read_mem = fake_read, .read_xstate = fake_xstate };
	const char *err = NULL;
	struct decoder *d = decode_new(&t, &err);

	if (!d) {
		printf("decode_new: %s\n", err);
		return 1;
	}
	bool have512 = build_xstate() && comp_off(7) != 0;
	uint64_t x0 = xcr0();
	size_t n = sizeof(rows) / sizeof(rows[0]);
	for (size_t i = 0; i < n; i++)
		check_row(d, &rows[i], 0x400000 + 0x1000 * i, have512, x0);
	check_prepare(d, have512);
	check_lean_classes(d);
	check_cache(d);
	check_rep_const(d);
	check_allow(d);
	decode_free(d);
	check_chase();
	check_vex_xsave(false);
	check_vex_xsave(true);
	check_ind_const(false);
	check_ind_const(true);
	check_dead_chased();
	check_volatile();
	printf("%zu rows, %u of them lean\n", n, n_lean);
	return test_summary("test-decode");
}
