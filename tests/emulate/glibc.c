/* A program that leans on glibc: formatted output with floating point,
 * long double (x87), qsort, malloc of many sizes, the string functions at
 * sizes that take their vector paths (AVX2/EVEX on this CPU: the emulate
 * engine's fallbacks), mmap/munmap/mprotect (the mirror re-reads the
 * maps), a signal handler and setjmp/longjmp.  Its output is a checksum
 * that must be the same natively and under every engine. */
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static volatile sig_atomic_t hits;
static jmp_buf env;

static void on_usr1(int sig)
{
	(void)sig;
	hits++;
}

static int cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;
	return (x > y) - (x < y);
}

__attribute__((noinline)) static void jump_back(int v)
{
	longjmp(env, v);
}

__attribute__((noinline)) unsigned long work(void)
{
	unsigned long sum = 0;
	char buf[256];

	/* Formatting: doubles, long doubles (x87), integers (5 rounds,
	 * 4k instructions each: stepped in every engine, 20 cost 45 s of
	 * the suite). */
	for (int i = 0; i < 5; i++) {
		long double ld = (long double)i / 7.0L;
		int n = snprintf(buf, sizeof(buf), "%d %.3f %.5Lf %x", i,
				 i * 1.25, ld, i * 31);
		for (int k = 0; k < n; k++)
			sum = sum * 31 + (unsigned char)buf[k];
	}
	/* qsort */
	int a[200];
	for (int i = 0; i < 200; i++)
		a[i] = (i * 7919) % 211;
	qsort(a, 200, sizeof(a[0]), cmp_int);
	for (int i = 0; i < 200; i++)
		sum += (unsigned long)a[i] * (unsigned long)i;
	/* malloc, the string functions at many sizes */
	for (size_t len = 1; len < 3000; len = len * 3 + 1) {
		char *p = malloc(len + 1), *q = malloc(len + 1);
		memset(p, 'a' + (int)(len % 26), len);
		p[len] = 0;
		memcpy(q, p, len + 1);
		sum += strlen(q) + (unsigned long)(strchr(q, 0) - q);
		sum += (unsigned long)memcmp(p, q, len + 1);
		free(p);
		free(q);
	}
	/* mmap, mprotect, munmap */
	char *m = mmap(NULL, 65536, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m != MAP_FAILED) {
		for (int i = 0; i < 65536; i += 4096)
			m[i] = (char)i;
		mprotect(m, 65536, PROT_READ);
		for (int i = 0; i < 65536; i += 4096)
			sum += (unsigned char)m[i];
		munmap(m, 65536);
	}
	/* a signal handler */
	signal(SIGUSR1, on_usr1);
	for (int i = 0; i < 3; i++)
		kill(getpid(), SIGUSR1);
	sum += (unsigned long)hits;
	/* setjmp/longjmp */
	int v = setjmp(env);
	if (v < 3)
		jump_back(v + 1);
	sum += (unsigned long)v;
	return sum;
}

int main(void)
{
	unsigned long s = work();
	printf("%lu\n", s);
	return 0;
}
