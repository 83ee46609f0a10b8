/* The `hier` cache model's construction (the rules are at the top of
 * hier.c): the levels checked and allocated, each core's paths, the
 * upper and foreign lists, the events; the --cache spec syntax,
 * --model=hier's constructor and hier_check for the tests. */
#include "model.h"
#include "models.h"
#include "parse.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "hier_private.h"

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
