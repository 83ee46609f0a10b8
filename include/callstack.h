/* Call stacks while stepping (issue 6): a shadow stack kept from the calls
 * and returns the engine steps, seeded at the start of each window by one
 * libunwind-ptrace unwind, and re-synchronised by unwinding again only when
 * it disagrees with reality (a return to an unexpected address: longjmp,
 * exceptions, tail calls, signal handler entry and sigreturn).
 *
 * Costs are kept per (calling context, pc): a calling context is a node of
 * a calling-context tree (root = the outermost frame found at the window's
 * start); recursion is folded so that the tree stays bounded (the rule is
 * documented in src/engine/callstack.c).  This module collects; the
 * writers (include/callgrind.h: Callgrind's format, folded stacks) read
 * what it collected through callstack_profile.
 *
 * The order of calls, as src/tracer/main.c and step.c make them:
 *   callstack_new once, before the target runs;
 *   per window: callstack_begin, in the thread that starts it;
 *   per trap of a stepped thread, after the step has been accounted into
 *     the engine's scratch row: callstack_row (the instruction's pc), the
 *     engine adds the step's counts into the row it returns, then
 *     callstack_step with the instruction and the registers before and
 *     after; a thread that moved without a step (a signal handler's
 *     entry) gets callstack_step with no instruction and no row;
 *   callstack_end when the window ends;
 *   at the end, while the target is still attached: callstack_profile
 *     and the writers; then callstack_free. */
#ifndef CT_CALLSTACK_H
#define CT_CALLSTACK_H

#include <stdint.h>
#include <sys/types.h>
#include <sys/user.h>

#include "callprof.h"
#include "decode.h"
#include "symbols.h"

struct callstack;

/* N_EVENTS counters per row, as the flat cost table. */
struct callstack *callstack_new(unsigned n_events, struct symbols *syms);
void callstack_free(struct callstack *cs);

/* A window begins in thread TID stopped at REGS (rip = the first
 * instruction of the window): unwind it once to find the frames above.
 * Returns 0, or -errno / -1 (the stack then starts at REGS->rip alone). */
int callstack_begin(struct callstack *cs, pid_t tid,
		    const struct user_regs_struct *regs);

/* A zeroed row for the step just accounted at PC, for the caller to add
 * the step's counts into; the following callstack_step adds it into the
 * (context, PC) row of the thread that stepped (with --threads=all only the
 * step tells which).  Valid until the next callstack_row, callstack_step,
 * callstack_end or callstack_profile call. */
uint64_t *callstack_row(struct callstack *cs, uint64_t pc);

/* INSN at BEFORE->rip has executed; AFTER are the registers after the
 * trap.  Push on a call (counting the call edge), pop on a return, and
 * re-unwind thread TID when the shadow stack disagrees with AFTER. */
void callstack_step(struct callstack *cs, pid_t tid, const struct insn *insn,
		    const struct user_regs_struct *before,
		    const struct user_regs_struct *after);

/* Unwinding reads the thread through ptrace: an engine that runs threads
 * elsewhere (emulation) makes them current in SYNC, called before each
 * unwind. */
void callstack_set_sync(struct callstack *cs, void (*sync)(void *ctx, pid_t tid),
			void *ctx);

/* A sample of thread TID (--engine=native): PCS[0] its pc, PCS[1..N-1]
 * the return addresses of its stack outwards; COST added to EVENT of the
 * (context, pc) row.  The thread's frames are this stack's from then on:
 * the frames two samples share keep adding to their calls' inclusive
 * costs; a call's count is the times a sample found it new. */
void callstack_sample(struct callstack *cs, pid_t tid, const uint64_t *pcs,
		      unsigned n, unsigned event, uint64_t cost);
/* The window ended. */
void callstack_end(struct callstack *cs);

/* What was collected, for the writers (callgrind_write,
 * callgrind_write_folded): adds the pending row and names the functions of
 * costs found with no stack (needs the target attached).  Valid until the
 * next call of any other callstack_ function. */
const struct callprof *callstack_profile(struct callstack *cs);

#endif
