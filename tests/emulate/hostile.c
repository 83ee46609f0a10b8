/* What an emulator gets wrong first: a write to a read-only page and a
 * division by zero (the real CPU must take the fault, so that the kernel
 * delivers SIGSEGV and SIGFPE to the handlers), code written and then run
 * and rewritten (the emulator's translated code must not be stale), code
 * that rewrites the next instruction of its own block, the x87 control
 * word set around arithmetic on the real CPU, movbe (Unicorn refuses it), a
 * stack grown by a deep recursion, and memory the kernel writes (read(2)
 * from a pipe).  Prints what each part saw; the same natively and under
 * every engine. */
#include <setjmp.h>
#include <stdint.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static sigjmp_buf env;
static volatile sig_atomic_t segv, fpe;

static void on_fault(int sig)
{
	if (sig == SIGSEGV)
		segv++;
	else
		fpe++;
	siglongjmp(env, 1);
}

__attribute__((noinline)) static long deep(long n)
{
	volatile char pad[256];
	pad[0] = (char)n;
	return n ? deep(n - 1) + pad[0] : 0;
}

__attribute__((noinline)) long work(void)
{
	long r = 0;
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_fault;
	sigaction(SIGSEGV, &sa, NULL);
	sigaction(SIGFPE, &sa, NULL);

	/* a write to a read-only page */
	char *ro = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (ro != MAP_FAILED && !sigsetjmp(env, 1))
		*(volatile char *)ro = 1;
	/* a division by zero */
	volatile int zero = 0;
	if (!sigsetjmp(env, 1))
		r += 100 / zero;
	/* code written, run, rewritten, run again */
	unsigned char *code = mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC,
				   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (code != MAP_FAILED) {
		for (int v = 1; v <= 3; v++) {
			unsigned char insns[] = { 0xb8, (unsigned char)v, 0, 0, 0, 0xc3 };
			memcpy(code, insns, sizeof(insns));
			r += 10 * ((int (*)(void))code)();
		}
		/* code that patches the instruction after it, in the block
		 * it runs (QEMU must drop the block it is running and
		 * resume with the new bytes; twelve times: past the writes
		 * after which QEMU keeps a bitmap of the page's code):
		 * mov byte [rip + 1], v; mov eax, imm32; ret */
		for (int v = 1; v <= 12; v++) {
			unsigned char insns[] = { 0xc6, 0x05, 1, 0, 0, 0,
						  (unsigned char)(v + 4),
						  0xb8, 0, 0, 0, 0, 0xc3 };
			if (v == 1)
				memcpy(code + 64, insns, sizeof(insns));
			else
				code[64 + 6] = (unsigned char)(v + 4);
			r += 100 * ((int (*)(void))(code + 64))();
		}
	}
	/* the x87 control word set (emulated) around arithmetic the real
	 * CPU does, which must see it: 1/3 at 24, 53 and 64 bits of
	 * precision differ; fnstsw reads the status word that arithmetic
	 * left (the comparison's condition bits) */
	unsigned short cw, ncw, sw;
	__asm__ volatile("fnstcw %0" : "=m"(cw));
	for (int pc = 0; pc < 4; pc++) {
		volatile long double three = 3.0L, one = 1.0L, x;
		ncw = (unsigned short)((cw & ~0x300u) | (unsigned)pc << 8);
		__asm__ volatile("fldcw %0" : : "m"(ncw));
		x = one / three;
		__asm__ volatile("fldcw %0" : : "m"(cw));
		__asm__ volatile("fldt %1\n\tfldt %2\n\tfcompp\n\t"
				 "fnstsw %0" : "=a"(sw) : "m"(x), "m"(three));
		r += (long)((x - 0.3333L) * 1e18L) % 1000003 + (sw & 0x4500);
	}
	/* movbe, which Unicorn refuses (run on our CPU): loads of 2, 4
	 * and 8 bytes through a base and an index (r8..r15 among them), a
	 * store of 4 and of 8, and one rip-relative */
	{
		static uint64_t mb[8] = { 0x0102030405060708ull,
					  0x1112131415161718ull };
		uint64_t q = 0, idx = 1;
		uint32_t d = 0;
		uint16_t w = 0;
		register uint64_t base __asm__("r13") = (uint64_t)mb;
		register uint64_t ix __asm__("r9") = idx;
		__asm__ volatile("movbe (%1,%2,8), %0" : "=r"(q)
				 : "r"(base), "r"(ix) : "memory");
		r += (long)(q & 0xffffff);
		__asm__ volatile("movbe 4(%1), %0" : "=r"(d) : "r"(base)
				 : "memory");
		__asm__ volatile("movbe 2(%1), %0" : "=r"(w) : "r"(base)
				 : "memory");
		__asm__ volatile("movbe %0, 16(%1,%2,8)" : : "r"(d),
				 "r"(base), "r"(ix) : "memory");
		__asm__ volatile("movbe %0, 40(%1)" : : "r"(q), "r"(base)
				 : "memory");
		__asm__ volatile("movbe %1, %0" : "=r"(q)
				 : "m"(mb[3]) : "memory");
		r += (long)(d % 1000) + w + (long)(q % 997) +
		     (long)(mb[5] % 991);
	}
	/* the stack grown by ~600 KiB */
	r += deep(2400);
	/* the kernel writes our memory */
	int p[2];
	char buf[16] = { 0 };
	if (pipe(p) == 0) {
		if (write(p[1], "kernel", 6) == 6 && read(p[0], buf, 6) == 6)
			r += buf[0] + buf[5];
		close(p[0]);
		close(p[1]);
	}
	return r + 1000 * segv + 10000 * fpe;
}

int main(void)
{
	printf("%ld\n", work());
	return 0;
}
