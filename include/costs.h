/* Costs per instruction address, kept while stepping.
 *
 * A row is an array of n_events uint64_t counters, zeroed when the pc is
 * first seen.  Row pointers stay valid until costs_free (rows live in
 * chunks that never move), so the stepping loop may keep them. */
#ifndef CT_COSTS_H
#define CT_COSTS_H

#include <stddef.h>
#include <stdint.h>

struct cost_table;

struct cost_table *costs_new(unsigned n_events);
void costs_free(struct cost_table *t);
/* Empty T for use again: its memory kept (a sampled run's tables, one
 * a sample, come and go hundreds of times). */
void costs_clear(struct cost_table *t);

/* The row of PC, created on first use. */
uint64_t *costs_row(struct cost_table *t, uint64_t pc);

unsigned costs_n_events(const struct cost_table *t);
/* Number of distinct pcs. */
size_t costs_count(const struct cost_table *t);
/* The I-th pc and its row, 0 <= I < costs_count(), in first-seen order. */
uint64_t costs_pc_at(const struct cost_table *t, size_t i);
const uint64_t *costs_row_at(const struct cost_table *t, size_t i);

/* Bytes of memory held (for the memory benchmark). */
size_t costs_memory(const struct cost_table *t);

#endif
