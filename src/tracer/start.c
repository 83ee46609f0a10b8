/* The start and stop events: resolving their locations (again at the
 * program's entry point when a library is not mapped yet, and at each
 * dlopen when it is still not), arming them as debug registers or an
 * int3, and the data watches.
 *
 * A library the program dlopen()s later is waited for as gdb does: the
 * dynamic loader calls _dl_debug_state (r_debug's r_brk) before and after
 * it changes its list of objects, with r_debug.r_state RT_ADD or
 * RT_DELETE before and RT_CONSISTENT after.  We break there (a debug
 * register, or an int3 with --breakpoints=sw) and at each RT_CONSISTENT
 * re-read the mappings and resolve again; once found the start is armed.
 * The start is resolved once: a library dlclose'd and loaded again
 * elsewhere is not followed.  The hook stays in, for the names of a
 * dlclose'd library (at_dl_hook); it is not seen by a thread being
 * stepped (no debug registers then, and the int3 is stepped over), so a
 * library dlclose'd inside a window loses its names (???). */
#include "tracer.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <link.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "error.h"
#include "procmaps.h"

static uint64_t read_auxv_entry(pid_t pid, unsigned long type)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/auxv", pid);
	int fd = open(path, O_RDONLY);
	if (fd < 0)
		return 0;
	Elf64_auxv_t aux[64];
	ssize_t n = read(fd, aux, sizeof(aux));
	close(fd);
	for (ssize_t i = 0; i < n / (ssize_t)sizeof(aux[0]); i++)
		if (aux[i].a_type == type)
			return aux[i].a_un.a_val;
	return 0;
}

/* What resolve_loc found. */
enum {
	LOC_ERROR = -1,		/* after a message */
	LOC_LATER = 0,		/* not found, RETRY_LATER asked to wait */
	LOC_FOUND = 1,
	LOC_UNLOADED = 2,	/* names a library not mapped (yet): wait for
				 * the entry point, then for a dlopen */
};

/* Resolve LOC: LOC_FOUND, LOC_UNLOADED, LOC_LATER when not found with
 * RETRY_LATER (try again at the entry point, when the libraries are
 * mapped), LOC_ERROR after a message. */
static int resolve_loc(struct tracer *tr, const char *what, const char *loc,
		       uint64_t *addr, bool retry_later)
{
	char err[1024] = "";
	switch (sym_resolve(tr->syms, loc, addr, err, sizeof(err))) {
	case SYM_FOUND:
		/* A warning comes with some finds (an IFUNC's address is its
		 * resolver's). */
		if (err[0] && !tr->opt.quiet)
			error_msg("%s: warning: %s", what, err);
		debug_msg("%s %s = 0x%" PRIx64, what, loc, *addr);
		return LOC_FOUND;
	case SYM_NOT_YET:
		return LOC_UNLOADED;
	case SYM_NOT_FOUND:
	case SYM_NOT_CODE:	/* a library mapped later may have the code */
		if (retry_later)
			return LOC_LATER;
		error_msg("%s: %s", what, err);
		return LOC_ERROR;
	case SYM_BAD_SYNTAX:
	default:
		error_msg("%s: %s", what, err);
		return LOC_ERROR;
	}
}

/* The permissions ("r-xp") of the mapping of PID that holds ADDR; false
 * when ADDR is not mapped. */
static bool mapping_perms(pid_t pid, uint64_t addr, char perms[5])
{
	struct maps_iter it;
	struct maps_entry m;
	bool found = false;
	if (!maps_open(&it, pid))
		return false;
	while (!found && maps_next(&it, &m))
		if (addr >= m.lo && addr < m.hi) {
			memcpy(perms, m.perms, 5);
			found = true;
		}
	maps_close(&it);
	return found;
}

/* An int3 must start an instruction, and a debug register elsewhere
 * never fires: decode from the start of the function that holds ADDR.
 * 0, or -1 after a message. */
static int check_insn_boundary(struct tracer *tr, uint64_t addr)
{
	uint64_t lo, hi, pc;
	const char *fn, *err = NULL;
	if (sym_function_range(tr->syms, addr, &lo, &hi, &fn) < 0) {
		if (!tr->opt.sw_breakpoints)
			return 0;	/* a debug register harms nothing */
		error_msg("--start: 0x%" PRIx64 " is in no known function, so "
			  "nothing says it starts an instruction; an int3 "
			  "there could corrupt the target (use "
			  "--breakpoints=hw)", addr);
		return -1;
	}
	for (pc = lo; pc < addr; ) {
		const struct insn *in = decode_insn(tr->eng.dec, pc, &err);
		if (!in || !in->len)
			break;
		pc += in->len;
	}
	if (pc == addr)
		return 0;
	error_msg("--start: 0x%" PRIx64 " (%s+0x%" PRIx64 ") is not the start "
		  "of an instruction; %s", addr, fn, addr - lo,
		  tr->opt.sw_breakpoints ? "an int3 there would corrupt the "
		  "target" : "it would never be reached");
	return -1;
}

/* The start address must be code: mapped executable, an instruction
 * boundary.  0, or -1 after a message. */
static int check_start_address(struct tracer *tr, uint64_t addr)
{
	char perms[5] = "";
	if (!mapping_perms(tr->target_pid, addr, perms)) {
		error_msg("--start: 0x%" PRIx64 " is not mapped in process %d",
			  addr, tr->target_pid);
		return -1;
	}
	if (perms[2] != 'x') {
		error_msg("--start: 0x%" PRIx64 " is not in executable memory "
			  "(%s): not code", addr, perms);
		return -1;
	}
	return check_insn_boundary(tr, addr);
}

/* A thread in a ptrace stop, for the requests that write the text: the
 * main thread may be running (a dlopen in another thread). */
static pid_t stopped_tid(const struct tracer *tr)
{
	for (const struct tracee *t = tr->tracees; t; t = t->next)
		if (tracee_stopped(t))
			return t->tid;
	return tr->target_pid;
}

/* Program the armed debug registers into every stopped thread (the others
 * are programmed at their next stop).  -1 after a message. */
static int sync_stopped_dr(struct tracer *tr)
{
	for (struct tracee *t = tr->tracees; t; t = t->next) {
		if (!tracee_stopped(t))
			continue;
		hwbp_sync(tr, t);
		if (t->dr_mask != tr->dr_want) {
			error_msg("cannot program the debug registers of thread "
				  "%d (try --breakpoints=sw)", t->tid);
			return -1;
		}
	}
	return 0;
}

/* Arm the start events in every stopped thread (the others are programmed
 * at their next stop).  -1 after a message. */
static int arm_start(struct tracer *tr)
{
	if (tr->start_addr && check_start_address(tr, tr->start_addr) < 0)
		return -1;
	if (tr->start_addr && !tr->opt.sw_breakpoints) {
		tr->hw_slots[SLOT_START] = (struct hw_slot){
			.addr = tr->start_addr, .rw = 0, .len = 1,
			.used = true };
		tr->dr_want |= 1u << SLOT_START;
	} else if (tr->start_addr) {
		int rc = breakpoint_insert(stopped_tid(tr), &tr->start_bp,
					   tr->start_addr);
		if (rc < 0) {
			errno = -rc;
			perror_msg("--start: cannot set a breakpoint at 0x%"
				   PRIx64, tr->start_addr);
			return -1;
		}
	}
	if (tr->hw_slots[SLOT_WATCH].used)
		tr->dr_want |= 1u << SLOT_WATCH;
	return sync_stopped_dr(tr);
}

/* Resolve the start and stop not resolved yet: the lowest LOC_* of the
 * two (LOC_FOUND when both are). */
static int resolve_missing(struct tracer *tr, bool retry_later)
{
	const struct options *o = &tr->opt;
	int found = LOC_FOUND;
	if (o->start && !tr->start_addr)
		found = resolve_loc(tr, "--start", o->start, &tr->start_addr,
				    retry_later);
	if (found == LOC_FOUND && o->stop && !tr->stop_addr)
		found = resolve_loc(tr, "--stop", o->stop, &tr->stop_addr,
				    retry_later);
	return found;
}

/* Break on the dynamic loader's hook, to resolve again at each dlopen.
 * -1 after a message. */
static int arm_dl_hook(struct tracer *tr)
{
	const struct options *o = &tr->opt;
	char err[1024];
	uint64_t hook, size;
	if (sym_resolve(tr->syms, "_dl_debug_state", &hook, err,
			sizeof(err)) != SYM_FOUND) {
		error_msg("--start=%s: not loaded, and no dynamic loader hook "
			  "(_dl_debug_state) to wait for it: %s", o->start, err);
		return -1;
	}
	if (sym_resolve_data(tr->syms, "_r_debug", &tr->r_debug_addr, &size,
			     err, sizeof(err)) < 0)
		tr->r_debug_addr = 0;
	tr->dlhook_addr = hook;
	if (!o->quiet)
		error_msg("note: %s is not in %s yet; waiting for a library to "
			  "be loaded (dlopen)", tr->start_addr ? o->stop :
			  o->start, tr->cmd_line);
	debug_msg("loader hook _dl_debug_state = 0x%" PRIx64 ", r_debug = 0x%"
		  PRIx64, hook, tr->r_debug_addr);
	if (o->sw_breakpoints) {
		int rc = breakpoint_insert(stopped_tid(tr), &tr->dlhook_bp,
					   hook);
		if (rc < 0) {
			errno = -rc;
			perror_msg("cannot set a breakpoint on the dynamic "
				   "loader's hook at 0x%" PRIx64, hook);
			return -1;
		}
		return 0;
	}
	/* A debug register: no int3 for other threads to run through while
	 * it is stepped over, nothing in the text for a fork to inherit. */
	tr->hw_slots[SLOT_DLHOOK] = (struct hw_slot){
		.addr = hook, .rw = 0, .len = 1, .used = true };
	tr->dr_want |= 1u << SLOT_DLHOOK;
	return sync_stopped_dr(tr);
}

/* Name every pc counted so far while the mappings are those it ran in. */
static void name_counted_pcs(struct tracer *tr)
{
	struct src_loc loc;
	for (size_t i = 0; i < costs_count(tr->eng.costs); i++)
		sym_lookup(tr->syms, costs_pc_at(tr->eng.costs, i), &loc);
	sym_keep_names(tr->syms);
	debug_msg("named the %zu pcs counted so far", costs_count(tr->eng.costs));
}

/* T is at the loader hook.  At RT_DELETE the objects about to go are
 * still mapped: every pc counted so far is named now and kept across
 * later refreshes (sym_keep_names), so a dlclose'd library's functions
 * keep their names in the profile.  At RT_CONSISTENT the list
 * is complete: resolve what is missing, and arm the start when found.
 * The hook stays until the target is released, for the RT_DELETEs. */
static enum restart at_dl_hook(struct tracer *tr, struct tracee *t)
{
	const struct options *o = &tr->opt;
	int state = RT_CONSISTENT;
	if (tr->r_debug_addr &&
	    tracee_read_mem(t->tid, tr->r_debug_addr +
			    offsetof(struct r_debug, r_state), &state,
			    sizeof(state)) != sizeof(state))
		state = RT_CONSISTENT;
	debug_msg("loader hook in thread %d: r_state %d", t->tid, state);
	if (state == RT_ADD)
		return RESTART_CONT;
	char err[256];
	if (sym_refresh(tr->syms, err, sizeof(err)) < 0)
		debug_msg("re-reading mappings: %s", err);
	if (state == RT_DELETE) {
		name_counted_pcs(tr);
		return RESTART_CONT;
	}
	if ((!o->start || tr->start_addr) && (!o->stop || tr->stop_addr))
		return RESTART_CONT;	/* armed already */
	int found = resolve_missing(tr, true);
	if (found == LOC_ERROR) {
		tracer_fail(tr);
		return RESTART_NONE;
	}
	if (found != LOC_FOUND)
		return RESTART_CONT;
	if (arm_start(tr) < 0) {
		tracer_fail(tr);
		return RESTART_NONE;
	}
	return RESTART_CONT;
}

bool window_dlhook_int3_hit(struct tracer *tr, struct tracee *t,
			    uint64_t rip)
{
	if (!tr->dlhook_bp.addr || rip != tr->dlhook_bp.addr + 1)
		return false;
	/* Taken out (a vfork child shares the text until VFORK_DONE) while
	 * T was already trapping on it: an int3's SIGTRAP is SI_KERNEL. */
	return tr->dlhook_bp.inserted || tracee_si_code(t->tid) == SI_KERNEL;
}

/* The fields after the address of a watch: ":LEN" and ":w" or ":rw". */
static int parse_watch_fields(const char *opt, const char *expr, char **save,
			      unsigned *len, bool *rw)
{
	*rw = false;
	for (char *f = strtok_r(NULL, ":", save); f;
	     f = strtok_r(NULL, ":", save)) {
		if (!strcmp(f, "w"))
			*rw = false;
		else if (!strcmp(f, "rw"))
			*rw = true;
		else if (!strcmp(f, "1") || !strcmp(f, "2") ||
			 !strcmp(f, "4") || !strcmp(f, "8"))
			*len = (unsigned)atoi(f);
		else {
			error_msg("%s=%s: '%s' is not a length (1, 2, 4, 8), w "
				  "or rw", opt, expr, f);
			return -1;
		}
	}
	return 0;
}

/* "symbol[:LEN][:w|rw]" or "0xADDR[:LEN][:w|rw]": [LO, HI); LEN defaults
 * to the symbol's size when it is 1, 2, 4 or 8 (else 8), lowered to the
 * address's alignment, which the hardware requires.  -1 after a message. */
static int parse_watch(struct tracer *tr, const char *opt, const char *expr,
		       uint64_t *lo, uint64_t *hi, bool *rw)
{
	char *copy = xstrdup(expr), *save = NULL;
	char *what = strtok_r(copy, ":", &save);
	unsigned len = 0;
	uint64_t addr, size = 8;
	char err[256];
	int rc = -1;
	if (parse_watch_fields(opt, expr, &save, &len, rw) < 0)
		goto out;
	if (!what) {
		error_msg("%s: empty expression", opt);
		goto out;
	}
	if (!strncmp(what, "0x", 2)) {
		char *end;
		addr = strtoull(what, &end, 16);
		if (*end || end == what + 2) {
			error_msg("%s: '%s' is not an address", opt, what);
			goto out;
		}
	} else if (sym_resolve_data(tr->syms, what, &addr, &size, err,
				    sizeof(err)) < 0) {
		error_msg("%s: %s", opt, err);
		goto out;
	}
	if (!len)
		len = size == 1 || size == 2 || size == 4 ? (unsigned)size : 8;
	while (len > 1 && addr % len)
		len /= 2;
	*lo = addr;
	*hi = addr + len;
	rc = 0;
out:
	free(copy);
	return rc;
}

int window_arm_or_wait_for_entry(struct tracer *tr, bool retry)
{
	const struct options *o = &tr->opt;
	int found = resolve_missing(tr, retry);
	if (found == LOC_ERROR)
		return -1;
	if (found == LOC_FOUND)
		return arm_start(tr);
	if (o->pid && found == LOC_UNLOADED)
		return arm_dl_hook(tr);	/* attached: the loader has run */
	if (o->pid) {
		/* A forked child (--trace-children) may exec a program that
		 * has the start symbol: children_on_exec resolves it then. */
		if (!o->quiet)
			error_msg("note: --start=%s is not in %s; waiting for an "
				  "exec", o->start, tr->cmd_line);
		return 0;
	}
	uint64_t at = read_auxv_entry(tr->target_pid, AT_ENTRY);
	int rc = at ? breakpoint_insert(tr->target_pid, &tr->entry_bp, at)
		    : -ENOENT;
	if (rc < 0) {
		error_msg("cannot stop the program at its entry point to "
			  "resolve %s", o->start);
		return -1;
	}
	return 0;
}

int window_setup(struct tracer *tr)
{
	const struct options *o = &tr->opt;
	if (o->start_watch) {
		uint64_t lo, hi;
		bool rw;
		if (parse_watch(tr, "--start-watch", o->start_watch, &lo, &hi,
				&rw) < 0)
			return -1;
		tr->hw_slots[SLOT_WATCH] = (struct hw_slot){
			.addr = lo, .rw = rw ? 3 : 1,
			.len = (unsigned)(hi - lo), .used = true };
	}
	if (o->stop_watch &&
	    parse_watch(tr, "--stop-watch", o->stop_watch, &tr->eng.swatch_lo,
			&tr->eng.swatch_hi, &tr->eng.swatch_rw) < 0)
		return -1;
	if (!window_has_start_event(tr))
		return 0;
	return window_arm_or_wait_for_entry(tr, !o->pid || o->forked_child);
}

/* T stopped at our entry-point int3: the loader has mapped the program's
 * libraries, so resolve what could not be resolved at exec. */
static enum restart at_entry_point(struct tracer *tr, struct tracee *t)
{
	const struct options *o = &tr->opt;
	breakpoint_remove(t->tid, &tr->entry_bp);
	struct user_regs_struct r;
	if (tracee_getregs(t->tid, &r) == 0) {
		r.rip = tr->entry_bp.addr;
		tracee_setregs(t->tid, &r);
	}
	char err[256];
	if (sym_refresh(tr->syms, err, sizeof(err)) < 0)
		debug_msg("re-reading mappings: %s", err);
	/* With --trace-children a program without the start symbol may still
	 * exec one that has it: wait for the exec then. */
	int found = resolve_missing(tr, o->trace_children);
	if (found == LOC_LATER && !tr->start_addr && !o->quiet)
		error_msg("note: --start=%s is not in %s; waiting for an exec",
			  o->start, tr->cmd_line);
	if (found == LOC_UNLOADED && arm_dl_hook(tr) < 0)
		found = LOC_ERROR;
	if (found == LOC_ERROR) {
		tracer_fail(tr);
		return RESTART_NONE;
	}
	if (found != LOC_FOUND)
		return RESTART_CONT;
	if (tr->start_addr == tr->entry_bp.addr)
		return window_begin_thread(tr, t);
	if (arm_start(tr) < 0) {
		tracer_fail(tr);
		return RESTART_NONE;
	}
	return RESTART_CONT;
}

bool window_on_trap(struct tracer *tr, struct tracee *t, enum restart *how)
{
	struct user_regs_struct r;
	if (tracee_getregs(t->tid, &r) < 0)
		return false;
	if (t->dr_mask && tracee_si_code(t->tid) == TRAP_HWBKPT) {
		/* Our debug registers.  An execute hit stops before the
		 * instruction (the kernel sets RF so that resuming does not
		 * trap again); a write hit stops after the writing one. */
		unsigned hits = hwbp_hits(t->tid);
		bool start = (hits & (1u << SLOT_START)) &&
			     r.rip == tr->start_addr;
		bool watch = hits & (1u << SLOT_WATCH);
		if ((hits & (1u << SLOT_DLHOOK)) && tr->dlhook_addr &&
		    r.rip == tr->dlhook_addr)
			*how = at_dl_hook(tr, t);
		else if (window_can_begin(tr) && (start || watch)) {
			t->regs = r;
			t->flags |= TF_REGS_READ;
			*how = window_begin_thread(tr, t);
			t->flags &= ~TF_REGS_READ;
		}
		else
			*how = RESTART_CONT;	/* a hit during a window */
		return true;
	}
	if (tr->entry_bp.inserted && r.rip == tr->entry_bp.addr + 1) {
		*how = at_entry_point(tr, t);
		return true;
	}
	if (breakpoint_trapped(tr, r.rip) == &tr->stop_bp &&
	    tracee_si_code(t->tid) == SI_KERNEL) {
		/* The native engine's stop event, met by a thread outside
		 * the window (or taken out as its trap was on its way):
		 * back on it, and the original instruction run with the
		 * others stopped. */
		r.rip = tr->stop_bp.addr;
		tracee_setregs(t->tid, &r);
		t->regs.rip = r.rip;
		*how = !tr->stop_bp.inserted ||
		       window_step_over_int3(tr, t, &tr->stop_bp) == 0 ?
		       RESTART_CONT : RESTART_NONE;
		return true;
	}
	if (window_dlhook_int3_hit(tr, t, r.rip)) {
		r.rip = tr->dlhook_bp.addr;
		tracee_setregs(t->tid, &r);
		*how = tr->dlhook_bp.inserted ? at_dl_hook(tr, t) : RESTART_CONT;
		t->regs.rip = r.rip;
		if (*how == RESTART_CONT && tr->dlhook_bp.inserted)
			*how = window_step_over_int3(tr, t, &tr->dlhook_bp) == 0
			       ? RESTART_CONT : RESTART_NONE;
		return true;
	}
	if (!tr->start_bp.inserted && tr->start_bp.addr &&
	    r.rip == tr->start_bp.addr + 1 &&
	    (tr->start_bp.orig_word & 0xff) != 0xcc &&
	    tracee_si_code(t->tid) == SI_KERNEL) {
		/* Our int3, taken out while its trap was on its way (the
		 * thread hit it as we stopped the others): no int3 of the
		 * target's own is there, so rewind and let it run on.
		 * Delivered, the SIGTRAP killed it (attach/verify-threads,
		 * about one run in ten under load). */
		r.rip = tr->start_bp.addr;
		tracee_setregs(t->tid, &r);
		t->regs.rip = r.rip;
		*how = RESTART_CONT;
		return true;
	}
	if (!tr->start_bp.inserted || r.rip != tr->start_bp.addr + 1) {
		if (tracee_si_code(t->tid) != TRAP_HWBKPT)
			return false;
		/* A debug register's hit whose trap was on its way as we
		 * disarmed it (the window that began in another thread
		 * takes the start event out of every thread): the target
		 * sets none of its own (only a tracer can), so it is ours.
		 * An execute hit stops before the instruction: it runs on.
		 * Delivered, the SIGTRAP killed it (attach/verify-threads,
		 * emulate with debug registers, once in CI under load). */
		(void)hwbp_hits(t->tid);	/* DR6 cleared */
		*how = RESTART_CONT;
		return true;
	}
	/* Our int3, which stays in: rewind, and execute the original
	 * instruction with every other thread stopped. */
	r.rip = tr->start_bp.addr;
	tracee_setregs(t->tid, &r);
	if (window_can_begin(tr)) {
		*how = window_begin_thread(tr, t);
		return true;
	}
	t->regs.rip = tr->start_bp.addr;
	*how = window_step_over_int3(tr, t, &tr->start_bp) == 0 ? RESTART_CONT
								 : RESTART_NONE;
	return true;
}
