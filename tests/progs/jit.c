/* Code rewritten at the same address, as a JIT does it under W^X: the
 * page of jitted() made writable, new code written, made executable
 * again, three times, each time with instructions of another shape (one
 * load; two loads; a store), each run 2,000 times by run_it().  With
 * --start=work the rewrites are in the window; with --start=run_it
 * --intervals=3 they are made natively, between the windows.  A tool
 * that kept what it decoded or translated of the old code counts the old
 * shape (Dr, Dw, Ir) and, running a stale copy, gets the wrong sums.
 * jitted()'s counts, by hand: Ir 2,000 x (2 + 3 + 3) = 16,000; Dr 2,000
 * x (2 + 3 + 1) = 12,000 (ret's load each time); Dw 2,000.  Cachegrind
 * agrees (it drops its translations when the page loses PROT_EXEC). */
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

/* A page of its own, all of it jitted()'s (a function symbol for both
 * tools' names). */
__asm__(".pushsection .text.jit,\"ax\",@progbits\n"
	".balign 4096\n"
	".globl jitted\n"
	".type jitted, @function\n"
	"jitted:\n"
	"ret\n"
	".fill 4095, 1, 0xcc\n"
	".size jitted, 4096\n"
	".popsection\n");
int jitted(int *p, int v);

static const unsigned char shapes[3][12] = {
	{ 0x8b, 0x07, 0xc3 },				/* mov eax, [rdi]; ret */
	{ 0x8b, 0x07, 0x03, 0x47, 0x04, 0xc3 },		/* mov eax, [rdi]; */
							/* add eax, [rdi+4] */
	{ 0x89, 0x77, 0x08, 0x89, 0xf0, 0xc3 },		/* mov [rdi+8], esi; */
};							/* mov eax, esi */

__attribute__((noinline)) static int emit(unsigned k)
{
	void *page = (void *)jitted;
	if (mprotect(page, 4096, PROT_READ | PROT_WRITE) < 0)
		return -1;
	memcpy(page, shapes[k], sizeof(shapes[k]));
	return mprotect(page, 4096, PROT_READ | PROT_EXEC);
}

__attribute__((noinline)) int run_it(void)
{
	static int data[3] = { 5, 7, 0 };
	int s = 0;
	for (int i = 0; i < 2000; i++)
		s += jitted(data, i);
	return s;
}

__attribute__((noinline)) int work(void)
{
	int s = 0;
	for (unsigned k = 0; k < 3; k++) {
		if (emit(k) < 0)
			return -1;
		s += run_it();
	}
	return s;
}

int main(void)
{
	printf("%d\n", work());
	return 0;
}
