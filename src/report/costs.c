/* Costs per instruction address.
 *
 * Rows live in chunks of ROWS_PER_CHUNK rows that are never moved or
 * freed before costs_free, so a row pointer handed out stays valid while
 * the table grows.  Row i (first-seen order) is chunk i / ROWS_PER_CHUNK,
 * slot i % ROWS_PER_CHUNK; its pc is kept in a parallel array in the same
 * chunk.  An open-addressing hash (linear probing, power-of-two size, at
 * most half full) maps pc -> row index + 1 (0 marks an empty slot).
 *
 * The hot path, costs_row on a known pc, is one hash and a short probe. */
#include "costs.h"

#include <stdlib.h>
#include <string.h>

#include "error.h"

#define ROWS_PER_CHUNK	1024u
#define MIN_HASH	1024u

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
	uint32_t *hash;			/* row index + 1, 0 = empty */
	size_t hash_mask;		/* hash size - 1 */
};

static inline size_t hash_pc(uint64_t pc)
{
	/* Fibonacci hashing: pcs are dense and aligned oddly, spread them. */
	return (size_t)((pc * 0x9e3779b97f4a7c15ull) >> 32);
}

struct cost_table *costs_new(unsigned n_events)
{
	struct cost_table *t = xcalloc(1, sizeof(*t));

	t->n_events = n_events;
	t->hash = xcalloc(MIN_HASH, sizeof(*t->hash));
	t->hash_mask = MIN_HASH - 1;
	return t;
}

void costs_free(struct cost_table *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->n_chunks; i++)
		free(t->chunks[i]);
	free(t->chunks);
	free(t->hash);
	free(t);
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

static void grow_hash(struct cost_table *t)
{
	size_t size = (t->hash_mask + 1) * 2;
	uint32_t *h = xcalloc(size, sizeof(*h));

	for (size_t i = 0; i < t->n_rows; i++) {
		size_t j = hash_pc(pc_of(t, i)) & (size - 1);

		while (h[j])
			j = (j + 1) & (size - 1);
		h[j] = (uint32_t)(i + 1);
	}
	free(t->hash);
	t->hash = h;
	t->hash_mask = size - 1;
}

/* Slow path: PC is new, its hash slot is J. */
static uint64_t *new_row(struct cost_table *t, uint64_t pc, size_t j)
{
	size_t i = t->n_rows;

	if (i % ROWS_PER_CHUNK == 0) {
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
	t->hash[j] = (uint32_t)(i + 1);
	if (t->n_rows * 2 > t->hash_mask + 1)
		grow_hash(t);
	/* Chunks come zeroed from xcalloc. */
	return row_ptr(t, i);
}

uint64_t *costs_row(struct cost_table *t, uint64_t pc)
{
	size_t j = hash_pc(pc) & t->hash_mask;
	uint32_t r;

	while ((r = t->hash[j]) != 0) {
		if (pc_of(t, r - 1) == pc)
			return row_ptr(t, r - 1);
		j = (j + 1) & t->hash_mask;
	}
	return new_row(t, pc, j);
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
		+ (t->hash_mask + 1) * sizeof(*t->hash);
}
