/* Private to the instrument engine's translator: its state, and what
 * itrans.c (the blocks: what they hold, their code, their exits) and
 * itrans_emit.c (the emitter: the encodings, the stubs, the copies)
 * share.  The engine uses itrans.h. */
#ifndef CT_ITRANS_PRIVATE_H
#define CT_ITRANS_PRIVATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hashtab.h"
#include "itrans.h"

struct pend {			/* an exit not linked yet */
	uint64_t target;
	uint32_t block;
	uint8_t exit;
};

struct itrans {
	uint8_t *local;
	uint64_t base;
	size_t size, used;
	uint32_t id_base;
	int32_t shadow;			/* the ring's shadow, this far up */
	struct iblock **blocks;
	uint32_t n_blocks, cap_blocks;
	struct hashtab by_pc;		/* pc -> index in blocks */
	struct pend *pend;
	uint32_t n_pend, cap_pend;
	struct hashtab by_target;	/* target -> index in pend */
	struct iblock **solos;		/* itrans_solo's, in cache order */
	uint32_t n_solos, cap_solos;
	struct hashtab by_solo;		/* pc -> index in solos */
	bool (*code_ok)(void *ctx, uint64_t pc, unsigned len);
	void *code_ctx;
};

/* ---- the emitter (itrans_emit.c) ---- */

struct emit {
	uint8_t *p;		/* the local cache at the block's start */
	uint32_t at, cap;	/* bytes written, room */
	uint32_t off;		/* the block's cache offset */
	uint32_t site_fix[2];	/* the rip-relative loads of a lookup's
				 * last destination (its pc, its code),
				 * made when the data follows (0: none) */
};

static inline void put8(struct emit *e, uint8_t v)
{
	if (e->at < e->cap)
		e->p[e->at] = v;
	e->at++;
}

static inline void put32(struct emit *e, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		put8(e, (uint8_t)(v >> (8 * i)));
}

/* At AT, the rel32 of a jump or a rip-relative operand ending there
 * that goes to TO (both offsets in the block). */
static inline void put_rel32_at(struct emit *e, uint32_t at, uint32_t to)
{
	uint32_t v = to - (at + 4);
	for (int i = 0; i < 4; i++)
		if (at + i < e->cap)
			e->p[at + i] = (uint8_t)(v >> (8 * i));
}

/* One-byte nops until the rel32s that will begin A and B bytes on (B:
 * 0, none) each lie within a 64-byte line of the cache, whose base is
 * aligned: an exit's jump is linked while other threads may run it
 * (--threads=all), and a store within a line is atomic to their fetch. */
static inline void pad_patch(struct emit *e, unsigned a, unsigned b)
{
	for (;;) {
		uint32_t o = e->off + e->at;
		if ((o + a) % 64 <= 60 && (!b || (o + b) % 64 <= 60))
			return;
		put8(e, 0x90);
	}
}

static inline uint8_t rex(bool w, unsigned r, unsigned x, unsigned b)
{
	return (uint8_t)(0x40 | (w ? 8 : 0) | (r >= 8 ? 4 : 0) |
			 (x >= 8 ? 2 : 0) | (b >= 8 ? 1 : 0));
}

/* The rest of the emitter (each described at its definition): */
/* [BASE + disp32] after a ModRM whose reg field is REG */
void mem_base(struct emit *e, unsigned reg, unsigned base, int32_t disp);
/* mov gs:[SLOT], REG (STORE) or mov REG, gs:[SLOT] */
void gs_move(struct emit *e, bool store, unsigned reg, unsigned slot);
/* REG = the address of access template A, without its segment's base */
void addr_of(struct emit *e, unsigned reg, const struct lean_acc *a);
/* lea REG, [REG + D] */
void lea_self(struct emit *e, unsigned reg, int32_t d);
/* B's header, before its code (itrans.h) */
void write_header(struct itrans *x, const struct iblock *b);
/* An exit to TARGET (itrans.h) */
void emit_stub(struct emit *e, uint64_t target);
/* LEN bytes of SRC, the copy of (or made from) IN, its rip-relative
 * disp32 (DISP_AT bytes in) moved to reach what IN's does */
void emit_copy(struct itrans *x, struct emit *e, const struct insn *in,
	       const uint8_t *src, unsigned len, unsigned disp_at,
	       unsigned in_disp);
/* Push RET, a call's original return address, with no register */
void emit_push_ret(struct emit *e, uint64_t ret);
/* mov rcx, gs:[rcx*8 + OFF]: a word of the table's entry */
void emit_tbl_load(struct emit *e, uint32_t off);
/* rcx = 2 * (rax's low 16 bits): the table's entry, in 8-byte units */
void emit_ret_index(struct emit *e);

#endif
