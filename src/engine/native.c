/* One instruction of the traced thread run on the supervisor's own CPU.
 *
 * Per instruction (pc and bytes) a trampoline is written once into memory
 * of ours that is writable and executable:
 *
 *   save our callee-saved registers and MXCSR; xrstor the thread's SSE,
 *   AVX, opmask and AVX-512 state (never its x87 state: none of these
 *   instructions touches it, and ours must stay empty); load its
 *   arithmetic flags and its general registers but rsp (we keep our
 *   stack: the decoder leaves out instructions that name rsp); the
 *   instruction, its memory operand made [rip + disp32]
 *   pointing into the trampoline's data slot at the operand's own
 *   alignment modulo 64; then everything back the other way, xsave,
 *   our MXCSR again, vzeroupper.
 *
 * The data slot holds a copy of the 64-byte blocks the operand lies in
 * (the caller copies them from the emulator's memory and back), so
 * nothing of the target is touched here, a masked access never meets an
 * unmapped page, and an access a little wider than our tables say still
 * reads the right bytes.  The
 * disp32 is rewritten only when an operand's alignment differs from the
 * last run's.  A fault, an SIMD exception the thread unmasked, or an
 * instruction this CPU lacks is caught (SIGSEGV, SIGFPE, SIGILL, SIGBUS)
 * and returned: the caller lets the real CPU run it. */
#include "native.h"

#include <cpuid.h>
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <setjmp.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "error.h"
#include "hostenv.h"

#define ENTRY 640		/* a trampoline: code, slots, data */
#define CODE_MAX 448
#define S_CTX 448		/* our struct native_regs pointer */
#define S_MXCSR 464		/* our MXCSR */
#define DATA 512		/* the operand's bytes: 128, 64-aligned */
#define CHUNK (256 * 1024)	/* arena allocation */

#define OFF_RFLAGS (16 * 8)
#define OFF_XSAVE (17 * 8)
#define OFF_XSAVE_OUT (18 * 8)
_Static_assert(offsetof(struct native_regs, rflags) == OFF_RFLAGS, "rflags");
_Static_assert(offsetof(struct native_regs, xsave) == OFF_XSAVE, "xsave");
_Static_assert(offsetof(struct native_regs, xsave_out) == OFF_XSAVE_OUT,
	       "xsave_out");

struct tramp {
	uint64_t pc;
	uint8_t *code;		/* ENTRY bytes, 64-aligned */
	uint8_t bytes[16];	/* the instruction as given */
	uint8_t len;
	uint8_t insn_at;	/* where it starts in the code */
	int16_t off;		/* the data offset its disp32 holds */
};

struct native {
	uint64_t rfbm;		/* the components loaded and saved */
	size_t xsave_size;
	bool avx;
	uint8_t *chunk;		/* the arena's current chunk */
	size_t used;
	struct tramp *tab;	/* open addressing by pc */
	size_t cap, n;
};

static sigjmp_buf fault_jmp;
static volatile sig_atomic_t running;
static const int fault_sigs[] = { SIGSEGV, SIGFPE, SIGILL, SIGBUS };
static struct sigaction old_act[4];	/* what was there before ours */
static bool installed;

static void on_fault(int sig, siginfo_t *si, void *uctx)
{
	(void)si; (void)uctx;
	if (running) {
		running = 0;
		siglongjmp(fault_jmp, sig);
	}
	/* Not ours: fault again under the action we replaced (the
	 * default, or a sanitizer's report). */
	for (unsigned i = 0; i < 4; i++)
		if (fault_sigs[i] == sig)
			sigaction(sig, &old_act[i], NULL);
}

struct native *native_new(char *why, size_t len)
{
	unsigned a, b, c, d;
	if (!__get_cpuid(1, &a, &b, &c, &d) || !(c & bit_OSXSAVE)) {
		snprintf(why, len, "the kernel has not enabled XSAVE");
		return NULL;
	}
	uint64_t xcr0 = host_xcr0();
	/* SSE, AVX, opmask, ZMM_Hi256, Hi16_ZMM */
	uint64_t rfbm = xcr0 & 0xe6;
	if (!(rfbm & 2)) {
		snprintf(why, len, "XCR0 has no SSE state");
		return NULL;
	}
	__cpuid_count(0xd, 0, a, b, c, d);
	struct native *nx = xcalloc(1, sizeof(*nx));
	nx->rfbm = rfbm;
	nx->avx = rfbm & 4;
	nx->xsave_size = b > 4096 ? b : 4096;
	if (!installed) {
		struct sigaction sa;
		memset(&sa, 0, sizeof(sa));
		sa.sa_sigaction = on_fault;
		sa.sa_flags = SA_SIGINFO | SA_NODEFER;
		sigemptyset(&sa.sa_mask);
		for (unsigned i = 0; i < 4; i++)
			sigaction(fault_sigs[i], &sa, &old_act[i]);
		installed = true;
	}
	/* The first chunk now: no writable and executable memory is a
	 * host's answer, not an error later. */
	nx->chunk = mmap(NULL, CHUNK, PROT_READ | PROT_WRITE | PROT_EXEC,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (nx->chunk == MAP_FAILED) {
		snprintf(why, len, "memory both writable and executable is "
			 "refused (%s)", strerror(errno));
		free(nx);
		return NULL;
	}
	return nx;
}

void native_free(struct native *nx)
{
	if (!nx)
		return;
	/* The chunks stay mapped: a few hundred KiB for the run. */
	free(nx->tab);
	free(nx);
}

size_t native_xsave_size(const struct native *nx)
{
	return nx->xsave_size;
}

bool native_component(const struct native *nx, unsigned i, uint32_t *off,
		      uint32_t *size)
{
	if (i >= 64 || !(nx->rfbm & (1ull << i)))
		return false;
	unsigned a, b, c, d;
	__cpuid_count(0xd, i, a, b, c, d);
	*off = b;
	*size = a;
	return a && b + a <= nx->xsave_size;
}

/* ---- code emission ---- */

struct emit {
	uint8_t *base, *p;
};

static void b1(struct emit *e, uint8_t x)
{
	*e->p++ = x;
}

static void bn(struct emit *e, const void *x, size_t n)
{
	memcpy(e->p, x, n);
	e->p += n;
}

static void i32(struct emit *e, int32_t x)
{
	bn(e, &x, 4);
}

/* A [rip + rel32] operand to the slot at SLOT: the rel32 is relative to
 * the end of the instruction, TAIL bytes after it. */
static void rip_to(struct emit *e, unsigned slot, unsigned tail)
{
	int32_t rel = (int32_t)((e->base + slot) - (e->p + 4 + tail));
	i32(e, rel);
}

/* mov reg, [rdi + disp32] (LOAD) or mov [rdi + disp32], reg. */
static void mov_rdi(struct emit *e, unsigned reg, int32_t disp, bool load)
{
	b1(e, (uint8_t)(0x48 | (reg >= 8 ? 4 : 0)));
	b1(e, load ? 0x8b : 0x89);
	b1(e, (uint8_t)(0x80 | (reg & 7) << 3 | 7));
	i32(e, disp);
}

static void rfbm_to_edx_eax(struct emit *e, uint64_t rfbm)
{
	b1(e, 0xb8);
	i32(e, (int32_t)(uint32_t)rfbm);
	b1(e, 0xba);
	i32(e, (int32_t)(uint32_t)(rfbm >> 32));
}

static void build(struct native *nx, struct tramp *t)
{
	struct emit e = { t->code, t->code };
	static const uint8_t pushes[] = { 0x53, 0x55, 0x41, 0x54, 0x41, 0x55,
					  0x41, 0x56, 0x41, 0x57 };
	bn(&e, pushes, sizeof(pushes));
	bn(&e, "\x48\x89\x3d", 3);		/* mov [rip+S_CTX], rdi */
	rip_to(&e, S_CTX, 0);
	bn(&e, "\x0f\xae\x1d", 3);		/* stmxcsr [rip+S_MXCSR] */
	rip_to(&e, S_MXCSR, 0);
	mov_rdi(&e, 1, OFF_XSAVE, true);	/* rcx = r->xsave */
	rfbm_to_edx_eax(&e, nx->rfbm);
	bn(&e, "\x48\x0f\xae\x29", 4);		/* xrstor64 [rcx] */
	bn(&e, "\xff\xb7", 2);			/* push [rdi+rflags] */
	i32(&e, OFF_RFLAGS);
	b1(&e, 0x9d);				/* popfq */
	for (unsigned reg = 0; reg < 16; reg++)
		if (reg != 4 && reg != 7)
			mov_rdi(&e, reg, (int32_t)(reg * 8), true);
	mov_rdi(&e, 7, 7 * 8, true);		/* rdi last */
	t->insn_at = (uint8_t)(e.p - e.base);
	bn(&e, t->bytes, t->len);
	b1(&e, 0x9c);				/* pushfq */
	b1(&e, 0x57);				/* push rdi */
	bn(&e, "\x48\x8b\x3d", 3);		/* mov rdi, [rip+S_CTX] */
	rip_to(&e, S_CTX, 0);
	for (unsigned reg = 0; reg < 16; reg++)
		if (reg != 4 && reg != 7)
			mov_rdi(&e, reg, (int32_t)(reg * 8), false);
	bn(&e, "\x8f\x87", 2);			/* pop [rdi+rdi's] */
	i32(&e, 7 * 8);
	bn(&e, "\x8f\x87", 2);			/* pop [rdi+rflags] */
	i32(&e, OFF_RFLAGS);
	mov_rdi(&e, 1, OFF_XSAVE_OUT, true);	/* rcx = r->xsave_out */
	rfbm_to_edx_eax(&e, nx->rfbm);
	bn(&e, "\x48\x0f\xae\x21", 4);		/* xsave64 [rcx] */
	bn(&e, "\x0f\xae\x15", 3);		/* ldmxcsr [rip+S_MXCSR] */
	rip_to(&e, S_MXCSR, 0);
	if (nx->avx)
		bn(&e, "\xc5\xf8\x77", 3);	/* vzeroupper */
	static const uint8_t pops[] = { 0x41, 0x5f, 0x41, 0x5e, 0x41, 0x5d,
					0x41, 0x5c, 0x5d, 0x5b, 0xc3 };
	bn(&e, pops, sizeof(pops));
	t->off = -1;
}

/* Point T's memory operand at DATA + OFF. */
static void aim(struct tramp *t, const struct native_code *nc, unsigned off)
{
	uint8_t *insn = t->code + t->insn_at;
	int32_t rel = (int32_t)((t->code + DATA + off) - (insn + nc->len));
	memcpy(insn + nc->disp_off, &rel, 4);
	t->off = (int16_t)off;
}

static uint8_t *arena_entry(struct native *nx)
{
	if (nx->used + ENTRY > CHUNK) {
		uint8_t *c = mmap(NULL, CHUNK, PROT_READ | PROT_WRITE | PROT_EXEC,
				  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (c == MAP_FAILED)
			return NULL;
		nx->chunk = c;
		nx->used = 0;
	}
	uint8_t *p = nx->chunk + nx->used;
	nx->used += ENTRY;
	return p;
}

static size_t slot_of(uint64_t pc, size_t cap)
{
	return (size_t)((pc * 0x9e3779b97f4a7c15ull) >> 40) & (cap - 1);
}

static struct tramp *lookup(struct native *nx, uint64_t pc,
			    const struct native_code *nc)
{
	if (nx->n * 2 >= nx->cap) {
		size_t cap = nx->cap ? nx->cap * 2 : 1024;
		struct tramp *tab = xcalloc(cap, sizeof(*tab));
		for (size_t i = 0; i < nx->cap; i++) {
			if (!nx->tab[i].code)
				continue;
			size_t j = slot_of(nx->tab[i].pc, cap);
			while (tab[j].code)
				j = (j + 1) & (cap - 1);
			tab[j] = nx->tab[i];
		}
		free(nx->tab);
		nx->tab = tab;
		nx->cap = cap;
	}
	size_t j = slot_of(pc, nx->cap);
	for (; nx->tab[j].code; j = (j + 1) & (nx->cap - 1)) {
		struct tramp *t = &nx->tab[j];
		if (t->pc == pc && t->len == nc->len &&
		    !memcmp(t->bytes, nc->bytes, nc->len))
			return t;
		if (t->pc == pc) {
			/* The code at PC changed: its trampoline anew. */
			memcpy(t->bytes, nc->bytes, nc->len);
			t->len = nc->len;
			build(nx, t);
			return t;
		}
	}
	struct tramp *t = &nx->tab[j];
	t->code = arena_entry(nx);
	if (!t->code)
		return NULL;
	t->pc = pc;
	memcpy(t->bytes, nc->bytes, nc->len);
	t->len = nc->len;
	build(nx, t);
	nx->n++;
	return t;
}

int native_run(struct native *nx, uint64_t pc, const struct native_code *nc,
	       struct native_regs *r, uint8_t *mem, unsigned off)
{
	struct tramp *t = lookup(nx, pc, nc);
	if (!t)
		return SIGSEGV;
	if (nc->mem) {
		if (t->off != (int16_t)off)
			aim(t, nc, off);
		memcpy(t->code + DATA, mem, NATIVE_MEM);
	}
	uint64_t flags_in = r->rflags;
	r->rflags &= 0x8d5;	/* CF PF AF ZF SF OF: never DF, TF, AC */
	/* No signal mask to restore: both our handler and the mirror's
	 * run with SA_NODEFER and an empty sa_mask, so a fault leaves the
	 * mask as it is (and saving it would cost a system call). */
	int sig = sigsetjmp(fault_jmp, 0);
	if (sig) {
		/* Our MXCSR back (the thread's may unmask exceptions). */
		uint32_t mxcsr;
		memcpy(&mxcsr, t->code + S_MXCSR, 4);
		__builtin_ia32_ldmxcsr(mxcsr);
		r->rflags = flags_in;
		return sig;
	}
	running = 1;
	((void (*)(struct native_regs *))(void *)t->code)(r);
	running = 0;
	r->rflags = (flags_in & ~0x8d5ull) | (r->rflags & 0x8d5);
	if (nc->mem)
		memcpy(mem, t->code + DATA, NATIVE_MEM);
	return 0;
}

int native_selftest(char *why, size_t len)
{
	struct native *nx = native_new(why, len);
	if (!nx)
		return 1;
	unsigned a, b, c, d;
	__cpuid(1, a, b, c, d);
	if (!(c & bit_AVX) || !(nx->rfbm & 4)) {
		snprintf(why, len, "this CPU has no AVX: there is no VEX code "
			 "for it to run");
		native_free(nx);
		return 1;
	}
	/* vpaddd xmm0, xmm0, [rip + disp32]: {1, 2, 3, 4} + {10, 20, 30,
	 * 40} */
	struct native_code nc = {
		.len = 8, .disp_off = 4, .mem = true, .kind = ACC_READ,
		.size = 16, .bytes = { 0xc5, 0xf9, 0xfe, 0x05 },
	};
	uint8_t *in = aligned_alloc(64, nx->xsave_size);
	uint8_t *out = aligned_alloc(64, nx->xsave_size);
	int rc = -1;
	if (in && out) {
		memset(in, 0, nx->xsave_size);
		memset(out, 0, nx->xsave_size);
		uint32_t x[4] = { 1, 2, 3, 4 }, m[NATIVE_MEM / 4] = { 10, 20,
								     30, 40 };
		uint32_t mxcsr = 0x1f80, got[4] = { 0 };
		memcpy(in + 24, &mxcsr, 4);
		memcpy(in + 160, x, sizeof(x));
		uint64_t bv = 2;
		memcpy(in + 512, &bv, 8);
		struct native_regs r = { .xsave = in, .xsave_out = out };
		int sig = native_run(nx, 0, &nc, &r, (uint8_t *)m, 0);
		memcpy(&bv, out + 512, 8);
		if ((bv & 2))
			memcpy(got, out + 160, sizeof(got));
		if (sig)
			snprintf(why, len, "its self-test raised signal %d", sig);
		else if (got[0] != 11 || got[1] != 22 || got[2] != 33 ||
			 got[3] != 44)
			snprintf(why, len, "its self-test (vpaddd) gave %u %u %u "
				 "%u, not 11 22 33 44", got[0], got[1], got[2],
				 got[3]);
		else
			rc = 0;
	}
	free(in);
	free(out);
	native_free(nx);
	return rc;
}

