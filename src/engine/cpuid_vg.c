/* --cpuid=valgrind: the CPU valgrind 3.19 presents to its guest on this
 * host, so that glibc's loader and ifuncs pick under cachetrace what they
 * pick under Cachegrind.
 *
 * The rules (facts about valgrind 3.19, read in its sources: the host's
 * capabilities in coregrind/m_machine.c, VG_(machine_get_hwcaps), the
 * choice of a CPU in VEX/priv/guest_amd64_toIR.c at CPUID, and the CPUs'
 * answers in VEX/priv/guest_amd64_helpers.c, amd64g_dirtyhelper_CPUID_*):
 * - Valgrind answers cpuid from one of four fixed CPUs, chosen by what
 *   the host has: SSSE3, CMPXCHG16B and AVX2 give a Core i7-4910MQ
 *   (Haswell); the same with AVX but no AVX2 a Core i5-2300 (Sandy
 *   Bridge); SSSE3 and CMPXCHG16B a Core i5-670 (Westmere, SSE4.2); else
 *   an AMD Opteron (SSE2 only).  The host's AVX counts only with XCR0's
 *   x87, SSE and AVX bits set and the AVX state at offset 576, 256 bytes
 *   (cpuid 0xd.2); AVX2 only with AVX.
 * - The two AVX CPUs advertise F16C and RDRAND in leaf 1 (ecx bits 29,
 *   30) and RDSEED in leaf 7.0 (ebx bit 18) only where the host has them.
 * - The answers do not depend on the CPU the thread runs on (the APIC ids
 *   are fixed).  A leaf the CPU does not list gets its default answer;
 *   leaf 0xb's unlisted subleaves echo ecx in ecx; the Opteron ignores
 *   the subleaf.
 * - xgetbv(0) answers 7 (x87, SSE, AVX) on the AVX CPUs, whatever the
 *   host's XCR0; the xsave family saves and restores only those three
 *   components (edx:eax & 7).  The other CPUs advertise no OSXSAVE.
 *
 * CACHETRACE_HOST=vg-cpu=avx2|avx|sse42|baseline forces the choice (the
 * suite checks each table's identity against what the sources say; the
 * host's own choice is checked against valgrind itself). */
#include "cpuid_vg.h"

#include <cpuid.h>
#include <stddef.h>
#include <string.h>

#include "hostenv.h"

#define ANY 0xffffffffu		/* any subleaf */
#define ECHO 0xfffffffeu	/* ecx's value in ecx */

struct vg_leaf {
	uint32_t leaf, sub;
	uint32_t r[4];
};

struct vg_table {
	const char *name, *model;
	const struct vg_leaf *leaves;
	size_t n;
	uint32_t dflt[4];
	bool by_sub;		/* the subleaf matters at all */
};

#define N(a) (sizeof(a) / sizeof((a)[0]))

/* AMD Opteron, SSE2 only (amd64g_dirtyhelper_CPUID_baseline) */
static const struct vg_leaf opteron[] = {
	{ 0x00000000, ANY, { 0x00000001, 0x68747541, 0x444d4163, 0x69746e65 } },
	{ 0x00000001, ANY, { 0x00000f5a, 0x01000800, 0x00000000, 0x078bfbff } },
	{ 0x80000000, ANY, { 0x80000018, 0x68747541, 0x444d4163, 0x69746e65 } },
	{ 0x80000001, ANY, { 0x00000f5a, 0x00000505, 0x00000000, 0x21d3fbff } },
	{ 0x80000002, ANY, { 0x20444d41, 0x6574704f, 0x206e6f72, 0x296d7428 } },
	{ 0x80000003, ANY, { 0x6f725020, 0x73736563, 0x3820726f, 0x00003834 } },
	{ 0x80000004, ANY, { 0, 0, 0, 0 } },
	{ 0x80000005, ANY, { 0xff08ff08, 0xff20ff20, 0x40020140, 0x40020140 } },
	{ 0x80000006, ANY, { 0x00000000, 0x42004200, 0x04008140, 0x00000000 } },
	{ 0x80000007, ANY, { 0x00000000, 0x00000000, 0x00000000, 0x0000000f } },
	{ 0x80000008, ANY, { 0x00003028, 0x00000000, 0x00000000, 0x00000000 } },
};

/* Core i5-670, SSE4.2 and CMPXCHG16B (..._sse42_and_cx16) */
static const struct vg_leaf westmere[] = {
	{ 0x00000000, ANY, { 0x0000000b, 0x756e6547, 0x6c65746e, 0x49656e69 } },
	{ 0x00000001, ANY, { 0x00020652, 0x00100800, 0x0298e3ff, 0xbfebfbff } },
	{ 0x00000002, ANY, { 0x55035a01, 0x00f0b2e3, 0x00000000, 0x09ca212c } },
	{ 0x00000003, ANY, { 0, 0, 0, 0 } },
	{ 0x00000004, 0, { 0x1c004121, 0x01c0003f, 0x0000003f, 0x00000000 } },
	{ 0x00000004, 1, { 0x1c004122, 0x00c0003f, 0x0000007f, 0x00000000 } },
	{ 0x00000004, 2, { 0x1c004143, 0x01c0003f, 0x000001ff, 0x00000000 } },
	{ 0x00000004, 3, { 0x1c03c163, 0x03c0003f, 0x00000fff, 0x00000002 } },
	{ 0x00000004, ANY, { 0, 0, 0, 0 } },
	{ 0x00000005, ANY, { 0x00000040, 0x00000040, 0x00000003, 0x00001120 } },
	{ 0x00000006, ANY, { 0x00000007, 0x00000002, 0x00000001, 0x00000000 } },
	{ 0x00000007, ANY, { 0, 0, 0, 0 } },
	{ 0x00000008, ANY, { 0, 0, 0, 0 } },
	{ 0x00000009, ANY, { 0, 0, 0, 0 } },
	{ 0x0000000a, ANY, { 0x07300403, 0x00000004, 0x00000000, 0x00000603 } },
	{ 0x0000000b, 0, { 0x00000001, 0x00000002, 0x00000100, 0x00000000 } },
	{ 0x0000000b, 1, { 0x00000004, 0x00000004, 0x00000201, 0x00000000 } },
	{ 0x0000000b, ANY, { 0x00000000, 0x00000000, ECHO, 0x00000000 } },
	{ 0x0000000c, ANY, { 0x00000001, 0x00000002, 0x00000100, 0x00000000 } },
	{ 0x0000000d, 0, { 0x00000001, 0x00000002, 0x00000100, 0x00000000 } },
	{ 0x0000000d, 1, { 0x00000004, 0x00000004, 0x00000201, 0x00000000 } },
	{ 0x0000000d, ANY, { 0x00000000, 0x00000000, ECHO, 0x00000000 } },
	{ 0x80000000, ANY, { 0x80000008, 0x00000000, 0x00000000, 0x00000000 } },
	{ 0x80000001, ANY, { 0x00000000, 0x00000000, 0x00000001, 0x28100800 } },
	{ 0x80000002, ANY, { 0x65746e49, 0x2952286c, 0x726f4320, 0x4d542865 } },
	{ 0x80000003, ANY, { 0x35692029, 0x55504320, 0x20202020, 0x20202020 } },
	{ 0x80000004, ANY, { 0x30373620, 0x20402020, 0x37342e33, 0x007a4847 } },
	{ 0x80000005, ANY, { 0, 0, 0, 0 } },
	{ 0x80000006, ANY, { 0x00000000, 0x00000000, 0x01006040, 0x00000000 } },
	{ 0x80000007, ANY, { 0x00000000, 0x00000000, 0x00000000, 0x00000100 } },
	{ 0x80000008, ANY, { 0x00003024, 0x00000000, 0x00000000, 0x00000000 } },
};

/* Core i5-2300, AVX (..._avx_and_cx16): leaf 1's ecx and leaf 7.0's ebx
 * get the host's F16C, RDRAND, RDSEED (vg_cpuid) */
static const struct vg_leaf sandy[] = {
	{ 0x00000000, ANY, { 0x0000000d, 0x756e6547, 0x6c65746e, 0x49656e69 } },
	{ 0x00000001, ANY, { 0x000206a7, 0x00100800, 0x1f9ae3bf, 0xbfebfbff } },
	{ 0x00000002, ANY, { 0x76035a01, 0x00f0b0ff, 0x00000000, 0x00ca0000 } },
	{ 0x00000003, ANY, { 0, 0, 0, 0 } },
	{ 0x00000004, 0, { 0x1c004121, 0x01c0003f, 0x0000003f, 0x00000000 } },
	{ 0x00000004, 1, { 0x1c004122, 0x01c0003f, 0x0000003f, 0x00000000 } },
	{ 0x00000004, 2, { 0x1c004143, 0x01c0003f, 0x000001ff, 0x00000000 } },
	{ 0x00000004, 3, { 0x1c03c163, 0x02c0003f, 0x00001fff, 0x00000006 } },
	{ 0x00000004, ANY, { 0, 0, 0, 0 } },
	{ 0x00000005, ANY, { 0x00000040, 0x00000040, 0x00000003, 0x00001120 } },
	{ 0x00000006, ANY, { 0x00000077, 0x00000002, 0x00000009, 0x00000000 } },
	{ 0x00000007, ANY, { 0x00000000, 0x00000800, 0x00000000, 0x00000000 } },
	{ 0x00000008, ANY, { 0, 0, 0, 0 } },
	{ 0x00000009, ANY, { 0, 0, 0, 0 } },
	{ 0x0000000a, ANY, { 0x07300803, 0x00000000, 0x00000000, 0x00000603 } },
	{ 0x0000000b, 0, { 0x00000001, 0x00000001, 0x00000100, 0x00000000 } },
	{ 0x0000000b, 1, { 0x00000004, 0x00000004, 0x00000201, 0x00000000 } },
	{ 0x0000000b, ANY, { 0x00000000, 0x00000000, ECHO, 0x00000000 } },
	{ 0x0000000c, ANY, { 0, 0, 0, 0 } },
	{ 0x0000000d, 0, { 0x00000007, 0x00000340, 0x00000340, 0x00000000 } },
	{ 0x0000000d, 1, { 0, 0, 0, 0 } },
	{ 0x0000000d, 2, { 0x00000100, 0x00000240, 0x00000000, 0x00000000 } },
	{ 0x0000000d, ANY, { 0, 0, 0, 0 } },
	{ 0x0000000e, ANY, { 0x00000007, 0x00000340, 0x00000340, 0x00000000 } },
	{ 0x0000000f, ANY, { 0x00000007, 0x00000340, 0x00000340, 0x00000000 } },
	{ 0x80000000, ANY, { 0x80000008, 0x00000000, 0x00000000, 0x00000000 } },
	{ 0x80000001, ANY, { 0x00000000, 0x00000000, 0x00000001, 0x28100800 } },
	{ 0x80000002, ANY, { 0x20202020, 0x20202020, 0x65746e49, 0x2952286c } },
	{ 0x80000003, ANY, { 0x726f4320, 0x4d542865, 0x35692029, 0x3033322d } },
	{ 0x80000004, ANY, { 0x50432030, 0x20402055, 0x30382e32, 0x007a4847 } },
	{ 0x80000005, ANY, { 0, 0, 0, 0 } },
	{ 0x80000006, ANY, { 0x00000000, 0x00000000, 0x01006040, 0x00000000 } },
	{ 0x80000007, ANY, { 0x00000000, 0x00000000, 0x00000000, 0x00000100 } },
	{ 0x80000008, ANY, { 0x00003024, 0x00000000, 0x00000000, 0x00000000 } },
};

/* Core i7-4910MQ, AVX2 (..._avx2): the same host bits as sandy[] */
static const struct vg_leaf haswell[] = {
	{ 0x00000000, ANY, { 0x0000000d, 0x756e6547, 0x6c65746e, 0x49656e69 } },
	{ 0x00000001, ANY, { 0x000306c3, 0x02100800, 0x1ffafbff, 0xbfebfbff } },
	{ 0x00000002, ANY, { 0x76036301, 0x00f0b6ff, 0x00000000, 0x00c10000 } },
	{ 0x00000003, ANY, { 0, 0, 0, 0 } },
	{ 0x00000004, 0, { 0x1c004121, 0x01c0003f, 0x0000003f, 0x00000000 } },
	{ 0x00000004, 1, { 0x1c004122, 0x01c0003f, 0x0000003f, 0x00000000 } },
	{ 0x00000004, 2, { 0x1c004143, 0x01c0003f, 0x000001ff, 0x00000000 } },
	{ 0x00000004, 3, { 0x1c03c163, 0x03c0003f, 0x00001fff, 0x00000006 } },
	{ 0x00000004, ANY, { 0, 0, 0, 0 } },
	{ 0x00000005, ANY, { 0x00000040, 0x00000040, 0x00000003, 0x00042120 } },
	{ 0x00000006, ANY, { 0x00000077, 0x00000002, 0x00000009, 0x00000000 } },
	{ 0x00000007, 0, { 0x00000000, 0x000027aa, 0x00000000, 0x00000000 } },
	{ 0x00000007, ANY, { 0, 0, 0, 0 } },
	{ 0x00000008, ANY, { 0, 0, 0, 0 } },
	{ 0x00000009, ANY, { 0, 0, 0, 0 } },
	{ 0x0000000a, ANY, { 0x07300803, 0x00000000, 0x00000000, 0x00000603 } },
	{ 0x0000000b, 0, { 0x00000001, 0x00000002, 0x00000100, 0x00000002 } },
	{ 0x0000000b, 1, { 0x00000004, 0x00000008, 0x00000201, 0x00000002 } },
	{ 0x0000000b, ANY, { 0x00000000, 0x00000000, ECHO, 0x00000002 } },
	{ 0x0000000c, ANY, { 0, 0, 0, 0 } },
	{ 0x0000000d, 0, { 0x00000007, 0x00000340, 0x00000340, 0x00000000 } },
	{ 0x0000000d, 1, { 0, 0, 0, 0 } },
	{ 0x0000000d, 2, { 0x00000100, 0x00000240, 0x00000000, 0x00000000 } },
	{ 0x0000000d, ANY, { 0, 0, 0, 0 } },
	{ 0x80000000, ANY, { 0x80000008, 0x00000000, 0x00000000, 0x00000000 } },
	{ 0x80000001, ANY, { 0x00000000, 0x00000000, 0x00000021, 0x2c100800 } },
	{ 0x80000002, ANY, { 0x65746e49, 0x2952286c, 0x726f4320, 0x4d542865 } },
	{ 0x80000003, ANY, { 0x37692029, 0x3139342d, 0x20514d30, 0x20555043 } },
	{ 0x80000004, ANY, { 0x2e322040, 0x48473039, 0x0000007a, 0x00000000 } },
	{ 0x80000005, ANY, { 0, 0, 0, 0 } },
	{ 0x80000006, ANY, { 0x00000000, 0x00000000, 0x01006040, 0x00000000 } },
	{ 0x80000007, ANY, { 0x00000000, 0x00000000, 0x00000000, 0x00000100 } },
	{ 0x80000008, ANY, { 0x00003027, 0x00000000, 0x00000000, 0x00000000 } },
};

static const struct vg_table tables[] = {
	[VG_CPU_BASELINE] = { "baseline", "AMD Opteron (SSE2)", opteron,
			      N(opteron), { 0, 0, 0, 0 }, false },
	[VG_CPU_SSE42] = { "sse42", "Intel Core i5-670 (SSE4.2)", westmere,
			   N(westmere), { 1, 2, 0x100, 0 }, true },
	[VG_CPU_AVX] = { "avx", "Intel Core i5-2300 (AVX)", sandy, N(sandy),
			 { 7, 0x340, 0x340, 0 }, true },
	[VG_CPU_AVX2] = { "avx2", "Intel Core i7-4910MQ (AVX2)", haswell,
			  N(haswell), { 7, 0x340, 0x340, 0 }, true },
};

void vg_cpuid_probe(struct vg_cpuid *v)
{
	unsigned a, b, c, d, max, c1;
	memset(v, 0, sizeof(*v));
	char forced[16];
	if (hostenv_get("vg-cpu", forced, sizeof(forced))) {
		for (unsigned i = 0; i < N(tables); i++)
			if (!strcmp(forced, tables[i].name))
				v->cpu = (enum vg_cpu)i;
		return;
	}
	__cpuid(0, max, b, c, d);
	if (max < 1)
		return;
	__cpuid(1, a, b, c1, d);
	bool ssse3 = c1 & (1u << 9), cx16 = c1 & (1u << 13), avx = false,
	     avx2 = false;
	const unsigned osxsave_avx = (1u << 26) | (1u << 27) | (1u << 28);
	if ((c1 & osxsave_avx) == osxsave_avx && (host_xcr0() & 7) == 7) {
		__cpuid_count(0xd, 2, a, b, c, d);
		avx = b == 576 && a == 256;
	}
	if (avx) {
		v->f16c = c1 & (1u << 29);
		v->rdrand = c1 & (1u << 30);
		if (max >= 7) {
			__cpuid_count(7, 0, a, b, c, d);
			avx2 = b & (1u << 5);
			v->rdseed = b & (1u << 18);
		}
	}
	if (ssse3 && cx16)
		v->cpu = avx2 ? VG_CPU_AVX2 : avx ? VG_CPU_AVX : VG_CPU_SSE42;
	else
		v->cpu = VG_CPU_BASELINE;
}

void vg_cpuid(const struct vg_cpuid *v, uint32_t leaf, uint32_t sub,
	      uint32_t out[4])
{
	const struct vg_table *t = &tables[v->cpu];
	const struct vg_leaf *hit = NULL;
	for (size_t i = 0; i < t->n && !hit; i++)
		if (t->leaves[i].leaf == leaf &&
		    (!t->by_sub || t->leaves[i].sub == ANY ||
		     t->leaves[i].sub == sub))
			hit = &t->leaves[i];
	memcpy(out, hit ? hit->r : t->dflt, 4 * sizeof(uint32_t));
	if (out[2] == ECHO)
		out[2] = sub;
	if (v->cpu == VG_CPU_AVX2 || v->cpu == VG_CPU_AVX) {
		if (leaf == 1)
			out[2] |= (v->f16c ? 1u << 29 : 0) |
				  (v->rdrand ? 1u << 30 : 0);
		if (leaf == 7 && sub == 0)
			out[1] |= v->rdseed ? 1u << 18 : 0;
	}
}

bool vg_cpuid_avx(const struct vg_cpuid *v)
{
	return v->cpu == VG_CPU_AVX2 || v->cpu == VG_CPU_AVX;
}

const char *host_cpu_brand(void)
{
	static char brand[49];
	unsigned r[4], max, i;
	if (brand[0])
		return brand;
	__cpuid(0x80000000, max, r[1], r[2], r[3]);
	if (max < 0x80000004)
		return strcpy(brand, "no brand string");
	for (i = 0; i < 3; i++) {
		__cpuid(0x80000002 + i, r[0], r[1], r[2], r[3]);
		memcpy(brand + 16 * i, r, 16);
	}
	brand[48] = 0;
	/* leading and trailing blanks, as some vendors pad it */
	size_t lead = strspn(brand, " "), n = strlen(brand + lead);
	memmove(brand, brand + lead, n + 1);
	while (n && brand[n - 1] == ' ')
		brand[--n] = 0;
	return brand[0] ? brand : strcpy(brand, "no brand string");
}

const char *vg_cpuid_model(const struct vg_cpuid *v)
{
	return tables[v->cpu].model;
}
