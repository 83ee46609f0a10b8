/* rep-prefixed string instructions in the program's own code (inline
 * asm), so their accounting is compared in a function of ours:
 * Cachegrind counts Ir = count + 1 for count >= 1, 1 for count 0, and one
 * data access per element. The counts are read from volatile globals:
 * when valgrind's JIT sees a constant count (a constant argument, inlined
 * or chased into the callee's superblock) it folds away the first
 * "rcx == 0" exit and Cachegrind then counts one conditional branch fewer
 * (Bc = count instead of count + 1; checked with a separate program).
 * A native tracer cannot see that, so the test avoids it. */
#include <stdio.h>

static unsigned char a[8192] __attribute__((aligned(64)));
static unsigned char b[8192] __attribute__((aligned(64)));
static volatile long sink;
static volatile unsigned long n0 = 0, n1 = 1, n100 = 100, n300 = 300,
	n512 = 512, n1000 = 1000, n3001 = 3001, n5000 = 5000;

__attribute__((noinline)) static void rep_stosb(void *d, int c, unsigned long n)
{
	__asm__ volatile("rep stosb" : "+D"(d), "+c"(n) : "a"(c) : "memory");
}

__attribute__((noinline)) static void rep_movsb(void *d, const void *s, unsigned long n)
{
	__asm__ volatile("rep movsb" : "+D"(d), "+S"(s), "+c"(n) : : "memory");
}

__attribute__((noinline)) static void rep_movsq(void *d, const void *s, unsigned long n)
{
	__asm__ volatile("rep movsq" : "+D"(d), "+S"(s), "+c"(n) : : "memory");
}

__attribute__((noinline)) static void rep_stosq(void *d, unsigned long v, unsigned long n)
{
	__asm__ volatile("rep stosq" : "+D"(d), "+c"(n) : "a"(v) : "memory");
}

__attribute__((noinline)) static long repe_cmpsb(const void *x, const void *y, unsigned long n)
{
	__asm__ volatile("repe cmpsb" : "+D"(x), "+S"(y), "+c"(n) : : "memory", "cc");
	return (long)n;
}

__attribute__((noinline)) static long repne_scasb(const void *s, int c, unsigned long n)
{
	__asm__ volatile("repne scasb" : "+D"(s), "+c"(n) : "a"(c) : "memory", "cc");
	return (long)n;
}

__attribute__((noinline)) long work(void)
{
	long r;

	rep_stosb(a, 1, n5000);
	rep_stosb(a, 2, n0);		/* count 0: one Ir, no access */
	rep_stosb(a + 3, 7, n1);
	rep_movsb(b, a + 1, n3001);
	rep_movsq(b, a, n512);
	rep_stosq(a + 4096, 0x0101010101010101ul, n300);
	rep_stosb(b, 1, n1000);
	b[700] = 9;
	r = repe_cmpsb(a + 4096, b, n1000);	/* stops after b[700] */
	a[2500] = 9;
	r += repne_scasb(a, 9, n3001);		/* stops after a[2500] */
	return r;
}

int main(void)
{
	sink = work();
	printf("%ld\n", (long)sink);
	return 0;
}
