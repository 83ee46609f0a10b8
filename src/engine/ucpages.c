/* Unicorn 2.0.1's cost per guest store, and why we take it away.
 *
 * In Unicorn 2.0.1 QEMU's dirty-memory tracking is stubbed out: every
 * RAM page reads as "clean" (ram_addr.h: cpu_physical_memory_is_clean is
 * always true), so every writable page's TLB entry keeps TLB_NOTDIRTY and
 * every guest store takes notdirty_write (accel/tcg/cputlb.c), which
 * builds a page_collection (a g_malloc, a GTree, a malloc per page that
 * holds code), asks tb_invalidate_phys_page_fast whether the store hits
 * translated code, and frees it all.  On bench/region.c that is 18% of a
 * window (perf: page_collection_lock and _unlock, malloc and free).
 *
 * The collection does nothing in that build: it holds the pages' locks,
 * and page_lock/page_unlock are empty without CONFIG_DEBUG_TCG (Unicorn
 * runs one vCPU on the caller's thread); nothing else reads it but
 * page_collection_unlock, which tb_invalidate_phys_page_range__locked
 * also calls on the way out when a store hit the running block.  The
 * invalidation itself (tb_invalidate_phys_page_fast: the page's
 * descriptor, its code bitmap, the blocks hit) is untouched.  So where
 * the library is that build, the two functions it calls through its PLT
 * are ours (exported from the executable, meson.build) and do nothing;
 * self-modifying code is still seen (tests/emulate/hostile.c, which
 * patches the block it runs).  Any other Unicorn, a debug build (it
 * exports assert_no_pages_locked), or CACHETRACE_HOST=uc-pages=qemu:
 * QEMU's own, called through. */
#include <dlfcn.h>
#include <stdbool.h>
#include <stdint.h>
#include <unicorn/unicorn.h>

#include "emulate.h"
#include "hostenv.h"

struct page_collection;

typedef struct page_collection *lock_fn(void *uc, uint64_t start,
					uint64_t end);
typedef void unlock_fn(struct page_collection *set);

struct page_collection *page_collection_lock_x86_64(void *uc, uint64_t start,
						    uint64_t end);
void page_collection_unlock_x86_64(struct page_collection *set);

static struct {
	lock_fn *lock;
	unlock_fn *unlock;
	int inert;		/* -1: not decided yet */
	const char *why;
} qemu = { .inert = -1 };

static char empty_collection;

static void decide(void)
{
	unsigned major, minor;
	unsigned version = uc_version(&major, &minor);
	qemu.lock = (lock_fn *)dlsym(RTLD_NEXT, "page_collection_lock_x86_64");
	qemu.unlock = (unlock_fn *)dlsym(RTLD_NEXT,
					 "page_collection_unlock_x86_64");
	qemu.inert = 0;
	if (!qemu.lock || !qemu.unlock)
		qemu.why = "builds QEMU's page collection (not found in "
			   "the library)";
	else if (version >> 8 != 0x020001)
		qemu.why = "builds QEMU's page collection (not Unicorn 2.0.1)";
	else if (dlsym(RTLD_DEFAULT, "assert_no_pages_locked_x86_64"))
		qemu.why = "builds QEMU's page collection (a debug build: "
			   "its page locks count)";
	else if (host_forced("uc-pages", "qemu"))
		qemu.why = "builds QEMU's page collection "
			   "(CACHETRACE_HOST=uc-pages=qemu)";
	else {
		qemu.inert = 1;
		qemu.why = "skips QEMU's page collection (inert in Unicorn "
			   "2.0.1: its page locks are empty)";
	}
}

struct page_collection *page_collection_lock_x86_64(void *uc, uint64_t start,
						    uint64_t end)
{
	if (qemu.inert < 0)
		decide();
	if (qemu.inert)
		return (struct page_collection *)&empty_collection;
	return qemu.lock(uc, start, end);
}

void page_collection_unlock_x86_64(struct page_collection *set)
{
	if (set != (struct page_collection *)&empty_collection)
		qemu.unlock(set);
}

const char *emu_store_path(void)
{
	if (qemu.inert < 0)
		decide();
	return qemu.why;
}
