/* tracee.c's waits for any thread hand out the stops that wait in turn.
 * Two children, A and B, each raising SIGUSR1 (ignored, so only its
 * tracer sees it) in a loop: each raise is a signal-delivery stop.  Both
 * stopped, then twenty rounds of: the next event, its child resumed (the
 * signal dropped), and that child stopped again before the next round,
 * so that both always wait.  waitpid(-1) looks in a fixed order (our
 * children oldest first, the threads we only trace newest first): taken
 * from it alone, all 20 events were A's and B never ran again (checked
 * by hand with the held events turned off); handed out in turn, each
 * has ten.  Then:
 * tracee_wait for the child whose stop is held returns it at once, and
 * the next event is not that stop again. */
#include "tracer.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "testutil.h"

/* main.c's, which tracee.c reads: no signal handlers here. */
volatile sig_atomic_t interrupted_by;
volatile sig_atomic_t toggle_requests;

static pid_t child(void)
{
	pid_t p = fork();
	if (p == 0) {
		signal(SIGUSR1, SIG_IGN);
		for (;;)
			raise(SIGUSR1);
	}
	return p;
}

/* Wait (5 s at most) until PID is in a tracing stop. */
static bool stopped(pid_t pid)
{
	for (int i = 0; i < 5000; i++) {
		char buf[128];
		const char *f = proc_stat_fields(pid, buf, sizeof(buf));
		if (f && f[1] == 't')
			return true;
		struct timespec ts = { 0, 1000000 };
		nanosleep(&ts, NULL);
	}
	return false;
}

int main(void)
{
	pid_t a = child(), b = child();
	if (!CHECK(a > 0 && b > 0, "fork: %s", strerror(errno)))
		return 1;
	/* in the table: with one thread alone, nothing is held */
	static struct tracer tr;
	tracee_add(&tr, a);
	tracee_add(&tr, b);
	long opts = PTRACE_O_EXITKILL;
	CHECK(ptrace(PTRACE_SEIZE, a, 0, opts) == 0, "seize: %s", strerror(errno));
	CHECK(ptrace(PTRACE_SEIZE, b, 0, opts) == 0, "seize: %s", strerror(errno));
	if (!CHECK(stopped(a) && stopped(b), "the children never stopped"))
		goto out;

	unsigned got_a = 0, got_b = 0, other = 0;
	for (int round = 0; round < 20; round++) {
		struct event_info ei;
		tracee_next_event(&ei);
		if (ei.tid == a)
			got_a++;
		else if (ei.tid == b)
			got_b++;
		else
			other++;
		if (ei.tid != a && ei.tid != b)
			break;
		CHECK(ei.ev == TE_SIGNAL && ei.sig == SIGUSR1,
		      "round %d: event %d, signal %d", round, ei.ev, ei.sig);
		ptrace(PTRACE_CONT, ei.tid, 0, 0);
		if (!CHECK(stopped(ei.tid), "child %d did not stop again",
			   ei.tid))
			goto out;
	}
	CHECK(other == 0, "%u events of neither child", other);
	CHECK(got_a == 10 && got_b == 10, "A %u, B %u events of 20, want 10 each",
	      got_a, got_b);

	/* One event out: the other child's stop is held now. */
	struct event_info ei;
	tracee_next_event(&ei);
	pid_t held = ei.tid == a ? b : a;
	CHECK(ei.tid == a || ei.tid == b);
	CHECK(tracee_event_held(held), "the other child's stop is not held");
	int status = 0;
	CHECK(tracee_wait_within(held, &status, 1000000) == held &&
	      WIFSTOPPED(status) && (status >> 8) == SIGUSR1,
	      "tracee_wait: status 0x%x", status);
	CHECK(!tracee_event_held(held), "still held after tracee_wait");
	/* the first child again: nothing more is waiting (the second stays
	 * stopped, its stop taken) */
	ptrace(PTRACE_CONT, ei.tid, 0, 0);
	CHECK(stopped(ei.tid));
	struct event_info next;
	CHECK(tracee_poll_event(&next) && next.tid == ei.tid,
	      "next event: thread %d, want %d", next.tid, ei.tid);
	CHECK(!tracee_poll_event(&next), "an event of %d after", next.tid);
out:
	kill(a, SIGKILL);
	kill(b, SIGKILL);
	tracee_forget_held();
	tracee_remove(&tr, a);
	tracee_remove(&tr, b);
	while (waitpid(-1, NULL, __WALL) > 0 || errno == EINTR)
		;
	return test_summary("events_test");
}
