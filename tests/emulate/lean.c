/* Lean instructions (src/decode/decode_step.c, decode_lean): the forms
 * whose accesses the emulator computes from templates before they run and
 * accounts in runs, against the step engine's accounting of the same
 * steps: loads, stores and read-modify-writes of every width, 16-byte SSE
 * (aligned and not), push and pop of memory (below the red zone), setcc
 * and cmov of memory, xadd and cmpxchg with and without lock, bit tests
 * with an immediate; and next to them the forms that are not lean (xchg,
 * lock add, bts with a register offset), so runs are cut in their middle.
 * Prints a sum of what it computed. */
#include <stdint.h>
#include <stdio.h>

static volatile uint64_t v[64] __attribute__((aligned(64)));
static char buf[256] __attribute__((aligned(16)));

__attribute__((noinline)) long work(long n)
{
	long s = 0;
	for (long i = 0; i < n; i++) {
		uint64_t x = (uint64_t)i, bit = (uint64_t)i & 63;
		__asm__ volatile("xchg %0, %1" : "+r"(x), "+m"(v[1]));
		__asm__ volatile("lock addq $1, %0" : "+m"(v[2]));
		__asm__ volatile("addq $1, %0" : "+m"(v[3]));
		uint64_t old = v[4], nw = old + 1;
		__asm__ volatile("lock cmpxchgq %2, %1"
				 : "+a"(old), "+m"(v[4]) : "r"(nw));
		__asm__ volatile("cmpxchgq %2, %1"
				 : "+a"(old), "+m"(v[5]) : "r"(nw));
		__asm__ volatile("movdqu %0, %%xmm0; movdqu %%xmm0, %1"
				 : : "m"(buf[1]), "m"(buf[33]) : "xmm0");
		__asm__ volatile("movaps %0, %%xmm1; movaps %%xmm1, %1"
				 : : "m"(buf[0]), "m"(buf[64]) : "xmm1");
		__asm__ volatile("subq $128, %%rsp; pushq %0; popq %0; "
				 "addq $128, %%rsp" : "+m"(v[6]));
		__asm__ volatile("incq %0; notq %0; negq %0" : "+m"(v[7]));
		__asm__ volatile("btsq $3, %0; btrq $5, %0" : "+m"(v[8]));
		__asm__ volatile("btsq %1, %0" : "+m"(v[19]) : "r"(bit));
		__asm__ volatile("xaddq %0, %1" : "+r"(x), "+m"(v[9]));
		__asm__ volatile("lock xaddq %0, %1" : "+r"(x), "+m"(v[10]));
		__asm__ volatile("movsd %0, %%xmm2; movss %%xmm2, %1"
				 : : "m"(v[13]), "m"(v[14]) : "xmm2");
		__asm__ volatile("cmovzq %1, %0" : "+r"(x) : "m"(v[15]));
		__asm__ volatile("movzbl %1, %k0" : "=r"(x) : "m"(buf[7]));
		__asm__ volatile("subq $128, %%rsp; movq %%rsp, %%rax; "
				 "pushq 8(%%rax); addq $136, %%rsp" ::: "rax");
		__asm__ volatile("movdqu %0, %%xmm3; pxor %%xmm3, %%xmm3; "
				 "movdqu %%xmm3, %0"
				 : "+m"(*(char (*)[16])(buf + 128)) : : "xmm3");
		__asm__ volatile("paddd %0, %%xmm4"
				 : : "m"(*(char (*)[16])(buf + 144)) : "xmm4");
		__asm__ volatile("movq %%xmm4, %0" : "=m"(v[16]));
		__asm__ volatile("setne %0" : "=m"(buf[200]));
		__asm__ volatile("andl $0xff, %0; orw $1, %1"
				 : "+m"(v[17]), "+m"(v[18]));
		s += (long)(x + v[1] + v[3] + v[19]);
	}
	return s;
}

int main(void)
{
	long s = work(1000);
	printf("%ld %llu %llu\n", s, (unsigned long long)v[4],
	       (unsigned long long)v[8]);
	return 0;
}
