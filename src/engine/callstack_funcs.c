/* The function a pc belongs to, for the call stacks: found through libdw
 * (the mappings read again when a pc is in no known module), a PLT stub
 * recognised by its bytes, and names given at the end to functions first
 * seen as bare addresses, as the flat profile names them. */
#include "callstack.h"

#include <errno.h>
#include <inttypes.h>
#include <libunwind-ptrace.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include "error.h"
#include "hashtab.h"
#include "callstack_private.h"

/* ---- functions ---- */

static bool looks_like_plt(pid_t tid, uint64_t pc)
{
	unsigned char b[8];
	struct iovec local = { b, sizeof(b) }, remote = { (void *)pc, sizeof(b) };

	if (process_vm_readv(tid, &local, 1, &remote, 1, 0) != sizeof(b))
		return false;
	size_t i = 0;
	if (b[0] == 0xf3 && b[1] == 0x0f && b[2] == 0x1e && b[3] == 0xfa)
		i = 4;				/* endbr64 (.plt.sec) */
	if (b[i] == 0xf2)
		i++;				/* bnd */
	return b[i] == 0xff && (b[i + 1] == 0x25 || b[i + 1] == 0xa3);
}

static struct cs_func *func_at(const struct callstack *cs, uint64_t pc)
{
	struct hashtab_probe p;
	for (uint32_t i = hashtab_first(&cs->pc_func_map, hash_u64(pc), &p);
	     i != HASHTAB_NONE; i = hashtab_next(&cs->pc_func_map, &p))
		if (cs->pc_funcs[i].pc == pc)
			return cs->pc_funcs[i].func;
	return NULL;
}

static uint64_t pc_func_hash(const void *ctx, uint32_t i)
{
	const struct callstack *cs = ctx;
	return hash_u64(cs->pc_funcs[i].pc);
}

/* PC (not in the map yet) is in F. */
static void func_at_add(struct callstack *cs, uint64_t pc, struct cs_func *f)
{
	*APPEND(cs->pc_funcs, cs->n_pc_funcs, cs->cap_pc_funcs) =
		(struct pc_func){ pc, f };
	hashtab_add(&cs->pc_func_map, hash_u64(pc), cs->n_pc_funcs - 1,
		    pc_func_hash, cs);
}

static struct cs_func *new_func(struct callstack *cs)
{
	struct cs_func *f = cs_zalloc(cs, sizeof(*f));
	if (f)
		f->id = cs->n_funcs++;
	return f;
}

/* Whether to re-read the mappings for PC, in no known function: once a
 * window (the mappings are read at the exec stop), and whenever PC is in
 * no known module (a library mapped since: in a whole run libc and all
 * the dynamic loader maps after the exec), backing off while that finds
 * nothing (code in no file: a JIT's). */
static bool want_refresh(struct callstack *cs, uint64_t pc)
{
	if (!sym_module_name(cs->syms, pc)) {
		if (!cs->unmapped_skip)
			return true;
		cs->unmapped_skip--;
	}
	return !cs->refreshed;
}

static void refreshed(struct callstack *cs, uint64_t pc)
{
	cs->refreshed = true;
	if (sym_module_name(cs->syms, pc)) {
		cs->unmapped_gap = 0;
	} else {
		cs->unmapped_gap = cs->unmapped_gap ? cs->unmapped_gap * 2 : 1;
		cs->unmapped_skip = cs->unmapped_gap;
	}
}

/* The name of the function at LOW as the flat profile has it (display
 * version, "(below main)"), so that the profiles of one run agree. */
static const char *flat_name(struct callstack *cs, uint64_t low)
{
	struct src_loc loc;
	sym_lookup(cs->syms, low, &loc);
	return loc.fn;
}

struct cs_func *cs_func_of(struct callstack *cs, pid_t tid, uint64_t pc)
{
	struct cs_func *f = func_at(cs, pc);
	if (f)
		return f;

	uint64_t low, high;
	const char *name = NULL;
	int found = sym_function_range(cs->syms, pc, &low, &high, NULL);
	if (found < 0 && want_refresh(cs, pc)) {
		char err[128];
		if (sym_refresh(cs->syms, err, sizeof(err)) == 0)
			found = sym_function_range(cs->syms, pc, &low, &high,
						   NULL);
		refreshed(cs, pc);
	}
	if (found == 0 && high > low) {
		name = flat_name(cs, low);
		/* Share one record per function. */
		f = func_at(cs, low);
		if (!f) {
			f = new_func(cs);
			if (!f)
				return NULL;
			f->low = low;
			f->high = high;
			f->name = name;
			f->pop_on_jump = !strncmp(name, "_dl_runtime_resolve",
						  19);
			if (low != pc)
				func_at_add(cs, low, f);
		}
	} else {
		f = new_func(cs);
		if (!f || !(f->own_name = cs_keep(cs, malloc(24))))
			return NULL;
		snprintf(f->own_name, 24, "0x%016" PRIx64, pc);
		f->name = f->own_name;
		f->low = pc;
		f->high = pc + 1;
		f->plt = looks_like_plt(tid, pc);
	}
	func_at_add(cs, pc, f);
	return f;
}

/* Name F, a function that was a pc in no known symbol when first seen,
 * if a symbol covers its pc now.  A function found twice (as a bare pc and
 * by its symbol in a later window, or at two of its pcs) becomes one: F
 * takes the id, name and range of the record at the symbol's address, so
 * the writers merge them. */
static void name_late_func(struct callstack *cs, struct cs_func *f)
{
	uint64_t low, high;
	if (!f->own_name || f->plt ||
	    sym_function_range(cs->syms, f->low, &low, &high, NULL) < 0 ||
	    high <= low)
		return;
	const char *name = flat_name(cs, low);
	f->own_name = NULL;
	struct cs_func *first = func_at(cs, low);
	if (first && first->own_name)
		name_late_func(cs, first);	/* the bare pc is the entry */
	if (!first) {
		func_at_add(cs, low, f);
	} else if (first != f && !first->own_name) {
		f->id = first->id;
		name = first->name;
	}
	f->low = low;
	f->high = high;
	f->name = name;
	f->pop_on_jump = !strncmp(name, "_dl_runtime_resolve", 19);
}

/* Name every function still a bare pc: a library mapped after the
 * window's one sym_refresh (in a whole run, libc and all that the dynamic
 * loader maps after the exec) is known now, as the flat profile, which
 * resolves its pcs at the end, knows it.  Idempotent. */
void cs_name_late_funcs(struct callstack *cs)
{
	for (uint32_t i = 0; i < cs->n_pc_funcs; i++)
		if (cs->pc_funcs[i].pc == cs->pc_funcs[i].func->low)
			name_late_func(cs, cs->pc_funcs[i].func);
}
