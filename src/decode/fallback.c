/* Raw VEX/EVEX parsing, and a small decoder for what Capstone 4.0.2
 * rejects.
 *
 * Capstone 4.0.2 fails on every VEX-encoded mask-register instruction
 * (kmov, kortest, ktest, kor, kxnor, kunpck, kshift) and on many EVEX
 * instructions glibc 2.36's string functions use (vpcmp[u]b/w/d/q with a
 * predicate, vptestm/vptestnm, vpternlog, vpbroadcastb zmm), plus
 * rdpkru/wrpkru.  Here we find their length from the encoding (SDM vol. 2,
 * 2.3 VEX and 2.7 EVEX) and, for those listed, their memory operand.
 * Anything else with a VEX/EVEX prefix gets its length and is unknown. */
#include "decode.h"
#include "decode_private.h"

#include <stdio.h>
#include <string.h>

static bool is_legacy_prefix(uint8_t b)
{
	switch (b) {
	case 0x66: case 0x67: case 0xf2: case 0xf3: case 0xf0:
	case 0x2e: case 0x3e: case 0x26: case 0x36: case 0x64: case 0x65:
		return true;
	default:
		return false;
	}
}

bool vex_parse(const uint8_t *buf, size_t n, struct vex_info *v)
{
	size_t i = 0;

	memset(v, 0, sizeof(*v));
	while (i < n && is_legacy_prefix(buf[i])) {
		if (buf[i] == 0x67)
			v->addr32 = true;
		else if (buf[i] == 0x64)
			v->seg = 1;
		else if (buf[i] == 0x65)
			v->seg = 2;
		i++;
	}
	if (i + 2 > n)
		return false;
	uint8_t b1 = buf[i + 1];
	switch (buf[i]) {
	case 0xc5:
		v->form = 2;
		v->r = !(b1 & 0x80);
		v->vvvv = (uint8_t)((~b1 >> 3) & 15);
		v->vl = (b1 & 4) ? 32 : 16;
		v->pp = b1 & 3;
		v->map = 1;
		i += 2;
		break;
	case 0xc4: {
		if (i + 3 > n)
			return false;
		uint8_t b2 = buf[i + 2];
		v->form = 3;
		v->r = !(b1 & 0x80);
		v->x = !(b1 & 0x40);
		v->b = !(b1 & 0x20);
		v->map = b1 & 0x1f;
		v->w = b2 >> 7;
		v->vvvv = (uint8_t)((~b2 >> 3) & 15);
		v->vl = (b2 & 4) ? 32 : 16;
		v->pp = b2 & 3;
		i += 3;
		break;
	}
	case 0x62: {
		if (i + 4 > n)
			return false;
		uint8_t p1 = buf[i + 2], p2 = buf[i + 3];
		v->form = 4;
		v->r = !(b1 & 0x80);
		v->x = !(b1 & 0x40);
		v->b = !(b1 & 0x20);
		v->map = b1 & 7;
		v->w = p1 >> 7;
		v->vprime = !(p2 & 8);
		v->vvvv = (uint8_t)(((~p1 >> 3) & 15) | (v->vprime << 4));
		v->pp = p1 & 3;
		v->vl = (uint8_t)(16 << ((p2 >> 5) & 3));
		v->bcast = (p2 >> 4) & 1;
		v->aaa = p2 & 7;
		i += 4;
		break;
	}
	default:
		return false;
	}
	if (i + 1 >= n)
		return false;
	v->opcode = buf[i];
	v->modrm_off = i + 1;
	return true;
}

/* ModRM/SIB/displacement at buf[off]: fills the memory operand of FB and
 * returns the number of bytes, or 0 when short.  DISP8_N is EVEX's
 * compressed displacement scale (1 for VEX). */
static size_t modrm_operand(const uint8_t *buf, size_t n, size_t off,
			    const struct vex_info *v, uint32_t disp8_n,
			    struct fb_insn *fb)
{
	if (off >= n)
		return 0;
	uint8_t modrm = buf[off];
	unsigned int mod = modrm >> 6, rm = modrm & 7;
	size_t len = 1;

	fb->has_mem = mod != 3;
	if (!fb->has_mem)
		return 1;
	fb->base = fb->index = SLOT_NONE;
	fb->scale = 1;
	fb->addr32 = v->addr32;
	fb->seg = v->seg;
	if (rm == 4) {
		if (off + 1 >= n)
			return 0;
		uint8_t sib = buf[off + 1];
		unsigned int idx = ((sib >> 3) & 7) | (v->x << 3);
		unsigned int base = (sib & 7) | (v->b << 3);
		len++;
		if (idx != 4)
			fb->index = gpr_slot(idx);
		fb->scale = (uint8_t)(1 << (sib >> 6));
		if ((sib & 7) == 5 && mod == 0) {
			if (off + len + 4 > n)
				return 0;
			int32_t d32;
			memcpy(&d32, buf + off + len, 4);
			fb->disp = d32;
			return len + 4;
		}
		fb->base = gpr_slot(base);
	} else if (rm == 5 && mod == 0) {
		if (off + 1 + 4 > n)
			return 0;
		int32_t d32;
		memcpy(&d32, buf + off + 1, 4);
		fb->disp = d32;
		fb->rip_rel = true;
		return 5;
	} else {
		fb->base = gpr_slot(rm | (v->b << 3));
	}
	if (mod == 1) {
		if (off + len + 1 > n)
			return 0;
		fb->disp = (int64_t)(int8_t)buf[off + len] * disp8_n;
		len += 1;
	} else if (mod == 2) {
		if (off + len + 4 > n)
			return 0;
		int32_t d32;
		memcpy(&d32, buf + off + len, 4);
		fb->disp = d32;
		len += 4;
	}
	return len;
}

static bool has_imm8(const struct vex_info *v)
{
	if (v->map == 3)
		return true;
	if (v->map == 1) {
		switch (v->opcode) {
		case 0x70: case 0x71: case 0x72: case 0x73:
		case 0xc2: case 0xc4: case 0xc5: case 0xc6:
			return true;
		default:
			return false;
		}
	}
	return false;
}

/* Mask-register instructions (VEX map 1 and kshift in map 3). */
static bool mask_insn(const struct vex_info *v, struct fb_insn *fb)
{
	static const char *const sfx[4] = { "w", "b", "q", "d" };
	const char *name = NULL;
	/* pp 0: w/q by W, pp 1: b/d by W */
	const char *s = sfx[(v->pp & 1) + 2 * v->w];
	unsigned int size = v->pp & 1 ? (v->w ? 4 : 1) : (v->w ? 8 : 2);

	if (v->form == 4)
		return false;
	if (v->map == 3) {
		switch (v->opcode) {
		case 0x30: case 0x31: name = "kshiftr"; break;
		case 0x32: case 0x33: name = "kshiftl"; break;
		default: return false;
		}
		snprintf(fb->text, sizeof(fb->text), "%s", name);
		fb->has_mem = false;
		return true;
	}
	if (v->map != 1)
		return false;
	switch (v->opcode) {
	case 0x41: name = "kand"; break;
	case 0x42: name = "kandn"; break;
	case 0x44: name = "knot"; break;
	case 0x45: name = "kor"; break;
	case 0x46: name = "kxnor"; break;
	case 0x47: name = "kxor"; break;
	case 0x4a: name = "kadd"; break;
	case 0x4b: name = "kunpck"; break;
	case 0x90: name = "kmov"; fb->kind = ACC_READ; break;
	case 0x91: name = "kmov"; fb->kind = ACC_WRITE; break;
	case 0x92: name = "kmov"; s = v->pp == 3 ? (v->w ? "q" : "d") : s; break;
	case 0x93: name = "kmov"; s = v->pp == 3 ? (v->w ? "q" : "d") : s; break;
	case 0x98: name = "kortest"; break;
	case 0x99: name = "ktest"; break;
	default: return false;
	}
	snprintf(fb->text, sizeof(fb->text), "%s%s", name, s);
	if (fb->has_mem) {
		if (v->opcode != 0x90 && v->opcode != 0x91)
			return false;	/* no memory form */
		fb->size = size;
	}
	return true;
}

/* EVEX instructions glibc uses that Capstone rejects: all read their
 * memory operand, of the vector length, or one element when broadcast. */
static bool evex_insn(const struct vex_info *v, struct fb_insn *fb)
{
	const char *name = NULL;
	uint32_t esize = v->w ? 8 : 4;
	uint32_t size = v->vl;
	bool can_bcast = false;

	if (v->form != 4)
		return false;
	if (v->map == 1) {
		switch (v->opcode) {
		case 0x64: case 0x65: name = "vpcmpgt b/w"; break;
		case 0x74: case 0x75: name = "vpcmpeq b/w"; break;
		case 0x66: name = "vpcmpgtd"; can_bcast = true; break;
		case 0x76: name = "vpcmpeqd"; can_bcast = true; break;
		default: return false;
		}
	} else if (v->map == 2) {
		switch (v->opcode) {
		case 0x29: name = "vpcmpeqq"; can_bcast = true; break;
		case 0x37: name = "vpcmpgtq"; can_bcast = true; break;
		case 0x26: name = "vptestm/nm b/w"; break;
		case 0x27: name = "vptestm/nm d/q"; can_bcast = true; break;
		case 0x64: name = "vpblendm d/q"; can_bcast = true; break;
		case 0x66: name = "vpblendm b/w"; break;
		case 0x78: name = "vpbroadcastb"; size = 1; break;
		case 0x79: name = "vpbroadcastw"; size = 2; break;
		case 0x58: name = "vpbroadcastd"; size = 4; break;
		case 0x59: name = "vpbroadcastq"; size = 8; break;
		case 0x7a: case 0x7b: case 0x7c: name = "vpbroadcast r"; break;
		case 0x90: case 0x91: case 0x92: case 0x93:
		case 0xa0: case 0xa1: case 0xa2: case 0xa3:
			/* VSIB: the elements are done in decode_step.c; disp8 * N
			 * with N the element size */
			name = v->opcode < 0xa0 ? "vgather" : "vscatter";
			fb->vsib = true;
			fb->q_index = v->opcode & 1;
			snprintf(fb->text, sizeof(fb->text), "%s", name);
			fb->kind = v->opcode < 0xa0 ? ACC_READ : ACC_WRITE;
			fb->size = esize;
			return fb->has_mem;
		default: return false;
		}
	} else if (v->map == 3) {
		switch (v->opcode) {
		case 0x3e: case 0x3f: name = "vpcmp[u] b/w"; break;
		case 0x1e: case 0x1f: name = "vpcmp[u] d/q"; can_bcast = true; break;
		case 0x25: name = "vpternlog d/q"; can_bcast = true; break;
		case 0x19: case 0x39: case 0x1b: case 0x3b:
			/* vextract[if]32x4/64x2 (16 bytes), 32x8/64x4 (32):
			 * a store to memory */
			snprintf(fb->text, sizeof(fb->text), "vextract%c",
				 v->opcode & 0x20 ? 'i' : 'f');
			fb->kind = ACC_WRITE;
			fb->size = v->opcode & 2 ? 32 : 16;
			return true;
		default: return false;
		}
	} else {
		return false;
	}
	if (can_bcast && v->bcast)
		size = esize;
	snprintf(fb->text, sizeof(fb->text), "%s", name);
	fb->kind = ACC_READ;
	fb->size = size;
	if (fb->has_mem && v->map == 2 && v->opcode >= 0x7a && v->opcode <= 0x7c)
		return false;
	return true;
}

/* CET shadow-stack instructions Capstone 4.0.2 rejects, register forms
 * only: rdsspd/rdsspq (f3 [rex] 0f 1e /1, mod 3) and incsspd/incsspq
 * (f3 [rex] 0f ae /5, mod 3), which libgcc's unwinder runs.  Without CET
 * enabled they are NOPs; with it they touch only the shadow stack, which
 * is no data access of the program's.  No memory operand either way. */
static bool cet_insn(const uint8_t *buf, size_t n, struct fb_insn *fb)
{
	size_t i = 0;
	bool f3 = false;
	while (i < n && is_legacy_prefix(buf[i]))
		f3 |= buf[i++] == 0xf3;
	if (i < n && (buf[i] & 0xf0) == 0x40)
		i++;			/* REX */
	if (!f3 || i + 3 > n || buf[i] != 0x0f)
		return false;
	uint8_t op = buf[i + 1], modrm = buf[i + 2];
	if ((modrm >> 6) != 3)
		return false;
	unsigned reg = (modrm >> 3) & 7;
	const char *name;
	if (op == 0x1e && reg == 1)
		name = "rdssp";
	else if (op == 0xae && reg == 5)
		name = "incssp";
	else
		return false;
	fb->len = (uint8_t)(i + 3);
	fb->known = true;
	snprintf(fb->text, sizeof(fb->text), "%s", name);
	return true;
}

bool fallback_decode(const uint8_t *buf, size_t n, struct fb_insn *fb)
{
	struct vex_info v;

	memset(fb, 0, sizeof(*fb));
	fb->base = fb->index = SLOT_NONE;
	/* rdpkru / wrpkru: 0f 01 ee / ef, registers only */
	if (n >= 3 && buf[0] == 0x0f && buf[1] == 0x01 &&
	    (buf[2] == 0xee || buf[2] == 0xef)) {
		fb->len = 3;
		fb->known = true;
		snprintf(fb->text, sizeof(fb->text), "%s",
			 buf[2] == 0xee ? "rdpkru" : "wrpkru");
		return true;
	}
	if (cet_insn(buf, n, fb))
		return true;
	if (!vex_parse(buf, n, &v) || v.map < 1 || v.map > 3)
		return false;
	/* EVEX disp8*N: N is the access size of the forms we know (full
	 * vector, broadcast element, or the broadcast scalar). */
	struct fb_insn probe = *fb;
	size_t mlen = modrm_operand(buf, n, v.modrm_off, &v, 1, &probe);
	if (!mlen)
		return false;
	size_t len = v.modrm_off + mlen + (has_imm8(&v) ? 1 : 0);
	if (len > n || len > 15)
		return false;
	*fb = probe;
	fb->len = (uint8_t)len;
	if (mask_insn(&v, fb) || evex_insn(&v, fb)) {
		fb->known = true;
		if (fb->has_mem && v.form == 4) {
			struct fb_insn again = *fb;
			modrm_operand(buf, n, v.modrm_off, &v, fb->size, &again);
			fb->disp = again.disp;
		}
	} else {
		fb->known = false;
		fb->has_mem = false;
		snprintf(fb->text, sizeof(fb->text), "(%s map %u opcode %02x)",
			 v.form == 4 ? "evex" : "vex", v.map, v.opcode);
	}
	return true;
}
