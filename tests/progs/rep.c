/* rep-prefixed string instructions in the program's own code (inline
 * asm), so their accounting is compared in a function of ours:
 * Cachegrind counts Ir = count + 1 for count >= 1, 1 for count 0, and one
 * data access per element. */
#include <stdio.h>

static unsigned char a[8192] __attribute__((aligned(64)));
static unsigned char b[8192] __attribute__((aligned(64)));
static volatile long sink;

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

	rep_stosb(a, 1, 5000);
	rep_stosb(a, 2, 0);		/* count 0: one Ir, no access */
	rep_stosb(a + 3, 7, 1);
	rep_movsb(b, a + 1, 3001);
	rep_movsq(b, a, 512);
	rep_stosq(a + 4096, 0x0101010101010101ul, 300);
	b[700] = 9;
	r = repe_cmpsb(a + 4096, b, 1000);	/* stops at 700 */
	r += repne_scasb(a, 7, 100);		/* finds a[3] */
	return r;
}

int main(void)
{
	sink = work();
	printf("%ld\n", (long)sink);
	return 0;
}
