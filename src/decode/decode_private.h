/* Private to src/decode: the semantics table and the raw-encoding helpers
 * shared by decode.c, semantics.c and fallback.c, and the decoder and its
 * records, shared by decode.c, decode_build.c and decode_step.c. */
#ifndef CT_DECODE_PRIVATE_H
#define CT_DECODE_PRIVATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <capstone/capstone.h>

#include "decode.h"
#include "hashtab.h"

/* How an instruction's data accesses are formed (struct sem.cls). */
enum sem_class {
	SC_UNKNOWN = 0,	/* not in the table: Ir only */
	SC_GEN,		/* one explicit memory operand: kind dst/src */
	SC_PUSH,	/* [push [m]: read m,] write [rsp-8] */
	SC_POP,		/* read [rsp][, pop [m]: write m] */
	SC_CALL,	/* [call [m]: read m,] write [rsp-8] */
	SC_RET,		/* read [rsp] */
	SC_LEAVE,	/* read [rbp] */
	SC_ENTER,	/* write [rsp-8], display copies for level > 0 */
	SC_STR,		/* movs/stos/lods/cmps/scas (opcode 0xa4..0xaf) */
	SC_BT,		/* bt/bts/btr/btc: register bit offset moves the address */
	SC_XLAT,	/* read byte [rbx + al] */
	SC_MASKMOVDQU,	/* 16 bytes at [rdi] */
	SC_GATHER,	/* VSIB gathers (AVX2 vector mask, AVX-512 k mask) */
	SC_SCATTER,	/* AVX-512 VSIB scatters */
	SC_MASKMOV,	/* vmaskmovps/pd, vpmaskmovd/q: per element, vector mask */
};

/* struct sem.flags */
enum {
	SF_LOCK2 = 1 << 0,	/* with lock: VEX loads, then a CAS: read + modify */
	SF_XCHG = 1 << 1,	/* always read + modify (xchg is implicitly locked) */
	SF_Q_INDEX = 1 << 2,	/* gather/scatter with qword indices */
	SF_VECTOR = 1 << 3,	/* table entry from the SIMD group rule */
};

/* struct sem.dst/src values besides enum access_kind */
#define KIND_NONE 0xff		/* the operand is not accessed (lea, nop) */
#define KIND_UNKNOWN 0xfe	/* not known: the instruction is unknown */

/* Sizes that depend on the CPU and on edx:eax: struct sem.size */
#define SZ_XSAVE 0xffff		/* standard format (xsave, xsaveopt, xrstor) */
#define SZ_XSAVEC 0xfffe	/* compacted format (xsavec, xsaves) */

struct sem {
	uint8_t cls;	/* enum sem_class */
	uint8_t dst;	/* access kind when the memory operand is operand 0 */
	uint8_t src;	/* access kind when it is a later operand */
	uint8_t flags;
	uint8_t branch;	/* enum branch_kind; BR_JMP/BR_CALL resolved per insn */
	uint8_t esize;	/* data element size (gather, scatter, maskmov) */
	uint16_t size;	/* access size override, 0: the operand's size */
};

/* The entry for a Capstone instruction id; cls SC_UNKNOWN when absent. */
const struct sem *sem_lookup(unsigned int id);

/* The rule for SIMD instructions without an entry: a memory operand after
 * operand 0 is read; one in operand 0 makes the instruction unknown. */
const struct sem *sem_vector_rule(void);

/* A VEX/EVEX prefix, parsed from the raw bytes (Capstone 4.0.2 reports
 * wrong VSIB index registers for scatters and fails on many EVEX and all
 * VEX mask-register instructions). */
struct vex_info {
	uint8_t form;		/* 0 none, 2 (c5), 3 (c4), 4 (62 EVEX) */
	uint8_t map;		/* 1: 0f, 2: 0f38, 3: 0f3a */
	uint8_t opcode;
	uint8_t pp;		/* implied prefix: 0, 1 (66), 2 (f3), 3 (f2) */
	uint8_t w;
	uint8_t vl;		/* vector length in bytes: 16, 32, 64 */
	uint8_t r, x, b;	/* extension bits, already un-inverted */
	uint8_t vvvv;		/* un-inverted, including EVEX V' as bit 4 */
	uint8_t vprime;		/* EVEX V' (extends a VSIB index to 16..31) */
	uint8_t aaa;		/* EVEX opmask register */
	uint8_t bcast;		/* EVEX b bit */
	uint8_t seg;		/* legacy 0x64 / 0x65 prefix seen */
	bool addr32;		/* legacy 0x67 seen */
	size_t modrm_off;	/* offset of the ModRM byte */
};

/* Parse legacy prefixes and a VEX/EVEX prefix at BUF.  Returns false when
 * the bytes do not hold one (form 0) or are too short. */
bool vex_parse(const uint8_t *buf, size_t n, struct vex_info *v);

/* General registers in the order of the encoding (0 rax .. 15 r15) as
 * slots of struct user_regs_struct viewed as an array of 64-bit words. */
uint8_t gpr_slot(unsigned int num);

#define SLOT_NONE 0xff

/* What the fallback decoder found for bytes Capstone cannot decode. */
struct fb_insn {
	uint8_t len;
	bool known;		/* access semantics known */
	uint8_t kind;		/* enum access_kind, when has_mem */
	bool has_mem;
	uint32_t size;
	/* the memory operand */
	uint8_t base, index;	/* slots or SLOT_NONE */
	uint8_t scale;
	bool rip_rel;
	bool addr32;
	uint8_t seg;		/* 0, 1 fs, 2 gs */
	int64_t disp;
	bool vsib;		/* EVEX gather (kind read) or scatter (write) */
	bool q_index;		/* with qword indices */
	char text[40];
};

/* Decode the length, and for the instructions glibc uses the accesses, of
 * VEX-encoded mask-register and EVEX instructions Capstone 4.0.2 rejects.
 * Returns false when the bytes are not understood either. */
bool fallback_decode(const uint8_t *buf, size_t n, struct fb_insn *fb);

/* allow.c: set IN's emulable, fpu and undef_flags from Capstone's decode
 * CI of the N raw bytes BUF. */
void allow_classify(struct insn *in, const cs_insn *ci, const uint8_t *buf,
		    size_t n, bool allow_x87);
/* An SSE/AVX/MMX instruction (a group, or a vector register operand). */
bool decode_is_simd(const cs_detail *det);

/* ---- VEX's superblocks (chase.c) ---- */

/* How VEX's amd64 front end ends a basic block at an instruction. */
enum vex_end {
	VEX_END_NONE,		/* the block goes on */
	VEX_END_COND,		/* jcc, loop, jrcxz: Exit + fall-through */
	VEX_END_JMP,		/* direct jmp: Ijk_Boring to a constant */
	VEX_END_CALL,		/* direct call: Ijk_Call to a constant */
	VEX_END_STOP,		/* anything else that stops (ret, indirect,
				 * syscall, rep string, pause, int...) */
};

enum { VEX_RCX_NONE, VEX_RCX_WRITE, VEX_RCX_CONST };

/* What the superblock builder needs of one instruction. */
struct vex_insn {
	uint64_t target;	/* VEX_END_COND/JMP/CALL: the destination */
	uint8_t len;
	uint8_t end;		/* enum vex_end */
	uint8_t rcx_effect;	/* VEX_RCX_*: for the rep count rule */
	bool rep;		/* a rep string instruction */
	bool guardable;		/* register-only IR VEX can guard */
	bool exit_inside;	/* a side exit inside it (locked RMW's CAS) */
	bool dead_if_chased;	/* pop reg: its load is dead when the jmp or
				 * call ending its block is chased */
};

/* The facts of the (cached) instruction at PC; false when undecodable. */
bool decode_vex_insn(struct decoder *d, uint64_t pc, struct vex_insn *vi);
/* The same for an instruction already decoded. */
void decode_vex_of(const struct insn *in, struct vex_insn *vi);

/* Where VEX's superblocks are (chase.c): shared with decode_step for
 * chase_step_inside. */
enum phase {
	PH_FIRST,	/* the first block of sbs[cur] */
	PH_CHASED,	/* the block its jmp/call chased */
	PH_SPEC,	/* its merged && block, running natively */
	PH_CALLEE,	/* lost track, then at a direct call's destination:
			 * taken as chased from the caller's superblock */
};

/* Where one thread's steps are. */
struct chase_pos {
	uint64_t thread;	/* its fs_base (TLS): a thread's identity in
				 * the registers decode_step sees */
	bool in_sb;
	bool lost;		/* not following: the next superblock's
				 * entry is not known (new thread, signal) */
	uint32_t cur;		/* index in sbs */
	uint8_t phase;		/* enum phase */
	uint64_t expect;	/* the pc the next step must have */
	/* Not next to phase: GCC reads the two with one load for
	 * "phase == X && count == 0", right after storing them apart, and
	 * that load waits for both stores (half of chase_step's time). */
	uint32_t count;		/* instructions of the phase so far */
	bool rcx_const;		/* rcx set to a constant in the superblock */
};

#define CHASE_RECENT 1024

/* Threads followed at once (--threads=all interleaves their steps); the
 * least recently stepped one gives way. */
#define CHASE_THREADS 8

struct chase {
	struct vex_superblock *sbs;
	uint32_t n, cap;
	struct hashtab map;	/* entry pc -> index in sbs */
	/* In front of MAP: the last superblock found at each slot (an
	 * index, checked against n and the entry). */
	uint32_t recent[CHASE_RECENT];
	struct chase_pos pos[CHASE_THREADS];	/* most recent first */
	unsigned n_pos;
};

struct chase *decode_chase(struct decoder *d);
struct chase *chase_new(void);
void chase_free(struct chase *c);
void chase_clear(struct chase *c);
/* One executed instruction IN (VI its facts) of THREAD (its fs_base; RSP
 * before it), the next pc NEXT: follow VEX's superblock and adjust EV (decode_step). */
void chase_step(struct decoder *d, struct chase *c, uint64_t thread,
		uint64_t rsp, const struct insn *in,
		const struct vex_insn *vi, uint64_t next,
		struct step_events *ev);
/* chase_step's common case, inline: the thread last followed, inside a
 * block of its superblock and not at that block's end, an instruction
 * VEX folds nothing around.  False: chase_step must take the step. */
static inline bool chase_step_inside(struct chase *ch, uint64_t thread,
				     uint64_t pc, const struct vex_insn *vi,
				     uint64_t next)
{
	struct chase_pos *c = &ch->pos[0];
	if (!ch->n_pos || c->thread != thread || !c->in_sb ||
	    pc != c->expect || vi->rep || vi->dead_if_chased ||
	    vi->rcx_effect != VEX_RCX_NONE)
		return false;
	const struct vex_superblock *sb = &ch->sbs[c->cur];
	uint32_t n = c->count + 1;
	switch (c->phase) {
	case PH_FIRST:
		if (n >= sb->n_first)
			return false;
		break;
	case PH_CHASED:
		if (vi->end != VEX_END_NONE || n >= sb->chase_max)
			return false;
		break;
	case PH_SPEC:
		if (n >= sb->n_spec)
			return false;
		break;
	default:
		return false;
	}
	c->count = n;
	c->expect = pc + vi->len;
	if (next != c->expect) {
		c->in_sb = false;
		c->lost = true;
	}
	return true;
}

/* Does [RSP] hold a return address right after a call rel32 to PC? */
bool decode_called_directly(struct decoder *d, uint64_t pc, uint64_t rsp);

/* native.c: set IN->native and fill NC from the instruction's bytes BUF
 * (N of them), once its record is complete: PLAIN when its class is one
 * explicit operand and nothing else (SC_GEN, no flag but RF_MEM), MEM when
 * that operand is in memory, of SIZE bytes and access KIND; NAMES_RSP when
 * Capstone lists rsp (esp, sp, spl) as a register operand. */
void native_classify(struct insn *in, struct native_code *nc, bool plain,
		     bool mem, uint32_t size, uint8_t kind, bool names_rsp,
		     const uint8_t *buf, size_t n);

/* ---- the decoder and its records (decode.c, decode_build.c,
 * decode_step.c) ---- */

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
	RF_DEAD_LOAD = 1 << 6,	/* pop reg or a plain load whose value VEX's
				 * iropt drops: no read */
	RF_DEAD_IF_CHASED = 1 << 7, /* ... when the jmp/call after it is
				 * chased in its superblock (chase.c) */
};

/* What an instruction does to rcx, for VEX's constant folding of a rep's
 * first rcx == 0 exit (decode_step). */
enum rcx_effect { RCX_NONE, RCX_WRITE, RCX_CONST };

enum str_op { STR_MOVS, STR_CMPS, STR_STOS, STR_LODS, STR_SCAS };

/* The xsave-family instructions VEX runs, each as its sequence of
 * accesses (decode_step.c, step_vex_xs) */
enum vex_xs { XS_NONE, XS_XSAVE, XS_FXSAVE, XS_XRSTOR, XS_FXRSTOR };

/* The last xsaves' areas and their components (edx:eax & 7), for an
 * xrstor of one: VEX's xsave ORs them into the header's XSTATE_BV, the
 * CPU's writes what is in use, and an xrstor's loads follow XSTATE_BV */
#define XS_RECENT 16

/* One cached instruction.  struct insn first: callers hold its address. */
struct drec {
	struct insn insn;
	struct decode_lean lean;	/* with insn.lean */
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
	uint8_t vex_xs;		/* enum vex_xs */
	/* general registers (bit N: number N) set to a constant VEX sees,
	 * or written otherwise; one copied into another (16: none); the
	 * register of a register-indirect branch (16: none) */
	uint16_t k_set, k_kill;
	uint8_t k_dst, k_src, ind_reg;
	/* ind_reg's last verdict: constant in the superblock entered at
	 * ind_entry (decode_step.c, folded_indirect) */
	uint64_t ind_entry;
	int8_t ind_const;
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
	/* decode_copy: the bytes, and where a rip-relative disp32 sits */
	bool copyable;
	uint8_t copy_disp;
	uint16_t gprs;		/* general registers it names or implies */
	uint8_t bytes[16];
	bool vol;		/* not fixed code: its bytes read again */
	uint64_t epoch;		/* the target's (decode_target.epoch), when
				 * they were */
};
_Static_assert(offsetof(struct drec, lean) == DECODE_LEAN_AT,
	       "decode_lean finds the templates at DECODE_LEAN_AT");

/* R's templates for decode_lean (decode_step.c): false when it is not
 * lean. */
bool lean_make(struct drec *r);

/* ADDR's page holds code decoded where it may change (decode.c) */
void decode_add_volatile_page(struct decoder *d, uint64_t addr);

#define DECODE_RECENT 4096	/* a power of two */

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
	/* The pages that hold code decoded where it may change (vol), an
	 * open-addressed set of page numbers + 1 (0: a free slot) */
	uint64_t *vpage;
	uint32_t n_vpage, cap_vpage;
	/* Records invalidated, not yet freed: a caller may still hold one
	 * (an emulator's pending steps, when a JIT's code changed under
	 * them), until decode_reclaim */
	struct drec **dead;
	uint32_t n_dead, cap_dead;
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
	uint64_t sb_entry;	/* where the superblock began */
	/* Changes when the superblocks' numbers do (decode_sb_get) */
	uint32_t sb_gen;
	bool allow_x87;		/* decode_allow_x87 */
	struct { uint64_t addr; uint8_t rfbm; } xs_recent[XS_RECENT];
	unsigned xs_next;
	/* VEX's superblock chasing (chase.c), NULL when off */
	struct chase *chase;
};

/* The pc -> record map's hash of record I (decode_build.c). */
uint64_t rec_hash(const void *ctx, uint32_t i);

#endif
