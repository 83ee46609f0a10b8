/* An AVX2 loop (built with -mavx2): 32-byte unaligned loads and stores,
 * integer adds and multiplies on ymm registers, and a gather. Exits 77
 * when the CPU has no AVX2.
 * oracle-cflags: -mavx2 */
#include <immintrin.h>
#include <stdio.h>

#define N	4096	/* ints: 16 KiB per array */

static int x[N] __attribute__((aligned(64)));
static int y[N] __attribute__((aligned(64)));
static int z[N] __attribute__((aligned(64)));
static volatile long sink;

__attribute__((noinline)) static void setup(void)
{
	for (int i = 0; i < N; i++) {
		x[i] = i;
		y[i] = 3 * i + 1;
	}
}

__attribute__((noinline)) static void vadd(void)
{
	/* Unaligned by one int: loads and stores straddle lines. */
	for (int i = 0; i + 8 < N; i += 8) {
		__m256i a = _mm256_loadu_si256((const __m256i *)&x[i + 1]);
		__m256i b = _mm256_loadu_si256((const __m256i *)&y[i]);

		_mm256_storeu_si256((__m256i *)&z[i], _mm256_add_epi32(_mm256_mullo_epi32(a, b), a));
	}
}

__attribute__((noinline)) static long gather(void)
{
	__m256i acc = _mm256_setzero_si256();
	const __m256i idx = _mm256_setr_epi32(0, 17, 34, 51, 68, 85, 102, 119);

	for (int i = 0; i + 128 < N; i += 128)
		acc = _mm256_add_epi32(acc, _mm256_i32gather_epi32(&z[i], idx, 4));
	return _mm256_extract_epi32(acc, 0) + _mm256_extract_epi32(acc, 7);
}

__attribute__((noinline)) long work(void)
{
	vadd();
	return gather();
}

int main(void)
{
	if (!__builtin_cpu_supports("avx2"))
		return 77;
	setup();
	sink = work();
	printf("%ld\n", (long)sink);
	return 0;
}
