/* libc memset/memcpy/strlen on 16 KiB buffers: above glibc's rep
 * movsb/stosb thresholds (rep movsb from 8 KiB with 64-byte vectors, 4
 * KiB with 32-byte ones; the misaligned copy is 8197 bytes), so its
 * string functions use rep movsb/stosb or their vector loops.  (64 KiB
 * stepped a rep movsb iteration at a time cost the suite a minute.)  The
 * buffers are globals (same addresses natively and under valgrind). */
#include <stdio.h>
#include <string.h>

#define BYTES	(16 * 1024)

static char src[BYTES] __attribute__((aligned(64)));
static char dst[BYTES] __attribute__((aligned(64)));
static volatile long sink;

/* Through volatile pointers so the compiler cannot inline or fold them. */
static void *(*volatile do_memset)(void *, int, size_t) = memset;
static void *(*volatile do_memcpy)(void *, const void *, size_t) = memcpy;
static size_t (*volatile do_strlen)(const char *) = strlen;

/* memcpy runs last: natively glibc's memmove takes another path than
 * under valgrind whatever the tunables (it tests a CPU-derived string
 * control word that valgrind's CPUID sets differently: the profiles differ
 * in which lines of memmove-vec-unaligned-erms.S run), so only memset and
 * strlen are compared, and memcpy must not disturb the branch predictor
 * before them. */
__attribute__((noinline)) long work(void)
{
	long n;

	do_memset(src, 'a', BYTES - 1);
	src[BYTES - 1] = 0;
	do_memset(dst, 0, 5000);
	n = (long)do_strlen(src);
	do_memcpy(dst, src, BYTES);
	do_memcpy(dst + 1, src + 3, BYTES / 2 + 5);	/* misaligned */
	return n + dst[BYTES - 2];
}

int main(void)
{
	sink = work();
	printf("%ld\n", (long)sink);
	return sink == BYTES - 1 + 'a' ? 0 : 1;
}
