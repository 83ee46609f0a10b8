/* The engine: what moves a thread through a window, and what every engine
 * feeds the models for each instruction executed.
 *
 * The accounting half (account.c) is shared: given the registers before
 * and after one instruction, it decodes the accesses and branch outcome and
 * adds them into the pc's cost row (and the call-stack row).
 *
 * The control half is an ops table (struct engine_ops), one file per
 * engine, selected in main.c.  The dispatcher and the window logic only
 * call these ops, so that another engine (emulation) can sit next to the
 * single-step one (step.c) without touching them. */
#ifndef CT_ENGINE_H
#define CT_ENGINE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>
#include <sys/user.h>

#include "decode.h"
#include "hashtab.h"
#include "model.h"
#include "procmaps.h"

struct tracer;
struct tracee;
struct event_info;

#define ENGINE_ROW_CACHE 4096	/* a power of two */

/* With several threads in the window (--threads=all), a thread's turn,
 * in instructions: then the next one runs (the emulate engine hands
 * over; the instrument engine's rings hold about as many records).  On
 * a model of several cores the accesses interleave finely, as its
 * coherence needs; on one shared cache (Cachegrind's model: valgrind
 * itself runs threads in turns of about 100,000 blocks) coarser. */
#define TURN_CORES 64
#define TURN 1024

/* The accounting state of a run. */
struct engine {
	/* What the models' side reads (modelq.h: the model thread), on
	 * cache lines of its own: the engine's side writes per instruction
	 * only what follows the next alignment. */
	struct cache_model *cm;
	struct branch_model *bm;	/* NULL with --branch-sim=no */
	unsigned bm_offset;		/* the branch model's first event */
	unsigned n_events;
	struct cost_table *costs;
	struct cost_table *spare;	/* emptied, for engine_swap_costs */
	/* Lean blocks replayed since their rows last had their references
	 * counted (the cache model's count_refs): costs is read through
	 * engine_costs, which counts them first */
	struct lean_block **pend;
	unsigned n_pend, pend_cap;
	/* The decoder's superblock states lean blocks saw, by number */
	struct decode_sbstate *sbs;
	uint32_t n_sbs, cap_sbs;
	struct hashtab sb_tab;
	struct {			/* in front of costs: a direct-mapped
					 * cache of rows by pc */
		uint64_t pc;
		uint64_t *row;
	} *row_cache;
	uint32_t row_gen;		/* of costs: insn.user is a row of
					 * this table when insn.user_gen is it */
	unsigned model_core;		/* the model's core + 1; 0: none yet */
	struct callstack *cs;		/* --call-stacks=yes, else NULL */
	uint64_t *scratch;		/* one step's counts, with call stacks */
	FILE *trace_mem;		/* --trace-mem: Lackey-format trace */

	/* The engine's side. */
	_Alignas(64) struct decoder *dec;
	struct codemap code;		/* which of the target's code is fixed
					 * (the decoder asks) */
	struct step_events ev;		/* the last instruction's, as decoded */
	struct symbols *syms;		/* for messages and the progress line */
	struct tracee *current;		/* whose instruction was accounted last */
	/* The model queue (modelq.h): made at the emulator's first slice,
	 * NULL when there is none (q_why says why); in use (q_on) only
	 * while a slice runs, so that outside one it is empty. */
	struct modelq *q;
	const char *q_why;
	bool q_tried, q_on;
	struct tracee *decoding;	/* whose memory and xstate decode reads */
	/* While an emulator holds the thread, its memory is the truth: the
	 * decoder reads through this (NULL: the target's). */
	ssize_t (*read_mem)(void *ctx, uint64_t addr, void *buf, size_t len);
	void *read_mem_ctx;
	pid_t target_pid;		/* decode reads its memory otherwise */

	uint64_t max_steps;		/* per window; 0: no cap */
	uint64_t sample_cap;		/* --sample: the lead's steps at which
					 * its warm-up or sample ends; 0: none */
	uint64_t swatch_lo, swatch_hi;	/* --stop-watch range [lo, hi) */
	bool swatch_rw;			/* reads end the window too */

	uint64_t steps;			/* instructions accounted, all windows */
	unsigned windows;		/* windows begun */
	uint64_t *unknown_seen;		/* pcs already reported (small set) */
	size_t n_unknown_seen;
	double t_start, t_last_progress, t_stepping;
	bool progress;			/* live line on a terminal */
	int progress_width;

	/* The tracer's side of a sync point an engine reaches in the middle
	 * of a run, set by the tracer: the other threads held for a slice
	 * (their events kept), and let run on again (what they kept
	 * replayed). */
	void (*others_stop)(struct tracer *tr, struct tracee *t);
	void (*others_run)(struct tracer *tr);

	/* --engine=lockstep:instrument (proof.c), else NULL */
	struct proof *proof;
};

/* What an engine's run left T in.  The engine never ends a window or
 * restarts a thread: the tracer acts on the verdict (tracer_step in
 * dispatch.c), so the engines sit under the tracer. */
enum verdict {
	VERDICT_READY,		/* (step_prepare only) t->insn is decoded at
				 * t->regs.rip, ready to execute */
	VERDICT_RUNNING,	/* T runs (a real step): its trap comes */
	VERDICT_DONE,		/* nothing to do: T is gone (its exit event
				 * follows) or left as it must be */
	VERDICT_STOP,		/* T, a window's lead, met the stop event */
	VERDICT_FAILED,		/* T cannot go on (t->win.fail says why): its
				 * window ends if it leads one, and it runs
				 * on natively */
	VERDICT_LOST,		/* a step ran instructions unseen (t->win.lost):
				 * every window ends */
	VERDICT_INT3,		/* T stands on our int3 (t->win.int3): the
				 * tracer steps it over, then runs T again */
	VERDICT_TURN,		/* T's turn is over (--threads=all): it stays
				 * stopped, its state written back, and the
				 * next thread has its turn */
};

/* How a thread in a window is moved on.  Every op gets the thread
 * stopped. */
struct engine_ops {
	const char *name;
	/* T joins a window: read its registers, pin it.  0 or -errno (the
	 * thread is dying: its exit event follows). */
	int (*begin_window)(struct tracer *tr, struct tracee *t);
	/* Let T execute until its next event for the dispatcher: for the
	 * single-step engine, one instruction; then say what happened. */
	enum verdict (*run)(struct tracer *tr, struct tracee *t);
	/* T stopped with a SIGTRAP after run: account what it executed.
	 * False when T's registers cannot be read (it is dying). */
	bool (*trap)(struct tracer *tr, struct tracee *t);
	/* T leaves the window (stopped or gone): unpin it. */
	void (*end_window)(struct tracer *tr, struct tracee *t);
	/* The target is about to be let go (detached), its threads
	 * stopped: take out of it what the engine put in (NULL: nothing). */
	void (*release)(struct tracer *tr);
	/* Work while threads run, instead of waiting for their events (the
	 * instrument engine's ring read as it fills): > 0 some done, 0 none
	 * now but soon (wait a little, then call again), < 0 none until
	 * an event (NULL: never any). */
	int (*busy)(struct tracer *tr);
	/* Its windows run natively (the native engine): no instruction is
	 * accounted, not even one stepped over an int3 of ours. */
	bool unstepped;
};

extern const struct engine_ops step_engine;
extern const struct engine_ops emulate_engine;
extern const struct engine_ops lockstep_engine;
extern const struct engine_ops instrument_engine;
extern const struct engine_ops native_engine;

/* step.c, also the other engines' way to the real CPU. */
/* T joins a window as the step engine's begin_window does, but for the
 * pinning, which waits for its first real step (step_issue). */
int step_join(struct tracer *tr, struct tracee *t);
/* Decode T's next instruction: VERDICT_READY when t->insn is ready to
 * execute at t->regs.rip, else what the run must return (an instruction
 * that cannot be read, our int3 under the pc). */
enum verdict step_prepare(struct tracer *tr, struct tracee *t);
/* PTRACE_SINGLESTEP T, delivering t->inject. */
void step_issue(struct tracer *tr, struct tracee *t);
/* A real step of T landed at AFTER's rip: where t->insn can go?  Else the
 * CPU ran instructions unseen: an error, and t->win.lost ends the window. */
void step_check_landing(struct tracer *tr, struct tracee *t,
			const struct user_regs_struct *after);
/* Account the step T trapped from (step_engine.trap). */
bool step_trap(struct tracer *tr, struct tracee *t);

/* tally.c: instructions counted by mnemonic, for the summary's line of
 * the five an engine ran on the real CPU (or stepped) most. */
struct insn_tally;
struct insn_tally *insn_tally_new(void);
void insn_tally_free(struct insn_tally *t);
void insn_tally_add(struct insn_tally *t, const struct insn *in);
/* "PREFIXTITLE: name n, ..." and a newline; nothing when none. */
void insn_tally_print(const struct insn_tally *t, FILE *f, const char *prefix,
		      const char *title);

/* account.c: shared by the engines. */
/* The costs go to table C from now (NULL: a new one); returns the one
 * they went to.  Only between an engine's runs (nothing in flight). */
struct cost_table *engine_swap_costs(struct engine *e, struct cost_table *c);
/* The cost table, every count in it: what reads it goes through here. */
struct cost_table *engine_costs(struct engine *e);
/* Table C, swapped out and of no more use: kept emptied for the next
 * engine_swap_costs (one is kept), or freed. */
void engine_drop_costs(struct engine *e, struct cost_table *c);
/* NR is a system call that changes the maps. */
bool is_mm_syscall(unsigned long long nr);
double now_seconds(void);
/* Decode the instruction T is about to execute (at t->regs.rip).
 * Returns 0, or -1 when it cannot be read. */
int engine_prepare(struct engine *e, struct tracee *t);
/* The same at PC, T's registers elsewhere (the emulate engine's). */
int engine_prepare_at(struct engine *e, struct tracee *t, uint64_t pc);
/* Account one completed instruction of T whose after-registers are AFTER,
 * then make them T's current registers. */
void engine_account(struct engine *e, struct tracee *t,
		    const struct user_regs_struct *after);
/* The same with T's registers elsewhere: BEFORE and AFTER, T's own left
 * alone (the emulate engine's hook keeps two buffers in turn, never
 * copying a whole struct per instruction). */
void engine_account_regs(struct engine *e, struct tracee *t,
			 const struct user_regs_struct *before,
			 const struct user_regs_struct *after);
/* The step of T's instruction just accounted (engine_account_regs), N
 * times more, its accesses STEP bytes further each time: a rep string's
 * iterations in the middle, once its superblock state came back to
 * itself (decode_sb_get).  False (nothing done) when it cannot be: call
 * stacks, or not such a step. */
bool engine_account_again(struct engine *e, struct tracee *t, uint64_t n,
			  int64_t step);
/* A lean instruction's step (decode_lean): all its accounting needs. */
struct lean_step {
	const struct insn *in;
	const struct decode_lean *l;	/* decode_lean(in) */
	uint64_t next;		/* the pc after it */
	uint64_t rsp;		/* rsp before it */
	uint64_t addr[2];	/* its accesses, as decode_lean's templates */
};
/* Lean steps accounted in one run at most (the emulator's buffer). */
#define ENGINE_LEAN_RUN 64
/* The same for N lean steps S of T, in order, run with fs_base FS: no
 * registers needed.  T's win.steps counted them already. */
void engine_account_leans(struct engine *e, struct tracee *t,
			  const struct lean_step *s, unsigned n, uint64_t fs);
/* A block of N lean instructions IN that run one after the other (an
 * instrumented block: the instrument engine's, N at most 65535), prepared
 * once for the models. */
struct lean_block;
struct lean_block *engine_lean_block(const struct insn *const *in,
				     unsigned n);
/* A lean block's first members, its engine's to set and read (the
 * instrument engine's drain reads them where it reads the block). */
struct lean_head {
	uint64_t pc;
	uint32_t words;		/* its record's, after its first */
	uint16_t n;		/* instructions (engine_lean_block's N) */
	bool str;		/* a string instruction's (engine_lean_str) */
};
static inline struct lean_head *engine_lean_head(struct lean_block *b)
{
	return (struct lean_head *)(void *)b;
}
/* The string instruction a block of none stands for (the drain's), or
 * NULL. */
const struct insn *engine_lean_str(const struct lean_block *b);
void engine_lean_set_str(struct lean_block *b, const struct insn *str);
/* B goes (its replays counted in the rows first). */
void engine_lean_block_free(struct engine *e, struct lean_block *b);
/* Blocks accounted one after the other by a thread with fs_base FS, with
 * nothing else between engine_lean_run_start and engine_lean_run_end:
 * a block entered in a superblock state seen before, going where it went
 * before, is replayed (the decoder's state catches up at the end) and
 * the branch model's calls are gathered. */
struct lean_run {
	uint64_t fs;
	uint32_t sb;			/* the superblock state the next block
					 * sees, by number (account.c) */
	bool sb_ahead;			/* the decoder's is behind SB */
	bool lean;			/* replays go to the cache model's
					 * lean_uncounted */
	bool bc_later;			/* and their branches to the branch
					 * model's conds_uncounted (COND) */
	unsigned n_cond;
	struct model_cond cond[ENGINE_LEAN_RUN];
};
void engine_lean_run_start(struct engine *e, struct lean_run *r,
			   uint64_t fs);
void engine_lean_run_end(struct engine *e, struct lean_run *r);
/* engine_account_leans for a run of block B by T: its accesses'
 * addresses W (without fs_base: decode_lean's templates' order), the
 * last instruction going to NEXT, rsp RSP before the first (0: not
 * known). */
void engine_account_block(struct engine *e, struct tracee *t,
			  struct lean_run *r, struct lean_block *b,
			  const uint64_t *w, uint64_t next, uint64_t rsp);
/* What the models make of a lean step's record (REC, its first unit's
 * low bit set: modelq.h); returns its length in units. */
unsigned engine_account_lean_rec(struct engine *e, const void *rec);
/* Do the models cost more per instruction than a record sent to a thread
 * of their own (modelq.h)?  Not Cachegrind's (measured: bench/README.md). */
bool engine_models_costly(const struct engine *e);
/* Wait until the models have what was sent to their thread (a profile
 * written while a slice runs: an exit from inside it). */
void engine_models_sync(struct engine *e);
struct model_rec;
struct model_spec;
/* What the models make of one instruction's record (modelq.h). */
void engine_account_rec(struct engine *e, const struct model_rec *r,
			const struct mem_access *acc,
			const struct model_spec *spec);
/* T's pc moved without executing an instruction (signal handler entry). */
void engine_moved(struct engine *e, struct tracee *t,
		  const struct user_regs_struct *after);
/* Account the instruction at t->regs.rip as fetched but not completed
 * (the exit_group syscall that ends the process). */
void engine_account_fetch_only(struct engine *e, struct tracee *t);
/* True when T, a window's lead, meets the window's stop event: its stop
 * pc (or the start function's frame gone: rsp above its entry rsp, after
 * its return, a longjmp or an exception past it; recursion and several
 * exits are right),
 * the instruction cap, or a write to the --stop-watch range. */
bool engine_at_stop(const struct engine *e, const struct tracee *t);
/* The same with T's registers R: engine_at_stop_regs, inline in tracer.h
 * (the emulator asks after every instruction). */
void engine_progress(struct engine *e, bool force);
void engine_clear_progress(struct engine *e);
void engine_free(struct engine *e);
/* A new, empty cost table (an exec: the next image's profile). */
void engine_new_costs(struct engine *e);

/* The bytes a step of IN that went on to NEXT fetched (IN's length, or
 * for one the decoder could not size, where the pc went). */
uint32_t engine_fetch_len(const struct insn *in, uint64_t next);
/* The pc's row of the flat cost table. */
uint64_t *engine_pc_row(struct engine *e, uint64_t pc);

/* ---- proof.c: --engine=lockstep:instrument ----
 * The models wrapped, each event that reaches them compared with the
 * step engine's for the same instruction: proof_step queues what
 * account.c feeds the models for one step of T (registers BEFORE and
 * AFTER, at the original code), proof_fetch a fetch alone; the
 * instrument engine's events are compared with those as they come. */
void proof_start(struct tracer *tr, const struct decode_target *target,
		 bool chase);
void proof_invalidate(struct engine *e, uint64_t start, uint64_t end);
void proof_prepare(struct engine *e, uint64_t pc);
void proof_step(struct engine *e, struct tracee *t,
		const struct user_regs_struct *before,
		const struct user_regs_struct *after);
void proof_fetch(struct engine *e, struct tracee *t, uint64_t pc,
		 uint32_t len);
/* At a window's end: what is left on either side is a divergence. */
void proof_window_end(struct engine *e);
bool proof_diverged(const struct engine *e);
void proof_describe(const struct engine *e, FILE *f, const char *prefix);
void proof_free(struct engine *e);

#endif
