/* Costs per instruction address.
 *
 * Rows live in chunks of ROWS_PER_CHUNK rows that are never moved or
 * freed before costs_free, so a row pointer handed out stays valid while
 * the table grows.  Row i (first-seen order) is chunk i / ROWS_PER_CHUNK,
 * slot i % ROWS_PER_CHUNK; its pc is kept in a parallel array in the same
 * chunk.  The shared hash table (hashtab.h) maps pc -> row index.
 *
 * The hot path, costs_row on a known pc, is one hash and a short probe. */
#include "costs.h"

#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "hashtab.h"

#define ROWS_PER_CHUNK	1024u

struct cost_chunk {
	uint64_t pcs[ROWS_PER_CHUNK];
	uint64_t counts[];		/* ROWS_PER_CHUNK * n_events */
};

struct cost_table {
	unsigned n_events;
	size_t n_rows;			/* distinct pcs seen */
	struct cost_chunk **chunks;	/* the chunk pointer array may move,
					 * the chunks never do */
	size_t n_chunks, chunks_cap;
	struct hashtab map;		/* pc -> row index */
};

struct cost_table *costs_new(unsigned n_events)
{
	struct cost_table *t = xcalloc(1, sizeof(*t));

	t->n_events = n_events;
	return t;
}

void costs_free(struct cost_table *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->n_chunks; i++)
		free(t->chunks[i]);
	free(t->chunks);
	hashtab_free(&t->map);
	free(t);
}

void costs_clear(struct cost_table *t)
{
	for (size_t c = 0; c * ROWS_PER_CHUNK < t->n_rows; c++) {
		size_t used = t->n_rows - c * ROWS_PER_CHUNK;
		if (used > ROWS_PER_CHUNK)
			used = ROWS_PER_CHUNK;
		memset(t->chunks[c]->counts, 0,
		       used * t->n_events * sizeof(uint64_t));
	}
	t->n_rows = 0;
	hashtab_clear(&t->map);
}

static inline uint64_t *row_ptr(const struct cost_table *t, size_t i)
{
	struct cost_chunk *c = t->chunks[i / ROWS_PER_CHUNK];

	return c->counts + (size_t)(i % ROWS_PER_CHUNK) * t->n_events;
}

static inline uint64_t pc_of(const struct cost_table *t, size_t i)
{
	return t->chunks[i / ROWS_PER_CHUNK]->pcs[i % ROWS_PER_CHUNK];
}

static uint64_t row_hash(const void *ctx, uint32_t i)
{
	return hash_u64(pc_of(ctx, i));
}

/* Slow path: PC is new, P the probe that did not find it. */
static uint64_t *new_row(struct cost_table *t, uint64_t pc,
			 const struct hashtab_probe *p)
{
	size_t i = t->n_rows;

	if (i % ROWS_PER_CHUNK == 0 && i / ROWS_PER_CHUNK == t->n_chunks) {
		if (t->n_chunks == t->chunks_cap) {
			t->chunks_cap = t->chunks_cap ? 2 * t->chunks_cap : 16;
			t->chunks = xreallocarray(t->chunks, t->chunks_cap,
						  sizeof(*t->chunks));
		}
		t->chunks[t->n_chunks++] = xcalloc(1, sizeof(struct cost_chunk)
			+ (size_t)ROWS_PER_CHUNK * t->n_events
			  * sizeof(uint64_t));
	}
	t->chunks[i / ROWS_PER_CHUNK]->pcs[i % ROWS_PER_CHUNK] = pc;
	t->n_rows++;
	hashtab_insert(&t->map, p, (uint32_t)i, row_hash, t);
	/* Chunks come zeroed from xcalloc, and costs_clear. */
	return row_ptr(t, i);
}

uint64_t *costs_row(struct cost_table *t, uint64_t pc)
{
	struct hashtab_probe p;

	for (uint32_t i = hashtab_first(&t->map, hash_u64(pc), &p);
	     i != HASHTAB_NONE; i = hashtab_next(&t->map, &p))
		if (pc_of(t, i) == pc)
			return row_ptr(t, i);
	return new_row(t, pc, &p);
}

unsigned costs_n_events(const struct cost_table *t)
{
	return t->n_events;
}

size_t costs_count(const struct cost_table *t)
{
	return t->n_rows;
}

uint64_t costs_pc_at(const struct cost_table *t, size_t i)
{
	return pc_of(t, i);
}

const uint64_t *costs_row_at(const struct cost_table *t, size_t i)
{
	return row_ptr(t, i);
}

size_t costs_memory(const struct cost_table *t)
{
	return sizeof(*t)
		+ t->chunks_cap * sizeof(*t->chunks)
		+ t->n_chunks * (sizeof(struct cost_chunk)
			+ (size_t)ROWS_PER_CHUNK * t->n_events
			  * sizeof(uint64_t))
		+ hashtab_memory(&t->map);
}
