/* The ptrace supervisor: threads, breakpoints, the stepping engine. */
#ifndef CT_TRACER_H
#define CT_TRACER_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>
#include <sys/user.h>

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
/* Wait for the next stop of any traced thread and decode it. */
void tracee_next_event(struct event_info *ei);
/* Detach every thread, restarting it with no signal.  The threads must be
 * stopped (interrupt them first with tracee_stop_all). */
void tracee_detach_all(void);
/* Bring every running thread to a ptrace stop (PTRACE_INTERRUPT) so that
 * breakpoints can be removed and threads detached; pending events are
 * consumed, signals seen meanwhile are kept for re-injection at detach. */
void tracee_stop_all(void);

/* Pin the calling process and TID to one CPU while stepping (3.5x faster
 * here: cross-CPU wake-ups cost ~50 us in this VM); restore afterwards. */
void tracee_pin(pid_t tid);
void tracee_unpin(pid_t tid);

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
	struct cost_table *costs;
	FILE *trace_mem;		/* --trace-mem: Lackey-format trace */
	struct symbols *syms;		/* for messages and the progress line */
	struct tracee *stepped;		/* the thread being stepped, or NULL */
	struct user_regs_struct regs;	/* its registers before the next step */
	const struct insn *insn;	/* decoded at regs.rip, before the step */

	/* The region's stop event: a pc, or the return of the start function
	 * (the return address reached with rsp above the entry rsp, so that
	 * recursion and several exits are right). */
	uint64_t stop_pc;
	bool stop_on_return;
	uint64_t entry_sp;
	uint64_t max_steps;		/* 0: no cap */

	uint64_t steps;			/* traps accounted */
	uint64_t unknown_pcs_reported;
	uint64_t *unknown_seen;		/* pcs already reported (small set) */
	size_t n_unknown_seen;
	double t_start, t_last_progress;
	bool progress;			/* live line on a terminal */
	int progress_width;
};

double now_seconds(void);
/* Begin the region at the stopped thread T: read its registers, pin. */
int engine_begin(struct engine *e, struct tracee *t);
/* Decode the instruction about to execute (at e->regs.rip).  Returns 0, or
 * -1 when it cannot be read (the region then ends). */
int engine_prepare(struct engine *e);
/* Account one completed trap whose after-registers are AFTER, then make
 * them the current registers. */
void engine_account(struct engine *e, const struct user_regs_struct *after);
/* Account the instruction at e->regs.rip as fetched but not completed
 * (the exit_group syscall that ends the process). */
void engine_account_fetch_only(struct engine *e);
/* True when the current registers meet the stop event. */
bool engine_at_stop(const struct engine *e);
/* End the region: unpin, clear the progress line. */
void engine_end(struct engine *e);
void engine_progress(struct engine *e, bool force);

/* The interrupt flag set by the SIGINT/SIGTERM/SIGHUP handler. */
extern volatile sig_atomic_t interrupted_by;

#endif
