/* Software breakpoints: one int3 byte patched into the text with
 * PTRACE_POKETEXT (which works on r-x text, where process_vm_writev fails
 * with EFAULT), the original word kept so that removal restores the text
 * byte for byte. */
#include "tracer.h"

#include <errno.h>
#include <stddef.h>
#include <sys/ptrace.h>
#include <sys/user.h>

int breakpoint_insert(pid_t tid, struct breakpoint *bp, uint64_t addr)
{
	errno = 0;
	long word = ptrace(PTRACE_PEEKTEXT, tid, (void *)addr, NULL);
	if (errno)
		return -errno;
	long patched = (word & ~0xffL) | 0xcc;
	/* Known to the guardian before it is in the text. */
	guard_int3(tid, addr, (uint8_t)word, true);
	tracee_mem_changed();
	codemap_ours(addr, sizeof(word));	/* still the file's code */
	if (ptrace(PTRACE_POKETEXT, tid, (void *)addr, (void *)patched) < 0) {
		int err = errno;
		guard_int3(tid, addr, (uint8_t)word, false);
		return -err;
	}
	bp->addr = addr;
	bp->orig_word = word;
	bp->inserted = true;
	return 0;
}

int breakpoint_remove(pid_t tid, struct breakpoint *bp)
{
	if (!bp->inserted)
		return 0;
	/* Put back only the byte we changed: the rest of the word may have
	 * been written since (self-modifying code, relocations). */
	errno = 0;
	long word = ptrace(PTRACE_PEEKTEXT, tid, (void *)bp->addr, NULL);
	if (errno == EIO || errno == EFAULT) {
		/* Unmapped (a dlclose'd library): the int3 went with its
		 * text, nothing is left to restore. */
		bp->inserted = false;
		return 0;
	}
	if (errno)
		return -errno;
	if ((word & 0xff) != 0xcc) {
		/* The text was mapped again (dlclose, then dlopen): a fresh
		 * copy without our int3, which must not be overwritten. */
		bp->inserted = false;
		return 0;
	}
	long restored = (word & ~0xffL) | (bp->orig_word & 0xff);
	tracee_mem_changed();
	if (ptrace(PTRACE_POKETEXT, tid, (void *)bp->addr,
		   (void *)restored) < 0)
		return -errno;
	guard_int3(tid, bp->addr, (uint8_t)bp->orig_word, false);
	bp->inserted = false;
	return 0;
}

void breakpoint_shadow(const struct breakpoint *bp, uint64_t addr,
		       void *buf, size_t len)
{
	if (bp->inserted && bp->addr >= addr && bp->addr - addr < len)
		((unsigned char *)buf)[bp->addr - addr] =
			(unsigned char)(bp->orig_word & 0xff);
}

/* Hardware breakpoints and watchpoints: the x86 debug registers, per
 * thread, through PTRACE_POKEUSER at offsetof(struct user, u_debugreg).
 * DR0-3 hold addresses; DR7 enables slot i with bit 2i, its condition in
 * bits 16+4i (00 execute, 01 write, 11 read/write) and its length in bits
 * 18+4i (00 1 byte, 01 2, 11 4, 10 8; 00 for execute).  New threads do not
 * inherit them: they are programmed at each thread's first stop. */
static int poke_dr(pid_t tid, int reg, unsigned long value)
{
	if (ptrace(PTRACE_POKEUSER, tid,
		   (void *)offsetof(struct user, u_debugreg[reg]),
		   (void *)value) < 0)
		return -errno;
	return 0;
}

static unsigned long len_bits(unsigned len)
{
	switch (len) {
	case 2: return 1;
	case 4: return 3;
	case 8: return 2;
	default: return 0;
	}
}

/* DR7 for the slots of ENABLED_MASK. */
static unsigned long dr7_of(const struct hw_slot slots[4],
			    unsigned enabled_mask)
{
	unsigned long dr7 = 0;
	for (int i = 0; i < 4; i++) {
		const struct hw_slot *s = &slots[i];
		if (!s->used || !(enabled_mask & (1u << i)))
			continue;
		dr7 |= 1UL << (2 * i);
		dr7 |= (unsigned long)s->rw << (16 + 4 * i);
		if (s->rw)
			dr7 |= len_bits(s->len) << (18 + 4 * i);
	}
	return dr7;
}

/* Program TID's debug registers; ADDR holds what DR0-3 hold and is kept
 * up to date: with DR7 off (WAS_OFF) and the addresses in place, only DR7
 * is written (a window's start event, re-armed at each window's end,
 * bench/windows.c). */
static int program(pid_t tid, const struct hw_slot slots[4],
		   unsigned enabled_mask, uint64_t addr[4], bool was_off)
{
	unsigned long dr7 = dr7_of(slots, enabled_mask);
	bool in_place = was_off;
	for (int i = 0; i < 4 && in_place; i++)
		if (slots[i].used && (enabled_mask & (1u << i)) &&
		    addr[i] != slots[i].addr)
			in_place = false;
	int rc;
	if (!in_place) {
		rc = poke_dr(tid, 7, 0);  /* off while the addresses change */
		if (rc < 0)
			return rc;
		for (int i = 0; i < 4; i++) {
			const struct hw_slot *s = &slots[i];
			if (!s->used || !(enabled_mask & (1u << i)))
				continue;
			addr[i] = 0;	/* not known if it fails */
			rc = poke_dr(tid, i, s->addr);
			if (rc < 0)
				return rc;
			addr[i] = s->addr;
		}
	}
	if (dr7)
		guard_dr_used();	/* the guardian clears them if we die */
	return dr7 ? poke_dr(tid, 7, dr7) : 0;
}

int hwbp_clear(pid_t tid)
{
	return poke_dr(tid, 7, 0);
}

unsigned hwbp_hits(pid_t tid)
{
	errno = 0;
	long dr6 = ptrace(PTRACE_PEEKUSER, tid,
			  (void *)offsetof(struct user, u_debugreg[6]), NULL);
	if (errno)
		return 0;
	poke_dr(tid, 6, 0);
	return (unsigned)dr6 & 0xf;
}

void hwbp_sync(struct tracer *tr, struct tracee *t)
{
	/* None while it is stepped: its own window must not trap on them. */
	unsigned want = tracee_stepping(t) ? 0 : tr->dr_want;
	if (t->dr_mask == want)
		return;
	if (!want) {
		if (hwbp_clear(t->tid) == 0)
			t->dr_mask = 0;
		return;
	}
	if (program(t->tid, tr->hw_slots, want, t->dr_addr, !t->dr_mask) == 0)
		t->dr_mask = want;
}

struct breakpoint *breakpoint_at(struct tracer *tr, uint64_t pc)
{
	if (tr->start_bp.inserted && pc == tr->start_bp.addr)
		return &tr->start_bp;
	if (tr->dlhook_bp.inserted && pc == tr->dlhook_bp.addr)
		return &tr->dlhook_bp;	/* a dlopen inside a window */
	if (tr->stop_bp.inserted && pc == tr->stop_bp.addr)
		return &tr->stop_bp;	/* the native engine's */
	return NULL;
}

struct breakpoint *breakpoint_trapped(struct tracer *tr, uint64_t rip)
{
	for (unsigned i = 0; i < N_INT3; i++) {
		struct breakpoint *bp = tracer_int3(tr, i);
		if (bp->addr && rip == bp->addr + 1 &&
		    (bp->orig_word & 0xff) != 0xcc)
			return bp;
	}
	return NULL;
}

struct breakpoint *breakpoint_at_pc(struct tracer *tr, const struct tracee *t)
{
	return breakpoint_at(tr, t->regs.rip);
}
