/* --auxv=valgrind: a launched image starts with the auxiliary vector
 * valgrind 3.19 gives its guests (coregrind/m_initimg/initimg-linux.c,
 * setup_client_stack, read for the rule), so that the loader and libc do
 * what they do under Cachegrind.
 *
 * The rules, at the image's exec stop (rsp at argc; argv, envp, then the
 * auxv pairs):
 * - Valgrind keeps the entries it knows: AT_IGNORE, AT_PHDR, AT_PHENT,
 *   AT_PHNUM, AT_PAGESZ, AT_BASE, AT_FLAGS, AT_ENTRY, AT_NOTELF, AT_UID,
 *   AT_EUID, AT_GID, AT_EGID, AT_PLATFORM, AT_HWCAP, AT_CLKTCK, AT_FPUCW,
 *   the three cache block sizes, AT_BASE_PLATFORM, AT_RANDOM, AT_EXECFN;
 *   AT_SECURE becomes 0.
 * - Everything else becomes AT_IGNORE (type 1, its value left): the vDSO
 *   (AT_SYSINFO_EHDR: glibc then makes real system calls for
 *   clock_gettime, gettimeofday, time and getcpu), AT_HWCAP2,
 *   AT_MINSIGSTKSZ, the rseq entries and whatever newer kernels add.
 * - Values that point into valgrind's own copies (AT_BASE, AT_ENTRY,
 *   AT_PHDR: its load addresses) are the kernel's here: where things are
 *   mapped is a layout difference (docs/whole-runs.md).
 * The vDSO stays mapped; nothing the target is told of uses it. */
#include "tracer.h"

#include <elf.h>
#include <stdbool.h>

#include "error.h"

static bool kept(uint64_t type)
{
	switch (type) {
	case AT_IGNORE: case AT_PHDR: case AT_PHENT: case AT_PHNUM:
	case AT_PAGESZ: case AT_BASE: case AT_FLAGS: case AT_ENTRY:
	case AT_NOTELF: case AT_UID: case AT_EUID: case AT_GID: case AT_EGID:
	case AT_PLATFORM: case AT_HWCAP: case AT_CLKTCK: case AT_FPUCW:
	case AT_DCACHEBSIZE: case AT_ICACHEBSIZE: case AT_UCACHEBSIZE:
	case AT_BASE_PLATFORM: case AT_RANDOM: case AT_EXECFN:
	case AT_SECURE:
		return true;
	default:
		return false;
	}
}

int auxv_as_valgrind(struct tracee *t)
{
	struct user_regs_struct r;
	uint64_t at, w[2];
	unsigned n = 0;

	if (tracee_getregs(t->tid, &r) < 0)
		goto bad;
	at = r.rsp;
	/* argc, argv..., NULL, envp..., NULL */
	if (tracee_read_mem(t->tid, at, w, 8) != 8)
		goto bad;
	at += 8 * (w[0] + 2);
	for (;; at += 8) {
		if (tracee_read_mem(t->tid, at, w, 8) != 8)
			goto bad;
		if (!w[0])
			break;
	}
	for (at += 8;; at += 16) {
		if (tracee_read_mem(t->tid, at, w, 16) != 16)
			goto bad;
		if (w[0] == AT_NULL)
			return 0;
		uint64_t nw[2] = { w[0], w[1] };
		if (!kept(w[0]))
			nw[0] = AT_IGNORE;
		else if (w[0] == AT_SECURE)
			nw[1] = 0;
		if ((nw[0] != w[0] || nw[1] != w[1]) &&
		    tracee_write_mem(t->tid, at, nw, 16) < 0)
			goto bad;
		if (++n > 4096)
			break;		/* no AT_NULL: not a vector */
	}
bad:
	error_msg("--auxv=valgrind: cannot rewrite the auxiliary vector of "
		  "process %d", t->tid);
	return -1;
}
