/* cachetrace --check: one line for each thing this host must give a
 * tracer, with what cachetrace does about it, then a verdict.
 *
 * Exit status 0 when tracing works here (with the fallbacks named), 1 when
 * it cannot (ptrace refused).  README's troubleshooting starts here. */
#include "counters.h"
#include "native.h"
#include "tracer.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "error.h"
#include "hostenv.h"
#include "journal.h"

/* An integer from a one-line file, or -1. */
static long read_long(const char *path)
{
	FILE *f = fopen(path, "re");
	long v = -1;
	if (f) {
		if (fscanf(f, "%ld", &v) != 1)
			v = -1;
		fclose(f);
	}
	return v;
}

/* A field of /proc/self/status ("CapEff:", "Seccomp:") as a number in
 * BASE, or -1. */
static long long status_field(const char *name, int base)
{
	FILE *f = fopen("/proc/self/status", "re");
	char line[256];
	long long v = -1;
	size_t n = strlen(name);
	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, name, n))
			v = strtoll(line + n, NULL, base);
	if (f)
		fclose(f);
	return v;
}

/* Who -p may attach to, from Yama's ptrace_scope and our capabilities. */
static void describe_attach(char *buf, size_t len)
{
	long scope = read_long("/proc/sys/kernel/yama/ptrace_scope");
	long long caps = status_field("CapEff:", 16);
	bool cap = caps >= 0 && (caps >> 19) & 1;	/* CAP_SYS_PTRACE */
	const char *who;
	if (scope == 3)
		who = "no process (Yama ptrace_scope 3: attaching is off until "
		      "reboot)";
	else if (cap)
		who = "any process (CAP_SYS_PTRACE)";
	else if (scope == 2)
		who = "no process (Yama ptrace_scope 2 needs CAP_SYS_PTRACE: "
		      "run as root)";
	else if (scope == 1)
		who = "only its own children (Yama ptrace_scope 1: run as root, "
		      "or sysctl kernel.yama.ptrace_scope=0)";
	else
		who = "any process of this user";
	snprintf(buf, len, "%s", who);
}

static void line(const char *what, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void line(const char *what, const char *fmt, ...)
{
	va_list ap;
	printf("%-22s ", what);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
}

static void check_steps(const struct hostcaps *hc)
{
	const struct { const char *name; enum landing l; } s[] = {
		{ "cpuid", hc->cpuid }, { "rdtsc", hc->rdtsc },
		{ "syscall", hc->syscall },
	};
	char buf[256] = "";
	size_t used = 0;
	bool all = true;
	for (size_t i = 0; i < sizeof(s) / sizeof(s[0]); i++)
		all &= s[i].l == LANDING_PRECISE;
	if (all) {
		line("single steps:", "precise over cpuid, rdtsc and syscall");
		return;
	}
	for (size_t i = 0; i < sizeof(s) / sizeof(s[0]) && used < sizeof(buf);
	     i++)
		used += (size_t)snprintf(buf + used, sizeof(buf) - used,
					 "%s%s %s%s", i ? ", " : "", s[i].name,
					 hostcaps_landing_name(s[i].l),
					 i == 0 && hc->cpuid_forced ?
					 " (forced)" : "");
	line("single steps:", "%s; cachetrace executes cpuid itself, and a "
	     "step that runs more than one instruction ends its window with "
	     "an error", buf);
}

/* What keeps an attached target safe if cachetrace dies (guard.c): the
 * guardian's journal is a memfd (a seccomp filter may refuse it). */
static void check_guard(void)
{
	struct journal j;
	int rc = host_forced("memfd", "no") ? -ENOSYS :
		 journal_open(&j, getpid(), true);
	if (rc < 0) {
		line("kill -9 safety:", "no guardian (%s): an attached target "
		     "survives a kill -9 of cachetrace (its front process) and "
		     "a crash, not a SIGKILL of the tracer process itself",
		     rc == -ENOSYS ? "forced: no memfd" : strerror(-rc));
		return;
	}
	journal_close(&j);
	line("kill -9 safety:", "an attached target survives a kill -9 of "
	     "cachetrace (its front process: the tracer releases it), a crash "
	     "of the tracer, and a SIGKILL of the tracer itself (a guardian "
	     "process; but a trap taken in its last microseconds)");
}

/* The default engine's code cache (instrument.c): memfds shared with the
 * target, mapped there by system calls injected into it. */
static void check_cache(void)
{
	int fd = -1;
	if (host_forced("inject", "no")) {
		line("code cache:", "(forced) no system call is injected into "
		     "a target: the emulate engine runs the windows");
		return;
	}
	fd = (int)syscall(SYS_memfd_create, "cachetrace-check", 0u);
	if (fd < 0) {
		line("code cache:", "no memfd here (%s): the emulate engine "
		     "runs the windows", strerror(errno));
		return;
	}
	close(fd);
	line("code cache:", "the instrument engine maps its ring and caches "
	     "into the target at its first window, by system calls it "
	     "injects; a target under a seccomp filter gets the emulate "
	     "engine, with a note");
}

/* The native engine's counters (gate.c, counters.c). */
static void check_counters(void)
{
	const char *why = NULL;
	FILE *f = fopen("/proc/sys/kernel/perf_event_paranoid", "r");
	int paranoid = 99;
	if (f) {
		if (fscanf(f, "%d", &paranoid) != 1)
			paranoid = 99;
		fclose(f);
	}
	struct counter_spec sw[COUNTERS_MAX];
	unsigned n;
	counters_default(sw, &n, false);
	int rc = counters_try(&sw[0], 0);
	if (rc < 0) {
		line("counters:", "perf_event_open refused (%s; "
		     "perf_event_paranoid %d): --engine=native cannot count",
		     strerror(-rc), paranoid);
		return;
	}
	if (counters_pmu(&why))
		line("counters:", "a hardware PMU (perf_event_paranoid %d): "
		     "--engine=native counts cycles, instructions, branches, "
		     "branch-misses, cache-references, cache-misses and the "
		     "software events, user space only unless :k", paranoid);
	else
		line("counters:", "%s (perf_event_paranoid %d): "
		     "--engine=native counts the software events (task-clock, "
		     "page-faults, context-switches...) and samples cpu-clock",
		     host_forced("pmu", "no") ? "(forced) no hardware PMU" :
		     why, paranoid);
}

static void check_geometry(void)
{
	struct cache_geom i1, d1, ll;
	const char *source, *why = "";
	bool defaults = cache_geom_host(&i1, &d1, &ll, &source) == 1;
	if (defaults)
		why = " (neither /sys nor CPUID describes the caches)";
	else if (strcmp(source, CACHE_GEOM_SYSFS))
		why = " (no " CACHE_GEOM_SYSFS ")";
	struct cache_geom sim = ll;
	char tweak[96] = "";
	if (cache_geom_tweak_ll(&sim))
		snprintf(tweak, sizeof(tweak), ", simulated as %" PRIu64 ",%u,%u",
			 sim.size, sim.assoc, sim.line);
	line("cache geometry:", "from %s%s: I1 %" PRIu64 ",%u,%u D1 %" PRIu64
	     ",%u,%u LL %" PRIu64 ",%u,%u%s; --I1/--D1/--LL override", source,
	     why, i1.size, i1.assoc, i1.line, d1.size, d1.assoc, d1.line,
	     ll.size, ll.assoc, ll.line, tweak);
}

static bool check_pinning(void)
{
	cpu_set_t saved, one;
	int cpu = sched_getcpu();
	if (sched_getaffinity(0, sizeof(saved), &saved) < 0 || cpu < 0) {
		line("CPU pinning:", "unavailable (%s): stepping runs unpinned, "
		     "about 3x slower", strerror(errno));
		return false;
	}
	CPU_ZERO(&one);
	CPU_SET(cpu, &one);
	bool ok = sched_setaffinity(0, sizeof(one), &one) == 0;
	sched_setaffinity(0, sizeof(saved), &saved);
	if (ok)
		line("CPU pinning:", "works (%d CPUs allowed): the tracer and "
		     "the stepped thread share one CPU while stepping",
		     CPU_COUNT(&saved));
	else
		line("CPU pinning:", "refused (%s): stepping runs unpinned, "
		     "about 3x slower", strerror(errno));
	return ok;
}

/* Where the models run while the emulator runs a window (modelq.h). */
static void check_models(void)
{
	cpu_set_t set;
	if (host_forced("model-thread", "no"))
		line("models:", "(forced) in the engine's thread");
	else if (sched_getaffinity(0, sizeof(set), &set) < 0 ||
		 CPU_COUNT(&set) < 2)
		line("models:", "in the engine's thread (one CPU allowed)");
	else
		line("models:", "the costlier ones (hier, jaguar, TAGE, "
		     "--trace-mem) on a thread of their own on another CPU "
		     "while the emulator runs a thread alone; Cachegrind's in "
		     "the engine's thread (cheaper than the queue)");
}

/* When the instrument engine reads its ring (instrument.c's
 * reads_running). */
static void check_ring(void)
{
	cpu_set_t set;
	if (host_forced("ring-read", "stopped"))
		line("ring read:", "(forced) when its thread stops");
	else if (sched_getaffinity(0, sizeof(set), &set) < 0 ||
		 CPU_COUNT(&set) < 2)
		line("ring read:", "when its thread stops (one CPU allowed)");
	else
		line("ring read:", "while its thread runs, on another CPU "
		     "(one thread in a window; several: when each stops)");
}

int check_host(struct tracer *tr)
{
	struct hostcaps *hc = &tr->host;
	char buf[256];
	hostcaps_probe(hc);
	if (hc->ptrace_err) {
		long long seccomp = status_field("Seccomp:", 10);
		line("ptrace:", "refused (%s)%s", strerror(hc->ptrace_err),
		     seccomp == 2 ? ": a seccomp filter (a container's?) is in "
		     "force" : "");
	} else {
		describe_attach(buf, sizeof(buf));
		line("ptrace:", "allowed: launching works; -p may attach to %s",
		     buf);
		line("process_vm_readv:", hc->vm_readv && hostcaps_vm_rw() ?
		     "works" : "refused (a seccomp filter?): memory is read a "
		     "word at a time, and the step engine runs the windows "
		     "(the emulator needs it)");
		line("hardware breakpoints:", hc->hwbp ?
		     "fire%s: --start uses the debug registers" :
		     "do not fire%s (the debug registers are accepted but "
		     "never trap): --start uses an int3 (--breakpoints=sw), "
		     "--start-watch is refused",
		     hc->hwbp_forced ? " (forced)" : "");
		check_steps(hc);
		check_guard();
		check_cache();
		check_counters();
	}
	check_geometry();
	if (emu_selftest(buf, sizeof(buf)) == 0)
		line("emulator:", "%s", buf);
	else
		line("emulator:", "fails its self-test (%s): use --engine=step",
		     buf);
	int nrc = host_forced("native", "no") ? 2 :
		  native_selftest(buf, sizeof(buf));
	if (nrc == 0)
		line("vector code:", "VEX, EVEX and BMI instructions run on "
		     "cachetrace's own CPU with the thread's registers (a "
		     "self-test passes)");
	else if (nrc == 2)
		line("vector code:", "(forced) each VEX, EVEX and BMI "
		     "instruction is a real step of the thread");
	else
		line("vector code:", "%s%s: each VEX, EVEX and BMI instruction "
		     "is a real step of the thread", nrc < 0 ? "wrong: " : "",
		     buf);
	check_pinning();
	check_models();
	check_ring();
	if (hc->ptrace_err) {
		printf("cachetrace cannot trace on this host: ptrace is "
		       "refused\n");
		return 1;
	}
	printf("cachetrace can trace on this host\n");
	return 0;
}
