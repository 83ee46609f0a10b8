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
#define RING_BYTES (4u << 20)		/* records between two reads */
#define PAGE 4096u
/* A thread's unit: its slot (with its returns' table), its ring, a guard
 * page.  The units lie one after the other, so that one shadow, the
 * same distance above each ring, serves them all (itrans.h).  One,
 * unless several threads may run in the cache at once (--threads=all
 * or several windows), then MAX_UNITS: a thread finding none free is
 * stepped. */
#define UNIT_BYTES ((uint64_t)ISLOT_SIZE + RING_BYTES + PAGE)
#define MAX_UNITS 16
/* The window's stop addresses the blocks end at (one a window; several
 * with --threads=hit): a lead whose stop finds no room is stepped. */
#define MAX_STOPS ITRANS_STOPS

struct inst {
	pid_t pid;
	struct engine *eng;		/* whose the plans' counts are */
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
	unsigned execs;			/* the image's (tr->execs) */
	uint8_t *ring;			/* ours: the units (UNIT_BYTES each) */
	uint64_t ring_at;		/* the target's */
	unsigned n_units;
	struct iunit {
		pid_t tid;		/* the thread it is lent to, or 0 */
		bool used;		/* lent since the last reset: its
					 * returns' table holds entries */
		uint64_t skip;		/* ring_start's, set while it is
					 * empty */
		bool whole;		/* a fill found it empty: no skip */
		uint64_t done;		/* read up to here (a target
					 * address) while the thread ran:
					 * drain_running; 0: none */
	} units[MAX_UNITS];
	unsigned lent;			/* units lent now */
	int read_running;		/* reads_running's probe; -1: not yet */
	uint64_t shadow_at;		/* the rings' shadow (itrans.h), */
	int32_t shadow;			/* this far above each ring */
	uint64_t ring_bytes, ring_insns;	/* drained lately (drain) */
	uint64_t stay;			/* the bytes of records a stay in
					 * the cache wrote, lately (drain) */
	uint64_t words, words_running;	/* read in all, and while their
					 * thread ran (drain_running) */
	uint64_t stops[MAX_STOPS];	/* the stop pcs the blocks end at
					 * (0: none) */
	uint32_t gen;			/* the decoder's, when translated */
	bool want_reset;		/* the blocks must go once no thread
					 * runs them: the others step until */
	const char *off;		/* why nothing runs from the cache */
	bool said;
	uint64_t cached, exits, fills, recovered, maps;
	unsigned most_inside;		/* threads in the cache at once */
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
	/* ... or runs to the next original instruction's copy, where an
	 * int3 of ours stands in for its first byte (ORIG) meanwhile: the
	 * instrumentation between two copies, and a block's end, are not
	 * stepped (proof_next: RUN_TO, where the next run stops: up to two
	 * places, or none where all ways lead to an exit's stop; N_RUN
	 * -1: a step) */
	uint64_t run_to[2], bp[2];
	uint64_t moves;		/* completed since it entered the cache */
	int n_run;
	uint8_t bp_orig[2];
};

static inline struct inst *inst_of(struct tracer *tr)
{
	return tr->inst;
}

/* T's unit (T has one), ours and the target's address of it. */
static inline uint64_t *slot(struct inst *in, const struct tracee *t)
{
	return (uint64_t *)(void *)(in->ring +
				    (t->iunit - 1) * UNIT_BYTES);
}

static inline uint64_t unit_at(const struct inst *in, const struct tracee *t)
{
	return in->ring_at + (t->iunit - 1) * UNIT_BYTES;
}

/* Where T's records begin: its ring's start, or later (its unit's skip
 * bytes) when fewer are wanted before the guard stops it. */
static inline uint64_t ring_start(const struct inst *in,
				  const struct tracee *t)
{
	return unit_at(in, t) + ISLOT_SIZE + in->units[t->iunit - 1].skip;
}

/* T's ring empty: its cursor at the start, nothing read. */
static inline void ring_empty(struct inst *in, const struct tracee *t)
{
	slot(in, t)[ISLOT_CUR / 8] = ring_start(in, t);
	in->units[t->iunit - 1].done = 0;
}

/* Our view of the target address ADDR of a unit. */
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
/* The records T's ring holds while T runs, read (at most MOST bytes):
 * false when fewer than LEAST were there */
bool drain_running(struct tracer *tr, struct tracee *t, struct inst *in,
		   uint64_t least, uint64_t most);
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
