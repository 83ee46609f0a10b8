/* What cachetrace has done to an attached target that its guardian must
 * undo or finish if cachetrace dies (kill -9, the OOM killer, a crash):
 * a page of shared memory (a memfd mapped in both) that the supervisor
 * keeps up to date before each change and the guardian (src/tracer/
 * guard.c) reads after the supervisor is gone.
 *
 *   - the int3 bytes in the target's text, with the bytes they replaced;
 *   - whether debug registers were programmed;
 *   - whether our job-control stop (SIGSTOP) is in effect;
 *   - per thread, a signal we hold in its signal-delivery stop, which the
 *     kernel would drop when the thread is taken over;
 *   - the threads we pinned to the tracer's CPU, with their own CPU masks;
 *   - a write-back in progress (the emulator's memory and registers going
 *     back to the target): every byte and register it writes, recorded
 *     before the first write, so that the guardian can write it all again
 *     (a redo log: the target never runs with half of it).
 *
 * The supervisor is the only writer while it lives; the guardian reads
 * only once it is dead.  Every entry is complete before the field that
 * makes it count is set (a release store). */
#ifndef CT_JOURNAL_H
#define CT_JOURNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <signal.h>
#include <stdint.h>
#include <sys/types.h>

#define JOURNAL_INT3 8
#define JOURNAL_SIGS 1024
#define JOURNAL_CACHES 8
#define JOURNAL_PINS 128	/* pinned threads the guardian restores */

enum journal_state {
	JOURNAL_ARMED = 1,	/* the guardian rescues the target */
	JOURNAL_RELEASED,	/* cachetrace let the target go itself */
};

enum journal_rec {
	JREC_MEM = 1,		/* ADDR, LEN bytes of memory */
	JREC_REGS,		/* struct user_regs_struct of TID */
	JREC_FPREGS,		/* struct user_fpregs_struct of TID */
	JREC_XSTATE,		/* LEN bytes of NT_X86_XSTATE of TID */
};

struct journal_int3 {
	uint64_t addr;
	uint8_t orig;		/* the byte the int3 replaced */
	uint8_t in;		/* 0: a free entry; JOURNAL_INT3_IN: it may be
				 * in the text; JOURNAL_INT3_OUT: taken out,
				 * but a thread that trapped on it before may
				 * still be one byte past it */
};

#define JOURNAL_CACHE_INT3 2
#define JOURNAL_INT3_IN 1
#define JOURNAL_INT3_OUT 2

struct journal_sig {
	int32_t tid;
	int32_t sig;		/* held in its signal-delivery stop; 0: none */
};

/* A thread pinned to the tracer's CPU for a window, and its own mask. */
struct journal_pin {
	int32_t tid;		/* 0: a free entry */
	uint32_t words;		/* of MASK in use */
	uint64_t mask[16];	/* CPUs 0-1023 */
};

struct journal_hdr {
	uint32_t magic;
	uint32_t state;		/* enum journal_state */
	int32_t pid;		/* the target */
	uint32_t hold;		/* our SIGSTOP job-control stop is in effect */
	uint32_t dr_used;	/* debug registers were programmed */
	uint32_t wb;		/* a write-back is in progress: redo it */
	uint32_t wb_overflow;	/* it did not fit: cannot be redone */
	uint32_t pad;
	uint64_t wb_len;	/* bytes of records in the data area */
	struct journal_int3 int3[JOURNAL_INT3];
	struct journal_sig sig[JOURNAL_SIGS];
	/* The instrument engine's code caches in the target: [lo, hi), 0
	 * when none; a thread found there is run to its next exit
	 * (src/engine/itrans.h says how it leaves). */
	uint64_t cache[JOURNAL_CACHES][2];
	struct journal_pin pin[JOURNAL_PINS];
	/* --engine=lockstep:instrument's int3s in a code cache (IN while
	 * there, 0 once out and no thread past one): apart from the
	 * text's, whose entries outlive them */
	struct journal_int3 cache_int3[JOURNAL_CACHE_INT3];
};

/* A record of the write-back area: KIND, TID, ADDR and LEN, then LEN
 * bytes, padded to 8. */
struct journal_rec_hdr {
	uint32_t kind;
	int32_t tid;
	uint64_t addr;
	uint64_t len;
};

struct journal {
	struct journal_hdr *h;
	uint8_t *data;		/* the write-back area */
	size_t cap;		/* its size */
	int fd;			/* the memfd, kept open for the guardian */
	size_t wb_len;		/* the records written so far */
};

/* A new journal for target PID, SHARED with a guardian (a memfd) or in
 * our own memory only (the crash handler's): 0, or -errno. */
int journal_open(struct journal *j, pid_t pid, bool shared);
void journal_close(struct journal *j);
/* The guardian's view of the journal behind FD: 0, or -errno. */
int journal_map(struct journal *j, int fd);

/* An int3 at ADDR replacing ORIG is about to go in (IN) or has just come
 * out (!IN). */
void journal_int3(struct journal *j, uint64_t addr, uint8_t orig, bool in);
/* The proof's int3 K in a code cache: at ADDR, replacing ORIG (ADDR 0:
 * none). */
void journal_cache_int3(struct journal *j, unsigned k, uint64_t addr,
			uint8_t orig);
void journal_dr_used(struct journal *j);
/* Code cache I is at [LO, HI) in the target (0, 0: no longer). */
void journal_cache(struct journal *j, unsigned i, uint64_t lo, uint64_t hi);
/* The ring's guard page is at [LO, HI) in the target (0, 0: none). */
void journal_hold(struct journal *j, bool held);
void journal_state(struct journal *j, enum journal_state state);
/* Thread TID is held in the delivery stop of SIG (0: no longer).  *SLOT
 * caches its entry (0: none yet); entries are never freed, only reused
 * by the same tid. */
void journal_signal(struct journal *j, unsigned *slot, pid_t tid, int sig);
/* Thread TID is about to be pinned; its own mask is MASK (WORDS 64-bit
 * words of it); MASK NULL: it has just been given its mask back. */
void journal_pin(struct journal *j, pid_t tid, const uint64_t *mask,
		 unsigned words);

/* A write-back: begin, record what it will write, commit (before the
 * first write), done (after the last). */
void journal_wb_begin(struct journal *j);
void journal_wb_add(struct journal *j, enum journal_rec kind, pid_t tid,
		    uint64_t addr, const void *buf, size_t len);
void journal_wb_commit(struct journal *j);
void journal_wb_done(struct journal *j);

/* A SIGTRAP the kernel raised (a step, a breakpoint; not one sent) is
 * queued for stopped thread TID: it must not reach the target.  For
 * cachetrace and its guardian alike. */
bool journal_trap_queued(pid_t tid);

#endif
