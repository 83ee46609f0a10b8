/* Tracee for test-cg-oracle: a data access pattern known to the test.
 * ct_kernel is hand-written assembly touching memory only through its
 * pattern (no stack traffic: it leaves through ct_kernel_exit, another
 * function, so the final ret's stack read is not counted in ct_kernel).
 * Each step: x = x * 6364136223846793005 + 1442695040888963407 (mod 2^64),
 * offset = (x >> 33) & mask, op = x >> 60:
 *   0-3 load 8, 4-7 store 8, 8-9 add to memory (read-modify-write, 8),
 *   10-11 load 16 (movdqu), 12-15 load 1. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

static unsigned char buf[1 << 20] __attribute__((aligned(4096)));

void ct_kernel(unsigned char *base, long n, uint64_t seed, uint64_t mask);

__asm__(
	".text\n"
	".globl ct_kernel_exit\n"
	".type ct_kernel_exit, @function\n"
	"ct_kernel_exit:\n"
	"	ret\n"
	".size ct_kernel_exit, .-ct_kernel_exit\n"
	".globl ct_kernel\n"
	".type ct_kernel, @function\n"
	"ct_kernel:\n"
	"	movabs $6364136223846793005, %r8\n"
	"	movabs $1442695040888963407, %r9\n"
	"1:	imul %r8, %rdx\n"
	"	add %r9, %rdx\n"
	"	mov %rdx, %rax\n"
	"	shr $33, %rax\n"
	"	and %rcx, %rax\n"
	"	mov %rdx, %r10\n"
	"	shr $60, %r10\n"
	"	cmp $4, %r10\n"
	"	jb 2f\n"
	"	cmp $8, %r10\n"
	"	jb 3f\n"
	"	cmp $10, %r10\n"
	"	jb 4f\n"
	"	cmp $12, %r10\n"
	"	jb 5f\n"
	"	movzbl (%rdi,%rax), %r10d\n"
	"	jmp 9f\n"
	"2:	mov (%rdi,%rax), %r10\n"
	"	jmp 9f\n"
	"3:	mov %rdx, (%rdi,%rax)\n"
	"	jmp 9f\n"
	"4:	add %rdx, (%rdi,%rax)\n"
	"	jmp 9f\n"
	"5:	movdqu (%rdi,%rax), %xmm0\n"
	"9:	dec %rsi\n"
	"	jnz 1b\n"
	"	jmp ct_kernel_exit\n"
	".size ct_kernel, .-ct_kernel\n");

int main(int argc, char **argv)
{
	if (argc != 4)
		return 2;
	printf("%p\n", (void *)buf);
	fflush(stdout);
	ct_kernel(buf, atol(argv[1]), strtoull(argv[2], NULL, 0),
		  strtoull(argv[3], NULL, 0));
	return 0;
}
