/* Private to the instrument engine: its state, and what instrument.c
 * (the caches, the windows, the engine's ops) and iring.c (the ring read
 * into the accounting, a thread's state in the cache put back) share. */
#ifndef CT_INSTRUMENT_PRIVATE_H
#define CT_INSTRUMENT_PRIVATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/user.h>

#include "engine.h"
#include "itrans.h"
#include "tracer.h"

#define MAX_CACHES 8

struct inst {
	pid_t pid;
	/* Code caches, each near the code it copies (in reach of its
	 * rip-relative operands: within a gigabyte); block numbers carry
	 * their cache's index in their top bits. */
	struct icache {
		struct itrans *x;
		uint8_t *local;		/* ours */
		uint64_t at;		/* the target's */
		/* by block number: its accounting, made at its first
		 * drain, and what the drain reads of the block */
		struct lean_block **plans;
		uint32_t n_plans;
	} caches[MAX_CACHES];
	unsigned n_caches;
	bool ready;			/* the ring is mapped */
	pid_t owner;			/* the one thread that runs in the
					 * cache (one slot); others step */
	unsigned execs;			/* the image's (tr->execs) */
	uint8_t *ring;			/* ours: the slot, then the ring */
	uint64_t ring_at;
	uint64_t shadow_at;		/* the ring's shadow (itrans.h), */
	int32_t shadow;			/* this far above the ring */
	uint64_t skip;			/* ring_start's, set while it is empty */
	uint64_t ring_bytes, ring_insns;	/* drained lately (drain) */
	uint64_t stop;			/* the stop pc the blocks end at */
	uint32_t gen;			/* the decoder's, when translated */
	const char *off;		/* why nothing runs from the cache */
	bool said;
	uint64_t cached, exits, fills, recovered, maps;
	uint64_t blocks;		/* translated in caches taken out */
	struct insn_tally *stepped;	/* by mnemonic */
	struct codemap *codemap;	/* the engine's: the code it may copy */
	unsigned maps_window;		/* the window it was last read in */
	/* --engine=lockstep:instrument: the thread runs in the cache a
	 * machine instruction at a time (stepping, between two of its
	 * steps), its registers at the original code as they were after
	 * its last instruction that completed */
	struct user_regs_struct pr;
	bool stepping;
};

static inline struct inst *inst_of(struct tracer *tr)
{
	return tr->inst;
}

static inline uint64_t *slot(struct inst *in)
{
	return (uint64_t *)(void *)in->ring;
}

/* Where a thread's records begin: the ring's start, or later (in->skip
 * bytes) when fewer are wanted before the guard stops it. */
static inline uint64_t ring_start(const struct inst *in)
{
	return in->ring_at + ISLOT_SIZE + in->skip;
}

/* Our view of the ring's target address ADDR. */
static inline const uint64_t *ring_local(const struct inst *in,
					 uint64_t addr)
{
	return (const uint64_t *)(const void *)(in->ring +
						(addr - in->ring_at));
}

/* instrument.c: the cache whose code holds target address ADDR */
struct itrans *cache_at(const struct inst *in, uint64_t addr);

/* iring.c (each described at its definition): the ring's records up to
 * END accounted, the last going on to LAST_NEXT */
void drain(struct tracer *tr, struct tracee *t, struct inst *in,
	   uint64_t end, uint64_t last_next);
/* T, out of the cache, goes on from registers R */
bool back_at(struct tracee *t, struct user_regs_struct *r);
/* String instruction IN, run alone from B0 to A, as single steps */
void account_string(struct tracer *tr, struct tracee *t,
		    const struct insn *in,
		    const struct user_regs_struct *b0,
		    const struct user_regs_struct *a, bool finished);
/* B0: the registers before string instruction IN */
void str_before(const struct tracee *t, const struct insn *in,
		const uint64_t *v, struct user_regs_struct *a,
		struct user_regs_struct *b0);
/* T left string instruction B (itrans_solo) with registers A */
void leave_solo(struct tracer *tr, struct tracee *t, struct inst *in,
		const struct iblock *b, const struct user_regs_struct *a,
		bool begun, bool finished);
/* T's registers R, in the cache at *POS, put back as at the original
 * instruction */
bool put_back(struct tracee *t, struct inst *in,
	      struct user_regs_struct *r, struct ipos *pos,
	      uint64_t *base);

#endif
