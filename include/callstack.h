/* Call stacks while stepping (issue 6): a shadow stack kept from the calls
 * and returns the engine steps, seeded at the start of each window by one
 * libunwind-ptrace unwind, and re-synchronised by unwinding again only when
 * it disagrees with reality (a return to an unexpected address: longjmp,
 * exceptions, tail calls, signal handler entry and sigreturn).
 *
 * Costs are kept per (calling context, pc): a calling context is a node of
 * a calling-context tree (root = the outermost frame found at the window's
 * start); recursion is folded so that the tree stays bounded (the rule is
 * documented in src/tracer/callstack.c).  The writers produce Callgrind's
 * format (inclusive call costs, call counts) and folded stacks.
 *
 * The engine calls, per window:  callstack_begin, then per trap
 * callstack_row (before accounting: the row of the current context at the
 * instruction's pc) and callstack_step (after the trap: follows the call,
 * return or jump to the new pc), then callstack_end. */
#ifndef CT_CALLSTACK_H
#define CT_CALLSTACK_H

#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>
#include <sys/user.h>

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

/* A zeroed row for the coming step at PC; callstack_step adds it into the
 * (context, PC) row of the thread that stepped (with --threads=all only the
 * step tells which).  Valid until the next callstack_row, callstack_step,
 * callstack_end or writer call. */
uint64_t *callstack_row(struct callstack *cs, uint64_t pc);

/* INSN at BEFORE->rip has executed; AFTER are the registers after the
 * trap.  Push on a call (counting the call edge), pop on a return, and
 * re-unwind thread TID when the shadow stack disagrees with AFTER. */
void callstack_step(struct callstack *cs, pid_t tid, const struct insn *insn,
		    const struct user_regs_struct *before,
		    const struct user_regs_struct *after);

/* The window ended. */
void callstack_end(struct callstack *cs);

/* Write a Callgrind-format profile (version: 1, creator, cmd:,
 * positions: line, events:, fl=/fn=/cfl=/cfn=/calls= with name
 * compression, inclusive call costs, summary:/totals:).  DESC lines as in
 * cgout_meta.  Returns 0 or -1 with errno set. */
int callstack_write_callgrind(struct callstack *cs, FILE *out,
			      const char *const *desc, const char *cmd,
			      const char *const *events);

/* Write folded stacks, "outer;...;inner COUNT" per distinct stack, COUNT
 * the self cost of EVENT (index into the events) in that context.
 * Returns 0 or -1 with errno set. */
int callstack_write_folded(struct callstack *cs, FILE *out, unsigned event);

#endif
