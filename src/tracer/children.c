/* New threads, new processes and new images.  A clone adds a thread to
 * the table; a fork or vfork (--trace-children) is handed to a cachetrace
 * of its own; an exec ends the old image's profile and, with
 * --trace-children, starts tracing the new one. */
#include "tracer.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cgout.h"
#include "error.h"

/* Run the child, detached with SIGSTOP, under "cachetrace --forked-child
 * -p CHILD" with our options. */
static void start_helper(struct tracer *tr, pid_t child)
{
	fflush(NULL);
	pid_t h = fork();
	if (h < 0) {
		perror_msg("cannot start a cachetrace for child %d", child);
		kill(child, SIGCONT);
		return;
	}
	if (h == 0) {
		char **saved = tr->opt.argv;
		int first = tr->opt.first;
		char **argv = xcalloc((size_t)first + 5, sizeof(char *));
		int n = 0;
		argv[n++] = saved[0];
		for (int i = 1; i < first; i++)
			if (strcmp(saved[i], "--"))
				argv[n++] = saved[i];
		argv[n++] = "--forked-child";
		argv[n++] = "-p";
		argv[n++] = xasprintf("%d", child);
		argv[n] = NULL;
		execv("/proc/self/exe", argv);
		perror_msg("cannot start a cachetrace for child %d", child);
		kill(child, SIGCONT);
		_exit(1);
	}
	if (tr->n_helpers < sizeof(tr->helpers) / sizeof(tr->helpers[0]))
		tr->helpers[tr->n_helpers++] = h;
}

/* Wait for the new child process's first stop (its PTRACE_EVENT_STOP may
 * not be reported yet).  False when it died first. */
static bool child_first_stop(struct tracer *tr, pid_t child)
{
	int status;
	struct tracee *c = tracee_find(tr, child);
	while (!(c && tracee_stopped(c))) {
		if (tracee_wait(child, &status) < 0 || !WIFSTOPPED(status)) {
			if (c)
				tracee_remove(tr, child);
			return false;
		}
		if (!c)
			c = tracee_add(tr, child);
		c->flags |= TF_STOPPED;
	}
	tracee_remove(tr, child);
	return true;
}

/* The child's copy of the text has our int3s: take them out before it
 * runs (what gdb does), or it dies of SIGTRAP.  A vfork child shares the
 * parent's memory: the int3 is out of both until the parent's
 * PTRACE_EVENT_VFORK_DONE (children_vfork_done puts it back). */
static void clean_child_text(struct tracer *tr, pid_t child, bool vfork)
{
	for (unsigned i = 0; i < N_INT3; i++) {
		struct breakpoint *bp = tracer_int3(tr, i);
		if (!bp->inserted)
			continue;
		struct breakpoint copy = *bp;
		if (!vfork) {
			if (breakpoint_remove(child, &copy) < 0)
				error_msg("cannot remove the breakpoint from "
					  "child %d", child);
			continue;
		}
		if (breakpoint_remove(child, bp) == 0)
			tr->vfork_bps |= 1u << i;
	}
}

void children_vfork_done(struct tracer *tr, struct tracee *t)
{
	for (unsigned i = 0; i < N_INT3; i++)
		if ((tr->vfork_bps & (1u << i)) &&
		    breakpoint_insert(t->tid, tracer_int3(tr, i),
				      tracer_int3(tr, i)->addr) < 0)
			error_msg("cannot put a breakpoint back after vfork");
	tr->vfork_bps = 0;
}

/* --trace-children: a forked child process gets a cachetrace of its own
 * (its own profile, %p = its pid): we leave it stopped by SIGSTOP,
 * detach, and start the helper, which seizes it and lets it go on.
 * Without, it is detached and runs on natively. */
static void hand_off_child(struct tracer *tr, pid_t child, bool vfork)
{
	int status;
	if (!child_first_stop(tr, child))
		return;
	clean_child_text(tr, child, vfork);
	if (!tr->opt.trace_children) {
		tracee_detach(child, 0);
		return;
	}
	/* PTRACE_DETACH delivers a signal only from a signal-delivery stop:
	 * queue a SIGSTOP and run the child to the stop that delivers it. */
	kill(child, SIGSTOP);
	for (;;) {
		if (tracee_restart_pid(child, PTRACE_CONT, 0) < 0)
			return;
		if (tracee_wait(child, &status) < 0 || !WIFSTOPPED(status))
			return;		/* it died */
		if ((status >> 16) == 0 && WSTOPSIG(status) == SIGSTOP)
			break;
	}
	if (tracee_detach(child, SIGSTOP) < 0)
		return;
	start_helper(tr, child);
}

bool children_is_helper(const struct tracer *tr, pid_t pid)
{
	for (unsigned i = 0; i < tr->n_helpers; i++)
		if (tr->helpers[i] == pid)
			return true;
	return false;
}

void children_wait_helpers(struct tracer *tr)
{
	for (unsigned i = 0; i < tr->n_helpers; i++)
		while (waitpid(tr->helpers[i], NULL, 0) < 0 && errno == EINTR)
			;
	tr->n_helpers = 0;
}

void children_new(struct tracer *tr, struct tracee *t, struct event_info *ei)
{
	unsigned long child;
	if (tracee_event_msg(t->tid, &child) < 0)
		return;
	/* Born of a thread we pinned to our CPU for its window, it has that
	 * CPU alone: its creator's own CPUs, or it keeps one CPU after we
	 * are gone (a server's thread made in a window) */
	if (t->pinned)
		sched_setaffinity((pid_t)child, sizeof(t->saved_affinity),
				  &t->saved_affinity);
	if (ei->ptrace_event == PTRACE_EVENT_FORK ||
	    ei->ptrace_event == PTRACE_EVENT_VFORK) {
		hand_off_child(tr, (pid_t)child,
			       ei->ptrace_event == PTRACE_EVENT_VFORK);
		return;
	}
	struct tracee *c = tracee_add(tr, (pid_t)child);
	window_assign_core(tr, c);
	window_thread_born(tr, c);
}

/* The accounting of the old image starts again for the new one, into
 * FILE.execN. */
static void restart_profile(struct tracer *tr)
{
	char err[256];
	tr->execs++;
	char *base = cgout_expand_name(tr->opt.out, tr->target_pid, err,
				       sizeof(err));
	free(tr->out_name);
	tr->out_name = xasprintf("%s.exec%u", base ? base : "cachegrind.out",
				 tr->execs);
	free(base);
	engine_new_costs(&tr->eng);
	tr->eng.windows = tr->windows_done = 0;
	tr->eng.steps = 0;
	tr->eng.t_stepping = 0;
	tr->profile_written = false;
	tr->partial_reason = NULL;
	free(tr->totals);
	tr->totals = NULL;
	free(tr->cmd_line);
	tr->cmd_line = attach_read_cmdline(tr->target_pid);
	if (sym_refresh(tr->syms, err, sizeof(err)) < 0)
		debug_msg("re-reading mappings: %s", err);
	tr->start_addr = tr->stop_addr = 0;
}

/* The target called exec (T is its only thread now): the old image's
 * breakpoints and text are gone.  Its profile is written now, while libdw
 * still knows the old modules.  With --trace-children the new image is
 * traced afresh into FILE.execN (symbols re-read, start re-resolved);
 * without, the target is let go, as valgrind does. */
enum restart children_on_exec(struct tracer *tr, struct tracee *t)
{
	tr->start_bp.inserted = tr->entry_bp.inserted = false;
	tr->dlhook_bp = (struct breakpoint){ 0 };
	tr->dlhook_addr = tr->r_debug_addr = 0;
	memset(tr->hw_slots, 0, sizeof(tr->hw_slots));
	tr->dr_want = 0;
	for (struct tracee *o = tr->tracees; o; o = o->next) {
		o->dr_mask = 0;		/* exec clears the debug registers */
		memset(o->dr_addr, 0, sizeof(o->dr_addr));
	}
	decode_invalidate(tr->eng.dec, 0, UINT64_MAX);
	codemap_free(&tr->eng.code);	/* a new image: its pagemap too */
	proof_invalidate(&tr->eng, 0, UINT64_MAX);
	if (!tr->eng.windows && window_has_start_event(tr) &&
	    !tr->partial_reason)
		tr->partial_reason = tr->opt.sample_len && !tr->opt.start ?
			"the target called exec before its first sample "
			"(--trace-children=yes follows it)" :
			"the target called exec before the start event";
	output_write_profile(tr);
	if (!tr->opt.trace_children) {
		window_release(tr);
		return RESTART_NONE;
	}
	restart_profile(tr);
	t->flags |= TF_STOPPED;
	if (tr->opt.auxv_valgrind && auxv_as_valgrind(t) < 0) {
		tracer_fail(tr);
		return RESTART_NONE;
	}
	if (!window_has_start_event(tr))
		return window_begin_thread(tr, t);
	if (window_arm_or_wait_for_entry(tr, true) < 0) {
		tracer_fail(tr);
		return RESTART_NONE;
	}
	return RESTART_CONT;
}
