/* Windows: the start and stop events, a window's beginning and end, the
 * int3 step-over, and releasing the target.
 *
 * A window begins when a thread meets the start event (--start, a watch,
 * the toggle signal, or the first instruction after exec when the whole
 * run is traced); that thread leads it.  With --threads=hit every thread
 * that hits the start leads its own window, several at once; with
 * --threads=all every thread joins the one window.  A window ends at its
 * lead's stop event (engine_at_stop) or when something ends it early (the
 * reason is then the profile's "Partial profile").  After the last window
 * every thread is released: breakpoints out, debug registers cleared,
 * detached. */
#include "tracer.h"

#include <sys/syscall.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <unistd.h>

#include "error.h"

bool window_has_start_event(const struct tracer *tr)
{
	return tr->opt.start || tr->opt.start_watch || tr->opt.toggle_signal ||
	       tr->opt.sample_len;
}

const char *window_start_event(const struct tracer *tr)
{
	static char buf[512];
	const struct options *o = &tr->opt;
	if (o->start && o->sample_len)
		snprintf(buf, sizeof(buf), "--start=%s with --sample=%s",
			 o->start, o->sample_arg);
	else if (o->start)
		snprintf(buf, sizeof(buf), "--start=%s", o->start);
	else if (o->sample_len)
		snprintf(buf, sizeof(buf), "--sample=%s", o->sample_arg);
	else if (o->start_watch)
		snprintf(buf, sizeof(buf), "--start-watch=%s", o->start_watch);
	else if (o->toggle_signal)
		snprintf(buf, sizeof(buf), "--toggle-signal=SIG%s",
			 sigabbrev_np(o->toggle_signal) ?
			 sigabbrev_np(o->toggle_signal) : "?");
	else
		snprintf(buf, sizeof(buf), "no start event");
	return buf;
}

bool window_all_done(const struct tracer *tr)
{
	return window_has_start_event(tr) && tr->opt.intervals &&
	       !tr->n_active && tr->windows_done >= tr->opt.intervals;
}

/* With --threads=hit every thread that hits the start leads its own
 * window, several at once; --threads=all steps everything in one window
 * at a time. */
bool window_can_begin(const struct tracer *tr)
{
	if (tr->opt.intervals && tr->eng.windows >= tr->opt.intervals)
		return false;
	if (!sample_due(tr))
		return false;
	/* The native engine's windows are one at a time: one stop event,
	 * and the other threads are counted, not stepped. */
	return !((tr->opt.threads_all || tr->engine->unstepped) &&
		 tr->n_active);
}

void window_thread_born(struct tracer *tr, struct tracee *t)
{
	if (!tr->opt.threads_all || !tr->n_active)
		return;
	if (tr->engine->unstepped)
		gate_count_thread(tr, t->tid);	/* counted as it runs */
	else
		t->flags |= TF_WANT_STEP;	/* joins at its next stop */
}

void tracer_fail(struct tracer *tr)
{
	tr->done = tr->failed = true;
	tr->exit_status = 1;
}

/* Threads stopped for an int3 step-over or an emulated slice whose wait
 * status was kept for later: at the release it is read as tracee_stop_all
 * reads the ones it takes (a SIGTRAP one byte past our int3 must be
 * rewound, a signal delivered at the detach). */
static void settle_deferred(struct tracer *tr)
{
	struct tracee *next;
	for (struct tracee *t = tr->tracees; t; t = next) {
		next = t->next;
		if (!t->has_deferred)
			continue;
		int status = t->deferred_status;
		t->has_deferred = false;
		if (t->flags & TF_HANDOVER) {
			/* a turn given, not a stop: nothing to read */
			t->flags &= ~TF_HANDOVER;
			continue;
		}
		if (WIFEXITED(status) || WIFSIGNALED(status)) {
			if (t->tid == tr->target_pid)
				tr->target_status = status;
			tracee_remove(tr, t->tid);
			continue;
		}
		unsigned event = (unsigned)status >> 16;
		int sig = WSTOPSIG(status);
		if (event == 0 && sig == SIGTRAP)
			t->flags |= TF_TRAPPED;
		else if (event == 0 && !t->pending_sig)
			t->pending_sig = guard_deliverable(tr, t->tid, sig);
	}
}

void window_finish_parts(struct tracer *tr)
{
	settle_deferred(tr);
	tracee_stop_all(tr);
	for (struct tracee *t = tr->tracees; t; t = t->next) {
		if (!tracee_stepping(t) || !tracee_stopped(t) ||
		    (!t->in_cache && !tr->engine->unstepped))
			continue;
		/* In the instrument engine's code cache (its window ended
		 * as it ran there): back at its original instruction, its
		 * part accounted.  Running natively (the native engine):
		 * its counters read.  A trap it took stays for the release
		 * to rewind, but in the cache, where its state is put back. */
		bool cache = t->in_cache;
		tr->engine->end_window(tr, t);
		t->flags &= ~(cache ? TF_TRAPPED | TF_ENDING : TF_ENDING);
	}
}

void window_release(struct tracer *tr)
{
	/* (done already where a profile was written before: then nothing
	 * is left to end) */
	window_finish_parts(tr);
	for (struct tracee *t = tr->tracees; t; t = t->next) {
		if (!tracee_trapped(t))
			continue;
		/* Stopped on a SIGTRAP: one byte past our int3, it is rewound
		 * to execute the original instruction natively; a SIGTRAP
		 * someone sent is delivered at the detach; any other (a
		 * debug-register hit, a step) was ours. */
		struct user_regs_struct r;
		int code = tracee_si_code(t->tid);
		if (tracee_getregs(t->tid, &r) == 0 &&
		    ((tr->start_bp.inserted && r.rip == tr->start_bp.addr + 1) ||
		     (tr->entry_bp.inserted && r.rip == tr->entry_bp.addr + 1) ||
		     /* (an int3's trap: also one taken out since, as the
		      * native engine's stop event is at each window's end) */
		     (code == SI_KERNEL && breakpoint_trapped(tr, r.rip)) ||
		     window_dlhook_int3_hit(tr, t, r.rip))) {
			r.rip--;
			tracee_setregs(t->tid, &r);
		} else if (si_code_is_sent(tracee_si_code(t->tid)) &&
			   !t->pending_sig) {
			t->pending_sig = SIGTRAP;
		}
		t->flags &= ~TF_TRAPPED;
	}
	if (tr->engine->release)
		tr->engine->release(tr);
	pid_t any = tr->tracees ? tr->tracees->tid : tr->target_pid;
	for (unsigned i = 0; i < N_INT3; i++) {
		uint64_t addr = tracer_int3(tr, i)->addr;
		int rc = tr->tracees ? breakpoint_remove(any, tracer_int3(tr, i))
				     : 0;
		if (rc < 0) {
			/* The target keeps an int3: it says so, and so does
			 * our exit status. */
			errno = -rc;
			perror_msg("cannot remove the breakpoint at 0x%" PRIx64
				   " from process %d", addr, tr->target_pid);
			tr->had_error = true;
		}
	}
	for (struct tracee *t = tr->tracees; t; t = t->next) {
		tracee_unpin(t);
		if (t->dr_mask)
			hwbp_clear(t->tid);
	}
	tracee_unpin_self(tr);
	tracee_detach_all(tr);
	guard_release(tr);
}

/* Bring every thread but T to a ptrace stop, keeping the wait status of
 * each (its event is dispatched later, by replay_deferred), so that none
 * can run through the text while an int3 is out. */
void window_stop_others(struct tracer *tr, struct tracee *t)
{
	for (struct tracee *o = tr->tracees; o; o = o->next)
		if (o != t && !tracee_stopped(o))
			tracee_interrupt(o->tid);
	for (struct tracee *o = tr->tracees; o; o = o->next) {
		if (o == t || tracee_stopped(o))
			continue;
		int status;
		if (tracee_wait(o->tid, &status) < 0)
			continue;	/* gone: nothing to replay */
		if (tracee_stepping(o) && WIFSTOPPED(status) &&
		    (unsigned)status >> 16 == PTRACE_EVENT_STOP &&
		    tracee_trap_queued(o->tid)) {
			/* Its real step ran, and our interrupt overtook the
			 * step's trap (the kernel reports a pending interrupt
			 * before a queued signal): take the trap, which is
			 * what its engine waits for.  Left queued, it came
			 * after the window, to a thread no longer stepped,
			 * and was delivered: the target died of a SIGTRAP
			 * (attach/verify-threads, emulate: a thread's rdtsc
			 * on the CPU while another began its slice). */
			int st;
			if (tracee_restart_pid(o->tid, PTRACE_CONT, 0) == 0 &&
			    tracee_wait(o->tid, &st) >= 0)
				status = st;
		}
		o->deferred_status = status;
		o->has_deferred = true;
		if (WIFSTOPPED(status))
			o->flags |= TF_STOPPED;
	}
}

static void replay(struct tracer *tr, struct tracee *o)
{
	o->has_deferred = false;
	o->flags &= ~(TF_STOPPED | TF_HANDOVER);	/* dispatch sets it */
	struct event_info ei;
	tracee_decode_status(o->tid, o->deferred_status, &ei);
	dispatch(tr, &ei);
}

void window_replay_deferred(struct tracer *tr)
{
	for (;;) {
		struct tracee *o = tr->tracees;
		while (o && (!o->has_deferred || (o->flags & TF_HANDOVER)))
			o = o->next;
		if (!o)
			return;
		replay(tr, o);
	}
}

void window_hand_over(struct tracer *tr, struct tracee *t)
{
	/* What the dispatcher reads as a trap of a stepped thread: the
	 * engine's trap op sees the hand-over and accounts nothing. */
	t->deferred_status = (SIGTRAP << 8) | 0x7f;
	t->has_deferred = true;
	t->flags |= TF_STOPPED | TF_HANDOVER;
	t->handover_seq = ++tr->handover_seq;
}

struct tracee *window_next_turn(const struct tracer *tr)
{
	struct tracee *first = NULL;
	for (struct tracee *o = tr->tracees; o; o = o->next)
		if ((o->flags & TF_HANDOVER) &&
		    (!first || o->handover_seq < first->handover_seq))
			first = o;
	return first;
}

void window_take_turn(struct tracer *tr, struct tracee *t)
{
	if (!tracee_stepping(t))
		tracer_restart(tr, t, RESTART_CONT);	/* its window ended
							 * while it waited */
	else
		replay(tr, t);
}

/* T came back from its step over the int3 with STATUS: account it (when
 * stepped) or keep what happened instead.  0, or -1 when T did not come
 * back from the step. */
static int int3_step_done(struct tracer *tr, struct tracee *t, int status,
			  int sig)
{
	t->flags |= TF_STOPPED;
	unsigned event = (unsigned)status >> 16;
	if (event == 0 && WSTOPSIG(status) == SIGTRAP) {
		struct user_regs_struct after;
		bool moved = sig && tracee_si_code(t->tid) == SIGTRAP;
		if (tracee_getregs(t->tid, &after) < 0)
			return -1;
		if (!tracee_stepping(t) || tr->engine->unstepped)
			t->regs = after;
		else if (moved)
			engine_moved(&tr->eng, t, &after);
		else {
			step_check_landing(tr, t, &after);
			engine_account(&tr->eng, t, &after);
		}
		return 0;
	}
	if (event == 0) {
		/* nothing ran */
		t->inject = guard_deliverable(tr, t->tid, WSTOPSIG(status));
		return 0;
	}
	t->deferred_status = status;
	t->has_deferred = true;
	return -1;
}

/* Thread T (stopped, rip at our int3's address) executes the original
 * instruction there (the start event's int3, or the loader hook's): the
 * others are stopped, the byte restored for one
 * step, and the int3 put back; a software breakpoint thus misses no hit in
 * another thread.  The step is accounted when T is being stepped.
 * Returns 0, or -1 when T did not come back from the step (gone, or an
 * event that was deferred to the dispatcher). */
int window_step_over_int3(struct tracer *tr, struct tracee *t,
			  struct breakpoint *bp)
{
	uint64_t addr = bp->addr;
	window_stop_others(tr, t);
	breakpoint_remove(t->tid, bp);
	int sig = t->inject, rc = -1;
	t->inject = 0;
	hwbp_sync(tr, t);
	tracee_restart(t, PTRACE_SINGLESTEP, sig);
	int status;
	pid_t r = tracee_wait(t->tid, &status);
	struct tracee *any = NULL;
	if (r == t->tid && WIFSTOPPED(status)) {
		rc = int3_step_done(tr, t, status, sig);
		any = t;
	} else if (r == t->tid) {
		t->deferred_status = status;	/* gone: replayed as exited */
		t->has_deferred = true;
	}
	for (struct tracee *o = tr->tracees; o && !any; o = o->next)
		if (tracee_stopped(o) && !o->has_deferred)
			any = o;
	for (struct tracee *o = tr->tracees; o && !any; o = o->next)
		if (tracee_stopped(o))
			any = o;
	if (any && breakpoint_insert(any->tid, bp, addr) < 0)
		error_msg("cannot put the breakpoint at 0x%" PRIx64 " back",
			  addr);
	window_replay_deferred(tr);
	return rc;
}

void window_join(struct tracer *tr, struct tracee *t)
{
	t->flags &= ~TF_WANT_STEP;
	if (tr->engine->begin_window(tr, t) < 0)
		return;		/* dying: its exit event follows */
	tracer_restart(tr, t, RESTART_STEP);
}

/* --cores, else the model's own cores (jaguar's eight; hier and host made
 * with a core per thread under --threads=all), else one. */
unsigned window_cores(const struct tracer *tr)
{
	if (tr->opt.cfg.cores)
		return tr->opt.cfg.cores;
	unsigned own = tr->eng.cm ? tr->eng.cm->n_cores : 0;
	return own ? own : 1;
}

/* Keep where thread T went, for the summary (threads leave the table when
 * they exit). */
static void note_core(struct tracer *tr, struct tracee *t)
{
	if (t->core_log_slot) {
		tr->core_log[t->core_log_slot - 1].core = t->core;
		return;
	}
	if (tr->n_core_log == tr->cap_core_log) {
		tr->cap_core_log = tr->cap_core_log ? 2 * tr->cap_core_log : 8;
		tr->core_log = xreallocarray(tr->core_log, tr->cap_core_log,
					     sizeof(*tr->core_log));
	}
	tr->core_log[tr->n_core_log].tid = t->tid;
	tr->core_log[tr->n_core_log++].core = t->core;
	t->core_log_slot = tr->n_core_log;
}

void window_assign_core(struct tracer *tr, struct tracee *t)
{
	unsigned cores = window_cores(tr);
	t->core = t->seq % cores;
	for (unsigned i = 0; i < tr->opt.n_core_map; i++)
		if (tr->opt.core_map[i].tid == t->tid) {
			t->core = tr->opt.core_map[i].core;
			break;
		}
	note_core(tr, t);
}

/* The stop event of the window T leads, from where T stands at the start
 * event.  -1 after a message. */
static int set_stop_event(struct tracer *tr, struct tracee *t)
{
	memset(&t->win, 0, sizeof(t->win));
	if (tr->opt.stop) {
		t->win.stop_pc = tr->stop_addr;
	} else if (tr->opt.start) {
		/* At the first instruction of the start function the return
		 * address is at [rsp]. */
		uint64_t ret;
		if (tracee_read_mem(t->tid, t->regs.rsp, &ret, 8) != 8) {
			error_msg("cannot read the return address of %s",
				  tr->opt.start);
			return -1;
		}
		t->win.on_return = true;
		t->win.stop_pc = ret;
		t->win.entry_sp = t->regs.rsp;
	}
	return 0;
}

/* --threads=all: every other thread joins at its next stop. */
static void join_others(struct tracer *tr, struct tracee *t)
{
	for (struct tracee *o = tr->tracees; o; o = o->next) {
		if (o == t || tracee_stepping(o))
			continue;
		if (tracee_stopped(o)) {
			window_join(tr, o);
		} else {
			o->flags |= TF_WANT_STEP;
			tracee_interrupt(o->tid);
		}
	}
}

/* The progress line, where the target's own output cannot mangle it
 * (issue 26): on our terminal it is cleared before every system call the
 * window's threads make (step_issue), which covers the target when no
 * other thread of it runs natively meanwhile. */
static bool progress_fits(const struct tracer *tr)
{
	if (!tr->progress_wanted)
		return false;
	if (!tr->target_on_our_tty || tr->opt.threads_all)
		return true;
	return tr->tracees && !tr->tracees->next;	/* one thread */
}

/* Thread T, stopped at the start event, leads a new window.  Returns how
 * T is restarted (RESTART_NONE after a fatal error). */
enum restart window_begin_thread(struct tracer *tr, struct tracee *t)
{
	struct engine *e = &tr->eng;
	e->windows++;
	e->max_steps = tr->opt.max_insns;
	if (!tr->n_active++) {
		/* nothing holds what the decoder forgot (a JIT's rewritten
		 * code) any more */
		decode_reclaim(e->dec);
		e->t_start = e->t_last_progress = now_seconds();
		e->progress = progress_fits(tr);
		/* --cache-state=cold: as the first window, which nothing ran
		 * before (not while another window runs: they share them). */
		if (tr->opt.cold_windows && (e->windows > 1 || tr->execs)) {
			cache_flush(e->cm);
			branch_flush(e->bm);
		}
	}
	for (struct tracee *o = tr->tracees; o; o = o->next)
		window_assign_core(tr, o);
	if (!tracee_stepping(t) && tr->engine->begin_window(tr, t) < 0) {
		perror_msg("reading the registers of %d", t->tid);
		tracer_fail(tr);
		return RESTART_NONE;
	}
	t->flags |= TF_LEAD;
	if (set_stop_event(tr, t) < 0) {
		tracer_fail(tr);
		return RESTART_NONE;
	}
	sample_begin(tr, t);
	if (e->cs && callstack_begin(e->cs, t->tid, &t->regs) < 0)
		debug_msg("no initial call stack for thread %d", t->tid);
	debug_msg("window %u begins at 0x%llx in thread %d", e->windows,
		  t->regs.rip, t->tid);
	if (tr->opt.threads_all && !tr->engine->unstepped)
		join_others(tr, t);
	return RESTART_STEP;
}

void window_leave(struct tracer *tr, struct tracee *t, bool run_on)
{
	if (!tracee_stopped(t)) {
		t->flags |= TF_ENDING;	/* that step is still accounted */
		if (t->in_cache)	/* it may not stop by itself for long */
			tracee_interrupt(t->tid);
		return;
	}
	tr->engine->end_window(tr, t);
	if (run_on)
		tracer_restart(tr, t, RESTART_CONT);
}

/* End the window that thread LEAD leads: its stop event, or a reason it
 * ended early.  A stopped LEAD is left stopped for the caller. */
/* The common system calls a thread waits in, by number. */
static const char *syscall_name(long long nr)
{
	switch (nr) {
	case SYS_read: return "read";
	case SYS_write: return "write";
	case SYS_poll: return "poll";
	case SYS_select: return "select";
	case SYS_pause: return "pause";
	case SYS_nanosleep: return "nanosleep";
	case SYS_connect: return "connect";
	case SYS_accept: return "accept";
	case SYS_recvfrom: return "recvfrom";
	case SYS_recvmsg: return "recvmsg";
	case SYS_wait4: return "wait4";
	case SYS_rt_sigtimedwait: return "rt_sigtimedwait";
	case SYS_rt_sigsuspend: return "rt_sigsuspend";
	case SYS_futex: return "futex";
	case SYS_clock_nanosleep: return "clock_nanosleep";
	case SYS_epoll_wait: return "epoll_wait";
	case SYS_waitid: return "waitid";
	case SYS_pselect6: return "pselect6";
	case SYS_ppoll: return "ppoll";
	case SYS_epoll_pwait: return "epoll_pwait";
	case SYS_accept4: return "accept4";
	case SYS_restart_syscall: return "restart_syscall: a sleep or wait "
					 "resumed after an interruption";
	default: return NULL;
	}
}

void window_end(struct tracer *tr, struct tracee *lead, const char *reason)
{
	struct engine *e = &tr->eng;
	if (!tracee_leads(lead))
		return;
	if (lead->in_syscall && !lead->win.steps && !tr->opt.quiet &&
	    !tr->engine->unstepped) {
		/* No progress: say why rather than show an empty window. */
		const char *name = syscall_name(lead->syscall_at_start);
		char nr[32];
		snprintf(nr, sizeof(nr), "%lld", lead->syscall_at_start);
		error_msg("note: thread %d ran no instruction in window %u: it "
			  "spent the window in the system call it was waiting "
			  "in when the window began (%s)", lead->tid, e->windows,
			  name ? name : nr);
	}
	sample_end(tr, lead);
	lead->flags &= ~TF_LEAD;
	tr->n_active--;
	tr->windows_done++;
	if (reason)
		tr->partial_reason = reason;
	if (e->cs)
		callstack_end(e->cs);
	if (!tr->n_active) {
		e->t_stepping += now_seconds() - e->t_start;
		engine_clear_progress(e);
	}
	bool more = window_has_start_event(tr) && !reason &&
		    !(tr->opt.intervals && e->windows >= tr->opt.intervals);
	if (!more && !tr->n_active)
		tr->dr_want = 0;
	if (tr->opt.threads_all) {
		for (struct tracee *t = tr->tracees; t; t = t->next)
			if (t != lead && tracee_stepping(t))
				window_leave(tr, t, more);
	}
	if (tracee_stopped(lead)) {
		tr->engine->end_window(tr, lead);
	} else {
		lead->flags |= TF_ENDING;
		/* Running free in the instrument engine's code cache, or
		 * natively (the native engine), it may not stop on its own
		 * for long: its next stop ends its part (dispatch_stepping). */
		if (lead->in_cache || tr->engine->unstepped)
			tracee_interrupt(lead->tid);
	}
	/* The tracer stays on its CPU until the release (window_release):
	 * it sleeps there between windows, and the next window pins its
	 * thread to it again without three sched_*affinity calls of ours
	 * (a short window's cost, bench/windows.c). */
}

enum restart window_after(struct tracer *tr, struct tracee *lead)
{
	/* Unless all the windows are done: then everything is released
	 * together. */
	return window_all_done(tr) ? RESTART_NONE : RESTART_CONT;
}

void window_end_all(struct tracer *tr, const char *reason)
{
	for (struct tracee *t = tr->tracees; t; t = t->next)
		if (tracee_leads(t))
			window_end(tr, t, reason);
}

void window_toggle(struct tracer *tr)
{
	if (tr->n_active) {
		for (struct tracee *t = tr->tracees; t; t = t->next) {
			if (!tracee_leads(t))
				continue;
			window_end(tr, t, NULL);
			if (tracee_stopped(t))
				tracer_restart(tr, t, window_after(tr, t));
		}
		return;
	}
	if (!window_can_begin(tr))
		return;
	/* The target's main thread (the first one left) wherever it is. */
	struct tracee *t = tracee_find(tr, tr->target_pid);
	if (!t)
		t = tr->tracees;
	if (!t)
		return;
	if (tracee_stopped(t)) {
		tracer_restart(tr, t, window_begin_thread(tr, t));
		return;
	}
	t->flags |= TF_WANT_WINDOW;
	tracee_interrupt(t->tid);
}
