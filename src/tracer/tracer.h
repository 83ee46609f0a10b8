/* The ptrace supervisor: threads, breakpoints, the stepping engine. */
#ifndef CT_TRACER_H
#define CT_TRACER_H

#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>
#include <sys/user.h>

#include "callstack.h"
#include "costs.h"
#include "decode.h"
#include "event.h"
#include "model.h"
#include "symbols.h"

/* One traced thread. */
struct tracee {
	pid_t tid;
	unsigned flags;			/* TF_* bits */
	int pending_sig;		/* signal to deliver when detaching */
	int inject;			/* signal to deliver with the next step */
	unsigned seq;			/* creation order, from 0 */
	unsigned core;			/* the model core its accesses go to */
	struct user_regs_struct regs;	/* while stepped: before its next step */
	const struct insn *insn;	/* while stepped: decoded at regs.rip */
	cpu_set_t saved_affinity;	/* while pinned */
	bool pinned;
	unsigned dr_mask;		/* debug-register slots programmed */
	struct {			/* the window this thread leads */
		uint64_t stop_pc;	/* its stop event: this pc... */
		bool on_return;		/* ...reached with rsp > entry_sp */
		uint64_t entry_sp;
		uint64_t steps;		/* its own steps in the window */
		bool watch_hit;		/* it wrote the --stop-watch range */
	} win;
	int deferred_status;		/* a wait status taken while stopping
					 * the others for an int3 step-over */
	bool has_deferred;
	struct tracee *next;
};

enum {
	TF_STEPPING	= 1 << 0,	/* single-stepped in the current region */
	TF_INJECTED	= 1 << 1,	/* last restart injected a signal: the next
					 * trap may be a handler entry */
	TF_EXITING	= 1 << 2,	/* PTRACE_EVENT_EXIT seen */
	TF_STOPPED	= 1 << 3,	/* in a ptrace stop, waiting for us */
	TF_TRAPPED	= 1 << 4,	/* stopped by tracee_stop_all on a SIGTRAP
					 * (maybe our int3: rip may need a rewind) */
	TF_WANT_STEP	= 1 << 5,	/* --threads=all: join the window at its
					 * next stop (interrupted, or new) */
	TF_ENDING	= 1 << 6,	/* the window ended during its step:
					 * account that step, then let it run */
	TF_WANT_WINDOW	= 1 << 7,	/* --toggle-signal: begin a window at its
					 * next stop (our PTRACE_INTERRUPT) */
	TF_LEAD		= 1 << 8,	/* it hit the start event: leads a window
					 * (several at once with --threads=hit) */
};

static inline bool tracee_stepping(const struct tracee *t)
{
	return t->flags & TF_STEPPING;
}

/* A software breakpoint (int3), restored byte for byte on removal. */
struct breakpoint {
	uint64_t addr;
	long orig_word;			/* the text word at addr before patching */
	bool inserted;
};

/* The wait status of the last event, decoded. */
struct event_info {
	enum tracer_event ev;
	pid_t tid;
	int status;
	int sig;			/* stop or delivered signal */
	unsigned ptrace_event;		/* status >> 16 */
};

/* tracee.c: the thread table and ptrace helpers. */
struct tracee *tracee_find(pid_t tid);
struct tracee *tracee_add(pid_t tid);
void tracee_remove(pid_t tid);
struct tracee *tracee_first(void);
/* Restart a stopped thread (PTRACE_CONT, _SINGLESTEP, _LISTEN) with SIG.
 * ESRCH (the thread is dying) is not an error: its exit event follows. */
int tracee_restart(struct tracee *t, int request, int sig);
/* Read target memory (process_vm_readv, PEEKDATA fallback). */
ssize_t tracee_read_mem(pid_t tid, uint64_t addr, void *buf, size_t len);
/* waitpid(TID, STATUS, __WALL), retried on EINTR: our signal handlers are
 * installed without SA_RESTART so that the main wait sees them. */
pid_t tracee_wait(pid_t tid, int *status);
/* A job-control stop signal: its group-stop is kept with PTRACE_LISTEN. */
static inline bool is_stop_signal(int sig)
{
	return sig == SIGSTOP || sig == SIGTSTP || sig == SIGTTIN ||
	       sig == SIGTTOU;
}
/* Decode a wait status of thread TID. */
void tracee_decode_status(pid_t tid, int status, struct event_info *ei);
/* Wait for the next stop of any traced thread and decode it. */
void tracee_next_event(struct event_info *ei);
/* Detach every thread, restarting it with no signal.  The threads must be
 * stopped (interrupt them first with tracee_stop_all). */
void tracee_detach_all(void);
/* Bring every running thread to a ptrace stop (PTRACE_INTERRUPT) so that
 * breakpoints can be removed and threads detached; pending events are
 * consumed, signals seen meanwhile are kept for re-injection at detach. */
void tracee_stop_all(void);

/* Pin the tracer and each stepped thread to one CPU while stepping (3.5x
 * faster here: cross-CPU wake-ups cost ~50 us in this VM); restore
 * afterwards. */
void tracee_pin(struct tracee *t);
void tracee_unpin(struct tracee *t);
void tracee_unpin_self(void);

/* breakpoint.c */
int breakpoint_insert(pid_t tid, struct breakpoint *bp, uint64_t addr);
int breakpoint_remove(pid_t tid, struct breakpoint *bp);

/* step.c: the stepping engine.  One engine per run; the costs it keeps
 * are per pc, the regs it keeps are those of the stepped thread before its
 * next step. */
struct engine {
	struct decoder *dec;
	struct cache_model *cm;
	struct branch_model *bm;	/* NULL with --branch-sim=no */
	unsigned bm_offset;		/* the branch model's first event */
	unsigned n_events;
	struct cost_table *costs;
	struct callstack *cs;		/* --call-stacks=yes, else NULL */
	uint64_t *scratch;		/* one step's counts, with call stacks */
	FILE *trace_mem;		/* --trace-mem: Lackey-format trace */
	struct symbols *syms;		/* for messages and the progress line */
	struct tracee *current;		/* whose accesses the model sees now */
	struct tracee *decoding;	/* whose memory and xstate decode reads */

	uint64_t max_steps;		/* per window; 0: no cap */
	uint64_t swatch_lo, swatch_hi;	/* --stop-watch range [lo, hi) */
	bool swatch_rw;			/* reads end the window too */

	uint64_t steps;			/* traps accounted, all windows */
	unsigned windows;		/* windows begun */
	uint64_t *unknown_seen;		/* pcs already reported (small set) */
	size_t n_unknown_seen;
	double t_start, t_last_progress, t_stepping;
	bool progress;			/* live line on a terminal */
	int progress_width;
};

double now_seconds(void);
/* Start stepping thread T, stopped: read its registers, pin it. */
int engine_begin_thread(struct engine *e, struct tracee *t);
/* Stop stepping thread T (it is stopped or gone): unpin it. */
void engine_end_thread(struct engine *e, struct tracee *t);
/* Decode the instruction T is about to execute (at t->regs.rip).
 * Returns 0, or -1 when it cannot be read. */
int engine_prepare(struct engine *e, struct tracee *t);
/* Account one completed trap of T whose after-registers are AFTER, then
 * make them T's current registers. */
void engine_account(struct engine *e, struct tracee *t,
		    const struct user_regs_struct *after);
/* T's pc moved without executing an instruction (signal handler entry). */
void engine_moved(struct engine *e, struct tracee *t,
		  const struct user_regs_struct *after);
/* Account the instruction at t->regs.rip as fetched but not completed
 * (the exit_group syscall that ends the process). */
void engine_account_fetch_only(struct engine *e, struct tracee *t);
/* True when T, a window's lead, meets the window's stop event: its stop
 * pc (or the start function's return: the return address reached with rsp
 * above the entry rsp, so that recursion and several exits are right),
 * the instruction cap, or a write to the --stop-watch range. */
bool engine_at_stop(const struct engine *e, const struct tracee *t);
void engine_progress(struct engine *e, bool force);
void engine_clear_progress(struct engine *e);

/* breakpoint.c: debug registers.  Slot SLOT_START holds an instruction
 * start event, SLOT_WATCH a data watchpoint (--start-watch). */
struct hw_slot {
	uint64_t addr;
	unsigned rw;			/* 0 execute, 1 write, 3 read/write */
	unsigned len;			/* 1, 2, 4, 8 (watchpoints) */
	bool used;
};
enum { SLOT_START, SLOT_WATCH };
extern struct hw_slot hw_slots[4];
/* Program the used slots whose bit is in ENABLED_MASK into thread TID
 * (stopped); the others are disabled. */
int hwbp_program(pid_t tid, unsigned enabled_mask);
int hwbp_clear(pid_t tid);
/* Which slots fired (DR6 bits 0-3), and reset DR6. */
unsigned hwbp_hits(pid_t tid);

/* The interrupt flag set by the SIGINT/SIGTERM/SIGHUP handler. */
extern volatile sig_atomic_t interrupted_by;

#endif
