/* The `hier` cache model: any number of levels, split or unified, several
 * cores, coherence, software and hardware prefetch.  `host` and `jaguar`
 * are configurations of it (host.c, jaguar.c).
 *
 * This file: one instance, the hierarchy (fills, writes, evictions,
 * hardware prefetch) and coherence; the ops are in hier_ops.c,
 * construction and the --cache spec syntax in hier_build.c, what they
 * share in hier_private.h.
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

#include <stdlib.h>
#include <string.h>

#include "hashtab.h"
#include "hier_private.h"

/* ---- one instance ---- */

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

/* ---- the hierarchy ---- */

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
unsigned level_fill(struct hier_model *h, unsigned side, unsigned k,
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
unsigned level_write(struct hier_model *h, unsigned k, uint64_t block,
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
void coh_miss(struct hier_model *h, uint64_t block, uint64_t mask)
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
void coh_write(struct hier_model *h, uint64_t block, uint64_t mask)
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
