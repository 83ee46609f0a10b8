/* Cache and branch models behind ops tables (libinput/kernel style).
 *
 * A model is created from a configuration by name through the registry in
 * src/cachemodel/registry.c, declares its own event names (they become the
 * profile's `events:` line) and adds its counts into a per-pc cost row that
 * the caller owns.  Every model implementation embeds `struct cache_model`
 * (or `struct branch_model`) as its first member.
 *
 * Cost rows: the caller allocates rows of cache_model_n_events() +
 * branch_model_n_events() uint64_t counters; the cache model's events come
 * first, at offset 0; the branch model is handed the row at its own offset.
 * Models never allocate per access and never print or exit: errors come
 * back as messages in a caller-supplied buffer. */
#ifndef CT_MODEL_H
#define CT_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "access.h"

/* One cache level's geometry, as in Cachegrind's --I1/--D1/--LL. */
struct cache_geom {
	uint64_t size;		/* bytes */
	uint32_t assoc;		/* ways */
	uint32_t line;		/* bytes */
};

/* What a sample found of the target's memory when it began (--sample):
 * UNTOUCHED(MEM, ADDR) is true when ADDR lies in a page the target had
 * never touched (an anonymous page the kernel had not given it yet), so
 * that its line's first reference is a miss in any run, at every level;
 * false when it was touched or nobody knows. */
struct sample_mem {
	bool (*untouched)(const struct sample_mem *mem, uint64_t addr);
};

/* The configuration of the Cachegrind-compatible models.  A geometry whose
 * size is 0 means "not given": the registry fills it from the host. */
struct model_config {
	struct cache_geom i1, d1, ll;
	bool cache_sim;		/* --cache-sim (default yes) */
	bool branch_sim;	/* --branch-sim (default yes) */
	const char *branch_model;	/* --branch-model=NAME (NULL: default) */
	unsigned cores;		/* --cores=N: 0 or 1 is a single core */
	/* --sample: the Cachegrind model counts, too, the data references
	 * that reach the last level at a line's first reference there in
	 * the sample (DLu) and those of them that miss (DLmu): what the LL
	 * state kept from earlier samples decides (begin_sample), and those
	 * of them in memory the target had never touched when the sample
	 * began (DLuf: misses in the whole run too) */
	bool first_refs;
	bool core_per_thread;	/* --threads=all without --cores: a model
				 * whose core count is free (hier, host)
				 * gets enough for a core per thread */
	/* Model-specific options (--cache=SPEC, --prefetch=..., ...), as
	 * given on the command line, parsed by model_parse_option; models read
	 * them in their constructors. */
	char *opt_names[32];
	char *opt_values[32];
	unsigned n_opts;
};

/* The names model_parse_option takes ("cache", ...), NULL-terminated. */
extern const char *const model_option_names[];

/* The cachetrace front end hands every long option it does not know
 * ("--NAME=VALUE") to this.  Returns 1 when a model option took it (kept
 * in CFG), 0 when no model knows NAME, -1 with a message in ERR for a bad
 * value. */
int model_parse_option(struct model_config *cfg, const char *name,
		       const char *value, char *err, size_t errlen);
/* Free the option strings model_parse_option kept in CFG (after
 * model_create, which copies what it needs, or at exit). */
void model_config_free_options(struct model_config *cfg);
/* Print the models and their options for --help. */
void model_usage(FILE *out);

/* How a model names code and data in its report (stderr summary
 * sections): the front end fills these from libdw. */
struct model_resolver {
	void *ctx;
	/* "file:line (function)" of a pc into BUF; returns BUF. */
	const char *(*pc_name)(void *ctx, uint64_t pc, char *buf, size_t len);
	/* "symbol+off" of a data address, or NULL when unknown. */
	const char *(*data_name)(void *ctx, uint64_t addr, char *buf,
				 size_t len);
};

struct cache_model;
struct branch_model;

/* One instruction of a cache model's insns op: its fetch of LEN bytes at
 * PC, then its N_ACC accesses ACC, into ROW. */
struct model_insn {
	uint64_t pc;
	uint64_t *row;
	const struct mem_access *acc;
	uint32_t len;
	uint32_t n_acc;
};

/* N instructions one after the other from PC (a replay's view, as
 * lean_compile reads it): V their rows, lengths, n_acc and access
 * records, the records in one array as the addresses of a replay's
 * record lie: instruction I's at index V[I].ACC - V[0].ACC, its n_acc
 * the first of those up to V[I + 1].ACC (the others dead). */
struct model_lean {
	uint64_t pc;
	const struct model_insn *v;
	unsigned n;
};

/* The bytes a lean_compile writes at most, for N instructions and N_ADDR
 * addresses. */
#define MODEL_LEAN_CODE_MAX(n, n_addr) (8 + 4 * ((size_t)(n) + (n_addr)))

/* One conditional branch of a branch model's conds op. */
struct model_cond {
	uint64_t pc;
	uint64_t *row;
	bool taken;
};

struct cache_model_ops {
	const char *name;
	/* A few ns an access (Cachegrind's): cheaper than sending the
	 * access to a thread of its own (src/engine/modelq.h). */
	bool cheap;
	/* Instruction fetch of SIZE bytes at ADDR. */
	void (*fetch)(struct cache_model *m, uint64_t addr, uint32_t size,
		      uint64_t *row);
	/* One data access (enum access_kind in a->kind). */
	void (*access)(struct cache_model *m, const struct mem_access *a,
		       uint64_t *row);
	/* Optional: one instruction's fetch of SIZE bytes at ADDR, its N
	 * data accesses in order, and the fetch again when FETCH2 (a
	 * finished rep string), as fetch and access would do them: one call
	 * per instruction rather than one per access. */
	void (*insn)(struct cache_model *m, uint64_t addr, uint32_t size,
		     const struct mem_access *acc, unsigned n, bool fetch2,
		     uint64_t *row);
	/* Optional: N instructions in order, each as insn does it (no
	 * FETCH2): one call for a run of them (Cachegrind's model). */
	void (*insns)(struct cache_model *m, const struct model_insn *v,
		      unsigned n);
	/* Optional, both or neither: insns without the references' own
	 * counts (Cachegrind's Ir, Dr, Dw), only what they cost beyond
	 * (the misses); and those counts, TIMES runs of V added at once.  A
	 * block replayed a million times touches its rows once (a row is a
	 * cache line of the supervisor's that each instruction would miss
	 * in: bench/README.md). */
	void (*insns_uncounted)(struct cache_model *m,
				const struct model_insn *v, unsigned n);
	void (*count_refs)(struct cache_model *m, const struct model_insn *v,
			   unsigned n, uint64_t times);
	/* Optional, both or neither, with those: B's code written to CODE
	 * (MODEL_LEAN_CODE_MAX bytes; false: none, B replays otherwise), from
	 * B's V as it is now (its prefix's n_acc); and insns_uncounted of the
	 * instructions from PC that CODE was made for, V their rows (read
	 * only for a miss), their addresses ADDR (a replay's record), the
	 * last one's n_acc LAST_N_ACC (its V's is not read). */
	bool (*lean_compile)(struct cache_model *m, const struct model_lean *b,
			     uint8_t *code);
	void (*lean_uncounted)(struct cache_model *m, uint64_t pc,
			       const uint8_t *code,
			       const struct model_insn *v,
			       const uint64_t *addr, unsigned last_n_acc);
	/* Write `desc:` lines for the profile header (without a trailing
	 * blank line); optional. */
	void (*describe)(const struct cache_model *m, FILE *out);
	/* The core whose caches the following fetches and accesses go to
	 * (multi-core models; the tracer calls it when the stepped thread
	 * changes); optional. */
	void (*set_core)(struct cache_model *m, unsigned core);
	/* Extra sections of the end-of-run summary on stderr (false
	 * sharing, prefetch usefulness...), each line prefixed with PREFIX;
	 * optional. */
	void (*report)(const struct cache_model *m, FILE *out,
		       const char *prefix, const struct model_resolver *res);
	/* Forget every line, as a new model (no write-back counted); what
	 * report() counts is kept (--cache-state=cold). */
	void (*flush)(struct cache_model *m);
	/* A sample (its warm-up first) begins: no line has been referenced
	 * in it yet (model_config.first_refs); MEM (NULL: unknown) says
	 * which memory the target had not touched yet, until the next
	 * sample begins; optional. */
	void (*begin_sample)(struct cache_model *m,
			     const struct sample_mem *mem);
	void (*destroy)(struct cache_model *m);
};

struct cache_model {
	const struct cache_model_ops *ops;
	unsigned n_events;
	const char *const *event_names;	/* n_events names */
	unsigned n_cores;		/* the cores it simulates; 0 or 1: one.
					 * Without --cores the tracer spreads
					 * threads over these */
	char geom_source[128];		/* where its geometry came from, for
					 * cache_geom_source(); "" unknown */
};

struct branch_model_ops {
	const char *name;
	bool cheap;			/* as cache_model_ops.cheap */
	/* A conditional branch at PC, taken or not. */
	void (*cond)(struct branch_model *m, uint64_t pc, bool taken,
		     uint64_t *row);
	/* An indirect jump or call at PC to TARGET. */
	void (*indirect)(struct branch_model *m, uint64_t pc, uint64_t target,
			 uint64_t *row);
	/* A call at PC (direct or indirect) whose return address is RET, and
	 * a return at PC to TARGET: for return-address stacks; optional. */
	void (*call)(struct branch_model *m, uint64_t pc, uint64_t ret,
		     uint64_t *row);
	void (*ret)(struct branch_model *m, uint64_t pc, uint64_t target,
		    uint64_t *row);
	/* Optional: N conditional branches in order, each as cond does it,
	 * for a model whose indirect branches do not touch what its
	 * conditional ones use (their order between them is free). */
	void (*conds)(struct branch_model *m, const struct model_cond *v,
		      unsigned n);
	/* Optional, both or neither, as the cache model's insns_uncounted
	 * and count_refs: conds without the branches' own count (Bc), only
	 * their mispredictions; and that count, TIMES branches at ROW. */
	void (*conds_uncounted)(struct branch_model *m,
				const struct model_cond *v, unsigned n);
	void (*count_conds)(struct branch_model *m, uint64_t *row,
			    uint64_t times);
	/* Forget every prediction, as a new model (--cache-state=cold). */
	void (*flush)(struct branch_model *m);
	void (*destroy)(struct branch_model *m);
};

struct branch_model {
	const struct branch_model_ops *ops;
	unsigned n_events;
	const char *const *event_names;
};

/* Registry: build the models CFG asks for.  MODEL_NAME NULL means the
 * default ("cachegrind").  Geometry left at size 0 in CFG is filled from
 * the host by cache_geom_host (LL = the last level; a level whose set
 * count is not a power of two is adjusted as Cachegrind does, with a note
 * in *note; a source other than /sys is said in *note too).  Returns 0,
 * or with a one-line message in ERR: MODEL_ERR_USAGE when what was given
 * is wrong (a name, an option, a geometry: the tracer's exit status 2),
 * MODEL_ERR_HOST when what the host gave cannot be simulated.
 * With cache_sim off the cache model counts Ir only (events "Ir"); with
 * branch_sim off *bm is NULL. */
#define MODEL_ERR_USAGE (-1)
#define MODEL_ERR_HOST (-2)
int model_create(const char *model_name, struct model_config *cfg,
		 struct cache_model **cm, struct branch_model **bm,
		 char *err, size_t errlen, char *note, size_t notelen);
/* The checks of model_create that need no host: the model names, the
 * model options each model takes, a geometry a model would ignore.
 * Returns 0, or -1 with a one-line message naming the option first. */
int model_check(const char *model_name, const struct model_config *cfg,
		char *err, size_t errlen);

/* Parse "size,assoc,line" (as Cachegrind's --I1=...) into G.  Returns 0,
 * or -1 with a message in ERR. */
int cache_geom_parse(const char *s, struct cache_geom *g, char *err,
		     size_t errlen);
/* Validate one geometry: sets a power of two, line >= 16 and a power of
 * two, assoc >= 1 and <= the number of lines.  "NAME: " ("I1 cache",
 * "--I1") prefixes the message.  Returns NULL or a static/ERR-backed
 * message. */
const char *cache_geom_check(const char *name, const struct cache_geom *g,
			     char *err, size_t errlen);

/* Cachegrind's cg_arch.c maybe_tweak_LLc: make LL's set count a power of
 * two by rounding it down and raising the associativity to keep about the
 * size.  Returns true when G changed. */
bool cache_geom_tweak_ll(struct cache_geom *g);

/* Where a geometry came from, as the profile's desc: lines and the notes
 * say it: given on the command line, or one of cache_geom_host's. */
#define CACHE_GEOM_GIVEN "given"
#define CACHE_GEOM_SYSFS "/sys/devices/system/cpu/cpu0/cache"
#define CACHE_GEOM_DEFAULTS "Cachegrind's defaults"

/* The host's I1, D1 and LL from the first source that has them:
 * /sys/devices/system/cpu/cpu0/cache, else CPUID (Intel leaf 4; AMD leaf
 * 0x8000001D, else 0x80000005/6), else Cachegrind's defaults (I1 and D1
 * 32768,8,64, LL 8388608,16,64).  The LL is as the host gives it: its
 * set count may need Cachegrind's LL tweak.  CACHETRACE_HOST's
 * sysfs-cache=no and cpuid-cache=no skip a source (hostenv.h).  *SOURCE
 * (when SOURCE is not NULL) names the one used, a static string:
 * CACHE_GEOM_SYSFS, "CPUID leaf 4", "CPUID leaf 0x8000001D", "CPUID
 * 0x80000005/6" or CACHE_GEOM_DEFAULTS.  Returns 0 when the geometry is
 * the host's, 1 when it is the defaults. */
int cache_geom_host(struct cache_geom *i1, struct cache_geom *d1,
		    struct cache_geom *ll, const char **source);
/* Where M's geometry came from, for the profile's desc: lines, e.g.
 * "CPUID leaf 4", "given", "--LL given, the rest from
 * /sys/devices/system/cpu/cpu0/cache"; "" for a model made without
 * model_create. */
const char *cache_geom_source(const struct cache_model *m);

/* Read the host's caches: L1i, L1d, last level.  Returns 0 or -1. */
int cache_geom_from_sysfs(struct cache_geom *i1, struct cache_geom *d1,
			  struct cache_geom *ll);
/* The same from DIR laid out as /sys/devices/system/cpu/cpu0/cache
 * (indexN/ holding level, type, size, ways_of_associativity,
 * coherency_line_size);
 * for tests.  LL is the highest level above 1 of type Unified or Data. */
int cache_geom_from_dir(const char *dir, struct cache_geom *i1,
			struct cache_geom *d1, struct cache_geom *ll);

/* Dispatch wrappers: handle optional ops. */
static inline void cache_fetch(struct cache_model *m, uint64_t addr,
			       uint32_t size, uint64_t *row)
{
	m->ops->fetch(m, addr, size, row);
}

static inline void cache_access(struct cache_model *m,
				const struct mem_access *a, uint64_t *row)
{
	m->ops->access(m, a, row);
}

void cache_describe(const struct cache_model *m, FILE *out);
void cache_set_core(struct cache_model *m, unsigned core);
/* Empty caches, a fresh predictor (their flush ops; a no-op without). */
void cache_flush(struct cache_model *m);
void branch_flush(struct branch_model *m);
/* A sample begins (its begin_sample op; a no-op without). */
void cache_begin_sample(struct cache_model *m, const struct sample_mem *mem);
void cache_report(const struct cache_model *m, FILE *out, const char *prefix,
		  const struct model_resolver *res);
void cache_destroy(struct cache_model *m);

static inline void branch_cond(struct branch_model *m, uint64_t pc,
			       bool taken, uint64_t *row)
{
	m->ops->cond(m, pc, taken, row);
}

static inline void branch_indirect(struct branch_model *m, uint64_t pc,
				   uint64_t target, uint64_t *row)
{
	m->ops->indirect(m, pc, target, row);
}

void branch_destroy(struct branch_model *m);

#endif
