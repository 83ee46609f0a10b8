/* cpuid inside the region, 300 times, each answer stored: a single step
 * over cpuid traps one instruction late under some hypervisors (the next
 * instruction then ran unseen), so cachetrace executes cpuid itself.
 * Cachegrind counts cpuid as one instruction with no data access; the
 * stores after it are ordinary Dw.  Nothing here branches on the
 * answers, which differ under valgrind (its own CPU) and natively.
 * The store right after cpuid is the dynamic loader's pattern (cpuid;
 * mov %eax, mem), which a late step used to hide. */
#include <stdio.h>

#define N 300

static volatile unsigned out[8][4];
static volatile unsigned sink;

__attribute__((noinline)) long work(void)
{
	for (unsigned i = 0; i < N; i++) {
		unsigned a = i & 1, b, c = 0, d;	/* leaves 0 and 1 */

		__asm__ volatile("cpuid\n\tmovl %%eax, %0"
				 : "=m"(out[i & 7][0]), "+a"(a), "=b"(b),
				   "+c"(c), "=d"(d));
		out[i & 7][1] = b;
		out[i & 7][2] = c;
		out[i & 7][3] = d;
	}
	return out[0][0] != 0;	/* leaf 0's largest leaf: never 0 */
}

int main(void)
{
	long r = work();

	sink = out[1][0];
	printf("cpuid: %ld\n", r);
	return 0;
}
