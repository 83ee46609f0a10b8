/* The emulate engine's copy of the target's memory (emumem.c).
 *
 * One Unicorn region per VMA of the target, mapped with uc_mem_map_ptr
 * over a buffer of ours the first time the emulator touches the VMA.  The
 * buffer starts PROT_NONE: the host MMU does the bookkeeping.  A first
 * access faults into our SIGSEGV handler, which reads the page from the
 * target (process_vm_readv; where first touches run on in address order,
 * up to 16 absent pages at once), our int3s shadowed, and makes it
 * read-only; past the budget (--mirror-budget) the clean pages read
 * first are dropped (and read again when used);
 * a first write faults again, keeps a copy of the page as it was and
 * marks it dirty.  At a sync point the bytes the emulator changed are
 * written back (process_vm_writev; whole pages past the first 256) and
 * the pages made read-only again; pages that the kernel, the real CPU or another thread
 * may have changed are invalidated (PROT_NONE, read again on the next
 * touch).  Unicorn enforces the VMA's own permissions, so a write to a
 * read-only page or a fetch from a non-executable one stops the
 * emulation and the real CPU takes the fault. */
#ifndef CT_EMUMEM_H
#define CT_EMUMEM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <unicorn/unicorn.h>

struct emumem;

struct emumem *emumem_new(uc_engine *uc, pid_t pid);
void emumem_free(struct emumem *m);
/* Our int3s: the emulator sees the bytes they replaced, and a write-back
 * keeps the int3.  At most 4. */
void emumem_set_int3s(struct emumem *m, const uint64_t *addr,
		      const uint8_t *orig, unsigned n);
/* Map the target's [vvar] regions in Unicorn over our own where they
 * hold the same data (one time namespace): the vDSO's clock reads are
 * then emulated.  Before the first emumem_refresh_maps.  False when not. */
bool emumem_share_vvar(struct emumem *m);
/* Read /proc/PID/maps again: VMAs that changed are dropped (after a
 * write-back) and mapped again on their next touch.  0 or -errno. */
int emumem_refresh_maps(struct emumem *m);
/* Write every dirty page back to the target.  0, or -errno after a
 * message. */
int emumem_writeback(struct emumem *m);
/* Record in J's write-back what emumem_writeback would write (the
 * guardian redoes it if cachetrace dies halfway). */
struct journal;
void emumem_record(struct emumem *m, struct journal *j);
/* Drop what the emulator wrote (lockstep: the real CPU wrote it too). */
void emumem_discard(struct emumem *m);
/* Lockstep, after the CPU's step: each page the emulator wrote (the
 * log) is kept, read-only as if read, where it now equals the target's
 * (the CPU wrote what it wrote), else forgotten; the log emptied.
 * emumem_invalidate_range leaves the pages kept, until emumem_discard. */
void emumem_settle(struct emumem *m);
/* The real CPU touched [addr, addr + len): its pages held are forgotten
 * where they now differ from the target's (those emumem_settle kept
 * excepted), Unicorn's translations of code there dropped. */
void emumem_invalidate_range(struct emumem *m, uint64_t addr, uint64_t len);
/* Forget every writable page (the kernel or another thread ran), or with
 * ALL every page (the target ran natively: a new window). */
void emumem_invalidate(struct emumem *m, bool all);
/* As emumem_invalidate, but where few pages are held (64 at most), read
 * them again in one call and forget only those that changed: what the
 * target did not write stays (and so do the translations of unchanged
 * code). */
void emumem_revalidate(struct emumem *m, bool all);
/* While emulating, our SIGSEGV handler serves this mirror. */
void emumem_activate(struct emumem *m);
void emumem_deactivate(struct emumem *m);
/* Pages read from and written to the target so far, pages that could not
 * be read, and clean pages dropped past the budget. */
void emumem_stats(const struct emumem *m, uint64_t *reads, uint64_t *writes,
		  uint64_t *unreadable, uint64_t *dropped);
/* Hold at most BYTES of the target's pages (0: no bound): past it the
 * clean pages read first are dropped, and read again if used. */
void emumem_set_budget(struct emumem *m, uint64_t bytes);
/* [addr, addr + len) is mapped in Unicorn now, or could be (a readable
 * VMA of the target). */
bool emumem_can_map(struct emumem *m, uint64_t addr);
/* [ADDR, ADDR + LEN) is readable in the target (WRITE: and writable, and
 * not executable: Unicorn's translations are never rewritten behind its
 * back) and mapped in the emulator. */
bool emumem_access_ok(struct emumem *m, uint64_t addr, uint64_t len,
		      bool write);

#endif
