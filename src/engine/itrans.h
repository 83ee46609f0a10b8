/* The instrument engine's translator (itrans.c): blocks of the target's
 * code copied into a code cache inside the target, each instruction's
 * data addresses written to a ring as it runs.  No ptrace here: the
 * translator writes through the supervisor's mapping of the cache and
 * knows the target's addresses of the cache, the ring and the thread's
 * slot (its gs base), and the distance from the ring to its shadow.
 *
 * A block's code, for instructions I0..In-1 (all of them lean: their
 * accesses are decode_lean's templates over the registers before them):
 *
 *	mov gs:[ST], rT            the cursor's register, spilled
 *	mov rT, gs:[CUR]           the ring's cursor
 *	mov gs:[PRCX], rcx         is the ring full?  The shadow's byte
 *	movzx ecx, byte [rT + REC + SHADOW]   for the record's end: 0 in
 *	jrcxz ok                   room, 1 past the ring's last page;
 *	mov rcx, gs:[PRCX]         full: the original state back, and
 *	mov rT, gs:[ST]            out through the fill exit, whose stub
 *	jmp fill                   goes on to the block's own pc
 *    ok:
 *	mov rcx, gs:[PRCX]
 *	mov qword [rT], ID         the record: the block's number...
 *	for each access of Ii:     ...then every access's address
 *	    mov gs:[SS], rS; lea rS, [template]; mov [rT + 8k], rS;
 *	    mov rS, gs:[SS]
 *	Ii, copied (a rip-relative displacement moved)
 *	lea rT, [rT + REC]; mov gs:[CUR], rT; mov rT, gs:[ST]
 *	the end: a jcc and a jmp, a jmp, or a call's push and jmp, each to
 *	    a linked block or to an exit stub for the supervisor
 *
 * rT is a register no instruction of the block names or implies, never
 * rcx; rS one that its instruction does not.  A full ring stops the
 * thread at a system call (the fill exit's stub), as every exit does,
 * never at a fault: a stop its supervisor did not collect before it died
 * is then a system call's, which the kernel lets go harmlessly, where a
 * fault's signal would be delivered (and kill the target).  Flags, the
 * stack and the red zone are untouched (mov and lea only); a direct call
 * pushes the original return address.  A record is 8 bytes of block
 * number, then 8 per access in order; an fs: access is logged without
 * fs's base (the supervisor adds it).  The epilogue sits after the last
 * instruction's accesses and before its copy when that is the block's
 * branch. */
#ifndef CT_ITRANS_H
#define CT_ITRANS_H

#include <stdbool.h>
#include <stdint.h>
#include <stddef.h>

#include "decode.h"

/* The thread's slot, at its gs base. */
#define ISLOT_CUR 0		/* the ring's cursor (target address) */
#define ISLOT_ST 8		/* rT's spill */
#define ISLOT_SS 16		/* rS's spill */
#define ISLOT_RAX 24		/* a return's lookup: rax, rcx spilled, */
#define ISLOT_RCX 32
#define ISLOT_TGT 40		/* and where it goes */
#define ISLOT_XRAX 48		/* an exit stub's: rax, rcx, r11 */
#define ISLOT_XRCX 56
#define ISLOT_XR11 64
#define ISLOT_SRCX 72		/* a string instruction's rcx, rsi, rdi */
#define ISLOT_SRSI 80		/* before it (itrans_solo), in that */
#define ISLOT_SRDI 88		/* order: a record's first three words */
#define ISLOT_PRCX 96		/* rcx, through the ring-full check */
/* The returns' table: entry i (16 bytes: the original pc, the cache
 * address) for a return address whose low 16 bits are i. */
#define ISLOT_TBL 4096
#define ISLOT_TBL_N 65536
/* The table's entry for PC: its low 16 bits, so that no two places of
 * any 64 KiB of code share one (a large function's jumps and returns
 * among its own parts, CPython's eval loop).  Any mix of higher bits
 * would break that where code crosses a 64 KiB boundary, for what it
 * buys: destinations 64 KiB apart met in turn (sqlite's calls through
 * pointers), which each block's own last destination takes instead
 * (itrans_site_set). */
static inline uint32_t itrans_tbl_index(uint64_t pc)
{
	return (uint32_t)pc & (ISLOT_TBL_N - 1);
}
#define ISLOT_SIZE (ISLOT_TBL + 16 * ISLOT_TBL_N)

#define IBLOCK_MAX 48		/* instructions a block */

/* An exit stub: rax, rcx and r11 to the slot (XRAX...), mov eax,
 * ITRANS_STUB_NR; syscall; the three back; jmp to the original pc it goes
 * to (the state there is the original's).  The supervisor runs the
 * thread with PTRACE_SYSEMU: it stops at the stub's system call, which
 * never runs, ITRANS_STUB_SC bytes into the stub, and takes the exit.
 * A thread that meets a stub when no supervisor is there any more (kill
 * -9 of cachetrace) makes a getpid and goes on natively by itself.
 *
 * What a thread found in the cache after cachetrace's death may need
 * besides (the guardian, src/tracer/guard.c, which knows no blocks):
 * every block's code is preceded by this header: its pc, and rT. */
#define ITRANS_MAGIC 0x31627463u	/* "ctb1" */
#define ITRANS_HDR 16
#define ITRANS_STUB 75
#define ITRANS_STUB_SC 34	/* the pc after its syscall */
#define ITRANS_STUB_NR 39	/* SYS_getpid */
struct itrans_hdr {
	uint32_t magic;
	uint8_t rt;
	uint8_t pad[3];
	uint64_t pc;
};

enum iend {
	IEND_FALL,		/* runs on to exit[0] (a cap, or an
				 * instruction the cache does not run) */
	IEND_STR,		/* one string instruction, with or without a
				 * rep prefix, then on to exit[0]: its record
				 * is rcx, rsi, rdi before it and after it,
				 * and for cmps and scas a byte: ZF after */
	IEND_JMP,		/* a direct jmp to exit[0] */
	IEND_JCC,		/* taken: exit[0], else exit[1] */
	IEND_CALL,		/* a direct call of exit[0] */
	IEND_SOLO,		/* one string instruction alone, then exit[0]'s
				 * int3: no record (itrans_solo) */
	IEND_RET,		/* a return: to the block the table gives for
				 * the return address, else to exit[0], a
				 * miss (its target: the ret's own pc) */
	IEND_IJMP,		/* an indirect jmp, and */
	IEND_ICALL,		/* call: the same, the destination in the
				 * slot's TGT at a miss (the call's push not
				 * done) */
};

struct iexit {
	uint64_t target;	/* the original pc it goes to */
	uint32_t site;		/* cache offset of the rel32 to patch */
	uint32_t stub;		/* cache offset of its stub */
	bool linked;
	bool ret_miss;		/* a return the table did not know: the
				 * supervisor finishes it (never linked) */
	bool ind_miss;		/* the same of an indirect jmp or call */
	bool fill;		/* the ring is full: to the block's own pc,
				 * after the supervisor read it (never
				 * linked) */
};

/* Where a cache pc is, for a thread stopped there (a signal, a fault):
 * itrans_locate. */
struct ipos {
	const struct iblock *b;
	unsigned done;		/* instructions of it that completed */
	uint64_t pc;		/* the original pc it stands at */
	/* the record's base is in rT (rt_live), or rT holds base + REC
	 * (rt_bumped), or the slot's cursor is already base + REC
	 * (cur_bumped); rT's and rS's values are in their slots */
	bool rt_live, rt_bumped, cur_bumped, rt_spilled, rs_spilled;
	int8_t rs;		/* the rS in use, or -1 */
	bool rsp_pushed;	/* a call's push has lowered rsp by 8 */
	bool rsp_popped;	/* a return's lookup has raised it by 8 */
	bool rax_spilled, rcx_spilled;	/* a return's lookup holds them in
					 * their slots */
	bool xrax, xrcx, xr11;		/* an exit's stub holds them in
					 * XRAX, XRCX, XR11 */
	uint8_t stub;			/* that exit's number */
	bool prcx_spilled;	/* the ring-full check holds rcx in PRCX */
	bool solo_begun;	/* a string instruction alone has begun: its
				 * rcx, rsi and rdi before it in the slot
				 * (done: it completed) */
};

struct iblock {
	uint64_t pc;		/* its original entry */
	uint32_t id;		/* its number: the record's first word */
	uint32_t off, end;	/* its code in the cache: [off, end) */
	uint16_t n;		/* instructions */
	uint16_t n_addr;	/* addresses in its record */
	uint8_t kind;		/* enum iend */
	uint8_t rt;		/* the cursor's register */
	uint8_t n_exit;		/* the last: the fill exit (not a string
				 * instruction alone's) */
	struct iexit exit[3];
	const struct insn *in[IBLOCK_MAX];
	/* cache offsets: the ring-full check's rcx spill (rT holds the
	 * cursor from there), its shadow load, its full path (rcx then rT
	 * back, the jmp; then ok); per instruction, where its accesses'
	 * code and its copy begin; the epilogue's four points */
	uint32_t probe, chk, full;
	uint32_t pre[IBLOCK_MAX], copy[IBLOCK_MAX];
	uint8_t rs[IBLOCK_MAX];		/* its rS (16: no access) */
	uint32_t ep_lea, ep_cur, ep_rest, ep_done;
	uint32_t push_lea;		/* a call's push */
	uint32_t r_spill, r_lea, r_jmp;	/* a return's lookup: rax's spill,
					 * the pop of rsp (an indirect
					 * call's push), the last jmp */
	uint32_t r_site;		/* its own last destination: its
					 * pc, then its code (0: none) */
};

struct itrans;

/* A translator writing a cache of SIZE bytes at LOCAL, which the target
 * sees at BASE; its blocks are numbered from ID_BASE on.  The ring's
 * shadow (a byte for each of the ring's: 0 where a record may end, 1 in
 * the page past it) is SHADOW bytes above the ring's own. */
struct itrans *itrans_new(uint8_t *local, uint64_t base, size_t size,
			  uint32_t id_base, int32_t shadow);
void itrans_free(struct itrans *x);
/* Whether the code at [PC, PC + LEN) may be copied (a page the target
 * cannot write: a copy of code it rewrites would go stale); without a
 * check, all may. */
void itrans_code_check(struct itrans *x,
		       bool (*ok)(void *ctx, uint64_t pc, unsigned len),
		       void *ctx);
/* Forget every block (the decoder freed records, the stop pc moved). */
void itrans_reset(struct itrans *x);

/* The block at PC, translated now if need be, its exits linked to the
 * blocks there are.  Translation stops before any of STOPS (the
 * windows' stop pcs: ITRANS_STOPS of them, 0 where none; NULL: none).
 * NULL when PC's own instruction does not run from the cache (*WHY says
 * why; not an error: the supervisor steps it) or the cache is full (*WHY
 * too; itrans_reset and try again). */
#define ITRANS_STOPS 8
const struct iblock *itrans_block(struct itrans *x, struct decoder *d,
				  uint64_t pc, const uint64_t *stops,
				  const char **why);
static inline bool itrans_is_stop(const uint64_t *stops, uint64_t pc)
{
	for (unsigned i = 0; stops && i < ITRANS_STOPS; i++)
		if (stops[i] == pc)
			return true;
	return false;
}
/* A string instruction (movs, stos, lods, cmps, scas, with or without a
 * rep prefix) alone in the cache, after stores of its rcx, rsi and rdi
 * to the slot (ISLOT_SRCX...) and before an exit: the supervisor
 * accounts its iterations, run at the CPU's pace, from those and the
 * registers at the exit.  Blocks' exits to its pc are linked to it.
 * NULL (*WHY) when IN cannot be copied. */
const struct iblock *itrans_solo(struct itrans *x, const struct insn *in,
				 const char **why);
/* Is IN a string instruction itrans_solo takes? */
bool itrans_is_string(const struct insn *in);
/* The target address of B's code. */
uint64_t itrans_entry(const struct itrans *x, const struct iblock *b);
/* The block numbered ID (a record's first word); NULL if none. */
const struct iblock *itrans_by_id(const struct itrans *x, uint64_t id);
/* Where the system call of block B's exit J's stub returns to (the pc
 * after it), a target address. */
uint64_t itrans_stub_sc(const struct itrans *x, const struct iblock *b,
			unsigned j);
/* The exit whose stub's system call returns to target address ADDR (a
 * thread's pc at its PTRACE_SYSEMU stop); NULL if none.  *B gets its
 * block. */
const struct iexit *itrans_exit_at(const struct itrans *x, uint64_t addr,
				   const struct iblock **b);
/* Where target address RIP stands in the cache: false when it is not in
 * a block's code. */
bool itrans_locate(const struct itrans *x, uint64_t rip, struct ipos *pos);
/* Exit E of block B goes to ADDR, the entry of a block of another cache,
 * from now on: false when a jump from B's cache does not reach it. */
bool itrans_link_far(struct itrans *x, const struct iblock *b,
		     const struct iexit *e, uint64_t addr);
/* Block B's return or indirect branch, which went to PC, goes to block TO
 * of cache TOX straight from now on, before any look in the table (two
 * hot destinations that share the table's entry took each other's place
 * there at every pass: each pass left the cache). */
void itrans_site_set(const struct itrans *x, const struct iblock *b,
		     uint64_t pc, const struct itrans *tox,
		     const struct iblock *to);
/* A return to PC goes to B from now on (TABLE: the slot's table, in the
 * supervisor's memory). */
void itrans_ret_add(const struct itrans *x, uint8_t *table, uint64_t pc,
		    const struct iblock *b);
/* How many blocks and bytes, for messages. */
void itrans_usage(const struct itrans *x, unsigned *blocks, size_t *bytes);

/* Exposed for the tests: why INSN cannot run from the cache, or NULL. */
const char *itrans_refuse(const struct insn *in);

#endif
