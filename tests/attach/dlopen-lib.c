/* The library dlopen.sh's driver loads: foo_work does loads, stores,
 * conditional branches and indirect calls, and calls nothing outside the
 * library (no PLT), so its counts are its own. */
#include <stdint.h>

#define N 4096

uint64_t foo_table[N];

static __attribute__((noinline)) uint64_t foo_helper(uint64_t x)
{
	return x * 2654435761u ^ (x >> 7);
}

static uint64_t add_one(uint64_t x) { return x + 1; }
static uint64_t twice(uint64_t x) { return x * 2; }

uint64_t foo_work(unsigned rounds);
uint64_t foo_work(unsigned rounds)
{
	uint64_t (*volatile ops[2])(uint64_t) = { add_one, twice };
	uint64_t sum = 0;
	for (unsigned r = 0; r < rounds; r++)
		for (unsigned i = 0; i < N; i += 3) {
			foo_table[i] = foo_helper(i + r);
			if (foo_table[i] & 1)
				sum += foo_table[(i * 7) % N];
			else
				sum = ops[i & 1](sum);
		}
	return sum;
}
