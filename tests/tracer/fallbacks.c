/* A window whose only instructions Unicorn cannot run are 50 rdtsc, 7
 * getpid system calls and, where the CPU has AVX2, 83 VEX instructions
 * (tests/tracer/fallbacks.sh): vpxor, then 40 times vmovdqu and vpaddd,
 * then vmovdqu and vzeroupper. */
#include <stdio.h>

static unsigned in[40 * 8], out[8];

__attribute__((noinline)) unsigned long work(int avx2)
{
	unsigned long s = 0;
	for (int i = 0; i < 50; i++) {
		unsigned lo, hi;
		__asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
		s += lo & 1;
	}
	for (int i = 0; i < 7; i++) {
		long r;
		__asm__ volatile("syscall" : "=a"(r) : "a"(39L)
				 : "rcx", "r11", "memory");
		s += r > 0;
	}
	if (avx2) {
		const unsigned *p = in;
		__asm__ volatile("vpxor %%ymm1, %%ymm1, %%ymm1\n\t"
				 "mov $40, %%ecx\n"
				 "1:\n\t"
				 "vmovdqu (%[p]), %%ymm0\n\t"
				 "vpaddd %%ymm0, %%ymm1, %%ymm1\n\t"
				 "add $32, %[p]\n\t"
				 "dec %%ecx\n\t"
				 "jnz 1b\n\t"
				 "vmovdqu %%ymm1, (%[o])\n\t"
				 "vzeroupper"
				 : [p] "+r"(p)
				 : [o] "r"(out)
				 : "rcx", "xmm0", "xmm1", "memory", "cc");
	} else {
		for (int i = 0; i < 40 * 8; i++)
			out[i % 8] += in[i];
	}
	return s;
}

int main(void)
{
	for (int i = 0; i < 40 * 8; i++)
		in[i] = (unsigned)(i * 2654435761u);
	unsigned long s = work(__builtin_cpu_supports("avx2"));
	printf("%lu", s >= 7);
	for (int i = 0; i < 8; i++)
		printf(" %u", out[i]);
	printf("\n");
	return 0;
}
