/* The instrument engine's translator (itrans.c), its emitter: the
 * x86-64 encodings a block is made of (the slot's moves, an access's
 * address, a call's push, the returns' table's lookup), a block's header,
 * the exit stubs, and the copies of the original instructions with their
 * rip-relative displacements moved. */
#include "itrans.h"

#include <string.h>

#include "itrans_private.h"

static void put64(struct emit *e, uint64_t v)
{
	put32(e, (uint32_t)v);
	put32(e, (uint32_t)(v >> 32));
}

/* [BASE + disp32] after a ModRM whose reg field is REG. */
void mem_base(struct emit *e, unsigned reg, unsigned base, int32_t disp)
{
	put8(e, (uint8_t)(0x80 | (reg & 7) << 3 | (base & 7)));
	if ((base & 7) == 4)
		put8(e, 0x24);
	put32(e, (uint32_t)disp);
}

/* mov gs:[SLOT], REG (STORE) or mov REG, gs:[SLOT] */
void gs_move(struct emit *e, bool store, unsigned reg, unsigned slot)
{
	put8(e, 0x65);
	put8(e, rex(true, reg, 0, 0));
	put8(e, store ? 0x89 : 0x8b);
	put8(e, (uint8_t)((reg & 7) << 3 | 4));
	put8(e, 0x25);
	put32(e, slot);
}

/* REG = the address of access template A, without its segment's base */
void addr_of(struct emit *e, unsigned reg, const struct lean_acc *a)
{
	if (a->base == DECODE_LEAN_NONE && a->index == DECODE_LEAN_NONE) {
		put8(e, rex(true, 0, 0, reg));		/* mov reg, imm64 */
		put8(e, (uint8_t)(0xb8 | (reg & 7)));
		put64(e, (uint64_t)a->disp);
		return;
	}
	unsigned base = a->base, index = a->index;
	unsigned ss = a->scale == 8 ? 3 : a->scale == 4 ? 2 : a->scale == 2;
	bool nobase = base == DECODE_LEAN_NONE;
	put8(e, rex(true, reg, index == DECODE_LEAN_NONE ? 0 : index,
		    nobase ? 0 : base));
	put8(e, 0x8d);
	put8(e, (uint8_t)((nobase ? 0x00 : 0x80) | (reg & 7) << 3 | 4));
	put8(e, (uint8_t)(ss << 6 | (index == DECODE_LEAN_NONE ? 4 : index & 7)
			  << 3 | (nobase ? 5 : base & 7)));
	put32(e, (uint32_t)(int32_t)a->disp);
}

/* lea REG, [REG + D] */
void lea_self(struct emit *e, unsigned reg, int32_t d)
{
	put8(e, rex(true, reg, 0, reg));
	put8(e, 0x8d);
	mem_base(e, reg, reg, d);
}

/* B's header, before its code: for a guardian that finds a thread in
 * the cache after cachetrace died (itrans.h). */
void write_header(struct itrans *x, const struct iblock *b)
{
	struct itrans_hdr h = { ITRANS_MAGIC, b->rt, { 0, 0, 0 }, b->pc };
	memcpy(x->local + b->off - ITRANS_HDR, &h, sizeof(h));
}

/* An exit to TARGET (itrans.h): rax, rcx and r11 kept in the slot, a
 * getpid the supervisor stops at and never lets run (PTRACE_SYSEMU), then
 * on to TARGET as they were, which is the way a thread goes when no
 * supervisor is there any more. */
void emit_stub(struct emit *e, uint64_t target)
{
	gs_move(e, true, 0, ISLOT_XRAX);
	gs_move(e, true, 1, ISLOT_XRCX);
	gs_move(e, true, 11, ISLOT_XR11);
	put8(e, 0xb8);				/* mov eax, getpid */
	put32(e, ITRANS_STUB_NR);
	put8(e, 0x0f); put8(e, 0x05);		/* syscall */
	gs_move(e, false, 11, ISLOT_XR11);
	gs_move(e, false, 1, ISLOT_XRCX);
	gs_move(e, false, 0, ISLOT_XRAX);
	put8(e, 0xff); put8(e, 0x25);		/* jmp [rip + 0] */
	put32(e, 0);
	put64(e, target);
}

/* LEN bytes of SRC, the copy of (or made from) IN, whose rip-relative
 * disp32, when it has one, is DISP_AT bytes in: moved so that it reaches
 * what IN's reaches from IN's own pc (IN_DISP: where IN's own is). */
void emit_copy(struct itrans *x, struct emit *e, const struct insn *in,
	       const uint8_t *src, unsigned len, unsigned disp_at,
	       unsigned in_disp)
{
	const uint8_t *bytes;
	unsigned disp;
	uint16_t gprs;
	uint32_t start = e->at;
	for (unsigned j = 0; j < len; j++)
		put8(e, src[j]);
	if (!disp_at || e->at > e->cap)
		return;
	decode_copy(in, &bytes, &disp, &gprs);
	int32_t d;
	memcpy(&d, bytes + in_disp, 4);
	uint64_t to = in->pc + in->len + (uint64_t)(int64_t)d;
	uint64_t next = x->base + e->off + e->at;
	int32_t nd = (int32_t)(int64_t)(to - next);
	memcpy(e->p + start + disp_at, &nd, 4);
}

/* Push RET, a call's original return address, with no register: lea
 * rsp, [rsp-8]; mov dword [rsp], low; mov dword [rsp+4], high. */
void emit_push_ret(struct emit *e, uint64_t ret)
{
	put8(e, 0x48); put8(e, 0x8d); put8(e, 0x64);		/* lea rsp, */
	put8(e, 0x24); put8(e, 0xf8);				/* [rsp-8] */
	put8(e, 0xc7); put8(e, 0x04); put8(e, 0x24);		/* mov [rsp], */
	put32(e, (uint32_t)ret);
	put8(e, 0xc7); put8(e, 0x44); put8(e, 0x24);		/* [rsp+4] */
	put8(e, 0x04);
	put32(e, (uint32_t)(ret >> 32));
}

/* mov rcx, gs:[rcx*8 + OFF]: a word of the table's entry */
void emit_tbl_load(struct emit *e, uint32_t off)
{
	put8(e, 0x65); put8(e, 0x48); put8(e, 0x8b);
	put8(e, 0x0c); put8(e, 0xcd);
	put32(e, off);
}

/* rcx = 2 * itrans_tbl_index(rax): the table's entry, in 8-byte units,
 * with no flag changed */
void emit_ret_index(struct emit *e)
{
	put8(e, 0x0f); put8(e, 0xb7); put8(e, 0xc8);		/* movzx ecx, ax */
	put8(e, 0x48); put8(e, 0x8d); put8(e, 0x0c); put8(e, 0x09); /* lea */
}
