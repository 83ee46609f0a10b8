/* Read-modify-write instructions on memory: Cachegrind counts each as
 * one data read (Dr) and no write. The inline asm forms are exact; the
 * C loop gives the compiler's own add [m], reg. */
#include <stdio.h>

#define N	8192	/* 32 KiB of ints per array */

static unsigned x[N] __attribute__((aligned(64)));
static unsigned long q[N / 2] __attribute__((aligned(64)));
static volatile long sink;

__attribute__((noinline)) static void c_loop(unsigned k, unsigned stride)
{
	for (unsigned i = 0; i < N; i += stride)
		x[i] += k + i;
}

__attribute__((noinline)) static void asm_ops(void)
{
	for (unsigned i = 0; i < N / 2; i += 4) {
		__asm__ volatile("incl %0" : "+m"(x[i]));
		__asm__ volatile("addl %1, %0" : "+m"(x[i + 1]) : "r"(i));
		__asm__ volatile("negl %0" : "+m"(x[i + 2]));
		__asm__ volatile("shlq $1, %0" : "+m"(q[i]));
		__asm__ volatile("orb $1, %0" : "+m"(*(unsigned char *)&q[i + 1]));
		unsigned long t = i;
		unsigned u = i;

		__asm__ volatile("lock xaddq %1, %0" : "+m"(q[i + 2]), "+r"(t));
		__asm__ volatile("xchgl %1, %0" : "+m"(x[i + 3]), "+r"(u));
	}
}

__attribute__((noinline)) long work(void)
{
	c_loop(5, 1);
	c_loop(7, 16);
	asm_ops();
	return (long)x[100] + (long)q[8];
}

int main(void)
{
	sink = work();
	printf("%ld\n", (long)sink);
	return 0;
}
