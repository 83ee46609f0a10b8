/* The instrument engine's translator: see itrans.h for the code a block
 * becomes, itrans_emit.c for its encodings.  The blocks are laid out in
 * the cache in the order they are made (a block's number is its index),
 * so a cache address finds its block by binary search; a block's exits
 * are stubs at its end (a system call the supervisor stops at) until the
 * block they go to exists, then their jumps go there directly. */
#include "itrans.h"

#include <capstone/capstone.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "hashtab.h"
#include "itrans_private.h"

#define RSP 4
#define RCX_BIT (1u << 1)	/* never rT: the ring-full check's */
/* A string instruction's stores of rcx, rsi and rdi before it */
#define SOLO_PRE 27

static uint64_t block_hash(const void *ctx, uint32_t i)
{
	const struct itrans *x = ctx;
	return hash_u64(x->blocks[i]->pc);
}

static uint64_t solo_hash(const void *ctx, uint32_t i)
{
	const struct itrans *x = ctx;
	return hash_u64(x->solos[i]->pc);
}

static uint64_t pend_hash(const void *ctx, uint32_t i)
{
	const struct itrans *x = ctx;
	return hash_u64(x->pend[i].target);
}

struct itrans *itrans_new(uint8_t *local, uint64_t base, size_t size,
			  uint32_t id_base, int32_t shadow)
{
	struct itrans *x = xcalloc(1, sizeof(*x));
	x->id_base = id_base;
	x->shadow = shadow;
	x->local = local;
	x->base = base;
	x->size = size;
	return x;
}

void itrans_code_check(struct itrans *x,
		       bool (*ok)(void *ctx, uint64_t pc, unsigned len),
		       void *ctx)
{
	x->code_ok = ok;
	x->code_ctx = ctx;
}

void itrans_reset(struct itrans *x)
{
	for (uint32_t i = 0; i < x->n_blocks; i++)
		free(x->blocks[i]);
	for (uint32_t i = 0; i < x->n_solos; i++)
		free(x->solos[i]);
	x->n_blocks = x->n_solos = 0;
	x->n_pend = 0;
	x->used = 0;
	hashtab_clear(&x->by_pc);
	hashtab_clear(&x->by_target);
	hashtab_clear(&x->by_solo);
}

void itrans_free(struct itrans *x)
{
	if (!x)
		return;
	itrans_reset(x);
	free(x->blocks);
	free(x->solos);
	free(x->pend);
	hashtab_free(&x->by_pc);
	hashtab_free(&x->by_target);
	hashtab_free(&x->by_solo);
	free(x);
}

void itrans_site_set(const struct itrans *x, const struct iblock *b,
		     uint64_t pc, const struct itrans *tox,
		     const struct iblock *to)
{
	if (!b->r_site)
		return;
	uint64_t *e = (uint64_t *)(void *)(x->local + b->r_site);
	e[1] = tox->base + to->off;
	e[0] = pc;
}

void itrans_ret_add(const struct itrans *x, uint8_t *table, uint64_t pc,
		    const struct iblock *b)
{
	uint64_t *e = (uint64_t *)(void *)(table + 16 * itrans_tbl_index(pc));
	e[1] = x->base + b->off;
	e[0] = pc;
}

void itrans_usage(const struct itrans *x, unsigned *blocks, size_t *bytes)
{
	*blocks = x->n_blocks;
	*bytes = x->used;
}

uint64_t itrans_entry(const struct itrans *x, const struct iblock *b)
{
	return x->base + b->off;
}

const struct iblock *itrans_by_id(const struct itrans *x, uint64_t id)
{
	id -= x->id_base;
	return id < x->n_blocks ? x->blocks[id] : NULL;
}

/* The block of ARR at PC, through H (pc -> index in ARR), or NULL; *P
 * is then where one goes in H. */
static const struct iblock *find_in(const struct hashtab *h,
				    struct iblock *const *arr, uint64_t pc,
				    struct hashtab_probe *p)
{
	for (uint32_t i = hashtab_first(h, hash_u64(pc), p);
	     i != HASHTAB_NONE; i = hashtab_next(h, p))
		if (arr[i]->pc == pc)
			return arr[i];
	return NULL;
}

static const struct iblock *find_pc(const struct itrans *x, uint64_t pc)
{
	struct hashtab_probe p;
	return find_in(&x->by_pc, x->blocks, pc, &p);
}

static const struct iblock *find_solo(const struct itrans *x, uint64_t pc)
{
	struct hashtab_probe p;
	return find_in(&x->by_solo, x->solos, pc, &p);
}

/* The block of ARR (N of them, in cache order) whose code holds cache
 * offset OFF. */
static const struct iblock *search(struct iblock *const *arr, uint32_t n,
				   uint64_t off)
{
	uint32_t lo = 0, hi = n;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		const struct iblock *b = arr[mid];
		if (off < b->off)
			hi = mid;
		else if (off >= b->end)
			lo = mid + 1;
		else
			return b;
	}
	return NULL;
}

static const struct iblock *find_off(const struct itrans *x, uint64_t off)
{
	const struct iblock *b = search(x->blocks, x->n_blocks, off);
	return b ? b : search(x->solos, x->n_solos, off);
}

/* ---- what runs from the cache ---- */

/* The opcode byte(s) after the legacy prefixes and REX. */
static unsigned opcode_at(const uint8_t *b, unsigned len, unsigned *at)
{
	unsigned i = 0;
	while (i < len && (b[i] == 0x26 || b[i] == 0x2e || b[i] == 0x36 ||
			   b[i] == 0x3e || b[i] == 0x64 || b[i] == 0x65 ||
			   b[i] == 0x66 || b[i] == 0x67 || b[i] == 0xf0 ||
			   b[i] == 0xf2 || b[i] == 0xf3))
		i++;
	if (i < len && (b[i] & 0xf0) == 0x40)
		i++;
	*at = i;
	return i < len ? b[i] : 0x100;
}

/* ret (c3), or with a rep or bnd prefix: not ret imm16, not a far ret. */
static bool plain_ret(const struct insn *in)
{
	const uint8_t *b;
	unsigned disp, at;
	uint16_t gprs;
	decode_copy(in, &b, &disp, &gprs);
	return opcode_at(b, in->len, &at) == 0xc3 && at + 1 == in->len &&
	       (at == 0 || (at == 1 && (b[0] == 0xf3 || b[0] == 0xf2)));
}

/* An indirect jmp or call (ff /4, ff /2) as mov rax, the same operand
 * (rex.w 8b /0): into OUT (at most 15 bytes) when not NULL, with *OUT_LEN
 * and where a rip-relative disp32 sits (0: none).  False for a form we
 * do not copy (a 66 or 67 prefix, a far one). */
struct ind_mov {
	uint8_t bytes[16];
	unsigned len, disp;
};

static bool ind_operand(const struct insn *in, struct ind_mov *out)
{
	const uint8_t *b;
	unsigned disp, i = 0, n = 0;
	uint16_t gprs;
	uint8_t o[16], rex = 0x48;

	decode_copy(in, &b, &disp, &gprs);
	for (; i < in->len; i++) {
		if (b[i] == 0x3e || b[i] == 0x2e || b[i] == 0xf2)
			continue;	/* notrack, hints, bnd: no effect */
		if (b[i] == 0x64) {
			o[n++] = 0x64;
			continue;
		}
		break;
	}
	if (i < in->len && (b[i] & 0xf0) == 0x40) {
		rex |= b[i] & 0x03;	/* X and B: the operand's */
		i++;
	}
	if (i + 1 >= in->len || b[i] != 0xff)
		return false;
	uint8_t modrm = b[i + 1];
	unsigned reg = (modrm >> 3) & 7, mod = modrm >> 6, rm = modrm & 7;
	if (reg != 2 && reg != 4)
		return false;
	o[n++] = rex;
	o[n++] = 0x8b;
	o[n++] = (uint8_t)(modrm & 0xc7);	/* reg field: rax */
	unsigned rest = in->len - (i + 2);
	if (n + rest > 15)
		return false;
	unsigned rip_at = 0;
	if (mod == 0 && rm == 5)
		rip_at = n;		/* the disp32 comes first */
	for (unsigned k = 0; k < rest; k++)
		o[n++] = b[i + 2 + k];
	if (out) {
		memcpy(out->bytes, o, n);
		out->len = n;
		out->disp = rip_at;
	}
	return true;
}

static bool has_gs_prefix(const uint8_t *b, unsigned len)
{
	unsigned at;
	opcode_at(b, len, &at);
	for (unsigned i = 0; i < at; i++)
		if (b[i] == 0x65)
			return true;
	return false;
}

const char *itrans_refuse(const struct insn *in)
{
	const uint8_t *bytes;
	unsigned disp;
	uint16_t gprs;

	if (!in->lean)
		return "its accesses need more than the registers before it";
	if (in->branch == BR_OTHER)
		return "a system call or an interrupt";
	if ((in->branch == BR_JMP_IND || in->branch == BR_CALL_IND) &&
	    !ind_operand(in, NULL))
		return "an indirect branch of an unusual form";
	if (in->branch == BR_RET && !plain_ret(in))
		return "a return that pops more than its address";
	switch (in->id) {
	case X86_INS_CPUID:
		return "cpuid is the supervisor's";
	case X86_INS_XGETBV:	/* under --cpuid=valgrind */
		return "xgetbv may be the supervisor's";
	case X86_INS_SYSCALL: case X86_INS_SYSENTER: case X86_INS_INT:
	case X86_INS_INT3: case X86_INS_INTO: case X86_INS_UD2:
	case X86_INS_HLT:
		return "a system call or a trap";
	case X86_INS_JRCXZ: case X86_INS_JECXZ: case X86_INS_JCXZ:
	case X86_INS_LOOP: case X86_INS_LOOPE: case X86_INS_LOOPNE:
		return "a branch on rcx";
	default:
		break;
	}
	if (!decode_copy(in, &bytes, &disp, &gprs))
		return "not decoded by Capstone";
	const struct decode_lean *l = decode_lean(in);
	for (unsigned i = 0; i < l->n_acc; i++)
		if (l->acc[i].seg == 2)
			return "it uses gs, the slot's segment";
	if (has_gs_prefix(bytes, in->len))
		return "it uses gs, the slot's segment";
	if (__builtin_popcount(~gprs & 0xffff & ~(1u << RSP)) < 2)
		return "it uses nearly every register";
	return NULL;
}

/* Does rsp move only by what a stop on return can bound (push, pop, a
 * direct call, leave, add or sub of an immediate)? */
static bool rsp_bounded(const struct insn *in)
{
	if (!in->writes_rsp)
		return true;
	switch (in->id) {
	case X86_INS_PUSH: case X86_INS_POP: case X86_INS_CALL:
	case X86_INS_LEAVE:
		return true;
	case X86_INS_ADD: case X86_INS_SUB: {
		const uint8_t *b;
		unsigned disp, at;
		uint16_t gprs;
		decode_copy(in, &b, &disp, &gprs);
		unsigned op = opcode_at(b, in->len, &at);
		/* 83 /0 or /5 ib, 81 /0 or /5 id on rsp (modrm 0xc4 or 0xec) */
		return (op == 0x83 || op == 0x81) && at + 1 < in->len &&
		       (b[at + 1] == 0xc4 || b[at + 1] == 0xec);
	}
	default:
		return false;
	}
}

/* ---- translation ---- */

static bool fits32(int64_t v)
{
	return v >= INT32_MIN && v <= INT32_MAX;
}

/* Can a copy anywhere in the cache reach what IN reaches from its own pc
 * (its rip-relative operand, its branch target)? */
static bool in_reach(const struct itrans *x, const struct insn *in)
{
	const uint8_t *b;
	unsigned disp;
	uint16_t gprs;
	uint64_t to[2];
	unsigned n = 0;

	decode_copy(in, &b, &disp, &gprs);
	if (disp) {
		int32_t d;
		memcpy(&d, b + disp, 4);
		to[n++] = in->pc + in->len + (uint64_t)(int64_t)d;
	}
	for (unsigned i = 0; i < n; i++) {
		int64_t lo = (int64_t)(to[i] - x->base);
		int64_t hi = (int64_t)(to[i] - (x->base + x->size));
		if (!fits32(lo) || !fits32(hi))
			return false;
	}
	return true;
}

/* The register for the cursor: one none of USED's, r8..r15 first. */
static int pick_reg(uint16_t used)
{
	static const uint8_t order[] = { 11, 10, 9, 8, 15, 14, 13, 12,
					 3, 5, 6, 7, 2, 1, 0 };
	for (unsigned i = 0; i < sizeof(order); i++)
		if (!(used & (1u << order[i])))
			return order[i];
	return -1;
}

static void add_pend(struct itrans *x, uint64_t target, uint32_t block,
		     uint8_t exit)
{
	struct hashtab_probe p;
	for (uint32_t i = hashtab_first(&x->by_target, hash_u64(target), &p);
	     i != HASHTAB_NONE; i = hashtab_next(&x->by_target, &p))
		;
	if (x->n_pend == x->cap_pend) {
		x->cap_pend = x->cap_pend ? 2 * x->cap_pend : 256;
		x->pend = xreallocarray(x->pend, x->cap_pend, sizeof(*x->pend));
	}
	x->pend[x->n_pend] = (struct pend){ target, block, exit };
	hashtab_insert(&x->by_target, &p, x->n_pend++, pend_hash, x);
}

static void patch_rel32(struct itrans *x, uint32_t site, uint64_t to)
{
	int32_t rel = (int32_t)(int64_t)(to - (x->base + site + 4));
	memcpy(x->local + site, &rel, 4);
}

/* Exit E of B goes to block TO from now on. */
static void link_exit(struct itrans *x, struct iblock *b, unsigned e,
		      const struct iblock *to)
{
	patch_rel32(x, b->exit[e].site, x->base + to->off);
	b->exit[e].linked = true;
}

bool itrans_link_far(struct itrans *x, const struct iblock *cb,
		     const struct iexit *ex, uint64_t addr)
{
	uint64_t i = cb->id - x->id_base;
	if (i >= x->n_blocks || x->blocks[i] != cb)
		return false;
	struct iblock *b = x->blocks[i];
	unsigned e = (unsigned)(ex - cb->exit);
	if (e >= b->n_exit || b->exit[e].linked || b->exit[e].ret_miss ||
	    b->exit[e].ind_miss)
		return false;
	int64_t rel = (int64_t)(addr - (x->base + b->exit[e].site + 4));
	if (rel != (int32_t)rel)
		return false;
	patch_rel32(x, b->exit[e].site, addr);
	b->exit[e].linked = true;
	return true;
}

/* Can IN, a string instruction, be B's one instruction (IEND_STR)?  Its
 * registers then in *USED. */
static bool str_ok(struct itrans *x, const struct insn *in, uint16_t *used)
{
	const uint8_t *bytes;
	unsigned disp;
	uint16_t g;
	if (!itrans_is_string(in) || !decode_copy(in, &bytes, &disp, &g) ||
	    has_gs_prefix(bytes, in->len) ||
	    (x->code_ok && !x->code_ok(x->code_ctx, in->pc, in->len)) ||
	    pick_reg(*used | g | RCX_BIT) < 0)
		return false;
	*used |= g;
	return true;
}

/* What the block at PC holds: its instructions, how it ends. */
static const char *gather(struct itrans *x, struct decoder *d, uint64_t pc,
			  const uint64_t *stops, struct iblock *b,
			  uint16_t *used)
{
	uint64_t cur = pc;
	const char *why = NULL;

	*used = 1u << RSP;
	b->kind = IEND_FALL;
	for (;;) {
		bool at_stop = itrans_is_stop(stops, cur);
		if (b->n == IBLOCK_MAX || (at_stop && b->n)) {
			b->exit[0].target = cur;
			break;
		}
		if (at_stop)
			return "the window's stop address";
		const char *err = NULL;
		const struct insn *in = decode_insn(d, cur, &err);
		if (in && !b->n && str_ok(x, in, used)) {
			b->in[b->n++] = in;
			b->kind = IEND_STR;
			b->exit[0].target = cur + in->len;
			b->n_exit = 1;
			return NULL;
		}
		if (!in)
			why = err ? err : "the instruction cannot be read";
		else if (!(why = itrans_refuse(in)) && !in_reach(x, in))
			why = "its operand is out of the code cache's reach";
		else if (!why && x->code_ok &&
			 !x->code_ok(x->code_ctx, cur, in->len))
			why = "code the target can write";
		uint16_t g = 0;
		if (!why) {
			const uint8_t *bytes;
			unsigned disp;
			decode_copy(in, &bytes, &disp, &g);
			if (pick_reg(*used | g | RCX_BIT) < 0)
				why = "the block uses every register";
		}
		if (why) {
			if (!b->n)
				return why;
			b->exit[0].target = cur;
			break;
		}
		*used |= g;
		b->in[b->n++] = in;
		uint64_t next = cur + in->len;
		if (in->branch == BR_RET) {
			b->kind = IEND_RET;
			b->exit[0].target = cur;
			b->exit[0].ret_miss = true;
			break;
		}
		if (in->branch == BR_JMP_IND || in->branch == BR_CALL_IND) {
			b->kind = in->branch == BR_JMP_IND ? IEND_IJMP :
							     IEND_ICALL;
			b->exit[0].target = cur;
			b->exit[0].ind_miss = true;
			break;
		}
		if (in->branch == BR_JMP || in->branch == BR_COND ||
		    in->branch == BR_CALL) {
			b->kind = in->branch == BR_JMP ? IEND_JMP :
				  in->branch == BR_COND ? IEND_JCC : IEND_CALL;
			b->exit[0].target = decode_branch_target(in);
			b->exit[1].target = next;
			break;
		}
		cur = next;
		if (!rsp_bounded(in)) {
			b->exit[0].target = cur;
			break;
		}
	}
	b->n_exit = b->kind == IEND_JCC ? 2 : 1;
	return NULL;
}

/* mov [rT + 8 * K], REG for rcx, rsi, rdi: a string instruction's record
 * (IEND_STR) */
static void emit_str_regs(struct emit *e, const struct iblock *b,
			  unsigned k)
{
	static const uint8_t regs[3] = { 1, 6, 7 };
	for (unsigned i = 0; i < 3; i++) {
		put8(e, rex(true, regs[i], 0, b->rt));
		put8(e, 0x89);
		mem_base(e, regs[i], b->rt, (int32_t)(8 * (k + i)));
	}
}

/* The code of instruction I of B (its accesses, then its copy). */
static void emit_insn(struct itrans *x, struct emit *e, struct iblock *b,
		      unsigned i, unsigned *k)
{
	const struct insn *in = b->in[i];
	const struct decode_lean *l = decode_lean(in);
	const uint8_t *bytes;
	unsigned disp;
	uint16_t g;

	decode_copy(in, &bytes, &disp, &g);
	b->pre[i] = e->off + e->at;
	b->rs[i] = 16;
	if (b->kind == IEND_STR) {
		emit_str_regs(e, b, 1);
		b->copy[i] = e->off + e->at;
		emit_copy(x, e, in, bytes, in->len, disp, disp);
		emit_str_regs(e, b, 4);
		if (decode_string_cond(in)) {
			/* setz byte [rT + 56]: why a repe/repne ended */
			if (b->rt >= 8)
				put8(e, 0x41);
			put8(e, 0x0f);
			put8(e, 0x94);
			mem_base(e, 0, b->rt, 8 * 7);
		}
		return;
	}
	if (l->n_acc) {
		int rs = pick_reg(g | (1u << b->rt));
		b->rs[i] = (uint8_t)rs;
		for (unsigned j = 0; j < l->n_acc; j++) {
			gs_move(e, true, (unsigned)rs, ISLOT_SS);
			addr_of(e, (unsigned)rs, &l->acc[j]);
			put8(e, rex(true, (unsigned)rs, 0, b->rt));
			put8(e, 0x89);
			mem_base(e, (unsigned)rs, b->rt, (int32_t)(8 * ++*k));
			gs_move(e, false, (unsigned)rs, ISLOT_SS);
		}
	}
	bool last_branch = i + 1 == b->n && b->kind != IEND_FALL;
	if (last_branch) {
		int32_t rec = (int32_t)(8 * (1 + b->n_addr));
		b->ep_lea = e->off + e->at;
		lea_self(e, b->rt, rec);
		b->ep_cur = e->off + e->at;
		gs_move(e, true, b->rt, ISLOT_CUR);
		b->ep_rest = e->off + e->at;
		gs_move(e, false, b->rt, ISLOT_ST);
		b->ep_done = e->off + e->at;
		if (b->kind == IEND_JCC)
			pad_patch(e, 2, 7);	/* jcc rel32; jmp rel32 */
		else if (b->kind == IEND_JMP)
			pad_patch(e, 1, 0);
	}
	b->copy[i] = e->off + e->at;
	if (!last_branch) {
		emit_copy(x, e, in, bytes, in->len, disp, disp);
		return;
	}
	switch (b->kind) {
	case IEND_JCC: {
		unsigned at, op = opcode_at(bytes, in->len, &at);
		unsigned cc = op == 0x0f ? bytes[at + 1] & 15 : op & 15;
		put8(e, 0x0f);
		put8(e, (uint8_t)(0x80 | cc));
		b->exit[0].site = e->off + e->at;
		put32(e, 0);
		put8(e, 0xe9);
		b->exit[1].site = e->off + e->at;
		put32(e, 0);
		break;
	}
	case IEND_RET:
	case IEND_IJMP:
	case IEND_ICALL: {
		/* rax = the destination; rcx = its entry's pc - rax, made
		 * with not and lea (no flags): 0 when the table knows it */
		b->r_spill = e->off + e->at;
		gs_move(e, true, 0, ISLOT_RAX);
		gs_move(e, true, 1, ISLOT_RCX);
		if (b->kind == IEND_RET) {
			put8(e, 0x48); put8(e, 0x8b);		/* mov rax, */
			put8(e, 0x04); put8(e, 0x24);		/* [rsp] */
		} else {
			struct ind_mov m;
			ind_operand(in, &m);
			emit_copy(x, e, in, m.bytes, m.len, m.disp, disp);
		}
		/* its own last destination first: rcx = that pc - rax */
		uint32_t common;
		e->site_fix[0] = e->at + 3;
		put8(e, 0x48); put8(e, 0x8b); put8(e, 0x0d);	/* mov rcx, */
		put32(e, 0);					/* [rip+pc] */
		put8(e, 0x48); put8(e, 0xf7); put8(e, 0xd1);	/* not rcx */
		put8(e, 0x48); put8(e, 0x8d); put8(e, 0x4c);	/* lea rcx, */
		put8(e, 0x08); put8(e, 0x01);			/* [rax+rcx+1] */
		put8(e, 0xe3); put8(e, 0x02);			/* jrcxz its */
		put8(e, 0xeb); put8(e, 0x0c);			/* jmp table */
		e->site_fix[1] = e->at + 3;			/* its: */
		put8(e, 0x48); put8(e, 0x8b); put8(e, 0x0d);	/* mov rcx, */
		put32(e, 0);					/* [rip+code] */
		put8(e, 0xe9);					/* jmp have */
		common = e->at;
		put32(e, 0);
		emit_ret_index(e);				/* table: */
		emit_tbl_load(e, ISLOT_TBL);			/* its pc */
		put8(e, 0x48); put8(e, 0xf7); put8(e, 0xd1);	/* not rcx */
		put8(e, 0x48); put8(e, 0x8d); put8(e, 0x4c);	/* lea rcx, */
		put8(e, 0x08); put8(e, 0x01);			/* [rax+rcx+1] */
		put8(e, 0xe3);					/* jrcxz hit */
		uint32_t jr = e->at;
		put8(e, 0);
		if (b->kind != IEND_RET)			/* a miss */
			gs_move(e, true, 0, ISLOT_TGT);
		gs_move(e, false, 1, ISLOT_RCX);
		gs_move(e, false, 0, ISLOT_RAX);
		put8(e, 0xe9);
		b->exit[0].site = e->off + e->at;
		put32(e, 0);
		if (jr < e->cap)
			e->p[jr] = (uint8_t)(e->at - jr - 1);	/* hit: */
		emit_ret_index(e);
		emit_tbl_load(e, ISLOT_TBL + 8);		/* its code */
		put_rel32_at(e, common, e->at);			/* have: */
		gs_move(e, true, 1, ISLOT_TGT);
		gs_move(e, false, 1, ISLOT_RCX);
		gs_move(e, false, 0, ISLOT_RAX);
		b->r_lea = e->off + e->at;
		if (b->kind == IEND_RET) {
			put8(e, 0x48); put8(e, 0x8d); put8(e, 0x64); /* lea */
			put8(e, 0x24); put8(e, 0x08);	/* rsp, [rsp+8] */
		} else if (b->kind == IEND_ICALL) {
			emit_push_ret(e, in->pc + in->len);
		}
		b->r_jmp = e->off + e->at;
		put8(e, 0x65); put8(e, 0xff); put8(e, 0x24);	/* jmp gs:[tgt] */
		put8(e, 0x25);
		put32(e, ISLOT_TGT);
		break;
	}
	case IEND_CALL:
		b->push_lea = e->off + e->at;
		emit_push_ret(e, in->pc + in->len);
		pad_patch(e, 1, 0);
		/* fall through */
	default:
		put8(e, 0xe9);
		b->exit[0].site = e->off + e->at;
		put32(e, 0);
		break;
	}
}

static const char *translate(struct itrans *x, struct iblock *b)
{
	if (x->size - x->used < 64 + ITRANS_HDR)
		return "the code cache is full";
	struct emit e = { x->local + x->used + ITRANS_HDR, 0,
			  (uint32_t)(x->size - x->used - ITRANS_HDR),
			  (uint32_t)(x->used + ITRANS_HDR), { 0, 0 } };
	unsigned k = 0;

	b->off = e.off;
	if (b->kind == IEND_STR)	/* and cmps's and scas's ZF after */
		b->n_addr = decode_string_cond(b->in[0]) ? 7 : 6;
	for (unsigned i = 0; b->kind != IEND_STR && i < b->n; i++)
		b->n_addr = (uint16_t)(b->n_addr + decode_lean(b->in[i])->n_acc);
	int32_t rec = (int32_t)(8 * (1 + b->n_addr));
	struct iexit *fill = &b->exit[b->n_exit++];
	*fill = (struct iexit){ .target = b->pc, .linked = true, .fill = true };
	gs_move(&e, true, b->rt, ISLOT_ST);
	gs_move(&e, false, b->rt, ISLOT_CUR);
	b->probe = e.off + e.at;
	gs_move(&e, true, 1, ISLOT_PRCX);
	b->chk = e.off + e.at;
	if (b->rt >= 8)
		put8(&e, 0x41);
	put8(&e, 0x0f); put8(&e, 0xb6);		/* movzx ecx, byte */
	mem_base(&e, 1, b->rt, rec + x->shadow);	/* [rT + rec + D] */
	put8(&e, 0xe3); put8(&e, 23);		/* jrcxz ok */
	b->full = e.off + e.at;
	gs_move(&e, false, 1, ISLOT_PRCX);
	gs_move(&e, false, b->rt, ISLOT_ST);
	put8(&e, 0xe9);				/* jmp fill */
	fill->site = e.off + e.at;
	put32(&e, 0);
	gs_move(&e, false, 1, ISLOT_PRCX);	/* ok: */
	put8(&e, rex(true, 0, 0, b->rt));	/* mov qword [rT], id */
	put8(&e, 0xc7);
	mem_base(&e, 0, b->rt, 0);
	put32(&e, b->id);
	for (unsigned i = 0; i < b->n; i++)
		emit_insn(x, &e, b, i, &k);
	if (b->kind == IEND_FALL || b->kind == IEND_STR) {
		b->ep_lea = e.off + e.at;
		lea_self(&e, b->rt, rec);
		b->ep_cur = e.off + e.at;
		gs_move(&e, true, b->rt, ISLOT_CUR);
		b->ep_rest = e.off + e.at;
		gs_move(&e, false, b->rt, ISLOT_ST);
		b->ep_done = e.off + e.at;
		pad_patch(&e, 1, 0);
		put8(&e, 0xe9);
		b->exit[0].site = e.off + e.at;
		put32(&e, 0);
	}
	for (unsigned j = 0; j < b->n_exit; j++) {
		b->exit[j].stub = e.off + e.at;
		emit_stub(&e, b->exit[j].target);
	}
	if (e.site_fix[0]) {
		/* the lookup's last destination (itrans_site_set): none yet,
		 * after the code, never run */
		while (e.at % 8)
			put8(&e, 0xcc);
		b->r_site = e.off + e.at;
		put_rel32_at(&e, e.site_fix[0], e.at);
		put_rel32_at(&e, e.site_fix[1], e.at + 8);
		put32(&e, 0); put32(&e, 0);
		put32(&e, 0); put32(&e, 0);
	}
	if (e.at > e.cap)
		return "the code cache is full";
	write_header(x, b);
	for (unsigned j = 0; j < b->n_exit; j++)
		patch_rel32(x, b->exit[j].site, x->base + b->exit[j].stub);
	b->end = e.off + e.at;
	x->used += ITRANS_HDR + ((e.at + 15) & ~15u);
	if (x->used > x->size)
		x->used = x->size;
	return NULL;
}

/* The exits waiting for a block at B's pc go to B. */
static void link_pending(struct itrans *x, const struct iblock *b)
{
	struct hashtab_probe q;
	for (uint32_t i = hashtab_first(&x->by_target, hash_u64(b->pc), &q);
	     i != HASHTAB_NONE; i = hashtab_next(&x->by_target, &q)) {
		struct pend *pe = &x->pend[i];
		struct iblock *from = x->blocks[pe->block - x->id_base];
		if (pe->target == b->pc && !from->exit[pe->exit].linked)
			link_exit(x, from, pe->exit, b);
	}
}

const struct iblock *itrans_block(struct itrans *x, struct decoder *d,
				  uint64_t pc, const uint64_t *stops,
				  const char **why)
{
	const struct iblock *old = find_pc(x, pc);
	if (old)
		return old;

	struct iblock *b = xcalloc(1, sizeof(*b));
	uint16_t used;
	b->pc = pc;
	b->id = x->id_base + x->n_blocks;
	*why = gather(x, d, pc, stops, b, &used);
	if (!*why) {
		b->rt = (uint8_t)pick_reg(used | RCX_BIT);
		*why = translate(x, b);
	}
	if (*why) {
		free(b);
		return NULL;
	}
	if (x->n_blocks == x->cap_blocks) {
		x->cap_blocks = x->cap_blocks ? 2 * x->cap_blocks : 256;
		x->blocks = xreallocarray(x->blocks, x->cap_blocks,
					  sizeof(*x->blocks));
	}
	struct hashtab_probe p;
	find_in(&x->by_pc, x->blocks, pc, &p);		/* none: where it goes */
	x->blocks[x->n_blocks] = b;
	hashtab_insert(&x->by_pc, &p, x->n_blocks++, block_hash, x);

	/* Its exits to blocks there are; others' exits to it. */
	for (unsigned j = 0; j < b->n_exit; j++) {
		if (b->exit[j].ret_miss || b->exit[j].ind_miss ||
		    b->exit[j].fill)
			continue;
		uint64_t to_pc = b->exit[j].target;
		const struct iblock *to = to_pc == pc ? b : find_pc(x, to_pc);
		if (!to)
			to = find_solo(x, to_pc);
		if (to)
			link_exit(x, b, j, to);
		else
			add_pend(x, to_pc, b->id, (uint8_t)j);
	}
	link_pending(x, b);
	return b;
}

uint64_t itrans_stub_sc(const struct itrans *x, const struct iblock *b,
			unsigned j)
{
	return x->base + b->exit[j].stub + ITRANS_STUB_SC;
}

const struct iexit *itrans_exit_at(const struct itrans *x, uint64_t addr,
				   const struct iblock **bp)
{
	const struct iblock *b = find_off(x, addr - x->base);
	if (!b)
		return NULL;
	for (unsigned j = 0; j < b->n_exit; j++)
		if (itrans_stub_sc(x, b, j) == addr) {
			*bp = b;
			return &b->exit[j];
		}
	return NULL;
}

/* Inside an exit's stub (its number in POS->stub): at the original state
 * (but for the three registers it keeps in the slot) on the way to its
 * target. */
static bool in_stub(const struct iblock *b, uint64_t off, struct ipos *pos)
{
	for (unsigned j = 0; j < b->n_exit; j++) {
		uint32_t st = b->exit[j].stub;
		if (off < st || off >= st + ITRANS_STUB)
			continue;
		pos->stub = (uint8_t)j;
		pos->xrax = off > st;
		pos->xrcx = off > st + 9;
		pos->xr11 = off > st + 18;
		return true;
	}
	return false;
}

bool itrans_locate(const struct itrans *x, uint64_t rip, struct ipos *pos)
{
	uint64_t off = rip - x->base;
	const struct iblock *b = rip >= x->base ? find_off(x, off) : NULL;
	if (!b)
		return false;
	memset(pos, 0, sizeof(*pos));
	pos->b = b;
	pos->rs = -1;
	if (b->kind == IEND_SOLO) {
		/* the instruction, partly done, or in the stub after it */
		pos->pc = b->pc;
		pos->solo_begun = off >= b->copy[0];
		if (off >= b->exit[0].stub) {
			pos->done = 1;
			pos->pc = b->exit[0].target;
			in_stub(b, off, pos);
		}
		return true;
	}
	if (in_stub(b, off, pos) && b->exit[pos->stub].fill) {
		pos->pc = b->pc;	/* the state as at its start */
		return true;
	}
	/* The prologue: mov gs:[ST], rT (5+4 bytes), mov rT, gs:[CUR], the
	 * ring-full check (itrans.h); at its jmp to the fill exit rT and
	 * rcx are back. */
	uint32_t spill_end = b->off + 9, ok = b->full + 23;
	pos->rt_spilled = off >= spill_end && off != ok - 5;
	pos->rt_live = off >= b->probe && off != ok - 5;
	pos->prcx_spilled = (off >= b->chk && off <= b->full) || off == ok;
	/* I: the first instruction not complete.  The block's branch is
	 * complete only as a jcc not taken (at the jmp after it). */
	unsigned i = 0;
	bool falls = b->kind == IEND_FALL || b->kind == IEND_STR;
	while (i < b->n && !(i + 1 == b->n && !falls) &&
	       off >= b->copy[i] + b->in[i]->len)
		i++;
	if (b->kind == IEND_STR)
		pos->solo_begun = off >= b->copy[0];
	if (i + 1 == b->n && b->kind == IEND_JCC && off >= b->copy[i] + 6)
		i = b->n;
	pos->done = i;
	if (i < b->n) {
		pos->pc = b->in[i]->pc;
		if (b->rs[i] != 16 && off > b->pre[i] && off <= b->copy[i] &&
		    (i + 1 < b->n || b->kind == IEND_FALL || off <= b->ep_lea)) {
			pos->rs = (int8_t)b->rs[i];
			pos->rs_spilled = true;
		}
	} else {
		pos->pc = b->kind == IEND_JCC ? b->exit[1].target :
			  b->exit[0].target;
	}
	if (in_stub(b, off, pos) && i == b->n)
		pos->pc = b->exit[pos->stub].target;
	if (off > b->ep_lea && b->ep_lea) {
		pos->rt_bumped = off <= b->ep_rest;
		pos->cur_bumped = off > b->ep_cur;
		pos->rt_live = false;
		if (off > b->ep_rest)
			pos->rt_spilled = false;	/* rT is its own again */
	}
	if (b->kind == IEND_CALL && off > b->push_lea)
		pos->rsp_pushed = true;		/* (its pc: the call's) */
	if ((b->kind == IEND_RET || b->kind == IEND_IJMP ||
	     b->kind == IEND_ICALL) && off > b->r_spill && off <= b->r_jmp) {
		pos->rax_spilled = true;
		pos->rcx_spilled = off > b->r_spill + 9;
		if (b->kind == IEND_RET)
			pos->rsp_popped = off > b->r_lea;
		else if (b->kind == IEND_ICALL && off > b->r_lea)
			pos->rsp_pushed = true;
	}
	return true;
}

bool itrans_is_string(const struct insn *in)
{
	unsigned esize;
	bool si, di;
	return decode_string(in, &esize, &si, &di);
}

const struct iblock *itrans_solo(struct itrans *x, const struct insn *in,
				 const char **why)
{
	const struct iblock *old = find_solo(x, in->pc);
	if (old)
		return old;

	const uint8_t *bytes;
	unsigned disp;
	uint16_t gprs;
	*why = NULL;
	if (!itrans_is_string(in) || !decode_copy(in, &bytes, &disp, &gprs))
		*why = "not a string instruction Capstone decoded";
	else if (has_gs_prefix(bytes, in->len))
		*why = "it uses gs, the slot's segment";
	else if (x->code_ok && !x->code_ok(x->code_ctx, in->pc, in->len))
		*why = "code the target can write";
	else if (x->size - x->used < SOLO_PRE + 16 + ITRANS_HDR + ITRANS_STUB)
		*why = "the code cache is full";
	if (*why)
		return NULL;
	struct iblock *b = xcalloc(1, sizeof(*b));
	b->pc = in->pc;
	b->id = UINT32_MAX;		/* no record */
	b->kind = IEND_SOLO;
	b->n = 1;
	b->in[0] = in;
	b->n_exit = 1;
	b->off = (uint32_t)x->used + ITRANS_HDR;
	struct emit e = { x->local + b->off, 0, SOLO_PRE, b->off, { 0, 0 } };
	gs_move(&e, true, 1, ISLOT_SRCX);
	gs_move(&e, true, 6, ISLOT_SRSI);
	gs_move(&e, true, 7, ISLOT_SRDI);
	b->copy[0] = b->off + SOLO_PRE;
	memcpy(x->local + b->copy[0], bytes, in->len);
	b->exit[0].stub = b->copy[0] + in->len;
	b->exit[0].target = in->pc + in->len;
	b->exit[0].linked = true;	/* never linked: no jump to patch */
	e = (struct emit){ x->local + b->exit[0].stub, 0, ITRANS_STUB,
			   b->exit[0].stub, { 0, 0 } };
	emit_stub(&e, b->exit[0].target);
	b->end = b->exit[0].stub + ITRANS_STUB;
	write_header(x, b);
	x->used += ITRANS_HDR +
		   ((SOLO_PRE + in->len + ITRANS_STUB + 15) & ~15u);
	if (x->n_solos == x->cap_solos) {
		x->cap_solos = x->cap_solos ? 2 * x->cap_solos : 64;
		x->solos = xreallocarray(x->solos, x->cap_solos,
					 sizeof(*x->solos));
	}
	struct hashtab_probe p;
	find_in(&x->by_solo, x->solos, in->pc, &p);	/* none: where it goes */
	x->solos[x->n_solos] = b;
	hashtab_insert(&x->by_solo, &p, x->n_solos++, solo_hash, x);
	link_pending(x, b);
	return b;
}
