/* A target for data watchpoints: before() runs, then set_counter() writes
 * the global counter once, after() runs, set_done() writes done, tail()
 * runs. set_counter and set_done are one store and a ret each. */
#include <stdio.h>

volatile unsigned counter, done;
static volatile unsigned sink[64];

#define BODY(n) { unsigned s = seed; \
	for (unsigned i = 0; i < (n); i++) { s = s * 69069u + 1u; \
		sink[i & 63] = s; } return s; }
__attribute__((noinline)) unsigned before(unsigned seed) BODY(200)
__attribute__((noinline)) unsigned after(unsigned seed) BODY(100)
__attribute__((noinline)) unsigned tail(unsigned seed) BODY(150)
__attribute__((noinline)) void set_counter(void) { counter = 1; }
__attribute__((noinline)) void set_done(void) { done = 1; }

int main(void)
{
	unsigned s = before(1);

	set_counter();
	s += after(2);
	set_done();
	s += tail(3);
	printf("checksum %u\n", s);
	return 0;
}
