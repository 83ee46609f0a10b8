/* The `hier` cache model's ops (the rules are at the top of hier.c):
 * fetch and access through the levels, the desc: lines, the report
 * (misses per level, prefetchers, coherence's most shared lines), flush
 * and destroy. */
#include "model.h"
#include "models.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "hier_private.h"

#define REPORT_TOP 10
#define MAX_SPAN 16		/* lines of one reference handled whole */

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

/* A run of instructions, each its fetch then its accesses: the engines'
 * fast path (one op a fetch or an access took them to the slow one). */
static void hier_insns(struct cache_model *m, const struct model_insn *v,
		       unsigned n)
{
	for (unsigned i = 0; i < n; i++) {
		hier_fetch(m, v[i].pc, v[i].len, v[i].row);
		for (unsigned k = 0; k < v[i].n_acc; k++)
			hier_access(m, &v[i].acc[k], v[i].row);
	}
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

void hier_destroy(struct cache_model *m)
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

const struct cache_model_ops hier_ops = {
	.name = "hier",
	.fetch = hier_fetch,
	.access = hier_access,
	.insns = hier_insns,
	.describe = hier_describe,
	.set_core = hier_set_core,
	.report = hier_report,
	.flush = hier_flush,
	.destroy = hier_destroy,
};
