/* The per-pc cost table: rows zeroed on first use, stable pointers across
 * growth, first-seen iteration order, memory proportional to distinct pcs. */
#include "costs.h"

#include <inttypes.h>
#include <stdint.h>

#include "helpers.h"

#define N 200000u

/* A scrambled but reproducible pc sequence with collisions in the low
 * bits (instruction addresses are dense and often aligned). */
static uint64_t pc_of(unsigned i)
{
	return 0x400000u + (uint64_t)((i * 2654435761u) % (N * 7u)) * 16u;
}

int main(void)
{
	struct cost_table *t = costs_new(3);
	uint64_t **rows = calloc(N, sizeof(*rows));
	uint64_t *first_pc = calloc(N, sizeof(*first_pc));
	size_t n_distinct = 0, mem_small, mem_big;

	CHECK(costs_n_events(t) == 3, "n_events %u", costs_n_events(t));
	CHECK(costs_count(t) == 0, "empty table has %zu rows", costs_count(t));
	mem_small = costs_memory(t);

	/* N distinct pcs (the multiplier is odd and N * 7 > N: no repeats) */
	for (unsigned i = 0; i < N; i++) {
		uint64_t *r = costs_row(t, pc_of(i));

		CHECK(r[0] == 0 && r[1] == 0 && r[2] == 0,
		      "new row %u not zeroed", i);
		r[0] = i;
		r[1] = 2 * (uint64_t)i + 1;
		r[2] = ~(uint64_t)i;
		rows[i] = r;
		first_pc[n_distinct++] = pc_of(i);
		if (test_failures > 5)
			break;
	}
	CHECK(costs_count(t) == N, "count %zu, want %u", costs_count(t), N);

	/* pointers from before the growth still point at the same rows */
	for (unsigned i = 0; i < N; i++) {
		uint64_t *r = costs_row(t, pc_of(i));

		CHECK(r == rows[i], "row %u moved", i);
		CHECK(r[0] == i && r[1] == 2 * (uint64_t)i + 1
		      && r[2] == ~(uint64_t)i, "row %u lost its counts", i);
		if (test_failures > 5)
			break;
	}
	CHECK(costs_count(t) == N, "lookups added rows: %zu", costs_count(t));

	/* iteration in first-seen order, rows matching */
	for (size_t i = 0; i < costs_count(t); i++) {
		CHECK(costs_pc_at(t, i) == first_pc[i], "pc_at(%zu) = %" PRIx64
		      ", want %" PRIx64, i, costs_pc_at(t, i), first_pc[i]);
		CHECK(costs_row_at(t, i) == rows[i], "row_at(%zu)", i);
		if (test_failures > 5)
			break;
	}

	/* adds through a kept pointer are seen by a later lookup */
	rows[123][1] += 1000;
	CHECK(costs_row(t, pc_of(123))[1] == 2 * 123 + 1 + 1000, "kept pointer");

	/* pc 0 and the largest pc are ordinary keys */
	costs_row(t, 0)[0] = 7;
	costs_row(t, UINT64_MAX)[2] = 9;
	CHECK(costs_row(t, 0)[0] == 7 && costs_row(t, UINT64_MAX)[2] == 9
	      && costs_count(t) == N + 2, "pc 0 / ~0");
	CHECK(costs_pc_at(t, N) == 0 && costs_pc_at(t, N + 1) == UINT64_MAX,
	      "order of the last two");

	/* memory grows with distinct pcs: at least the counters, and not
	 * absurdly more than counters + pcs + a hash slot per pc (x4 slack) */
	mem_big = costs_memory(t);
	CHECK(mem_big >= (size_t)N * 3 * 8, "memory %zu too small", mem_big);
	CHECK(mem_big <= (size_t)N * (3 * 8 + 8 + 4) * 4,
	      "memory %zu too big for %u rows", mem_big, N);
	CHECK(mem_small < 64 * 1024, "empty table holds %zu bytes", mem_small);
	costs_free(t);

	/* a table with one event, and one with many */
	t = costs_new(1);
	for (unsigned i = 0; i < 5000; i++)
		costs_row(t, i % 100)[0]++;
	CHECK(costs_count(t) == 100, "count %zu", costs_count(t));
	for (size_t i = 0; i < 100; i++)
		CHECK(costs_pc_at(t, i) == i && costs_row_at(t, i)[0] == 50,
		      "pc %zu: %" PRIu64, i, costs_row_at(t, i)[0]);
	costs_free(t);
	t = costs_new(13);
	costs_row(t, 0x401000)[12] = 5;
	CHECK(costs_row(t, 0x401001)[0] == 0 && costs_row(t, 0x401000)[12] == 5,
	      "13 events");
	costs_free(t);
	costs_free(NULL);

	free(rows);
	free(first_pc);
	return test_summary("test-costs");
}
