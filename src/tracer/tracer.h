/* The ptrace supervisor: one struct tracer for the run, one struct tracee
 * per traced thread, and what each file of src/tracer/ offers the others.
 *
 * Who owns what (docs/design.md has the picture):
 *   main.c      main(): options, models, the loop, the exit status
 *   options.c   struct options: parsing, usage, cross-checks
 *   launch.c    PATH search, fork + exec under ptrace, killing, reaping
 *   attach.c    -p: seizing every thread, the reasons an attach fails
 *   tracee.c    the thread table and every ptrace request on a thread
 *   inject.c    system calls run in a stopped thread of the target
 *   breakpoint.c int3 and debug-register breakpoints
 *   window.c    start/stop events, windows, int3 step-over, release
 *   children.c  clone, fork/vfork hand-off, exec
 *   dispatch.c  next_event -> one switch -> one restart
 *   output.c    the profiles and the summary
 *   hostprobe.c what the host gives (probed once, forceable); check.c
 *               cachetrace --check
 * and in src/engine/ (engine.h), under the tracer (an engine's run
 * returns a verdict; the tracer acts on it): step.c, emulate.c,
 * emusync.c, lockstep.c, the emulator's memory (emumem.c), account.c
 * what every engine feeds the models, modelq.c the models' thread,
 * callstack.c the call stacks, cpuid.c what the supervisor executes for
 * the target */
#ifndef CT_TRACER_H
#define CT_TRACER_H

#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>
#include <sys/types.h>
#include <sys/user.h>

#include "callstack.h"
#include "costs.h"
#include "cpuid_vg.h"
#include "decode.h"
#include "engine.h"
#include "event.h"
#include "model.h"
#include "options.h"
#include "symbols.h"

/* One traced thread. */
struct tracee {
	pid_t tid;
	unsigned flags;			/* TF_* bits: use the predicates below */
	int pending_sig;		/* signal to deliver when detaching */
	int inject;			/* signal to deliver with the next restart */
	unsigned seq;			/* creation order, from 0 */
	unsigned core;			/* the model core its accesses go to */
	unsigned core_log_slot;		/* 1 + its entry in tr->core_log; 0:
					 * none yet */
	struct user_regs_struct regs;	/* while stepped: before its next step */
	const struct insn *insn;	/* while stepped: decoded at regs.rip */
	bool step_on;			/* insn is stepped on from where its
					 * last step left it, not prepared
					 * again (step_trap) */
	cpu_set_t saved_affinity;	/* while pinned */
	bool pinned;
	bool pin_apart;			/* ...to CPUs other than the tracer's */
	unsigned dr_mask;		/* debug-register slots programmed */
	uint64_t dr_addr[4];		/* what DR0-3 hold (0: not known) */
	struct {			/* the window this thread leads */
		uint64_t stop_pc;	/* its stop event: this pc... */
		bool on_return;		/* ...reached with rsp > entry_sp */
		uint64_t entry_sp;
		uint64_t steps;		/* its own steps in the window */
		bool watch_hit;		/* it wrote the --stop-watch range */
		const char *lost;	/* a step ran an instruction unseen:
					 * the window ends, with this reason */
		const char *fail;	/* why it cannot go on (VERDICT_FAILED) */
		struct breakpoint *int3; /* ours under its pc (VERDICT_INT3) */
	} win;
	uint64_t sample_cpu;		/* its CPU time at the last sample
					 * (sample.c) */
	unsigned emu_flags;		/* the emulate engine's (emulate.c) */
	double emu_parked;		/* since when it has given its turns
					 * away inside a futex wait; 0: not */
	struct emu_thread *emu;		/* lockstep's, per thread (emulate.c) */
	bool in_cache;			/* it runs in the instrument engine's
					 * code cache (instrument.c) */
	uint8_t iunit;			/* its slot and ring there: 1 + their
					 * number; 0: none yet */
	bool sysemu;			/* stopped at an exit of that cache, a
					 * PTRACE_SYSEMU stop: its next single
					 * step would report the system call's
					 * end first */
	/* --cpuid=valgrind: the xsave-family instruction being stepped
	 * runs with edx:eax & 7, its own put back after (cpuid.c) */
	bool vg_masked;
	uint64_t vg_rax, vg_rdx;
	bool in_syscall;		/* its window began inside a system call
					 * that no real step has finished yet */
	long long syscall_at_start;	/* that call's number */
	int deferred_status;		/* a wait status taken while stopping
					 * the others for an int3 step-over */
	bool has_deferred;
	uint64_t handover_seq;		/* TF_HANDOVER: when it gave its turn */
	unsigned guard_slot;		/* its entry in the guard's journal of
					 * held signals; 0: none */
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
	TF_HANDOVER	= 1 << 9,	/* stopped, its emulated turn over, its
					 * state written back: it goes on when
					 * the others have had theirs (its
					 * deferred status, set with the flag
					 * and cleared with it, is a trap of no
					 * instruction; tracer_run replays it) */
	TF_REGS_READ	= 1 << 10,	/* t->regs are its registers at this stop,
					 * just read: a window beginning here
					 * need not read them again */
};

static inline bool tracee_stepping(const struct tracee *t)
{ return t->flags & TF_STEPPING; }
static inline bool tracee_injected(const struct tracee *t)
{ return t->flags & TF_INJECTED; }
static inline bool tracee_stopped(const struct tracee *t)
{ return t->flags & TF_STOPPED; }
static inline bool tracee_trapped(const struct tracee *t)
{ return t->flags & TF_TRAPPED; }
static inline bool tracee_wants_step(const struct tracee *t)
{ return t->flags & TF_WANT_STEP; }
static inline bool tracee_ending(const struct tracee *t)
{ return t->flags & TF_ENDING; }
static inline bool tracee_wants_window(const struct tracee *t)
{ return t->flags & TF_WANT_WINDOW; }
static inline bool tracee_leads(const struct tracee *t)
{ return t->flags & TF_LEAD; }

/* T's stop event (not a cap on its steps) with T's registers R. */
static inline bool engine_at_stop_event_regs(const struct tracee *t,
					     const struct user_regs_struct *r)
{
	if (t->win.watch_hit)
		return true;
	/* The start function's frame is gone: it returned (rip is the
	 * return address, rsp one word above), or a longjmp or exception
	 * unwound past it. */
	if (t->win.on_return)
		return r->rsp > t->win.entry_sp;
	return t->win.stop_pc && r->rip == t->win.stop_pc;
}

static inline bool engine_at_stop_event(const struct tracee *t)
{
	return engine_at_stop_event_regs(t, &t->regs);
}

/* T, a window's lead, has run its sample's warm-up or length (--sample). */
static inline bool engine_at_sample_cap(const struct engine *e,
					const struct tracee *t)
{
	return e->sample_cap && t->win.steps >= e->sample_cap;
}

/* Do T's steps, and MORE it completed that are not accounted yet, reach
 * a cap (--max-instructions, a sample's length)? */
static inline bool engine_at_cap(const struct engine *e,
				 const struct tracee *t, uint64_t more)
{
	uint64_t n = t->win.steps + more;
	return (e->max_steps && n >= e->max_steps) ||
	       (e->sample_cap && n >= e->sample_cap);
}

/* engine.h's engine_at_stop with T's registers R: its stop event, or a
 * cap on its steps. */
static inline bool engine_at_stop_regs(const struct engine *e,
				       const struct tracee *t,
				       const struct user_regs_struct *r)
{
	return engine_at_cap(e, t, 0) || engine_at_stop_event_regs(t, r);
}

/* A software breakpoint (int3), restored byte for byte on removal. */
struct breakpoint {
	uint64_t addr;
	long orig_word;			/* the text word at addr before patching */
	bool inserted;
};

/* Debug registers.  Slot SLOT_START holds an instruction start event,
 * SLOT_WATCH a data watchpoint (--start-watch), SLOT_DLHOOK the dynamic
 * loader's debugger hook while a --start library is not loaded yet. */
struct hw_slot {
	uint64_t addr;
	unsigned rw;			/* 0 execute, 1 write, 3 read/write */
	unsigned len;			/* 1, 2, 4, 8 (watchpoints) */
	bool used;
};
enum { SLOT_START, SLOT_WATCH, SLOT_DLHOOK };

/* The wait status of the last event, decoded. */
struct event_info {
	enum tracer_event ev;
	pid_t tid;
	int status;
	int sig;			/* stop or delivered signal */
	unsigned ptrace_event;		/* status >> 16 */
};

/* How dispatch restarts the thread of an event (see event.h). */
enum restart {
	RESTART_NONE,		/* leave it: gone, restarted already, or held
				 * stopped until the target is released */
	RESTART_CONT,		/* run natively, with t->inject */
	RESTART_STEP,		/* in a window: the engine runs it on */
	RESTART_LISTEN,		/* a job-control stop: PTRACE_LISTEN */
};

/* A profile rendered while the target was attached, written after it is
 * released (output.c). */
struct pending_output {
	char *name;			/* the file; "-" for stdout */
	const char *opt;		/* the option that named it, for
					 * messages ("-o") */
	char *buf;
	size_t len;
	bool memory_only;		/* an input of another (--html's), not
					 * written: NAME is only its label */
};

/* Where a single step over an instruction lands (hostprobe.c). */
enum landing {
	LANDING_UNKNOWN,	/* not probed, or elsewhere */
	LANDING_PRECISE,	/* on the next instruction */
	LANDING_LATE,		/* one instruction later: the next ran unseen */
};

/* What the host gives a tracer, probed once (hostprobe.c); the rest of
 * the tracer reads these and guesses nothing. */
struct hostcaps {
	bool probed;
	double seconds;			/* the probe's cost */
	int ptrace_err;			/* 0, or why PTRACE_TRACEME failed */
	bool vm_readv;			/* process_vm_readv reads a tracee */
	bool hwbp, hwbp_forced;		/* an execute debug register traps */
	enum landing cpuid, rdtsc, syscall;
	bool cpuid_forced;
};

/* The run: everything the supervisor knows, passed to every function of
 * the tracer as its first argument. */
/* --sample's state (sample.c). */
struct sample_state {
	clockid_t clock;		/* the target's CPU-time clock... */
	bool clock_ok;			/* ...if the kernel gives it */
	uint64_t last_cpu;		/* its CPU time at the last look */
	uint64_t due;			/* ...at which the next sample is due */
	bool is_due;			/* it is: the next window begins it */
	bool warming;			/* the window is in its warm-up */
	uint64_t from;			/* the lead's steps when the warm-up or
					 * the counted part began */
	struct cost_table *kept;	/* the profile's table, during one */
	uint64_t n, counted, warm;	/* samples; instructions counted and
					 * in warm-ups */
	uint64_t began;			/* wall clock at this sample's start */
	uint64_t rng;			/* the periods' jitter (xorshift) */
	uint64_t stretched;		/* periods --sample-budget stretched */
	uint64_t stall_at, stall_cpu;	/* when the lead's CPU time is looked
					 * at next, and what it was last */
	uint64_t stalls;		/* samples ended so */
	uint64_t t0, deadline;		/* wall clock: start, --duration's end */
	uint64_t poke_at;		/* ...when to interrupt a sample's lead
					 * in the code cache; 0: not yet */
	struct sample_stats *stats;	/* per function, over the samples */
	struct touched_map *touched;	/* touched.c */
	uint64_t phase_t, phase_steps;	/* wall clock and the lead's steps when
					 * the warm-up or the counted part
					 * began: its pace */
};

struct tracer {
	struct options opt;
	struct hostcaps host;		/* hostprobe.c */

	/* The target. */
	pid_t target_pid;
	char *prog_path;		/* launched: the program found in PATH */
	char *cmd_line;			/* the profile's cmd: */
	int target_status;		/* wait status of its exit; -1: none */
	struct tracee *tracees;		/* its threads (tracee.c) */
	unsigned next_seq;		/* creation order of the next thread */
	uint64_t handover_seq;		/* the last TF_HANDOVER's */
	struct sigaction orig_sigaction[NSIG];	/* as we were started */
	cpu_set_t saved_self;		/* the tracer's affinity while pinned */
	int pin_cpu;			/* the CPU stepping runs on; -1: none */

	/* Models and the engine. */
	struct symbols *syms;
	struct engine eng;
	const struct engine_ops *engine;
	/* The default engine (instrument) runs the windows in this one
	 * instead where it cannot run them from its cache: what the first
	 * window needs (call stacks...) or the host refuses; NULL when the
	 * engine was named. */
	const struct engine_ops *engine_else;
	struct emu *emu;		/* the emulate/lockstep engines' state */
	struct inst *inst;		/* the instrument engine's */
	struct sample_state smp;	/* --sample, --duration */
	struct gate *gate;		/* the native engine's */
	const char **event_names;
	unsigned n_events;
	uint64_t n_cpuid;		/* cpuids executed for the target */
	struct vg_cpuid vg;		/* --cpuid=valgrind's CPU */
	uint64_t inject_site;		/* a syscall instruction in the target's
					 * executable memory (inject.c); 0:
					 * none found yet */
	pid_t inject_site_pid;		/* ...of this process, */
	unsigned inject_site_execs;	/* ...at this count of execs */

	/* Start and stop events. */
	struct breakpoint start_bp, entry_bp;
	struct breakpoint stop_bp;	/* the native engine's stop event */
	struct breakpoint dlhook_bp;	/* --breakpoints=sw: the loader hook;
					 * its addr is kept after removal to
					 * recognise a hit reported late */
	uint64_t dlhook_addr;		/* _dl_debug_state while waiting for a
					 * dlopen; 0: not waiting */
	uint64_t r_debug_addr;		/* the loader's struct r_debug; 0:
					 * unknown (refresh at every hook) */
	struct hw_slot hw_slots[4];
	unsigned dr_want;		/* debug-register slots armed */
	uint64_t start_addr, stop_addr;

	/* Windows. */
	unsigned n_active;		/* windows being stepped */
	unsigned windows_done;		/* windows ended */
	const char *partial_reason;	/* why the profile is partial */
	char interrupt_reason[64];

	/* Output. */
	char *out_name;			/* the flat profile; "-": stdout */
	struct outfile *trace_mem;	/* --trace-mem */
	struct pending_output *pending;
	unsigned n_pending;
	unsigned folded_event;		/* --folded-event's index */
	struct {			/* every thread's model core, in
					 * creation order, for the summary */
		pid_t tid;
		unsigned core;
	} *core_log;
	unsigned n_core_log, cap_core_log;
	bool had_error;		/* a profile or trace lost, an int3 left:
					 * exit status 1 */
	char **desc_lines;
	char *desc_buf;
	uint64_t *totals;
	bool profile_written;
	bool summary_printed;

	/* Children and exec (--trace-children). */
	pid_t helpers[64];		/* cachetraces of forked children */
	unsigned n_helpers;
	unsigned execs;			/* images traced after exec */
	unsigned vfork_bps;		/* breakpoints (1: start, 2: entry,
					 * 4: loader hook) out
					 * while a vfork child runs */

	/* The end: the loop stops, main() returns exit_status. */
	bool done;
	bool failed;			/* a fatal error (tracer_fail) */
	bool progress_wanted;		/* stderr a terminal, no -q */
	pid_t front_pid;		/* -p: the process the user started,
					 * which only waits for us (main.c);
					 * 0: we are it */
	bool target_on_our_tty;		/* the target's stdout or stderr is
					 * that terminal too */
	int exit_status;
};

/* Our int3s, for the code that must see every one (release, forks, the
 * decoder's view of the text): 0 the start, 1 the entry point, 2 the
 * dynamic loader's hook.  tr->vfork_bps is indexed the same way. */
#define N_INT3 4
static inline struct breakpoint *tracer_int3(struct tracer *tr, unsigned i)
{
	struct breakpoint *bps[N_INT3] = { &tr->start_bp, &tr->entry_bp,
					   &tr->dlhook_bp, &tr->stop_bp };
	return bps[i];
}

/* Set by the signal handlers (main.c), read by the loop, and the loop's
 * count of the toggles it made: the only variables outside struct
 * tracer.  A toggle is pending while the two counts differ. */
extern volatile sig_atomic_t interrupted_by;
extern volatile sig_atomic_t toggle_requests;
extern sig_atomic_t toggles_done;	/* of toggle_requests, by the loop */

/* tracee.c: the thread table and every ptrace request on a thread. */
struct tracee *tracee_find(struct tracer *tr, pid_t tid);
struct tracee *tracee_add(struct tracer *tr, pid_t tid);
void tracee_remove(struct tracer *tr, pid_t tid);
/* Restart a stopped thread (PTRACE_CONT, _SINGLESTEP, _LISTEN) with SIG.
 * ESRCH (the thread is dying) is not an error: its exit event follows. */
int tracee_restart(struct tracee *t, int request, int sig);
/* The same for a thread not in the table (killing, handing off). */
int tracee_restart_pid(pid_t tid, int request, int sig);
int tracee_getregs(pid_t tid, struct user_regs_struct *r);
int tracee_setregs(pid_t tid, const struct user_regs_struct *r);
/* si_code of the stop's siginfo, or SI_CODE_NONE. */
#define SI_CODE_NONE INT32_MIN
int tracee_si_code(pid_t tid);
/* A signal sent by a process (kill, tgkill, sigqueue), not by the kernel
 * for a trap. */
static inline bool si_code_is_sent(int code)
{
	return code == SI_USER || code == SI_TKILL || code == SI_QUEUE;
}
int tracee_interrupt(pid_t tid);
int tracee_seize(pid_t tid, long options);
int tracee_event_msg(pid_t tid, unsigned long *msg);
int tracee_detach(pid_t tid, int sig);
/* The XSAVE area of TID into BUF: its length, or -errno. */
ssize_t tracee_read_xstate(pid_t tid, void *buf, size_t len);
/* Read target memory (process_vm_readv, PEEKDATA fallback). */
ssize_t tracee_read_mem(pid_t tid, uint64_t addr, void *buf, size_t len);
/* The same for the decoder: from a copy of the page(s), read again once a
 * thread was let run or memory written (tracee_mem_changed). */
ssize_t tracee_read_code(pid_t tid, uint64_t addr, void *buf, size_t len);
/* The target's memory was written other than by tracee_write_mem. */
void tracee_mem_changed(void);
/* Changes whenever the target may have written its memory (it ran, or
 * we wrote it). */
uint64_t tracee_mem_gen(void);
/* Write TID's memory: process_vm_writev, or /proc/TID/mem where that is
 * refused (a seccomp filter around cachetrace).  0 or -errno. */
int tracee_write_mem(pid_t tid, uint64_t addr, const void *buf, size_t len);
/* waitpid(TID, STATUS, __WALL) until TID reports; -1 (ESRCH) when it is
 * dead or a zombie that cannot report yet (a group leader whose other
 * threads live on: the main loop's wait sees its exit later). */
pid_t tracee_wait(pid_t tid, int *status);
/* tracee_wait for US microseconds at most: 0 when TID has not reported
 * by then. */
pid_t tracee_wait_within(pid_t tid, int *status, long us);
/* TID's wait event, without waiting: its tid, 0 when it has none, or -1.
 * The waits for any thread reap every event waiting and hand them out
 * in turn: a wait for one thread goes through here (or tracee_wait),
 * never waitpid. */
pid_t tracee_reap(pid_t tid, int *status);
/* Is an event of TID reaped and not handed out yet? */
bool tracee_event_held(pid_t tid);
/* None is (a process forked from ours: they were our events). */
void tracee_forget_held(void);
/* A job-control stop signal: its group-stop is kept with PTRACE_LISTEN. */
static inline bool is_stop_signal(int sig)
{
	return sig == SIGSTOP || sig == SIGTSTP || sig == SIGTTIN ||
	       sig == SIGTTOU;
}
/* Decode a wait status of thread TID.  While TRACEE_HOLD_SIG (SIGSTOP)
 * is the signal of our own job-control stop (guard.c), an interrupt stop
 * reporting it decodes as ours, with SIGTRAP. */
extern int tracee_hold_sig;
/* A line "KEY:\tvalue" of /proc/PID/status: its value in BUF, or NULL. */
char *proc_status_field(pid_t pid, const char *key, char *buf, size_t len);
/* /proc/TID/stat in BUF, from the field after the command name (" S
 * ppid..."), or NULL.  System calls only: the crash handler uses it. */
const char *proc_stat_fields(pid_t tid, char *buf, size_t len);
void tracee_decode_status(pid_t tid, int status, struct event_info *ei);
/* Wait for the next stop of any traced thread and decode it. */
void tracee_next_event(struct event_info *ei);
/* The next wait event if one is there, without waiting. */
bool tracee_poll_event(struct event_info *ei);
/* tracee_next_event, for US microseconds at most (then TE_NONE, errno
 * EAGAIN). */
void tracee_next_event_within(struct event_info *ei, long us);
/* Detach every thread, restarting it with no signal.  The threads must be
 * stopped (interrupt them first with tracee_stop_all). */
void tracee_detach_all(struct tracer *tr);
/* A SIGTRAP the kernel queued for the stopped T would be delivered when it
 * next runs: a step into a system call reports its exit so, and a thread
 * interrupted just as it hit our int3 (one byte past it) or a debug
 * register (at it) is stopped with that trap still queued.  Let it reach
 * its delivery stop and drop it, T rewound to our int3's instruction;
 * another signal met on the way goes to *KEEP (detach: pending_sig; a
 * thread joining a window: inject). */
void tracee_drop_queued_traps(struct tracer *tr, struct tracee *t, int *keep);
/* A SIGTRAP the kernel raised (a step, a breakpoint) is queued for TID,
 * not yet taken. */
bool tracee_trap_queued(pid_t tid);
/* Bring every running thread to a ptrace stop (PTRACE_INTERRUPT) so that
 * breakpoints can be removed and threads detached; pending events are
 * consumed, signals seen meanwhile are kept for re-injection at detach. */
void tracee_stop_all(struct tracer *tr);
/* Pin the tracer and each stepped thread to one CPU while stepping (3.5x
 * faster here: cross-CPU wake-ups cost ~50 us in this VM); restore
 * afterwards. */
void tracee_pin(struct tracer *tr, struct tracee *t);
/* T pinned to its own CPUs but the tracer's (tracee_pin where it has no
 * other): the instrument engine's ring read while T runs. */
void tracee_pin_apart(struct tracer *tr, struct tracee *t);
void tracee_unpin(struct tracee *t);
void tracee_unpin_self(struct tracer *tr);

/* inject.c: system calls run in a stopped thread of the target. */
/* Run system call NR with ARGS (six, unused ones 0) in T, which is in a
 * ptrace stop, its registers and pending state as they were afterwards.
 * Returns 0 with the call's return value in *RESULT (which may be -errno
 * of the call), or -errno when it could not be run (*WHY: a one-line
 * reason): the thread is gone (-ESRCH; a wait status taken meanwhile is
 * in t->deferred_status), no syscall instruction is mapped, the target
 * has a seccomp filter (we never risk it killing the target), T is
 * stopped inside a system call (a PTRACE_EVENT stop but
 * PTRACE_EVENT_STOP, a system-call entry) or has a kernel trap queued
 * (tracee_drop_queued_traps first).  T's stop is kept: a signal-delivery
 * stop with its siginfo, a PTRACE_EVENT_STOP made again; signals that
 * arrived meanwhile are pending again. */
int inject_syscall(struct tracer *tr, struct tracee *t, long nr,
		   const long args[6], long *result, const char **why);
/* A shared mapping in T's process of LEN bytes (a memfd, created in the
 * target) with PROT there, at HINT if that range is free (MAP_FIXED_NOREPLACE;
 * 0: anywhere), and the same file mapped read-write in the supervisor.
 * 0 and *TARGET_ADDR, *LOCAL (the supervisor's mapping), or -errno with *WHY. */
int inject_map_shared(struct tracer *tr, struct tracee *t, uint64_t hint,
		      size_t len, int prot, const char *name,
		      uint64_t *target_addr, void **local, const char **why);
/* Unmap [ADDR, ADDR+LEN) in T's process (munmap injected). */
int inject_unmap(struct tracer *tr, struct tracee *t, uint64_t addr,
		 size_t len, const char **why);

/* breakpoint.c */
int breakpoint_insert(pid_t tid, struct breakpoint *bp, uint64_t addr);
int breakpoint_remove(pid_t tid, struct breakpoint *bp);
/* BUF holds LEN bytes of text read at ADDR: put back the byte BP's int3
 * replaced, if it is among them. */
void breakpoint_shadow(const struct breakpoint *bp, uint64_t addr,
		       void *buf, size_t len);
int hwbp_clear(pid_t tid);
/* Our int3 under T's pc (being stepped), or NULL. */
struct breakpoint *breakpoint_at_pc(struct tracer *tr, const struct tracee *t);
/* The same for any PC. */
struct breakpoint *breakpoint_at(struct tracer *tr, uint64_t pc);
/* The int3 of ours a thread whose int3 trap left it at RIP hit, inserted
 * or taken out since (not where the target had its own int3); NULL if
 * none. */
struct breakpoint *breakpoint_trapped(struct tracer *tr, uint64_t rip);
/* Program T's debug registers as the armed start events want (none while
 * T is stepped). */
void hwbp_sync(struct tracer *tr, struct tracee *t);
/* Which slots fired (DR6 bits 0-3), and reset DR6. */
unsigned hwbp_hits(pid_t tid);

/* launch.c */
/* execvp's search, done before forking: NULL after a message when PROG
 * is missing or not executable. */
char *launch_find_program(const char *prog);
/* Fork PROG stopped, seize it, run it to its exec stop.  Returns its pid,
 * or -1 after a message (nothing left running). */
pid_t launch(struct tracer *tr, const char *path, char **argv);
/* Kill the launched target and reap every thread. */
void launch_kill_and_reap(pid_t pid);
/* The launched target's exit status as ours (128+N for signal N). */
int launch_wait_exit(struct tracer *tr);
/* PATH (WHAT in the message) is an x86-64 ELF file, or not ELF (a
 * script); -1 after a message for any other ELF. */
int launch_check_elf(const char *path, const char *what);
/* The ptrace options of every tracee. */
long launch_trace_options(const struct tracer *tr);

/* cpuid.c: T's next instruction is one the supervisor executes for it
 * (cpuid).  SUPER_NO: it is not (step it); SUPER_DONE: executed and
 * accounted, T still stopped at the next one; SUPER_ENDED: the same, and
 * T, a lead, met its stop event there (the run's VERDICT_STOP). */
enum super_outcome { SUPER_NO, SUPER_DONE, SUPER_ENDED };
enum super_outcome step_in_supervisor(struct tracer *tr, struct tracee *t);
/* --cpuid=valgrind around a real step of T: an xsave-family instruction
 * stepped with edx:eax & 7, then (RAN: it completed, no handler entered)
 * its rax and rdx put back in AFTER and the thread (cpuid.c). */
void cpuid_vg_before_step(struct tracer *tr, struct tracee *t);
void cpuid_vg_after_step(struct tracee *t, struct user_regs_struct *after,
			 bool ran);

/* hostprobe.c: run the probes (once; forced answers applied). */
void hostcaps_probe(struct hostcaps *hc);
const char *hostcaps_landing_name(enum landing l);
/* The start events as this host allows them: where the debug registers
 * do not fire, --start becomes an int3 with a note, and --start-watch or
 * an explicit --breakpoints=hw an error.  -1 after a message. */
int hostcaps_apply(struct tracer *tr);
/* process_vm_readv and process_vm_writev work (no seccomp filter refuses
 * them): the emulator's memory needs them. */
bool hostcaps_vm_rw(void);

/* attach.c: seize every thread of PID and stop them all.  0, or -1 after
 * a one-line message, the target left untouched. */
int attach(struct tracer *tr, pid_t pid);
char *attach_read_cmdline(pid_t pid);

/* window.c */
bool window_has_start_event(const struct tracer *tr);
/* The start event as the command line gave it, for messages
 * ("--start=work", "--toggle-signal=SIGUSR2"): a static buffer. */
const char *window_start_event(const struct tracer *tr);
bool window_all_done(const struct tracer *tr);
bool window_can_begin(const struct tracer *tr);
/* Thread T was just born (a clone, or its first stop): with
 * --threads=all during a window, it joins it. */
void window_thread_born(struct tracer *tr, struct tracee *t);
/* Before the profile is written at the end: the threads whose part of a
 * window is not accounted yet (running free when it ended) stopped, and
 * their part accounted. */
void window_finish_parts(struct tracer *tr);
/* start.c: resolve and arm the start events at the beginning of the run
 * (or again after an exec); -1 after a message. */
int window_setup(struct tracer *tr);
int window_arm_or_wait_for_entry(struct tracer *tr, bool retry);
/* Thread T, stopped at the start event, leads a new window; returns how
 * T is restarted (RESTART_NONE after a fatal error). */
enum restart window_begin_thread(struct tracer *tr, struct tracee *t);
void window_end(struct tracer *tr, struct tracee *lead, const char *reason);
void window_end_all(struct tracer *tr, const char *reason);
/* How the lead of a window that just ended is restarted. */
enum restart window_after(struct tracer *tr, struct tracee *lead);
/* Thread T, stopped, joins the running window (--threads=all). */
void window_join(struct tracer *tr, struct tracee *t);
/* Stop stepping thread T, now or at its next stop. */
void window_leave(struct tracer *tr, struct tracee *t, bool run_on);
void window_toggle(struct tracer *tr);

/* sample.c: --sample and --duration. */
/* The run's start: the first sample due one period from now. */
void sample_arm(struct tracer *tr);
/* Between events: begins a sample that is due (or lets the next start
 * event begin it); returns how long (us) the loop may wait for an event
 * before it looks again, -1 as long as it likes; *EXPIRED when
 * --duration's time is up. */
long sample_tick(struct tracer *tr, bool *expired);
/* A window may begin: no sampling, or a sample is due. */
bool sample_due(const struct tracer *tr);
/* Window of lead T begins (window_begin_thread), ends (window_end). */
void sample_begin(struct tracer *tr, struct tracee *t);
void sample_end(struct tracer *tr, struct tracee *lead);
/* T, at its window's cap: true when that was the end of the warm-up,
 * the window going on, counted from here. */
bool sample_warmed(struct tracer *tr, struct tracee *t);
/* The profile's table: the samples' (a sample's counted part so far
 * added to it first). */
struct cost_table *sample_costs(struct tracer *tr);
/* The statistics of the samples, per function, as comment lines after a
 * profile's summary: cg_annotate skips them, cachetrace-annotate gives
 * each function's estimates a confidence interval from them
 * (src/report/annotate/sampled.c has the format). */
void sample_write_stats(struct tracer *tr, FILE *f);
/* The summary's line of how many samples the top functions' estimates
 * rest on. */
void sample_print_support(struct tracer *tr, FILE *f, const char *prefix);
void sample_free(struct tracer *tr);
/* touched.c: PID's memory never touched, now (NULL: unknown), valid until
 * the next call (AT_END: a sample's end); freed by touched_free. */
const struct sample_mem *touched_snapshot(struct tracer *tr, pid_t pid,
					  bool at_end);
void touched_free(struct tracer *tr);
/* The --sample line of the profile (DESC) or of the summary. */
void sample_describe(const struct tracer *tr, FILE *f, const char *prefix,
		     bool desc);
void window_assign_core(struct tracer *tr, struct tracee *t);
/* The model cores threads are spread over. */
unsigned window_cores(const struct tracer *tr);
/* Stop every other thread, keeping their wait statuses, and dispatch them
 * later (window_replay_deferred): nothing runs beside T. */
void window_stop_others(struct tracer *tr, struct tracee *t);
/* Dispatch the kept wait statuses (but a hand-over's). */
void window_replay_deferred(struct tracer *tr);
/* T (stopped, in a window, its registers written back) gives its turn to
 * the others: it goes on from where it is after every thread that gave
 * its turn before it (TF_HANDOVER; tracer_run). */
void window_hand_over(struct tracer *tr, struct tracee *t);
/* The thread that gave its turn first (TF_HANDOVER), or NULL. */
struct tracee *window_next_turn(const struct tracer *tr);
/* T takes its turn (it runs on if its window ended meanwhile). */
void window_take_turn(struct tracer *tr, struct tracee *t);
/* T executes the instruction under our int3 BP with the others stopped. */
int window_step_over_int3(struct tracer *tr, struct tracee *t,
			  struct breakpoint *bp);
/* A SIGTRAP of T, not stepped: one of our start events (true, *HOW set),
 * or not ours (false). */
bool window_on_trap(struct tracer *tr, struct tracee *t, enum restart *how);
/* T stopped one byte past the loader hook's int3 (in, or taken out while
 * T was already trapping on it). */
bool window_dlhook_int3_hit(struct tracer *tr, struct tracee *t,
			    uint64_t rip);
/* Detach from every thread so that the target runs on natively. */
void window_release(struct tracer *tr);
/* A fatal error: the run ends with status 1, the target released. */
void tracer_fail(struct tracer *tr);

/* guard.c: the guardian that releases an attached target if cachetrace
 * dies, and our job-control stop that keeps the target from running
 * meanwhile (issue 28). */
/* Start the guardian and the stop, after the attach (every thread in an
 * interrupt stop) and before anything is armed.  0, or -1 after a note:
 * the run goes on unguarded. */
int guard_start(struct tracer *tr);
/* The journal the guardian reads (include/journal.h): NULL when no
 * guardian watches (a launched target, or none could be started). */
struct journal;
extern struct journal *guard_journal;
/* Tests (tests/attach/kill9.sh): CACHETRACE_FAULT=kill@SITE:N kills us
 * with SIGKILL at the Nth pass here ("wb": halfway through a write-back
 * of the emulator's memory and registers). */
void guard_fault(const char *site);
/* The same once thread TID, just let run, stands in its next stop, not
 * yet collected by us: the kernel's way with a stop whose tracer dies
 * (kill@parked:N, tests/attach/ringfill.sh). */
void guard_fault_stopped(pid_t tid, const char *site);
/* T's stop holds SIG for it (0: none any more): the guardian sends it. */
void guard_signal(struct tracee *t, int sig);
/* An int3 replacing ORIG at ADDR of TID's process goes in or came out. */
void guard_int3(pid_t tid, uint64_t addr, uint8_t orig, bool in);
/* --engine=lockstep:instrument's int3 K at ADDR in a code cache (0:
 * none), replacing ORIG. */
void guard_cache_int3(unsigned k, uint64_t addr, uint8_t orig);
/* Debug registers were programmed. */
void guard_dr_used(void);
/* T is about to be pinned (its own mask SAVED), or was given it back
 * (NULL): the guardian gives it back if cachetrace dies. */
void guard_pin(struct tracee *t, const cpu_set_t *saved);
/* A signal-delivery stop of SIG: our stop came back (SIGSTOP we sent),
 * was replaced by the user's, or ended (SIGCONT): keep it in effect. */
void guard_on_signal(struct tracer *tr, int sig);
/* SIG, the signal of thread TID's signal-delivery stop, as it is to be
 * delivered: 0 for the kernel's SIGHUP to a process group that became
 * orphaned while our stop held the target, a notice our stop alone
 * brought on (a group with no stopped member gets none; a note says so).
 * Every path that delivers a stop's signal asks. */
int guard_deliverable(struct tracer *tr, pid_t tid, int sig);
/* The target is released (every thread detached): end our stop and
 * dismiss the guardian. */
void guard_release(struct tracer *tr);
/* The target process ended while traced: the guardian is dismissed,
 * with nothing to release (it said it ended "without releasing"). */
void guard_gone(void);

/* children.c */
void children_new(struct tracer *tr, struct tracee *t, struct event_info *ei);
bool children_is_helper(const struct tracer *tr, pid_t pid);
/* The vfork child of T exec'd or exited: put our int3s back. */
void children_vfork_done(struct tracer *tr, struct tracee *t);
void children_wait_helpers(struct tracer *tr);
enum restart children_on_exec(struct tracer *tr, struct tracee *t);
/* --auxv=valgrind at T's exec stop (auxv.c): 0, or -1 (reported). */
int auxv_as_valgrind(struct tracee *t);

/* dispatch.c */
/* One event: dispatched, its thread restarted.  False when the run is
 * over. */
bool dispatch(struct tracer *tr, struct event_info *ei);
/* The one place a thread is restarted (also for threads that the window
 * logic restarts as a side effect). */
void tracer_restart(struct tracer *tr, struct tracee *t, enum restart how);
/* Until the windows are done and the target released, or it is gone. */
void tracer_run(struct tracer *tr);

/* emulate.c: the emulate and lockstep engines' state. */
void emu_free(struct tracer *tr);
/* The summary's lines about the engine. */
void emu_describe(const struct tracer *tr, FILE *f, const char *prefix);
/* The same of the instrument engine (instrument.c). */
void inst_describe(const struct tracer *tr, FILE *f, const char *prefix);
void inst_free(struct tracer *tr);
/* gate.c: the native engine's counters (--counters) and report. */
int gate_setup(struct tracer *tr);
void gate_stop(struct tracer *tr, struct tracee *t);
/* --threads=all: thread TID (not the window's lead) counted as it runs,
 * from now to the window's end. */
void gate_count_thread(struct tracer *tr, pid_t tid);
/* --counter-sample: true while samples are taken (the loop then reads
 * the kernel's rings with gate_poll every few milliseconds). */
bool gate_sampling(const struct tracer *tr);
void gate_poll(struct tracer *tr);
void gate_describe(const struct tracer *tr, FILE *f, const char *prefix);
void gate_print_summary(const struct tracer *tr, FILE *f,
			const char *prefix);
void gate_free(struct tracer *tr);
/* Lockstep found the emulator and the CPU disagreeing. */
bool emu_diverged(const struct tracer *tr);
uint64_t emu_emulated(const struct tracer *tr);
/* Run a small program in Unicorn: 0 (WHY names the version), or -1 and
 * the reason in WHY. */
int emu_selftest(char *why, size_t len);

/* check.c: cachetrace --check.  The exit status: 0 when tracing works
 * here (with fallbacks), 1 when it cannot. */
int check_host(struct tracer *tr);

/* output.c */
/* Before anything runs: every output name can be written, the folded
 * event exists.  -1 after a message. */
int output_check(struct tracer *tr);
/* The flat profile's name, for the target's pid. */
int output_open(struct tracer *tr);
/* Render the profiles (target attached, once per image). */
void output_write_profile(struct tracer *tr);
/* Write what was rendered (target released); failures set
 * tr->had_error. */
void output_commit(struct tracer *tr);
/* Drop what was rendered (a failed run). */
void output_abort(struct tracer *tr);
void output_print_summary(struct tracer *tr);

#endif
