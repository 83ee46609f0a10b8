/* Decoding x86-64 instructions into memory accesses and branch outcomes.
 *
 * Accounting rules (Cachegrind's, as valgrind 3.19's VEX translates each
 * instruction; where the Intel SDM and VEX differ we follow VEX, checked
 * against Lackey's --trace-mem=yes output, since our counts must match):
 *
 * - Every trap is one instruction fetch, then the data accesses in the
 *   order the CPU (VEX) makes them, then conditional branch outcomes.
 * - A load and a store of the same location is ONE access of kind
 *   ACC_MODIFY (Cachegrind's Dm, counted as one Dr): add [m],r; inc, neg,
 *   not, shifts and rotates of [m]; adc/sbb [m]; xadd; cmpxchg, cmpxchg8b,
 *   cmpxchg16b (locked or not: one CAS).  setcc [m] is a plain write.
 * - lock-prefixed arithmetic (lock add/or/and/sub/xor/inc/dec/neg/not/
 *   xadd/bts/btr/btc) and xchg [m], r (implicitly locked) load first and
 *   then do a CAS: a read, then a modify, of the same location.
 * - Those locked read-modify-writes go through VEX's casLE: an IRCAS,
 *   then Exit(CAS failed -> restart this insn), one Bc, not inverted and
 *   never taken single-threaded.  cmpxchg, cmpxchg8b and cmpxchg16b
 *   (locked or not) have no such exit, nor do unlocked read-modify-writes
 *   (Cachegrind --branch-sim=yes per-line Bc, valgrind 3.19).
 * - Reading one place and writing another are separate accesses, read
 *   first: push [m] (read m, write [rsp-8]), pop [m] (read [rsp], write m,
 *   whose address uses rsp+8 as the SDM says), call [m] (read m, write
 *   [rsp-8]), movs (read [rsi], write [rdi]).  cmps reads [rdi] and then
 *   [rsi] (VEX's order); scas reads [rdi]; lods reads [rsi]; stos writes
 *   [rdi].  Addresses come from the registers before the step, whatever DF.
 * - Stack: push/pushfq/call/enter write 8 bytes below rsp; pop/popfq/ret
 *   read [rsp]; leave reads [rbp].
 * - cmp and test of [m] only read; bt [m], imm reads the operand; bt/bts/
 *   btr/btc [m], reg touch ONE BYTE at m + (reg >> 3), reg sign-extended
 *   from the operand size (VEX's translation; the SDM allows an operand-
 *   sized access at m + (reg >> 6) * 8, Lackey shows the byte).  The
 *   reg, reg forms go through memory too: VEX stores the operand at
 *   rsp - 288 (below the red zone), reads (bt) or modifies (bts/btr/btc)
 *   the byte at + ((offset & (bits - 1)) >> 3), and the modifying forms
 *   load the operand back (zlib's inflateReset2: bt rbp, rdx; Lackey:
 *   S 8, L 1; S 8, M 1, L 8).
 * - Loads whose value VEX's iropt proves dead are not made: `pop reg`
 *   followed, before any read of reg, a branch or a partial write, by an
 *   instruction that writes all of reg (64 or 32 bits) has no Dr
 *   (libsqlite3's sqlite3Select: pop rax; mov eax, 0x40).  rsp and rbp
 *   are exempt (VEX keeps them precise at memory accesses).  The same
 *   pass drops bt reg, reg's byte load when its CF is dead; we keep it.
 * - A rep string whose count VEX's iropt sees as a constant in the
 *   superblock (mov ecx, imm or xor ecx, ecx earlier in the same basic
 *   block) loses its first Exit(rcx == 0): no Bc on its first trap
 *   (decode_step's superblock_step).
 * - lea, nop, prefetch* and clflush* access nothing (the latter two are
 *   reported as ACC_PREFETCH, which Cachegrind ignores).
 * - Vector loads and stores are one access of their full size (a 32-byte
 *   vmovdqu is one 32-byte access), also when an AVX-512 k mask limits
 *   them.  maskmovdqu is a 16-byte ACC_MODIFY at [rdi] (VEX loads, merges
 *   and stores).  vmaskmov/vpmaskmov access each element whose mask sign
 *   bit is set.  AVX2 gathers load every element: enabled ones at their
 *   address, disabled ones at [rsp] (VEX substitutes a safe address).
 *   AVX-512 gathers and scatters (which valgrind does not run) access the
 *   elements enabled in their k mask.  Masks are read from the state
 *   before the step (decode_prepare): gathers clear them as they go.
 * - fxsave, fxrstor, xsave, xrstor: VEX's sequences of helper calls and
 *   per-register stores or loads, as Cachegrind counts them (decode_step.c,
 *   step_vex_xs: up to 37 accesses).  xsaveopt, xsavec, xsaves, xrstors,
 *   which VEX does not run: one access over the XSAVE area the
 *   instruction uses: 576 bytes of legacy area and header, plus the
 *   components in edx:eax & XCR0 (standard format: up to the end of the
 *   highest; compacted: the sum of their sizes; sizes and offsets from
 *   CPUID 0xd).
 * - rep string instructions: ptrace traps once per iteration.  VEX turns
 *   one execution into: Exit(rcx == 0 -> next insn) (a Bc), one element,
 *   then back to itself (rep), or for repe/repne a second Exit(cond ->
 *   this insn) (a Bc).  Cachegrind records an exit whose destination is
 *   the fall through as inverted: taken = NOT guard.  So the first Bc is
 *   taken when the count (rcx, ecx with 0x67) is NOT zero; the second is
 *   taken when the repeat condition holds after the element.  A rep with
 *   count n >= 1 thus runs n + 1 times under Cachegrind.  Per trap: count
 *   0: one fetch, no access, Bc not taken.  Count >= 1: Bc taken, the
 *   element's accesses, for repe/repne the condition Bc; and when the
 *   trap finished the instruction because rcx reached 0 (rep, or the
 *   condition still held) one more fetch and a not-taken Bc (rcx == 0).
 * - jcc, jrcxz, loop*: one Bc, taken iff the next pc is not the fall
 *   through.  jmp/call through a register or memory: one Bi (indirect,
 *   target = the pc after the step).  Direct jmp/call, ret, syscall: none.
 * - rip-relative: next instruction + disp; fs:/gs: add fs_base/gs_base;
 *   the 0x67 prefix truncates the address (before the segment base) to
 *   32 bits.
 * - An instruction we do not know costs one fetch and nothing else, and is
 *   flagged (insn.unknown) so that the tracer can say so once per pc. */
#include "decode.h"
#include "decode_private.h"
#include "error.h"
#include "hashtab.h"
#include "hostenv.h"

#include <capstone/capstone.h>
#include <cpuid.h>
#include <stdlib.h>
#include <string.h>

/* ---- setup ---- */

static void xsave_layout(struct decoder *d)
{
	unsigned int a, b, c, dx;

	/* Defaults: the standard layout of current Intel CPUs. */
	d->xcr0 = 7;
	d->comp_size[2] = 256;
	d->comp_off[2] = 576;
	d->off_ymmh = 576;
	d->off_opmask = 1088;
	d->off_zmmh = 1152;
	d->off_hi16 = 1664;
	d->xbuf_len = 4096;
	if (!__get_cpuid(1, &a, &b, &c, &dx) || !(c & bit_OSXSAVE))
		return;
	d->xcr0 = host_xcr0();
	if (!__get_cpuid_count(0xd, 0, &a, &b, &c, &dx) || b == 0)
		return;
	for (unsigned int i = 2; i < 19; i++) {
		unsigned int ea_, eb, ec, ed;
		if (__get_cpuid_count(0xd, i, &ea_, &eb, &ec, &ed)) {
			d->comp_size[i] = ea_;
			d->comp_off[i] = eb;
			d->comp_align[i] = ec & 2;
		}
	}
	if (c > d->xbuf_len && c <= 65536)
		d->xbuf_len = c;
	if (__get_cpuid_count(0xd, 2, &a, &b, &c, &dx) && b)
		d->off_ymmh = b;
	if (__get_cpuid_count(0xd, 5, &a, &b, &c, &dx) && b)
		d->off_opmask = b;
	if (__get_cpuid_count(0xd, 6, &a, &b, &c, &dx) && b)
		d->off_zmmh = b;
	if (__get_cpuid_count(0xd, 7, &a, &b, &c, &dx) && b)
		d->off_hi16 = b;
}

struct decoder *decode_new(const struct decode_target *target, const char **err)
{
	struct decoder *d = calloc(1, sizeof(*d));

	if (!d) {
		*err = "out of memory";
		return NULL;
	}
	if (!target || !target->read_mem) {
		*err = "decode target without read_mem";
		free(d);
		return NULL;
	}
	d->target = *target;
	d->gen = 1;
	if (cs_open(CS_ARCH_X86, CS_MODE_64, &d->cs) != CS_ERR_OK) {
		*err = "cannot open Capstone for x86-64";
		free(d);
		return NULL;
	}
	cs_option(d->cs, CS_OPT_DETAIL, CS_OPT_ON);
	d->ci = cs_malloc(d->cs);
	xsave_layout(d);
	d->xbuf = malloc(d->xbuf_len);
	if (!d->ci || !d->xbuf) {
		*err = "out of memory";
		decode_free(d);
		return NULL;
	}
	return d;
}

void decode_free(struct decoder *d)
{
	if (!d)
		return;
	for (uint32_t i = 0; i < d->n_recs; i++)
		free(d->recs[i]);
	free(d->recs);
	decode_reclaim(d);
	free(d->dead);
	free(d->vpage);
	hashtab_free(&d->map);
	if (d->ci)
		cs_free(d->ci, 1);
	cs_close(&d->cs);
	free(d->xbuf);
	if (d->chase)
		chase_free(d->chase);
	free(d);
}

void decode_allow_x87(struct decoder *d, bool on)
{
	d->allow_x87 = on;
}

bool decode_lands_ok(struct decoder *d, const struct insn *in,
		     const struct user_regs_struct *before, uint64_t landed)
{
	const struct drec *r = (const struct drec *)in;
	uint64_t next = in->pc + in->len, ret;

	/* Unknown length; nothing completed (a system call interrupted and
	 * restarted, a rep between iterations); the fall through. */
	if (!in->len || landed == in->pc)
		return true;
	switch (in->branch) {
	case BR_NONE:
		/* A step inside a transaction aborts it: to the fallback. */
		return landed == next || in->id == X86_INS_XBEGIN ||
		       in->id == X86_INS_XEND || in->id == X86_INS_XABORT;
	case BR_COND:
		return landed == next || landed == r->target || !r->target;
	case BR_JMP:
	case BR_CALL:
		return landed == r->target || !r->target;
	case BR_RET:
		if (d->target.read_mem(d->target.ctx, before->rsp, &ret,
				       sizeof(ret)) != sizeof(ret))
			return true;
		return landed == ret;
	case BR_OTHER:
		/* A system call returns to the next instruction, except
		 * rt_sigreturn, which goes where the signal frame says. */
		return in->id != X86_INS_SYSCALL || landed == next ||
		       before->rax == 15 /* rt_sigreturn */;
	default:
		return true;	/* through a register or memory */
	}
}

const uint32_t *decode_generation(const struct decoder *d)
{
	return &d->gen;
}

void decode_reclaim(struct decoder *d)
{
	for (uint32_t i = 0; i < d->n_dead; i++)
		free(d->dead[i]);
	d->n_dead = 0;
}

const uint32_t *decode_volatile_pages(const struct decoder *d)
{
	return &d->n_vpage;
}

static uint32_t vpage_slot(uint64_t page, uint32_t cap)
{
	return (uint32_t)(hash_u64(page) & (cap - 1));
}

bool decode_volatile_page(const struct decoder *d, uint64_t addr)
{
	if (!d->n_vpage)
		return false;
	uint64_t key = (addr >> 12) + 1;
	for (uint32_t i = vpage_slot(key, d->cap_vpage);;
	     i = (i + 1) & (d->cap_vpage - 1)) {
		if (d->vpage[i] == key)
			return true;
		if (!d->vpage[i])
			return false;
	}
}

void decode_add_volatile_page(struct decoder *d, uint64_t addr)
{
	if (decode_volatile_page(d, addr))
		return;
	if (2 * (d->n_vpage + 1) > d->cap_vpage) {
		uint32_t cap = d->cap_vpage ? 2 * d->cap_vpage : 64;
		uint64_t *n = xcalloc(cap, sizeof(*n));
		for (uint32_t k = 0; k < d->cap_vpage; k++) {
			uint64_t key = d->vpage[k];
			if (!key)
				continue;
			uint32_t i = vpage_slot(key, cap);
			while (n[i])
				i = (i + 1) & (cap - 1);
			n[i] = key;
		}
		free(d->vpage);
		d->vpage = n;
		d->cap_vpage = cap;
	}
	uint64_t key = (addr >> 12) + 1;
	uint32_t i = vpage_slot(key, d->cap_vpage);
	while (d->vpage[i])
		i = (i + 1) & (d->cap_vpage - 1);
	d->vpage[i] = key;
	d->n_vpage++;
}

size_t decode_cached_count(const struct decoder *d)
{
	return d->n_recs;
}

void decode_invalidate(struct decoder *d, uint64_t start, uint64_t end)
{
	uint32_t kept = 0;

	/* Rare (exec, a system call that unmaps or reprotects code): drop
	 * the records in range and rebuild the map from the rest, which
	 * keeps linear probing's chains intact without tombstones.  None in
	 * range (most such calls are about data): nothing changes. */
	for (uint32_t i = 0; i < d->n_recs; i++) {
		struct drec *r = d->recs[i];
		if (r->insn.pc >= start && r->insn.pc < end) {
			if (d->n_dead == d->cap_dead) {
				d->cap_dead = d->cap_dead ? 2 * d->cap_dead : 64;
				d->dead = xreallocarray(d->dead, d->cap_dead,
							sizeof(*d->dead));
			}
			d->dead[d->n_dead++] = r;
		} else {
			d->recs[kept++] = r;
		}
	}
	if (kept == d->n_recs)
		return;
	if (d->chase)
		chase_clear(d->chase);	/* superblocks span many pcs */
	d->sb_gen++;
	if (!++d->gen)
		d->gen = 1;
	memset(d->recent, 0, sizeof(d->recent));
	d->n_recs = kept;
	hashtab_clear(&d->map);
	for (uint32_t i = 0; i < kept; i++)
		hashtab_add(&d->map, rec_hash(d, i), i, rec_hash, d);
}

/* ---- a record's facts, for the engines ---- */

bool decode_string(const struct insn *insn, unsigned *esize, bool *si,
		   bool *di)
{
	const struct drec *r = (const struct drec *)insn;
	if (r->cls != SC_STR || r->addr32)
		return false;
	*esize = r->esize;
	*si = r->str_op == STR_MOVS || r->str_op == STR_CMPS ||
	      r->str_op == STR_LODS;
	*di = r->str_op != STR_LODS;
	return true;
}

bool decode_xsave_family(const struct insn *insn)
{
	return ((const struct drec *)insn)->flags & (RF_XSAVE | RF_XSAVEC);
}

bool decode_string_cond(const struct insn *insn)
{
	const struct drec *r = (const struct drec *)insn;
	return r->cls == SC_STR &&
	       (r->str_op == STR_CMPS || r->str_op == STR_SCAS);
}

uint64_t decode_branch_target(const struct insn *insn)
{
	return ((const struct drec *)insn)->target;
}

bool decode_copy(const struct insn *insn, const uint8_t **bytes,
		 unsigned *disp_off, uint16_t *gprs)
{
	const struct drec *r = (const struct drec *)insn;
	*bytes = r->bytes;
	*disp_off = r->copy_disp;
	*gprs = r->gprs;
	return r->copyable;
}

struct chase *decode_chase(struct decoder *d)
{
	return d->chase;
}

void decode_set_chase(struct decoder *d, bool on)
{
	d->sb_gen++;
	if (on && !d->chase)
		d->chase = chase_new();
	else if (!on && d->chase) {
		chase_free(d->chase);
		d->chase = NULL;
	}
}
