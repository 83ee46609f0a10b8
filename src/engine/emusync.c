/* The emulate engine (emulate.c), its sync points and its ops: a slice
 * run in Unicorn from a thread's state and written back to it, what a
 * real step may have changed, and the engine's run and trap (the
 * threads' turns, a futex wait's given away). */
#include "emulate.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <capstone/capstone.h>
#include <unicorn/unicorn.h>

#include <elf.h>

#include "emumem.h"
#include "error.h"
#include "journal.h"
#include "modelq.h"
#include "tracer.h"

/* ---- sync points ---- */

/* Give Unicorn T's state: registers always, the rest when stale. */
int emu_seed(struct tracer *tr, struct emu *em, struct tracee *t)
{
	if (em->t != t) {
		em->t = t;
		em->fp_stale = true;
	}
	if (em->maps_stale) {
		struct journal *j = guard_journal;
		if (j) {
			journal_wb_begin(j);
			emumem_record(em->mem, j);
			journal_wb_commit(j);
		}
		emumem_writeback(em->mem);
		if (j)
			journal_wb_done(j);
		if (emumem_refresh_maps(em->mem) < 0)
			return -1;
		em->maps_stale = false;
	}
	if (em->all_stale || em->mem_stale) {
		/* Read again what we hold, once the maps are known, and keep
		 * what did not change (issue 27: a window's fixed cost). */
		emumem_revalidate(em->mem, em->all_stale);
		em->all_stale = em->mem_stale = false;
	}
	if (em->fp_stale) {
		em->xs_valid = false;	/* the thread's vector state moved */
		em->xmm_in_xs = false;
		struct user_fpregs_struct fp;
		if (ptrace(PTRACE_GETFPREGS, t->tid, 0, &fp) < 0)
			return -1;
		if (!em->fp_valid || !fp_equal(&fp, &em->fp))
			if (fp_to_uc(em, &fp) < 0)
				return -1;
		em->fp = fp;
		em->fp_valid = true;
		em->fp_stale = false;
	}
	em->fp_dirty = false;
	return regs_write(em, &t->regs);
}

/* Write what Unicorn changed back to the real thread T.  With a
 * guardian (attached: guard.c), everything written is first recorded in
 * its journal, so that if cachetrace dies halfway the guardian writes it
 * all: the thread never runs on from registers that do not match its
 * memory. */
static int sync_out(struct emu *em, struct tracee *t,
		    const struct user_regs_struct *regs)
{
	struct journal *j = guard_journal;
	bool fp_out = em->fp_dirty, xs_out = em->xs_dirty;
	if (fp_out) {
		struct user_fpregs_struct fp;
		if (emu_fp_from_uc(em, &fp) < 0)
			return -1;
		fp_merge(&em->fp, &fp);
	}
	if (xs_out) {
		/* What ran on our CPU: the upper vector and mask state,
		 * with x87 and SSE as Unicorn has them (the fxsave part of
		 * the image, but its software-reserved bytes). */
		memcpy(em->xs, &em->fp, 464);
		uint64_t bv;
		memcpy(&bv, em->xs + 512, 8);
		bv |= 3;
		memcpy(em->xs + 512, &bv, 8);
	}
	if (j) {
		journal_wb_begin(j);
		emumem_record(em->mem, j);
		journal_wb_add(j, JREC_REGS, t->tid, 0, regs, sizeof(*regs));
		if (fp_out)
			journal_wb_add(j, JREC_FPREGS, t->tid, 0, &em->fp,
				       sizeof(em->fp));
		if (xs_out)
			journal_wb_add(j, JREC_XSTATE, t->tid, 0, em->xs,
				       em->xs_len);
		journal_wb_commit(j);
	}
	int rc = emumem_writeback(em->mem);
	guard_fault("wb");	/* memory written, registers not yet */
	if (tracee_setregs(t->tid, regs) < 0)
		rc = -1;
	if (fp_out) {
		if (ptrace(PTRACE_SETFPREGS, t->tid, 0, &em->fp) < 0)
			rc = -1;
		em->fp_dirty = false;
	}
	if (xs_out) {
		struct iovec iov = { em->xs, em->xs_len };
		if (ptrace(PTRACE_SETREGSET, t->tid, NT_X86_XSTATE, &iov) < 0)
			rc = -1;
		em->xs_dirty = false;
	}
	if (j)
		journal_wb_done(j);
	return rc;
}

void sync_for_unwind(void *ctx, pid_t tid)
{
	struct emu *em = ctx;
	if (em->t && em->t->tid == tid && em->unwinding)
		sync_out(em, em->t, em->unwinding);
}

/* O, stopped by window_stop_others, ran nothing since it was last
 * restarted, so our copy of the memory still holds: its real step had
 * not begun (the stop is at the instruction it was given, not a rep
 * string's, which can stop there having run), or it was stopped inside
 * the system call the step began, which the kernel will restart (a thread
 * waiting in futex, nanosleep, read...). */
static bool ran_nothing(const struct tracee *o)
{
	struct user_regs_struct r;
	unsigned event = (unsigned)o->deferred_status >> 16;
	/* Our interrupt, or the trap of a step it overtook (a system call
	 * it interrupted: window_stop_others took the trap). */
	bool trap = event == 0 && WIFSTOPPED(o->deferred_status) &&
		    WSTOPSIG(o->deferred_status) == SIGTRAP;
	if (!o->has_deferred || (event != PTRACE_EVENT_STOP && !trap) ||
	    tracee_getregs(o->tid, &r) < 0)
		return false;
	if (emu_syscall_restarts(&r))
		return true;
	return !trap && tracee_stepping(o) && o->insn && !o->insn->rep &&
	       r.rip == o->insn->pc && r.rip == o->regs.rip &&
	       r.rsp == o->regs.rsp && r.rcx == o->regs.rcx;
}

/* Stop the target's other threads while T is emulated. */
void emu_hold_others(struct tracer *tr, struct emu *em, struct tracee *t)
{
	unsigned n = 0;
	for (struct tracee *o = tr->tracees; o; o = o->next)
		if (o != t && !tracee_stopped(o)) {
			o->emu_flags |= EF_HELD;
			n++;
		}
	if (!n)
		return;
	tr->eng.others_stop(tr, t);
	for (struct tracee *o = tr->tracees; o; o = o->next) {
		if (!(o->emu_flags & EF_HELD))
			continue;
		o->emu_flags &= ~EF_HELD;
		if (ran_nothing(o))
			o->emu_flags |= EF_IDLE;
		else
			em->mem_stale = true;	/* it ran */
	}
}

/* Account the hooked instruction that completed before a fault on the
 * next one's fetch, then hook that one. */
static enum why after_fault(struct tracer *tr, struct emu *em,
			    struct tracee *t)
{
	struct user_regs_struct now = t->regs;
	if (regs_read(em, &now) < 0)
		return WHY_ERROR;
	if (!em->pending || now.rip == t->regs.rip)
		return WHY_FAULT;	/* the hooked instruction faulted */
	engine_account(&tr->eng, t, &now);
	em->pending = false;
	em->emulated++;
	if (tracee_leads(t) && engine_at_stop(&tr->eng, t))
		return WHY_STOP;
	tr->eng.decoding = t;
	return engine_prepare(&tr->eng, t) < 0 ? WHY_DECODE : WHY_FAULT;
}

/* The decoder's view while emulating: Unicorn's memory (code the
 * emulator wrote is not in the target yet), else the target's. */
static ssize_t mirror_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
	struct emu *em = ctx;
	/* Byte by byte at the end of a mapping: the instruction may be
	 * shorter than the 15 bytes asked for. */
	if (uc_mem_read(em->uc, addr, buf, len) == UC_ERR_OK)
		return (ssize_t)len;
	size_t n = 0;
	while (n < len && uc_mem_read(em->uc, addr + n, (char *)buf + n, 1) ==
	       UC_ERR_OK)
		n++;
	if (n)
		return (ssize_t)n;
	return tracee_read_mem(em->t->tid, addr, buf, len);
}

#ifdef CT_BENCH_FLOOR
/* bench/unicorn-floor.sh only (never in a normal build): the window run
 * by Unicorn alone to the start function's return, with no hook
 * (CT_FLOOR=bare), an empty code hook (code), empty block and memory
 * hooks (blockmem), or block and memory hooks that feed the cache model
 * each instruction's fetch and each access (model): what a design could
 * reach on this Unicorn at best.  Prints the time and exits. */
static uint64_t floor_n[3], floor_row[64];
static bool floor_model;		/* CT_FLOOR=model */

static void floor_code(uc_engine *uc, uint64_t a, uint32_t n, void *ctx)
{
	(void)uc; (void)a; (void)n; (void)ctx;
	floor_n[0]++;
}

static void floor_block(uc_engine *uc, uint64_t a, uint32_t n, void *ctx)
{
	struct emu *em = ctx;
	struct engine *e = &em->tr->eng;
	const char *err;
	(void)uc;
	floor_n[1]++;
	if (!floor_model)
		return;			/* blockmem: empty */
	for (uint64_t pc = a; pc < a + n; ) {
		const struct insn *in = decode_insn(e->dec, pc, &err);
		if (!in || !in->len)
			break;
		cache_fetch(e->cm, pc, in->len, floor_row);
		pc += in->len;
	}
}

static bool floor_mem(uc_engine *uc, uc_mem_type type, uint64_t a, int n,
		      int64_t v, void *ctx)
{
	struct emu *em = ctx;
	(void)uc; (void)v;
	floor_n[2]++;
	if (floor_model) {
		struct mem_access acc = { a, (uint32_t)n, type == UC_MEM_READ ?
					  ACC_READ : ACC_WRITE };
		cache_access(em->tr->eng.cm, &acc, floor_row);
	}
	return true;
}

/* CT_FLOOR=attrib: a code hook and memory hooks together.  Before each
 * lean instruction (decode_lean) the code hook predicts the accesses QEMU
 * will report for it from the templates (a read-modify-write as a read
 * and a write, 16 bytes as two 8-byte halves, 10 as 8 and 2), and checks
 * the previous instruction's prediction against what the memory hooks
 * reported: whether a block hook and memory hooks could attribute every
 * access by counting, and where not. */
#define ATTR_MAX 8
struct attr_acc { uint64_t addr; uint32_t size; bool write; };
#define ATTR_KINDS 64
struct attr_tally { uint16_t id; const char *text; uint64_t n; };
static struct {
	const struct insn *in;		/* the pending lean instruction */
	struct attr_acc want[ATTR_MAX], got[ATTR_MAX];
	unsigned n_want, n_got;
	uint64_t checked, matched, skipped;
	struct attr_tally bad[ATTR_KINDS], other[ATTR_KINDS];
	unsigned n_bad, n_other;
} fa;

/* One more of instruction ID (TEXT) in T, *N kinds of at most
 * ATTR_KINDS (one more beyond is not counted): true when it is the
 * first of its kind. */
static bool attr_count(struct attr_tally *t, unsigned *n, uint16_t id,
		       const char *text)
{
	unsigned i = 0;
	while (i < *n && t[i].id != id)
		i++;
	if (i == ATTR_KINDS)
		return false;
	if (i == *n) {
		t[i] = (struct attr_tally){ id, text, 0 };
		(*n)++;
	}
	return ++t[i].n == 1;
}

static void attr_want(uint64_t addr, uint32_t size, bool write)
{
	if (fa.n_want < ATTR_MAX)
		fa.want[fa.n_want++] = (struct attr_acc){ addr, size, write };
}

static void attr_predict(const struct decode_lean *l, const uint64_t *addr)
{
	for (unsigned i = 0; i < l->n_acc; i++) {
		const struct lean_acc *a = &l->acc[i];
		bool rd = a->kind == ACC_READ || a->kind == ACC_MODIFY;
		bool wr = a->kind == ACC_WRITE || a->kind == ACC_NT_WRITE ||
			  a->kind == ACC_MODIFY;
		for (int pass = 0; pass < 2; pass++) {
			if (!(pass ? wr : rd))
				continue;
			if (a->size == 16) {
				attr_want(addr[i], 8, pass);
				attr_want(addr[i] + 8, 8, pass);
			} else if (a->size == 10) {
				attr_want(addr[i], 8, pass);
				attr_want(addr[i] + 8, 2, pass);
			} else {
				attr_want(addr[i], a->size, pass);
			}
		}
	}
}

static void attr_check(void)
{
	if (!fa.in)
		return;
	bool ok = fa.n_got == fa.n_want &&
		  !memcmp(fa.got, fa.want, fa.n_want * sizeof(fa.want[0]));
	fa.checked++;
	if (ok) {
		fa.matched++;
		return;
	}
	if (attr_count(fa.bad, &fa.n_bad, fa.in->id, fa.in->text)) {
		fprintf(stderr, "attrib: %s at %#" PRIx64 ": want", fa.in->text,
			fa.in->pc);
		for (unsigned i = 0; i < fa.n_want; i++)
			fprintf(stderr, " %c%#" PRIx64 ",%u", fa.want[i].write ?
				'W' : 'R', fa.want[i].addr, fa.want[i].size);
		fprintf(stderr, "; QEMU");
		for (unsigned i = 0; i < fa.n_got && i < ATTR_MAX; i++)
			fprintf(stderr, " %c%#" PRIx64 ",%u", fa.got[i].write ?
				'W' : 'R', fa.got[i].addr, fa.got[i].size);
		fprintf(stderr, "\n");
	}
}

static void attr_code(uc_engine *uc, uint64_t a, uint32_t n, void *ctx)
{
	struct emu *em = ctx;
	const char *err;
	(void)uc; (void)n;
	if (fa.in && a == fa.in->pc)
		return;			/* restarted (a page's first touch) */
	attr_check();
	fa.in = NULL;
	fa.n_want = fa.n_got = 0;
	const struct insn *in = decode_insn(em->tr->eng.dec, a, &err);
	const struct decode_lean *l = in ? decode_lean(in) : NULL;
	if (!l) {
		(void)attr_count(fa.other, &fa.n_other, in ? in->id : 0,
				 in ? in->text : "(undecodable)");
		fa.skipped++;
		return;
	}
	uint64_t addr[2] = { 0, 0 };
	for (unsigned i = 0; i < l->n_acc; i++)
		addr[i] = decode_lean_addr(&l->acc[i], em->gprs,
					   em->t->regs.fs_base,
					   em->t->regs.gs_base);
	attr_predict(l, addr);
	fa.in = in;
}

static bool attr_mem(uc_engine *uc, uc_mem_type type, uint64_t a, int n,
		     int64_t v, void *ctx)
{
	(void)uc; (void)v; (void)ctx;
	if (fa.n_got < ATTR_MAX)
		fa.got[fa.n_got] = (struct attr_acc){ a, (uint32_t)n,
						      type == UC_MEM_WRITE };
	fa.n_got++;
	return true;
}

static void attr_report(void)
{
	attr_check();
	fprintf(stderr, "attrib: %" PRIu64 " lean instructions checked, %"
		PRIu64 " as predicted; %" PRIu64 " others not checked\n",
		fa.checked, fa.matched, fa.skipped);
	for (unsigned i = 0; i < fa.n_bad; i++)
		fprintf(stderr, "attrib: not as predicted: %" PRIu64 " x %s\n",
			fa.bad[i].n, fa.bad[i].text);
	for (unsigned i = 0; i < fa.n_other; i++)
		fprintf(stderr, "attrib: not lean: %" PRIu64 " x %s\n",
			fa.other[i].n, fa.other[i].text);
}

static void bench_floor(struct emu *em, struct tracee *t, const char *mode)
{
	uint64_t ret = 0;
	uc_hook h;
	mirror_read(em, t->regs.rsp, &ret, 8);
	uc_hook_del(em->uc, em->code_hook);
	floor_model = !strcmp(mode, "model");
	if (!strcmp(mode, "code"))
		uc_hook_add(em->uc, &h, UC_HOOK_CODE, (void *)floor_code, em, 1, 0);
	if (!strcmp(mode, "attrib")) {
		if (!em->gprs) {
			fprintf(stderr, "attrib: Unicorn's registers not found in place\n");
			exit(1);
		}
		uc_hook_add(em->uc, &h, UC_HOOK_CODE, (void *)attr_code, em, 1, 0);
		uc_hook_add(em->uc, &h, UC_HOOK_MEM_READ | UC_HOOK_MEM_WRITE,
			    (void *)attr_mem, em, 1, 0);
	}
	if (!strcmp(mode, "blockmem") || floor_model) {
		uc_hook_add(em->uc, &h, UC_HOOK_BLOCK, (void *)floor_block, em, 1, 0);
		uc_hook_add(em->uc, &h, UC_HOOK_MEM_READ | UC_HOOK_MEM_WRITE,
			    (void *)floor_mem, em, 1, 0);
	}
	double t0 = now_seconds();
	uc_err err = uc_emu_start(em->uc, t->regs.rip, ret, 0, 0);
	double t1 = now_seconds();
	if (!strcmp(mode, "attrib"))
		attr_report();
	fprintf(stderr, "floor %s: %s, %.3f s (code hooks %" PRIu64 ", blocks %"
		PRIu64 ", accesses %" PRIu64 ")\n", mode, uc_strerror(err),
		t1 - t0, floor_n[0], floor_n[1], floor_n[2]);
	exit(err == UC_ERR_OK ? 0 : 1);
}
#endif

/* Emulate T from t->regs until a sync point.  On return the real thread
 * has T's state and t->insn is decoded at t->regs.rip (not executed). */
static enum why slice(struct tracer *tr, struct emu *em, struct tracee *t)
{
	emu_hold_others(tr, em, t);
	if (emu_seed(tr, em, t) < 0) {
		perror_msg("cannot give thread %d to the emulator", t->tid);
		return WHY_ERROR;
	}
	emu_set_int3s(tr, em);
	em->why = WHY_NONE;
	em->pending = false;
	em->deadline = now_seconds() + SLICE_SECONDS;
	em->alone = tr->tracees == t && !t->next;
	em->turns = !em->alone && tr->opt.threads_all;
	em->turn_left = tr->eng.cm->n_cores > 1 ? TURN_CORES : TURN;
	/* Call stacks read every register of every step (unwinding). */
	em->lazy = !tr->eng.cs;
	/* Lean instructions need the registers in place (find_gprs), and
	 * are accounted in runs: not with --stop-watch, whose hit the next
	 * instruction's hook must see. */
	em->lean_on = em->lazy && em->gprs && !tr->eng.swatch_hi;
	em->lean = NULL;
	if (em->lazy) {
		/* both whole: the fields Unicorn has not (segment
		 * selectors, orig_rax) stay the thread's */
		em->r[0] = em->r[1] = t->regs;
		em->cur = &em->r[0];
		em->nxt = &em->r[1];
	}
	em->slices++;
	emumem_activate(em->mem);
	tr->eng.read_mem = mirror_read;
	tr->eng.read_mem_ctx = em;
#ifdef CT_BENCH_FLOOR
	if (getenv("CT_FLOOR"))
		bench_floor(em, t, getenv("CT_FLOOR"));
#endif
	/* The models on another CPU while the slice runs (modelq.h);
	 * with call stacks the unwinder reads the thread as it is, so the
	 * accounting stays in order in this thread. */
	struct engine *e = &tr->eng;
	if (em->lazy && !e->q_tried) {
		e->q_tried = true;
		if (!engine_models_costly(e))
			e->q_why = "Cachegrind's models cost less than the queue";
		else
			e->q = modelq_new(e, tr->pin_cpu >= 0 ?
					  &tr->saved_self : NULL, tr->pin_cpu,
					  &e->q_why);
	}
	/* Not for turns between threads: each ends a slice, and a drain
	 * every few dozen instructions costs more than the models. */
	e->q_on = em->lazy && e->q && !em->turns;
	uc_err err = uc_emu_start(em->uc, t->regs.rip, NEVER, 0, 0);
	emu_lean_flush(em);
	if (e->q_on) {
		modelq_drain(e->q);
		e->q_on = false;
	}
	tr->eng.read_mem = NULL;
	tracee_mem_changed();	/* the slice wrote through the mirror */
	emumem_deactivate(em->mem);
	if (em->lazy)
		t->regs = *em->cur;
	enum why why = em->why;
	if (err != UC_ERR_OK || why == WHY_FAULT)
		why = after_fault(tr, em, t);
	else if (why == WHY_NONE)
		why = WHY_ERROR;
	em->pending = false;
	if (em->lazy) {
		/* Read lazily, t->regs has only what accounting needed: take
		 * the rest from Unicorn, whose rip may still be a finished
		 * rep string's. */
		uint64_t rip = t->regs.rip;
		if (regs_read(em, &t->regs) < 0 && why != WHY_GONE)
			why = WHY_ERROR;
		t->regs.rip = rip;
	}
	bool synced = sync_out(em, t, &t->regs) == 0;
	struct user_regs_struct r;
	if ((!synced || why == WHY_DECODE || why == WHY_ERROR) &&
	    tracee_getregs(t->tid, &r) == -ESRCH) {
		/* Killed while we emulated it: its exit event follows and
		 * ends the window. */
		return WHY_GONE;
	}
	if (!synced && why != WHY_ERROR) {
		perror_msg("cannot give thread %d back to the CPU", t->tid);
		why = WHY_ERROR;
	}
	debug_msg("emulate: thread %d slice to 0x%llx: why %d, err %d",
		  t->tid, t->regs.rip, (int)why, (int)err);
	if (why == WHY_ERROR && err != UC_ERR_OK)
		error_msg("the emulator failed at 0x%llx: %s", t->regs.rip,
			  uc_strerror(err));
	return why;
}

void emu_note_fallback(struct emu *em, const struct insn *in)
{
	em->fallbacks++;
	insn_tally_add(em->fb, in);
}

/* What a real step may have changed, for the next slice: the pages the
 * instruction touched; after a system call, a signal or an instruction we
 * do not know, every writable page (and the maps after mmap & co.). */
void emu_after_real_step(struct emu *em, const struct insn *in,
			    const struct user_regs_struct *after, bool moved)
{
	const struct step_events *ev = &em->tr->eng.ev;
	em->fp_stale = true;
	if (moved || in->unknown || in->branch == BR_OTHER ||
	    in->id == X86_INS_SYSCALL) {
		em->mem_stale = true;
		if (is_mm_syscall(after->orig_rax))
			em->maps_stale = true;
	}
	for (unsigned i = 0; i < ev->n_acc; i++)
		emumem_invalidate_range(em->mem, ev->acc[i].addr,
					ev->acc[i].size);
	/* A fault the real CPU took may have grown the stack or met a
	 * mapping made since. */
	if (!emumem_can_map(em->mem, after->rip))
		em->maps_stale = true;
}

bool emu_syscall_restarts(const struct user_regs_struct *r)
{
	long long rax = (long long)r->rax;
	return (long long)r->orig_rax >= 0 && rax >= -516 && rax <= -512;
}

/* A signal T does not block is pending for it (a system call sent it, or
 * it arrived meanwhile): the kernel delivers it when T next runs, so T
 * must run on the real CPU now, not in the emulator. */
bool signal_pending(struct tracee *t)
{
	siginfo_t si;
	uint64_t blocked = 0;
	if (ptrace(PTRACE_GETSIGMASK, t->tid, sizeof(blocked), &blocked) < 0)
		return errno == ESRCH;	/* killed (SIGKILL): stop emulating */
	for (int shared = 0; shared < 2; shared++) {
		for (int off = 0; off < 64; off++) {
			struct __ptrace_peeksiginfo_args a = {
				.off = (uint64_t)off,
				.flags = shared ? PTRACE_PEEKSIGINFO_SHARED : 0,
				.nr = 1,
			};
			if (ptrace(PTRACE_PEEKSIGINFO, t->tid, &a, &si) != 1)
				break;
			if (si.si_signo < 1 || si.si_signo > 64 ||
			    !(blocked & (1ull << (si.si_signo - 1))))
				return true;
		}
	}
	return false;
}

/* ---- the emulate engine ---- */

int emu_begin_window(struct tracer *tr, struct tracee *t)
{
	struct emu *em = emu_get(tr);
	int rc = step_join(tr, t);
	if (rc < 0)
		return rc;
	/* Stopped inside a system call (interrupted while blocked, to join
	 * a --threads=all window): the kernel finishes or restarts it when
	 * the thread runs on, so its first step is on the CPU. */
	t->emu_flags &= ~EF_HANDOVER;
	t->emu_parked = 0;
	if ((long long)t->regs.orig_rax >= 0)
		t->emu_flags |= EF_ISSUED;
	/* The target ran natively since the last window: every page we
	 * hold is checked before use (emu_seed). */
	em->all_stale = em->maps_stale = em->fp_stale = true;
	em->t = NULL;
	return 0;
}

void emu_end_window(struct tracer *tr, struct tracee *t)
{
	struct emu *em = tr->emu;
	t->emu_flags &= ~EF_HANDOVER;
	if (em && em->t == t)
		em->t = NULL;
	/* It runs on natively, or it is gone, and the kernel wrote its
	 * clear_child_tid word (and its robust futexes) as it went: the
	 * pages we hold are read again before the next emulation (a
	 * pthread_join in the emulator read the old thread id). */
	if (em) {
		em->mem_stale = true;
		tr->eng.others_run(tr);	/* the others run on */
	}
	step_engine.end_window(tr, t);
}

/* R: stopped inside a futex wait (FUTEX_WAIT, FUTEX_WAIT_BITSET) that the
 * kernel restarts when the thread next runs. */
static bool in_futex_wait(const struct user_regs_struct *r)
{
	unsigned cmd = (unsigned)r->rsi & 0x7f;	/* FUTEX_CMD_MASK */
	return r->orig_rax == SYS_futex && emu_syscall_restarts(r) &&
	       (cmd == 0 || cmd == 9);
}

/* --threads=all: T's turn came while it waits in a futex (pthread_join, a
 * mutex, a condition variable, a barrier), where our stopping the others
 * took it out of the wait (EF_IDLE: it ran nothing).  Its turn would be a real
 * step back into the wait, which blocks, and the next turn's stop takes
 * it out again: a sync point (every dirty page written back) and a real
 * step per turn, for a thread that does nothing.  While another thread
 * of the window can run, and its futex word still holds the value it
 * waits on, T gives its turn away instead, still outside the wait.  A
 * wake it misses is seen at its next turn: the word changed, and T goes
 * back into the wait, which returns at once (EAGAIN: the caller looks
 * again), as soon as it would have run after the wake.  At most
 * SLICE_SECONDS at a time, so that a thread that spins on what T
 * should do is not starved.  True: T handed over. */
static bool park(struct tracer *tr, struct tracee *t)
{
	if (!tr->opt.threads_all || !in_futex_wait(&t->regs))
		return false;
	/* Its word changed (a barrier's round, a join's tid, a mutex
	 * released): the wait would end at once, so T runs now, as it would
	 * after the wake it missed.  Every page is written back at a turn's
	 * end: the target has the word. */
	uint32_t word;
	if (tracee_read_mem(t->tid, t->regs.rdi, &word, sizeof(word)) !=
	    (ssize_t)sizeof(word) || word != (uint32_t)t->regs.rdx)
		return false;
	/* Another that will run: waiting for its turn, or the one whose
	 * turn is ending (its sync point replays T's event before it hands
	 * over).  Not one held with an event to replay: that waits for
	 * someone's sync point, and T would give its turns to nobody. */
	bool other = false;
	for (struct tracee *o = tr->tracees; o && !other; o = o->next)
		other = o != t && tracee_stepping(o) && tracee_stopped(o) &&
			!o->emu_parked &&
			((o->flags & TF_HANDOVER) || o == tr->emu->t);
	double now = now_seconds();
	if (!other || (t->emu_parked && now - t->emu_parked > SLICE_SECONDS))
		return false;
	if (!t->emu_parked)
		t->emu_parked = now;
	tr->emu->parked++;
	/* still outside the wait, having run nothing */
	t->emu_flags |= EF_REAL_NEXT | EF_HANDOVER | EF_IDLE;
	return true;		/* VERDICT_TURN */
}

/* A real step is next: EF_REAL_NEXT, which outlives a run that returns
 * for the tracer to step T over our int3. */
static enum verdict emu_run(struct tracer *tr, struct tracee *t)
{
	struct emu *em = tr->emu;
	for (;;) {
		enum verdict v = step_prepare(tr, t);
		if (v != VERDICT_READY)
			return v;
		bool real = t->emu_flags & EF_REAL_NEXT;
		t->emu_flags &= ~EF_REAL_NEXT;
		if (!(t->emu_flags & EF_ISSUED)) {
			enum super_outcome so = step_in_supervisor(tr, t);
			if (so == SUPER_ENDED) {
				tr->eng.others_run(tr);
				return VERDICT_STOP;
			}
			if (so == SUPER_DONE)
				continue;
		}
		if (t->emu_flags & EF_ISSUED) {
			/* A clone event took our step: the thread is still
			 * inside the system call (rax is not its result
			 * yet).  It goes on on the CPU, as under stepping,
			 * and the next slice assumes the worst, unless the
			 * step was stopped before anything ran (EF_IDLE:
			 * emu_hold_others stopped it). */
			t->emu_flags &= ~EF_ISSUED;
			t->emu_flags |= EF_CHECK_SIGNALS;
			if (!(t->emu_flags & EF_IDLE))
				em->mem_stale = em->maps_stale =
					em->fp_stale = true;
			real = true;
		}
		bool idle = t->emu_flags & EF_IDLE;
		t->emu_flags &= ~EF_IDLE;
		if (real && idle && park(tr, t))
			return VERDICT_TURN;
		if (real)
			t->emu_parked = 0;
		if (real || t->inject || !t->insn->emulable)
			break;
		if (t->emu_flags & EF_CHECK_SIGNALS) {
			t->emu_flags &= ~EF_CHECK_SIGNALS;
			if (signal_pending(t))
				break;
		}
		enum why why = slice(tr, em, t);
		switch (why) {
		case WHY_STOP:
			tr->eng.others_run(tr);
			return VERDICT_STOP;
		case WHY_GONE:
			return VERDICT_DONE;	/* its exit event follows */
		case WHY_DECODE:
		case WHY_ERROR:
			tr->eng.others_run(tr);
			t->win.fail = why == WHY_DECODE ?
				"the next instruction could not be read" :
				"the emulator failed";
			return VERDICT_FAILED;
		case WHY_BUDGET:
			tr->eng.others_run(tr);	/* a sync point */
			if (!tracee_stepping(t) || !tracee_stopped(t))
				return VERDICT_DONE; /* its window ended
						      * meanwhile */
			if (em->turns && !tracee_ending(t)) {
				/* Its turn is over: the others have theirs in
				 * the emulator, and it goes on after them,
				 * with no real step. */
				t->emu_flags |= EF_HANDOVER;
				return VERDICT_TURN;
			}
			t->emu_flags |= EF_REAL_NEXT;
			break;
		case WHY_FAULT:
			t->emu_flags |= EF_FAULT_STEP | EF_REAL_NEXT;
			break;
		default:
			break;
		}
	}
	if (t->insn->id == X86_INS_SYSCALL || t->inject)
		tr->eng.others_run(tr);
	emu_note_fallback(em, t->insn);
	debug_msg("emulate: thread %d steps 0x%llx %s (rax 0x%llx rdi 0x%llx "
		  "rsi 0x%llx rdx 0x%llx)", t->tid, t->regs.rip, t->insn->text,
		  t->regs.rax, t->regs.rdi, t->regs.rsi, t->regs.rdx);
	t->emu_flags |= EF_ISSUED;
	step_issue(tr, t);
	return VERDICT_RUNNING;
}

static bool emu_trap(struct tracer *tr, struct tracee *t)
{
	struct emu *em = tr->emu;
	if (t->emu_flags & EF_HANDOVER) {
		/* its turn again: nothing ran since it gave it */
		t->emu_flags &= ~EF_HANDOVER;
		return true;
	}
	t->emu_flags &= ~EF_ISSUED;
	const struct insn *in = t->insn;
	bool injected = tracee_injected(t);
	if (!step_trap(tr, t))
		return false;
	emu_after_real_step(em, in, &t->regs, injected);
	t->emu_flags |= EF_CHECK_SIGNALS;
	/* A system call the kernel will restart (interrupted: rax holds an
	 * -ERESTART* code, or rip is back on it): the kernel's own state
	 * decides what runs next, not our copy of the registers. */
	if (emu_syscall_restarts(&t->regs) ||
	    (in->id == X86_INS_SYSCALL && t->regs.rip == in->pc))
		t->emu_flags |= EF_REAL_NEXT;
	if (t->emu_flags & EF_FAULT_STEP)
		em->maps_stale = true;	/* the stack grew, a new mapping */
	t->emu_flags &= ~EF_FAULT_STEP;
	return true;
}

const struct engine_ops emulate_engine = {
	.name = "emulate",
	.begin_window = emu_begin_window,
	.run = emu_run,
	.trap = emu_trap,
	.end_window = emu_end_window,
};
