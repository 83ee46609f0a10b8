/* Which instructions the emulate engine may run on the supervisor's own
 * CPU, and their bytes made to do so (insn.native, decode_native).
 *
 * Unicorn 2.0.1 has no AVX, and glibc's string functions are VEX and
 * EVEX code (vmovdqu64, vpcmpb into a mask, kmovd, vpminub...), as are the
 * BMI instructions (bzhi, sarx, shlx...).  Those that only read and write
 * general, vector and mask registers, the flags and MXCSR, and at most one
 * explicit memory operand, can run on our CPU with the thread's register
 * state loaded: the same CPU model runs the target, so it knows them.
 * Their memory operand is made [rip + disp32] (ModRM mod 00, r/m 101, no
 * SIB; VEX/EVEX X and B cleared; a 0x64/0x65 segment and a 0x67 address
 * size prefix dropped), so the engine points it at a copy of the bytes
 * its address names.  The executor keeps its own stack: nothing that
 * names rsp.  Not here: gathers and scatters (VSIB), masked moves
 * of the vmaskmov family, branches, anything our tables do not know, XOP
 * and AMX.  Two legacy instructions too: xtest, and movbe, which
 * Unicorn 2.0.1 refuses. */
#include "decode_private.h"

#include <string.h>

/* IN runs as it is: no memory operand to move. */
static void as_is(struct insn *in, struct native_code *nc, const uint8_t *buf)
{
	memcpy(nc->bytes, buf, in->len);
	nc->len = in->len;
	nc->mem = false;
	in->native = true;
}

/* movbe (0f 38 f0/f1 /r, a load or a store with its bytes swapped): Unicorn
 * 2.0.1's CPU raises #UD for it, and glibc's memcmp on AVX2 machines
 * (__memcmp_avx2_movbe) runs four for each short compare.  Legacy
 * prefixes kept but segment and address size (the engine gives the
 * address), REX kept but X and B (no index or base any more). */
static void movbe(struct insn *in, struct native_code *nc, bool plain,
		  bool mem, uint32_t size, uint8_t kind, bool names_rsp,
		  const uint8_t *buf, size_t n)
{
	if (in->unknown || !in->len || in->len > n || in->emulable ||
	    !plain || !mem || names_rsp || !size || size > 8)
		return;
	size_t i = 0, o = 0;
	uint8_t rex = 0;
	while (i < in->len && (buf[i] == 0x66 || buf[i] == 0x64 ||
			       buf[i] == 0x65 || buf[i] == 0x67 ||
			       buf[i] == 0x2e || buf[i] == 0x3e ||
			       buf[i] == 0x26 || buf[i] == 0x36)) {
		if (buf[i] == 0x66)
			nc->bytes[o++] = 0x66;
		i++;
	}
	if (i < in->len && (buf[i] & 0xf0) == 0x40)
		rex = buf[i++];
	if (i + 4 > in->len || buf[i] != 0x0f || buf[i + 1] != 0x38 ||
	    (buf[i + 2] & 0xfe) != 0xf0)
		return;
	uint8_t modrm = buf[i + 3];
	if (modrm >> 6 == 3)
		return;
	if (rex & 0x0c)		/* W, R: kept */
		nc->bytes[o++] = (uint8_t)(0x40 | (rex & 0x0c));
	memcpy(nc->bytes + o, buf + i, 3);
	o += 3;
	nc->bytes[o++] = (uint8_t)((modrm & 0x38) | 0x05);
	nc->disp_off = (uint8_t)o;
	memset(nc->bytes + o, 0, 4);
	o += 4;
	nc->len = (uint8_t)o;
	nc->mem = true;
	nc->kind = kind;
	nc->size = size;
	in->native = true;
}

void native_classify(struct insn *in, struct native_code *nc, bool plain,
		     bool mem, uint32_t size, uint8_t kind, bool names_rsp,
		     const uint8_t *buf, size_t n)
{
	struct vex_info v;

	in->native = false;
	if (in->id == X86_INS_XTEST && !mem && in->len <= sizeof(nc->bytes)) {
		/* Denied to Unicorn (transactional memory), but outside a
		 * transaction, which a stepped or emulated thread always is
		 * (a trap aborts one), it only sets ZF: our CPU says the
		 * same.  glibc's AVX2 string functions run it before each
		 * vzeroupper. */
		as_is(in, nc, buf);
		return;
	}
	if (in->id == X86_INS_MOVBE) {
		movbe(in, nc, plain, mem, size, kind, names_rsp, buf, n);
		return;
	}
	if (in->unknown || !in->len || in->len > n || in->emulable ||
	    in->branch != BR_NONE || !plain || names_rsp ||
	    !vex_parse(buf, n, &v))
		return;
	size_t vstart = v.modrm_off - 1 - v.form;	/* c5: 2, c4: 3, 62: 4 */
	if (v.map == 1 && v.opcode == 0x77) {
		/* vzeroupper, vzeroall: no ModRM */
		if (v.modrm_off != in->len)
			return;
		as_is(in, nc, buf);
		return;
	}
	if (v.modrm_off >= in->len)
		return;
	uint8_t modrm = buf[v.modrm_off];
	unsigned mod = modrm >> 6, rm = modrm & 7;
	/* The executor keeps its own rsp: what Capstone does not decode
	 * (id 0: kmov and friends, some with a general register) must not
	 * name register 4 in either field (maybe k4 or zmm4: not run). */
	if (in->id == 0 && ((((modrm >> 3) & 7) == 4 && !v.r) ||
			    (mod == 3 && rm == 4 && !v.b) ||
			    (v.vvvv & 15) == 4))
		return;
	if (mod == 3) {
		if (mem)
			return;
		as_is(in, nc, buf);
		return;
	}
	if (!mem || !size || size > 64 || kind == ACC_PREFETCH)
		return;
	/* The old SIB and displacement, then the immediate bytes. */
	size_t p = v.modrm_off + 1;
	if (rm == 4) {
		if (p >= in->len)
			return;
		uint8_t sib = buf[p++];
		if (mod == 0 && (sib & 7) == 5)
			p += 4;
	} else if (mod == 0 && rm == 5) {
		p += 4;
	}
	if (mod == 1)
		p += 1;
	else if (mod == 2)
		p += 4;
	if (p > in->len)
		return;
	/* Before VEX/EVEX only legacy prefixes (vex_parse skipped them) */
	size_t o = 0;
	for (size_t i = 0; i < vstart; i++)
		if (buf[i] != 0x64 && buf[i] != 0x65 && buf[i] != 0x67)
			nc->bytes[o++] = buf[i];
	memcpy(nc->bytes + o, buf + vstart, v.modrm_off - vstart);
	if (v.form == 3 || v.form == 4)
		nc->bytes[o + 1] |= 0x60;	/* ~X, ~B: no extension */
	o += v.modrm_off - vstart;
	nc->bytes[o++] = (uint8_t)((modrm & 0x38) | 0x05);
	nc->disp_off = (uint8_t)o;
	memset(nc->bytes + o, 0, 4);
	o += 4;
	size_t imm = in->len - p;
	if (o + imm > sizeof(nc->bytes))
		return;
	memcpy(nc->bytes + o, buf + p, imm);
	o += imm;
	nc->len = (uint8_t)o;
	nc->mem = true;
	nc->kind = kind;
	nc->size = size;
	in->native = true;
}
