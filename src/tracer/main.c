/* cachetrace: the front end.
 *
 *   init();  while (dispatch(next_event()));  finish();
 *
 * The target is launched stopped, seized, and runs natively until the start
 * event (an int3 at --start, or the first instruction after exec when the
 * whole run is traced).  Then the thread that hit it is single-stepped,
 * every trap accounted by the engine (step.c), until the stop event; the
 * profile is written while the target is still attached (its mappings are
 * needed to resolve pcs), then every thread is detached and the target runs
 * on natively to its end. */
#include "tracer.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/personality.h>
#include <sys/ptrace.h>
#include <stdnoreturn.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>
#include <dirent.h>
#include <elf.h>

#include "callgrind.h"
#include "cgout.h"
#include "error.h"

/* Options. */
static const char *opt_start, *opt_stop;
static const char *opt_out = "cachegrind.out.%p";
static const char *opt_trace_mem;
static const char *opt_model;
static struct model_config opt_cfg = { .cache_sim = true, .branch_sim = true };
static bool opt_quiet;
static bool opt_aslr;		/* keep ASLR on (default off, like gdb) */
static uint64_t opt_max_insns;

/* The run. */
static pid_t target_pid;
static struct symbols *syms;
static struct engine eng;
static FILE *out_file;
static char *out_name;
static char *cmd_line;
static struct breakpoint start_bp, entry_bp;
static uint64_t start_addr, stop_addr;
static unsigned n_active;	/* windows being stepped */
static unsigned windows_done;	/* windows ended */
static bool released;		/* every thread detached */
static bool profile_written;
static const char *partial_reason;	/* why the profile is partial */
static int target_status = -1;	/* wait status of the target's exit */
static bool summary_printed;

static unsigned opt_intervals = 1;	/* windows to trace; 0: no limit */
static pid_t opt_pid;			/* -p: attach */
static bool opt_trace_children;		/* --trace-children=yes */
static bool opt_forked_child;		/* internal: -p of a forked child
					 * left stopped by our parent */
static char **saved_argv;		/* to start a cachetrace per child */
static int saved_first;
static pid_t helpers[64];		/* cachetraces of forked children */
static unsigned n_helpers;
static unsigned execs;			/* images traced after exec */
static bool opt_sw_breakpoints;		/* --breakpoints=sw */
static const char *opt_start_watch, *opt_stop_watch;
static int opt_toggle_signal;		/* --toggle-signal */
static volatile sig_atomic_t toggle_requests;
static unsigned dr_want;		/* debug-register slots armed */
static bool opt_threads_all;		/* --threads=all */
static bool opt_call_stacks;
static const char *opt_callgrind_out = "callgrind.out.%p";
static const char *opt_folded_out;
static const char *opt_folded_event = "Ir";
static struct core_map_entry {
	pid_t tid;
	unsigned core;
} core_map[256];
static unsigned n_core_map;

static void end_window(struct tracee *lead, const char *reason);
static void dispatch(struct event_info *ei);
static void after_window(struct tracee *lead);
static void arm_or_wait_for_entry(bool retry);
static char *read_cmdline(pid_t pid);
static void arm_start(void);
static bool has_start_event(void);
static void dispatch_other(struct event_info *ei);
static void release_target(void);

static noreturn void cleanup_target_and_die(void);

static void usage(void)
{
	printf(
"usage: cachetrace [options] [--] PROG [ARGS...]\n"
"       cachetrace [options] -p PID --start=LOC\n"
"\n"
"Single-steps a region of PROG and simulates its caches and branches like\n"
"valgrind's Cachegrind; writes a Cachegrind-format profile.\n"
"\n"
"Region:\n"
"  --start=LOC             begin when LOC first executes (default: trace the\n"
"                          whole run, from the first instruction after exec)\n"
"  --stop=LOC              end when LOC executes (default with --start: when\n"
"                          the start function returns to its caller)\n"
"                          LOC: symbol, symbol+OFF, 0xADDR, file.c:LINE,\n"
"                          lib.so:symbol\n"
"  --max-instructions=N, --stop-after=N\n"
"                          end each window after N instructions\n"
"  --intervals=N           trace N start..stop windows into one profile\n"
"                          [1]; 0: until interrupted or the target ends\n"
"  --threads=hit|all       step only the thread that hit the start event\n"
"                          [hit], or every thread of the target\n"
"  --core-map=TID:CORE,... the model core of each thread (default: round\n"
"                          robin in creation order over --cores)\n"
"Models:\n"
"  --I1=SIZE,ASSOC,LINE    level-1 instruction cache (default: this host's)\n"
"  --D1=SIZE,ASSOC,LINE    level-1 data cache\n"
"  --LL=SIZE,ASSOC,LINE    last-level cache\n"
"  --cache-sim=yes|no      simulate caches [yes]\n"
"  --branch-sim=yes|no     simulate branch prediction [yes]\n"
"  --branch-model=NAME     branch predictor [cachegrind]\n"
"  --cores=N               cores of multi-core models [1]\n"
"Output:\n"
"  -o, --cachegrind-out-file=FILE\n"
"                          profile file [cachegrind.out.%%p]; %%p is the\n"
"                          target's pid, %%q{VAR} an environment variable;\n"
"                          '-' writes the profile to stdout (the target's\n"
"                          stdout then goes to stderr)\n"
"  --trace-mem=FILE        also write every access, in Lackey's format\n"
"  --call-stacks=yes|no    keep costs per call stack too [no]\n"
"  --callgrind-out-file=FILE\n"
"                          the call-stack profile [callgrind.out.%%p]\n"
"  --folded-out-file=FILE  folded stacks (flame graphs) of --folded-event\n"
"  --folded-event=EV       [Ir]\n"
"  -q, --quiet             no progress line, no summary\n"
"  --start-watch=EXPR      begin after an instruction writes EXPR: symbol or\n"
"                          0xADDR, then :LEN (1,2,4,8) and :w or :rw\n"
"  --stop-watch=EXPR       end after an instruction writes (:rw accesses) it\n"
"  --toggle-signal=SIG     each SIG sent to cachetrace starts or stops a\n"
"                          window, wherever the target is\n"
"  --breakpoints=hw|sw     debug registers [hw] or int3 for --start\n"
"Attach:\n"
"  -p, --pid=PID           attach to a running process (every thread),\n"
"                          trace its windows, detach; it runs on\n"
"Launch:\n"
"  --aslr=on|off           address space randomisation for PROG [off]\n"
"  --trace-children=yes|no follow fork/vfork (a profile per process: -o\n"
"                          needs %%p) and exec (the new image's profile\n"
"                          is FILE.exec1, .exec2...) [no]\n"
"  -d, --debug             debugging messages\n"
"  --help, --version\n");
}

static bool parse_yes_no(const char *opt, const char *v)
{
	if (!strcmp(v, "yes") || !strcmp(v, "on"))
		return true;
	if (!strcmp(v, "no") || !strcmp(v, "off"))
		return false;
	error_usage_and_die("%s: expected yes or no, not '%s'", opt, v);
}

static uint64_t parse_count(const char *opt, const char *v)
{
	char *end;
	errno = 0;
	unsigned long long n = strtoull(v, &end, 0);
	if (errno || end == v || *end || v[0] == '-')
		error_usage_and_die("%s: '%s' is not a count", opt, v);
	return n;
}

static void parse_geom(const char *name, const char *v, struct cache_geom *g)
{
	char err[200];
	if (cache_geom_parse(v, g, err, sizeof(err)) < 0)
		error_usage_and_die("--%s: %s", name, err);
}

enum {
	OPT_START = 256, OPT_STOP, OPT_I1, OPT_D1, OPT_LL, OPT_CACHE_SIM,
	OPT_BRANCH_SIM, OPT_TRACE_MEM, OPT_ASLR, OPT_MAX_INSNS, OPT_MODEL,
	OPT_BRANCH_MODEL, OPT_CORES, OPT_THREADS, OPT_INTERVALS, OPT_CORE_MAP,
	OPT_CALL_STACKS, OPT_CALLGRIND_OUT, OPT_FOLDED_OUT, OPT_FOLDED_EVENT,
	OPT_BREAKPOINTS, OPT_START_WATCH, OPT_STOP_WATCH, OPT_TOGGLE_SIGNAL,
	OPT_TRACE_CHILDREN, OPT_FORKED_CHILD,
	OPT_HELP, OPT_VERSION,
};

static int parse_signal(const char *opt, const char *v)
{
	const char *name = strncmp(v, "SIG", 3) ? v : v + 3;
	for (int sig = 1; sig < NSIG; sig++) {
		const char *abbrev = sigabbrev_np(sig);
		if (abbrev && !strcmp(abbrev, name))
			return sig;
	}
	char *end;
	long n = strtol(v, &end, 10);
	if (*v && !*end && n > 0 && n < NSIG)
		return (int)n;
	error_usage_and_die("%s: '%s' is not a signal", opt, v);
}

static void parse_core_map(const char *v)
{
	char *copy = xstrdup(v), *save = NULL;
	for (char *tok = strtok_r(copy, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		char *colon = strchr(tok, ':'), *end1, *end2;
		if (!colon)
			error_usage_and_die("--core-map: '%s' is not TID:CORE",
					    tok);
		long tid = strtol(tok, &end1, 10);
		long core = strtol(colon + 1, &end2, 10);
		if (end1 != colon || *end2 || tid <= 0 || core < 0 ||
		    tok == colon || !colon[1])
			error_usage_and_die("--core-map: '%s' is not TID:CORE",
					    tok);
		if (n_core_map == sizeof(core_map) / sizeof(core_map[0]))
			error_usage_and_die("--core-map: too many entries");
		core_map[n_core_map++] = (struct core_map_entry){
			(pid_t)tid, (unsigned)core };
	}
	free(copy);
}

static int parse_options(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "start", required_argument, NULL, OPT_START },
		{ "stop", required_argument, NULL, OPT_STOP },
		{ "I1", required_argument, NULL, OPT_I1 },
		{ "D1", required_argument, NULL, OPT_D1 },
		{ "LL", required_argument, NULL, OPT_LL },
		{ "cache-sim", required_argument, NULL, OPT_CACHE_SIM },
		{ "branch-sim", required_argument, NULL, OPT_BRANCH_SIM },
		{ "cachegrind-out-file", required_argument, NULL, 'o' },
		{ "trace-mem", required_argument, NULL, OPT_TRACE_MEM },
		{ "aslr", required_argument, NULL, OPT_ASLR },
		{ "max-instructions", required_argument, NULL, OPT_MAX_INSNS },
		{ "model", required_argument, NULL, OPT_MODEL },
		{ "branch-model", required_argument, NULL, OPT_BRANCH_MODEL },
		{ "cores", required_argument, NULL, OPT_CORES },
		{ "threads", required_argument, NULL, OPT_THREADS },
		{ "pid", required_argument, NULL, 'p' },
		{ "breakpoints", required_argument, NULL, OPT_BREAKPOINTS },
		{ "start-watch", required_argument, NULL, OPT_START_WATCH },
		{ "stop-watch", required_argument, NULL, OPT_STOP_WATCH },
		{ "toggle-signal", required_argument, NULL, OPT_TOGGLE_SIGNAL },
		{ "trace-children", required_argument, NULL,
		  OPT_TRACE_CHILDREN },
		{ "forked-child", no_argument, NULL, OPT_FORKED_CHILD },
		{ "intervals", required_argument, NULL, OPT_INTERVALS },
		{ "stop-after", required_argument, NULL, OPT_MAX_INSNS },
		{ "core-map", required_argument, NULL, OPT_CORE_MAP },
		{ "call-stacks", required_argument, NULL, OPT_CALL_STACKS },
		{ "callgrind-out-file", required_argument, NULL,
		  OPT_CALLGRIND_OUT },
		{ "folded-out-file", required_argument, NULL, OPT_FOLDED_OUT },
		{ "folded-event", required_argument, NULL, OPT_FOLDED_EVENT },
		{ "quiet", no_argument, NULL, 'q' },
		{ "debug", no_argument, NULL, 'd' },
		{ "help", no_argument, NULL, OPT_HELP },
		{ "version", no_argument, NULL, OPT_VERSION },
		{ NULL, 0, NULL, 0 },
	};
	int c;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+o:qdp:", longopts, NULL)) != -1) {
		switch (c) {
		case OPT_START: opt_start = optarg; break;
		case OPT_STOP: opt_stop = optarg; break;
		case OPT_I1: parse_geom("I1", optarg, &opt_cfg.i1); break;
		case OPT_D1: parse_geom("D1", optarg, &opt_cfg.d1); break;
		case OPT_LL: parse_geom("LL", optarg, &opt_cfg.ll); break;
		case OPT_CACHE_SIM:
			opt_cfg.cache_sim = parse_yes_no("--cache-sim", optarg);
			break;
		case OPT_BRANCH_SIM:
			opt_cfg.branch_sim = parse_yes_no("--branch-sim", optarg);
			break;
		case 'o': opt_out = optarg; break;
		case OPT_TRACE_MEM: opt_trace_mem = optarg; break;
		case OPT_ASLR: opt_aslr = parse_yes_no("--aslr", optarg); break;
		case OPT_MAX_INSNS:
			opt_max_insns = parse_count("--max-instructions", optarg);
			break;
		case OPT_MODEL: opt_model = optarg; break;
		case OPT_BRANCH_MODEL: opt_cfg.branch_model = optarg; break;
		case OPT_THREADS:
			if (!strcmp(optarg, "all"))
				opt_threads_all = true;
			else if (strcmp(optarg, "hit"))
				error_usage_and_die("--threads: hit or all, "
						    "not '%s'", optarg);
			break;
		case 'p': {
			uint64_t pid = parse_count("-p", optarg);
			if (pid == 0 || pid > INT32_MAX)
				error_usage_and_die("-p: '%s' is not a pid",
						    optarg);
			opt_pid = (pid_t)pid;
			break;
		}
		case OPT_BREAKPOINTS:
			if (!strcmp(optarg, "sw"))
				opt_sw_breakpoints = true;
			else if (strcmp(optarg, "hw"))
				error_usage_and_die("--breakpoints: hw or sw, "
						    "not '%s'", optarg);
			break;
		case OPT_START_WATCH: opt_start_watch = optarg; break;
		case OPT_TRACE_CHILDREN:
			opt_trace_children = parse_yes_no("--trace-children",
							  optarg);
			break;
		case OPT_FORKED_CHILD: opt_forked_child = true; break;
		case OPT_STOP_WATCH: opt_stop_watch = optarg; break;
		case OPT_TOGGLE_SIGNAL:
			opt_toggle_signal = parse_signal("--toggle-signal",
							 optarg);
			if (opt_toggle_signal == SIGKILL ||
			    opt_toggle_signal == SIGSTOP)
				error_usage_and_die("--toggle-signal: %s cannot "
						    "be caught", optarg);
			break;
		case OPT_INTERVALS:
			opt_intervals = parse_count("--intervals", optarg);
			break;
		case OPT_CORE_MAP: parse_core_map(optarg); break;
		case OPT_CALL_STACKS:
			opt_call_stacks = parse_yes_no("--call-stacks", optarg);
			break;
		case OPT_CALLGRIND_OUT:
			opt_callgrind_out = optarg;
			opt_call_stacks = true;
			break;
		case OPT_FOLDED_OUT:
			opt_folded_out = optarg;
			opt_call_stacks = true;
			break;
		case OPT_FOLDED_EVENT: opt_folded_event = optarg; break;
		case OPT_CORES:
			opt_cfg.cores = parse_count("--cores", optarg);
			if (opt_cfg.cores < 1 || opt_cfg.cores > 1024)
				error_usage_and_die("--cores: 1 to 1024, not %s",
						    optarg);
			break;
		case 'q': opt_quiet = true; break;
		case 'd': debug_flag = 1; break;
		case OPT_HELP:
			usage();
			printf("Model options:\n");
			model_usage(stdout);
			exit(0);
		case OPT_VERSION:
			printf("cachetrace %s\n", CT_VERSION);
			exit(0);
		case ':':
			error_usage_and_die("option '%s' needs a value",
					    argv[optind - 1]);
		default: {
			/* Model options (--cache=..., ...) belong to the
			 * models: valgrind style, --NAME=VALUE only. */
			const char *arg = argv[optind - 1];
			const char *eq = strchr(arg, '=');
			if (!strncmp(arg, "--", 2) && eq) {
				char name[64], err[256];
				snprintf(name, sizeof(name), "%.*s",
					 (int)(eq - arg - 2), arg + 2);
				int r = model_parse_option(&opt_cfg, name,
							   eq + 1, err,
							   sizeof(err));
				if (r > 0)
					break;
				if (r < 0)
					error_usage_and_die("--%s: %s", name,
							    err);
			}
			error_usage_and_die("unknown option '%s'", arg);
		}
		}
	}
	if (opt_pid && optind < argc)
		error_usage_and_die("-p and a program to launch exclude each "
				    "other");
	if (!opt_pid && optind >= argc)
		error_usage_and_die("no program to trace (usage: cachetrace "
				    "[options] -- PROG [ARGS...], or -p PID)");
	bool has_start = opt_start || opt_start_watch || opt_toggle_signal;
	if ((opt_stop || opt_stop_watch) && !has_start)
		error_usage_and_die("--stop needs --start");
	if (opt_start && opt_start_watch)
		error_usage_and_die("--start and --start-watch exclude each "
				    "other");
	if (opt_toggle_signal && (opt_start || opt_start_watch))
		error_usage_and_die("--toggle-signal is its own start event: "
				    "no --start with it");
	if (opt_intervals != 1 && !has_start)
		error_usage_and_die("--intervals needs a start event");
	if (opt_trace_children && !strstr(opt_out, "%p") && strcmp(opt_out, "-"))
		error_usage_and_die("--trace-children=yes needs %%p in the "
				    "output file name (-o), one per process");
	if (opt_trace_children && opt_call_stacks &&
	    !strstr(opt_callgrind_out, "%p"))
		error_usage_and_die("--trace-children=yes needs %%p in "
				    "--callgrind-out-file");
	if (opt_pid && !has_start && !opt_forked_child)
		error_usage_and_die("-p needs a start event (--start, "
				    "--start-watch or --toggle-signal)");
	return optind;
}

/* execvp's search, done before forking so that a missing or
 * non-executable program is a clear error and no process is created. */
static char *find_program(const char *prog)
{
	if (strchr(prog, '/')) {
		struct stat st;
		if (stat(prog, &st) < 0)
			perror_msg_and_die("%s", prog);
		if (S_ISDIR(st.st_mode))
			error_msg_and_die("%s: is a directory", prog);
		if (access(prog, X_OK) < 0)
			error_msg_and_die("%s: not executable", prog);
		return xstrdup(prog);
	}
	const char *path = getenv("PATH");
	if (!path)
		path = "/usr/bin:/bin";
	bool found_non_exec = false;
	for (const char *p = path; ; ) {
		const char *colon = strchrnul(p, ':');
		char *cand = xasprintf("%.*s/%s", (int)(colon - p),
				       colon == p ? "." : p, prog);
		struct stat st;
		if (stat(cand, &st) == 0 && S_ISREG(st.st_mode)) {
			if (access(cand, X_OK) == 0)
				return cand;
			found_non_exec = true;
		}
		free(cand);
		if (!*colon)
			break;
		p = colon + 1;
	}
	error_msg_and_die(found_non_exec ? "%s: not executable"
					 : "%s: command not found in PATH", prog);
}

static void on_signal(int sig)
{
	interrupted_by = sig;
}

static void on_toggle(int sig)
{
	(void)sig;
	toggle_requests++;
}

static void install_signal_handlers(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	/* No SA_RESTART: waitpid must return EINTR so the loop sees it. */
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	if (opt_toggle_signal) {
		sa.sa_handler = on_toggle;
		sigaction(opt_toggle_signal, &sa, NULL);
	}
}

static long trace_options(void)
{
	long opts = PTRACE_O_TRACEEXEC | PTRACE_O_TRACEEXIT |
		    PTRACE_O_TRACECLONE;
	if (opt_trace_children)
		opts |= PTRACE_O_TRACEFORK | PTRACE_O_TRACEVFORK;
	return opts;
}

/* Kill the launched target and reap every thread.  With
 * PTRACE_O_TRACEEXIT even SIGKILL stops each thread at its exit event:
 * let them go until all are reaped. */
static void kill_and_reap(pid_t pid)
{
	int status;
	pid_t r;
	kill(pid, SIGKILL);
	while ((r = waitpid(-1, &status, __WALL)) > 0 || errno == EINTR)
		if (r > 0 && WIFSTOPPED(status))
			ptrace(PTRACE_CONT, r, NULL, NULL);
}

/* Fork PROG stopped, seize it, let it exec.  Returns at the exec stop. */
static pid_t launch(const char *path, char **argv, bool stdout_to_stderr)
{
	int pfd[2];
	if (pipe2(pfd, O_CLOEXEC) < 0)
		perror_msg_and_die("pipe");
	pid_t pid = fork();
	if (pid < 0)
		perror_msg_and_die("fork");
	if (pid == 0) {
		close(pfd[0]);
		if (!opt_aslr)
			personality(personality(0xffffffff) |
				    ADDR_NO_RANDOMIZE);
		if (stdout_to_stderr)
			dup2(2, 1);
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		signal(SIGHUP, SIG_DFL);
		raise(SIGSTOP);
		execv(path, argv);
		int err = errno;
		if (write(pfd[1], &err, sizeof(err)) < 0)
			_exit(127);
		_exit(127);
	}
	close(pfd[1]);
	int status;
	if (waitpid(pid, &status, WSTOPPED) < 0 || !WIFSTOPPED(status))
		perror_msg_and_die("waiting for the new process");
	long opts = trace_options();
	if (ptrace(PTRACE_SEIZE, pid, NULL, (void *)opts) < 0) {
		int err = errno;
		kill_and_reap(pid);
		errno = err;
		perror_msg_and_die("ptrace(PTRACE_SEIZE, %d)", pid);
	}
	struct tracee *t = tracee_add(pid);
	kill(pid, SIGCONT);
	/* Run it to its exec: a SIGCONT delivery stop and the seize's own
	 * PTRACE_EVENT_STOP come first. */
	for (;;) {
		struct event_info ei;
		tracee_next_event(&ei);
		if (ei.ev == TE_NONE || ei.tid != pid)
			continue;
		t->flags |= TF_STOPPED;
		switch (ei.ev) {
		case TE_EXEC:
			close(pfd[0]);
			return pid;
		case TE_EXITED: {
			int err = 0;
			if (read(pfd[0], &err, sizeof(err)) == sizeof(err)) {
				errno = err;
				perror_msg_and_die("cannot execute %s", path);
			}
			error_msg_and_die("%s exited before it started", path);
		}
		case TE_SIGNAL:
			tracee_restart(t, PTRACE_CONT,
				       ei.sig == SIGSTOP ? 0 : ei.sig);
			break;
		case TE_INTERRUPTED:
			kill_and_reap(pid);
			exit(128 + interrupted_by);
		default:
			tracee_restart(t, PTRACE_CONT, 0);
			break;
		}
	}
}

/* A line "KEY:\tvalue" of /proc/PID/status, or NULL. */
static char *proc_status_field(pid_t pid, const char *key, char *buf,
			       size_t len)
{
	char path[64], line[256];
	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	FILE *f = fopen(path, "r");
	if (!f)
		return NULL;
	size_t klen = strlen(key);
	char *found = NULL;
	while (fgets(line, sizeof(line), f)) {
		if (!strncmp(line, key, klen) && line[klen] == ':') {
			char *v = line + klen + 1;
			v += strspn(v, " \t");
			v[strcspn(v, "\n")] = 0;
			snprintf(buf, len, "%s", v);
			found = buf;
			break;
		}
	}
	fclose(f);
	return found;
}

static noreturn void attach_denied(pid_t pid)
{
	char why[160] = "";
	FILE *f = fopen("/proc/sys/kernel/yama/ptrace_scope", "r");
	int scope = -1;
	if (f) {
		if (fscanf(f, "%d", &scope) != 1)
			scope = -1;
		fclose(f);
	}
	char uid[64];
	bool other_user = false;
	if (proc_status_field(pid, "Uid", uid, sizeof(uid)))
		other_user = (uid_t)strtoul(uid, NULL, 10) != geteuid();
	if (scope >= 1 && geteuid() != 0)
		snprintf(why, sizeof(why), "kernel.yama.ptrace_scope is %d: "
			 "run as root, or with CAP_SYS_PTRACE", scope);
	else if (geteuid() != 0 && other_user)
		snprintf(why, sizeof(why), "it belongs to another user: run "
			 "as root, or with CAP_SYS_PTRACE");
	else if (geteuid() != 0)
		snprintf(why, sizeof(why), "not root and no CAP_SYS_PTRACE, "
			 "or the process is not dumpable");
	else
		snprintf(why, sizeof(why), "refused by the kernel (a security "
			 "module, or the process is exiting)");
	error_msg_and_die("cannot attach to process %d: permission denied (%s)",
			  pid, why);
}

/* Seize every thread of PID (threads created meanwhile too) and stop them
 * all (PTRACE_INTERRUPT).  Bad pids are one-line errors, the target left
 * untouched. */
static void attach(pid_t pid)
{
	char buf[128];
	if (kill(pid, 0) < 0 && errno == ESRCH)
		error_msg_and_die("no such process: %d", pid);
	if (!proc_status_field(pid, "State", buf, sizeof(buf)))
		error_msg_and_die("no such process: %d", pid);
	if (buf[0] == 'Z' || buf[0] == 'X')
		error_msg_and_die("process %d is a zombie: nothing to trace",
				  pid);
	if (proc_status_field(pid, "TracerPid", buf, sizeof(buf)) &&
	    atoi(buf)) {
		pid_t tracer = atoi(buf);
		char name[64] = "?";
		proc_status_field(tracer, "Name", name, sizeof(name));
		error_msg_and_die("process %d is already traced by process %d "
				  "(%s)", pid, tracer, name);
	}
	long opts = trace_options();
	char dir[64];
	snprintf(dir, sizeof(dir), "/proc/%d/task", pid);
	for (bool added = true; added; ) {
		added = false;
		DIR *d = opendir(dir);
		if (!d) {
			if (!tracee_first())
				error_msg_and_die("no such process: %d", pid);
			break;
		}
		struct dirent *de;
		while ((de = readdir(d))) {
			pid_t tid = atoi(de->d_name);
			if (tid <= 0 || tracee_find(tid))
				continue;
			if (ptrace(PTRACE_SEIZE, tid, NULL, (void *)opts) < 0) {
				if (errno == ESRCH)
					continue;	/* it just exited */
				int err = errno;
				closedir(d);
				if (tracee_first())
					tracee_detach_all();
				if (err == EPERM)
					attach_denied(pid);
				errno = err;
				perror_msg_and_die("cannot attach to thread %d",
						   tid);
			}
			tracee_add(tid);
			added = true;
		}
		closedir(d);
	}
	for (struct tracee *t = tracee_first(); t; t = t->next)
		ptrace(PTRACE_INTERRUPT, t->tid, NULL, NULL);
	/* Wait until every thread is in its interrupt stop; signals that
	 * arrive first are delivered and the wait goes on. */
	for (struct tracee *t = tracee_first(), *next; t; t = next) {
		next = t->next;
		while (!(t->flags & TF_STOPPED)) {
			int status;
			pid_t r = tracee_wait(t->tid, &status);
			if (r < 0 || WIFEXITED(status) || WIFSIGNALED(status)) {
				tracee_remove(t->tid);
				break;
			}
			unsigned event = (unsigned)status >> 16;
			if (event == PTRACE_EVENT_STOP) {
				t->flags |= TF_STOPPED;
			} else if (event == 0) {
				/* A signal on its way: keep it for the first
				 * restart. */
				t->inject = WSTOPSIG(status);
				t->flags |= TF_STOPPED;
			} else {
				tracee_restart(t, PTRACE_CONT, 0);
			}
		}
	}
	if (!tracee_find(pid))
		error_msg_and_die("process %d exited while attaching", pid);
}

static char *read_cmdline(pid_t pid)
{
	char path[64], buf[4096];
	snprintf(path, sizeof(path), "/proc/%d/cmdline", pid);
	int fd = open(path, O_RDONLY);
	ssize_t n = fd < 0 ? -1 : read(fd, buf, sizeof(buf) - 1);
	if (fd >= 0)
		close(fd);
	if (n <= 0)
		return xasprintf("(pid %d)", pid);
	buf[n] = 0;
	for (ssize_t i = 0; i < n - 1; i++)
		if (!buf[i])
			buf[i] = ' ';
	return xstrdup(buf);
}

static uint64_t read_auxv_entry(pid_t pid, unsigned long type)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/auxv", pid);
	int fd = open(path, O_RDONLY);
	if (fd < 0)
		return 0;
	Elf64_auxv_t aux[64];
	ssize_t n = read(fd, aux, sizeof(aux));
	close(fd);
	for (ssize_t i = 0; i < n / (ssize_t)sizeof(aux[0]); i++)
		if (aux[i].a_type == type)
			return aux[i].a_un.a_val;
	return 0;
}

/* Resolve LOC; with RETRY_LATER, a symbol not found yet is not an error
 * (returns false: try again at the entry point, when the libraries are
 * mapped). */
static bool resolve_loc(const char *what, const char *loc, uint64_t *addr,
			bool retry_later)
{
	char err[1024] = "";
	switch (sym_resolve(syms, loc, addr, err, sizeof(err))) {
	case SYM_FOUND:
		/* A warning comes with some finds (an IFUNC's address is its
		 * resolver's). */
		if (err[0] && !opt_quiet)
			error_msg("%s: warning: %s", what, err);
		debug_msg("%s %s = 0x%" PRIx64, what, loc, *addr);
		return true;
	case SYM_NOT_YET:
	case SYM_NOT_FOUND:
		if (retry_later)
			return false;
		error_msg("%s: %s", what, err);
		cleanup_target_and_die();
	case SYM_BAD_SYNTAX:
	default:
		error_msg("%s: %s", what, err);
		cleanup_target_and_die();
	}
}

static noreturn void cleanup_target_and_die(void)
{
	if (opt_pid && tracee_first())
		release_target();	/* attached: leave it running */
	else if (target_pid > 0)
		kill_and_reap(target_pid);
	if (out_file && out_file != stdout) {
		fclose(out_file);
		if (out_name)
			unlink(out_name);
	}
	exit(1);
}

static void set_rip(pid_t tid, uint64_t rip)
{
	struct user_regs_struct r;
	if (ptrace(PTRACE_GETREGS, tid, NULL, &r) == 0) {
		r.rip = rip;
		ptrace(PTRACE_SETREGS, tid, NULL, &r);
	}
}

static void open_output(void)
{
	char err[256];
	if (!strcmp(opt_out, "-")) {
		out_file = stdout;
		return;
	}
	out_name = cgout_expand_name(opt_out, target_pid, err, sizeof(err));
	if (!out_name) {
		error_msg("-o %s: %s", opt_out, err);
		cleanup_target_and_die();
	}
	out_file = fopen(out_name, "w");
	if (!out_file) {
		perror_msg("cannot write %s", out_name);
		cleanup_target_and_die();
	}
}

static char **desc_lines;

static void collect_desc(void)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);
	if (!m)
		error_msg_and_die("out of memory");
	cache_describe(eng.cm, m);
	const char *stop = opt_stop ? opt_stop : opt_stop_watch;
	const char *stop_opt = opt_stop ? "--stop=" : "--stop-watch=";
	if (opt_start && !stop)
		fprintf(m, "desc: Region:          --start=%s, stop at the "
			"return of the start function\n", opt_start);
	else if (opt_start || opt_start_watch)
		fprintf(m, "desc: Region:          --%s=%s, %s%s\n",
			opt_start ? "start" : "start-watch",
			opt_start ? opt_start : opt_start_watch,
			stop ? stop_opt : "no stop event",
			stop ? stop : "");
	else if (opt_toggle_signal)
		fprintf(m, "desc: Region:          --toggle-signal=%s\n",
			sigabbrev_np(opt_toggle_signal));
	else
		fprintf(m, "desc: Region:          the whole run\n");
	if (opt_max_insns)
		fprintf(m, "desc: Window limit:    %" PRIu64 " instructions\n",
			opt_max_insns);
	if (has_start_event())
		fprintf(m, "desc: Windows:         %u\n", windows_done);
	if (opt_threads_all)
		fprintf(m, "desc: Threads:         all\n");
	if (partial_reason)
		fprintf(m, "desc: Partial profile: %s\n", partial_reason);
	/* Every line above starts with "desc: ", which cgout_write adds. */
	fclose(m);
	size_t n = 0;
	for (char *p = buf; *p; p++)
		n += *p == '\n';
	desc_lines = xcalloc(n + 1, sizeof(char *));
	n = 0;
	for (char *p = buf, *nl; *p; p = nl + 1) {
		nl = strchr(p, '\n');
		if (!nl)
			break;
		*nl = 0;
		desc_lines[n++] = strncmp(p, "desc: ", 6) ? p : p + 6;
	}
}

static const char **event_names;
static unsigned n_events;

static uint64_t *totals;

/* The call-stack profiles, written with the flat one (target attached). */
static void write_call_stacks(void)
{
	char err[256];
	char *name = cgout_expand_name(opt_callgrind_out, target_pid, err,
				       sizeof(err));
	FILE *f = name ? fopen(name, "w") : NULL;
	if (!name)
		error_msg("--callgrind-out-file=%s: %s", opt_callgrind_out, err);
	else if (!f)
		perror_msg("cannot write %s", name);
	else if (callgrind_write(callstack_profile(eng.cs), f,
				 (const char *const *)desc_lines,
				 cmd_line, event_names) < 0 ||
		 fclose(f) != 0)
		perror_msg("writing %s", name);
	free(name);
	if (!opt_folded_out)
		return;
	unsigned ev = n_events;
	for (unsigned i = 0; i < n_events; i++)
		if (!strcmp(event_names[i], opt_folded_event))
			ev = i;
	if (ev == n_events) {
		error_msg("--folded-event=%s: no such event", opt_folded_event);
		return;
	}
	name = cgout_expand_name(opt_folded_out, target_pid, err, sizeof(err));
	f = name ? fopen(name, "w") : NULL;
	if (!name)
		error_msg("--folded-out-file=%s: %s", opt_folded_out, err);
	else if (!f)
		perror_msg("cannot write %s", name);
	else if (callgrind_write_folded(callstack_profile(eng.cs), f, ev) < 0 ||
		 fclose(f) != 0)
		perror_msg("writing %s", name);
	free(name);
}

static void write_profile(void)
{
	if (profile_written)
		return;
	profile_written = true;
	char err[256];
	if (sym_refresh(syms, err, sizeof(err)) < 0)
		debug_msg("re-reading mappings: %s", err);
	collect_desc();
	struct cgout_meta meta = {
		.desc = (const char *const *)desc_lines,
		.cmd = cmd_line,
		.n_events = n_events,
		.events = event_names,
	};
	totals = xcalloc(n_events, sizeof(*totals));
	if (cgout_write(out_file, &meta, eng.costs, syms, totals) < 0 ||
	    fflush(out_file) != 0)
		perror_msg("writing %s", out_name ? out_name : "the profile");
	if (out_file != stdout)
		fclose(out_file);
	out_file = NULL;
	if (eng.cs)
		write_call_stacks();
}

static const char *resolve_pc_name(void *ctx, uint64_t pc, char *buf,
				   size_t len)
{
	struct src_loc loc;
	sym_lookup(ctx, pc, &loc);
	snprintf(buf, len, "%s:%u (%s)", loc.file, loc.line, loc.fn);
	return buf;
}

static const char *resolve_data_name(void *ctx, uint64_t addr, char *buf,
				     size_t len)
{
	return sym_data_name(ctx, addr, buf, len);
}

static void print_summary(void)
{
	if (summary_printed || !totals || opt_quiet)
		return;
	summary_printed = true;
	char prefix[32];
	snprintf(prefix, sizeof(prefix), "==%d== ", target_pid);
	fprintf(stderr, "%s\n", prefix);
	cgout_print_summary(stderr, prefix, n_events, event_names, totals);
	const struct model_resolver res = {
		.ctx = syms,
		.pc_name = resolve_pc_name,
		.data_name = resolve_data_name,
	};
	cache_report(eng.cm, stderr, prefix, &res);
	double t = eng.t_stepping;
	fprintf(stderr, "%s\n%sStepped %" PRIu64 " instructions in %.2f s "
		"(%.1fk steps/s)", prefix, prefix, eng.steps, t,
		t > 0 ? eng.steps / t / 1000 : 0.0);
	if (has_start_event())
		fprintf(stderr, ", %u window%s", windows_done,
			windows_done == 1 ? "" : "s");
	if (partial_reason)
		fprintf(stderr, "; partial profile: %s", partial_reason);
	fputc('\n', stderr);
}

/* Program thread T's debug registers as the armed start events want:
 * none while it is stepped (its own window must not trap on them). */
static void sync_dr(struct tracee *t)
{
	unsigned want = tracee_stepping(t) ? 0 : dr_want;
	if (t->dr_mask == want)
		return;
	if (hwbp_program(t->tid, want) == 0)
		t->dr_mask = want;
}

/* Let stopped thread T run natively. */
static void resume(struct tracee *t, int sig)
{
	sync_dr(t);
	tracee_restart(t, PTRACE_CONT, sig);
}

static bool has_start_event(void)
{
	return opt_start || opt_start_watch || opt_toggle_signal;
}

/* Detach from every thread so that the target runs on natively. */
static void release_target(void)
{
	tracee_stop_all();
	for (struct tracee *t = tracee_first(); t; t = t->next) {
		if (!(t->flags & TF_TRAPPED))
			continue;
		/* Stopped right after our int3: rewind to the breakpoint. */
		struct user_regs_struct r;
		if (ptrace(PTRACE_GETREGS, t->tid, NULL, &r) == 0 &&
		    ((start_bp.inserted && r.rip == start_bp.addr + 1) ||
		     (entry_bp.inserted && r.rip == entry_bp.addr + 1))) {
			r.rip--;
			ptrace(PTRACE_SETREGS, t->tid, NULL, &r);
			t->pending_sig = 0;
		}
	}
	pid_t any = tracee_first() ? tracee_first()->tid : target_pid;
	breakpoint_remove(any, &start_bp);
	breakpoint_remove(any, &entry_bp);
	for (struct tracee *t = tracee_first(); t; t = t->next) {
		tracee_unpin(t);
		if (t->dr_mask)
			hwbp_clear(t->tid);
	}
	tracee_unpin_self();
	tracee_detach_all();
	released = true;
}

/* Bring every thread but T to a ptrace stop, keeping the wait status of
 * each (its event is dispatched later, by replay_deferred), so that none
 * can run through the text while an int3 is out. */
static void stop_others(struct tracee *t)
{
	for (struct tracee *o = tracee_first(); o; o = o->next)
		if (o != t && !(o->flags & TF_STOPPED))
			ptrace(PTRACE_INTERRUPT, o->tid, NULL, NULL);
	for (struct tracee *o = tracee_first(); o; o = o->next) {
		if (o == t || (o->flags & TF_STOPPED))
			continue;
		int status;
		if (tracee_wait(o->tid, &status) < 0)
			continue;	/* gone: nothing to replay */
		o->deferred_status = status;
		o->has_deferred = true;
		if (WIFSTOPPED(status))
			o->flags |= TF_STOPPED;
	}
}

static void replay_deferred(void)
{
	for (;;) {
		struct tracee *o = tracee_first();
		while (o && !o->has_deferred)
			o = o->next;
		if (!o)
			return;
		o->has_deferred = false;
		o->flags &= ~TF_STOPPED;	/* dispatch sets it again */
		struct event_info ei;
		tracee_decode_status(o->tid, o->deferred_status, &ei);
		dispatch(&ei);
	}
}

/* Thread T (stopped, rip at our int3's address) executes the original
 * instruction there: the others are stopped, the byte restored for one
 * step, and the int3 put back; a software breakpoint thus misses no hit in
 * another thread.  The step is accounted when T is being stepped.
 * Returns 0, or -1 when T did not come back from the step (gone, or an
 * event that was deferred to the dispatcher). */
static int step_over_int3(struct tracee *t)
{
	stop_others(t);
	breakpoint_remove(t->tid, &start_bp);
	int sig = t->inject, rc = -1;
	t->inject = 0;
	sync_dr(t);
	tracee_restart(t, PTRACE_SINGLESTEP, sig);
	int status;
	pid_t r = tracee_wait(t->tid, &status);
	struct tracee *any = NULL;
	if (r == t->tid && WIFSTOPPED(status)) {
		t->flags |= TF_STOPPED;
		unsigned event = (unsigned)status >> 16;
		if (event == 0 && WSTOPSIG(status) == SIGTRAP) {
			struct user_regs_struct after;
			siginfo_t si;
			bool moved = sig && ptrace(PTRACE_GETSIGINFO, t->tid,
						   NULL, &si) == 0 &&
				     si.si_code == SIGTRAP;
			if (ptrace(PTRACE_GETREGS, t->tid, NULL, &after) == 0) {
				if (!tracee_stepping(t))
					t->regs = after;
				else if (moved)
					engine_moved(&eng, t, &after);
				else
					engine_account(&eng, t, &after);
				rc = 0;
			}
		} else if (event == 0) {
			t->inject = WSTOPSIG(status);	/* nothing ran */
			rc = 0;
		} else {
			t->deferred_status = status;
			t->has_deferred = true;
		}
		any = t;
	} else if (r == t->tid) {
		t->deferred_status = status;	/* gone: replayed as exited */
		t->has_deferred = true;
	}
	for (struct tracee *o = tracee_first(); o && !any; o = o->next)
		if ((o->flags & TF_STOPPED) && !o->has_deferred)
			any = o;
	if (!any)
		for (struct tracee *o = tracee_first(); o && !any; o = o->next)
			if (o->flags & TF_STOPPED)
				any = o;
	if (any && breakpoint_insert(any->tid, &start_bp, start_addr) < 0)
		error_msg("cannot put the start breakpoint back");
	replay_deferred();
	return rc;
}

static bool int3_at(const struct tracee *t)
{
	return start_bp.inserted && t->regs.rip == start_bp.addr;
}

/* Restart stepping thread T for one more instruction. */
static void step_restart(struct tracee *t)
{
	for (;;) {
		eng.decoding = t;
		if (engine_prepare(&eng, t) < 0) {
			bool lead = t->flags & TF_LEAD;
			if (lead)
				end_window(t, "the next instruction could not "
					   "be read");
			engine_end_thread(&eng, t);
			resume(t, t->inject);
			t->inject = 0;
			return;
		}
		if (!int3_at(t))
			break;
		if (step_over_int3(t) < 0)
			return;
		if ((t->flags & TF_LEAD) && engine_at_stop(&eng, t)) {
			end_window(t, NULL);
			after_window(t);
			return;
		}
		if (!tracee_stepping(t))
			return;
	}
	int sig = t->inject;
	t->inject = 0;
	sync_dr(t);
	if (tracee_restart(t, PTRACE_SINGLESTEP, sig) < 0)
		error_msg("cannot step thread %d", t->tid);
}

/* Thread T, stopped, joins the window: its steps are accounted from now. */
static void step_thread(struct tracee *t)
{
	t->flags &= ~TF_WANT_STEP;
	if (engine_begin_thread(&eng, t) < 0)
		return;		/* dying: its exit event follows */
	step_restart(t);
}

static bool core_from_map(pid_t tid, unsigned *core)
{
	for (unsigned i = 0; i < n_core_map; i++)
		if (core_map[i].tid == tid) {
			*core = core_map[i].core;
			return true;
		}
	return false;
}

static void assign_core(struct tracee *t)
{
	unsigned cores = opt_cfg.cores ? opt_cfg.cores : 1;
	if (!core_from_map(t->tid, &t->core))
		t->core = t->seq % cores;
}

static bool all_windows_done(void)
{
	return has_start_event() && opt_intervals && !n_active &&
	       windows_done >= opt_intervals;
}

/* May a start event now begin a window?  With --threads=hit every thread
 * that hits it leads its own window, several at once; --threads=all steps
 * everything in one window at a time. */
static bool can_begin_window(void)
{
	if (opt_intervals && eng.windows >= opt_intervals)
		return false;
	return !(opt_threads_all && n_active);
}

static void begin_window(struct tracee *t)
{
	eng.windows++;
	eng.max_steps = opt_max_insns;
	if (!n_active++)
		eng.t_start = eng.t_last_progress = now_seconds();
	for (struct tracee *o = tracee_first(); o; o = o->next)
		assign_core(o);
	bool was_stepping = tracee_stepping(t);
	if (!was_stepping && engine_begin_thread(&eng, t) < 0) {
		perror_msg("reading the registers of %d", t->tid);
		cleanup_target_and_die();
	}
	t->flags |= TF_LEAD;
	memset(&t->win, 0, sizeof(t->win));
	if (opt_stop) {
		t->win.stop_pc = stop_addr;
	} else if (opt_start) {
		/* At the first instruction of the start function the return
		 * address is at [rsp]. */
		uint64_t ret;
		if (tracee_read_mem(t->tid, t->regs.rsp, &ret, 8) != 8) {
			error_msg("cannot read the return address of %s",
				  opt_start);
			cleanup_target_and_die();
		}
		t->win.on_return = true;
		t->win.stop_pc = ret;
		t->win.entry_sp = t->regs.rsp;
	}
	if (eng.cs && callstack_begin(eng.cs, t->tid, &t->regs) < 0)
		debug_msg("no initial call stack for thread %d", t->tid);
	debug_msg("window %u begins at 0x%llx in thread %d", eng.windows,
		  t->regs.rip, t->tid);
	if (opt_threads_all) {
		/* Every other thread joins at its next stop. */
		for (struct tracee *o = tracee_first(); o; o = o->next) {
			if (o == t || tracee_stepping(o))
				continue;
			if (o->flags & TF_STOPPED) {
				step_thread(o);
			} else {
				o->flags |= TF_WANT_STEP;
				ptrace(PTRACE_INTERRUPT, o->tid, NULL, NULL);
			}
		}
	}
	step_restart(t);
}

/* Thread T stops stepping: at once when it is stopped, else at its next
 * stop (TF_ENDING: that step is still accounted). */
static void leave_stepping(struct tracee *t, bool run_on)
{
	if (!(t->flags & TF_STOPPED)) {
		t->flags |= TF_ENDING;
		return;
	}
	engine_end_thread(&eng, t);
	if (run_on) {
		resume(t, t->inject);
		t->inject = 0;
	}
}

/* End the window that thread LEAD leads: its stop event, or a reason it
 * ended early.  A stopped LEAD is left stopped for the caller. */
static void end_window(struct tracee *lead, const char *reason)
{
	if (!(lead->flags & TF_LEAD))
		return;
	lead->flags &= ~TF_LEAD;
	n_active--;
	windows_done++;
	if (reason)
		partial_reason = reason;
	if (eng.cs)
		callstack_end(eng.cs);
	if (!n_active) {
		eng.t_stepping += now_seconds() - eng.t_start;
		engine_clear_progress(&eng);
	}
	bool more = has_start_event() && !reason &&
		    !(opt_intervals && eng.windows >= opt_intervals);
	if (!more && !n_active)
		dr_want = 0;
	if (opt_threads_all) {
		for (struct tracee *t = tracee_first(); t; t = t->next)
			if (t != lead && tracee_stepping(t))
				leave_stepping(t, more);
	}
	if (lead->flags & TF_STOPPED)
		engine_end_thread(&eng, lead);
	else
		lead->flags |= TF_ENDING;
	if (!n_active)
		tracee_unpin_self();
}

/* The lead's window ended and it is stopped: let it run on, unless all
 * the windows are done (then everything is released together). */
static void after_window(struct tracee *lead)
{
	if (!all_windows_done())
		resume(lead, lead->inject);
}

static void end_all_windows(const char *reason)
{
	for (struct tracee *t = tracee_first(); t; t = t->next)
		if (t->flags & TF_LEAD)
			end_window(t, reason);
}

/* --trace-children: a forked child process gets a cachetrace of its own
 * (its own profile, %p = its pid): we leave it stopped by SIGSTOP,
 * detach, and start "cachetrace --forked-child -p CHILD" with our options,
 * which seizes it and lets it go on. */
static void hand_off_child(pid_t child)
{
	int status;
	struct tracee *c = tracee_find(child);
	/* Its first stop (PTRACE_EVENT_STOP) may not be reported yet. */
	while (!(c && (c->flags & TF_STOPPED))) {
		if (tracee_wait(child, &status) < 0 || !WIFSTOPPED(status)) {
			if (c)
				tracee_remove(child);
			return;
		}
		if (!c)
			c = tracee_add(child);
		c->flags |= TF_STOPPED;
	}
	tracee_remove(child);
	/* PTRACE_DETACH delivers a signal only from a signal-delivery stop:
	 * queue a SIGSTOP and run the child to the stop that delivers it. */
	kill(child, SIGSTOP);
	for (;;) {
		if (ptrace(PTRACE_CONT, child, NULL, NULL) < 0)
			return;
		if (tracee_wait(child, &status) < 0 || !WIFSTOPPED(status))
			return;		/* it died */
		if ((status >> 16) == 0 && WSTOPSIG(status) == SIGSTOP)
			break;
	}
	if (ptrace(PTRACE_DETACH, child, NULL, (void *)(long)SIGSTOP) < 0)
		return;
	fflush(NULL);
	pid_t h = fork();
	if (h < 0) {
		perror_msg("cannot start a cachetrace for child %d", child);
		kill(child, SIGCONT);
		return;
	}
	if (h == 0) {
		char **argv = xcalloc((size_t)saved_first + 5, sizeof(char *));
		int n = 0;
		argv[n++] = saved_argv[0];
		for (int i = 1; i < saved_first; i++)
			if (strcmp(saved_argv[i], "--"))
				argv[n++] = saved_argv[i];
		argv[n++] = "--forked-child";
		argv[n++] = "-p";
		argv[n++] = xasprintf("%d", child);
		argv[n] = NULL;
		execv("/proc/self/exe", argv);
		perror_msg("cannot start a cachetrace for child %d", child);
		kill(child, SIGCONT);
		_exit(1);
	}
	if (n_helpers < sizeof(helpers) / sizeof(helpers[0]))
		helpers[n_helpers++] = h;
}

static bool is_helper(pid_t pid)
{
	for (unsigned i = 0; i < n_helpers; i++)
		if (helpers[i] == pid)
			return true;
	return false;
}

static void wait_helpers(void)
{
	for (unsigned i = 0; i < n_helpers; i++)
		while (waitpid(helpers[i], NULL, 0) < 0 && errno == EINTR)
			;
	n_helpers = 0;
}

/* A clone, fork or vfork event of T: a new thread joins; a new process
 * (--trace-children) gets its own cachetrace. */
static void new_child(struct tracee *t, struct event_info *ei)
{
	unsigned long child;
	if (ptrace(PTRACE_GETEVENTMSG, t->tid, NULL, &child) < 0)
		return;
	if (ei->ptrace_event == PTRACE_EVENT_FORK ||
	    ei->ptrace_event == PTRACE_EVENT_VFORK) {
		hand_off_child((pid_t)child);
		return;
	}
	struct tracee *c = tracee_add((pid_t)child);
	assign_core(c);
	if (opt_threads_all && n_active)
		c->flags |= TF_WANT_STEP;
}

/* The target called exec (T is its only thread now): the old image's
 * breakpoints and text are gone.  Its profile is written now, while libdw
 * still knows the old modules.  With --trace-children the new image is
 * traced afresh into FILE.execN (symbols re-read, start re-resolved);
 * without, the target is let go, as valgrind does. */
static void on_exec(struct tracee *t)
{
	start_bp.inserted = entry_bp.inserted = false;
	memset(hw_slots, 0, sizeof(hw_slots));
	dr_want = 0;
	for (struct tracee *o = tracee_first(); o; o = o->next)
		o->dr_mask = 0;		/* exec clears the debug registers */
	decode_invalidate(eng.dec, 0, UINT64_MAX);
	if (!eng.windows && has_start_event() && !partial_reason)
		partial_reason = "the target called exec before the start "
				 "event";
	write_profile();
	if (!opt_trace_children) {
		release_target();
		return;
	}
	char err[256];
	execs++;
	char *base = cgout_expand_name(opt_out, target_pid, err, sizeof(err));
	out_name = xasprintf("%s.exec%u", base ? base : "cachegrind.out",
			     execs);
	free(base);
	out_file = fopen(out_name, "w");
	if (!out_file) {
		perror_msg("cannot write %s", out_name);
		release_target();
		return;
	}
	costs_free(eng.costs);
	eng.costs = costs_new(n_events);
	eng.windows = windows_done = 0;
	eng.steps = 0;
	eng.t_stepping = 0;
	profile_written = false;
	partial_reason = NULL;
	free(totals);
	totals = NULL;
	cmd_line = read_cmdline(target_pid);
	if (sym_refresh(syms, err, sizeof(err)) < 0)
		debug_msg("re-reading mappings: %s", err);
	start_addr = stop_addr = 0;
	t->flags |= TF_STOPPED;
	if (!has_start_event()) {
		begin_window(t);
		return;
	}
	arm_or_wait_for_entry(true);
	resume(t, 0);
}

/* An event of a thread that is being stepped. */
static void dispatch_stepping(struct tracee *t, struct event_info *ei)
{
	bool ending = t->flags & TF_ENDING;
	switch (ei->ev) {
	case TE_TRAP: {
		bool handler_entry = false;
		if (t->flags & TF_INJECTED) {
			/* A signal with a handler was delivered: the kernel
			 * reports the handler's entry with si_code SIGTRAP
			 * before running anything. */
			siginfo_t si;
			if (ptrace(PTRACE_GETSIGINFO, t->tid, NULL, &si) == 0 &&
			    si.si_code == SIGTRAP)
				handler_entry = true;
		}
		struct user_regs_struct after;
		if (ptrace(PTRACE_GETREGS, t->tid, NULL, &after) < 0)
			return;		/* dying: its exit event follows */
		if (handler_entry)
			engine_moved(&eng, t, &after);
		else
			engine_account(&eng, t, &after);
		if (ending) {
			t->flags &= ~TF_ENDING;
			engine_end_thread(&eng, t);
			resume(t, 0);
			return;
		}
		if ((t->flags & TF_LEAD) && engine_at_stop(&eng, t)) {
			end_window(t, NULL);
			after_window(t);
			return;
		}
		step_restart(t);
		return;
	}
	case TE_SIGNAL:
		/* Nothing executed; deliver the signal with the next step so
		 * its handler is traced like any code. */
		t->inject = ei->sig;
		break;
	case TE_GROUP_STOP:
		if (is_stop_signal(ei->sig)) {
			/* A job-control stop: stay stopped (PTRACE_LISTEN)
			 * until SIGCONT, then go on stepping. */
			tracee_restart(t, PTRACE_LISTEN, 0);
			return;
		}
		break;
	case TE_CLONE: {
		new_child(t, ei);
		/* The clone syscall completed: that was one step. */
		struct user_regs_struct after;
		if (ptrace(PTRACE_GETREGS, t->tid, NULL, &after) == 0)
			engine_account(&eng, t, &after);
		break;
	}
	case TE_EXIT: {
		/* Exiting with its memory still mapped: if it was in the exit
		 * syscall, that syscall started (rip is past it) and
		 * Cachegrind counts it. */
		struct user_regs_struct now;
		t->flags |= TF_EXITING;
		if (t->insn && ptrace(PTRACE_GETREGS, t->tid, NULL, &now) == 0 &&
		    now.rip == t->regs.rip + t->insn->len)
			engine_account_fetch_only(&eng, t);
		bool lead = t->flags & TF_LEAD;
		if (lead)
			end_window(t, opt_start ? "the target exited inside "
						  "the window" : NULL);
		engine_end_thread(&eng, t);
		if (t->tid == target_pid || lead)
			write_profile();	/* still mapped */
		tracee_restart(t, PTRACE_CONT, 0);
		return;
	}
	case TE_EXEC:
		end_all_windows(opt_trace_children ? NULL : "the target called "
				"exec inside the window");
		engine_end_thread(&eng, t);
		on_exec(t);
		return;
	default:
		break;
	}
	if (ending) {
		t->flags &= ~TF_ENDING;
		engine_end_thread(&eng, t);
		dispatch_other(ei);
		return;
	}
	step_restart(t);
}

/* Handle an event of a thread that is not being stepped. */
static void dispatch_other(struct event_info *ei)
{
	struct tracee *t = tracee_find(ei->tid);
	if (!t) {
		t = tracee_add(ei->tid);	/* a new thread's first stop */
		assign_core(t);
		if (opt_threads_all && n_active)
			t->flags |= TF_WANT_STEP;
	}
	if (ei->ev == TE_EXITED) {
		if (ei->tid == target_pid)
			target_status = ei->status;
		tracee_remove(ei->tid);
		return;
	}
	t->flags |= TF_STOPPED;
	if ((t->flags & TF_WANT_STEP) && n_active &&
	    ei->ev == TE_GROUP_STOP && ei->sig == SIGTRAP) {
		step_thread(t);		/* our PTRACE_INTERRUPT, or its birth */
		return;
	}
	if ((t->flags & TF_WANT_WINDOW) && ei->ev == TE_GROUP_STOP &&
	    ei->sig == SIGTRAP) {
		t->flags &= ~TF_WANT_WINDOW;
		if (!n_active && can_begin_window()) {
			begin_window(t);	/* --toggle-signal: now */
			return;
		}
	}
	switch (ei->ev) {
	case TE_SIGNAL:
		resume(t, ei->sig);
		break;
	case TE_GROUP_STOP:
		if (is_stop_signal(ei->sig)) {
			sync_dr(t);
			tracee_restart(t, PTRACE_LISTEN, 0);
		}
		else
			resume(t, 0);
		break;
	case TE_CLONE:
		new_child(t, ei);
		resume(t, 0);
		break;
	case TE_EXIT:
		if (ei->tid == target_pid && eng.windows)
			write_profile();	/* the last moment it is mapped */
		resume(t, 0);
		break;
	case TE_EXEC:
		on_exec(t);
		break;
	case TE_TRAP:
		/* Not ours (the caller checked breakpoints): a SIGTRAP the
		 * target raised or was sent; deliver it. */
		resume(t, SIGTRAP);
		break;
	default:
		resume(t, 0);
		break;
	}
}

static void finish_interrupted(void)
{
	static char reason[64];
	snprintf(reason, sizeof(reason), "interrupted by %s",
		 strsignal(interrupted_by));
	if (n_active)
		end_all_windows(reason);
	else if (!partial_reason)
		partial_reason = reason;
	write_profile();
	release_target();
	print_summary();
	exit(128 + interrupted_by);
}

/* Arm the start events in every stopped thread (the others are programmed
 * at their next stop). */
static void arm_start(void)
{
	if (start_addr && !opt_sw_breakpoints) {
		hw_slots[SLOT_START] = (struct hw_slot){
			.addr = start_addr, .rw = 0, .len = 1, .used = true };
		dr_want |= 1u << SLOT_START;
	} else if (start_addr) {
		int rc = breakpoint_insert(target_pid, &start_bp, start_addr);
		if (rc < 0) {
			errno = -rc;
			perror_msg("--start: cannot set a breakpoint at 0x%"
				   PRIx64, start_addr);
			cleanup_target_and_die();
		}
	}
	if (hw_slots[SLOT_WATCH].used)
		dr_want |= 1u << SLOT_WATCH;
	for (struct tracee *t = tracee_first(); t; t = t->next) {
		if (!(t->flags & TF_STOPPED))
			continue;
		sync_dr(t);
		if (t->dr_mask != dr_want) {
			error_msg("cannot program the debug registers of thread "
				  "%d (try --breakpoints=sw)", t->tid);
			cleanup_target_and_die();
		}
	}
}

/* "symbol[:LEN][:w|rw]" or "0xADDR[:LEN][:w|rw]" into a debug-register
 * slot; LEN defaults to the symbol's size when it is 1, 2, 4 or 8 (else
 * 8), lowered to the address's alignment, which the hardware requires. */
static void parse_watch(const char *opt, const char *expr, uint64_t *lo,
			uint64_t *hi, bool *rw)
{
	char *copy = xstrdup(expr), *save = NULL;
	char *what = strtok_r(copy, ":", &save);
	unsigned len = 0;
	*rw = false;
	for (char *f = strtok_r(NULL, ":", &save); f;
	     f = strtok_r(NULL, ":", &save)) {
		if (!strcmp(f, "w"))
			*rw = false;
		else if (!strcmp(f, "rw"))
			*rw = true;
		else if (!strcmp(f, "1") || !strcmp(f, "2") ||
			 !strcmp(f, "4") || !strcmp(f, "8"))
			len = (unsigned)atoi(f);
		else {
			error_msg("%s=%s: '%s' is not a length (1, 2, 4, 8), w "
				  "or rw", opt, expr, f);
			cleanup_target_and_die();
		}
	}
	uint64_t addr, size = 8;
	char err[256];
	if (!what) {
		error_msg("%s: empty expression", opt);
		cleanup_target_and_die();
	}
	if (!strncmp(what, "0x", 2)) {
		char *end;
		addr = strtoull(what, &end, 16);
		if (*end || end == what + 2) {
			error_msg("%s: '%s' is not an address", opt, what);
			cleanup_target_and_die();
		}
	} else if (sym_resolve_data(syms, what, &addr, &size, err,
				    sizeof(err)) < 0) {
		error_msg("%s: %s", opt, err);
		cleanup_target_and_die();
	}
	if (!len)
		len = size == 1 || size == 2 || size == 4 ? (unsigned)size : 8;
	while (len > 1 && addr % len)
		len /= 2;
	*lo = addr;
	*hi = addr + len;
	free(copy);
}

static void on_trap(struct event_info *ei)
{
	struct tracee *t = tracee_find(ei->tid);
	if (!t) {
		t = tracee_add(ei->tid);
		assign_core(t);
	}
	t->flags |= TF_STOPPED;
	struct user_regs_struct r;
	if (ptrace(PTRACE_GETREGS, t->tid, NULL, &r) < 0) {
		dispatch_other(ei);
		return;
	}
	siginfo_t si;
	if (t->dr_mask && ptrace(PTRACE_GETSIGINFO, t->tid, NULL, &si) == 0 &&
	    si.si_code == TRAP_HWBKPT) {
		/* Our debug registers.  An execute hit stops before the
		 * instruction (the kernel sets RF so that resuming does not
		 * trap again); a write hit stops after the writing one. */
		unsigned hits = hwbp_hits(t->tid);
		bool go = can_begin_window();
		if (go && (hits & (1u << SLOT_START)) && r.rip == start_addr) {
			begin_window(t);
			return;
		}
		if (go && (hits & (1u << SLOT_WATCH))) {
			begin_window(t);
			return;
		}
		resume(t, 0);	/* a hit during a window is not a window */
		return;
	}
	if (entry_bp.inserted && r.rip == entry_bp.addr + 1) {
		/* At the entry point the loader has mapped the program's
		 * libraries: resolve what could not be resolved at exec. */
		breakpoint_remove(t->tid, &entry_bp);
		set_rip(t->tid, entry_bp.addr);
		char err[256];
		if (sym_refresh(syms, err, sizeof(err)) < 0)
			debug_msg("re-reading mappings: %s", err);
		/* With --trace-children a program without the start symbol
		 * may still exec one that has it: wait for the exec then. */
		bool later = opt_trace_children;
		if (!start_addr &&
		    !resolve_loc("--start", opt_start, &start_addr, later)) {
			if (!opt_quiet)
				error_msg("note: --start=%s is not in %s; "
					  "waiting for an exec", opt_start,
					  cmd_line);
			resume(t, 0);
			return;
		}
		if (opt_stop && !stop_addr &&
		    !resolve_loc("--stop", opt_stop, &stop_addr, later)) {
			resume(t, 0);
			return;
		}
		if (start_addr == entry_bp.addr) {
			begin_window(t);
			return;
		}
		arm_start();
		resume(t, 0);
		return;
	}
	if (start_bp.inserted && r.rip == start_bp.addr + 1) {
		/* The int3 stays in: rewind, and execute the original
		 * instruction with every other thread stopped. */
		set_rip(t->tid, start_bp.addr);
		if (can_begin_window()) {
			begin_window(t);
			return;
		}
		t->regs.rip = start_bp.addr;
		if (step_over_int3(t) == 0)
			resume(t, t->inject);
		return;
	}
	dispatch_other(ei);
}

static void dispatch(struct event_info *ei)
{
	if (ei->ev == TE_EXITED && is_helper(ei->tid))
		return;		/* a child's cachetrace ended: reaped */
	switch (ei->ev) {
	case TE_NONE:
		break;
	case TE_INTERRUPTED:
		finish_interrupted();
		break;
	case TE_TRAP: {
		struct tracee *t = tracee_find(ei->tid);
		if (t && tracee_stepping(t)) {
			t->flags |= TF_STOPPED;
			dispatch_stepping(t, ei);
		} else {
			on_trap(ei);
		}
		break;
	}
	case TE_EXITED: {
		struct tracee *t = tracee_find(ei->tid);
		if (t && tracee_stepping(t)) {
			if (t->flags & TF_LEAD)
				end_window(t, "the target was killed inside "
					   "the window");
			engine_end_thread(&eng, t);
		}
		dispatch_other(ei);
		break;
	}
	default: {
		struct tracee *t = tracee_find(ei->tid);
		if (t && tracee_stepping(t)) {
			t->flags |= TF_STOPPED;
			dispatch_stepping(t, ei);
		} else {
			dispatch_other(ei);
		}
		break;
	}
	}
}

/* Resolve the start and stop locations and arm the start; when a symbol
 * is not mapped yet (RETRY: a library before the loader ran), stop at the
 * program's entry point and resolve there. */
static void arm_or_wait_for_entry(bool retry)
{
	bool found = true;
	if (opt_start)
		found = resolve_loc("--start", opt_start, &start_addr, retry);
	if (opt_stop && found)
		found = resolve_loc("--stop", opt_stop, &stop_addr, retry);
	if (found) {
		arm_start();
		return;
	}
	if (opt_pid) {
		/* A forked child (--trace-children) may exec a program that
		 * has the start symbol: on_exec resolves it again then. */
		if (!opt_quiet)
			error_msg("note: --start=%s is not in %s; waiting for an "
				  "exec", opt_start, cmd_line);
		return;
	}
	uint64_t at = read_auxv_entry(target_pid, AT_ENTRY);
	int rc = at ? breakpoint_insert(target_pid, &entry_bp, at) : -ENOENT;
	if (rc < 0) {
		error_msg("cannot stop the program at its entry point to "
			  "resolve %s", opt_start);
		cleanup_target_and_die();
	}
}

/* --toggle-signal: end the window, or begin one in the target's main
 * thread (the first one left) wherever it is. */
static void toggle_window(void)
{
	if (n_active) {
		for (struct tracee *t = tracee_first(); t; t = t->next) {
			if (!(t->flags & TF_LEAD))
				continue;
			end_window(t, NULL);
			if (t->flags & TF_STOPPED)
				after_window(t);
		}
		return;
	}
	if (!can_begin_window())
		return;
	struct tracee *t = tracee_find(target_pid);
	if (!t)
		t = tracee_first();
	if (!t)
		return;
	if (t->flags & TF_STOPPED) {
		begin_window(t);
		return;
	}
	t->flags |= TF_WANT_WINDOW;
	ptrace(PTRACE_INTERRUPT, t->tid, NULL, NULL);
}

/* Until the windows are done and the target released, or it is gone. */
static void run(void)
{
	struct tracee *t = tracee_find(target_pid);
	if (opt_start_watch) {
		uint64_t lo, hi;
		bool rw;
		parse_watch("--start-watch", opt_start_watch, &lo, &hi, &rw);
		hw_slots[SLOT_WATCH] = (struct hw_slot){
			.addr = lo, .rw = rw ? 3 : 1,
			.len = (unsigned)(hi - lo), .used = true };
	}
	if (opt_stop_watch)
		parse_watch("--stop-watch", opt_stop_watch, &eng.swatch_lo,
			    &eng.swatch_hi, &eng.swatch_rw);
	if (!has_start_event()) {
		begin_window(t);
	} else {
		arm_or_wait_for_entry(!opt_pid || opt_forked_child);
		for (struct tracee *o = tracee_first(); o; o = o->next)
			if (o->flags & TF_STOPPED)
				resume(o, o->inject);
	}
	for (;;) {
		if (interrupted_by)
			finish_interrupted();
		if (toggle_requests) {
			toggle_requests = 0;
			toggle_window();
		}
		if (all_windows_done())
			break;
		if (!tracee_first())
			break;		/* every thread is gone */
		struct event_info ei;
		tracee_next_event(&ei);
		if (ei.ev == TE_NONE && errno == ECHILD)
			break;
		dispatch(&ei);
	}
	if (!eng.windows && !opt_quiet)
		error_msg("warning: the target exited before the start event "
			  "(--start=%s); no instructions were traced",
			  opt_start);
	if (!eng.windows && !partial_reason)
		partial_reason = "the target exited before the start event";
	else if (opt_start && eng.windows && !all_windows_done() &&
		 !partial_reason && opt_intervals)
		partial_reason = "the target exited before all the windows "
				 "were traced";
	if (tracee_first()) {
		write_profile();
		release_target();
	}
	write_profile();
}

static int wait_target_exit(void)
{
	if (target_status < 0) {
		int status;
		for (;;) {
			pid_t r = waitpid(target_pid, &status, 0);
			if (r == target_pid)
				break;
			if (r < 0 && errno == EINTR)
				continue;
			if (r < 0)
				return 0;
		}
		target_status = status;
	}
	if (WIFSIGNALED(target_status)) {
		if (!opt_quiet)
			error_msg("the target was killed by %s",
				  strsignal(WTERMSIG(target_status)));
		return 128 + WTERMSIG(target_status);
	}
	return WEXITSTATUS(target_status);
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

static void setup_models(void)
{
	char err[256], note[256] = "";
	struct cache_model *cm;
	struct branch_model *bm;
	if (model_create(opt_model, &opt_cfg, &cm, &bm, err, sizeof(err),
			 note, sizeof(note)) < 0)
		error_msg_and_die("%s", err);
	model_config_free_options(&opt_cfg);
	if (note[0] && !opt_quiet)
		error_msg("note: %s", note);
	eng.cm = cm;
	eng.bm = bm;
	eng.bm_offset = cm->n_events;
	n_events = cm->n_events + (bm ? bm->n_events : 0);
	event_names = xcalloc(n_events, sizeof(char *));
	for (unsigned i = 0; i < cm->n_events; i++)
		event_names[i] = cm->event_names[i];
	for (unsigned i = 0; bm && i < bm->n_events; i++)
		event_names[cm->n_events + i] = bm->event_names[i];
	eng.costs = costs_new(n_events);
	eng.n_events = n_events;
}

static ssize_t read_mem_cb(void *ctx, uint64_t addr, void *buf, size_t len)
{
	struct engine *e = ctx;
	pid_t tid = e->decoding ? e->decoding->tid : target_pid;
	return tracee_read_mem(tid, addr, buf, len);
}

static ssize_t read_xstate_cb(void *ctx, void *buf, size_t len)
{
	struct engine *e = ctx;
	pid_t tid = e->decoding ? e->decoding->tid : target_pid;
	struct iovec iov = { buf, len };
	if (ptrace(PTRACE_GETREGSET, tid, (void *)NT_X86_XSTATE, &iov) < 0)
		return -errno;
	return iov.iov_len;
}

int main(int argc, char **argv)
{
	if (getenv("CACHETRACE_DEBUG"))
		debug_flag = 1;
	int first = parse_options(argc, argv);
	char **prog_argv = argv + first;
	saved_argv = argv;
	saved_first = first;
	setup_models();

	static const struct decode_target target = {
		.ctx = &eng,
		.read_mem = read_mem_cb,
		.read_xstate = read_xstate_cb,
	};
	const char *derr;
	eng.dec = decode_new(&target, &derr);
	if (!eng.dec)
		error_msg_and_die("cannot start the decoder: %s", derr);
	if (opt_trace_mem) {
		eng.trace_mem = fopen(opt_trace_mem, "w");
		if (!eng.trace_mem)
			perror_msg_and_die("cannot write %s", opt_trace_mem);
	}
	const char *path;
	char *prog_path = NULL;
	if (opt_pid) {
		attach(opt_pid);
		target_pid = opt_pid;
		cmd_line = read_cmdline(opt_pid);
		path = cmd_line;
		install_signal_handlers();
	} else {
		prog_path = find_program(prog_argv[0]);
		path = prog_path;
		cmd_line = join_args(prog_argv);
		install_signal_handlers();
		target_pid = launch(path, prog_argv, !strcmp(opt_out, "-"));
	}
	open_output();
	char err[256];
	syms = sym_open(target_pid, err, sizeof(err));
	if (!syms) {
		error_msg("reading the symbols of %s: %s", path, err);
		cleanup_target_and_die();
	}
	eng.syms = syms;
	eng.progress = !opt_quiet && isatty(2);
	if (opt_call_stacks) {
		eng.cs = callstack_new(n_events, syms);
		if (!eng.cs) {
			error_msg("call stacks are not available in this build");
			cleanup_target_and_die();
		}
		eng.scratch = xcalloc(n_events, sizeof(*eng.scratch));
	}

	if (opt_forked_child)
		kill(target_pid, SIGCONT);	/* stopped by our parent */
	run();
	if (eng.trace_mem)
		fclose(eng.trace_mem);
	wait_helpers();
	/* Launched: the target's status is ours.  Attached: it runs on. */
	int status = opt_pid ? 0 : wait_target_exit();
	print_summary();
	free(prog_path);
	return status;
}
