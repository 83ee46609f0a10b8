/* Private to the `hier` cache model: its state, and what hier.c (one
 * instance, the hierarchy, coherence), hier_ops.c (the ops) and
 * hier_build.c (construction, the spec syntax) share.  The model's rules
 * are at the top of hier.c. */
#ifndef CT_CACHEMODEL_HIER_PRIVATE_H
#define CT_CACHEMODEL_HIER_PRIVATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model.h"
#include "models.h"

#define HIER_MAX_LEVELS 16
#define HIER_MAX_CORES 64
#define HIER_MAX_EVENTS 128
#define STRIDE_ENTRIES 64
#define PAIRS_PER_LINE 4

enum side { SIDE_I, SIDE_D, SIDE_U };
enum incl { INCL_NINE, INCL_INCL, INCL_EXCL };
enum repl { REPL_LRU, REPL_PLRU, REPL_FIFO, REPL_RAND };
enum hwpf { PF_NONE, PF_NEXT, PF_STRIDE };

/* Which miss event an access counts: its kind, or none (fills done by
 * prefetches, write state of a read-modify-write). */
enum cnt { CNT_I, CNT_R, CNT_W, CNT_NONE };

enum { LF_DIRTY = 1, LF_HWPF = 2 };

struct stride_ent {
	uint64_t pc;
	uint64_t last;
	int64_t stride;
	unsigned conf;
};

struct hinst;

struct hlevel {
	struct hier_level_spec spec;
	unsigned idx;			/* in the spec */
	bool first_d;			/* the D path's first level */
	unsigned n_inst;
	struct hinst *inst;
	int ev_miss[4];			/* per enum cnt, -1 if none */
	int ev_wb, ev_hpf, ev_hpfu, ev_pfw;
	/* Totals for report(). */
	uint64_t wb, back_inv, hpf, hpf_useful, hpf_useless, pf_wasted;
	uint64_t misses[3];		/* per enum cnt but CNT_NONE */
};

struct hinst {
	struct hlevel *lv;
	unsigned core0, n_cores;	/* the cores it serves */
	uint64_t *tags;			/* block + 1; 0 = invalid */
	uint64_t *stamp;		/* LRU: last use; FIFO: fill */
	uint8_t *flags;			/* LF_* */
	uint64_t *plru;			/* tree bits per set */
	uint64_t clock;
	/* The line used last in this instance (block + 1, 0: none): it is
	 * the most recent of its set, so using it again changes no
	 * replacement state (the fast path). */
	uint64_t mru_block, mru_way;
	bool fast_ok;			/* no prefetcher: the fast path applies */
	uint64_t rng;
	uint64_t set_mask;
	uint32_t assoc;
	struct hinst **upper;		/* served instances above (incl) */
	unsigned n_upper;
	struct stride_ent *stride;
};

struct coh_pair {
	uint64_t miss_pc, miss_addr, write_pc, write_addr, count;
	bool is_true;
};

struct coh_core {
	uint64_t since;			/* chunks written by others */
	uint64_t since_pc, since_addr;	/* the last such write */
};

struct coh_rec {
	uint64_t block;
	uint64_t pending;		/* cores that lost the line */
	uint64_t inv, n_true, n_false;
	struct coh_pair pairs[PAIRS_PER_LINE];
	struct coh_core core[];		/* n_cores */
};

struct hier_model {
	struct cache_model base;
	unsigned n_levels, n_cores, core;
	struct hlevel levels[HIER_MAX_LEVELS];
	/* Per core and side (SIDE_I, SIDE_D): the instances, core outwards. */
	struct hinst **path[2];		/* [side][core * n_levels + k] */
	unsigned n_path[2];
	struct hinst **foreign;		/* [core * n_inst_total + j] */
	unsigned n_foreign;		/* per core */
	unsigned n_inst_total;
	uint32_t line_shift;
	uint64_t line;
	bool nt_bypass;
	/* The access in progress. */
	uint64_t pc, addr;
	uint64_t *row;
	uint64_t missmask;		/* bit level * 3 + cnt */
	/* Events. */
	unsigned n_ev;
	const char *ev_names[HIER_MAX_EVENTS];
	char ev_buf[HIER_MAX_EVENTS][16];
	int ev_ir, ev_dr, ev_dw, ev_pf, ev_ntw, ev_inv, ev_cot, ev_cof;
	uint64_t pf_total, ntw_total;
	uint64_t refs[3];		/* fetches, reads, writes: for report() */
	/* Coherence records: open addressing over indices into a pool. */
	uint32_t *coh_table;		/* index + 1; 0 = free */
	uint64_t coh_cap, coh_used;
	unsigned char *coh_pool;
	size_t coh_stride, coh_pool_cap;
	uint64_t coh_inv, coh_true, coh_false;
	/* Per core, block + 1 of its last write, while no instance that does
	 * not serve it can hold the line (no install since): its next write
	 * there needs no invalidation scan. */
	uint64_t owned[HIER_MAX_CORES];
	uint64_t last_write, last_writer;	/* this access's, for hier_check */
	bool coh_oom;
	char desc_name[16];
};

/* ---- one instance ---- */

static inline uint64_t *set_tags(struct hinst *x, uint64_t block,
				 uint64_t *base_way)
{
	uint64_t set = block & x->set_mask;

	*base_way = set * x->assoc;
	return x->tags + *base_way;
}

/* The way holding BLOCK (as an absolute index), or -1. */
static inline int64_t inst_find(struct hinst *x, uint64_t block)
{
	uint64_t base;
	uint64_t *t = set_tags(x, block, &base);

	for (uint32_t w = 0; w < x->assoc; w++)
		if (t[w] == block + 1)
			return (int64_t)(base + w);
	return -1;
}

/* Drop WAY; returns its flags.  A prefetched line never used is useless. */
static inline uint8_t inst_remove(struct hinst *x, uint64_t way)
{
	uint8_t f = x->flags[way];

	if (f & LF_HWPF)
		x->lv->hpf_useless++;
	x->tags[way] = 0;
	x->flags[way] = 0;
	return f;
}

/* ---- the hierarchy ---- */

static inline struct hinst *path_at(struct hier_model *h, unsigned side,
				    unsigned k)
{
	return h->path[side][h->core * h->n_levels + k];
}

unsigned level_fill(struct hier_model *h, unsigned side, unsigned k,
		    uint64_t block, enum cnt cnt, uint8_t *flags_up);
unsigned level_write(struct hier_model *h, unsigned k, uint64_t block,
		     enum cnt cnt);

/* ---- coherence ---- */

static inline struct coh_rec *coh_at(struct hier_model *h, uint32_t i)
{
	return (struct coh_rec *)(h->coh_pool + (size_t)i * h->coh_stride);
}

/* The chunks of the line [ADDR, ADDR + SIZE) touches (clipped to BLOCK). */
static inline uint64_t chunk_mask(const struct hier_model *h, uint64_t block,
				  uint64_t addr, uint32_t size)
{
	uint64_t lo = block << h->line_shift, hi = lo + h->line;
	uint64_t a = addr < lo ? lo : addr;
	uint64_t e = addr + size > hi ? hi : addr + size;
	unsigned gran = h->line > 64 ? (unsigned)(h->line / 64) : 1;
	unsigned first, last;

	if (e <= a)
		return 0;
	first = (unsigned)((a - lo) / gran);
	last = (unsigned)((e - 1 - lo) / gran);
	if (last - first >= 63)
		return ~0ULL;
	return ((2ULL << (last - first)) - 1) << first;
}
void coh_miss(struct hier_model *h, uint64_t block, uint64_t mask);
void coh_write(struct hier_model *h, uint64_t block, uint64_t mask);

/* ---- ops (hier_ops.c) ---- */

extern const struct cache_model_ops hier_ops;
void hier_destroy(struct cache_model *m);

#endif
