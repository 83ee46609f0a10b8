/* One instruction of the traced thread run on the supervisor's own CPU
 * (native.c): what the emulate engine does with the VEX, EVEX and BMI
 * instructions Unicorn cannot run (src/decode/native.c says which). */
#ifndef CT_NATIVE_H
#define CT_NATIVE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "decode.h"

/* The thread's state for one instruction, in and out. */
struct native_regs {
	uint64_t gpr[16];	/* in the encoding's order: rax rcx rdx rbx
				 * rsp rbp rsi rdi r8 .. r15 (rsp is
				 * neither loaded nor saved) */
	uint64_t rflags;	/* in: CF PF AF ZF SF OF are loaded; out:
				 * what the CPU left */
	uint8_t *xsave;		/* a standard-format XSAVE image, 64-byte
				 * aligned: its SSE, AVX, opmask and AVX-512
				 * components are loaded */
	uint8_t *xsave_out;	/* ... and saved into this one (the rest of
				 * it is left as it was) */
};

struct native;

/* The executor, or NULL with WHY (LEN bytes) saying what the host lacks
 * (XSAVE enabled by the kernel, memory both writable and executable). */
struct native *native_new(char *why, size_t len);
void native_free(struct native *nx);
/* The XSAVE image's size for this host's enabled features. */
size_t native_xsave_size(const struct native *nx);
/* Where component I (2 AVX, 5 opmask, 6 ZMM_Hi256, 7 Hi16_ZMM) lies in a
 * standard-format image: false when this host has not enabled it. */
bool native_component(const struct native *nx, unsigned i, uint32_t *off,
		      uint32_t *size);

/* The bytes around a memory operand given to native_run: the two 64-byte
 * blocks from the one its address is in. */
#define NATIVE_MEM 128

/* Run NC, the instruction at PC, with state R.  With nc->mem, MEM holds
 * the NATIVE_MEM bytes from the operand's address rounded down to 64, read
 * before and written after, and OFF is that address modulo 64.  Returns
 * 0, or the signal the instruction raised (SIGSEGV, SIGFPE, SIGILL,
 * SIGBUS): R and MEM are then not its result. */
int native_run(struct native *nx, uint64_t pc, const struct native_code *nc,
	       struct native_regs *r, uint8_t *mem, unsigned off);

/* cachetrace --check: can this host run a VEX instruction for a thread
 * (vpaddd from a register image and a memory copy)?  0: yes; 1: no need
 * or no way (WHY says which); -1: it ran wrong (WHY says how). */
int native_selftest(char *why, size_t len);

#endif
