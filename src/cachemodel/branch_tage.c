/* The `tage` branch model: a TAGE conditional predictor (Seznec and
 * Michaud, 2006, in its plain form), a global-history BTB for indirect
 * branches and a return-address stack.
 *
 * Rules, in plain words:
 * - Conditional: a bimodal table of 2-bit counters (pc & mask) and T tagged
 *   tables; table i is indexed and tagged by the pc hashed with the last
 *   L(i) outcomes (folded by XOR), L geometric from minhist to maxhist.
 *   (Folded incrementally, Seznec's way: each outcome shifts in, the one
 *   L(i) back shifts out.)  The prediction comes from the longest-history table whose tag matches
 *   (the provider), else from the bimodal table.  Update: the provider's
 *   3-bit counter moves towards the outcome; its 2-bit useful counter goes
 *   up when it was right and the next matching table (or bimodal) would
 *   have been wrong, down in the opposite case; on a mispredict one entry
 *   of a longer table with useful 0 is taken (the shortest such), else all
 *   longer candidates' useful counters drop by one.  Every 256K branches
 *   all useful counters halve.  The outcome then enters the history.
 * - Indirect jumps and calls: a BTB indexed by the pc holds the last
 *   target; a second table indexed by the pc hashed with the path (the last
 *   indirect targets, 5 bits a target, 30 bits) holds targets with a 2-bit
 *   confidence and predicts when its pc matches (ITTAGE's idea with one
 *   tagged table).  It gets an entry when the BTB mispredicted; a wrong
 *   entry loses confidence and at 0 takes the new target.  A predicted
 *   target differing from the real one (or none) is a mispredict (Bim).
 * - Calls push their return address on the RAS (wrapping when full, the
 *   oldest entry lost); a return pops it: a different or missing address is
 *   a return mispredict (Brm).  Returns count Br. */
#include "model.h"
#include "models.h"

#include <stdlib.h>
#include <string.h>

#define MAX_TABLES 8
#define HIST_WORDS 5		/* 256 bits of history and the one leaving */
#define U_RESET_PERIOD (256u * 1024)

enum { EV_BC, EV_BCM, EV_BI, EV_BIM, EV_BR, EV_BRM, N_EVENTS };

static const char *const event_names[N_EVENTS] = {
	"Bc", "Bcm", "Bi", "Bim", "Br", "Brm"
};

struct tage_entry {
	uint16_t tag;
	int8_t ctr;		/* -4..3: >= 0 predicts taken */
	uint8_t u;		/* 0..3 */
};

/* The last LEN outcomes folded into WIDTH bits, kept up to date with each
 * outcome in O(1) (Seznec's folded history registers). */
struct folded {
	uint32_t comp;
	unsigned len, width;
};

struct btb_entry {
	uint64_t pc, target;
};

/* The path-indexed indirect table: a target seen after this path. */
struct ind_entry {
	uint64_t pc, target;
	uint8_t conf;		/* 0..3: replaced at 0 */
};

struct tage_branch {
	struct branch_model base;
	struct tage_params p;
	uint64_t hist[HIST_WORDS];	/* bit 0 = the last outcome */
	unsigned hlen[MAX_TABLES];
	struct folded f_idx[MAX_TABLES], f_tag[MAX_TABLES], f_tag2[MAX_TABLES];
	uint64_t path;		/* hash of the last indirect targets */
	uint8_t *bimodal;
	struct tage_entry *tables[MAX_TABLES];
	struct btb_entry *btb;
	struct ind_entry *ind;
	uint64_t *ras;
	unsigned ras_top, ras_depth;
	uint32_t n_branches;
	unsigned btb_bits;
};

static const struct tage_params defaults = {
	.tables = 4, .bits = 10, .base_bits = 14, .min_hist = 4,
	.max_hist = 128, .tag_bits = 9, .btb = 4096, .ras = 32,
};

int tage_parse_opts(const char *s, struct tage_params *out, char *err,
		    size_t errlen)
{
	static const struct { const char *key; size_t off; unsigned lo, hi; }
	keys[] = {
		{ "tables", offsetof(struct tage_params, tables), 1, MAX_TABLES },
		{ "bits", offsetof(struct tage_params, bits), 4, 20 },
		{ "base", offsetof(struct tage_params, base_bits), 4, 24 },
		{ "minhist", offsetof(struct tage_params, min_hist), 1, 256 },
		{ "maxhist", offsetof(struct tage_params, max_hist), 1, 256 },
		{ "tagbits", offsetof(struct tage_params, tag_bits), 4, 15 },
		{ "btb", offsetof(struct tage_params, btb), 1, 1u << 20 },
		{ "ras", offsetof(struct tage_params, ras), 1, 4096 },
	};
	struct tage_params p = defaults;
	const char *q = s;

	while (s && *q) {
		size_t len = strcspn(q, ","), klen = strcspn(q, "=,");
		size_t i;
		char *end;
		unsigned long v;

		for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
			if (strlen(keys[i].key) == klen &&
			    !strncmp(q, keys[i].key, klen))
				break;
		if (i == sizeof(keys) / sizeof(keys[0]) || q[klen] != '=') {
			snprintf(err, errlen, "unknown key '%.*s' (tables bits "
				 "base minhist maxhist tagbits btb ras)",
				 (int)klen, q);
			return -1;
		}
		v = strtoul(q + klen + 1, &end, 10);
		if (end == q + klen + 1 || end != q + len || v < keys[i].lo ||
		    v > keys[i].hi) {
			snprintf(err, errlen, "%s: %u to %u, not '%.*s'",
				 keys[i].key, keys[i].lo, keys[i].hi,
				 (int)(len - klen - 1), q + klen + 1);
			return -1;
		}
		*(unsigned *)((char *)&p + keys[i].off) = (unsigned)v;
		q += len;
		if (*q)
			q++;
	}
	if (p.min_hist > p.max_hist) {
		snprintf(err, errlen, "minhist %u above maxhist %u", p.min_hist,
			 p.max_hist);
		return -1;
	}
	if (p.btb & (p.btb - 1)) {
		snprintf(err, errlen, "btb: a power of two, not %u", p.btb);
		return -1;
	}
	if (out)
		*out = p;
	return 0;
}

static unsigned hist_bit(const struct tage_branch *b, unsigned pos)
{
	return (unsigned)(b->hist[pos / 64] >> (pos % 64)) & 1;
}

/* After the history shifted: the new outcome enters, bit LEN leaves. */
static void folded_update(struct folded *f, const struct tage_branch *b)
{
	uint32_t c = f->comp;

	c = (c << 1) ^ hist_bit(b, 0);
	c ^= (uint32_t)hist_bit(b, f->len) << (f->len % f->width);
	c ^= c >> f->width;
	f->comp = c & ((1u << f->width) - 1);
}

static unsigned t_index(const struct tage_branch *b, unsigned t, uint64_t pc)
{
	unsigned k = b->p.bits;

	return (unsigned)((pc ^ (pc >> k) ^ (pc >> (2 * k)) ^ (t * 0x9e5u) ^
			   b->f_idx[t].comp) & ((1u << k) - 1));
}

static uint16_t t_tag(const struct tage_branch *b, unsigned t, uint64_t pc)
{
	unsigned k = b->p.tag_bits;

	return (uint16_t)((pc ^ (pc >> 7) ^ b->f_tag[t].comp ^
			   (b->f_tag2[t].comp << 1)) & ((1u << k) - 1));
}

static void shift_history(struct tage_branch *b, bool taken)
{
	for (unsigned w = HIST_WORDS - 1; w > 0; w--)
		b->hist[w] = (b->hist[w] << 1) | (b->hist[w - 1] >> 63);
	b->hist[0] = (b->hist[0] << 1) | (taken ? 1 : 0);
	for (unsigned t = 0; t < b->p.tables; t++) {
		folded_update(&b->f_idx[t], b);
		folded_update(&b->f_tag[t], b);
		folded_update(&b->f_tag2[t], b);
	}
}

static void tage_cond(struct branch_model *m, uint64_t pc, bool taken,
		      uint64_t *row)
{
	struct tage_branch *b = (struct tage_branch *)m;
	unsigned idx[MAX_TABLES];
	uint16_t tag[MAX_TABLES];
	int provider = -1, alt = -1;
	uint8_t *bc = &b->bimodal[pc & ((1u << b->p.base_bits) - 1)];
	bool base_pred = *bc >= 2, pred, alt_pred;

	for (unsigned t = 0; t < b->p.tables; t++) {
		idx[t] = t_index(b, t, pc);
		tag[t] = t_tag(b, t, pc);
	}
	for (int t = (int)b->p.tables - 1; t >= 0; t--) {
		if (b->tables[t][idx[t]].tag == tag[t]) {
			if (provider < 0)
				provider = t;
			else {
				alt = t;
				break;
			}
		}
	}
	alt_pred = alt >= 0 ? b->tables[alt][idx[alt]].ctr >= 0 : base_pred;
	pred = provider >= 0 ? b->tables[provider][idx[provider]].ctr >= 0 :
		base_pred;
	row[EV_BC]++;
	if (pred != taken)
		row[EV_BCM]++;

	if (provider >= 0) {
		struct tage_entry *e = &b->tables[provider][idx[provider]];

		if (taken && e->ctr < 3)
			e->ctr++;
		else if (!taken && e->ctr > -4)
			e->ctr--;
		if (pred != alt_pred) {
			if (pred == taken && e->u < 3)
				e->u++;
			else if (pred != taken && e->u > 0)
				e->u--;
		}
	} else if (taken && *bc < 3) {
		(*bc)++;
	} else if (!taken && *bc > 0) {
		(*bc)--;
	}
	if (pred != taken) {
		bool done = false;

		for (unsigned t = (unsigned)(provider + 1); t < b->p.tables; t++) {
			struct tage_entry *e = &b->tables[t][idx[t]];

			if (!e->u) {
				*e = (struct tage_entry){ tag[t],
							  (int8_t)(taken ? 0 : -1),
							  0 };
				done = true;
				break;
			}
		}
		for (unsigned t = (unsigned)(provider + 1); !done &&
		     t < b->p.tables; t++)
			b->tables[t][idx[t]].u--;
	}
	if (++b->n_branches % U_RESET_PERIOD == 0)
		for (unsigned t = 0; t < b->p.tables; t++)
			for (unsigned i = 0; i < 1u << b->p.bits; i++)
				b->tables[t][i].u >>= 1;
	shift_history(b, taken);
}

static void tage_indirect(struct branch_model *m, uint64_t pc,
			  uint64_t target, uint64_t *row)
{
	struct tage_branch *b = (struct tage_branch *)m;
	uint64_t mask = b->p.btb - 1;
	struct btb_entry *e = &b->btb[pc & mask];
	struct ind_entry *p = &b->ind[(pc ^ (pc >> b->btb_bits) ^ b->path) &
				      mask];
	bool path_hit = p->pc == pc && p->conf;
	uint64_t pred = path_hit ? p->target : e->pc == pc ? e->target : 0;

	row[EV_BI]++;
	if (pred != target)
		row[EV_BIM]++;
	if (path_hit) {
		if (p->target == target) {
			if (p->conf < 3)
				p->conf++;
		} else if (--p->conf == 0) {
			p->target = target;
			p->conf = 1;
		}
	} else if (pred != target) {
		*p = (struct ind_entry){ pc, target, 1 };
	}
	e->pc = pc;
	e->target = target;
	b->path = ((b->path << 5) ^ (target >> 2) ^ (target >> 13)) &
		  ((1ULL << 30) - 1);
}

static void tage_call(struct branch_model *m, uint64_t pc, uint64_t ret,
		      uint64_t *row)
{
	struct tage_branch *b = (struct tage_branch *)m;

	b->ras[b->ras_top] = ret;
	b->ras_top = (b->ras_top + 1) % b->p.ras;
	if (b->ras_depth < b->p.ras)
		b->ras_depth++;
}

static void tage_ret(struct branch_model *m, uint64_t pc, uint64_t target,
		     uint64_t *row)
{
	struct tage_branch *b = (struct tage_branch *)m;

	row[EV_BR]++;
	if (!b->ras_depth) {
		row[EV_BRM]++;
		return;
	}
	b->ras_top = (b->ras_top + b->p.ras - 1) % b->p.ras;
	b->ras_depth--;
	if (b->ras[b->ras_top] != target)
		row[EV_BRM]++;
}

/* min * f^t with f^(tables-1) = max/min, f found by bisection (no libm). */
static void geometric_lengths(const struct tage_params *p, unsigned *hlen)
{
	double ratio = (double)p->max_hist / (double)p->min_hist;
	double lo = 1.0, hi = ratio, f = 1.0, l = (double)p->min_hist;

	for (int it = 0; p->tables > 1 && it < 100; it++) {
		double mid = (lo + hi) / 2, x = 1.0;

		for (unsigned i = 0; i + 1 < p->tables; i++)
			x *= mid;
		if (x < ratio)
			lo = mid;
		else
			hi = mid;
		f = mid;
	}
	for (unsigned t = 0; t < p->tables; t++) {
		hlen[t] = (unsigned)(l + 0.5);
		l *= f;
	}
	if (p->tables > 1)
		hlen[p->tables - 1] = p->max_hist;
}

static void tage_destroy(struct branch_model *m)
{
	struct tage_branch *b = (struct tage_branch *)m;

	if (!b)
		return;
	free(b->bimodal);
	for (unsigned t = 0; t < MAX_TABLES; t++)
		free(b->tables[t]);
	free(b->btb);
	free(b->ind);
	free(b->ras);
	free(b);
}

/* Empty tables and histories: the state tage_branch_new leaves. */
static void tage_flush(struct branch_model *m)
{
	struct tage_branch *b = (struct tage_branch *)m;

	memset(b->hist, 0, sizeof(b->hist));
	for (unsigned t = 0; t < b->p.tables; t++) {
		b->f_idx[t].comp = b->f_tag[t].comp = b->f_tag2[t].comp = 0;
		for (unsigned i = 0; i < 1u << b->p.bits; i++)
			b->tables[t][i] = (struct tage_entry){ .tag = 0xffff };
	}
	b->path = 0;
	memset(b->bimodal, 0, 1u << b->p.base_bits);
	memset(b->btb, 0, b->p.btb * sizeof(*b->btb));
	memset(b->ind, 0, b->p.btb * sizeof(*b->ind));
	memset(b->ras, 0, b->p.ras * sizeof(*b->ras));
	b->ras_top = b->ras_depth = 0;
	b->n_branches = 0;
}

static const struct branch_model_ops tage_ops = {
	.name = "tage",
	.cond = tage_cond,
	.indirect = tage_indirect,
	.call = tage_call,
	.ret = tage_ret,
	.flush = tage_flush,
	.destroy = tage_destroy,
};

struct branch_model *tage_branch_new(const struct model_config *cfg,
				     char *err, size_t errlen)
{
	struct tage_branch *b = calloc(1, sizeof(*b));
	const char *opts = cfg ? model_option(cfg, "branch-opts") : NULL;
	bool ok;

	if (!b) {
		snprintf(err, errlen, "out of memory for the branch model");
		return NULL;
	}
	b->base.ops = &tage_ops;
	b->base.n_events = N_EVENTS;
	b->base.event_names = event_names;
	if (tage_parse_opts(opts, &b->p, err, errlen) < 0) {
		free(b);
		return NULL;
	}
	geometric_lengths(&b->p, b->hlen);
	for (unsigned x = b->p.btb; x > 1; x >>= 1)
		b->btb_bits++;
	for (unsigned t = 0; t < b->p.tables; t++) {
		b->f_idx[t] = (struct folded){ 0, b->hlen[t], b->p.bits };
		b->f_tag[t] = (struct folded){ 0, b->hlen[t], b->p.tag_bits };
		b->f_tag2[t] = (struct folded){ 0, b->hlen[t], b->p.tag_bits - 1 };
	}

	b->bimodal = calloc(1u << b->p.base_bits, 1);
	ok = b->bimodal != NULL;
	for (unsigned t = 0; ok && t < b->p.tables; t++) {
		b->tables[t] = calloc(1u << b->p.bits, sizeof(struct tage_entry));
		ok = b->tables[t] != NULL;
	}
	b->btb = calloc(b->p.btb, sizeof(*b->btb));
	b->ind = calloc(b->p.btb, sizeof(*b->ind));
	b->ras = calloc(b->p.ras, sizeof(*b->ras));
	if (!ok || !b->btb || !b->ind || !b->ras) {
		snprintf(err, errlen, "out of memory for the tage tables");
		tage_destroy(&b->base);
		return NULL;
	}
	/* Tags start at 0, which is a valid tag: mark every entry empty with
	 * an impossible one. */
	for (unsigned t = 0; t < b->p.tables; t++)
		for (unsigned i = 0; i < 1u << b->p.bits; i++)
			b->tables[t][i].tag = 0xffff;
	return &b->base;
}
