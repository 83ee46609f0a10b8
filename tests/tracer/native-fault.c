/* An instruction our own CPU runs for the emulate engine (native.c)
 * faults: the thread's real CPU must then raise the same signal in the
 * thread.  ARGV[1]: "fpe", a division by zero with the exception unmasked
 * in MXCSR (vldmxcsr, vdivps: SIGFPE), or "segv", vmovdqa from a
 * misaligned address (SIGSEGV).  Without AVX, the SSE forms. */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static void on_signal(int sig)
{
	const char *m = sig == SIGFPE ? "caught SIGFPE\n" : "caught SIGSEGV\n";
	(void)!write(1, m, strlen(m));
	_exit(0);
}

static float a[8] __attribute__((aligned(64))) = { 1, 2, 3, 4, 5, 6, 7, 8 };
static float z[8] __attribute__((aligned(64)));
static float q[8] __attribute__((aligned(64)));
static char buf[128] __attribute__((aligned(64)));

__attribute__((noinline)) void work(int fpe, int avx)
{
	unsigned m = 0x1f80 & ~0x200u;	/* ZE unmasked */
	if (fpe && avx)
		__asm__ volatile("vldmxcsr %3\n\t"
				 "vmovaps %1, %%ymm0\n\t"
				 "vdivps %2, %%ymm0, %%ymm0\n\t"
				 "vmovaps %%ymm0, %0\n\t"
				 "vzeroupper"
				 : "=m"(q) : "m"(a), "m"(z), "m"(m) : "xmm0");
	else if (fpe)
		__asm__ volatile("ldmxcsr %3\n\t"
				 "movaps %1, %%xmm0\n\t"
				 "divps %2, %%xmm0\n\t"
				 "movaps %%xmm0, %0"
				 : "=m"(q) : "m"(a), "m"(z), "m"(m) : "xmm0");
	else if (avx)
		__asm__ volatile("vmovdqa 1(%0), %%ymm0\n\tvzeroupper"
				 :: "r"(buf) : "xmm0", "memory");
	else
		__asm__ volatile("movdqa 1(%0), %%xmm0"
				 :: "r"(buf) : "xmm0", "memory");
}

int main(int argc, char **argv)
{
	signal(SIGFPE, on_signal);
	signal(SIGSEGV, on_signal);
	work(argc > 1 && !strcmp(argv[1], "fpe"), __builtin_cpu_supports("avx"));
	printf("no signal\n");
	return 1;
}
