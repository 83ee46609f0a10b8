/* The model queue: the emulator's instructions, as records, cross a ring
 * to a thread on another CPU that feeds the models (issue 27).
 *
 * A record is what the accounting needs of one executed instruction and
 * nothing else: the decoder's record (its pc, length, branch kind), the
 * data accesses in Cachegrind's order, the conditional outcomes, the
 * indirect target, the pc after (a return's target) and the core.  The
 * models consume records in the order they were made, one at a time,
 * with the same function as when there is no queue (account.c), so the
 * profile is the same byte for byte either way.
 *
 * One producer (the engine's thread), one consumer (the model thread).
 * The producer drains the queue before anything else reads or changes
 * the models or the cost table: the emulator does at the end of every
 * slice, so outside a slice the queue is always empty. */
#ifndef CT_MODELQ_H
#define CT_MODELQ_H

#include <sched.h>
#include <stdbool.h>
#include <stdint.h>

#include "decode.h"

struct engine;

struct model_rec {
	const struct insn *in;	/* NULL: padding to the ring's end, NEXT
				 * units long; low bit set: a lean step's
				 * record (engine_account_lean_rec) */
	uint64_t next;		/* the pc after it: a return's target */
	uint64_t ind_target;	/* an indirect branch's target */
	uint32_t len;		/* its length (known when in->len is 0) */
	uint16_t core;		/* the thread's core in the model */
	uint8_t n_fetch;	/* 1, or 2: a finished rep string */
	uint8_t n_cond;
	bool cond[3];		/* the conditional outcomes, taken or not */
	uint8_t indirect;
	uint8_t n_acc;
	uint8_t n_spec;		/* VEX's merged instructions (chase.c) */
	uint8_t spec_taken;
	uint8_t units;		/* the record's length in 16-byte units */
	uint8_t pad[8];
};
_Static_assert(sizeof(struct model_rec) == 48, "three units");

/* VEX's merged instructions that did not run (account.c), after the
 * accesses when there are some: two units. */
struct model_spec {
	uint64_t pc[3];
	uint8_t len[3];
	uint8_t pad[5];
};
_Static_assert(sizeof(struct model_spec) == 32, "two units");

struct modelq;

/* A queue whose thread runs on a CPU of ALLOWED (NULL: the CPUs this
 * thread may use) other than AVOID (-1: the one this thread is on),
 * feeding E's models; NULL (and *WHY says why, a static string) when
 * there is none: one CPU allowed, CACHETRACE_HOST=model-thread=no, or
 * no thread. */
struct modelq *modelq_new(struct engine *e, const cpu_set_t *allowed,
			  int avoid_cpu, const char **why);
/* The CPU the thread runs on. */
int modelq_cpu(const struct modelq *q);
/* Copy REC, UNITS 16-byte units built in the producer's own memory (16-
 * byte aligned), into the ring; waits for the model thread while the
 * ring is full. */
void modelq_put(struct modelq *q, const void *rec, unsigned units);
/* Wait until the model thread has consumed every record. */
void modelq_drain(struct modelq *q);
/* Drain, stop the thread, free. */
void modelq_free(struct modelq *q);

#endif
