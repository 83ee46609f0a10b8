/* cachetrace: the front end.
 *
 *   options; models; launch or attach;  tracer_run();  summary; status
 *
 * The target runs natively until the start event; the engine then moves
 * the thread that hit it through the window, every instruction accounted,
 * until the stop event; the profile is written while the target is still
 * attached (its mappings name the pcs); then every thread is detached and
 * the target runs on.  Only this file exits. */
#include "tracer.h"

#include <errno.h>
#include <signal.h>
#include <stddef.h>
#include <stdlib.h>
#include <stdnoreturn.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "error.h"
#include "hostenv.h"
#include "outfile.h"

volatile sig_atomic_t interrupted_by;
volatile sig_atomic_t toggle_requests;
sig_atomic_t toggles_done;

static void on_signal(int sig)
{
	interrupted_by = sig;
}

static void on_toggle(int sig)
{
	(void)sig;
	toggle_requests++;
}

/* Every signal whose default action would end cachetrace ends the run
 * cleanly instead (the target released, the profile so far written), as
 * strace does; SIGPIPE is ignored so that a closed pipe is a write error
 * (EPIPE), not a silent death that leaves the target with a trap flag. */
static void install_signal_handlers(struct tracer *tr)
{
	const struct options *o = &tr->opt;
	static const int fatal[] = {
		SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGUSR1, SIGUSR2, SIGALRM,
		SIGVTALRM, SIGPROF, SIGXCPU, SIGXFSZ, SIGPOLL, SIGPWR,
		SIGSTKFLT, SIGSYS,
	};
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sigemptyset(&sa.sa_mask);
	/* What we were given is what a launched program gets (launch.c). */
	for (int sig = 1; sig < NSIG; sig++)
		sigaction(sig, NULL, &tr->orig_sigaction[sig]);
	sa.sa_handler = SIG_IGN;
	sigaction(SIGPIPE, &sa, NULL);
	/* No SA_RESTART: waitpid must return EINTR so the loop sees it.
	 * SIGINT and SIGQUIT are handled even when a script's background job
	 * was started with them ignored (kill -INT must end a run); SIGHUP
	 * ignored (nohup) stays ignored. */
	sa.sa_handler = on_signal;
	for (int sig = 1; sig < NSIG; sig++) {
		bool is_fatal = sig >= SIGRTMIN && sig <= SIGRTMAX;
		for (size_t i = 0; i < sizeof(fatal) / sizeof(fatal[0]); i++)
			is_fatal |= fatal[i] == sig;
		if (is_fatal && !(sig == SIGHUP &&
				  tr->orig_sigaction[sig].sa_handler == SIG_IGN))
			sigaction(sig, &sa, NULL);
	}
	if (o->toggle_signal) {
		sa.sa_handler = on_toggle;
		sigaction(o->toggle_signal, &sa, NULL);
	}
}

/* ---- -p: the front and the tracer ---------------------------------------
 *
 * The process the user started (and may kill -9: its pid is the one a
 * shell's $! and `kill %1` know) is not the tracer.  It forks the tracer
 * at once and only waits for it, passing on the signals sent to it; the
 * tracer asks the kernel for SIGTERM if the front dies (PR_SET_PDEATHSIG)
 * and then releases the target as for any interrupt, profile written.  A
 * SIGKILL of the tracer itself (the OOM killer) is guard.c's to handle. */

static pid_t worker_pid;

/* A signal a process sent to the front goes to the tracer; one from the
 * terminal (si_code SI_KERNEL) reached the tracer too, in the same
 * process group. */
static void forward(int sig, siginfo_t *si, void *uctx)
{
	(void)uctx;
	if (si->si_code != SI_KERNEL)
		kill(worker_pid, sig);
}

static noreturn void front_wait(pid_t worker, const sigset_t *given)
{
	worker_pid = worker;
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = forward;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigemptyset(&sa.sa_mask);
	for (int sig = 1; sig < NSIG; sig++)
		if (sig != SIGKILL && sig != SIGSTOP && sig != SIGCHLD &&
		    sig != SIGTSTP && sig != SIGTTIN && sig != SIGTTOU &&
		    sig != SIGCONT && sig != SIGWINCH)
			sigaction(sig, &sa, NULL);
	sigprocmask(SIG_SETMASK, given, NULL);
	int status;
	while (waitpid(worker, &status, 0) < 0)
		if (errno != EINTR)
			_exit(1);
	_exit(WIFEXITED(status) ? WEXITSTATUS(status) :
	      128 + WTERMSIG(status));
}

/* Split for -p (signals are blocked): returns in the tracer. */
static void split_front(struct tracer *tr, const sigset_t *given)
{
	pid_t front = getpid();
	pid_t w = fork();
	if (w > 0)
		front_wait(w, given);
	if (w < 0) {
		if (!tr->opt.quiet)
			perror_msg("note: cannot fork the tracer (a kill -9 of "
				   "cachetrace may then harm the target)");
		return;
	}
	/* The front gone before this: the SIGTERM is ours anyway. */
	prctl(PR_SET_PDEATHSIG, SIGTERM);
	if (getppid() != front)
		kill(getpid(), SIGTERM);
	tr->front_pid = front;
}

/* The models of the options: 0, or the exit status after a message. */
static int setup_models(struct tracer *tr)
{
	/* The note can hold three sentences: the geometry's source, a cache
	 * CPUID left out and the LL tweak. */
	char err[256], note[640] = "";
	struct cache_model *cm;
	struct branch_model *bm;
	/* A model whose core count is free gives each thread a core of its
	 * own when every thread is stepped and --cores does not say. */
	tr->opt.cfg.core_per_thread = tr->opt.threads_all && !tr->opt.cfg.cores;
	/* the LL's first references in a sample counted (model.h) */
	tr->opt.cfg.first_refs = tr->opt.sample_len != 0;
	int rc = model_create(tr->opt.model, &tr->opt.cfg, &cm, &bm, err,
			      sizeof(err), note, sizeof(note));
	model_config_free_options(&tr->opt.cfg);
	if (rc < 0) {
		/* What was given is wrong: bad usage, as for every option. */
		if (rc == MODEL_ERR_USAGE)
			error_usage("%s", err);
		else
			error_msg("%s", err);
		return rc == MODEL_ERR_USAGE ? 2 : 1;
	}
	if (note[0] && !tr->opt.quiet)
		error_msg("note: %s", note);
	tr->eng.cm = cm;
	tr->eng.bm = bm;
	tr->eng.bm_offset = cm->n_events;
	tr->n_events = cm->n_events + (bm ? bm->n_events : 0);
	tr->event_names = xcalloc(tr->n_events, sizeof(char *));
	for (unsigned i = 0; i < cm->n_events; i++)
		tr->event_names[i] = cm->event_names[i];
	for (unsigned i = 0; bm && i < bm->n_events; i++)
		tr->event_names[cm->n_events + i] = bm->event_names[i];
	tr->eng.n_events = tr->n_events;
	engine_new_costs(&tr->eng);
	if (tr->opt.call_stacks && tr->opt.folded_out) {
		unsigned i = 0;
		while (i < tr->n_events &&
		       strcmp(tr->event_names[i], tr->opt.folded_event))
			i++;
		if (i == tr->n_events) {
			error_usage("--folded-event: '%s' is not an event of "
				    "the model (%s...)", tr->opt.folded_event,
				    tr->event_names[0]);
			return 2;
		}
		tr->folded_event = i;
	}
	return 0;
}

/* The decoder reads the memory and vector state of the thread it decodes
 * for (the target's main thread outside a step). */
static pid_t decoding_tid(const struct engine *e)
{
	return e->decoding ? e->decoding->tid : e->target_pid;
}

/* The text as the program has it: our int3s read as the bytes they
 * replace (an int3 over a push's REX prefix decoded as int3 lost the
 * push's store with --breakpoints=sw). */
static ssize_t read_mem_cb(void *ctx, uint64_t addr, void *buf, size_t len)
{
	struct tracer *tr = (struct tracer *)((char *)ctx -
					      offsetof(struct tracer, eng));
	struct engine *e = ctx;
	ssize_t n = e->read_mem ? e->read_mem(e->read_mem_ctx, addr, buf, len)
				: tracee_read_code(decoding_tid(ctx), addr, buf, len);
	for (unsigned i = 0; n > 0 && i < N_INT3; i++)
		breakpoint_shadow(tracer_int3(tr, i), addr, buf, (size_t)n);
	return n;
}

static ssize_t read_xstate_cb(void *ctx, void *buf, size_t len)
{
	return tracee_read_xstate(decoding_tid(ctx), buf, len);
}

/* Code no write of the target's can change unseen (a file's, not a
 * JIT's): decoded once. */
static bool fixed_cb(void *ctx, uint64_t pc)
{
	struct engine *e = ctx;
	return codemap_fixed(&e->code, e->target_pid, pc);	/* its maps */
}

static uint64_t epoch_cb(void *ctx)
{
	return tracee_mem_gen();
}

static char *join_args(char **argv)
{
	size_t len = 1;
	for (char **a = argv; *a; a++)
		len += strlen(*a) + 1;
	char *s = xmalloc(len), *p = s;
	for (char **a = argv; *a; a++)
		p += sprintf(p, "%s%s", a == argv ? "" : " ", *a);
	*p = 0;
	return s;
}

/* Does PID write (stdout or stderr) to the terminal of our stderr? */
static bool shares_our_tty(pid_t pid)
{
	struct stat ours, st;
	if (fstat(2, &ours) < 0 || !S_ISCHR(ours.st_mode))
		return false;
	for (int fd = 1; fd <= 2; fd++) {
		char path[64];
		snprintf(path, sizeof(path), "/proc/%d/fd/%d", (int)pid, fd);
		if (stat(path, &st) == 0 && S_ISCHR(st.st_mode) &&
		    st.st_rdev == ours.st_rdev)
			return true;
	}
	return false;
}

/* Launch or attach; then the output, the symbols and the call stacks.
 * -1 after a message. */
static int start_target(struct tracer *tr)
{
	const struct options *o = &tr->opt;
	const char *path;
	if (o->pid) {
		if (attach(tr, o->pid) < 0)
			return -1;
		tr->target_pid = o->pid;
		tr->cmd_line = attach_read_cmdline(o->pid);
		path = tr->cmd_line;
	} else {
		char **argv = o->argv + o->first;
		tr->prog_path = launch_find_program(argv[0]);
		if (!tr->prog_path ||
		    launch_check_elf(tr->prog_path, tr->prog_path) < 0)
			return -1;
		path = tr->prog_path;
		tr->cmd_line = join_args(argv);
		tr->target_pid = launch(tr, path, argv);
		if (tr->target_pid < 0) {
			tr->target_pid = 0;
			return -1;
		}
	}
	tr->eng.target_pid = tr->target_pid;
	if (output_open(tr) < 0)
		return -1;
	char err[256];
	tr->syms = sym_open(tr->target_pid, err, sizeof(err));
	if (!tr->syms) {
		error_msg("reading the symbols of %s: %s", path, err);
		return -1;
	}
	tr->eng.syms = tr->syms;
	tr->eng.others_stop = window_stop_others;
	tr->eng.others_run = window_replay_deferred;
	tr->progress_wanted = !o->quiet && isatty(2);
	tr->target_on_our_tty = tr->progress_wanted &&
				shares_our_tty(tr->target_pid);
	if (o->call_stacks) {
		tr->eng.cs = callstack_new(tr->n_events, tr->syms);
		if (!tr->eng.cs) {
			error_msg("call stacks are not available in this build");
			return -1;
		}
		tr->eng.scratch = xcalloc(tr->n_events, sizeof(*tr->eng.scratch));
	}
	return 0;
}

/* A fatal error after the target was started: an attached target is let
 * go, a launched one killed; no profile is left behind. */
static void abandon_target(struct tracer *tr)
{
	if (tr->opt.pid && tr->tracees)
		window_release(tr);
	else if (tr->target_pid > 0)
		launch_kill_and_reap(tr->target_pid);
	output_abort(tr);
	outfile_abort(tr->trace_mem);
	tr->trace_mem = NULL;
}

/* The --trace-mem file is complete: commit it.  False when it failed. */
static bool finish_trace_mem(struct tracer *tr)
{
	if (!tr->trace_mem)
		return true;
	const char *name = tr->opt.trace_mem;
	int rc = outfile_commit(tr->trace_mem);
	tr->trace_mem = NULL;
	tr->eng.trace_mem = NULL;
	if (rc < 0)
		perror_msg("--trace-mem: cannot write %s", name);
	return rc == 0;
}

static void tracer_free(struct tracer *tr)
{
	outfile_abort(tr->trace_mem);
	if (tr->eng.cs)
		callstack_free(tr->eng.cs);
	engine_free(&tr->eng);
	proof_free(&tr->eng);
	if (tr->eng.dec)
		decode_free(tr->eng.dec);
	codemap_free(&tr->eng.code);
	if (tr->syms)
		sym_close(tr->syms);
	if (tr->eng.bm)
		branch_destroy(tr->eng.bm);
	if (tr->eng.cm)
		cache_destroy(tr->eng.cm);
	while (tr->tracees)
		tracee_remove(tr, tr->tracees->tid);
	emu_free(tr);
	inst_free(tr);
	sample_free(tr);
	gate_free(tr);
	free(tr->event_names);
	free(tr->totals);
	free(tr->core_log);
	free(tr->desc_lines);
	free(tr->desc_buf);
	free(tr->out_name);
	free(tr->cmd_line);
	free(tr->prog_path);
	free(tr->opt.callgrind_default);
}

int main(int argc, char **argv)
{
	static struct tracer tracer = { .target_status = -1, .pin_cpu = -1,
					.engine = &step_engine };
	struct tracer *tr = &tracer;
	/* A signal sent as soon as we run (`cachetrace -p PID
	 * --toggle-signal=SIGUSR2 & kill -USR2 %1`) waits until its handler
	 * is in place: it must not kill us with its default action (issue
	 * 26).  The launched target gets the mask we were given. */
	sigset_t all, given;
	sigfillset(&all);
	sigprocmask(SIG_BLOCK, &all, &given);
	if (getenv("CACHETRACE_DEBUG"))
		debug_flag = 1;
	int rc = options_parse(&tr->opt, argc, argv);
	if (rc)
		return rc > 0 ? 0 : 2;
	if (tr->opt.pid && !tr->opt.check && !tr->opt.forked_child &&
	    !getenv("CACHETRACE_NO_FRONT"))
		split_front(tr, &given);
	if (!tr->opt.check)
		install_signal_handlers(tr);
	sigprocmask(SIG_SETMASK, &given, NULL);
	char herr[512];
	if (hostenv_check(herr, sizeof(herr))) {
		error_msg("%s", herr);
		return 2;
	}
	if (tr->opt.check)
		return check_host(tr);
	if (hostcaps_apply(tr) < 0)
		return 1;
	if ((rc = setup_models(tr)))
		return rc;
	/* CACHETRACE_ENGINE: the default engine (the test suite runs its
	 * suites under both). */
	const char *eng = tr->opt.engine ? tr->opt.engine :
			  getenv("CACHETRACE_ENGINE");
	bool named = eng != NULL;
	if (!eng)
		eng = "instrument";
	if (!engine_known(eng)) {
		error_msg("CACHETRACE_ENGINE: %s, not '%s'", ENGINE_NAMES, eng);
		return 2;
	}
	bool proof = !strcmp(eng, "lockstep:instrument");
	if (proof)
		eng = "instrument";
	if (strcmp(eng, "step") && strcmp(eng, "native") &&
	    !hostcaps_vm_rw()) {
		/* The emulator mirrors the target's memory with these. */
		if (tr->opt.engine) {
			error_msg("--engine=%s: process_vm_readv/writev are "
				  "refused here (a seccomp filter?): use "
				  "--engine=step", eng);
			return 1;
		}
		if (!tr->opt.quiet)
			error_msg("note: process_vm_readv/writev are refused "
				  "here (a seccomp filter?): the step engine "
				  "runs the windows");
		eng = "step";
	}
	tr->engine = !strcmp(eng, "step") ? &step_engine :
		     !strcmp(eng, "native") ? &native_engine :
		     !strcmp(eng, "instrument") ? &instrument_engine :
		     !strcmp(eng, "lockstep") ? &lockstep_engine :
						&emulate_engine;
	if (!named && tr->engine == &instrument_engine)
		tr->engine_else = &emulate_engine;
	if ((tr->opt.counters || tr->opt.counter_sample) &&
	    tr->engine != &native_engine) {
		error_usage("%s needs --engine=native", tr->opt.counters ?
			    "--counters" : "--counter-sample");
		return 2;
	}
	if (tr->opt.cpuid_valgrind)
		vg_cpuid_probe(&tr->vg);
	if (tr->engine == &native_engine) {
		const struct options *o = &tr->opt;
		const char *no = o->trace_mem ? "--trace-mem" :
				 o->cpuid_valgrind ? "--cpuid=valgrind" :
				 o->max_insns ? "--max-instructions" :
				 o->stop_watch ? "--stop-watch" : NULL;
		if (no) {
			error_usage("--engine=native: %s needs the window's "
				    "instructions, which it does not see (use "
				    "another engine)", no);
			return 2;
		}
		if ((rc = gate_setup(tr)))
			return rc;
	}
	static const struct decode_target target = {
		.ctx = &tracer.eng,
		.read_mem = read_mem_cb,
		.read_xstate = read_xstate_cb,
		.fixed = fixed_cb,
		.epoch = epoch_cb,
	};
	const char *derr;
	tr->eng.dec = decode_new(&target, &derr);
	if (!tr->eng.dec)
		error_msg_and_die("cannot start the decoder: %s", derr);
	/* For proving an instruction class by lockstep before it joins the
	 * allow-list (tests/emulate: lockstep must catch x87's PE flag). */
	if (getenv("CACHETRACE_EMULATE_X87"))
		decode_allow_x87(tr->eng.dec, true);
	decode_set_chase(tr->eng.dec, tr->opt.vex_chase);
	if (proof)
		proof_start(tr, &target, tr->opt.vex_chase);
	if (output_check(tr) < 0)
		return 1;
	if (tr->opt.trace_mem) {
		tr->trace_mem = outfile_open(tr->opt.trace_mem);
		if (!tr->trace_mem)
			perror_msg_and_die("--trace-mem: cannot write %s",
					   tr->opt.trace_mem);
		tr->eng.trace_mem = outfile_stream(tr->trace_mem);
	}
	if (start_target(tr) < 0) {
		int status = tr->exit_status ? tr->exit_status : 1;
		abandon_target(tr);
		tracer_free(tr);
		return status;
	}
	if (tr->opt.forked_child)
		kill(tr->target_pid, SIGCONT);	/* stopped by our parent */
	tracer_run(tr);
	int status = tr->exit_status;
	if (tr->failed) {
		abandon_target(tr);
	} else if (!tr->done) {
		children_wait_helpers(tr);
		/* Launched: the target's status is ours.  Attached: it runs
		 * on. */
		status = tr->opt.pid ? 0 : launch_wait_exit(tr);
		output_print_summary(tr);
	}
	/* Interrupted (tr->done): released, summary printed, 128+N.  A
	 * profile or trace that could not be written is an error, whatever
	 * the target did. */
	if (!tr->failed && (!finish_trace_mem(tr) || tr->had_error))
		status = 1;
	if (emu_diverged(tr) || proof_diverged(&tr->eng))
		status = 1;	/* lockstep: the emulator is wrong somewhere */
	tracer_free(tr);
	return status;
}
