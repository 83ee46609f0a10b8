/* Software breakpoints: one int3 byte patched into the text with
 * PTRACE_POKETEXT (which works on r-x text, where process_vm_writev fails
 * with EFAULT), the original word kept so that removal restores the text
 * byte for byte. */
#include "tracer.h"

#include <errno.h>
#include <sys/ptrace.h>

int breakpoint_insert(pid_t tid, struct breakpoint *bp, uint64_t addr)
{
	errno = 0;
	long word = ptrace(PTRACE_PEEKTEXT, tid, (void *)addr, NULL);
	if (errno)
		return -errno;
	long patched = (word & ~0xffL) | 0xcc;
	if (ptrace(PTRACE_POKETEXT, tid, (void *)addr, (void *)patched) < 0)
		return -errno;
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
	if (errno)
		return -errno;
	long restored = (word & ~0xffL) | (bp->orig_word & 0xff);
	if (ptrace(PTRACE_POKETEXT, tid, (void *)bp->addr,
		   (void *)restored) < 0)
		return -errno;
	bp->inserted = false;
	return 0;
}
