/* The event loop, after strace's:
 *
 *   while (dispatch(next_event())) ;
 *
 * tracee_next_event waits for any thread and turns the wait status into
 * an enum tracer_event (event.h); dispatch is one switch on it that
 * decides how the thread goes on (enum restart) and restarts it in one
 * place, tracer_restart, which the window logic also uses for the threads
 * it restarts as a side effect (--threads=all joins and leaves). */
#include "tracer.h"

#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "error.h"

/* An engine busy while its threads run (engine_ops.busy) that has
 * nothing to do now looks again at once, BUSY_SPINS times (yielding the
 * CPU, after a look for events: a thread in the code cache writes the 16
 * KiB the instrument engine waits for in microseconds, and a timed wait
 * sleeps 50 us at least, the kernel's timer slack), then waits this long
 * for an event before each look. */
#define BUSY_SPINS 64
#define BUSY_IDLE_US 200
/* With no window, the longest the loop waits for an event before it looks
 * at the signals it counts (toggles, interrupts) again. */
#define IDLE_LOOK_US 100000

/* Tests only (tests/tracer/terminal.py): CACHETRACE_TEST_WAIT_LATE puts
 * 300 ms between the loop's look at its signals and its wait, where no
 * window runs, so that a signal comes in between. */
static void wait_late(void)
{
	static int late = -1;
	if (late < 0)
		late = getenv("CACHETRACE_TEST_WAIT_LATE") != NULL;
	if (late)
		usleep(300000);
}

/* Run T, a thread of a window, with the engine, and act on its verdict
 * (engine.h): the engine moves the thread, the tracer decides what
 * becomes of the window. */
static void tracer_step(struct tracer *tr, struct tracee *t)
{
	for (;;) {
		enum verdict v = tr->engine->run(tr, t);
		if (v == VERDICT_INT3) {
			/* Our int3 under its pc: executed with the other
			 * threads stopped, then the run goes on. */
			if (window_step_over_int3(tr, t, t->win.int3) < 0)
				return;
			if (t->win.lost)
				v = VERDICT_LOST;
			else if (tracee_leads(t) && engine_at_stop(&tr->eng, t))
				v = VERDICT_STOP;
			else if (tracee_stepping(t))
				continue;
		}
		switch (v) {
		case VERDICT_STOP:
			if (sample_warmed(tr, t))
				continue;	/* counted from here */
			window_end(tr, t, NULL);
			tracer_restart(tr, t, window_after(tr, t));
			return;
		case VERDICT_FAILED:
			if (tracee_leads(t))
				window_end(tr, t, t->win.fail);
			tr->engine->end_window(tr, t);
			tracer_restart(tr, t, RESTART_CONT);
			return;
		case VERDICT_LOST:
			window_end_all(tr, t->win.lost);
			tracer_restart(tr, t, window_after(tr, t));
			return;
		case VERDICT_TURN:
			window_hand_over(tr, t);
			return;
		default:	/* running, done, or out of its window */
			return;
		}
	}
}

void tracer_restart(struct tracer *tr, struct tracee *t, enum restart how)
{
	int sig = t->inject;
	switch (how) {
	case RESTART_NONE:
		return;
	case RESTART_STEP:
		tracer_step(tr, t);
		return;
	case RESTART_LISTEN:
		hwbp_sync(tr, t);
		tracee_restart(t, PTRACE_LISTEN, 0);
		return;
	case RESTART_CONT:
		t->inject = 0;
		hwbp_sync(tr, t);
		tracee_restart(t, PTRACE_CONT, sig);
		return;
	}
}

/* Why the profile is partial when the target ended before the windows
 * did: set before the profile is rendered, which happens at the main
 * thread's exit event (issue 26: the file lacked the reason the summary
 * gave). */
static void partial_at_exit(struct tracer *tr)
{
	const struct options *o = &tr->opt;
	if (tr->partial_reason)
		return;
	if (!tr->eng.windows)
		tr->partial_reason = "the target exited before the start event";
	else if (o->start && !window_all_done(tr) && o->intervals)
		tr->partial_reason = "the target exited before all the windows "
				     "were traced";
}

/* A thread that is not stepped. */
static enum restart dispatch_other(struct tracer *tr, struct event_info *ei)
{
	struct tracee *t = tracee_find(tr, ei->tid);
	if (!t) {
		t = tracee_add(tr, ei->tid);	/* a new thread's first stop */
		window_assign_core(tr, t);
		window_thread_born(tr, t);
	}
	if (ei->ev == TE_EXITED) {
		if (ei->tid == tr->target_pid)
			tr->target_status = ei->status;
		tracee_remove(tr, ei->tid);
		return RESTART_NONE;
	}
	t->flags |= TF_STOPPED;
	bool our_stop = ei->ev == TE_GROUP_STOP && ei->sig == SIGTRAP;
	if ((tracee_wants_step(t) || tracee_wants_window(t)) && our_stop)
		/* A trap it took as we stopped it (our int3: it stands one
		 * byte past it) must not be where its window starts. */
		tracee_drop_queued_traps(tr, t, &t->inject);
	if (tracee_wants_step(t) && tr->n_active && our_stop) {
		/* Our PTRACE_INTERRUPT, or its birth: it joins the window. */
		t->flags &= ~TF_WANT_STEP;
		return tr->engine->begin_window(tr, t) < 0 ? RESTART_NONE
							   : RESTART_STEP;
	}
	if (tracee_wants_window(t) && our_stop) {
		t->flags &= ~TF_WANT_WINDOW;
		if (!tr->n_active && window_can_begin(tr))
			return window_begin_thread(tr, t); /* --toggle-signal */
	}
	switch (ei->ev) {
	case TE_SIGNAL:
		t->inject = ei->sig;
		return RESTART_CONT;
	case TE_GROUP_STOP:
		return is_stop_signal(ei->sig) ? RESTART_LISTEN : RESTART_CONT;
	case TE_CLONE:
		children_new(tr, t, ei);
		return RESTART_CONT;
	case TE_EXIT:
		if (ei->tid == tr->target_pid && tr->eng.windows) {
			partial_at_exit(tr);
			output_write_profile(tr); /* the last moment it is mapped */
		}
		return RESTART_CONT;
	case TE_EXEC:
		return children_on_exec(tr, t);
	case TE_TRAP:
		/* Not ours (window_on_trap said so): a SIGTRAP the target
		 * raised or was sent; deliver it. */
		t->inject = SIGTRAP;
		return RESTART_CONT;
	default:
		return RESTART_CONT;
	}
}

/* T is in its exit event (memory still mapped).  If it was in the exit
 * syscall, that syscall started (rip is past it) and Cachegrind counts
 * it. */
static void stepped_exit(struct tracer *tr, struct tracee *t)
{
	struct user_regs_struct now;
	bool have_regs = tracee_getregs(t->tid, &now) == 0;
	t->flags |= TF_EXITING;
	if (t->insn && have_regs && now.rip == t->regs.rip + t->insn->len)
		engine_account_fetch_only(&tr->eng, t);
	bool lead = tracee_leads(t);
	/* exit (not exit_group) with other threads left: only this thread
	 * ends, its window is complete and later windows go on. */
	bool thread_only = have_regs && now.orig_rax == SYS_exit &&
			   (tr->tracees != t || t->next);
	if (lead)
		window_end(tr, t, tr->opt.start && !thread_only ?
			   "the target exited inside the window" : NULL);
	tr->engine->end_window(tr, t);
	if (t->tid == tr->target_pid || (lead && !thread_only))
		output_write_profile(tr);	/* still mapped */
}

/* A stepped thread's trap: one instruction done. */
static enum restart stepped_trap(struct tracer *tr, struct tracee *t,
				 bool ending)
{
	if (!tr->engine->trap(tr, t))
		return RESTART_NONE;	/* dying: its exit event follows */
	if (t->win.lost) {
		/* It ran instructions we did not see (step.c): this window
		 * and any other end here. */
		window_end_all(tr, t->win.lost);
		if (tracee_stepping(t))
			tr->engine->end_window(tr, t);
		return window_after(tr, t);
	}
	if (ending) {
		t->flags &= ~TF_ENDING;
		tr->engine->end_window(tr, t);
		return RESTART_CONT;
	}
	if (tracee_leads(t) && engine_at_stop(&tr->eng, t) &&
	    !sample_warmed(tr, t)) {
		window_end(tr, t, NULL);
		return window_after(tr, t);
	}
	return RESTART_STEP;
}

/* An event of a thread that is being stepped. */
static enum restart dispatch_stepping(struct tracer *tr, struct tracee *t,
				      struct event_info *ei)
{
	bool ending = tracee_ending(t);
	t->flags |= TF_STOPPED;
	gate_stop(tr, t);	/* the native engine's counters off */
	switch (ei->ev) {
	case TE_TRAP:
		return stepped_trap(tr, t, ending);
	case TE_SIGNAL:
		/* Nothing executed; deliver the signal with the next step so
		 * its handler is traced like any code. */
		t->inject = ei->sig;
		break;
	case TE_GROUP_STOP:
		/* A job-control stop: stay stopped (PTRACE_LISTEN) until
		 * SIGCONT, then go on stepping. */
		if (is_stop_signal(ei->sig))
			return RESTART_LISTEN;
		break;
	case TE_CLONE:
		/* Inside the clone system call (rax is not its result yet):
		 * the next step finishes it, without running the next
		 * instruction, and its trap accounts it. */
		children_new(tr, t, ei);
		break;
	case TE_EXIT:
		stepped_exit(tr, t);
		return RESTART_CONT;
	case TE_EXEC:
		window_end_all(tr, tr->opt.trace_children ? NULL :
			       "the target called exec inside the window");
		tr->engine->end_window(tr, t);
		return children_on_exec(tr, t);
	default:
		break;
	}
	if (ending) {
		t->flags &= ~TF_ENDING;
		tr->engine->end_window(tr, t);
		return dispatch_other(tr, ei);
	}
	return RESTART_STEP;
}

/* SIGINT, SIGTERM or SIGHUP reached cachetrace: end the windows, write
 * what we have, release the target. */
static void finish_interrupted(struct tracer *tr)
{
	if (interrupted_by)
		snprintf(tr->interrupt_reason, sizeof(tr->interrupt_reason),
			 "interrupted by %s", strsignal(interrupted_by));
	else
		snprintf(tr->interrupt_reason, sizeof(tr->interrupt_reason),
			 "--duration's time was up");
	/* As a run whose target exits first says (issue 26: an attached
	 * run interrupted before its start printed an all-zero summary and
	 * nothing else). */
	if (!tr->eng.windows && window_has_start_event(tr) &&
	    !tr->opt.quiet)
		error_msg("warning: %s before the start event (%s); no "
			  "instructions were traced", tr->interrupt_reason,
			  window_start_event(tr));
	if (tr->n_active)
		window_end_all(tr, tr->interrupt_reason);
	else if (!tr->partial_reason)
		tr->partial_reason = tr->interrupt_reason;
	window_finish_parts(tr);
	output_write_profile(tr);
	window_release(tr);
	output_commit(tr);
	output_print_summary(tr);
	tr->done = true;
	tr->exit_status = interrupted_by ? 128 + interrupted_by : 0;
}

static enum restart dispatch_event(struct tracer *tr, struct event_info *ei)
{
	if (ei->ev == TE_EXITED && children_is_helper(tr, ei->tid))
		return RESTART_NONE;	/* a child's cachetrace ended */
	struct tracee *t = tracee_find(tr, ei->tid);
	if (ei->ev == TE_SIGNAL)	/* 0: our stop's doing, not delivered */
		ei->sig = guard_deliverable(tr, ei->tid, ei->sig);
	if (ei->ev == TE_SIGNAL && ei->sig) {
		/* Held in its stop until restarted: the guardian sends it
		 * if we die meanwhile.  A stop or continue may change our
		 * own job-control stop. */
		if (t)
			guard_signal(t, ei->sig);
		guard_on_signal(tr, ei->sig);
	}
	enum restart how;
	switch (ei->ev) {
	case TE_NONE:
		return RESTART_NONE;
	case TE_INTERRUPTED:
		finish_interrupted(tr);
		return RESTART_NONE;
	case TE_VFORK_DONE:
		if (t)
			children_vfork_done(tr, t);
		if (t && tracee_stepping(t))
			return dispatch_stepping(tr, t, ei);
		return dispatch_other(tr, ei);
	case TE_EXITED:
		if (t && tracee_stepping(t)) {
			if (tracee_leads(t))
				window_end(tr, t, "the target was killed "
					   "inside the window");
			tr->engine->end_window(tr, t);
		}
		return dispatch_other(tr, ei);
	case TE_TRAP:
		if (t && tracee_stepping(t))
			return dispatch_stepping(tr, t, ei);
		if (!t) {
			t = tracee_add(tr, ei->tid);
			window_assign_core(tr, t);
		}
		t->flags |= TF_STOPPED;
		if (window_on_trap(tr, t, &how))
			return how;
		return dispatch_other(tr, ei);
	default:
		if (t && tracee_stepping(t))
			return dispatch_stepping(tr, t, ei);
		return dispatch_other(tr, ei);
	}
}

/* CACHETRACE_FAULT=abort:N or trap:N (tests/attach/kill9.sh): crash at
 * the Nth event, as a bug of ours would (abort(), or a faulting
 * instruction), to prove the crash handler. */
static void inject_fault(void)
{
	static long countdown = -1;
	static bool trap;
	if (countdown < 0) {
		const char *f = getenv("CACHETRACE_FAULT");
		countdown = 0;
		if (f && !strncmp(f, "abort:", 6))
			countdown = atol(f + 6);
		else if (f && !strncmp(f, "trap:", 5))
			countdown = atol(f + 5), trap = true;
	}
	if (countdown > 0 && --countdown == 0) {
		if (trap)
			__builtin_trap();	/* ud2: SIGILL */
		abort();
	}
}

bool dispatch(struct tracer *tr, struct event_info *ei)
{
	inject_fault();
	enum restart how = dispatch_event(tr, ei);
	struct tracee *t = how == RESTART_NONE ? NULL
					       : tracee_find(tr, ei->tid);
	/* Not when what its event set off restarted it already: an int3's
	 * step-over replays the others' events (window_replay_deferred),
	 * one of them may begin a window, and that window joins T, stopped
	 * here, into its code cache.  Continued again, a thread in the
	 * cache ran its exits' stubs natively (kill9.sh, threads: the
	 * target computed wrong values). */
	if (t && tracee_stopped(t))
		tracer_restart(tr, t, how);
	return !tr->done;
}

/* The loop ended: say why nothing was traced, and why the profile is
 * partial. */
static void note_how_it_ended(struct tracer *tr)
{
	const struct options *o = &tr->opt;
	if (!tr->eng.windows && !o->quiet) {
		if (o->sample_len)
			error_msg("warning: the target exited before a sample "
				  "was due (%s: every period of its CPU time); "
				  "no instructions were traced",
				  window_start_event(tr));
		else if (o->start || o->start_watch)
			error_msg("warning: the target exited before the start "
				  "event (%s); no instructions were traced",
				  window_start_event(tr));
		else
			error_msg("warning: the target exited before a window "
				  "began (%s: signal cachetrace, not the "
				  "target); no instructions were traced",
				  window_start_event(tr));
	}
	partial_at_exit(tr);
}

/* On a terminal, say that an attached target is armed and what starts a
 * window (issue 26: attaching was silent; a toggle signal sent before
 * the handler was in place killed us). */
static void announce_armed(const struct tracer *tr)
{
	const struct options *o = &tr->opt;
	if (o->quiet || o->forked_child || !isatty(2) ||
	    (!o->pid && !o->toggle_signal))
		return;
	unsigned n = 0;
	for (const struct tracee *t = tr->tracees; t; t = t->next)
		n++;
	char who[160];
	if (o->pid)
		snprintf(who, sizeof(who), "attached to %d (%.100s), %u "
			 "thread%s", tr->target_pid, tr->cmd_line, n,
			 n == 1 ? "" : "s");
	else
		snprintf(who, sizeof(who), "tracing %d (%.100s)",
			 tr->target_pid, tr->cmd_line);
	if (o->toggle_signal)
		error_msg("%s; `kill -%s %d` starts a window, the next one "
			  "ends it", who, sigabbrev_np(o->toggle_signal),
			  (int)(tr->front_pid ? tr->front_pid : getpid()));
	else
		error_msg("%s; waiting for %s (Ctrl-C ends the run and "
			  "detaches)", who, window_start_event(tr));
}

void tracer_run(struct tracer *tr)
{
	if (window_setup(tr) < 0) {
		tracer_fail(tr);
		return;
	}
	announce_armed(tr);
	sample_arm(tr);
	if (!window_has_start_event(tr)) {
		struct tracee *t = tracee_find(tr, tr->target_pid);
		tracer_restart(tr, t, window_begin_thread(tr, t));
	} else {
		for (struct tracee *o = tr->tracees; o; o = o->next)
			if (tracee_stopped(o))
				tracer_restart(tr, o, RESTART_CONT);
	}
	unsigned idle = 0;	/* the engine's busy work found none */
	for (bool go = !tr->done; go; ) {
		if (interrupted_by) {
			finish_interrupted(tr);
			break;
		}
		/* Each signal a toggle: two that came before the loop
		 * saw the first (a slow tracer, strace'd under ASan in
		 * terminal.py) begin and end a window, not one that never
		 * ends.  The handler only counts up. */
		while (toggles_done != toggle_requests) {
			toggles_done++;
			window_toggle(tr);
		}
		if (tr->done || window_all_done(tr) || !tr->tracees)
			break;		/* done, or every thread is gone */
		bool expired;
		long within = sample_tick(tr, &expired);
		if (expired) {
			finish_interrupted(tr);
			break;
		}
		if (tr->done)
			break;
		struct event_info ei;
		struct tracee *turn = window_next_turn(tr);
		if (turn) {
			/* Emulated threads take turns; what the kernel has
			 * for us first (a new thread's first stop). */
			if (tracee_poll_event(&ei))
				go = dispatch(tr, &ei);
			else
				window_take_turn(tr, turn);
			continue;
		}
		if (gate_sampling(tr)) {
			/* a thread that runs natively for long would fill
			 * its ring of samples: they are read every 20 ms */
			tracee_next_event_within(&ei, 20000);
			gate_poll(tr);
		} else if (within >= 0) {
			/* --sample, --duration: look again then */
			tracee_next_event_within(&ei, within);
			if (ei.ev == TE_NONE && errno == EAGAIN)
				continue;
		} else {
			/* the engine's work first (a millisecond at most),
			 * then the events that came meanwhile */
			int b = tr->engine->busy ? tr->engine->busy(tr) : -1;
			if (!tr->n_active)
				wait_late();
			idle = b == 0 ? idle + 1 : 0;
			if (b > 0 || (b == 0 && idle <= BUSY_SPINS)) {
				if (!tracee_poll_event(&ei)) {
					if (b == 0)
						sched_yield();
					continue;
				}
			} else if (b == 0 || !tr->n_active) {
				/* No window: look at the loop's signals at
				 * least every IDLE_LOOK_US.  One that came
				 * between the look above and the wait (the
				 * handler ran before the wait began) would
				 * wait for the next event, which an attached
				 * target running natively never brings: a
				 * toggle signal taken a minute late, then two
				 * at once (terminal.py, once in CI). */
				tracee_next_event_within(&ei, b == 0 ?
							 BUSY_IDLE_US :
							 IDLE_LOOK_US);
				if (ei.ev == TE_NONE && errno == EAGAIN)
					continue;
			} else {
				tracee_next_event(&ei);
			}
		}
		if (ei.ev == TE_NONE && errno == ECHILD)
			break;
		idle = 0;
		go = dispatch(tr, &ei);
	}
	if (tr->target_status != -1 && !tr->tracees)
		guard_gone();	/* it ended: nothing is left to release */
	if (tr->done)
		return;
	note_how_it_ended(tr);
	if (tr->tracees) {
		window_finish_parts(tr);
		output_write_profile(tr);
		window_release(tr);
	}
	output_write_profile(tr);
	output_commit(tr);
}
