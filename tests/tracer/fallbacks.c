/* A window whose only fallbacks are 50 rdtsc and 7 getpid system calls
 * (tests/tracer/fallbacks.sh): Unicorn runs neither. */
#include <stdio.h>

__attribute__((noinline)) unsigned long work(void)
{
	unsigned long s = 0;
	for (int i = 0; i < 50; i++) {
		unsigned lo, hi;
		__asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
		s += lo & 1;
	}
	for (int i = 0; i < 7; i++) {
		long r;
		__asm__ volatile("syscall" : "=a"(r) : "a"(39L)
				 : "rcx", "r11", "memory");
		s += r > 0;
	}
	return s;
}

int main(void)
{
	printf("%lu\n", work() >= 7);
	return 0;
}
