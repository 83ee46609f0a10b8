/* Option parsing: every option into struct options, then the checks that
 * involve several of them.  Nothing here touches a process; a bad option
 * is one message and exit status 2 (from main). */
#include "options.h"

#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cgout.h"
#include "config.h"
#include "error.h"
#include "parse.h"

static void usage(void)
{
	printf(
"usage: cachetrace [options] [--] PROG [ARGS...]\n"
"       cachetrace [options] -p PID --start=LOC\n"
"       cachetrace [options] -p PID --toggle-signal=SIG\n"
"\n"
"Traces a region of PROG (emulated, or single-stepped: --engine) and\n"
"simulates its caches and branches like valgrind's Cachegrind; writes a\n"
"Cachegrind-format profile.\n"
"\n"
"Region:\n"
"  --start=LOC             begin when LOC first executes (default: trace the\n"
"                          whole run, from the first instruction after exec)\n"
"  --stop=LOC              end when LOC is about to execute, LOC not\n"
"                          counted (default with --start: when the start\n"
"                          function returns to its caller)\n"
"                          LOC: symbol, symbol+OFF, 0xADDR, file.c:LINE,\n"
"                          lib.so:symbol\n"
"  --max-instructions=N, --stop-after=N\n"
"                          end each window after N instructions\n"
"  --intervals=N           trace N start..stop windows into one profile\n"
"                          [1]; 0: until interrupted or the target ends\n"
"  --sample=PERIOD[:LENGTH[:WARMUP]]\n"
"                          run natively; every PERIOD of the target's CPU\n"
"                          time (us, ms, s), simulate a window of LENGTH\n"
"                          instructions (k, M, G), its first WARMUP only\n"
"                          warming the caches and predictor [PERIOD alone:\n"
"                          200k, 50k of them warm-up; WARMUP: 0]; with\n"
"                          --start, samples begin at the start event\n"
"  --sample-budget=P%%     stretch the period so that samples take at\n"
"                          most P%% of the run's time [40%%; 100%%: no\n"
"                          bound]\n"
"  --sample-cold           each sample starts with empty caches and\n"
"                          predictor (as --cache-state=cold)\n"
"  --duration=T            end after T (us, ms, s) of wall time: the\n"
"                          windows end, the profile is written, the target\n"
"                          is let go (or, launched, goes on)\n"
"  --threads=hit|all       trace only the thread that hit the start event\n"
"                          [hit], or every thread of the target\n"
"  --engine=instrument|emulate|step|lockstep|lockstep:instrument|native\n"
"                          run the window in the emulator, falling back to\n"
"                          the CPU for what it must not emulate;\n"
"                          single-step every instruction on the CPU; both,\n"
"                          comparing each emulated instruction with the CPU;\n"
"                          run it on the CPU from a code cache in the\n"
"                          target, instrumented [instrument; emulate where\n"
"                          it cannot: see the man page]; or that, stepped,\n"
"                          each instruction's events compared with the step\n"
"                          engine's; or natively at full speed, the host's\n"
"                          counters gated by the start and stop events\n"
"  --counters=LIST         --engine=native: perf's event names (cycles,\n"
"                          instructions, cache-misses, page-faults,\n"
"                          task-clock, ...; :k the kernel too) [the PMU's\n"
"                          usual ones where there is one, and the software\n"
"                          ones]\n"
"  --counter-sample=EVENT:PERIOD\n"
"                          --engine=native: also sample EVENT every PERIOD\n"
"                          (cpu-clock:100000: every 0.1 ms of CPU) in the\n"
"                          window, each sample's line estimated\n"
"  --mirror-budget=SIZE    the target's memory the emulator holds at most\n"
"                          (k, M, G; 0: no bound) [512M]: past it, pages\n"
"                          read first are dropped and read again if used\n"
"  --core-map=TID:CORE,... the model core of each thread (default: round\n"
"                          robin in creation order over --cores, else the\n"
"                          model's own cores)\n"
"Models:\n"
"  --I1=SIZE,ASSOC,LINE    level-1 instruction cache (default: this host's)\n"
"  --D1=SIZE,ASSOC,LINE    level-1 data cache\n"
"  --LL=SIZE,ASSOC,LINE    last-level cache\n"
"  --cache-sim=yes|no      simulate caches [yes]\n"
"  --cache-state=warm|cold each window starts with the caches and branch\n"
"                          predictor the last one left [warm], or empty;\n"
"                          the first starts empty either way\n"
"  --branch-sim=yes|no     simulate branch prediction [yes]\n"
"  --branch-model=NAME     branch predictor [cachegrind]\n"
"  --vex-chase=yes|no      count as Cachegrind does with valgrind's default\n"
"                          superblock chasing (--vex-guest-chase) [yes]\n"
"  --cpuid=host|valgrind   what the target's cpuid and xgetbv answer in a\n"
"                          window: this host [host], or the CPU valgrind\n"
"                          3.19 presents here (glibc then picks the\n"
"                          routines it picks under Cachegrind)\n"
"  --auxv=host|valgrind    the auxiliary vector a launched program starts\n"
"                          with: the kernel's [host], or as valgrind 3.19\n"
"                          passes it on (no vDSO, no AT_HWCAP2, rseq or\n"
"                          AT_MINSIGSTKSZ entries)\n"
"  --cores=N               cores of multi-core models [the model's own:\n"
"                          jaguar 8; hier, host 1, with --threads=all 8]\n"
"Output:\n"
"  -o, --cachegrind-out-file=FILE\n"
"                          profile file [cachegrind.out.%%p]; %%p is the\n"
"                          target's pid, %%q{VAR} an environment variable,\n"
"                          %%n a sequence number;\n"
"                          '-' writes the profile to stdout (the target's\n"
"                          stdout then goes to stderr)\n"
"  --trace-mem=FILE        also write every access, in Lackey's format\n"
"  --call-stacks=yes|no    keep costs per call stack too [no]\n"
"  --callgrind-out-file=FILE\n"
"                          the call-stack profile [callgrind.out.%%p,\n"
"                          beside -o's file]\n"
"  --folded-out-file=FILE  folded stacks (flame graphs) of --folded-event\n"
"  --folded-event=EV       [Ir]\n"
"  --html=FILE             also write the report as one HTML page (as\n"
"                          cachetrace-annotate --html); keeps call\n"
"                          stacks for it unless --call-stacks=no (their\n"
"                          file only if asked for)\n"
"  -q, --quiet             no progress line, no summary, no notes\n"
"  --start-watch=EXPR      begin after an instruction writes EXPR: symbol or\n"
"                          0xADDR, then :LEN (1,2,4,8) and :w or :rw\n"
"  --stop-watch=EXPR       end after an instruction writes (:rw accesses) it\n"
"  --toggle-signal=SIG     each SIG sent to cachetrace starts or stops a\n"
"                          window, wherever the target is\n"
"  --breakpoints=hw|sw     debug registers [hw] or int3 for --start (hw\n"
"                          falls back to sw where debug registers do not\n"
"                          fire: see --check)\n"
"Attach:\n"
"  -p, --pid=PID           attach to a running process (every thread),\n"
"                          trace its windows, detach; it runs on\n"
"Launch:\n"
"  --aslr=on|off           address space randomisation for PROG [off]\n"
"  --trace-children=yes|no follow fork/vfork (a profile per process: -o\n"
"                          needs %%p) and exec (the new image's profile\n"
"                          is FILE.exec1, .exec2...) [no]\n"
"  --check                 what this host gives a tracer, and what\n"
"                          cachetrace does about it; exit 1 if it cannot\n"
"                          trace here\n"
"  -d, --debug             debugging messages\n"
"  -h, --help, --version\n");
}

static int parse_yes_no(const char *opt, const char *v, bool *out)
{
	if (parse_bool(v, PARSE_YES_NO_ON_OFF, out) < 0)
		return error_usage("%s: expected yes or no, not '%s'", opt, v);
	return 0;
}

/* A decimal count: digits only (no sign, space, octal or hex), at most
 * MAX. */
static int parse_count_max(const char *opt, const char *v, uint64_t max,
			   uint64_t *out)
{
	char *end;
	errno = 0;
	if (!*v || strspn(v, "0123456789") != strlen(v))
		return error_usage("%s: '%s' is not a count", opt, v);
	if (v[0] == '0' && v[1])
		return error_usage("%s: '%s': a count has no leading 0 (it "
				   "would read as octal in C)", opt, v);
	unsigned long long n = strtoull(v, &end, 10);
	if (errno || n > max)
		return error_usage("%s: '%s' is too large (at most %llu)", opt,
				   v, (unsigned long long)max);
	*out = n;
	return 0;
}

static int parse_count(const char *opt, const char *v, uint64_t *out)
{
	return parse_count_max(opt, v, UINT64_MAX, out);
}

/* A time: digits, then us, ms or s ("20ms"), at most a day: 0 and *NS,
 * or -1. */
static int parse_time(const char *v, uint64_t *ns)
{
	size_t d = strspn(v, "0123456789");
	static const struct { const char *unit; uint64_t ns; } units[] = {
		{ "us", 1000 }, { "ms", 1000000 }, { "s", 1000000000 },
	};
	if (!d || d > 9 || (v[0] == '0' && d > 1))
		return -1;
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++)
		if (!strcmp(v + d, units[i].unit)) {
			*ns = strtoull(v, NULL, 10) * units[i].ns;
			return *ns <= 86400ull * 1000000000 ? 0 : -1;
		}
	return -1;
}

/* An instruction count: digits, then nothing, k, M or G (thousands,
 * millions, billions: "1M" is 1000000), LEN bytes of V: 0, or -1. */
static int parse_insns(const char *v, size_t len, uint64_t *out)
{
	size_t d = 0;
	while (d < len && v[d] >= '0' && v[d] <= '9')
		d++;
	if (!d || d > 12 || (v[0] == '0' && d > 1) || len - d > 1)
		return -1;
	uint64_t n = strtoull(v, NULL, 10), mul = 1;
	if (len > d)
		switch (v[d]) {
		case 'k': mul = 1000; break;
		case 'M': mul = 1000000; break;
		case 'G': mul = 1000000000; break;
		default: return -1;
		}
	*out = n * mul;
	return 0;
}

/* --sample=PERIOD[:LENGTH[:WARMUP]], "5ms", "20ms:1M:200k". */
static int parse_sample(struct options *o, const char *v)
{
	char period[32];
	const char *c1 = strchr(v, ':');
	const char *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
	const char *end2 = c2 ? c2 : c1 ? c1 + strlen(c1) : NULL;
	o->sample_arg = v;
	if (!c1 && strlen(v) < sizeof(period)) {
		/* PERIOD alone: the defaults */
		snprintf(period, sizeof(period), "%s", v);
		o->sample_len = 200000;
		o->sample_warmup = 50000;
		if (parse_time(period, &o->sample_period_ns) < 0 ||
		    !o->sample_period_ns)
			return error_usage("--sample: '%s' is not "
					   "PERIOD[:LENGTH[:WARMUP]] (5ms, "
					   "20ms:1M:200k)", v);
		return 0;
	}
	if (!c1 || (size_t)(c1 - v) >= sizeof(period))
		return error_usage("--sample: '%s' is not PERIOD[:LENGTH[:WARMUP]] "
				   "(5ms, 20ms:1M:200k)", v);
	snprintf(period, sizeof(period), "%.*s", (int)(c1 - v), v);
	if (parse_time(period, &o->sample_period_ns) < 0 ||
	    !o->sample_period_ns)
		return error_usage("--sample: the period '%s' is not a time "
				   "(digits, then us, ms or s: 20ms)", period);
	if (parse_insns(c1 + 1, (size_t)(end2 - c1 - 1), &o->sample_len) < 0 ||
	    !o->sample_len)
		return error_usage("--sample: the length '%.*s' is not a count "
				   "of instructions (digits, then k, M or G: "
				   "1M)", (int)(end2 - c1 - 1), c1 + 1);
	o->sample_warmup = 0;
	if (c2 && parse_insns(c2 + 1, strlen(c2 + 1), &o->sample_warmup) < 0)
		return error_usage("--sample: the warm-up '%s' is not a count "
				   "of instructions (digits, then k, M or G: "
				   "200k)", c2 + 1);
	if (o->sample_warmup >= o->sample_len)
		return error_usage("--sample: the warm-up (%s) is part of the "
				   "LENGTH (%.*s): it must be shorter", c2 + 1,
				   (int)(end2 - c1 - 1), c1 + 1);
	return 0;
}

/* --I1, --D1, --LL: parsed and checked as Cachegrind checks them. */
static int parse_geom(const char *opt, const char *v, struct cache_geom *g)
{
	char err[200];
	if (cache_geom_parse(v, g, err, sizeof(err)) < 0)
		return error_usage("%s: %s", opt, err);
	const char *bad = cache_geom_check(opt, g, err, sizeof(err));
	if (bad)
		return error_usage("%s", bad);
	return 0;
}

/* An output file name: one that can be expanded (%p, %q{VAR}). */
static int parse_out_name(const char *opt, const char *v, const char **out)
{
	char err[200];
	if (cgout_check_name(v, err, sizeof(err)) < 0)
		return error_usage("%s: '%s': %s", opt, v, err);
	*out = v;
	return 0;
}

static int parse_signal(const char *opt, const char *v, int *out)
{
	const char *name = strncmp(v, "SIG", 3) ? v : v + 3;
	for (int sig = 1; sig < NSIG; sig++) {
		const char *abbrev = sigabbrev_np(sig);
		if (abbrev && !strcmp(abbrev, name)) {
			*out = sig;
			return 0;
		}
	}
	char *end;
	long n = strtol(v, &end, 10);
	if (*v && !*end && n > 0 && n < NSIG) {
		*out = (int)n;
		return 0;
	}
	return error_usage("%s: '%s' is not a signal", opt, v);
}

static int parse_core_map(struct options *o, const char *v)
{
	char *copy = xstrdup(v), *save = NULL;
	int rc = 0;
	for (char *tok = strtok_r(copy, ",", &save); tok && !rc;
	     tok = strtok_r(NULL, ",", &save)) {
		char *colon = strchr(tok, ':'), *end1, *end2;
		long tid = strtol(tok, &end1, 10);
		long core = colon ? strtol(colon + 1, &end2, 10) : 0;
		if (!colon || end1 != colon || *end2 || tid <= 0 || core < 0 ||
		    tok == colon || !colon[1] || tid > INT32_MAX ||
		    core > UINT32_MAX)
			rc = error_usage("--core-map: '%s' is not TID:CORE",
					 tok);
		else if (o->n_core_map == sizeof(o->core_map) /
					  sizeof(o->core_map[0]))
			rc = error_usage("--core-map: too many entries");
		else
			o->core_map[o->n_core_map++] = (struct core_map_entry){
				(pid_t)tid, (unsigned)core };
	}
	free(copy);
	return rc;
}

/* hw|sw, hit|all: the second word sets *ON. */
static int parse_choice(const char *opt, const char *v, const char *off,
			const char *on, bool *out)
{
	if (!strcmp(v, on))
		*out = true;
	else if (!strcmp(v, off))
		*out = false;
	else
		return error_usage("%s: %s or %s, not '%s'", opt, off, on, v);
	return 0;
}

enum {
	OPT_START = 256, OPT_STOP, OPT_I1, OPT_D1, OPT_LL, OPT_CACHE_SIM,
	OPT_BRANCH_SIM, OPT_TRACE_MEM, OPT_ASLR, OPT_MAX_INSNS, OPT_MODEL,
	OPT_BRANCH_MODEL, OPT_CORES, OPT_THREADS, OPT_INTERVALS, OPT_CORE_MAP,
	OPT_CALL_STACKS, OPT_CALLGRIND_OUT, OPT_FOLDED_OUT, OPT_FOLDED_EVENT,
	OPT_BREAKPOINTS, OPT_START_WATCH, OPT_STOP_WATCH, OPT_TOGGLE_SIGNAL,
	OPT_TRACE_CHILDREN, OPT_FORKED_CHILD, OPT_ENGINE, OPT_HTML, OPT_VEX_CHASE,
	OPT_CHECK, OPT_HELP, OPT_VERSION, OPT_CACHE_STATE, OPT_MIRROR_BUDGET,
	OPT_COUNTERS, OPT_COUNTER_SAMPLE, OPT_CPUID, OPT_AUXV, OPT_SAMPLE,
	OPT_SAMPLE_COLD, OPT_DURATION, OPT_SAMPLE_BUDGET,
};

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
	{ "engine", required_argument, NULL, OPT_ENGINE },
	{ "counters", required_argument, NULL, OPT_COUNTERS },
	{ "counter-sample", required_argument, NULL, OPT_COUNTER_SAMPLE },
	{ "pid", required_argument, NULL, 'p' },
	{ "breakpoints", required_argument, NULL, OPT_BREAKPOINTS },
	{ "start-watch", required_argument, NULL, OPT_START_WATCH },
	{ "stop-watch", required_argument, NULL, OPT_STOP_WATCH },
	{ "toggle-signal", required_argument, NULL, OPT_TOGGLE_SIGNAL },
	{ "trace-children", required_argument, NULL, OPT_TRACE_CHILDREN },
	{ "forked-child", no_argument, NULL, OPT_FORKED_CHILD },
	{ "vex-chase", required_argument, NULL, OPT_VEX_CHASE },
	{ "cpuid", required_argument, NULL, OPT_CPUID },
	{ "auxv", required_argument, NULL, OPT_AUXV },
	{ "intervals", required_argument, NULL, OPT_INTERVALS },
	{ "sample", required_argument, NULL, OPT_SAMPLE },
	{ "sample-cold", no_argument, NULL, OPT_SAMPLE_COLD },
	{ "sample-budget", required_argument, NULL, OPT_SAMPLE_BUDGET },
	{ "duration", required_argument, NULL, OPT_DURATION },
	{ "stop-after", required_argument, NULL, OPT_MAX_INSNS },
	{ "core-map", required_argument, NULL, OPT_CORE_MAP },
	{ "call-stacks", required_argument, NULL, OPT_CALL_STACKS },
	{ "callgrind-out-file", required_argument, NULL, OPT_CALLGRIND_OUT },
	{ "folded-out-file", required_argument, NULL, OPT_FOLDED_OUT },
	{ "folded-event", required_argument, NULL, OPT_FOLDED_EVENT },
	{ "html", required_argument, NULL, OPT_HTML },
	{ "cache-state", required_argument, NULL, OPT_CACHE_STATE },
	{ "mirror-budget", required_argument, NULL, OPT_MIRROR_BUDGET },
	{ "quiet", no_argument, NULL, 'q' },
	{ "debug", no_argument, NULL, 'd' },
	{ "check", no_argument, NULL, OPT_CHECK },
	{ "help", no_argument, NULL, OPT_HELP },
	{ "version", no_argument, NULL, OPT_VERSION },
	{ NULL, 0, NULL, 0 },
};

/* ARG is no option: say so, with the nearest names (a typo of one). */
static int unknown_option(const char *arg)
{
	const char *name = arg + strspn(arg, "-");
	size_t len = strcspn(name, "=");
	const char *best[2] = { NULL, NULL };
	size_t dist = len > 4 ? 2 : 1, n = 0;

	for (size_t pass = 0; pass < 2; pass++) {
		const char *const *model = model_option_names;
		for (const struct option *lo = longopts; lo->name || *model;) {
			const char *cand = lo->name ? lo->name : *model;
			if (lo->name)
				lo++;
			else
				model++;
			if (!strcmp(cand, "forked-child"))
				continue;	/* internal */
			size_t d = parse_edit_distance(name, len, cand,
						       strlen(cand));
			/* The first pass finds the smallest distance, the
			 * second the names at it. */
			if (!pass && d < dist)
				dist = d;
			else if (pass && d == dist && n < 2)
				best[n++] = cand;
		}
	}
	if (arg[0] != '-' || len == 0 || !n)
		return error_usage("unknown option '%s'", arg);
	if (n == 1)
		return error_usage("unknown option '%s'; did you mean '--%s'?",
				   arg, best[0]);
	return error_usage("unknown option '%s'; did you mean '--%s' or "
			   "'--%s'?", arg, best[0], best[1]);
}

/* An option getopt does not know: a model's own (--cache=..., ...),
 * valgrind style, --NAME=VALUE only. */
static int parse_model_option(struct options *o, const char *arg)
{
	const char *eq = strchr(arg, '=');
	if (!strncmp(arg, "--", 2) && eq) {
		char name[64], err[256];
		snprintf(name, sizeof(name), "%.*s", (int)(eq - arg - 2),
			 arg + 2);
		int r = model_parse_option(&o->cfg, name, eq + 1, err,
					   sizeof(err));
		if (r > 0)
			return 0;
		if (r < 0)
			return error_usage("--%s: %s", name, err);
	}
	return unknown_option(arg);
}

/* One option C with its value V: 0, 1 (--help or --version printed), or
 * -1 (reported). */
static int parse_one(struct options *o, int c, char *v, const char *arg)
{
	uint64_t n;
	switch (c) {
	case OPT_START: o->start = v; return 0;
	case OPT_STOP: o->stop = v; return 0;
	case OPT_I1: return parse_geom("--I1", v, &o->cfg.i1);
	case OPT_D1: return parse_geom("--D1", v, &o->cfg.d1);
	case OPT_LL: return parse_geom("--LL", v, &o->cfg.ll);
	case OPT_CACHE_SIM:
		return parse_yes_no("--cache-sim", v, &o->cfg.cache_sim);
	case OPT_CPUID:
		o->cpuid_given = true;
		return parse_choice("--cpuid", v, "host", "valgrind",
				    &o->cpuid_valgrind);
	case OPT_AUXV:
		o->auxv_given = true;
		return parse_choice("--auxv", v, "host", "valgrind",
				    &o->auxv_valgrind);
	case OPT_BRANCH_SIM:
		return parse_yes_no("--branch-sim", v, &o->cfg.branch_sim);
	case 'o': return parse_out_name("-o", v, &o->out);
	case OPT_TRACE_MEM:
		if (!*v)
			return error_usage("--trace-mem: no file name given");
		o->trace_mem = v;
		return 0;
	case OPT_ASLR: return parse_yes_no("--aslr", v, &o->aslr);
	case OPT_MAX_INSNS:
		return parse_count("--max-instructions", v, &o->max_insns);
	case OPT_MODEL: o->model = v; return 0;
	case OPT_BRANCH_MODEL: o->cfg.branch_model = v; return 0;
	case OPT_THREADS:
		return parse_choice("--threads", v, "hit", "all",
				    &o->threads_all);
	case OPT_ENGINE:
		if (!engine_known(v))
			return error_usage("--engine: %s, not '%s'",
					   ENGINE_NAMES, v);
		o->engine = v;
		return 0;
	case 'p':
		if (parse_count_max("-p", v, INT32_MAX, &n) < 0)
			return -1;
		if (n == 0 || n > INT32_MAX)
			return error_usage("-p: '%s' is not a pid", v);
		o->pid = (pid_t)n;
		return 0;
	case OPT_BREAKPOINTS:
		o->breakpoints_given = true;
		return parse_choice("--breakpoints", v, "hw", "sw",
				    &o->sw_breakpoints);
	case OPT_START_WATCH: o->start_watch = v; return 0;
	case OPT_TRACE_CHILDREN:
		return parse_yes_no("--trace-children", v, &o->trace_children);
	case OPT_FORKED_CHILD: o->forked_child = true; return 0;
	case OPT_VEX_CHASE:
		return parse_yes_no("--vex-chase", v, &o->vex_chase);
	case OPT_STOP_WATCH: o->stop_watch = v; return 0;
	case OPT_TOGGLE_SIGNAL:
		if (parse_signal("--toggle-signal", v, &o->toggle_signal) < 0)
			return -1;
		if (o->toggle_signal == SIGKILL || o->toggle_signal == SIGSTOP)
			return error_usage("--toggle-signal: %s cannot be "
					   "caught", v);
		return 0;
	case OPT_INTERVALS:
		if (parse_count_max("--intervals", v, UINT32_MAX, &n) < 0)
			return -1;
		o->intervals = (unsigned)n;
		o->intervals_given = true;
		return 0;
	case OPT_SAMPLE: return parse_sample(o, v);
	case OPT_SAMPLE_BUDGET: {
		size_t d = strspn(v, "0123456789");
		unsigned long b = strtoul(v, NULL, 10);
		if (!d || d > 3 || strcmp(v + d, "%") || b < 1 || b > 100)
			return error_usage("--sample-budget: '%s' is not a "
					   "percentage from 1%% to 100%% (10%%)",
					   v);
		o->sample_budget = (unsigned)b;
		o->sample_budget_given = true;
		return 0;
	}
	case OPT_SAMPLE_COLD:
		o->cold_windows = o->cache_state_given = true;
		return 0;
	case OPT_DURATION:
		if (parse_time(v, &o->duration_ns) < 0 || !o->duration_ns)
			return error_usage("--duration: '%s' is not a time "
					   "(digits, then us, ms or s: 10s)", v);
		return 0;
	case OPT_CORE_MAP: return parse_core_map(o, v);
	case OPT_COUNTERS: o->counters = v; return 0;
	case OPT_COUNTER_SAMPLE: o->counter_sample = v; return 0;
	case OPT_MIRROR_BUDGET:
		if (parse_size(v, strlen(v), &o->mirror_budget) < 0)
			return error_usage("--mirror-budget: '%s' is not a size "
					   "(bytes, or with k, M or G)", v);
		if (o->mirror_budget && o->mirror_budget < (1u << 20))
			return error_usage("--mirror-budget: at least 1M (or 0: "
					   "no bound), not '%s'", v);
		return 0;
	case OPT_CACHE_STATE:
		o->cache_state_given = true;
		return parse_choice("--cache-state", v, "warm", "cold",
				    &o->cold_windows);
	case OPT_CALL_STACKS:
		o->call_stacks_given = true;
		return parse_yes_no("--call-stacks", v, &o->call_stacks);
	case OPT_CALLGRIND_OUT:
		o->callgrind_out_given = true;
		return parse_out_name("--callgrind-out-file", v,
				      &o->callgrind_out);
	case OPT_FOLDED_OUT:
		return parse_out_name("--folded-out-file", v, &o->folded_out);
	case OPT_FOLDED_EVENT:
		if (!*v)
			return error_usage("--folded-event: no event given");
		o->folded_event = v;
		o->folded_event_given = true;
		return 0;
	case OPT_HTML:
		if (!*v || !strcmp(v, "-"))
			return error_usage("--html: needs a file name (stdout "
					   "is the profile's, with -o -)");
		return parse_out_name("--html", v, &o->html);
	case OPT_CORES:
		if (parse_count_max("--cores", v, UINT32_MAX, &n) < 0)
			return -1;
		if (n < 1 || n > 1024)
			return error_usage("--cores: 1 to 1024, not %s", v);
		o->cfg.cores = (unsigned)n;
		return 0;
	case 'q': o->quiet = true; return 0;
	case OPT_CHECK: o->check = true; return 0;
	case 'd': debug_flag = 1; return 0;
	case 'h':
	case OPT_HELP:
		usage();
		printf("Model options:\n");
		model_usage(stdout);
		return 1;
	case OPT_VERSION:
		printf("cachetrace %s\n", CT_VERSION);
		return 1;
	case ':':
		return error_usage("%s: needs a value", arg);
	default:
		return parse_model_option(o, arg);
	}
}

/* The options that involve others. */
static int check_options(const struct options *o, int argc, int first)
{
	if (o->check)
		return first < argc || o->pid ? error_usage("--check looks at "
			"this host only: no program, no -p") : 0;
	if (o->pid && first < argc)
		return error_usage("-p and a program to launch exclude each "
				   "other");
	if (!o->pid && first >= argc)
		return error_usage("no program to trace (usage: cachetrace "
				   "[options] -- PROG [ARGS...], or -p PID)");
	bool has_start = o->start || o->start_watch || o->toggle_signal ||
			 o->sample_len;
	if (o->sample_len && (o->toggle_signal || o->start_watch))
		return error_usage("--sample is its own start event: no "
				   "--%s with it", o->toggle_signal ?
				   "toggle-signal" : "start-watch");
	if (o->sample_budget_given && !o->sample_len)
		return error_usage("--sample-budget needs --sample");
	if (o->sample_len && o->max_insns)
		return error_usage("--sample's LENGTH is the window's: no "
				   "--max-instructions with it");
	if (o->sample_len && o->engine && !strcmp(o->engine, "native"))
		return error_usage("--sample simulates its samples: not with "
				   "--engine=native");
	if (o->sample_len && o->sample_warmup && o->call_stacks)
		return error_usage("--sample: a warm-up with call stacks is not "
				   "supported (give no WARMUP, or no call "
				   "stacks)");
	if ((o->stop || o->stop_watch) && !has_start)
		return error_usage("--stop needs --start");
	if (o->start && o->start_watch)
		return error_usage("--start and --start-watch exclude each "
				   "other");
	if (o->toggle_signal && (o->start || o->start_watch))
		return error_usage("--toggle-signal is its own start event: "
				   "no --start with it");
	if (o->intervals != 1 && !has_start)
		return error_usage("--intervals needs a start event");
	if (o->cache_state_given && !has_start)
		return error_usage("--cache-state needs a start event (the "
				   "whole run is one window)");
	if (o->trace_children && !strstr(o->out, "%p") && strcmp(o->out, "-"))
		return error_usage("--trace-children=yes needs %%p in the "
				   "output file name (-o), one per process");
	if (o->trace_children && o->html && !strstr(o->html, "%p"))
		return error_usage("--trace-children=yes needs %%p in --html");
	if (o->trace_children && o->callgrind_file &&
	    !strstr(o->callgrind_out, "%p"))
		return error_usage("--trace-children=yes needs %%p in "
				   "--callgrind-out-file");
	if (o->pid && o->auxv_valgrind && !o->forked_child)
		return error_usage("--auxv=valgrind needs a program to launch "
				   "(a running one read its vector long ago)");
	if (o->pid && !has_start && !o->forked_child)
		return error_usage("-p needs a start event (--start, "
				   "--start-watch, --toggle-signal or "
				   "--sample)");
	char err[256];
	if (model_check(o->model, &o->cfg, err, sizeof(err)) < 0)
		return error_usage("%s", err);
	return 0;
}

bool engine_known(const char *name)
{
	static const char *const names[] = { "emulate", "step", "lockstep",
		"instrument", "lockstep:instrument", "native" };
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (!strcmp(name, names[i]))
			return true;
	return false;
}

int options_parse(struct options *o, int argc, char **argv)
{
	*o = (struct options){
		.out = "cachegrind.out.%p",
		.cfg = { .cache_sim = true, .branch_sim = true },
		.intervals = 1,
		.vex_chase = true,
		.callgrind_out = "callgrind.out.%p",
		.folded_event = "Ir",
		.mirror_budget = (uint64_t)512 << 20,
		.argv = argv,
	};
	int c;
	opterr = 0;
	/* "+": options end at the program; ":": a missing value is ':'. */
	while ((c = getopt_long(argc, argv, "+:o:qdp:h", longopts, NULL)) != -1) {
		int rc = parse_one(o, c, optarg, argv[optind - 1]);
		if (rc)
			return rc;
	}
	o->first = optind;
	/* The report's call tree, callers and flame graph and the folded
	 * stacks need the stacks; their Callgrind file is then only an
	 * input, not written unless asked for (issues 17 and 26: a stray
	 * callgrind.out.PID). */
	if (o->call_stacks_given && !o->call_stacks &&
	    (o->folded_out || o->callgrind_out_given))
		return error_usage("--call-stacks=no: --%s needs the call "
				   "stacks", o->folded_out ? "folded-out-file"
				   : "callgrind-out-file");
	if (o->folded_event_given && !o->folded_out)
		return error_usage("--folded-event: needs --folded-out-file");
	/* Samples until the end by default. */
	if (o->sample_len && !o->intervals_given)
		o->intervals = 0;
	o->callgrind_file = (o->call_stacks_given && o->call_stacks) ||
			    o->callgrind_out_given;
	if ((o->html || o->folded_out || o->callgrind_out_given) &&
	    !o->call_stacks_given)
		o->call_stacks = true;
	/* Beside the profile by default, as the user asked for it there. */
	const char *slash = strrchr(o->out, '/');
	if (!o->callgrind_out_given && slash)
		o->callgrind_out = o->callgrind_default = xasprintf("%.*s/"
			"callgrind.out.%%p", (int)(slash - o->out), o->out);
	/* The default bound: samples at most 40% of the run's time, so the
	 * target runs at 0.6 of its speed or more, whatever the samples
	 * cost on its code (bench/README.md, issue 31); 100%: no bound. */
	if (o->sample_len && !o->sample_budget_given)
		o->sample_budget = SAMPLE_BUDGET_DEFAULT;
	if (o->sample_budget == 100)
		o->sample_budget = 0;
	return check_options(o, argc, optind);
}
