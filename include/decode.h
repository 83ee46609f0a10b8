/* x86-64 instruction decoding into memory accesses and branch outcomes.
 *
 * Capstone 4.0.2 decodes the bytes; our own semantics table, keyed by
 * Capstone instruction id, says what each instruction really accesses,
 * because Capstone's operand access flags are wrong for many of them
 * (../shared/DESIGN.md lists the cases).  An instruction is decoded once per
 * pc (decode_insn caches it); per step only effective addresses are
 * computed from the registers (decode_step).
 *
 * The accounting follows Cachegrind's, so counts can be compared with it:
 * see the rules at the top of src/decode/decode.c. */
#ifndef CT_DECODE_H
#define CT_DECODE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/user.h>

#include "access.h"

/* How control leaves an instruction. */
enum branch_kind {
	BR_NONE,		/* falls through (or rep string, see below) */
	BR_COND,		/* jcc, loop*, jrcxz: Bc */
	BR_JMP,			/* direct jmp: no event */
	BR_CALL,		/* direct call: no event */
	BR_JMP_IND,		/* jmp reg/mem: Bi */
	BR_CALL_IND,		/* call reg/mem: Bi */
	BR_RET,			/* ret: no event (Cachegrind does not predict it) */
	BR_OTHER,		/* syscall, int, iret...: no event */
};

/* What the decode cache keeps for one pc.  Read-only for callers; the
 * decoder embeds it as the first member of its own record (access
 * templates), which stays valid until decode_reclaim (after
 * decode_invalidate) or decode_free. */
struct insn {
	uint64_t pc;
	uint8_t len;		/* bytes; 0 when not even the length is known
				 * (neither Capstone nor our fallback decodes
				 * it): take it from the pc after the step */
	uint8_t branch;		/* enum branch_kind */
	uint8_t rep;		/* 0, or the rep kind of a string instruction:
				 * REP_PLAIN (movs/stos/lods/ins/outs),
				 * REP_E / REP_NE (cmps/scas) */
	bool needs_xstate : 1;	/* gather/scatter: vector registers needed */
	bool unknown : 1;		/* not in our semantics table: Ir only */
	bool emulable : 1;		/* on the emulation allow-list (allow.c) */
	bool native : 1;		/* not emulable, but may run on the
				 * supervisor's CPU (native.c, decode_native) */
	bool fpu : 1;		/* reads or writes x87/MMX/SSE state */
	bool writes_rsp : 1;	/* it may change rsp */
	bool lean : 1;		/* decode_lean has its templates */
	bool changes : 1;	/* its code is not fixed (decode_target.
				 * fixed): looked up by decode_insn each
				 * time, which reads it again when the
				 * target ran since */
	uint16_t undef_flags;	/* rflags bits it leaves undefined */
	uint16_t id;		/* Capstone instruction id */
	uint32_t regs_in;	/* the struct user_regs_struct fields (bit
				 * offsetof / 8) decode_step reads from its
				 * before-registers, besides rip, rsp and
				 * fs_base: an engine may read only these */
	uint32_t regs_out;	/* the same of its after-registers, besides
				 * rip: rsp when it may write it, rcx, rsi,
				 * rdi and rflags after a rep string, rcx
				 * after a loop */
	const char *text;	/* "mnemonic operands", for messages (in the
				 * record: what a step reads fits one line) */
	/* The fields a caller may write, zeroed when the record is made.
	 * USER: its own per-instruction pointer (the engine's cost row),
	 * with the generation the caller gives it meaning by.  NEXT: the
	 * emulator's links to the instructions that ran next (the fall
	 * through, the last other pc), valid while next_gen is the
	 * decoder's generation (decode_generation): they spare it a lookup
	 * per instruction.  The record is 64 bytes: one cache line. */
	uint32_t user_gen;
	uint32_t next_gen;
	void *user;
	const struct insn *next[2];
};

enum { REP_PLAIN = 1, REP_E, REP_NE };

/* insn.regs_in of an instruction whose registers are not listed. */
#define DECODE_REGS_ALL 0xffffffffu

/* At most this many accesses per step: a gather of 16 elements plus
 * stack traffic. */
#define DECODE_MAX_ACCESSES 40

/* What one trap did, in Cachegrind's order: one instruction fetch (two
 * when a rep string instruction with count >= 1 finishes: Cachegrind counts
 * its final rcx == 0 check as one more execution), the data accesses, then
 * the conditional branch outcomes (rep string instructions produce one to
 * three per trap, locked read-modify-writes one, as VEX translates them to
 * conditional exits; taken as Cachegrind records them: see decode.c). */
struct step_events {
	uint8_t n_fetch;		/* 1 or 2 */
	uint8_t n_cond;			/* 0..3 */
	bool cond_taken[3];
	bool indirect;			/* an indirect jmp/call executed */
	uint64_t ind_target;		/* its target: the pc after the step */
	uint16_t n_acc;
	struct mem_access acc[DECODE_MAX_ACCESSES];
	/* VEX's &&-idiom merge (chase.c): instructions that did NOT run but
	 * that Cachegrind counts, each one fetch into its own pc's row; the
	 * last is a conditional branch with one Bc, taken as SPEC_TAKEN. */
	uint8_t n_spec;			/* 0..VEX_SPEC_MAX */
	bool spec_taken;
	uint64_t spec_pc[3];
	uint8_t spec_len[3];
};

/* How the decoder reads the target.  The tracer supplies these. */
struct decode_target {
	void *ctx;
	/* Read LEN bytes at ADDR into BUF; returns the number of bytes read
	 * (may be short at the end of a mapping), or -errno. */
	ssize_t (*read_mem)(void *ctx, uint64_t addr, void *buf, size_t len);
	/* Fill BUF with the thread's XSAVE area (PTRACE_GETREGSET
	 * NT_X86_XSTATE, standard format); returns its length or -errno. */
	ssize_t (*read_xstate)(void *ctx, void *buf, size_t len);
	/* Optional, both or neither: false when the code at PC may change
	 * without the decoder's being told (decode_invalidate): a JIT's.
	 * What is decoded there is read again when EPOCH has moved (the
	 * target ran since), and decoded anew when its bytes changed. */
	bool (*fixed)(void *ctx, uint64_t pc);
	uint64_t (*epoch)(void *ctx);
};

struct decoder;

/* Returns NULL and sets *err to a static message on failure. */
struct decoder *decode_new(const struct decode_target *target, const char **err);
void decode_free(struct decoder *d);

/* The decoded instruction at PC, from the cache or decoded now.
 * NULL when the bytes cannot be read or decoded; *err then says why. */
const struct insn *decode_insn(struct decoder *d, uint64_t pc, const char **err);

/* How many pages hold code decoded where it may change (decode_target.
 * fixed false): 0 for a program with no JIT, so that an emulator needs
 * no look at its stores (a pointer into the decoder, read at will). */
const uint32_t *decode_volatile_pages(const struct decoder *d);
/* Free what decode_invalidate forgot: when nothing holds a record of it
 * any more (a window's start, when no other runs). */
void decode_reclaim(struct decoder *d);
/* Is ADDR in one of those pages?  A store there must make the target's
 * epoch move (an emulator's store into a JIT's page). */
bool decode_volatile_page(const struct decoder *d, uint64_t addr);

/* Forget cached instructions in [start, end) (exec, munmap, text writes):
 * decode_insn no longer gives them, and decode_reclaim frees them. */
void decode_invalidate(struct decoder *d, uint64_t start, uint64_t end);

/* Where the decoder keeps its generation: never 0, and changed whenever
 * decode_invalidate frees records (every pointer to one is then stale). */
const uint32_t *decode_generation(const struct decoder *d);

/* Call right before single-stepping INSN (the thread's rip == insn->pc),
 * and then decode_step for that same step before the next
 * decode_prepare.  A no-op unless insn->needs_xstate: then it snapshots
 * the vector registers, which decode_step uses, because gathers and
 * scatters clear their mask as they complete.  Returns 0, or a negative
 * errno when the xstate cannot be read (decode_step then reads the state
 * after the step, as it does without a snapshot). */
int decode_prepare(struct decoder *d, const struct insn *insn);

/* Fill EV with what INSN did in one trap, given the registers before the
 * trap (BEFORE, rip == insn->pc) and after it (AFTER).  Returns 0, or a
 * negative errno when the target could not be read (xstate). */
int decode_step(struct decoder *d, const struct insn *insn,
		const struct user_regs_struct *before,
		const struct user_regs_struct *after,
		struct step_events *ev);

/* ---- lean instructions: what a hook before one runs can account ----
 * A lean instruction's data accesses, at most two, are each at disp +
 * base + index * scale (+ fs_base or gs_base), base and index among the
 * sixteen general registers in the encoding's order (rax, rcx, rdx, rbx,
 * rsp, rbp, rsi, rdi, r8 .. r15; DECODE_LEAN_NONE: none) as they are
 * before it runs, of a size and kind known now; it is no rep string, needs
 * no vector state, and no register after it but rsp (insn.regs_out).  So
 * its accesses are computed from the registers before it, and its step
 * from them and the next pc, with decode_step's rules (the same function
 * makes both). */
#define DECODE_LEAN_NONE 16
struct lean_acc {
	int64_t disp;		/* rip-relative: the address itself */
	uint32_t size;
	uint8_t base, index;	/* 0..15, or DECODE_LEAN_NONE */
	uint8_t scale;
	uint8_t seg;		/* 0, 1 fs, 2 gs */
	uint8_t kind;		/* enum access_kind */
};
struct decode_lean {
	uint8_t n_acc;		/* 0..2 */
	struct lean_acc acc[2];
};

/* INSN's accesses as templates, or NULL when it is not lean: the
 * decoder's record keeps them right after the struct insn. */
#define DECODE_LEAN_AT 64
static inline const struct decode_lean *decode_lean(const struct insn *insn)
{
	return insn->lean ? (const struct decode_lean *)
			    (const void *)((const char *)insn + DECODE_LEAN_AT) :
			    NULL;
}

/* Where template A points with the sixteen registers GPR (encoding
 * order) and the segment bases FS and GS. */
static inline uint64_t decode_lean_addr(const struct lean_acc *a,
					const uint64_t *gpr, uint64_t fs,
					uint64_t gs)
{
	uint64_t v = (uint64_t)a->disp;
	if (a->base != DECODE_LEAN_NONE)
		v += gpr[a->base];
	if (a->index != DECODE_LEAN_NONE)
		v += gpr[a->index] * a->scale;
	if (a->seg)
		v += a->seg == 1 ? fs : gs;
	return v;
}

/* The events of lean INSN (L its templates) from its accesses' addresses
 * ADDR (L->n_acc of them) and the pc after it NEXT, before VEX's
 * superblocks (decode_step_lean adds those): what decode_step gives for
 * the same step.  The model thread rebuilds a lean step's events so. */
void decode_lean_events(const struct insn *insn, const struct decode_lean *l,
			const uint64_t *addr, uint64_t next,
			struct step_events *ev);

/* decode_step for lean INSN: decode_lean_events, then VEX's superblock
 * (its thread's fs_base FS, rsp before it RSP).  Returns true when EV is
 * still what decode_lean_events alone gives (no merged instructions, no
 * access or exit folded away). */
bool decode_step_lean(struct decoder *d, const struct insn *insn,
		      const struct decode_lean *l, const uint64_t *addr,
		      uint64_t fs, uint64_t rsp, uint64_t next,
		      struct step_events *ev);

/* Where VEX's superblock stands for the thread whose fs_base is FS, as
 * a value: from two equal states the same steps go the same way.  For an
 * engine that accounts a block of lean instructions once and then only
 * replays it (account.c). */
struct decode_sbstate {
	uint64_t w[4];
};
/* False when the state is more than a value: the thread's position lost
 * (the next step reads its stack) or not the one followed last. */
bool decode_sb_get(struct decoder *d, uint64_t fs,
		   struct decode_sbstate *s);
/* Put back a state decode_sb_get gave, for the same thread FS. */
void decode_sb_set(struct decoder *d, uint64_t fs,
		   const struct decode_sbstate *s);

/* LANDED is where INSN can take a thread from BEFORE in one step: the
 * fall through, its branch target, the return address, or its own pc
 * (nothing completed).  Indirect jumps and calls, int, iret and the like
 * are not checked.  False means the CPU ran more than INSN. */
bool decode_lands_ok(struct decoder *d, const struct insn *insn,
		     const struct user_regs_struct *before, uint64_t landed);

/* An instruction with insn.native: its bytes with the memory operand made
 * [rip + disp32] (src/decode/native.c), to run on the supervisor's CPU
 * with the thread's registers loaded and the operand's bytes copied next
 * to the code. */
struct native_code {
	uint8_t len;		/* bytes */
	uint8_t disp_off;	/* where the disp32 goes, when mem */
	bool mem;		/* it has the memory operand */
	uint8_t kind;		/* its access kind (enum access_kind) */
	uint32_t size;		/* its bytes: at most 64 */
	uint8_t bytes[16];
};
/* INSN's native code; NULL unless insn.native. */
const struct native_code *decode_native(const struct insn *insn);
/* The address of INSN's explicit memory operand with registers REGS. */
uint64_t decode_mem_addr(const struct insn *insn,
			 const struct user_regs_struct *regs);

/* INSN's bytes, to be copied elsewhere (the instrument engine's code
 * cache): true with its bytes, where its rip-relative disp32 sits in
 * them (0: it has none; a copy must make it reach the same address) and
 * the general registers it reads or writes, implicitly too (bit i:
 * encoding number i); false when the decoder cannot say (Capstone did not
 * decode it). */
bool decode_copy(const struct insn *insn, const uint8_t **bytes,
		 unsigned *disp_off, uint16_t *gprs);

/* A string instruction (movs, cmps, stos, lods, scas; with or without a
 * rep prefix): true with its element's bytes and whether it goes through
 * rsi and through rdi.  False for any other (SSE2's movsd and cmpsd, to
 * which Capstone gives the string instructions' ids, among them) and for
 * one with 32-bit addressing. */
bool decode_string(const struct insn *insn, unsigned *esize, bool *si,
		   bool *di);
/* A string instruction whose rep ends on the flags too (cmps, scas). */
bool decode_string_cond(const struct insn *insn);
/* An xsave-family instruction: its components are edx:eax's (& XCR0). */
bool decode_xsave_family(const struct insn *insn);

/* Where general register NUM (encoding order: 0 rax .. 15 r15) lives in
 * struct user_regs_struct, counted in 64-bit words. */
unsigned decode_gpr_slot(unsigned num);

/* A direct jmp, call or jcc's destination. */
uint64_t decode_branch_target(const struct insn *insn);

/* Put x87 arithmetic on the emulation allow-list (off: QEMU's status word
 * differs from the CPU's; lockstep shows where).  Before any decode. */
void decode_allow_x87(struct decoder *d, bool on);
/* ---- VEX's superblock chasing (src/decode/chase.c) ----
 * valgrind's default --vex-guest-chase=yes: VEX follows one direct jmp or
 * call into the next block, or merges an "A && B" pair of conditional
 * branches.  decode_set_chase(d, true) makes decode_step follow the same
 * superblocks (the speculative instructions come back in step_events'
 * spec fields); off, superblocks end at every branch (chase=no). */
#define VEX_GUEST_MAX_INSNS 60	/* instructions per superblock */
#define VEX_SPEC_MAX 3		/* instructions per speculated block */
void decode_set_chase(struct decoder *d, bool on);

/* The superblock VEX builds from ENTRY, for tests and messages. */
struct vex_superblock {
	uint64_t entry;
	uint32_t n_first;	/* instructions of the first block */
	uint64_t first_last;	/* pc of its last instruction */
	uint8_t kind;		/* enum vex_sb_kind */
	uint64_t chase_to;	/* VEX_SB_CHASE: the block chased into */
	uint32_t chase_max;	/* ... with at most this many instructions */
	uint64_t spec;		/* VEX_SB_AND: the merged (guarded) block */
	uint8_t n_spec;		/* its instructions, ending in a jcc */
	uint64_t other;		/* the first branch's other destination */
	bool spec_to_other_taken; /* the merged jcc's taken target is OTHER */
};
enum vex_sb_kind { VEX_SB_PLAIN, VEX_SB_CHASE, VEX_SB_AND };

/* Fill SB with the superblock VEX builds from ENTRY (cached); false when
 * the entry cannot be decoded.  Needs decode_set_chase(d, true). */
bool decode_superblock(struct decoder *d, uint64_t entry,
		       struct vex_superblock *sb);

/* Number of distinct pcs cached (for memory accounting and tests). */
size_t decode_cached_count(const struct decoder *d);

#endif
