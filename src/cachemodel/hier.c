/* The `hier` cache model: any number of levels, split or unified, several
 * cores, coherence, software and hardware prefetch.  `host` and `jaguar`
 * are configurations of it (host.c, jaguar.c).
 *
 * Rules, in plain words (docs/models.md has the user's view):
 * - The spec lists levels from the core outwards.  An instruction-side and
 *   a data-side level may stand side by side; after a unified level every
 *   level is unified.  A fetch walks the I path (I and unified levels), a
 *   data access the D path.  All levels have the same line size.
 * - A level with share=S has ceil(cores/S) instances; core c uses instance
 *   c/S.  Shares must nest outwards (each divides the next).
 * - Each instance is ASSOC ways per set at fixed places, a tag 0 meaning
 *   invalid (so a cold set fills its free ways first, which is what
 *   Cachegrind's zeroed MRU list amounts to).  LRU: the way with the oldest
 *   use stamp goes; FIFO: the oldest fill; tree-PLRU: the tree's pick;
 *   random: xorshift64 from seed=N, so runs repeat.
 * - A read or fetch looks a line up level by level until it hits; each level
 *   that missed counts one miss of the access's kind (fetch, read, write)
 *   and gets the line, except exclusive levels, which get lines only as
 *   victims of the level above and give a line up (and drop it) on a hit.
 *   An access spanning several lines is one reference per level, a miss if
 *   any of its lines missed there; and, Cachegrind's rule, when it missed
 *   at a level the next level looks up all its lines, also those that hit
 *   above (so hier as I1/D1/LL counts exactly what Cachegrind counts).
 * - Writes: write-allocate levels fill the line as a read (the miss counted
 *   as a write miss) and then take the write; no-write-allocate levels pass
 *   a missing write down.  Write-back levels mark the line dirty;
 *   write-through levels pass the write down as well.  A read-modify-write
 *   counts as a read (Dr, as Cachegrind) and dirties the line.
 *   An exclusive level first on the I path (no I level above it) acts as
 *   non-inclusive for fetches.
 * - Evictions: a dirty victim counts a write-back (XWb) of its level and
 *   dirties the copy in the first level below that holds the line (no
 *   allocation, and no replacement update: a write-back is no use).  An
 *   exclusive level below takes every victim, clean or dirty.  An inclusive
 *   level's victim is removed from every level above it that it serves
 *   (back-invalidation), their dirt merging into the victim.
 * - Coherence, with more than one core: a write (or read-modify-write, or
 *   non-temporal store) of core W removes the line from every instance that
 *   does not serve W (other cores' L1s, other modules' L2s and all their
 *   L1s).  Each removal counts in CohInv of the writing row.  The cores
 *   whose first data level lost the line remember, per byte, what other
 *   cores wrote since; their next first-level data miss on the line is a
 *   coherence miss: true sharing (CohT) when the access touches a written
 *   byte, else false sharing (CohF); a prefetch bringing the line back ends
 *   that too.  Lines larger than 64 bytes track 64 chunks.  After a write
 *   nothing outside the writer's caches holds the line until some install
 *   of it: repeated writes skip the invalidation scan (owned[]).
 * - The pc of an access is the address of the last fetch (the tracer
 *   fetches each instruction before its accesses).
 * - Software prefetch (ACC_PREFETCH, also clflush: the decoder does not tell
 *   them apart) counts Pf; when the line is already in a data level, the
 *   first one counts PfX (wasted), else the line is filled as a read
 *   without miss events.  Non-temporal stores count Dw and NTw; with
 *   nt-bypass they remove the line everywhere and write memory directly.
 * - Hardware prefetchers (pf=next|stride per level) fill a line into their
 *   level (XHpf) marked as prefetched; the first demand hit on it counts
 *   XHpfu (useful); eviction or invalidation before that is useless
 *   (reported).  next: on a demand miss of line B, line B+1.  stride: a
 *   64-entry table per instance keyed by the pc; after the same stride is
 *   seen twice in a row, the line of addr+stride (the next line in the
 *   stride's direction when that is the same line). */
#include "model.h"
#include "models.h"
#include "parse.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "hashtab.h"

#define HIER_MAX_LEVELS 16
#define HIER_MAX_CORES 64
#define HIER_MAX_EVENTS 128
#define STRIDE_ENTRIES 64
#define PAIRS_PER_LINE 4
#define REPORT_TOP 10
#define MAX_SPAN 16		/* lines of one reference handled whole */

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

static void plru_touch(struct hinst *x, uint64_t set, uint32_t way)
{
	uint64_t *bits = &x->plru[set];
	unsigned node = 1;

	for (uint32_t span = x->assoc >> 1; span; span >>= 1) {
		unsigned right = (way & span) ? 1 : 0;

		/* Point the node away from the way just used. */
		if (right)
			*bits &= ~(1ULL << node);
		else
			*bits |= 1ULL << node;
		node = node * 2 + right;
	}
}

static uint32_t plru_victim(const struct hinst *x, uint64_t set)
{
	uint64_t bits = x->plru[set];
	unsigned node = 1;
	uint32_t way = 0;

	for (uint32_t span = x->assoc >> 1; span; span >>= 1) {
		unsigned right = (bits >> node) & 1;

		if (right)
			way |= span;
		node = node * 2 + right;
	}
	return way;
}

static inline void inst_touch(struct hinst *x, uint64_t way)
{
	x->mru_block = x->tags[way];
	x->mru_way = way;
	switch (x->lv->spec.repl) {
	case REPL_LRU:
		x->stamp[way] = ++x->clock;
		break;
	case REPL_PLRU:
		plru_touch(x, way / x->assoc, (uint32_t)(way % x->assoc));
		break;
	default:
		break;
	}
}

static uint64_t xorshift64(uint64_t *s)
{
	uint64_t x = *s;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	*s = x;
	return x;
}

static uint64_t inst_victim(struct hinst *x, uint64_t block)
{
	uint64_t base;
	uint64_t *t = set_tags(x, block, &base);
	uint64_t best;

	for (uint32_t w = 0; w < x->assoc; w++)
		if (!t[w])
			return base + w;
	switch (x->lv->spec.repl) {
	case REPL_PLRU:
		return base + plru_victim(x, base / x->assoc);
	case REPL_RAND:
		return base + xorshift64(&x->rng) % x->assoc;
	default:	/* LRU and FIFO: the smallest stamp */
		best = base;
		for (uint32_t w = 1; w < x->assoc; w++)
			if (x->stamp[base + w] < x->stamp[best])
				best = base + w;
		return best;
	}
}

/* Drop WAY; returns its flags.  A prefetched line never used is useless. */
static uint8_t inst_remove(struct hinst *x, uint64_t way)
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

static unsigned level_fill(struct hier_model *h, unsigned side, unsigned k,
			   uint64_t block, enum cnt cnt, uint8_t *flags_up);
static void install(struct hier_model *h, unsigned side, unsigned k,
		    uint64_t block, uint8_t flags);

/* A dirty line leaving level K - 1: the first level from K down that
 * holds it takes the dirt; memory otherwise. */
static void write_back(struct hier_model *h, unsigned side, unsigned k,
		       uint64_t block)
{
	for (; k < h->n_path[side]; k++) {
		struct hinst *x = path_at(h, side, k);
		int64_t way = inst_find(x, block);

		if (way >= 0 && !x->lv->spec.write_through) {
			x->flags[way] |= LF_DIRTY;
			return;
		}
	}
}

static void evict(struct hier_model *h, unsigned side, unsigned k,
		  struct hinst *x, uint64_t way)
{
	uint64_t block = x->tags[way] - 1;
	uint8_t f = inst_remove(x, way);

	if (x->lv->spec.incl == INCL_INCL) {
		for (unsigned i = 0; i < x->n_upper; i++) {
			int64_t uw = inst_find(x->upper[i], block);

			if (uw >= 0) {
				f |= inst_remove(x->upper[i], (uint64_t)uw);
				x->lv->back_inv++;
			}
		}
	}
	if (k + 1 < h->n_path[side] &&
	    path_at(h, side, k + 1)->lv->spec.incl == INCL_EXCL) {
		install(h, side, k + 1, block, f & LF_DIRTY);
		return;
	}
	if (f & LF_DIRTY) {
		x->lv->wb++;
		if (x->lv->ev_wb >= 0)
			h->row[x->lv->ev_wb]++;
		write_back(h, side, k + 1, block);
	}
}

static void coh_refetched(struct hier_model *h, uint64_t block);

/* Put BLOCK into path level K (merging when it is there already). */
static void install(struct hier_model *h, unsigned side, unsigned k,
		    uint64_t block, uint8_t flags)
{
	struct hinst *x = path_at(h, side, k);
	int64_t have = inst_find(x, block);
	uint64_t way;

	/* The core has the line again (a demand miss was classified
	 * before; this covers prefetches). */
	if (h->n_cores > 1) {
		if (side == SIDE_D && !k)
			coh_refetched(h, block);
		for (unsigned c = 0; c < h->n_cores; c++)
			if (h->owned[c] == block + 1 && c != h->core)
				h->owned[c] = 0;
	}

	if (have >= 0) {
		x->flags[have] |= flags & LF_DIRTY;
		inst_touch(x, (uint64_t)have);
		return;
	}
	way = inst_victim(x, block);
	if (x->tags[way])
		evict(h, side, k, x, way);
	x->tags[way] = block + 1;
	x->flags[way] = flags;
	x->stamp[way] = ++x->clock;
	x->mru_block = block + 1;
	x->mru_way = way;
	if (x->lv->spec.repl == REPL_PLRU)
		plru_touch(x, way / x->assoc, (uint32_t)(way % x->assoc));
}

static void hw_prefetch(struct hier_model *h, unsigned side, unsigned k,
			uint64_t block)
{
	struct hinst *x = path_at(h, side, k);
	uint8_t up = 0;

	if (inst_find(x, block) >= 0)
		return;
	if (k + 1 < h->n_path[side])
		level_fill(h, side, k + 1, block, CNT_NONE, &up);
	install(h, side, k, block, (uint8_t)(up | LF_HWPF));
	x->lv->hpf++;
	if (x->lv->ev_hpf >= 0)
		h->row[x->lv->ev_hpf]++;
}

static void stride_train(struct hier_model *h, unsigned side, unsigned k,
			 struct hinst *x)
{
	struct stride_ent *e = &x->stride[(h->pc ^ (h->pc >> 6)) %
					   STRIDE_ENTRIES];
	int64_t stride;
	uint64_t target, block;

	if (e->pc != h->pc) {
		*e = (struct stride_ent){ .pc = h->pc, .last = h->addr };
		return;
	}
	stride = (int64_t)(h->addr - e->last);
	e->last = h->addr;
	if (stride && stride == e->stride) {
		if (e->conf < 3)
			e->conf++;
	} else {
		e->stride = stride;
		e->conf = 0;
		return;
	}
	if (e->conf < 2)
		return;
	block = h->addr >> h->line_shift;
	target = (h->addr + (uint64_t)stride) >> h->line_shift;
	if (target == block)
		target = stride > 0 ? block + 1 : block - 1;
	hw_prefetch(h, side, k, target);
}

static inline void count_miss(struct hier_model *h, struct hlevel *lv,
			      enum cnt cnt)
{
	if (cnt != CNT_NONE)
		h->missmask |= 1ULL << (lv->idx * 3 + cnt);
}

/* Make BLOCK present at path level K (exclusive levels: pass it up).
 * *FLAGS_UP gets the dirt an exclusive level gives up with the line.
 * Returns the path level that had it (n_path: memory). */
static unsigned level_fill(struct hier_model *h, unsigned side, unsigned k,
			   uint64_t block, enum cnt cnt, uint8_t *flags_up)
{
	struct hinst *x = path_at(h, side, k);
	struct hlevel *lv = x->lv;
	int64_t way = inst_find(x, block);
	uint8_t up = 0;
	unsigned depth = h->n_path[side];

	*flags_up = 0;
	if (way >= 0) {
		inst_touch(x, (uint64_t)way);
		if ((x->flags[way] & LF_HWPF) && cnt != CNT_NONE) {
			x->flags[way] &= (uint8_t)~LF_HWPF;
			lv->hpf_useful++;
			if (lv->ev_hpfu >= 0)
				h->row[lv->ev_hpfu]++;
		}
		if (lv->spec.incl == INCL_EXCL && k) {
			x->flags[way] &= (uint8_t)~LF_HWPF;
			*flags_up = inst_remove(x, (uint64_t)way) & LF_DIRTY;
		}
		if (lv->spec.pf == PF_STRIDE && cnt != CNT_NONE)
			stride_train(h, side, k, x);
		return k;
	}
	count_miss(h, lv, cnt);
	if (k + 1 < h->n_path[side])
		depth = level_fill(h, side, k + 1, block, cnt, &up);
	if (lv->spec.incl == INCL_EXCL && k)
		*flags_up = up;
	else
		install(h, side, k, block, up);
	if (cnt == CNT_NONE)
		return depth;
	if (lv->spec.pf == PF_NEXT)
		hw_prefetch(h, side, k, block + 1);
	else if (lv->spec.pf == PF_STRIDE)
		stride_train(h, side, k, x);
	return depth;
}

/* A write arriving at data path level K; returns the level that had the
 * line, as level_fill. */
static unsigned level_write(struct hier_model *h, unsigned k, uint64_t block,
			    enum cnt cnt)
{
	struct hinst *x;
	struct hlevel *lv;
	int64_t way;
	unsigned depth = k;

	if (k >= h->n_path[SIDE_D])
		return h->n_path[SIDE_D];
	x = path_at(h, SIDE_D, k);
	lv = x->lv;
	way = inst_find(x, block);
	if (way < 0) {
		uint8_t up = 0;

		count_miss(h, lv, cnt);
		if (lv->spec.no_write_allocate || lv->spec.incl == INCL_EXCL)
			return level_write(h, k + 1, block, cnt);
		depth = h->n_path[SIDE_D];
		if (k + 1 < h->n_path[SIDE_D])
			depth = level_fill(h, SIDE_D, k + 1, block, cnt, &up);
		install(h, SIDE_D, k, block, up);
		if (lv->spec.pf == PF_NEXT && cnt != CNT_NONE)
			hw_prefetch(h, SIDE_D, k, block + 1);
		way = inst_find(x, block);
		if (way < 0)	/* the prefetch evicted it (1-way sets) */
			return depth;
	} else {
		inst_touch(x, (uint64_t)way);
		if ((x->flags[way] & LF_HWPF) && cnt != CNT_NONE) {
			x->flags[way] &= (uint8_t)~LF_HWPF;
			lv->hpf_useful++;
			if (lv->ev_hpfu >= 0)
				h->row[lv->ev_hpfu]++;
		}
	}
	if (lv->spec.pf == PF_STRIDE && cnt != CNT_NONE)
		stride_train(h, SIDE_D, k, x);
	if (lv->spec.write_through)
		level_write(h, k + 1, block, cnt);
	else
		x->flags[way] |= LF_DIRTY;
	return depth;
}

/* ---- coherence ---- */

static inline struct coh_rec *coh_at(struct hier_model *h, uint32_t i)
{
	return (struct coh_rec *)(h->coh_pool + (size_t)i * h->coh_stride);
}

/* Its own table (records of a run-time stride in one pool), the shared
 * hash: bits 20 and up of it, as the table has always been laid out. */
static uint64_t coh_hash(uint64_t block)
{
	return hash_u64(block) >> 20;
}

static struct coh_rec *coh_find(struct hier_model *h, uint64_t block)
{
	uint64_t mask = h->coh_cap - 1;

	for (uint64_t i = coh_hash(block) & mask;; i = (i + 1) & mask) {
		uint32_t v = h->coh_table[i];

		if (!v)
			return NULL;
		if (coh_at(h, v - 1)->block == block)
			return coh_at(h, v - 1);
	}
}

static void coh_insert_index(struct hier_model *h, uint32_t idx)
{
	uint64_t mask = h->coh_cap - 1;
	uint64_t i = coh_hash(coh_at(h, idx)->block) & mask;

	while (h->coh_table[i])
		i = (i + 1) & mask;
	h->coh_table[i] = idx + 1;
}

/* Amortised growth, like the cost table's: rare, not per access. */
static struct coh_rec *coh_create(struct hier_model *h, uint64_t block)
{
	struct coh_rec *r;

	if (h->coh_used + 1 > h->coh_cap / 2) {
		uint64_t cap = h->coh_cap * 2;
		uint32_t *t = calloc(cap, sizeof(*t));

		if (!t || h->coh_used >= UINT32_MAX - 1) {
			free(t);
			h->coh_oom = true;
			return NULL;
		}
		free(h->coh_table);
		h->coh_table = t;
		h->coh_cap = cap;
		for (uint64_t i = 0; i < h->coh_used; i++)
			coh_insert_index(h, (uint32_t)i);
	}
	if (h->coh_used == h->coh_pool_cap) {
		size_t cap = h->coh_pool_cap ? h->coh_pool_cap * 2 : 1024;
		unsigned char *p = realloc(h->coh_pool, cap * h->coh_stride);

		if (!p) {
			h->coh_oom = true;
			return NULL;
		}
		h->coh_pool = p;
		h->coh_pool_cap = cap;
	}
	r = coh_at(h, (uint32_t)h->coh_used);
	memset(r, 0, h->coh_stride);
	r->block = block;
	coh_insert_index(h, (uint32_t)h->coh_used);
	h->coh_used++;
	return r;
}

/* The chunks of the line [ADDR, ADDR + SIZE) touches (clipped to BLOCK). */
static uint64_t chunk_mask(const struct hier_model *h, uint64_t block,
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

static void coh_pair_add(struct coh_rec *r, const struct hier_model *h,
			 const struct coh_core *cc, bool is_true)
{
	struct coh_pair *p = NULL;

	for (unsigned i = 0; i < PAIRS_PER_LINE; i++) {
		struct coh_pair *q = &r->pairs[i];

		if (q->count && q->miss_pc == h->pc &&
		    q->write_pc == cc->since_pc && q->is_true == is_true) {
			q->count++;
			return;
		}
		if (!q->count && !p)
			p = q;
	}
	if (!p)
		return;		/* the first four pairs are kept */
	*p = (struct coh_pair){ h->pc, h->addr, cc->since_pc, cc->since_addr,
				1, is_true };
}

static void coh_refetched(struct hier_model *h, uint64_t block)
{
	struct coh_rec *r = coh_find(h, block);

	if (r)
		r->pending &= ~(1ULL << h->core);
}

/* A first-level data miss of the current core on BLOCK. */
static void coh_miss(struct hier_model *h, uint64_t block, uint64_t mask)
{
	struct coh_rec *r = coh_find(h, block);
	struct coh_core *cc;
	bool is_true;

	if (!r || !(r->pending & (1ULL << h->core)))
		return;
	cc = &r->core[h->core];
	is_true = (cc->since & mask) != 0;
	r->pending &= ~(1ULL << h->core);
	if (is_true) {
		r->n_true++;
		h->coh_true++;
		h->row[h->ev_cot]++;
	} else {
		r->n_false++;
		h->coh_false++;
		h->row[h->ev_cof]++;
	}
	coh_pair_add(r, h, cc, is_true);
}

/* The current core writes the chunks MASK of BLOCK. */
static void coh_write(struct hier_model *h, uint64_t block, uint64_t mask)
{
	struct hinst **fx = h->foreign + h->core * h->n_inst_total;
	struct coh_rec *r = coh_find(h, block);
	uint64_t lost = 0;
	uint64_t copies = 0;

	h->last_write = block + 1;
	h->last_writer = h->core;
	for (unsigned i = 0; h->owned[h->core] != block + 1 &&
	     i < h->n_foreign; i++) {
		int64_t way = inst_find(fx[i], block);

		if (way < 0)
			continue;
		inst_remove(fx[i], (uint64_t)way);
		copies++;
		/* A core lost the line when its first data level did. */
		if (fx[i]->lv->first_d)
			for (unsigned c = 0; c < fx[i]->n_cores; c++)
				lost |= 1ULL << (fx[i]->core0 + c);
	}
	/* Also another core's own install of the line cleared this. */
	h->owned[h->core] = block + 1;
	if (copies) {
		h->row[h->ev_inv] += copies;
		h->coh_inv += copies;
		if (!r)
			r = coh_create(h, block);
		if (!r)
			return;
		r->inv += copies;
		for (unsigned c = 0; c < h->n_cores; c++)
			if ((lost & ~r->pending) & (1ULL << c))
				r->core[c].since = 0;
		r->pending |= lost;
	}
	if (!r || !r->pending)
		return;
	for (unsigned c = 0; c < h->n_cores; c++) {
		if (c == h->core || !(r->pending & (1ULL << c)))
			continue;
		r->core[c].since |= mask;
		r->core[c].since_pc = h->pc;
		r->core[c].since_addr = h->addr;
	}
}

/* ---- ops ---- */

/* BLOCK was the last line used in X and is still there, not prefetched:
 * a hit that changes nothing but the counts. */
static inline bool fast_hit(const struct hinst *x, uint64_t block)
{
	return x->mru_block == block + 1 && x->fast_ok &&
	       x->tags[x->mru_way] == block + 1 &&
	       !(x->flags[x->mru_way] & LF_HWPF);
}

static inline void flush_misses(struct hier_model *h)
{
	uint64_t m = h->missmask;

	while (m) {
		unsigned bit = (unsigned)__builtin_ctzll(m);
		int ev = h->levels[bit / 3].ev_miss[bit % 3];

		h->levels[bit / 3].misses[bit % 3]++;
		if (ev >= 0)
			h->row[ev]++;
		m &= m - 1;
	}
	h->missmask = 0;
}

/* Cachegrind's rule for a reference spanning lines: when it missed at a
 * level, the next level sees all its lines, also those that hit (the
 * lookup updates replacement, a miss there counts and fills).  DEPTH[i]
 * is where line FIRST + i was found. */
static void whole_reference(struct hier_model *h, unsigned side,
			    uint64_t first, uint64_t last, unsigned *depth,
			    enum cnt cnt)
{
	unsigned n = (unsigned)(last - first + 1), deepest = 0;
	uint8_t up;

	if (n > MAX_SPAN)
		return;
	for (unsigned i = 0; i < n; i++)
		if (depth[i] > deepest)
			deepest = depth[i];
	for (unsigned k = 0; k + 1 < h->n_path[side] && k < deepest; k++) {
		if (path_at(h, side, k + 1)->lv->spec.incl == INCL_EXCL)
			break;
		for (unsigned i = 0; i < n; i++) {
			if (depth[i] != k)
				continue;
			depth[i] = level_fill(h, side, k + 1, first + i, cnt, &up);
			if (depth[i] > deepest)
				deepest = depth[i];
		}
	}
}

static void hier_fetch(struct cache_model *m, uint64_t addr, uint32_t size,
		       uint64_t *row)
{
	struct hier_model *h = (struct hier_model *)m;
	uint64_t block = addr >> h->line_shift;
	uint64_t last = (addr + (size ? size - 1 : 0)) >> h->line_shift;
	uint8_t up;

	h->pc = addr;
	h->addr = addr;
	h->row = row;
	row[h->ev_ir]++;
	h->refs[CNT_I]++;
	if (!h->n_path[SIDE_I])
		return;
	if (block == last) {
		if (fast_hit(path_at(h, SIDE_I, 0), block))
			return;
		level_fill(h, SIDE_I, 0, block, CNT_I, &up);
	} else {
		unsigned depth[MAX_SPAN];
		uint64_t first = block;

		for (; block <= last; block++) {
			unsigned d = level_fill(h, SIDE_I, 0, block, CNT_I, &up);

			if (block - first < MAX_SPAN)
				depth[block - first] = d;
		}
		whole_reference(h, SIDE_I, first, last, depth, CNT_I);
	}
	flush_misses(h);
}

static bool in_first_level(struct hier_model *h, uint64_t block)
{
	return h->n_path[SIDE_D] &&
	       inst_find(path_at(h, SIDE_D, 0), block) >= 0;
}

static void nt_store(struct hier_model *h, uint64_t block)
{
	for (unsigned l = 0; l < h->n_levels; l++) {
		struct hlevel *lv = &h->levels[l];

		for (unsigned j = 0; j < lv->n_inst; j++) {
			int64_t way = inst_find(&lv->inst[j], block);

			if (way >= 0)
				inst_remove(&lv->inst[j], (uint64_t)way);
		}
	}
}

static void software_prefetch(struct hier_model *h, uint64_t block)
{
	uint8_t up;

	for (unsigned k = 0; k < h->n_path[SIDE_D]; k++) {
		struct hinst *x = path_at(h, SIDE_D, k);

		if (inst_find(x, block) >= 0) {
			x->lv->pf_wasted++;
			if (x->lv->ev_pfw >= 0)
				h->row[x->lv->ev_pfw]++;
			if (!k)
				return;
			break;	/* wasted, but it still brings the line up */
		}
	}
	if (h->n_path[SIDE_D])
		level_fill(h, SIDE_D, 0, block, CNT_NONE, &up);
}

static void hier_access(struct cache_model *m, const struct mem_access *a,
			uint64_t *row)
{
	struct hier_model *h = (struct hier_model *)m;
	uint64_t block = a->addr >> h->line_shift;
	uint64_t last = (a->addr + (a->size ? a->size - 1 : 0)) >> h->line_shift;
	bool multi = h->n_cores > 1, bypass = false;
	unsigned depth[MAX_SPAN];
	uint64_t first;
	uint8_t up;

	h->addr = a->addr;
	h->row = row;
	h->last_write = 0;
	switch (a->kind) {
	case ACC_PREFETCH:
		row[h->ev_pf]++;
		h->pf_total++;
		for (; block <= last; block++)
			software_prefetch(h, block);
		return;
	case ACC_READ:
	case ACC_MODIFY:
		row[h->ev_dr]++;
		h->refs[CNT_R]++;
		break;
	case ACC_NT_WRITE:
		row[h->ev_ntw]++;
		row[h->ev_dw]++;
		h->refs[CNT_W]++;
		h->ntw_total++;
		break;
	default:
		row[h->ev_dw]++;
		h->refs[CNT_W]++;
		break;
	}
	if (!h->n_path[SIDE_D])
		return;
	if (block == last && a->kind != ACC_NT_WRITE) {
		struct hinst *x = path_at(h, SIDE_D, 0);

		if (fast_hit(x, block)) {
			if (a->kind == ACC_READ)
				return;
			if (!multi && !x->lv->spec.write_through) {
				x->flags[x->mru_way] |= LF_DIRTY;
				return;
			}
		}
	}
	first = block;
	for (; block <= last; block++) {
		uint64_t mask = multi ? chunk_mask(h, block, a->addr, a->size) : 0;
		unsigned d = 0;

		if (multi && !in_first_level(h, block))
			coh_miss(h, block, mask);
		if (a->kind == ACC_NT_WRITE && h->nt_bypass) {
			/* Others lose their copies to the store first. */
			if (multi)
				coh_write(h, block, mask);
			nt_store(h, block);
			bypass = true;
			continue;
		} else if (a->kind == ACC_READ) {
			d = level_fill(h, SIDE_D, 0, block, CNT_R, &up);
		} else if (a->kind == ACC_MODIFY) {
			d = level_fill(h, SIDE_D, 0, block, CNT_R, &up);
			level_write(h, 0, block, CNT_NONE);
		} else {
			d = level_write(h, 0, block, CNT_W);
		}
		if (block - first < MAX_SPAN)
			depth[block - first] = d;
		if (multi && a->kind != ACC_READ)
			coh_write(h, block, mask);
	}
	if (last != first && !bypass)
		whole_reference(h, SIDE_D, first, last, depth,
				a->kind == ACC_READ || a->kind == ACC_MODIFY ?
				CNT_R : CNT_W);
	flush_misses(h);
}

static void hier_set_core(struct cache_model *m, unsigned core)
{
	struct hier_model *h = (struct hier_model *)m;

	h->core = core % h->n_cores;
}

static const char *const incl_names[] = { "non-inclusive", "inclusive",
					  "exclusive" };
static const char *const repl_names[] = { "LRU", "tree-PLRU", "FIFO",
					  "random" };
static const char *const pf_names[] = { "none", "next-line", "stride" };

static void hier_describe(const struct cache_model *m, FILE *out)
{
	const struct hier_model *h = (const struct hier_model *)m;

	for (unsigned l = 0; l < h->n_levels; l++) {
		const struct hier_level_spec *s = &h->levels[l].spec;

		/* Cachegrind's layout: the value from column 24. */
		int pad = 11 - (int)strlen(s->name);

		fprintf(out, "desc: %s cache:%*s%" PRIu64 " B, %" PRIu32 " B, ",
			s->name, pad < 1 ? 1 : pad, "", s->size, s->line);
		if (s->assoc == 1)
			fputs("direct-mapped", out);
		else
			fprintf(out, "%" PRIu32 "-way associative", s->assoc);
		fprintf(out, ", %s, %s, %s, %s, %s",
			s->side == SIDE_I ? "instruction" :
			s->side == SIDE_D ? "data" : "unified",
			incl_names[s->incl], repl_names[s->repl],
			s->write_through ? "write-through" : "write-back",
			s->no_write_allocate ? "no-write-allocate" :
			"write-allocate");
		if (s->pf != PF_NONE)
			fprintf(out, ", %s prefetcher", pf_names[s->pf]);
		if (h->n_cores == 1)
			fputc('\n', out);
		else if (s->share == 1)
			fprintf(out, ", one per core\n");
		else
			fprintf(out, ", %u of them, each shared by %u cores\n",
				h->levels[l].n_inst, s->share);
	}
	if (h->n_cores > 1)
		fprintf(out, "desc: %s model, %u cores\n", h->desc_name,
			h->n_cores);
}

static int cmp_false(const void *a, const void *b)
{
	const struct coh_rec *x = *(const struct coh_rec *const *)a;
	const struct coh_rec *y = *(const struct coh_rec *const *)b;
	uint64_t kx = x->n_false, ky = y->n_false;

	if (kx != ky)
		return kx < ky ? 1 : -1;
	kx = x->n_true;
	ky = y->n_true;
	if (kx != ky)
		return kx < ky ? 1 : -1;
	return x->block < y->block ? -1 : x->block > y->block;
}

static const char *data_label(const struct model_resolver *res, uint64_t addr,
			      char *buf, size_t len)
{
	const char *s = res && res->data_name ?
		res->data_name(res->ctx, addr, buf, len) : NULL;

	if (!s) {
		snprintf(buf, len, "0x%" PRIx64, addr);
		s = buf;
	}
	return s;
}

static const char *pc_label(const struct model_resolver *res, uint64_t pc,
			    char *buf, size_t len)
{
	if (res && res->pc_name)
		return res->pc_name(res->ctx, pc, buf, len);
	snprintf(buf, len, "0x%" PRIx64, pc);
	return buf;
}

/* A line's (miss, write) pairs, merged when they name the same source
 * lines and variables (the load and the store of one x++). */
static void report_pairs(const struct coh_rec *r, FILE *out,
			 const char *prefix, const struct model_resolver *res)
{
	char text[PAIRS_PER_LINE][1100];
	uint64_t count[PAIRS_PER_LINE];
	bool is_true[PAIRS_PER_LINE];
	unsigned n = 0;

	for (unsigned j = 0; j < PAIRS_PER_LINE; j++) {
		const struct coh_pair *p = &r->pairs[j];
		char b1[256], b2[256], b3[256], b4[256];
		unsigned i;

		if (!p->count)
			continue;
		snprintf(text[n], sizeof(text[n]), "at %s on %s, written at %s "
			 "on %s", pc_label(res, p->miss_pc, b1, sizeof(b1)),
			 data_label(res, p->miss_addr, b2, sizeof(b2)),
			 pc_label(res, p->write_pc, b3, sizeof(b3)),
			 data_label(res, p->write_addr, b4, sizeof(b4)));
		for (i = 0; i < n; i++)
			if (is_true[i] == p->is_true && !strcmp(text[i], text[n]))
				break;
		if (i < n) {
			count[i] += p->count;
			continue;
		}
		count[n] = p->count;
		is_true[n++] = p->is_true;
	}
	for (unsigned i = 0; i < n; i++)
		fprintf(out, "%s    %s: %" PRIu64 " misses %s\n", prefix,
			is_true[i] ? "true " : "false", count[i], text[i]);
}

static void report_coherence(const struct hier_model *h, FILE *out,
			     const char *prefix,
			     const struct model_resolver *res)
{
	const struct coh_rec *top[REPORT_TOP];
	unsigned n_top = 0, n_lines = 0;

	fprintf(out, "%sCoherence: %" PRIu64 " invalidations, %" PRIu64
		" coherence misses: %" PRIu64 " true sharing, %" PRIu64
		" false sharing%s\n", prefix, h->coh_inv,
		h->coh_true + h->coh_false, h->coh_true, h->coh_false,
		h->coh_oom ? " (out of memory: lines lost)" : "");
	/* The top lines by false-sharing misses, then true ones. */
	for (uint64_t i = 0; i < h->coh_used; i++) {
		const struct coh_rec *r = coh_at((struct hier_model *)h,
						 (uint32_t)i);
		unsigned j;

		if (!r->n_false && !r->n_true)
			continue;
		n_lines++;
		if (n_top == REPORT_TOP &&
		    cmp_false(&r, &top[REPORT_TOP - 1]) >= 0)
			continue;
		j = n_top < REPORT_TOP ? n_top++ : REPORT_TOP - 1;
		top[j] = r;
		for (; j > 0 && cmp_false(&top[j], &top[j - 1]) < 0; j--) {
			const struct coh_rec *t = top[j];

			top[j] = top[j - 1];
			top[j - 1] = t;
		}
	}
	if (!n_top)
		return;
	fprintf(out, "%sFalse sharing: the top %u of %u shared cache lines\n",
		prefix, n_top, n_lines);
	for (unsigned i = 0; i < n_top; i++) {
		const struct coh_rec *r = top[i];
		uint64_t addr = r->block << h->line_shift;
		char b1[256];

		fprintf(out, "%s  line 0x%" PRIx64 " (%s): %" PRIu64
			" false sharing, %" PRIu64 " true sharing misses, %"
			PRIu64 " invalidations received\n", prefix, addr,
			data_label(res, addr, b1, sizeof(b1)), r->n_false,
			r->n_true, r->inv);
		report_pairs(r, out, prefix, res);
	}
}

static void report_levels(const struct hier_model *h, FILE *out,
			  const char *prefix)
{
	static const char *const what[3] = { "fetch", "read", "write" };

	fprintf(out, "%s%s: %" PRIu64 " fetches, %" PRIu64 " reads, %" PRIu64
		" writes\n", prefix, h->desc_name, h->refs[CNT_I],
		h->refs[CNT_R], h->refs[CNT_W]);
	for (unsigned l = 0; l < h->n_levels; l++) {
		const struct hlevel *lv = &h->levels[l];
		const char *sep = "";

		fprintf(out, "%s  %-6s misses:", prefix, lv->spec.name);
		for (unsigned c = 0; c < 3; c++) {
			if (lv->ev_miss[c] < 0)
				continue;
			fprintf(out, "%s %" PRIu64 " %s (%.2f%%)", sep,
				lv->misses[c], what[c], h->refs[c] ?
				100.0 * (double)lv->misses[c] /
				(double)h->refs[c] : 0.0);
			sep = ",";
		}
		if (lv->ev_wb >= 0)
			fprintf(out, "; %" PRIu64 " write-backs", lv->wb);
		fputc('\n', out);
	}
}

static void hier_report(const struct cache_model *m, FILE *out,
			const char *prefix, const struct model_resolver *res)
{
	const struct hier_model *h = (const struct hier_model *)m;

	report_levels(h, out, prefix);
	for (unsigned l = 0; l < h->n_levels; l++) {
		const struct hlevel *lv = &h->levels[l];

		if (lv->spec.pf != PF_NONE)
			fprintf(out, "%s%s %s prefetcher: %" PRIu64 " issued, %"
				PRIu64 " useful, %" PRIu64 " useless (evicted "
				"unused)\n", prefix, lv->spec.name,
				pf_names[lv->spec.pf], lv->hpf, lv->hpf_useful,
				lv->hpf_useless);
		if (lv->back_inv)
			fprintf(out, "%s%s back-invalidations: %" PRIu64 "\n",
				prefix, lv->spec.name, lv->back_inv);
	}
	if (h->pf_total) {
		uint64_t wasted = 0;

		fprintf(out, "%sSoftware prefetches: %" PRIu64, prefix,
			h->pf_total);
		for (unsigned l = 0; l < h->n_levels; l++) {
			const struct hlevel *lv = &h->levels[l];

			if (lv->ev_pfw < 0)
				continue;
			fprintf(out, ", %" PRIu64 " already in %s",
				lv->pf_wasted, lv->spec.name);
			wasted += lv->pf_wasted;
		}
		fprintf(out, " (%.1f%% wasted)\n",
			100.0 * (double)wasted / (double)h->pf_total);
	}
	if (h->ntw_total)
		fprintf(out, "%sNon-temporal stores: %" PRIu64 "%s\n", prefix,
			h->ntw_total, h->nt_bypass ? ", bypassing the caches" :
			"");
	if (h->n_cores > 1)
		report_coherence(h, out, prefix, res);
}

static void hier_destroy(struct cache_model *m)
{
	struct hier_model *h = (struct hier_model *)m;

	if (!h)
		return;
	for (unsigned l = 0; l < h->n_levels; l++) {
		struct hlevel *lv = &h->levels[l];

		for (unsigned j = 0; lv->inst && j < lv->n_inst; j++) {
			struct hinst *x = &lv->inst[j];

			free(x->tags);
			free(x->stamp);
			free(x->flags);
			free(x->plru);
			free(x->upper);
			free(x->stride);
		}
		free(lv->inst);
	}
	free(h->path[0]);
	free(h->path[1]);
	free(h->foreign);
	free(h->coh_table);
	free(h->coh_pool);
	free(h);
}

/* Every instance empty, every prefetcher and coherence record forgotten
 * (no write-back counted): the state of a new model; the counts behind
 * report() are kept, so that it covers every window. */
static void hier_flush(struct cache_model *m)
{
	struct hier_model *h = (struct hier_model *)m;

	for (unsigned l = 0; l < h->n_levels; l++) {
		struct hlevel *lv = &h->levels[l];
		uint64_t lines = lv->spec.size / lv->spec.line;

		for (unsigned j = 0; j < lv->n_inst; j++) {
			struct hinst *x = &lv->inst[j];

			memset(x->tags, 0, lines * sizeof(*x->tags));
			memset(x->stamp, 0, lines * sizeof(*x->stamp));
			memset(x->flags, 0, lines);
			if (x->plru)
				memset(x->plru, 0, (x->set_mask + 1) *
				       sizeof(*x->plru));
			if (x->stride)
				memset(x->stride, 0, STRIDE_ENTRIES *
				       sizeof(*x->stride));
			x->clock = 0;
			x->mru_block = x->mru_way = 0;
			x->rng = lv->spec.seed ? lv->spec.seed :
						 0x2545f4914f6cdd1dULL;
		}
	}
	/* No core holds a line: nothing is pending, nobody owns one. */
	for (uint64_t i = 0; i < h->coh_used; i++) {
		struct coh_rec *r = coh_at(h, (uint32_t)i);

		r->pending = 0;
		for (unsigned c = 0; c < h->n_cores; c++)
			r->core[c] = (struct coh_core){ 0 };
	}
	memset(h->owned, 0, sizeof(h->owned));
}

static const struct cache_model_ops hier_ops = {
	.name = "hier",
	.fetch = hier_fetch,
	.access = hier_access,
	.describe = hier_describe,
	.set_core = hier_set_core,
	.report = hier_report,
	.flush = hier_flush,
	.destroy = hier_destroy,
};

/* ---- construction ---- */

static int add_event(struct hier_model *h, const char *a, const char *b,
		     char *err, size_t errlen)
{
	char *buf;

	if (h->n_ev == HIER_MAX_EVENTS) {
		snprintf(err, errlen, "too many events");
		return -2;
	}
	buf = h->ev_buf[h->n_ev];
	snprintf(buf, sizeof(h->ev_buf[0]), "%s%s", a, b);
	for (unsigned i = 0; i < h->n_ev; i++) {
		if (!strcmp(h->ev_names[i], buf)) {
			snprintf(err, errlen, "event name %s twice: rename a "
				 "level", buf);
			return -2;
		}
	}
	h->ev_names[h->n_ev] = buf;
	return (int)h->n_ev++;
}

static unsigned log2_u64(uint64_t x)
{
	unsigned n = 0;

	while (x > 1) {
		x >>= 1;
		n++;
	}
	return n;
}

static int inst_init(struct hinst *x, struct hlevel *lv, unsigned j,
		     unsigned n_cores)
{
	uint64_t lines = lv->spec.size / lv->spec.line;
	uint64_t sets = lines / lv->spec.assoc;

	x->lv = lv;
	x->core0 = j * lv->spec.share;
	x->n_cores = lv->spec.share;
	if (x->core0 + x->n_cores > n_cores)
		x->n_cores = n_cores - x->core0;
	x->assoc = lv->spec.assoc;
	x->set_mask = sets - 1;
	x->rng = lv->spec.seed ? lv->spec.seed : 0x2545f4914f6cdd1dULL;
	x->fast_ok = lv->spec.pf == PF_NONE;
	x->tags = calloc(lines, sizeof(*x->tags));
	x->stamp = calloc(lines, sizeof(*x->stamp));
	x->flags = calloc(lines, 1);
	if (lv->spec.repl == REPL_PLRU)
		x->plru = calloc(sets, sizeof(*x->plru));
	if (lv->spec.pf == PF_STRIDE)
		x->stride = calloc(STRIDE_ENTRIES, sizeof(*x->stride));
	if (!x->tags || !x->stamp || !x->flags ||
	    (lv->spec.repl == REPL_PLRU && !x->plru) ||
	    (lv->spec.pf == PF_STRIDE && !x->stride))
		return -1;
	return 0;
}

static bool serves(const struct hinst *x, unsigned core)
{
	return core >= x->core0 && core < x->core0 + x->n_cores;
}

static bool on_side(const struct hier_level_spec *s, unsigned side)
{
	return s->side == SIDE_U || s->side == side;
}

static int build_events(struct hier_model *h, char *err, size_t errlen)
{
	int r;

#define EV(dst, a, b) do { \
	if ((r = add_event(h, (a), (b), err, errlen)) < 0) \
		return -1; \
	(dst) = r; \
} while (0)
	EV(h->ev_ir, "Ir", "");
	EV(h->ev_dr, "Dr", "");
	EV(h->ev_dw, "Dw", "");
	for (unsigned l = 0; l < h->n_levels; l++) {
		struct hlevel *lv = &h->levels[l];
		const char *n = lv->spec.name;

		lv->ev_miss[CNT_I] = lv->ev_miss[CNT_R] = lv->ev_miss[CNT_W] = -1;
		lv->ev_miss[CNT_NONE] = -1;
		if (lv->spec.side == SIDE_I) {
			EV(lv->ev_miss[CNT_I], n, "mr");
		} else {
			if (lv->spec.side == SIDE_U)
				EV(lv->ev_miss[CNT_I], n, "Imr");
			EV(lv->ev_miss[CNT_R], n, "mr");
			EV(lv->ev_miss[CNT_W], n, "mw");
		}
	}
	for (unsigned l = 0; l < h->n_levels; l++) {
		struct hlevel *lv = &h->levels[l];

		lv->ev_wb = lv->ev_hpf = lv->ev_hpfu = lv->ev_pfw = -1;
		if (lv->spec.side != SIDE_I && !lv->spec.write_through)
			EV(lv->ev_wb, lv->spec.name, "Wb");
	}
	for (unsigned l = 0; l < h->n_levels; l++) {
		struct hlevel *lv = &h->levels[l];

		if (lv->spec.pf == PF_NONE)
			continue;
		EV(lv->ev_hpf, lv->spec.name, "Hpf");
		EV(lv->ev_hpfu, lv->spec.name, "Hpfu");
	}
	EV(h->ev_pf, "Pf", "");
	for (unsigned l = 0; l < h->n_levels; l++)
		if (h->levels[l].spec.side != SIDE_I)
			EV(h->levels[l].ev_pfw, "Pf", h->levels[l].spec.name);
	EV(h->ev_ntw, "NTw", "");
	if (h->n_cores > 1) {
		EV(h->ev_inv, "CohInv", "");
		EV(h->ev_cot, "CohT", "");
		EV(h->ev_cof, "CohF", "");
	}
#undef EV
	h->base.n_events = h->n_ev;
	h->base.event_names = h->ev_names;
	h->base.n_cores = h->n_cores;
	return 0;
}

/* The model shell: the level and core counts checked, nothing built yet. */
static struct hier_model *hier_alloc(unsigned n_levels, unsigned n_cores,
				     bool nt_bypass, const char *desc_name,
				     char *err, size_t errlen)
{
	struct hier_model *h;

	if (!n_levels || n_levels > HIER_MAX_LEVELS) {
		snprintf(err, errlen, "1 to %d cache levels, not %u",
			 HIER_MAX_LEVELS, n_levels);
		return NULL;
	}
	if (!n_cores)
		n_cores = 1;
	if (n_cores > HIER_MAX_CORES) {
		snprintf(err, errlen, "--cores: at most %d cores for the %s model",
			 HIER_MAX_CORES, desc_name);
		return NULL;
	}
	h = calloc(1, sizeof(*h));
	if (!h) {
		snprintf(err, errlen, "out of memory for the cache model");
		return NULL;
	}
	h->base.ops = &hier_ops;
	h->n_levels = n_levels;
	h->n_cores = n_cores;
	h->nt_bypass = nt_bypass;
	snprintf(h->desc_name, sizeof(h->desc_name), "%s", desc_name);
	return h;
}

/* Takes level L's spec and rejects what the model cannot keep: a bad
 * geometry, a second line size, plru on odd ways, split under unified. */
static int level_take_spec(struct hier_model *h,
			   const struct hier_level_spec *specs, unsigned l,
			   unsigned *seen_unified, char *err, size_t errlen)
{
	struct hlevel *lv = &h->levels[l];
	struct hier_level_spec *s = &lv->spec;
	struct cache_geom g;
	const char *bad;

	*s = specs[l];
	lv->idx = l;
	g = (struct cache_geom){ s->size, s->assoc, s->line };
	if ((bad = cache_geom_check(s->name, &g, err, errlen))) {
		if (bad != err)
			snprintf(err, errlen, "%s", bad);
		return -1;
	}
	if (s->line != specs[0].line) {
		snprintf(err, errlen, "%s: line size %" PRIu32 " differs "
			 "from %s's %" PRIu32 " (one line size for all "
			 "levels)", s->name, s->line, specs[0].name,
			 specs[0].line);
		return -1;
	}
	if (s->repl == REPL_PLRU &&
	    (s->assoc & (s->assoc - 1) || s->assoc > 64)) {
		snprintf(err, errlen, "%s: plru needs a power-of-two "
			 "associativity up to 64", s->name);
		return -1;
	}
	if (s->side == SIDE_U)
		*seen_unified = 1;
	else if (*seen_unified) {
		snprintf(err, errlen, "%s: a split level below a "
			 "unified one", s->name);
		return -1;
	}
	if (s->incl == INCL_EXCL && s->side != SIDE_U) {
		snprintf(err, errlen, "%s: only unified levels below "
			 "the first can be exclusive", s->name);
		return -1;
	}
	return 0;
}

/* One instance per group of share= cores; -1 when out of memory. */
static int level_alloc(struct hier_model *h, struct hlevel *lv)
{
	struct hier_level_spec *s = &lv->spec;
	unsigned n_cores = h->n_cores;

	if (!s->share || s->share > n_cores)
		s->share = n_cores;
	lv->n_inst = (n_cores + s->share - 1) / s->share;
	lv->inst = calloc(lv->n_inst, sizeof(*lv->inst));
	if (!lv->inst)
		return -1;
	for (unsigned j = 0; j < lv->n_inst; j++)
		if (inst_init(&lv->inst[j], lv, j, n_cores) < 0)
			return -1;
	h->n_inst_total += lv->n_inst;
	return 0;
}

/* Core C's path on SIDE, first level outwards; -1 (ERR set) for a level
 * that cannot stand where it does, else the path's length. */
static int build_path(struct hier_model *h, unsigned side, unsigned c,
		      char *err, size_t errlen)
{
	unsigned n_levels = h->n_levels;
	unsigned k = 0, prev_share = 0;

	for (unsigned l = 0; l < n_levels; l++) {
		struct hlevel *lv = &h->levels[l];

		if (!on_side(&lv->spec, side))
			continue;
		if (!k && lv->spec.incl == INCL_EXCL && side == SIDE_D) {
			snprintf(err, errlen, "%s: the first level cannot be "
				 "exclusive", lv->spec.name);
			return -1;
		}
		if (prev_share && lv->spec.share % prev_share &&
		    lv->spec.share != h->n_cores) {
			snprintf(err, errlen, "%s: share=%u does not nest the "
				 "level above's %u", lv->spec.name,
				 lv->spec.share, prev_share);
			return -1;
		}
		prev_share = lv->spec.share;
		if (side == SIDE_D && !k)
			lv->first_d = true;
		h->path[side][c * n_levels + k++] =
			&lv->inst[c / lv->spec.share];
	}
	return (int)k;
}

/* Paths per side and core; exclusive first levels make no sense.
 * -1: ERR set, -2: out of memory. */
static int build_paths(struct hier_model *h, char *err, size_t errlen)
{
	for (unsigned side = 0; side < 2; side++) {
		h->path[side] = calloc((size_t)h->n_cores * h->n_levels,
				       sizeof(*h->path[side]));
		if (!h->path[side])
			return -2;
		for (unsigned c = 0; c < h->n_cores; c++) {
			int k = build_path(h, side, c, err, errlen);

			if (k < 0)
				return -1;
			h->n_path[side] = (unsigned)k;
		}
	}
	return 0;
}

/* Upper lists (back-invalidation): the instances above X on its side
 * that serve its cores.  -1 when out of memory. */
static int link_upper(struct hier_model *h, unsigned l, struct hinst *x)
{
	struct hlevel *lv = &h->levels[l];

	x->upper = calloc(h->n_inst_total, sizeof(*x->upper));
	if (!x->upper)
		return -1;
	for (unsigned u = 0; u < l; u++) {
		struct hlevel *ul = &h->levels[u];

		if (lv->spec.side != SIDE_U && ul->spec.side != lv->spec.side)
			continue;
		for (unsigned i = 0; i < ul->n_inst; i++)
			if (ul->inst[i].core0 >= x->core0 &&
			    ul->inst[i].core0 < x->core0 + x->n_cores)
				x->upper[x->n_upper++] = &ul->inst[i];
	}
	return 0;
}

/* Foreign lists (coherence): per core, the instances that do not serve
 * it. */
static void link_foreign(struct hier_model *h)
{
	for (unsigned c = 0; c < h->n_cores; c++) {
		unsigned n = 0;

		for (unsigned l = 0; l < h->n_levels; l++)
			for (unsigned j = 0; j < h->levels[l].n_inst; j++)
				if (!serves(&h->levels[l].inst[j], c))
					h->foreign[c * h->n_inst_total + n++] =
						&h->levels[l].inst[j];
		h->n_foreign = n;
	}
}

/* The upper and foreign lists, and the coherence table with more than
 * one core.  -1 when out of memory. */
static int link_instances(struct hier_model *h)
{
	h->foreign = calloc((size_t)h->n_cores * h->n_inst_total,
			    sizeof(*h->foreign));
	if (!h->foreign)
		return -1;
	for (unsigned l = 0; l < h->n_levels; l++)
		for (unsigned j = 0; j < h->levels[l].n_inst; j++)
			if (link_upper(h, l, &h->levels[l].inst[j]) < 0)
				return -1;
	link_foreign(h);
	if (h->n_cores > 1) {
		h->coh_stride = sizeof(struct coh_rec) +
			h->n_cores * sizeof(struct coh_core);
		h->coh_cap = 4096;
		h->coh_table = calloc(h->coh_cap, sizeof(*h->coh_table));
		if (!h->coh_table)
			return -1;
	}
	return 0;
}

struct cache_model *hier_new(const struct hier_level_spec *specs,
			     unsigned n_levels, unsigned n_cores,
			     bool nt_bypass, const char *desc_name,
			     char *err, size_t errlen)
{
	struct hier_model *h;
	unsigned seen_unified = 0;
	int r;

	h = hier_alloc(n_levels, n_cores, nt_bypass, desc_name, err, errlen);
	if (!h)
		return NULL;
	for (unsigned l = 0; l < n_levels; l++) {
		if (level_take_spec(h, specs, l, &seen_unified, err,
				    errlen) < 0)
			goto fail;
		if (level_alloc(h, &h->levels[l]) < 0)
			goto oom;
	}
	h->line = specs[0].line;
	h->line_shift = log2_u64(h->line);
	if ((r = build_paths(h, err, errlen)) == -2)
		goto oom;
	if (r < 0)
		goto fail;
	if (link_instances(h) < 0)
		goto oom;
	if (build_events(h, err, errlen) < 0)
		goto fail;
	return &h->base;

oom:
	snprintf(err, errlen, "out of memory for the %s cache model",
		 desc_name);
fail:
	hier_destroy(&h->base);
	return NULL;
}

/* ---- the spec syntax ---- */

static bool field_is(const char *f, size_t len, const char *word)
{
	return strlen(word) == len && !strncmp(f, word, len);
}

static int parse_flag(struct hier_level_spec *s, const char *f, size_t len,
		      bool *side_given, char *err, size_t errlen)
{
	static const struct { const char *word; int what, val; } words[] = {
		{ "i", 0, SIDE_I }, { "d", 0, SIDE_D }, { "u", 0, SIDE_U },
		{ "incl", 1, INCL_INCL }, { "excl", 1, INCL_EXCL },
		{ "nine", 1, INCL_NINE },
		{ "lru", 2, REPL_LRU }, { "plru", 2, REPL_PLRU },
		{ "fifo", 2, REPL_FIFO }, { "rand", 2, REPL_RAND },
		{ "wb", 3, 0 }, { "wt", 3, 1 }, { "wa", 4, 0 }, { "nwa", 4, 1 },
		{ "pf=none", 5, PF_NONE }, { "pf=next", 5, PF_NEXT },
		{ "pf=stride", 5, PF_STRIDE },
	};
	uint64_t v;

	for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++) {
		if (!field_is(f, len, words[i].word))
			continue;
		switch (words[i].what) {
		case 0: s->side = (uint8_t)words[i].val; *side_given = true; break;
		case 1: s->incl = (uint8_t)words[i].val; break;
		case 2: s->repl = (uint8_t)words[i].val; break;
		case 3: s->write_through = words[i].val; break;
		case 4: s->no_write_allocate = words[i].val; break;
		default: s->pf = (uint8_t)words[i].val; break;
		}
		return 0;
	}
	if (len > 6 && !strncmp(f, "share=", 6)) {
		if (field_is(f + 6, len - 6, "all")) {
			s->share = 0;
			s->share_given = true;
			return 0;
		}
		if (parse_size(f + 6, len - 6, &v) == 0 && v >= 1 &&
		    v <= HIER_MAX_CORES) {
			s->share = (unsigned)v;
			s->share_given = true;
			return 0;
		}
	}
	if (len > 5 && !strncmp(f, "seed=", 5) &&
	    parse_size(f + 5, len - 5, &v) == 0 && v) {
		s->seed = v;
		return 0;
	}
	snprintf(err, errlen, "%s: unknown level flag '%.*s' (i d u, incl excl "
		 "nine, lru plru fifo rand, wb wt, wa nwa, pf=none|next|stride, "
		 "share=N|all, seed=N)", s->name, (int)len, f);
	return -1;
}

/* Field 0: a level name of letters and digits, not one used above. */
static int parse_level_name(struct hier_level_spec *s, const char *f,
			    size_t len, const struct hier_level_spec *out,
			    unsigned n, char *err, size_t errlen)
{
	if (!len || len >= sizeof(s->name)) {
		snprintf(err, errlen, "level %u: a name of 1 to %zu letters "
			 "and digits", n + 1, sizeof(s->name) - 1);
		return -1;
	}
	for (size_t i = 0; i < len; i++) {
		char c = f[i];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		      (c >= '0' && c <= '9'))) {
			snprintf(err, errlen, "level '%.*s': letters and "
				 "digits only", (int)len, f);
			return -1;
		}
	}
	memcpy(s->name, f, len);
	for (unsigned i = 0; i < n; i++)
		if (!strcmp(out[i].name, s->name)) {
			snprintf(err, errlen, "level %s twice", s->name);
			return -1;
		}
	return 0;
}

/* Fields 1 to 3: size, associativity, line size, none of them 0. */
static int parse_geom_field(struct hier_level_spec *s, unsigned field,
			    const char *f, size_t len, char *err,
			    size_t errlen)
{
	uint64_t v;

	if (parse_size(f, len, &v) < 0 || !v ||
	    v > UINT32_MAX * (field == 1 ? 1024ULL : 1)) {
		snprintf(err, errlen, "%s: bad %s '%.*s'", s->name,
			 field == 1 ? "size" : field == 2 ? "associativity" :
			 "line size", (int)len, f);
		return -1;
	}
	if (field == 1)
		s->size = v;
	else if (field == 2)
		s->assoc = (uint32_t)v;
	else
		s->line = (uint32_t)v;
	return 0;
}

/* No i/d/u flag: the name says the side (L1I, I1, D2 ...), else unified. */
static void default_side(struct hier_level_spec *s)
{
	size_t len = strlen(s->name);
	char first = s->name[0], last = s->name[len - 1];

	s->side = SIDE_U;
	if (last == 'I' || (first == 'I' && len > 1 &&
			    s->name[1] >= '0' && s->name[1] <= '9'))
		s->side = SIDE_I;
	else if (last == 'D' || (first == 'D' && len > 1 &&
				 s->name[1] >= '0' && s->name[1] <= '9'))
		s->side = SIDE_D;
}

/* Level N (OUT[N]) from P..END, NAME:SIZE:ASSOC:LINE[:FLAG...]. */
static int parse_level(const char *p, const char *end,
		       struct hier_level_spec *out, unsigned n, char *err,
		       size_t errlen)
{
	struct hier_level_spec *s = &out[n];
	const char *f = p;
	unsigned field = 0;
	bool side_given = false;

	memset(s, 0, sizeof(*s));
	while (f < end) {
		const char *fe = f;
		size_t len;
		int rc;

		while (fe < end && *fe != ':')
			fe++;
		len = (size_t)(fe - f);
		if (field == 0)
			rc = parse_level_name(s, f, len, out, n, err, errlen);
		else if (field <= 3)
			rc = parse_geom_field(s, field, f, len, err, errlen);
		else
			rc = parse_flag(s, f, len, &side_given, err, errlen);
		if (rc < 0)
			return -1;
		field++;
		f = fe < end ? fe + 1 : fe;
	}
	if (field < 4) {
		snprintf(err, errlen, "level %u ('%.*s'): expected "
			 "NAME:SIZE:ASSOC:LINE[:FLAG...]", n + 1,
			 (int)(end - p), p);
		return -1;
	}
	if (!side_given)
		default_side(s);
	return 0;
}

int hier_parse_spec(const char *spec, struct hier_level_spec *out,
		    unsigned max, unsigned *n_out, char *err, size_t errlen)
{
	const char *p = spec;
	unsigned n = 0;

	if (!*spec) {
		snprintf(err, errlen, "empty cache spec");
		return -1;
	}
	while (*p) {
		const char *end = p + strcspn(p, ",");

		if (n == max) {
			snprintf(err, errlen, "more than %u levels", max);
			return -1;
		}
		if (parse_level(p, end, out, n, err, errlen) < 0)
			return -1;
		n++;
		p = *end ? end + 1 : end;
		if (*end && !*p) {
			snprintf(err, errlen, "trailing ',' in the cache spec");
			return -1;
		}
	}
	/* Default sharing: private levels, the last one shared by all. */
	for (unsigned i = 0; i < n; i++)
		if (!out[i].share_given)
			out[i].share = i + 1 == n ? 0 : 1;
	*n_out = n;
	return 0;
}

/* --model=hier: --cache=SPEC, or Cachegrind's I1/D1/LL from CFG. */
unsigned hier_default_cores(const struct model_config *cfg,
			    unsigned per_thread)
{
	if (cfg->cores)
		return cfg->cores;
	return cfg->core_per_thread ? per_thread : 1;
}

struct cache_model *hier_cache_new(const struct model_config *cfg, bool sim,
				   char *err, size_t errlen)
{
	struct hier_level_spec levels[HIER_MAX_LEVELS];
	const char *spec = model_option(cfg, "cache");
	unsigned n;

	if (!sim)
		return cg_cache_new(cfg, false, err, errlen);
	if (spec) {
		if (hier_parse_spec(spec, levels, HIER_MAX_LEVELS, &n, err,
				    errlen) < 0)
			return NULL;
	} else {
		const struct cache_geom *g[3] = { &cfg->i1, &cfg->d1, &cfg->ll };
		static const char *const names[3] = { "I1", "D1", "LL" };

		memset(levels, 0, sizeof(levels));
		for (unsigned i = 0; i < 3; i++) {
			snprintf(levels[i].name, sizeof(levels[i].name), "%s",
				 names[i]);
			levels[i].size = g[i]->size;
			levels[i].assoc = g[i]->assoc;
			levels[i].line = g[i]->line;
			levels[i].side = (uint8_t)(i == 0 ? SIDE_I :
						   i == 1 ? SIDE_D : SIDE_U);
			levels[i].share = i == 2 ? 0 : 1;
		}
		n = 3;
	}
	return hier_new(levels, n, hier_default_cores(cfg, HIER_THREAD_CORES),
			model_option_bool(cfg, "nt-bypass", false), "hier",
			err, errlen);
}

/* Invariants, for the tests: no line twice in a set; an inclusive
 * instance holds every line of the instances above it that it serves;
 * right after a write, no instance that does not serve the writer holds
 * the line (write invalidation, also through the owned[] shortcut). */
int hier_check(const struct cache_model *m, char *err, size_t errlen)
{
	const struct hier_model *h = (const struct hier_model *)m;

	if (h->n_cores > 1 && h->last_write) {
		struct hinst *const *fx = h->foreign +
			h->last_writer * h->n_inst_total;

		for (unsigned i = 0; i < h->n_foreign; i++)
			if (inst_find(fx[i], h->last_write - 1) >= 0) {
				snprintf(err, errlen, "%s of core %u holds "
					 "block %#" PRIx64 " core %" PRIu64
					 " wrote last", fx[i]->lv->spec.name,
					 fx[i]->core0, h->last_write - 1,
					 h->last_writer);
				return -1;
			}
	}

	for (unsigned l = 0; l < h->n_levels; l++) {
		const struct hlevel *lv = &h->levels[l];

		for (unsigned j = 0; j < lv->n_inst; j++) {
			struct hinst *x = &lv->inst[j];
			uint64_t lines = (x->set_mask + 1) * x->assoc;

			for (uint64_t w = 0; w < lines; w++) {
				uint64_t base = w - w % x->assoc;

				if (!x->tags[w])
					continue;
				for (uint64_t v = base; v < w; v++)
					if (x->tags[v] == x->tags[w]) {
						snprintf(err, errlen, "%s[%u]: "
							 "block %#" PRIx64 " twice",
							 lv->spec.name, j,
							 x->tags[w] - 1);
						return -1;
					}
			}
			if (lv->spec.incl != INCL_INCL)
				continue;
			for (unsigned u = 0; u < x->n_upper; u++) {
				struct hinst *up = x->upper[u];
				uint64_t ul = (up->set_mask + 1) * up->assoc;

				for (uint64_t w = 0; w < ul; w++)
					if (up->tags[w] &&
					    inst_find(x, up->tags[w] - 1) < 0) {
						snprintf(err, errlen, "%s[%u] holds "
							 "block %#" PRIx64 ", "
							 "inclusive %s[%u] not",
							 up->lv->spec.name,
							 up->core0 / up->lv->spec.share,
							 up->tags[w] - 1,
							 lv->spec.name, j);
						return -1;
					}
			}
		}
	}
	return 0;
}
