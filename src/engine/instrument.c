/* The instrument engine (--engine=instrument): the window's threads run
 * on the real CPU from a code cache inside the target (itrans.h), and
 * each block they run writes its number and its instructions' data
 * addresses to the thread's own ring, which the supervisor shares.
 *
 * - At the first run of a window the supervisor maps into the target, by
 *   system calls injected through ptrace (src/tracer/inject.c), the units
 *   (each a thread's slot, its table of branch targets, its ring of
 *   records, a guard page; the rings' shadow), and then a code cache near
 *   each region of code the threads
 *   run (the copies' rip-relative operands must reach).  All are memfds
 *   the supervisor maps too: it writes the caches and reads the ring in
 *   its own memory.  They stay from one window to the next and are taken
 *   out when the target is let go (inst_release); an exec drops them.
 * - The thread enters the cache with its registers as they are, rip at
 *   the block's copy and its gs base at the slot (a thread with a gs base
 *   of its own is stepped), under PTRACE_SYSEMU.  It runs until an exit:
 *   a stub whose system call the supervisor stops at and never lets run,
 *   where a block ends before an instruction the cache does not run (not
 *   lean, a system call, the stop address), or a return or indirect
 *   branch the table does not know.  Linked blocks jump to each other,
 *   and known returns and indirect branches go through the table.
 * - At an exit the ring is read (iring.c) into the same accounting the
 *   emulator's lean instructions go through (engine_account_leans), so
 *   the profile is decode_lean's, step for step.  The instruction there
 *   runs from a block of its own, alone if it is a string instruction,
 *   or is stepped on the CPU (the step engine's path).
 * - A signal or a fault in the cache: the thread's state is put back
 *   (iring.c) as it is at the original instruction (the scratch registers
 *   from the slot, a call's half-done push undone), the instructions of
 *   the block that completed are accounted, and the signal goes to the
 *   step engine's path at the original pc.  A full ring leaves by the
 *   block's fill exit: the ring is read and emptied, and the block runs
 *   again.
 * - Several threads (--threads=all, or several windows at once) run in
 *   the cache together, each with its own unit (MAX_UNITS; a thread that
 *   finds none is stepped).  What they share changes under them only in
 *   ways safe for a thread running it: a block is written before any
 *   jump to it, a jump is linked by one store within a line (pad_patch),
 *   a returns' table is filled only while its thread is stopped, a
 *   block's last destination only while no other thread is in the
 *   cache, and the blocks go (reset) only when none is in it: until
 *   then the threads that come out are stepped (want_reset).
 * - Stepped instead (said once): call stacks, --stop-watch,
 *   --max-instructions, a target with a seccomp filter or a thread with
 *   its own gs base; under --engine=lockstep:instrument, the threads
 *   but the one in the cache (one unit: the proof follows one). */
#include "engine.h"
#include "hostenv.h"

#include <capstone/capstone.h>
#include <errno.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sched.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>

#include "error.h"
#include "itrans.h"
#include "journal.h"
#include "procmaps.h"
#include "tracer.h"
#include "instrument_private.h"

#define CACHE_BYTES (32u << 20)
#define CACHE_REACH (1ull << 30)
/* Blocks translated ahead at a stop: a stop costs more than a block's
 * translation (bench/README.md) */
#define AHEAD 16

/* Whether the code at [PC, PC + LEN) may be copied: code that cannot
 * change unseen (codemap_fixed: a file's, its pages the file's), not a
 * JIT's, whose blocks would run a stale copy after a rewrite made while
 * the target ran natively (between two windows; tests/progs/jit.c). */
static bool code_ok(void *ctx, uint64_t pc, unsigned len)
{
	struct inst *in = ctx;
	return codemap_fixed(in->codemap, in->pid, pc) &&
	       codemap_fixed(in->codemap, in->pid, pc + (len ? len - 1 : 0));
}

/* Where our mappings go: away from where the target's own would (its brk
 * heap grows up from its data, the kernel's mmap down from under the
 * stack), so that its addresses, and so its profile, are the same as
 * under any other engine: the ring at RING_HINT, the cache a gigabyte
 * above the code it copies (still in reach of its rip-relative operands).
 * The first free range of LEN bytes from FROM on, within 768 MiB, per
 * /proc/PID/maps; 0 if none. */
#define RING_HINT 0x200000000000ull
static uint64_t free_range(pid_t pid, uint64_t from, size_t len)
{
	struct maps_iter it;
	struct maps_entry m;
	if (!maps_open(&it, pid))
		return 0;
	uint64_t at = (from + 0xfffff) & ~0xfffffull;
	while (maps_next(&it, &m)) {
		if (m.hi <= at || m.lo >= at + len)
			continue;
		at = (m.hi + 0xfffff) & ~0xfffffull;	/* past it: the maps
							 * are in order */
	}
	maps_close(&it);
	return at - from < (768ull << 20) ? at : 0;
}

/* The blocks of the caches mapped now. */
static uint64_t blocks_now(const struct inst *in)
{
	uint64_t n = 0;
	for (unsigned i = 0; i < in->n_caches; i++) {
		unsigned nb;
		size_t bytes;
		itrans_usage(in->caches[i].x, &nb, &bytes);
		n += nb;
	}
	return n;
}

/* C's blocks' accounting goes with its blocks. */
static void drop_plans(struct inst *in, struct icache *c)
{
	for (uint32_t i = 0; i < c->n_plans; i++)
		engine_lean_block_free(in->eng, c->plans[i]);
	/* (a plan is made when its pc is set) */
	if (c->n_plans)
		memset(c->plans, 0, c->n_plans * sizeof(*c->plans));
}

/* The shadow of N_UNITS rings (itrans.h): for each, a byte per byte of
 * its records and of its guard page. */
static uint64_t shadow_bytes(const struct inst *in)
{
	return (in->n_units - 1) * UNIT_BYTES + RING_BYTES + PAGE;
}

/* The ring and the caches go: our views of them, and through T (when
 * there is one, not exiting) the target's. */
static void unmap_all(struct tracer *tr, struct tracee *t, struct inst *in)
{
	const char *why;
	in->blocks += blocks_now(in);
	for (unsigned i = 0; i < in->n_caches; i++) {
		struct icache *c = &in->caches[i];
		if (guard_journal)
			journal_cache(guard_journal, i, 0, 0);
		munmap(c->local, CACHE_BYTES);
		if (t && !(t->flags & TF_EXITING))
			inject_unmap(tr, t, c->at, CACHE_BYTES, &why);
		drop_plans(in, c);
		free(c->plans);
		c->plans = NULL;
		c->n_plans = 0;
		itrans_free(c->x);
	}
	in->n_caches = 0;
	if (in->ring) {
		munmap(in->ring, in->n_units * UNIT_BYTES);
		if (t && !(t->flags & TF_EXITING))
			inject_unmap(tr, t, in->ring_at,
				     in->n_units * UNIT_BYTES, &why);
	}
	if (in->shadow_at && t && !(t->flags & TF_EXITING))
		inject_unmap(tr, t, in->shadow_at, shadow_bytes(in), &why);
	in->shadow_at = 0;
	in->ring = NULL;
	in->ready = false;
	memset(in->units, 0, sizeof(in->units));
	in->lent = 0;
}

/* The image the ring and caches were mapped in is gone (an exec): our
 * views of them go, nothing to take out of the target. */
static void drop_local(struct inst *in)
{
	unmap_all(NULL, NULL, in);
}

/* Why T's window cannot run from a cache, or NULL. */
static const char *cannot(struct tracer *tr, struct tracee *t)
{
	const struct engine *e = &tr->eng;
	if (e->cs)
		return "call stacks need every instruction's registers";
	if (e->swatch_hi)
		return "--stop-watch must stop at the instruction";
	if (e->max_steps && !e->proof)	/* (the proof stops at each) */
		return "--max-instructions must stop at the instruction";
	if (t->regs.gs_base)
		return "the thread has a gs base of its own";
	return NULL;
}

static bool in_reach(const struct icache *c, uint64_t pc)
{
	return pc - c->at + CACHE_REACH < 2 * CACHE_REACH - CACHE_BYTES;
}

/* The cache for code at PC, mapped now if there is none in reach (NULL
 * when it cannot be: the instruction is stepped). */
static struct icache *cache_for(struct tracer *tr, struct tracee *t,
				struct inst *in, uint64_t pc)
{
	for (unsigned i = 0; i < in->n_caches; i++)
		if (in_reach(&in->caches[i], pc))
			return &in->caches[i];
	if (in->n_caches == MAX_CACHES)
		return NULL;
	/* Above the code, or below it at the top of the address space
	 * (the libraries, under the stack). */
	uint64_t from = pc < (1ull << 46) ? pc + CACHE_REACH / 2 :
					    pc - CACHE_REACH;
	uint64_t hint = free_range(t->tid, from, CACHE_BYTES);
	const char *why = NULL;
	void *local;
	struct icache *c = &in->caches[in->n_caches];
	/* (writable under the proof: its int3 taken out by ptrace) */
	if (!hint || inject_map_shared(tr, t, hint, CACHE_BYTES,
				       PROT_READ | PROT_EXEC |
				       (tr->eng.proof ? PROT_WRITE : 0),
				       "cachetrace-code", &c->at, &local,
				       &why) < 0)
		return NULL;
	c->local = local;
	c->x = itrans_new(c->local, c->at, CACHE_BYTES, in->n_caches << 24,
			  in->shadow);
	/* A guardian that finds a thread here runs it out (guard.c). */
	if (guard_journal)
		journal_cache(guard_journal, in->n_caches, c->at,
			      c->at + CACHE_BYTES);
	itrans_code_check(c->x, code_ok, in);
	in->n_caches++;
	in->maps++;
	return c;
}

/* The cache whose code holds target address ADDR, or NULL. */
static struct icache *icache_at(const struct inst *in, uint64_t addr)
{
	for (unsigned i = 0; i < in->n_caches; i++)
		if (addr - in->caches[i].at < CACHE_BYTES)
			return (struct icache *)&in->caches[i];
	return NULL;
}

/* The same, its translator. */
struct itrans *cache_at(const struct inst *in, uint64_t addr)
{
	const struct icache *c = icache_at(in, addr);
	return c ? c->x : NULL;
}

/* The rings' shadow in T's process (itrans.h): zero pages for their
 * records, which cost no memory, then a page of 1s for each guard page.
 * False (*WHY says why) when it cannot be made. */
static bool map_shadow(struct tracer *tr, struct tracee *t, struct inst *in,
		       const char **why)
{
	static const uint8_t ones[PAGE] = { [0 ... PAGE - 1] = 1 };
	uint64_t len = shadow_bytes(in);
	uint64_t hint = free_range(t->tid, in->ring_at +
				   in->n_units * UNIT_BYTES, len);
	long args[6] = { (long)hint, (long)len, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE,
			 -1, 0 };
	long res = -1;
	if (!hint || inject_syscall(tr, t, SYS_mmap, args, &res, why) < 0 ||
	    (uint64_t)res != hint) {
		if (res > 0)	/* a kernel before 4.17: a hint only */
			inject_unmap(tr, t, (uint64_t)res, len, NULL);
		*why = "the ring's shadow could not be mapped";
		return false;
	}
	in->shadow_at = hint;
	in->shadow = (int32_t)(hint - (in->ring_at + ISLOT_SIZE));
	args[2] = PROT_READ;
	bool ok = true;
	for (unsigned k = 0; ok && k < in->n_units; k++)
		ok = tracee_write_mem(t->tid, hint + k * UNIT_BYTES +
				      RING_BYTES, ones, PAGE) == 0;
	if (!ok || inject_syscall(tr, t, SYS_mprotect, args, &res, why) < 0 ||
	    res < 0) {
		*why = "the ring's shadow could not be written";
		return false;
	}
	return true;
}

/* The units (the slots and rings) in T's process, and their shadow;
 * false (in->off says why) when they cannot be made. */
static bool setup(struct tracer *tr, struct tracee *t, struct inst *in)
{
	const char *why = NULL;
	void *local;
	long args[6] = { 0 }, res;
	int rc;

	/* One thread in the cache at a time under lockstep (its proof
	 * follows one); else a unit for each, up to MAX_UNITS. */
	in->n_units = tr->eng.proof ? 1 : MAX_UNITS;
	size_t rlen = in->n_units * UNIT_BYTES;
	uint64_t ring_hint = free_range(t->tid, RING_HINT, rlen);
	rc = inject_map_shared(tr, t, ring_hint, rlen, PROT_READ | PROT_WRITE,
			       "cachetrace-ring", &in->ring_at, &local, &why);
	if (rc == -EBUSY)
		return false;	/* in a system call's stop: at the next run */
	if (rc < 0)
		goto fail;
	in->ring = local;
	for (unsigned k = 0; k < in->n_units; k++) {
		args[0] = (long)(in->ring_at + (k + 1) * UNIT_BYTES - PAGE);
		args[1] = PAGE;
		args[2] = PROT_NONE;
		if (inject_syscall(tr, t, SYS_mprotect, args, &res, &why) < 0)
			goto fail;
		if (res < 0) {
			why = "the ring's guard page could not be made";
			goto fail;
		}
	}
	if (!map_shadow(tr, t, in, &why))
		goto fail;
	in->codemap = &tr->eng.code;
	in->ready = true;
	in->pid = tr->target_pid;
	in->execs = tr->execs;
	in->maps++;
	return true;
fail:
	in->off = why;
	unmap_all(tr, t, in);
	return false;
}

/* Every block goes, and the returns' tables with them: no thread runs
 * in the cache. */
static void reset(struct inst *in)
{
	for (unsigned i = 0; i < in->n_caches; i++) {
		itrans_reset(in->caches[i].x);
		drop_plans(in, &in->caches[i]);
	}
	for (unsigned k = 0; k < in->n_units; k++) {
		if (in->units[k].used)
			memset(in->ring + k * UNIT_BYTES + ISLOT_TBL, 0,
			       16 * ISLOT_TBL_N);
		in->units[k].used = in->units[k].tid != 0;
	}
}

/* T's returns' table. */
static uint8_t *table_of(struct inst *in, const struct tracee *t)
{
	return (uint8_t *)slot(in, t) + ISLOT_TBL;
}

/* Does T hold a unit of the units mapped now? */
static bool has_unit(const struct inst *in, const struct tracee *t)
{
	return t->iunit && t->iunit <= in->n_units &&
	       in->units[t->iunit - 1].tid == t->tid;
}

/* A unit for T, which runs in the cache from now on: false when none is
 * free (T is stepped). */
static bool lend_unit(struct inst *in, struct tracee *t)
{
	if (has_unit(in, t))
		return true;
	for (unsigned k = 0; k < in->n_units; k++) {
		struct iunit *u = &in->units[k];
		if (u->tid)
			continue;
		u->tid = t->tid;
		u->skip = 0;
		u->used = true;
		in->lent++;
		t->iunit = (uint8_t)(k + 1);
		ring_empty(in, t);
		return true;
	}
	t->iunit = 0;
	return false;
}

/* T's unit is free again: it left the window. */
static void return_unit(struct inst *in, struct tracee *t)
{
	if (in && has_unit(in, t)) {
		in->units[t->iunit - 1].tid = 0;
		in->lent--;
	}
	t->iunit = 0;
}

/* Does a thread other than T run in the cache? */
static bool others_inside(const struct tracer *tr, const struct tracee *t)
{
	for (const struct tracee *o = tr->tracees; o; o = o->next)
		if (o != t && o->in_cache)
			return true;
	return false;
}

/* The blocks end at STOP too (a lead's stop pc, or 0) and follow the
 * decoder: false when T must be stepped instead, while the blocks that
 * must go run in another thread, or T's stop finds no room. */
static bool blocks_current(struct tracer *tr, struct tracee *t,
			   struct inst *in, uint64_t stop)
{
	uint32_t gen = *decode_generation(tr->eng.dec);
	if (gen != in->gen)
		in->want_reset = true;
	if (stop && !itrans_is_stop(in->stops, stop)) {
		unsigned k = 0;
		while (k < MAX_STOPS && in->stops[k])
			k++;
		if (k == MAX_STOPS) {
			/* full: the others' are dropped when no other
			 * window needs them */
			if (tr->n_active > 1)
				return false;
			memset(in->stops, 0, sizeof(in->stops));
			k = 0;
		}
		in->stops[k] = stop;	/* blocks made from now on end
					 * there; those made before go */
		in->want_reset = true;
	}
	if (!in->want_reset)
		return true;
	if (others_inside(tr, t))
		return false;	/* they leave it at their next exit */
	reset(in);
	in->gen = gen;
	in->want_reset = false;
	return true;
}

/* ---- --engine=lockstep:instrument (proof.c) ----
 * The thread in the cache is stepped one machine instruction at a time
 * (PTRACE_SYSEMU_SINGLESTEP: an exit's system call still stops it).  At
 * each step its registers are put back as at the original code; where
 * they moved, an original instruction (or a rep string's iteration)
 * completed: from the registers before it to these, it is the step
 * engine's step.  A step inside a block's own code moves nothing. */

static bool moved(const struct user_regs_struct *a,
		  const struct user_regs_struct *b)
{
	/* r15 .. rdi, then rip and rsp */
	return memcmp(a, b, offsetof(struct user_regs_struct, orig_rax)) ||
	       a->rip != b->rip || a->rsp != b->rsp;
}

/* Where a thread next completes an original instruction, as the cache's
 * code goes (itrans.h).  Within a block, the next copy's first byte: the
 * prologue (the ring-full check's way out aside) and the code of a
 * copy's accesses are moves, and the copy before it runs on the way
 * (only a block's last instruction branches, and no copy follows it).
 * At its end, the copy of the first instruction of the block its jumps
 * go to (a jcc's two), or nothing where they go to an exit's stub (its
 * stop ends the run); a return's or an indirect branch's lookup runs to
 * its last jmp, whose destination is then in the slot.  A string
 * instruction's iterations, and what is not known, are stepped. */

/* The thread goes to cache address D: where it completes its next
 * instruction (*TO, 0 at a stub); false if D is neither. */
static bool proof_dest(const struct inst *in, uint64_t d, uint64_t *to)
{
	const struct icache *c = icache_at(in, d);
	struct ipos q;
	if (!c || !itrans_locate(c->x, d, &q))
		return false;
	const struct iblock *b = q.b;
	*to = 0;
	if (d == c->at + b->off)
		*to = c->at + b->copy[0];
	for (unsigned j = 0; !*to && j < b->n_exit; j++)
		if (d == c->at + b->exit[j].stub)
			return true;
	return *to != 0;
}

/* The destination of the jmp or jcc whose rel32 is at cache offset SITE
 * of C: proof_dest's. */
static bool proof_site(const struct inst *in, const struct icache *c,
		       uint32_t site, uint64_t *to)
{
	int32_t rel;
	memcpy(&rel, c->local + site, 4);
	return proof_dest(in, c->at + site + 4 + (int64_t)rel, to);
}

/* For thread T at cache address RIP: in->run_to and in->n_run. */
static void proof_next(struct inst *in, const struct tracee *t, uint64_t rip)
{
	const struct icache *c = icache_at(in, rip);
	struct ipos pos;
	in->n_run = -1;
	if (!c || !itrans_locate(c->x, rip, &pos) ||
	    pos.b->kind == IEND_SOLO)
		return;
	const struct iblock *b = pos.b;
	uint64_t off = rip - c->at, *to = in->run_to;
	int n = 1;
	if (off < b->off)
		return;
	for (unsigned i = 0; i < b->n; i++)
		if (b->copy[i] > off) {
			to[0] = c->at + b->copy[i];
			goto done;
		}
	uint32_t last = b->copy[b->n - 1];
	switch (b->kind) {
	case IEND_RET:
	case IEND_IJMP:
	case IEND_ICALL:
		if (off < b->r_jmp)
			to[0] = c->at + b->r_jmp;
		else if (off != b->r_jmp ||
			 !proof_dest(in, slot(in, t)[ISLOT_TGT / 8], &to[0]))
			return;
		break;
	case IEND_JCC:
		if (off == last) {
			if (!proof_site(in, c, b->exit[0].site, &to[0]) ||
			    !proof_site(in, c, b->exit[1].site, &to[1]))
				return;
			n = 2;
		} else if (!proof_site(in, c, b->exit[1].site, &to[0])) {
			return;
		}
		break;
	case IEND_STR:
		if (off == last)	/* its iterations */
			return;
		/* fall through */
	default:
		if (!proof_site(in, c, b->exit[0].site, &to[0]))
			return;
	}
done:
	/* (never where it stands: it would stop there at once) */
	in->n_run = 0;
	for (int k = 0; k < n; k++) {
		if (to[k] == rip) {
			in->n_run = -1;
			return;
		}
		if (to[k] && !(k == 1 && to[1] == to[0]))
			to[in->n_run++] = to[k];
	}
}

/* int3s at in->run_to, through our view of the cache (the target's is
 * writable under the proof: its guardian takes them out if we die, and
 * takes back a thread one byte past one, guard.c); the journal has them
 * while they are in, and until the thread that trapped on one is back
 * on its byte (inst_trap puts it back first). */
static void proof_plant(struct inst *in)
{
	for (int k = 0; k < in->n_run; k++) {
		uint64_t at = in->run_to[k];
		struct icache *c = icache_at(in, at);
		uint8_t *p = c->local + (at - c->at);
		in->bp_orig[k] = *p;
		guard_cache_int3((unsigned)k, at, *p);
		*p = 0xcc;
		in->bp[k] = at;
	}
}

static void proof_unplant(struct inst *in)
{
	for (unsigned k = 0; in && k < 2; k++) {
		if (!in->bp[k])
			continue;
		struct icache *c = icache_at(in, in->bp[k]);
		c->local[in->bp[k] - c->at] = in->bp_orig[k];
		guard_cache_int3(k, 0, 0);
		in->bp[k] = 0;
	}
}

/* T stands at original registers NOW (its pc put back), in the cache or
 * leaving it. */
static void proof_at(struct tracer *tr, struct tracee *t, struct inst *in,
		     const struct user_regs_struct *now)
{
	if (!tr->eng.proof)
		return;
	struct user_regs_struct r = *now;
	r.gs_base = t->regs.gs_base;
	r.orig_rax = (unsigned long long)-1;
	if (moved(&in->pr, &r)) {
		proof_step(&tr->eng, t, &in->pr, &r);
		in->pr = r;
		in->moves++;
	}
}

/* The exit whose stub's system call a thread with registers R stopped
 * at (its PTRACE_SYSEMU stop), *B its block; NULL if none. */
static const struct iexit *exit_at(struct inst *in,
				   const struct user_regs_struct *r,
				   const struct iblock **b)
{
	struct itrans *cx = r->orig_rax == ITRANS_STUB_NR ?
			    cache_at(in, r->rip) : NULL;
	return cx ? itrans_exit_at(cx, r->rip, b) : NULL;
}

/* A step's trap in the cache, T's registers R: false when they are in no
 * block. */
static bool proof_trap(struct tracer *tr, struct tracee *t, struct inst *in,
		       struct user_regs_struct *r)
{
	struct ipos pos;
	uint64_t base;
	proof_next(in, t, r->rip);
	if (!put_back(t, in, r, &pos, &base))
		return false;
	r->rip = pos.pc;
	proof_at(tr, t, in, r);
	in->stepping = true;
	return true;
}

/* T stopped in the cache somewhere else than an exit (a signal, a fault,
 * the ring's guard): put its state back at the original instruction and
 * account what completed.  False when the pc is not in a block. */
static bool recover(struct tracer *tr, struct tracee *t, struct inst *in)
{
	struct user_regs_struct r;
	struct ipos pos;
	uint64_t base;
	proof_unplant(in);
	if (tracee_getregs(t->tid, &r) < 0 || !put_back(t, in, &r, &pos, &base))
		return false;
	const struct iblock *b = pos.b;
	in->stepping = false;
	struct user_regs_struct at = r;
	at.rip = pos.pc;
	proof_at(tr, t, in, &at);
	if (b->kind == IEND_SOLO) {
		/* Inside a string instruction (its iterations so far), or
		 * before it, or in the stub after it. */
		in->recovered++;
		leave_solo(tr, t, in, b, &r, pos.solo_begun, pos.done);
		r.rip = pos.pc;
		return back_at(t, &r);
	}
	drain(tr, t, in, base, b->pc);

	/* The block's completed instructions, from its partial record. */
	const uint64_t *w = ring_local(in, base);
	struct lean_step s[IBLOCK_MAX];
	unsigned k = 1;
	if (b->kind == IEND_STR) {
		/* its rcx, rsi and rdi before it are in the record once it
		 * began; after it (or so far), in the registers */
		if (pos.solo_begun) {
			struct user_regs_struct b0, a = r;
			str_before(t, b->in[0], w + 1, &a, &b0);
			account_string(tr, t, b->in[0], &b0, &a, pos.done);
		}
		pos.done = 0;
	}
	for (unsigned i = 0; i < pos.done; i++) {
		const struct decode_lean *l = decode_lean(b->in[i]);
		s[i].in = b->in[i];
		s[i].l = l;
		s[i].rsp = 0;
		for (unsigned j = 0; j < l->n_acc; j++)
			s[i].addr[j] = w[k++] + (l->acc[j].seg == 1 ?
						 t->regs.fs_base : 0);
		s[i].next = i + 1 < b->n ? b->in[i + 1]->pc : pos.pc;
	}
	in->recovered++;
	if (pos.done) {
		in->cached += pos.done;
		t->win.steps += pos.done;
		engine_account_leans(&tr->eng, t, s, pos.done,
				     t->regs.fs_base);
	}
	ring_empty(in, t);
	r.rip = pos.pc;
	return back_at(t, &r);
}

static bool leave_cache(struct tracer *tr, struct tracee *t,
			struct inst *in, bool at_exit);

static int inst_begin_window(struct tracer *tr, struct tracee *t)
{
	int rc = step_engine.begin_window(tr, t);
	if (rc < 0)
		return rc;
	t->in_cache = false;
	if (!tr->inst) {
		tr->inst = xcalloc(1, sizeof(struct inst));
		tr->inst->stepped = insn_tally_new();
		tr->inst->read_running = -1;
		tr->inst->eng = &tr->eng;
	}
	struct inst *in = inst_of(tr);
	if (in->pid != tr->target_pid)
		in->off = NULL, in->said = false;
	if (in->ready && in->execs != tr->execs)
		drop_local(in);
	if (!in->off)
		in->off = cannot(tr, t);
	if (!in->off && !in->ready)
		setup(tr, t, in);
	if (in->off && tr->engine_else && !in->cached && !in->said) {
		/* The default engine: the other one for this run (the
		 * options it was given need it, or the host refused the
		 * cache); a note for the host's reason. */
		if (!cannot(tr, t) && !tr->opt.quiet)
			error_msg("note: the instrument engine cannot run "
				  "here: %s; the %s engine runs the windows",
				  in->off, tr->engine_else->name);
		tr->engine = tr->engine_else;
		tr->engine_else = NULL;
		step_engine.end_window(tr, t);
		return tr->engine->begin_window(tr, t);
	}
	if (in->off && !in->said && !tr->opt.quiet) {
		error_msg("note: --engine=instrument: %s; the window is "
			  "single-stepped", in->off);
		in->said = true;
	}
	return 0;
}

/* T is at an exit's PTRACE_SYSEMU stop: a single step from there would
 * first report the end of the system call that never ran, as a SIGTRAP
 * queued like a signal (measured: a job-control stop pending then comes
 * first, and the SIGTRAP was delivered after the detach: the target died,
 * faults-sw-threads).  PTRACE_SYSCALL takes it to the system call's exit
 * stop instead, synchronously, nothing executed; from there a step is a
 * step.  Done here, before the step engine's step and when T leaves the
 * window: false when T went away. */
static bool flush_sysemu(struct tracee *t)
{
	if (!t->sysemu)
		return true;
	t->sysemu = false;
	int status;
	if (tracee_restart(t, PTRACE_SYSCALL, 0) < 0 ||
	    tracee_wait(t->tid, &status) <= 0)
		return false;
	if (WIFSTOPPED(status))
		t->flags |= TF_STOPPED;		/* in a stop again */
	if (WIFSTOPPED(status) && WSTOPSIG(status) == SIGTRAP &&
	    !((unsigned)status >> 16))
		return true;
	/* Not the report (the thread is dying): the dispatcher's. */
	t->deferred_status = status;
	t->has_deferred = true;
	return false;
}

static enum verdict stepped(struct tracer *tr, struct tracee *t)
{
	if (!flush_sysemu(t))
		return VERDICT_DONE;
	return step_engine.run(tr, t);
}

/* The block at PC for translate_ahead: NULL where the thread must stop
 * first (the stop address, a breakpoint, out of C's reach) or none can
 * be made. */
static const struct iblock *ahead_block(struct tracer *tr, struct inst *in,
					struct icache *c, uint64_t pc)
{
	const char *why;
	if (itrans_is_stop(in->stops, pc) || !in_reach(c, pc) ||
	    breakpoint_at(tr, pc))
		return NULL;
	const struct insn *first = decode_insn(tr->eng.dec, pc, &why);
	if (!first)
		return NULL;
	const struct iblock *b = itrans_block(c->x, tr->eng.dec, pc, in->stops,
					      &why);
	if (!b && itrans_is_string(first))
		b = itrans_solo(c->x, first, &why);
	return b;
}

/* The blocks B's direct exits go to, and theirs, translated now (AHEAD
 * at most, breadth first, in B's cache) and so linked, and the return
 * sites of its calls put in the returns' table: the thread need not
 * stop at each for its translation. */
static void translate_ahead(struct tracer *tr, struct tracee *t,
			    struct inst *in, struct icache *c,
			    const struct iblock *b)
{
	const struct iblock *q[AHEAD + 1];
	unsigned head = 0, tail = 0, made = 0;
	q[tail++] = b;
	while (head < tail) {
		const struct iblock *cur = q[head++];
		const struct iblock *nb;
		if (cur->kind == IEND_SOLO)
			continue;
		const struct insn *last = cur->in[cur->n - 1];
		uint64_t ret = last->pc + last->len;
		if ((cur->kind == IEND_CALL || cur->kind == IEND_ICALL) &&
		    (nb = ahead_block(tr, in, c, ret)) &&
		    nb->kind != IEND_SOLO) {
			/* where its callee returns: known to the returns'
			 * table before the return (a miss is a stop) */
			itrans_ret_add(c->x, table_of(in, t), ret, nb);
			if (++made == AHEAD)
				return;
			if (tail <= AHEAD)
				q[tail++] = nb;
		}
		for (unsigned j = 0; j < cur->n_exit; j++) {
			const struct iexit *x = &cur->exit[j];
			if (x->linked || x->ret_miss || x->ind_miss ||
			    !(nb = ahead_block(tr, in, c, x->target)))
				continue;
			if (++made == AHEAD)
				return;
			if (nb->kind != IEND_SOLO && tail <= AHEAD)
				q[tail++] = nb;
		}
	}
}

/* The bytes of records T's ring is to hold before its fill exit (the
 * ring empty): all of it, or less under --sample's cap or in turns. */
static uint64_t ring_room(const struct tracer *tr, const struct inst *in,
			  const struct tracee *t)
{
	uint64_t cap = tracee_leads(t) ? tr->eng.sample_cap : 0;
	uint64_t want, least = 512;
	if (cap) {
		/* Room for the records of 3/4 of the instructions left to
		 * the cap, at the bytes an instruction the ring has taken
		 * lately (two before it has any): the fill exit stops the
		 * thread before the cap, or not far past it when its code
		 * writes fewer, and each stop leaves a quarter of what was
		 * left.  Measured on bench/sample's phases, 55 samples of
		 * 150k after 50k: with a half, 41 stops a sample, 53k and
		 * 152k run; 3/4, 29 stops, 67k and 162k; 7/8, 27 stops, 71k
		 * and 170k (code that writes fewer bytes than the last
		 * phase's runs past). */
		uint64_t left = cap > t->win.steps ? cap - t->win.steps : 0;
		want = in->ring_insns > 1000 ?
			left * in->ring_bytes / in->ring_insns / 4 * 3 :
			left * 2;
	} else if (in->lent > 1 && tr->eng.cm->n_cores > 1) {
		/* Threads in the cache together on a model of several
		 * cores run in turns, as the emulate engine's do: a ring
		 * holds a turn's records (TURN_CORES instructions), so that
		 * the model sees their accesses interleaved finely, as its
		 * coherence needs.  On one core, a whole ring each, about a
		 * million instructions (as valgrind's own turns, 100,000
		 * blocks): turns of TURN cost 3x on tests/attach/mtcache.c's
		 * four threads. */
		want = in->ring_insns > 1000 ?
			TURN_CORES * in->ring_bytes / in->ring_insns :
			TURN_CORES * 8;
		least = 64;
	} else {
		return RING_BYTES;
	}
	return want < least ? least : want > RING_BYTES ? RING_BYTES : want;
}

/* Is the ring read while its thread runs (drain_running), on the other
 * CPU?  Where two CPUs are allowed, a thread is alone in the cache, and
 * no proof steps it. */
static bool reads_running(struct tracer *tr, struct inst *in)
{
	if (in->read_running < 0) {
		/* (the tracer's own mask, not the CPU it is pinned to) */
		cpu_set_t set = tr->saved_self;
		bool known = tr->pin_cpu >= 0 ||
			     sched_getaffinity(0, sizeof(set), &set) == 0;
		in->read_running = !host_forced("ring-read", "stopped") &&
				   known && CPU_COUNT(&set) > 1;
	}
	return in->read_running && !tr->eng.proof && in->lent == 1 &&
	       tr->n_active == 1;
}

/* drain_running's bytes: it waits for READ_LEAST (each look stalls the
 * thread on its cursor's line) and reads READ_MOST at a time (about a
 * millisecond, between two looks for the threads' events). */
#define READ_LEAST 16384
#define READ_MOST (256 * 1024)
/* A thread runs on another CPU than ours when its stays in the cache
 * have lately written this many bytes of records or more: a stop costs
 * more across CPUs (the wake-up of the other), which shorter stays do
 * not win back.  Measured: bench/README.md. */
#define STAY_APART (512 * 1024)

static int inst_busy(struct tracer *tr)
{
	struct inst *in = inst_of(tr);
	if (!in || !in->ready || !reads_running(tr, in))
		return -1;
	for (struct tracee *t = tr->tracees; t; t = t->next) {
		if (!t->in_cache || !t->pin_apart || !has_unit(in, t) ||
		    tracee_stopped(t))
			continue;
		return drain_running(tr, t, in, READ_LEAST, READ_MOST) ? 1 : 0;
	}
	return -1;
}

static enum verdict inst_run(struct tracer *tr, struct tracee *t)
{
	struct inst *in = inst_of(tr);
	if (t->in_cache)	/* (the int3s are its: others step) */
		proof_unplant(in);
	if (t->in_cache && in->stepping && !t->inject) {
		/* --engine=lockstep:instrument: on in the cache, to the next
		 * copy or a step */
		in->stepping = false;
		proof_plant(in);
		if (tracee_restart(t, in->n_run >= 0 ? PTRACE_SYSEMU :
				   PTRACE_SYSEMU_SINGLESTEP, 0) < 0)
			error_msg("cannot step thread %d", t->tid);
		return VERDICT_RUNNING;
	}
	if (t->in_cache && !leave_cache(tr, t, in, false)) {
		t->win.fail = "its state in the code cache could not be "
			      "recovered";
		return VERDICT_FAILED;
	}
	/* --sample's cap, met in the cache: here, at its next exit */
	if (tracee_leads(t) && engine_at_sample_cap(&tr->eng, t))
		return VERDICT_STOP;
	if (!in->off)
		in->off = cannot(tr, t);
	if (!in->off && !in->ready && !t->inject && !t->in_syscall)
		setup(tr, t, in);
	if (in->off || !in->ready || t->inject || t->in_syscall ||
	    !lend_unit(in, t) ||
	    !blocks_current(tr, t, in, tracee_leads(t) ? t->win.stop_pc : 0))
		return stepped(tr, t);
	const char *why;
	const struct iblock *b = NULL;
	tr->eng.decoding = t;
	const struct insn *first = decode_insn(tr->eng.dec, t->regs.rip, &why);
	struct icache *c = first ? cache_for(tr, t, in, t->regs.rip) : NULL;
	if (!c) {
		/* no cache in reach: stepped */
	} else {
		b = itrans_block(c->x, tr->eng.dec, t->regs.rip, in->stops,
				 &why);
		if (!b && why && strstr(why, "full")) {
			in->want_reset = true;
			if (blocks_current(tr, t, in, 0))
				b = itrans_block(c->x, tr->eng.dec,
						 t->regs.rip, in->stops, &why);
		}
		if (!b && why && strstr(why, "can write") &&
		    in->maps_window != tr->eng.windows) {
			/* Code mapped since the ranges were read: the
			 * target ran natively between windows (a module
			 * dlopen'ed between two samples was stepped), so
			 * they are read again, once a window. */
			in->maps_window = tr->eng.windows;
			tr->eng.code.stale = true;
			b = itrans_block(c->x, tr->eng.dec, t->regs.rip,
					 in->stops, &why);
		}
		/* a string instruction no block takes: alone */
		if (!b && itrans_is_string(first) &&
		    !itrans_is_stop(in->stops, t->regs.rip))
			b = itrans_solo(c->x, first, &why);
	}
	if (b && b->kind != IEND_SOLO)
		translate_ahead(tr, t, in, c, b);
	if (!b || breakpoint_at_pc(tr, t)) {
		if (first)
			insn_tally_add(in->stepped, first);
		return stepped(tr, t);
	}
	struct iunit *u = &in->units[t->iunit - 1];
	/* (a block whose record alone is more: the whole ring, once) */
	u->skip = u->whole ? 0 : (RING_BYTES - ring_room(tr, in, t)) & ~7ull;
	u->whole = false;
	ring_empty(in, t);
	struct user_regs_struct r = t->regs;
	r.rip = itrans_entry(c->x, b);
	r.gs_base = unit_at(in, t);
	if (tr->eng.proof) {
		/* stepped from here: no report of an exit's end first */
		if (!flush_sysemu(t))
			return VERDICT_DONE;
		in->pr = t->regs;
		in->pr.orig_rax = (unsigned long long)-1;
		in->moves = 0;
	}
	if (tracee_setregs(t->tid, &r) < 0)
		return stepped(tr, t);
	t->in_cache = true;
	t->insn = NULL;
	if (in->most_inside < in->n_units) {	/* (none can be more) */
		unsigned n = 0;
		for (const struct tracee *o = tr->tracees; o; o = o->next)
			n += o->in_cache;
		if (n > in->most_inside)
			in->most_inside = n;
	}
	hwbp_sync(tr, t);
	if (reads_running(tr, in) && in->stay >= STAY_APART)
		tracee_pin_apart(tr, t);	/* its ring read on ours */
	else
		tracee_pin(tr, t);
	t->sysemu = false;	/* from an exit's stop: no report of its end */
	if (tr->eng.proof) {
		proof_next(in, t, r.rip);
		proof_plant(in);
	}
	if (tracee_restart(t, tr->eng.proof && in->n_run < 0 ?
			   PTRACE_SYSEMU_SINGLESTEP : PTRACE_SYSEMU, 0) < 0)
		error_msg("cannot run thread %d", t->tid);
	guard_fault_stopped(t->tid, "parked");
	return VERDICT_RUNNING;
}

static bool inst_trap(struct tracer *tr, struct tracee *t)
{
	struct inst *in = inst_of(tr);
	if (!t->in_cache)	/* (an mm system call: mm_invalidate) */
		return step_trap(tr, t);
	if (si_code_is_sent(tracee_si_code(t->tid))) {
		/* Not our exit: a SIGTRAP sent to it, delivered at the
		 * original instruction. */
		if (!recover(tr, t, in))
			return false;
		t->inject = SIGTRAP;
		return true;
	}
	if (tr->eng.proof) {
		struct user_regs_struct r;
		const struct iblock *b;
		bool ok = tracee_getregs(t->tid, &r) == 0;
		if (ok && ((in->bp[0] && r.rip == in->bp[0] + 1) ||
			   (in->bp[1] && r.rip == in->bp[1] + 1))) {
			/* one of our int3s (it runs only to them); killed
			 * here, the guardian takes it back
			 * (tests/attach/ringfill.sh) */
			guard_fault("proof");
			r.rip--;
			ok = tracee_setregs(t->tid, &r) == 0;
		}
		proof_unplant(in);	/* (once it is back on the byte) */
		if (!ok)
			return false;
		if (exit_at(in, &r, &b))
			return leave_cache(tr, t, in, true);
		if (!proof_trap(tr, t, in, &r))
			return false;
		/* --max-instructions or a sample's length met in the cache
		 * (t->win.steps those before it entered): out of it, every
		 * instruction it completed accounted */
		if (tracee_leads(t) && engine_at_cap(&tr->eng, t, in->moves))
			return leave_cache(tr, t, in, false);
		return true;
	}
	return leave_cache(tr, t, in, true);
}

/* T stopped in the cache: AT_EXIT (its stop may be the PTRACE_SYSEMU
 * stop of an exit's stub) at an exit, the exit is taken; anywhere else (a
 * signal, a fault, our interrupt), its state is recovered.  Either way T
 * is then at an original instruction, its instructions accounted.  False
 * when its registers cannot be had. */
static bool leave_cache(struct tracer *tr, struct tracee *t, struct inst *in,
			bool at_exit)
{
	struct user_regs_struct r;
	if (tracee_getregs(t->tid, &r) < 0)
		return false;
	const struct iblock *b;
	const struct iexit *x = at_exit ? exit_at(in, &r, &b) : NULL;
	if (!x)
		return recover(tr, t, in);
	struct icache *bc = icache_at(in, r.rip);	/* b's cache */
	/* The stub's system call, stopped at and never run: the registers
	 * it kept back, and no system call in progress. */
	r.rax = slot(in, t)[ISLOT_XRAX / 8];
	r.rcx = slot(in, t)[ISLOT_XRCX / 8];
	r.r11 = slot(in, t)[ISLOT_XR11 / 8];
	r.orig_rax = (unsigned long long)-1;
	t->sysemu = true;
	in->exits++;
	in->stepping = false;
	uint64_t to = x->target;
	if (b->kind == IEND_SOLO) {
		r.rip = to;
		proof_at(tr, t, in, &r);
		leave_solo(tr, t, in, b, &r, true, true);
		return back_at(t, &r);
	}
	if (x->ret_miss || x->ind_miss) {
		/* A return or an indirect branch the table did not know:
		 * finished here, and known from now on unless it leaves the
		 * window's frames. */
		if (x->ret_miss) {
			if (tracee_read_mem(t->tid, r.rsp, &to, 8) != 8)
				return false;
			r.rsp += 8;
		} else {
			to = slot(in, t)[ISLOT_TGT / 8];
		}
		if (b->kind == IEND_ICALL) {
			const struct insn *call = b->in[b->n - 1];
			uint64_t ret = call->pc + call->len;
			r.rsp -= 8;
			if (tracee_write_mem(t->tid, r.rsp, &ret, 8) < 0)
				return false;
		}
		r.rip = to;
		proof_at(tr, t, in, &r);
		drain(tr, t, in, slot(in, t)[ISLOT_CUR / 8], to);
		const char *why;
		const struct iblock *nb;
		struct icache *c;
		if ((!tracee_leads(t) || !t->win.on_return ||
		     r.rsp <= t->win.entry_sp) &&
		    (c = cache_for(tr, t, in, to)) &&
		    (nb = itrans_block(c->x, tr->eng.dec, to, in->stops,
				       &why))) {
			itrans_ret_add(c->x, table_of(in, t), to, nb);
			/* (not while another thread may read it: its pc
			 * and code are two stores) */
			if (bc && !others_inside(tr, t))
				itrans_site_set(bc->x, b, to, c->x, nb);
		}
	} else {
		r.rip = to;
		proof_at(tr, t, in, &r);
		if (x->fill) {
			/* the ring is full: read, the block run again */
			in->fills++;
			if (slot(in, t)[ISLOT_CUR / 8] == ring_start(in, t))
				in->units[t->iunit - 1].whole = true;
			guard_fault("ringdrain");   /* tests/attach/ringfill.sh */
		}
		drain(tr, t, in, slot(in, t)[ISLOT_CUR / 8], to);
		/* Its destination made and the exit linked to it: in b's
		 * cache when it is in that cache's reach (where b itself
		 * came ahead of the thread); else in the cache that has it
		 * in reach, the jump from one cache to the other when it
		 * reaches.  Code at the edge of a cache's reach (glibc's,
		 * in an attached CPython loop) left the cache 28,000 times
		 * a second at one such exit. */
		const struct iblock *nb;
		struct icache *c;
		if (x->fill)
			;	/* never linked: to b itself */
		else if (bc && in_reach(bc, to))
			ahead_block(tr, in, bc, to);
		else if (bc && (c = cache_for(tr, t, in, to)) &&
			 (nb = ahead_block(tr, in, c, to)))
			itrans_link_far(bc->x, b, x, itrans_entry(c->x, nb));
	}
	r.rip = to;
	return back_at(t, &r);
}

static void inst_end_window(struct tracer *tr, struct tracee *t)
{
	struct inst *in = inst_of(tr);
	if (t->in_cache)
		proof_unplant(in);
	if (in && t->in_cache && !(t->flags & TF_EXITING))
		leave_cache(tr, t, in, tracee_trapped(t));
	else if (in && t->in_cache)
		/* It died in the cache (a SIGKILL): its registers are gone,
		 * the ring (ours too) is not: the blocks it completed but
		 * the last, whose successor is unknown. */
		drain(tr, t, in, slot(in, t)[ISLOT_CUR / 8], 0);
	t->in_cache = false;
	if (!(t->flags & TF_EXITING))
		flush_sysemu(t);
	t->sysemu = false;
	return_unit(in, t);
	if (in)
		in->stepping = false;
	if (tracee_leads(t))
		proof_window_end(&tr->eng);
	if (in && !tr->n_active)
		in->off = NULL;		/* probed again at the next window */
	step_engine.end_window(tr, t);
}

/* The ring and the caches stay mapped from one window to the next (the
 * blocks stay translated): they are taken out of the target when it is
 * let go, through any of its stopped threads. */
static void inst_release(struct tracer *tr)
{
	struct inst *in = inst_of(tr);
	if (!in || !in->ready)
		return;
	if (in->execs != tr->execs) {
		drop_local(in);
		return;
	}
	struct tracee *t = tr->tracees;
	while (t && (!tracee_stopped(t) || (t->flags & TF_EXITING) ||
		     t->in_cache))
		t = t->next;
	unmap_all(tr, t, in);
}

const struct engine_ops instrument_engine = {
	.name = "instrument",
	.begin_window = inst_begin_window,
	.run = inst_run,
	.trap = inst_trap,
	.end_window = inst_end_window,
	.release = inst_release,
	.busy = inst_busy,
};

void inst_describe(const struct tracer *tr, FILE *f, const char *prefix)
{
	const struct inst *in = tr->inst;
	if (!in || tr->engine != &instrument_engine)
		return;
	fprintf(f, "%sEngine: instrument: %" PRIu64 " instructions from the "
		"code cache (%" PRIu64 " blocks translated, %" PRIu64 " ring "
		"fills, %" PRIu64 " exits, %" PRIu64 " stops inside), %" PRIu64
		" stepped",
		prefix, in->cached, in->blocks + blocks_now(in), in->fills,
		in->exits - in->fills, in->recovered,
		tr->eng.steps - in->cached);
	if (in->most_inside > 1)
		fprintf(f, "; %u threads in it at once", in->most_inside);
	if (in->words_running)
		fprintf(f, "; %.0f%% of its records read while it ran",
			100.0 * (double)in->words_running / (double)in->words);
	if (in->off)
		fprintf(f, "; stepped because %s", in->off);
	fputc('\n', f);
	insn_tally_print(in->stepped, f, prefix, "Stepped most");
}

void inst_free(struct tracer *tr)
{
	struct inst *in = tr->inst;
	if (!in)
		return;
	unmap_all(NULL, NULL, in);
	insn_tally_free(in->stepped);
	free(in);
	tr->inst = NULL;
}
