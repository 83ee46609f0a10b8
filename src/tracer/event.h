/* What a wait status means to the supervisor (after strace's next_event).
 * Each value says how the thread is restarted after it is dispatched. */
#ifndef CT_EVENT_H
#define CT_EVENT_H

enum tracer_event {
	TE_NONE,	/* nothing to do (EINTR with no flag, ECHILD): no restart */
	TE_INTERRUPTED,	/* SIGINT/SIGTERM/SIGHUP reached cachetrace: the stopped
			 * threads are detached, never restarted by us */
	TE_EXITED,	/* a thread exited or was killed: nothing to restart */
	TE_TRAP,	/* SIGTRAP, no ptrace event: a completed single step,
			 * our int3, or the trap at a signal handler's entry;
			 * restarted by step or cont depending on the region */
	TE_SIGNAL,	/* signal-delivery stop: restarted with the signal
			 * re-injected (step while in the region, else cont) */
	TE_GROUP_STOP,	/* PTRACE_EVENT_STOP: a job-control stop is kept with
			 * PTRACE_LISTEN; our own interrupt or a new thread's
			 * first stop is restarted with cont */
	TE_EXEC,	/* PTRACE_EVENT_EXEC: cont (or step from here when the
			 * whole run is traced) */
	TE_CLONE,	/* PTRACE_EVENT_CLONE/FORK/VFORK in the parent: the
			 * parent is restarted as it was running */
	TE_VFORK_DONE,	/* PTRACE_EVENT_VFORK_DONE in the parent: our int3s go
			 * back in; restarted as it was running */
	TE_EXIT,	/* PTRACE_EVENT_EXIT: the thread is about to exit with
			 * its memory still mapped; cont */
};

#endif
