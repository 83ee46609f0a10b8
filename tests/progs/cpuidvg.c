/* What the CPU answers: cpuid over the leaves glibc and others read, the
 * vendor and brand strings, xgetbv(0) where the OS enables it, and
 * whether an xsave of every component (edx:eax all ones) stays inside the
 * size leaf 0xd says (a buffer sized that way, as glibc's loader sizes
 * its own, with a guard after it).  Under valgrind this prints valgrind's
 * CPU; under cachetrace --cpuid=valgrind it must print the same
 * (tests/oracle/cpuid-vg.sh). */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

static void cpuid(unsigned leaf, unsigned sub, unsigned r[4])
{
	__asm__ volatile("cpuid" : "=a"(r[0]), "=b"(r[1]), "=c"(r[2]),
			 "=d"(r[3]) : "a"(leaf), "c"(sub));
}

static char *hex8(char *p, unsigned v)
{
	for (int i = 7; i >= 0; i--, v >>= 4)
		p[i] = "0123456789abcdef"[v & 15];
	return p + 8;
}

/* "LEAF.SUB: EAX EBX ECX EDX" (%08x), written by hand: printf's
 * formatting was half the program's instructions, each one stepped
 * twice by the test. */
static void show(unsigned leaf, unsigned sub)
{
	unsigned r[4];
	char line[64], *p = line;
	cpuid(leaf, sub, r);
	p = hex8(p, leaf);
	*p++ = '.';
	*p++ = (char)('0' + sub % 10);
	*p++ = ':';
	for (int i = 0; i < 4; i++) {
		*p++ = ' ';
		p = hex8(p, r[i]);
	}
	*p++ = '\n';
	fwrite(line, 1, (size_t)(p - line), stdout);
}

static unsigned char area[8192] __attribute__((aligned(64)));

int main(void)
{
	unsigned r[4], max, i, s;
	char vendor[13], brand[49];

	cpuid(0, 0, r);
	max = r[0];
	memcpy(vendor, &r[1], 4);
	memcpy(vendor + 4, &r[3], 4);
	memcpy(vendor + 8, &r[2], 4);
	vendor[12] = 0;
	printf("vendor: %s, max leaf 0x%x\n", vendor, max);
	for (i = 0; i <= 0x14; i++)
		for (s = 0; s < 4; s++)
			show(i, s);
	show(0x40000000, 0);
	cpuid(0x80000000, 0, r);
	printf("max extended leaf 0x%x\n", r[0]);
	for (i = 0x80000000; i <= 0x80000008; i++)
		show(i, 0);
	memset(brand, 0, sizeof(brand));
	if (r[0] >= 0x80000004)
		for (i = 0; i < 3; i++) {
			cpuid(0x80000002 + i, 0, r);
			memcpy(brand + 16 * i, r, 16);
		}
	printf("brand: %s\n", brand);

	cpuid(1, 0, r);
	if (!(r[2] & (1u << 27)) || max < 0xd) {
		printf("no OSXSAVE\n");
		return 0;
	}
	uint32_t lo, hi;
	__asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
	printf("xgetbv(0): %08x %08x\n", hi, lo);
	cpuid(0xd, 0, r);
	unsigned size = r[1];
	if (size > sizeof(area)) {
		printf("xsave: leaf 0xd's size %u is larger than the test's\n",
		       size);
		return 0;
	}
	/* xrstor faults on a header (bytes 512-575) not zeroed first */
	memset(area, 0, size);
	memset(area + size, 0xa5, sizeof(area) - size);
	__asm__ volatile("xsave %0" : "+m"(area) : "a"(~0u), "d"(~0u));
	for (i = size; i < sizeof(area) && area[i] == 0xa5; i++)
		;
	printf("xsave: %s the %u bytes of leaf 0xd\n",
	       i == sizeof(area) ? "within" : "past", size);
	__asm__ volatile("xrstor %0" : : "m"(area), "a"(~0u), "d"(~0u));
	printf("xrstor: done\n");
	return 0;
}
