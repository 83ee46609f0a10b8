/* Code rewritten at the same address, as a JIT does it under W^X: the
 * page of jitted() made writable, new code written, made executable
 * again, three times, each time with instructions of another shape (one
 * load; two loads; a store), each run 2,000 times by run_it().  With
 * --start=work the rewrites are in the window; with --start=run_it
 * --intervals=3 they are made natively, between the windows.
 * "jit rwx" and "jit avx": the same code written into a writable and
 * executable anonymous page, with no system call (16-byte SSE stores, or
 * AVX's 32-byte ones where the CPU has AVX), in the window of
 * --start=work_rwx; its counts are the same, its function ???.  A tool
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

static const unsigned char shapes[3][64] = {
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

static unsigned char *rwx;

__attribute__((target("avx"), noinline)) static void copy_avx(const void *s)
{
	__asm__ volatile("vmovdqu (%0), %%ymm0; vmovdqu %%ymm0, (%1);"
			 "vmovdqu 32(%0), %%ymm0; vmovdqu %%ymm0, 32(%1);"
			 "vzeroupper"
			 : : "r"(s), "r"(rwx) : "xmm0", "memory");
}

__attribute__((noinline)) int work_rwx(int avx)
{
	static int data[3] = { 5, 7, 0 };
	int (*f)(int *, int) = (int (*)(int *, int))(void *)rwx;
	int s = 0;
	for (unsigned k = 0; k < 3; k++) {
		if (avx)
			copy_avx(shapes[k]);
		else
			memcpy(rwx, shapes[k], sizeof(shapes[k]));
		for (int i = 0; i < 2000; i++)
			s += f(data, i);
	}
	return s;
}

int main(int argc, char **argv)
{
	if (argc > 1) {
		rwx = mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC,
			   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (rwx == MAP_FAILED) {
			puts("no rwx");	/* refused (SELinux execmem) */
			return 0;
		}
		__builtin_cpu_init();
		printf("%d\n", work_rwx(argv[1][0] == 'a' &&
					__builtin_cpu_supports("avx")));
		return 0;
	}
	printf("%d\n", work());
	return 0;
}
