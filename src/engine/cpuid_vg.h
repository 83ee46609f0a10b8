/* --cpuid=valgrind: valgrind 3.19's CPUID (cpuid_vg.c). */
#ifndef CT_CPUID_VG_H
#define CT_CPUID_VG_H

#include <stdbool.h>
#include <stdint.h>

enum vg_cpu { VG_CPU_BASELINE, VG_CPU_SSE42, VG_CPU_AVX, VG_CPU_AVX2 };

struct vg_cpuid {
	enum vg_cpu cpu;
	bool f16c, rdrand, rdseed;	/* the host's, on the AVX CPUs */
};

/* The CPU valgrind presents on this host (or CACHETRACE_HOST=vg-cpu=). */
void vg_cpuid_probe(struct vg_cpuid *v);
/* Its answer to cpuid(LEAF, SUB): eax, ebx, ecx, edx. */
void vg_cpuid(const struct vg_cpuid *v, uint32_t leaf, uint32_t sub,
	      uint32_t out[4]);
/* Does it advertise AVX (and so xgetbv)? */
bool vg_cpuid_avx(const struct vg_cpuid *v);
const char *vg_cpuid_model(const struct vg_cpuid *v);
/* This host's brand string (cpuid 0x80000002-4), blanks trimmed. */
const char *host_cpu_brand(void);

#endif
