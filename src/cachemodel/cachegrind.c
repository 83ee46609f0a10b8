/* The Cachegrind-compatible cache model, after valgrind 3.19's cg_sim.c.
 *
 * Rules, in plain words:
 * - Three levels: I1 and D1 in front of a unified LL.  LL is probed only on
 *   an L1 miss (it is not inclusive or exclusive by construction, it just
 *   sees the L1 miss stream).
 * - Each set is an MRU-first array of ASSOC tags.  A hit moves the tag to
 *   the front and shuffles the more recent ones down one place; a miss
 *   inserts at the front and drops the last (LRU) tag.  No timestamps.
 * - The tag is the whole block number (addr >> line shift), as Cachegrind's.
 * - The tags start zeroed (Cachegrind callocs them), so block 0 "hits" in
 *   set 0 of a cold cache.  Real accesses never touch addresses 0..line-1,
 *   but the quirk is kept so the replacement order matches exactly.
 * - An access that spans several lines looks every line up, in address
 *   order (each updates its set), and is ONE reference, a miss if any line
 *   missed.  Cachegrind panics above two lines; we allow any number
 *   (fxsave: 512 bytes) with the same rule.
 * - Write-allocate: a write miss installs the line exactly as a read does.
 * - Read and read-modify-write accesses count as Dr, writes and
 *   non-temporal writes as Dw.  Prefetches change nothing: Cachegrind does
 *   not instrument them at all.
 * - With --cache-sim=no only Ir is counted ("none" model); valgrind still
 *   writes the three desc: lines, so describe() is shared.
 * - Sampled (model_config.first_refs), two events more: DLu, the data
 *   references that reach LL at their line's first reference there since
 *   the sample (its warm-up) began, and DLmu, those of them that miss.
 *   A reference whose line LL saw earlier in the sample hits or misses
 *   as it would in the whole run (in an LRU set, what the sample's own
 *   references did to it decides); a first reference meets the state
 *   earlier samples left, stale: the native run between them is not
 *   seen.  So the sample's LL misses lie between DLmr + DLmw - DLmu (no
 *   first reference a miss) and that plus DLu (each one a miss).  DLuf,
 *   the first references to memory the target had never touched when
 *   the sample began (begin_sample's sample_mem), are misses in the whole
 *   run as well: the lower bound is DLmr + DLmw - DLmu + DLuf. */
#include "model.h"
#include "models.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

enum {
	EV_IR, EV_I1MR, EV_ILMR,
	EV_DR, EV_D1MR, EV_DLMR,
	EV_DW, EV_D1MW, EV_DLMW,
	N_EVENTS,
	EV_DLU = N_EVENTS, EV_DLMU, EV_DLUF,	/* first_refs */
	N_EVENTS_FIRST
};

static const char *const cg_event_names[N_EVENTS_FIRST] = {
	"Ir", "I1mr", "ILmr", "Dr", "D1mr", "DLmr", "Dw", "D1mw", "DLmw",
	"DLu", "DLmu", "DLuf",
};

static const char *const none_event_names[1] = { "Ir" };

struct cg_level {
	uint64_t *tags;		/* sets * assoc block numbers, MRU first */
	uint64_t set_mask;	/* sets - 1 */
	uint32_t assoc;
	uint32_t line_shift;	/* log2(line) */
	struct cache_geom geom;	/* for describe() */
};

/* The lines LL has seen since the sample began: open addressing, a
 * slot of an older epoch is empty (no deletions within one). */
struct first_refs {
	uint64_t *block;
	uint32_t *epoch;
	uint32_t mask, n, now;
};

struct cg_model {
	struct cache_model base;
	struct cg_level i1, d1, ll;
	struct first_refs *first;	/* sampled, else NULL */
	const struct sample_mem *mem;	/* the sample's; NULL: unknown */
	/* The I1 block the last fetch ended in: MRU in its set, so a fetch
	 * that lies wholly inside it hits and changes nothing (most do:
	 * consecutive instructions share a line).  UINT64_MAX: none. */
	uint64_t i1_last;
};

/* BLOCK's lookup in SET past its MRU way (not BLOCK): true on a miss. */
static inline bool level_ref_ways(struct cg_level *c, uint64_t *set,
				  uint64_t block)
{
	uint32_t i;

	for (i = 1; i < c->assoc; i++) {
		if (set[i] == block) {
			for (; i > 0; i--)
				set[i] = set[i - 1];
			set[0] = block;
			return false;
		}
	}
	/* Miss: shift everything down, dropping the LRU tag. */
	for (i = c->assoc - 1; i > 0; i--)
		set[i] = set[i - 1];
	set[0] = block;
	return true;
}

/* One block lookup in one set: true on a miss. */
static inline bool level_ref_block(struct cg_level *c, uint64_t block)
{
	uint64_t *set = c->tags + (block & c->set_mask) * c->assoc;

	return set[0] != block && level_ref_ways(c, set, block);
}

/* SIZE bytes at ADDR, every line looked up: true if any line missed. */
static inline bool level_ref(struct cg_level *c, uint64_t addr, uint32_t size)
{
	uint64_t block = addr >> c->line_shift;
	uint64_t last = (addr + (size ? size - 1 : 0)) >> c->line_shift;
	bool miss;

	if (block == last)
		return level_ref_block(c, block);
	miss = false;
	for (; block != last + 1; block++)
		miss |= level_ref_block(c, block);
	return miss;
}

static inline uint32_t first_slot(const struct first_refs *f, uint64_t block)
{
	return (uint32_t)((block * 0x9e3779b97f4a7c15ull) >> 32) & f->mask;
}

static void first_grow(struct first_refs *f)
{
	uint32_t old = f->mask + 1;
	uint64_t *ob = f->block;
	uint32_t *oe = f->epoch;
	f->mask = 2 * old - 1;
	f->block = calloc(2 * (size_t)old, sizeof(*f->block));
	f->epoch = calloc(2 * (size_t)old, sizeof(*f->epoch));
	if (!f->block || !f->epoch)
		abort();	/* (out of memory in the model's hot path) */
	for (uint32_t i = 0; i < old; i++) {
		if (oe[i] != f->now)
			continue;
		uint32_t h = first_slot(f, ob[i]);
		while (f->epoch[h] == f->now)
			h = (h + 1) & f->mask;
		f->block[h] = ob[i];
		f->epoch[h] = f->now;
	}
	free(ob);
	free(oe);
}

/* Is this BLOCK's reference its first at LL in the sample?  (It is not
 * the next time.) */
static __attribute__((noinline)) bool first_ref(struct first_refs *f,
						uint64_t block)
{
	for (uint32_t h = first_slot(f, block); ; h = (h + 1) & f->mask) {
		if (f->epoch[h] != f->now) {
			if (2 * (f->n + 1) > f->mask + 1) {
				first_grow(f);
				return first_ref(f, block);
			}
			f->block[h] = block;
			f->epoch[h] = f->now;
			f->n++;
			return true;
		}
		if (f->block[h] == block)
			return false;
	}
}

static void cg_begin_sample(struct cache_model *m,
			    const struct sample_mem *mem)
{
	struct first_refs *f = ((struct cg_model *)m)->first;

	if (!f)
		return;
	((struct cg_model *)m)->mem = mem;
	f->n = 0;
	if (++f->now == 0) {	/* every slot's epoch an older one */
		memset(f->epoch, 0, (f->mask + 1) * sizeof(*f->epoch));
		f->now = 1;
	}
}

/* A fetch outside the line the last one ended in: I1, then LL; the row
 * *ROWP read only on a miss. */
static __attribute__((noinline)) void
cg_fetch_lookup(struct cg_model *cg, uint64_t addr, uint32_t size,
		uint64_t *const *rowp)
{
	if (level_ref(&cg->i1, addr, size)) {
		(*rowp)[EV_I1MR]++;
		if (level_ref(&cg->ll, addr, size))
			(*rowp)[EV_ILMR]++;
	}
}

/* An access kind's event (Dr or Dw), or 0: none (a prefetch: Cachegrind
 * ignores them). */
static const uint8_t kind_ev[] = {
	[ACC_READ] = EV_DR, [ACC_MODIFY] = EV_DR,
	[ACC_WRITE] = EV_DW, [ACC_NT_WRITE] = EV_DW,
	[ACC_PREFETCH] = 0,
};

/* A data reference of event EV (Dr or Dw) that missed D1: LL, then the
 * first references' counts. */
static __attribute__((noinline)) void
cg_d1_miss(struct cg_model *cg, uint64_t addr, uint32_t size, unsigned ev,
	   uint64_t *row)
{
	row[ev + 1]++;
	bool miss = level_ref(&cg->ll, addr, size);
	if (miss)
		row[ev + 2]++;
	if (__builtin_expect(cg->first != NULL, 0) &&
	    first_ref(cg->first, addr >> cg->ll.line_shift)) {
		row[EV_DLU]++;
		if (miss)
			row[EV_DLMU]++;
		if (cg->mem && cg->mem->untouched(cg->mem, addr))
			row[EV_DLUF]++;
	}
}

/* COUNT (a constant at each use): the reference's own count (Ir, Dr or
 * Dw) too, or only its misses (cg_insns_uncounted).  The row is *ROWP,
 * read only where something is counted (a replay's rows are cold). */
static inline __attribute__((always_inline)) void
cg_fetch_one(struct cache_model *m, uint64_t addr, uint32_t size,
	     uint64_t *const *rowp, bool count)
{
	struct cg_model *cg = (struct cg_model *)m;
	uint64_t last = (addr + (size ? size - 1 : 0)) >> cg->i1.line_shift;

	if (count)
		(*rowp)[EV_IR]++;
	if (last == cg->i1_last && addr >> cg->i1.line_shift == last)
		return;
	cg->i1_last = last;
	cg_fetch_lookup(cg, addr, size, rowp);
}

static inline __attribute__((always_inline)) void
cg_access_one(struct cache_model *m, uint64_t addr, uint32_t size,
	      unsigned kind, uint64_t *const *rowp, bool count)
{
	struct cg_model *cg = (struct cg_model *)m;
	unsigned ev = kind_ev[kind];

	if (!ev)
		return;
	if (count)
		(*rowp)[ev]++;
	if (level_ref(&cg->d1, addr, size))
		cg_d1_miss(cg, addr, size, ev, *rowp);
}

static void cg_fetch(struct cache_model *m, uint64_t addr, uint32_t size,
		     uint64_t *row)
{
	cg_fetch_one(m, addr, size, &row, true);
}

static void cg_access(struct cache_model *m, const struct mem_access *a,
		      uint64_t *row)
{
	cg_access_one(m, a->addr, a->size, a->kind, &row, true);
}

static void cg_insn(struct cache_model *m, uint64_t addr, uint32_t size,
		    const struct mem_access *acc, unsigned n, bool fetch2,
		    uint64_t *row)
{
	cg_fetch_one(m, addr, size, &row, true);
	for (unsigned i = 0; i < n; i++)
		cg_access_one(m, acc[i].addr, acc[i].size, acc[i].kind, &row,
			      true);
	if (fetch2)
		cg_fetch_one(m, addr, size, &row, true);
}

static inline __attribute__((always_inline)) void
cg_insns_one(struct cache_model *m, const struct model_insn *v,
	     unsigned n, bool count)
{
	for (unsigned i = 0; i < n; i++) {
		cg_fetch_one(m, v[i].pc, v[i].len, &v[i].row, count);
		for (unsigned j = 0; j < v[i].n_acc; j++)
			cg_access_one(m, v[i].acc[j].addr, v[i].acc[j].size,
				      v[i].acc[j].kind, &v[i].row, count);
	}
}

static void cg_insns(struct cache_model *m, const struct model_insn *v,
		     unsigned n)
{
	cg_insns_one(m, v, n, true);
}

static void cg_insns_uncounted(struct cache_model *m,
			       const struct model_insn *v, unsigned n)
{
	cg_insns_one(m, v, n, false);
}

/* cg_lean_compile's code: this, then N_EV events (struct cg_lean_ev). */
struct cg_lean {
	uint8_t n_ev;
	uint8_t len0;		/* the first instruction's length */
	uint8_t last;		/* the last instruction, */
	uint8_t last_at;	/* its first address in the record, */
	uint8_t last_size[2];	/* its accesses' sizes */
	uint8_t last_ev[2];	/* and events (0: none, a prefetch) */
};

/* OP & 1: a data reference of event OP >> 1 (Dr or Dw), A bytes at the
 * record's address B; else the fetch of OP >> 1 bytes at the block's pc
 * + (A | B << 8), an instruction whose last line is another than the one
 * before's (the others lie in the line the last fetch left).  INSN: whose
 * row. */
struct cg_lean_ev {
	uint8_t op, insn, a, b;
};

static bool cg_lean_compile(struct cache_model *m, const struct model_lean *b,
			    uint8_t *code)
{
	struct cg_model *cg = (struct cg_model *)m;
	const struct model_insn *v = b->v;
	unsigned sh = cg->i1.line_shift, n_ev = 0;
	struct cg_lean *h = (struct cg_lean *)(void *)code;
	struct cg_lean_ev *e = (struct cg_lean_ev *)(void *)(h + 1);

	if (!b->n || b->n > 256)
		return false;
	memset(h, 0, sizeof(*h));
	for (unsigned i = 0; i < b->n; i++) {
		uint64_t off = v[i].pc - b->pc;
		size_t at = (size_t)(v[i].acc - v[0].acc);
		if (!v[i].len || v[i].len > 15 || off > 0xffff ||
		    v[i].n_acc > 2 || at + v[i].n_acc > 256 ||
		    (i && v[i].pc != v[i - 1].pc + v[i - 1].len))
			return false;
		if (i && (v[i].pc + v[i].len - 1) >> sh !=
			 (v[i - 1].pc + v[i - 1].len - 1) >> sh)
			e[n_ev++] = (struct cg_lean_ev){
				(uint8_t)(v[i].len << 1), (uint8_t)i,
				(uint8_t)off, (uint8_t)(off >> 8) };
		for (unsigned j = 0; j < v[i].n_acc; j++) {
			const struct mem_access *a = &v[i].acc[j];
			unsigned ev = kind_ev[a->kind];
			if (!a->size || a->size > 255 || a->kind > ACC_NT_WRITE)
				return false;
			if (i == b->n - 1) {
				h->last_size[j] = (uint8_t)a->size;
				h->last_ev[j] = (uint8_t)ev;
			} else if (ev) {
				e[n_ev++] = (struct cg_lean_ev){
					(uint8_t)(ev << 1 | 1), (uint8_t)i,
					(uint8_t)a->size, (uint8_t)(at + j) };
			}
		}
		if (i == b->n - 1) {
			h->last = (uint8_t)i;
			h->last_at = (uint8_t)at;
		}
		if (n_ev > 255)
			return false;
	}
	h->n_ev = (uint8_t)n_ev;
	h->len0 = (uint8_t)v[0].len;
	return true;
}

/* lean_data's rest: a reference across lines, or past its set's MRU
 * way. */
static __attribute__((noinline)) void
lean_data_rest(struct cg_model *cg, uint64_t a, unsigned size, unsigned ev,
	       uint64_t *const *rowp)
{
	struct cg_level *c = &cg->d1;
	uint64_t blk = a >> c->line_shift;
	bool miss;

	if (blk == (a + size - 1) >> c->line_shift)
		miss = level_ref_ways(c, c->tags + (blk & c->set_mask) *
						   c->assoc, blk);
	else
		miss = level_ref(c, a, size);
	if (miss)
		cg_d1_miss(cg, a, size, ev, *rowp);
}

/* A data reference of cg_lean_uncounted, event EV (Dr or Dw): inline the
 * common case, one line in its set's MRU way (nothing changes). */
static inline __attribute__((always_inline)) void
lean_data(struct cg_model *cg, uint64_t a, unsigned size, unsigned ev,
	  uint64_t *const *rowp)
{
	unsigned sh = cg->d1.line_shift;
	uint64_t blk = a >> sh;

	if (__builtin_expect(blk == (a + size - 1) >> sh, 1) &&
	    cg->d1.tags[(blk & cg->d1.set_mask) * cg->d1.assoc] == blk)
		return;
	lean_data_rest(cg, a, size, ev, rowp);
}

/* Event E of cg_lean_uncounted (a block's from PC, its addresses ADDR,
 * its rows V) past the common case: a fetch, or a data reference across
 * lines or past its set's MRU way. */
static __attribute__((noinline)) void
lean_rest(struct cg_model *cg, const struct cg_lean_ev *e, uint64_t pc,
	  const uint64_t *addr, const struct model_insn *v)
{
	if (e->op & 1) {
		lean_data_rest(cg, addr[e->b], e->a, e->op >> 1,
			       &v[e->insn].row);
		return;
	}
	uint64_t at = pc + (e->a | (unsigned)e->b << 8);
	unsigned len = e->op >> 1;
	cg->i1_last = (at + len - 1) >> cg->i1.line_shift;
	cg_fetch_lookup(cg, at, len, &v[e->insn].row);
}

/* cg_insns_uncounted from cg_lean_compile's code: the first fetch, then
 * only what may change something (the fetches of other lines, the data
 * references); the rows read only on a miss. */
static void cg_lean_uncounted(struct cache_model *m, uint64_t pc,
			      const uint8_t *code, const struct model_insn *v,
			      const uint64_t *addr, unsigned last_n_acc)
{
	struct cg_model *cg = (struct cg_model *)m;
	const struct cg_lean *h = (const struct cg_lean *)(const void *)code;
	const struct cg_lean_ev *e = (const struct cg_lean_ev *)(h + 1);
	const struct cg_lean_ev *end = e + h->n_ev;
	unsigned sh = cg->i1.line_shift;

	uint64_t last = (pc + h->len0 - 1) >> sh;
	if (last != cg->i1_last || pc >> sh != last) {
		cg->i1_last = last;
		cg_fetch_lookup(cg, pc, h->len0, &v[0].row);
	}
	for (; e < end; e++) {
		/* (inline: a data reference to one line, its set's MRU) */
		if (e->op & 1) {
			uint64_t a = addr[e->b], blk = a >> cg->d1.line_shift;
			if (__builtin_expect(blk == (a + e->a - 1) >>
						   cg->d1.line_shift, 1) &&
			    cg->d1.tags[(blk & cg->d1.set_mask) *
					cg->d1.assoc] == blk)
				continue;
		}
		lean_rest(cg, e, pc, addr, v);
	}
	for (unsigned k = 0; k < last_n_acc; k++)
		if (h->last_ev[k])
			lean_data(cg, addr[h->last_at + k], h->last_size[k],
				  h->last_ev[k], &v[h->last].row);
}

/* What cg_insns counts and cg_insns_uncounted does not, TIMES over. */
static void cg_count_refs(struct cache_model *m, const struct model_insn *v,
			  unsigned n, uint64_t times)
{
	for (unsigned i = 0; i < n; i++) {
		uint64_t *row = v[i].row;
		row[EV_IR] += times;
		for (unsigned j = 0; j < v[i].n_acc; j++) {
			unsigned ev = kind_ev[v[i].acc[j].kind];
			if (ev)
				row[ev] += times;
		}
	}
}

static void none_fetch(struct cache_model *m, uint64_t addr, uint32_t size,
		       uint64_t *row)
{
	row[0]++;
}

static void none_access(struct cache_model *m, const struct mem_access *a,
			uint64_t *row)
{
}

/* Ir only, a run at a time: the engines' fast path (--cache-sim=no ran
 * bench/region.c 2.6x slower than with the caches, one op a fetch). */
static void none_insns(struct cache_model *m, const struct model_insn *v,
		       unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		v[i].row[0]++;
}

/* Cachegrind's layout: "desc: I1 cache:" padded to 24 columns, then
 * "SIZE B, LINE B, N-way associative" or "SIZE B, LINE B, direct-mapped". */
static void describe_level(FILE *out, const char *name,
			   const struct cache_geom *g)
{
	fprintf(out, "desc: %s cache:         %" PRIu64 " B, %" PRIu32 " B, ",
		name, g->size, g->line);
	if (g->assoc == 1)
		fputs("direct-mapped\n", out);
	else
		fprintf(out, "%" PRIu32 "-way associative\n", g->assoc);
}

static void cg_describe(const struct cache_model *m, FILE *out)
{
	const struct cg_model *cg = (const struct cg_model *)m;

	describe_level(out, "I1", &cg->i1.geom);
	describe_level(out, "D1", &cg->d1.geom);
	describe_level(out, "LL", &cg->ll.geom);
}

static void cg_destroy(struct cache_model *m)
{
	struct cg_model *cg = (struct cg_model *)m;

	if (!cg)
		return;
	free(cg->i1.tags);
	free(cg->d1.tags);
	free(cg->ll.tags);
	if (cg->first) {
		free(cg->first->block);
		free(cg->first->epoch);
		free(cg->first);
	}
	free(cg);
}

/* Empty again: the zeroed tags of a new model (the rules above). */
static void cg_flush(struct cache_model *m)
{
	struct cg_model *cg = (struct cg_model *)m;
	struct cg_level *lv[3] = { &cg->i1, &cg->d1, &cg->ll };

	for (unsigned i = 0; i < 3; i++)
		memset(lv[i]->tags, 0, (lv[i]->set_mask + 1) * lv[i]->assoc *
		       sizeof(*lv[i]->tags));
	cg->i1_last = UINT64_MAX;
}

static const struct cache_model_ops cg_ops = {
	.name = "cachegrind",
	.cheap = true,
	.fetch = cg_fetch,
	.access = cg_access,
	.insn = cg_insn,
	.insns = cg_insns,
	.insns_uncounted = cg_insns_uncounted,
	.lean_compile = cg_lean_compile,
	.lean_uncounted = cg_lean_uncounted,
	.count_refs = cg_count_refs,
	.describe = cg_describe,
	.flush = cg_flush,
	.begin_sample = cg_begin_sample,
	.destroy = cg_destroy,
};

static const struct cache_model_ops none_ops = {
	.name = "none",
	.cheap = true,
	.fetch = none_fetch,
	.access = none_access,
	.insns = none_insns,
	.describe = cg_describe,
	.destroy = cg_destroy,
};

static unsigned log2_u32(uint32_t x)
{
	unsigned n = 0;

	while (x > 1) {
		x >>= 1;
		n++;
	}
	return n;
}

/* G has passed cache_geom_check. */
static int level_init(struct cg_level *c, const struct cache_geom *g,
		      bool sim)
{
	uint64_t lines = g->size / g->line;

	c->geom = *g;
	c->assoc = g->assoc;
	c->line_shift = log2_u32(g->line);
	c->set_mask = lines / g->assoc - 1;
	if (!sim)
		return 0;
	/* calloc: Cachegrind's zeroed tags, see the rules above. */
	c->tags = calloc(lines, sizeof(*c->tags));
	return c->tags ? 0 : -1;
}

struct cache_model *cg_cache_new(const struct model_config *cfg, bool sim,
				 char *err, size_t errlen)
{
	struct cg_model *cg = calloc(1, sizeof(*cg));
	const char *bad;

	if (!cg) {
		snprintf(err, errlen, "out of memory for the cache model");
		return NULL;
	}
	cg->base.ops = sim ? &cg_ops : &none_ops;
	cg->i1_last = UINT64_MAX;
	cg->base.n_events = !sim ? 1 : cfg->first_refs ? N_EVENTS_FIRST :
			    N_EVENTS;
	cg->base.event_names = sim ? cg_event_names : none_event_names;
	if ((bad = cache_geom_check("I1 cache", &cfg->i1, err, errlen)) ||
	    (bad = cache_geom_check("D1 cache", &cfg->d1, err, errlen)) ||
	    (bad = cache_geom_check("LL cache", &cfg->ll, err, errlen))) {
		if (bad != err)
			snprintf(err, errlen, "%s", bad);
		free(cg);
		return NULL;
	}
	if (level_init(&cg->i1, &cfg->i1, sim) < 0 ||
	    level_init(&cg->d1, &cfg->d1, sim) < 0 ||
	    level_init(&cg->ll, &cfg->ll, sim) < 0) {
		snprintf(err, errlen, "out of memory for the cache tags "
			 "(LL: %" PRIu64 " lines)", cfg->ll.size / cfg->ll.line);
		cg_destroy(&cg->base);
		return NULL;
	}
	if (sim && cfg->first_refs) {
		cg->first = calloc(1, sizeof(*cg->first));
		if (cg->first) {
			cg->first->mask = 4095;
			cg->first->now = 1;
			cg->first->block = calloc(4096, sizeof(uint64_t));
			cg->first->epoch = calloc(4096, sizeof(uint32_t));
		}
		if (!cg->first || !cg->first->block || !cg->first->epoch) {
			snprintf(err, errlen, "out of memory for the cache "
				 "model");
			cg_destroy(&cg->base);
			return NULL;
		}
	}
	return &cg->base;
}
