/* For the instrument engine (tests/emulate/instrument.sh): work() runs
 * what the code cache must get right, and main() checks afterwards that
 * the window left nothing in the process.
 *   - loops, conditional branches both ways, direct calls into functions
 *     that return (the return leaves the cache), recursion;
 *   - rip-relative loads and stores of globals, an fs: (TLS) variable,
 *     push/pop, a read-modify-write of memory;
 *   - a rep stosb (memset of a non-constant size: stepped);
 *   - a signal handler entered while the window runs (SIGALRM from a
 *     timer), once in a loop and once inside a long rep movsb, and
 *     faults (SIGSEGV on a guard page, and on a page a rep movsb
 *     reaches half way) recovered by siglongjmp;
 *   - every register a loop keeps live (the cursor's register and the
 *     scratch register must be ones the block does not use).
 * After the window: no "cachetrace" mapping in /proc/self/maps, no gs
 * base, and the checksum as natively (exit status 0).
 *   icache [N [ALARM]]: N rounds of the first loop (5,000: a window of
 *   136,000 instructions, each stepped by the suite twice); ALARM 1: the
 *   timer's signals. */
#include <asm/prctl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <unistd.h>

static uint64_t table[4096];
static volatile uint64_t sink;
static __thread uint64_t tls_count;
static volatile int alarms;
static sigjmp_buf jb;
static char *guard;
static char *edge;		/* a page, then one it cannot write */
static int with_alarm;
#define BIG (16u << 20)	/* some milliseconds a copy, natively */
static char *big_src, *big_dst;

static void on_alarm(int sig)
{
	(void)sig;
	alarms++;
}

static void on_segv(int sig)
{
	(void)sig;
	siglongjmp(jb, 1);
}

__attribute__((noinline)) static uint64_t mix(uint64_t x)
{
	x ^= x >> 31;
	x *= 0x9e3779b97f4a7c15ull;
	tls_count++;
	return x ^ (x >> 29);
}

__attribute__((noinline)) static unsigned fib(unsigned n)
{
	return n < 2 ? n : fib(n - 1) + fib(n - 2);
}

/* Fifteen values live across the loop. */
__attribute__((noinline)) static uint64_t many(uint64_t s)
{
	uint64_t a = s, b = s + 1, c = s + 2, d = s + 3, e = s + 4, f = s + 5;
	uint64_t g = s + 6, h = s + 7, i = s + 8, j = s + 9, k = s + 10;
	uint64_t l = s + 11, m = s + 12;
	for (unsigned n = 0; n < 200; n++) {
		a += b ^ table[n & 4095]; b += c * 3; c ^= d + n; d += e >> 1;
		e ^= f + 7; f += g ^ a; g += h; h ^= i << 2; i += j;
		j ^= k + a; k += l; l ^= m * 5; m += a ^ n;
		__asm__ volatile("" : "+r"(a), "+r"(b), "+r"(c), "+r"(d),
				 "+r"(e), "+r"(f), "+r"(g), "+r"(h), "+r"(i),
				 "+r"(j), "+r"(k), "+r"(l), "+r"(m));
	}
	return a + b + c + d + e + f + g + h + i + j + k + l + m;
}

__attribute__((noinline)) uint64_t work(unsigned n)
{
	uint64_t s = 0;
	char buf[300];

	for (unsigned i = 0; i < n; i++) {
		uint64_t v = mix(i);
		table[v & 4095] += v;		/* read-modify-write */
		if (v & 1)
			s += table[(v >> 12) & 4095];
		else
			s ^= v;
	}
	s += fib(15);
	s += many(s);
	memset(buf, (int)s, 20 + (s & 255));	/* rep stosb, or vector */
	s += (unsigned char)buf[19];
	/* A fault inside the window, recovered. */
	if (!sigsetjmp(jb, 1))
		s += (unsigned char)guard[0];
	else
		s += 1;
	/* A fault in the middle of a string copy: 32 bytes copied, the
	 * 33rd on a page it cannot write. */
	if (!sigsetjmp(jb, 1)) {
		char *d = edge + 4096 - 32;
		const char *from = (const char *)table;
		size_t len = 64;
		__asm__ volatile("rep movsb" : "+D"(d), "+S"(from), "+c"(len)
				 : : "memory");
		s += 2;
	} else {
		s += (unsigned char)edge[4095] + 1;
	}
	sink = s;
	/* A signal while the window spins in one block (with an argument:
	 * how long the spin lasts depends on the engine's speed). */
	if (with_alarm) {
		struct itimerval it = { { 0, 0 }, { 0, 50000 } };
		setitimer(ITIMER_REAL, &it, NULL);
		while (!alarms)
			;
		/* A signal inside a long string copy, which the cache runs
		 * as a block of its own (its iterations so far accounted,
		 * the rest run when the handler returns). */
		struct itimerval soon = { { 0, 0 }, { 0, 1000 } };
		setitimer(ITIMER_REAL, &soon, NULL);
		while (alarms < 2) {
			char *d = big_dst;
			const char *from = big_src;
			size_t len = BIG;
			__asm__ volatile("rep movsb" : "+D"(d), "+S"(from),
					 "+c"(len) : : "memory");
		}
		if (memcmp(big_dst, big_src, BIG))
			s += 1;		/* the copy went wrong */
	}
	return s + tls_count;
}

int main(int argc, char **argv)
{
	unsigned n = argc > 1 ? (unsigned)atoi(argv[1]) : 5000;
	with_alarm = argc > 2 && atoi(argv[2]);
	signal(SIGALRM, on_alarm);
	signal(SIGSEGV, on_segv);
	guard = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (guard == MAP_FAILED)
		return 2;
	edge = mmap(NULL, 8192, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (edge == MAP_FAILED || mprotect(edge + 4096, 4096, PROT_READ))
		return 2;
	big_src = malloc(BIG);
	big_dst = malloc(BIG);
	if (!big_src || !big_dst)
		return 2;
	for (unsigned i = 0; i < BIG; i++)
		big_src[i] = (char)(i * 13 + 5);
	uint64_t r = work(n);
	/* The window's leftovers. */
	char line[512];
	int left = 0;
	FILE *f = fopen("/proc/self/maps", "r");
	while (f && fgets(line, sizeof(line), f))
		if (strstr(line, "cachetrace")) {
			fprintf(stderr, "left behind: %s", line);
			left = 1;
		}
	if (f)
		fclose(f);
	unsigned long gs = 0;
	syscall(SYS_arch_prctl, ARCH_GET_GS, &gs);
	if (gs) {
		fprintf(stderr, "left behind: a gs base %#lx\n", gs);
		left = 1;
	}
	printf("%llu\n", (unsigned long long)r);
	return left;
}
