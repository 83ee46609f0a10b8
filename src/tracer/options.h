/* Every command-line option of cachetrace, parsed once into one struct. */
#ifndef CT_OPTIONS_H
#define CT_OPTIONS_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "model.h"

struct core_map_entry {
	pid_t tid;
	unsigned core;
};

struct options {
	/* The region. */
	const char *start, *stop;	/* --start, --stop LOCs */
	const char *start_watch, *stop_watch;
	int toggle_signal;		/* --toggle-signal; 0: none */
	uint64_t max_insns;		/* --max-instructions; 0: no cap */
	unsigned intervals;		/* windows to trace; 0: no limit */
	bool intervals_given;
	/* --sample=PERIOD:LENGTH[:WARMUP] (sample.c); sample_len 0: none */
	uint64_t sample_period_ns;	/* of the target's CPU time */
	uint64_t sample_len, sample_warmup;	/* instructions */
	const char *sample_arg;
	unsigned sample_budget;		/* --sample-budget, percent; 0: none */
	bool sample_budget_given;
	uint64_t duration_ns;		/* --duration; 0: none */
	bool threads_all;		/* --threads=all */
	bool sw_breakpoints;		/* --breakpoints=sw */
	bool breakpoints_given;		/* --breakpoints= was on the line */
	bool cold_windows;		/* --cache-state=cold: empty caches
					 * and predictor at every window */
	bool cache_state_given;
	bool cpuid_valgrind;		/* --cpuid=valgrind */
	bool cpuid_given;
	bool auxv_valgrind;		/* --auxv=valgrind */
	bool auxv_given;
	bool vex_chase;			/* --vex-chase: count as VEX's
					 * superblock chasing does [yes] */
	const char *engine;		/* --engine: step, emulate, lockstep */
	const char *counters;		/* --counters: the native engine's */
	const char *counter_sample;	/* --counter-sample=EVENT:PERIOD */
	uint64_t mirror_budget;		/* --mirror-budget: bytes of the
					 * target the emulator holds; 0: no
					 * bound */

	/* Models. */
	const char *model;		/* --model; NULL: cachegrind */
	struct model_config cfg;	/* geometry, simulation switches, the
					 * model's own options */
	struct core_map_entry core_map[256];
	unsigned n_core_map;

	/* Output. */
	const char *out;		/* -o; "-" is stdout */
	const char *trace_mem;
	bool call_stacks;
	const char *callgrind_out, *folded_out, *folded_event;
	bool call_stacks_given;		/* --call-stacks= was on the line */
	bool callgrind_out_given;	/* --callgrind-out-file= was too */
	bool folded_event_given;
	char *callgrind_default;	/* callgrind.out.%p beside -o's file
					 * (allocated), or NULL */
	bool callgrind_file;		/* write the Callgrind file: asked for
					 * (--call-stacks=yes, an out file),
					 * not only turned on by --html or
					 * --folded-out-file */
	const char *html;		/* --html: the HTML report too */
	bool quiet;
	bool check;			/* --check: probe the host, no target */

	/* The target. */
	pid_t pid;			/* -p; 0: launch argv[first...] */
	bool aslr;			/* keep ASLR on (default off, like gdb) */
	bool trace_children;
	bool forked_child;		/* internal: -p of a forked child left
					 * stopped by our parent */
	char **argv;			/* the command line, to start a
					 * cachetrace per forked child */
	int first;			/* argv[first] is the program */
};

/* --sample's default --sample-budget, percent of the run's time. */
#define SAMPLE_BUDGET_DEFAULT 40

/* --engine's and CACHETRACE_ENGINE's names, as said in an error. */
#define ENGINE_NAMES "instrument, emulate, step, lockstep, " \
		     "lockstep:instrument or native"
bool engine_known(const char *name);
/* Parse ARGV into O.  Returns 0 to run, 1 when --help or --version was
 * printed (exit 0), -1 after a usage message (exit 2). */
int options_parse(struct options *o, int argc, char **argv);

#endif
