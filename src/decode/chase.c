/* VEX's superblocks with chasing (valgrind's default --vex-guest-chase=yes),
 * so that decode_step charges what Cachegrind charges.
 *
 * The rules, as valgrind 3.19's VEX/priv/guest_generic_bb_to_IR.c builds a
 * translation (bb_to_IR, with analyse_block_end and
 * disassemble_basic_block_till_stop):
 *
 * - A translation starts where execution enters one: the destination of
 *   the previous translation's exit.  Its first block runs from there to
 *   the first instruction that stops the block (any jump, call, return,
 *   syscall, rep string, pause...) or to 60 instructions
 *   (LibVEX_default_VexControl's guest_max_insns; valgrind's --help says
 *   50, but nothing changes the 60).
 * - The budget left is 60 minus the first block's instructions; with
 *   fewer than 3 left nothing is chased.
 * - The first block's end is analysed (analyse_block_end): a direct jmp
 *   or call (Ijk_Boring / Ijk_Call to a constant, no other exit in that
 *   instruction), or the 60-instruction cut, is "Uncond"; a jcc, loop or
 *   jrcxz is "Cond" (taken target, fall-through); anything else "Other".
 * - Uncond: the destination's block is disassembled (at most the budget)
 *   and appended, and then bb_to_IR's loop stops: after an unconditional
 *   chase the `else break` ends the superblock, so a superblock chases at
 *   most once.
 * - Cond: both destinations are disassembled as blocks of at most 3
 *   instructions (instrs_avail_spec) and analysed.  The "&&" idiom holds
 *   when one of them, X, ends in a Cond one of whose destinations is the
 *   first branch's other destination, Y; when the blocks do not form a
 *   loop (X or Y definitely does not jump to the other's start:
 *   definitely_does_not_jump_to_delta, "Other" never counts as definite);
 *   when no branch has equal destinations; and when every statement of X
 *   but its final exit is guardable (block_is_guardable: no load, store,
 *   dirty helper, CAS, fence or trapping division: register-only
 *   instructions).  Then the first branch's exit is removed, X's
 *   statements are appended guarded by it, X's IMarks unguarded, and X's
 *   exit guarded by And1(first, X's own); the superblock ends there.
 *   Either way bb_to_IR stops after a Cond.
 *
 * What Cachegrind counts in such a merged superblock (cg_main.c
 * instruments every IMark and every Boring Ist_Exit of the optimised IR):
 * the first branch A has no Bc at all; X's instructions are fetched every
 * time A runs, whether it went to X or to Y (into X's own cost rows); X's
 * jcc has one Bc every time A runs.  When A went to Y, that Bc's outcome
 * is the And1 guard, or its inverse when the exit's destination is X's
 * fall-through: it comes out as "taken" exactly when Y is X's taken
 * target.  When A went to X, X runs natively and is counted as usual.
 *
 * A `pop reg` whose value the chased block overwrites before reading it
 * (and before any exit) has no load: iropt's redundant-Put removal sees
 * the whole superblock (decode_build.c's pop_value_dead follows the jmp or call,
 * and the load goes only when this superblock really chases it).
 *
 * A rep string whose count is a constant in the superblock (mov ecx, imm
 * or xor ecx, ecx on the path from the entry, through a chased jmp or call
 * too) loses its first Exit(rcx == 0): the rule of decode.c, with these
 * superblock boundaries.
 *
 * The steps follow the superblock built from where they entered it: the
 * next step must be at the pc the superblock executes next, or a new one
 * starts there.  Each thread (told apart by its fs_base) has its own
 * position.
 * Superblocks are built once per entry pc and cached; decode_invalidate
 * drops them all.
 *
 * Not modelled (none seen on the tests/real libraries): chase_into_ok's
 * refusals (redirected addresses, for Cachegrind only the vsyscall page;
 * destinations outside executable mappings); Dis_HintVerbose (FMA,
 * pcmpxstrx) halving the budget; an SSE alignment check's SIGSEGV exit
 * inside a 3-instruction block; constants carried across a chase into a
 * jcc's flags (only a rep's count is followed).
 *
 * Where the steps lose VEX's thread (a window's first step, a signal),
 * the next superblock's entry is not known.  At a direct call's
 * destination (the return address on the stack follows a call rel32 to
 * this pc), as when a window starts at a function, the block is taken as
 * chased from the caller's superblock (under valgrind the caller's block
 * usually chased the call): it ends at its first stop and merges
 * nothing. */
#include "decode_private.h"
#include "hashtab.h"

#include <stdlib.h>
#include <string.h>

#include "error.h"

/* analyse_block_end's verdict on a block's last instruction. */
enum blk_end { BE_OTHER, BE_UNCOND, BE_COND };

struct blk {
	uint64_t start, last;
	uint32_t n;
	uint8_t end;		/* enum blk_end */
	uint64_t dst;		/* BE_UNCOND */
	uint64_t taken, fall;	/* BE_COND */
	bool guardable;		/* every instruction but the last */
};

static unsigned recent_of(uint64_t entry)
{
	return (unsigned)((entry ^ (entry >> 10)) & (CHASE_RECENT - 1));
}

struct chase *chase_new(void)
{
	return xcalloc(1, sizeof(struct chase));
}

void chase_clear(struct chase *c)
{
	c->n = 0;
	c->n_pos = 0;
	hashtab_clear(&c->map);
}

/* THREAD's position, moved to the front (a new one starts outside any
 * superblock). */
static struct chase_pos *thread_pos(struct chase *c, uint64_t thread)
{
	unsigned i = 0;
	while (i < c->n_pos && c->pos[i].thread != thread)
		i++;
	if (i == 0 && c->n_pos)
		return &c->pos[0];
	struct chase_pos p = { .thread = thread, .lost = true };
	if (i < c->n_pos)
		p = c->pos[i];
	else if (c->n_pos < CHASE_THREADS)
		c->n_pos++;
	else
		i = CHASE_THREADS - 1;	/* drop the least recent */
	memmove(&c->pos[1], &c->pos[0], i * sizeof(c->pos[0]));
	c->pos[0] = p;
	return &c->pos[0];
}

void chase_free(struct chase *c)
{
	free(c->sbs);
	hashtab_free(&c->map);
	free(c);
}

/* disassemble_basic_block_till_stop with at most LIMIT instructions, then
 * analyse_block_end.  False when not even the first can be decoded. */
static bool scan_block(struct decoder *d, uint64_t start, uint32_t limit,
		       struct blk *b)
{
	struct vex_insn vi;
	uint64_t pc = start;

	memset(b, 0, sizeof(*b));
	b->start = start;
	b->guardable = true;
	b->end = BE_OTHER;
	for (;;) {
		if (!decode_vex_insn(d, pc, &vi))
			return b->n > 0;	/* VEX would go on: unknown */
		b->n++;
		b->last = pc;
		if (vi.end != VEX_END_NONE) {
			if (vi.end == VEX_END_COND) {
				b->end = BE_COND;
				b->taken = vi.target;
				b->fall = pc + vi.len;
			} else if (vi.end == VEX_END_JMP || vi.end == VEX_END_CALL) {
				b->end = BE_UNCOND;
				b->dst = vi.target;
			}
			return true;
		}
		if (!vi.guardable)
			b->guardable = false;
		pc += vi.len;
		if (b->n == limit) {
			/* cut: the next instruction is a constant next,
			 * unless the last instruction has a side exit */
			if (!vi.exit_inside) {
				b->end = BE_UNCOND;
				b->dst = pc;
			}
			return true;
		}
	}
}

/* !definitely_does_not_jump_to_delta */
static bool may_jump_to(const struct blk *b, uint64_t to)
{
	switch (b->end) {
	case BE_UNCOND:
		return b->dst == to;
	case BE_COND:
		return b->taken == to || b->fall == to;
	default:
		return true;
	}
}

/* The "&&" idiom after a first block ending in a Cond to TAKEN / FALL. */
static void try_and_idiom(struct decoder *d, uint64_t taken, uint64_t fall,
			  struct vex_superblock *sb)
{
	struct blk sx, ft;

	if (!scan_block(d, taken, VEX_SPEC_MAX, &sx))
		sx.end = BE_OTHER;
	if (!scan_block(d, fall, VEX_SPEC_MAX, &ft))
		ft.end = BE_OTHER;
	if (sx.end != BE_COND && ft.end != BE_COND)
		return;
	if (may_jump_to(&sx, fall) && may_jump_to(&ft, taken))
		return;		/* they might form a loop */
	if (taken == fall || (sx.end == BE_COND && sx.taken == sx.fall) ||
	    (ft.end == BE_COND && ft.taken == ft.fall))
		return;
	const struct blk *x;
	uint64_t other;
	if (sx.end == BE_COND && (sx.fall == fall || sx.taken == fall)) {
		x = &sx;
		other = fall;
	} else if (ft.end == BE_COND && (ft.fall == taken || ft.taken == taken)) {
		x = &ft;
		other = taken;
	} else {
		return;
	}
	if (!x->guardable)
		return;
	sb->kind = VEX_SB_AND;
	sb->spec = x->start;
	sb->n_spec = (uint8_t)x->n;
	sb->other = other;
	sb->spec_to_other_taken = x->taken == other;
}

static bool build(struct decoder *d, uint64_t entry, struct vex_superblock *sb)
{
	struct blk b;

	memset(sb, 0, sizeof(*sb));
	sb->entry = entry;
	if (!scan_block(d, entry, VEX_GUEST_MAX_INSNS, &b))
		return false;
	sb->n_first = b.n;
	sb->first_last = b.last;
	sb->kind = VEX_SB_PLAIN;
	uint32_t budget = VEX_GUEST_MAX_INSNS - b.n;
	if (budget < 3)
		return true;
	if (b.end == BE_UNCOND) {
		sb->kind = VEX_SB_CHASE;
		sb->chase_to = b.dst;
		sb->chase_max = budget;
	} else if (b.end == BE_COND) {
		try_and_idiom(d, b.taken, b.fall, sb);
	}
	return true;
}

static uint64_t sb_hash(const void *ctx, uint32_t i)
{
	const struct chase *c = ctx;
	return hash_u64(c->sbs[i].entry);
}

/* The index of ENTRY's superblock, built now if need be, or UINT32_MAX. */
static uint32_t lookup(struct decoder *d, struct chase *c, uint64_t entry)
{
	struct hashtab_probe p;
	uint32_t *rc = &c->recent[recent_of(entry)];
	if (*rc < c->n && c->sbs[*rc].entry == entry)
		return *rc;
	for (uint32_t i = hashtab_first(&c->map, hash_u64(entry), &p);
	     i != HASHTAB_NONE; i = hashtab_next(&c->map, &p))
		if (c->sbs[i].entry == entry)
			return *rc = i;
	struct vex_superblock sb;
	if (!build(d, entry, &sb))
		return UINT32_MAX;
	/* build decodes, which never touches this map: P still holds */
	if (c->n == c->cap) {
		c->cap = c->cap ? c->cap * 2 : 256;
		c->sbs = xreallocarray(c->sbs, c->cap, sizeof(*c->sbs));
	}
	c->sbs[c->n] = sb;
	hashtab_insert(&c->map, &p, c->n, sb_hash, c);
	*rc = c->n;
	return c->n++;
}

bool decode_superblock(struct decoder *d, uint64_t entry,
		       struct vex_superblock *sb)
{
	decode_set_chase(d, true);
	struct chase *c = decode_chase(d);
	uint32_t i = lookup(d, c, entry);
	if (i == UINT32_MAX)
		return false;
	*sb = c->sbs[i];
	return true;
}

/* A merged superblock whose first branch went to OTHER: X did not run,
 * Cachegrind counts its fetches and its jcc's Bc. */
static void speculate(struct decoder *d, const struct vex_superblock *sb,
		      struct step_events *ev)
{
	struct vex_insn vi;
	uint64_t pc = sb->spec;

	for (uint8_t i = 0; i < sb->n_spec; i++) {
		if (!decode_vex_insn(d, pc, &vi))
			return;
		ev->spec_pc[ev->n_spec] = pc;
		ev->spec_len[ev->n_spec] = vi.len;
		ev->n_spec++;
		pc += vi.len;
	}
	ev->spec_taken = sb->spec_to_other_taken;
}

void chase_step(struct decoder *d, struct chase *ch, uint64_t thread,
		uint64_t rsp, const struct insn *in,
		const struct vex_insn *vip, uint64_t next,
		struct step_events *ev)
{
	struct chase_pos *c = thread_pos(ch, thread);
	const struct vex_insn vi = *vip;
	uint64_t pc = in->pc;

	if (c->in_sb && pc != c->expect)
		c->lost = true;		/* a signal, a window's start... */
	if (!c->in_sb || pc != c->expect) {
		c->in_sb = true;
		c->count = 0;
		c->rcx_const = false;
		if (c->lost && decode_called_directly(d, pc, rsp)) {
			/* a window starting at a function: under valgrind
			 * the caller's superblock chased the call */
			c->phase = PH_CALLEE;
		} else {
			uint32_t i = lookup(d, ch, pc);
			if (i == UINT32_MAX) {
				c->in_sb = false;
				c->lost = true;
				return;
			}
			c->cur = i;
			c->phase = PH_FIRST;
		}
		c->lost = false;
	}
	c->count++;
	if (c->phase == PH_CALLEE) {
		/* the caller's block took at least its call of the 60 */
		c->expect = pc + vi.len;
		if (vi.end != VEX_END_NONE || c->count >= VEX_GUEST_MAX_INSNS - 1 ||
		    next != c->expect)
			c->in_sb = false;
		return;
	}
	const struct vex_superblock *sb = &ch->sbs[c->cur];
	if (vi.dead_if_chased && c->phase == PH_FIRST &&
	    sb->kind == VEX_SB_CHASE && ev->n_acc == 1)
		ev->n_acc = 0;	/* the pop's load: dead in the chased block */
	if (vi.rep && c->rcx_const && ev->n_cond > 0) {
		ev->n_cond--;
		memmove(&ev->cond_taken[0], &ev->cond_taken[1],
			ev->n_cond * sizeof(ev->cond_taken[0]));
	}
	if (vi.rcx_effect == VEX_RCX_CONST)
		c->rcx_const = true;
	else if (vi.rcx_effect == VEX_RCX_WRITE)
		c->rcx_const = false;

	bool ends = false;
	switch (c->phase) {
	case PH_FIRST:
		if (c->count < sb->n_first)
			break;
		if (sb->kind == VEX_SB_CHASE) {
			c->phase = PH_CHASED;
			c->count = 0;
		} else if (sb->kind == VEX_SB_AND) {
			ev->n_cond = 0;		/* A's exit is gone */
			if (next == sb->spec) {
				c->phase = PH_SPEC;
				c->count = 0;
			} else {
				speculate(d, sb, ev);
				ends = true;
			}
		} else {
			ends = true;
		}
		break;
	case PH_CHASED:
		ends = vi.end != VEX_END_NONE || c->count >= sb->chase_max;
		break;
	case PH_SPEC:
		ends = c->count >= sb->n_spec;
		break;
	default:
		ends = true;
		break;
	}
	if (ends) {
		c->in_sb = false;
		return;
	}
	/* inside: the next instruction is the fall-through, or the chased
	 * destination after the first block's jmp/call, or X */
	if (c->phase == PH_CHASED && c->count == 0)
		c->expect = sb->chase_to;
	else if (c->phase == PH_SPEC && c->count == 0)
		c->expect = sb->spec;
	else
		c->expect = pc + vi.len;
	if (next != c->expect) {
		c->in_sb = false;
		c->lost = true;
	}
}
