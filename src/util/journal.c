/* The guardian's journal: see include/journal.h.  One memfd: the header,
 * then the write-back area, sized large and sparse (shared memory pages
 * are allocated when first written, and a big write-back is rare). */
#include "journal.h"

#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <unistd.h>

#define JOURNAL_MAGIC 0x434a5431u	/* "CJT1" */
#define HDR_SIZE (128u << 10)
#define DATA_SIZE ((size_t)1 << 30)

_Static_assert(sizeof(struct journal_hdr) <= HDR_SIZE, "journal header");

static int map(struct journal *j, int fd)
{
	void *p = mmap(NULL, HDR_SIZE + DATA_SIZE, PROT_READ | PROT_WRITE,
		       fd < 0 ? MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE :
		       MAP_SHARED | MAP_NORESERVE, fd, 0);
	if (p == MAP_FAILED)
		return -errno;
	j->h = p;
	j->data = (uint8_t *)p + HDR_SIZE;
	j->cap = DATA_SIZE;
	j->fd = fd;
	j->wb_len = 0;
	return 0;
}

int journal_open(struct journal *j, pid_t pid, bool shared)
{
	memset(j, 0, sizeof(*j));
	j->fd = -1;
	int fd = shared ? memfd_create("cachetrace-journal", MFD_CLOEXEC) : -1;
	if (shared && fd < 0)
		return -errno;
	int rc = fd >= 0 && ftruncate(fd, (off_t)HDR_SIZE +
				      (off_t)DATA_SIZE) < 0 ? -errno : map(j, fd);
	if (rc < 0) {
		if (fd >= 0)
			close(fd);
		return rc;
	}
	j->h->magic = JOURNAL_MAGIC;
	j->h->pid = pid;
	__atomic_store_n(&j->h->state, JOURNAL_ARMED, __ATOMIC_RELEASE);
	return 0;
}

int journal_map(struct journal *j, int fd)
{
	memset(j, 0, sizeof(*j));
	int rc = map(j, fd);
	if (rc == 0 && j->h->magic != JOURNAL_MAGIC)
		rc = -EINVAL;
	return rc;
}

void journal_close(struct journal *j)
{
	if (j->h)
		munmap(j->h, HDR_SIZE + DATA_SIZE);
	if (j->fd >= 0)
		close(j->fd);
	memset(j, 0, sizeof(*j));
	j->fd = -1;
}

void journal_int3(struct journal *j, uint64_t addr, uint8_t orig, bool in)
{
	struct journal_int3 *slot = NULL, *out = NULL;
	for (unsigned i = 0; i < JOURNAL_INT3; i++) {
		struct journal_int3 *e = &j->h->int3[i];
		if (e->in && e->addr == addr) {
			slot = e;
			break;
		}
		if (!e->in && !slot)
			slot = e;
		if (e->in == JOURNAL_INT3_OUT && !out)
			out = e;
	}
	if (!slot)
		slot = out;	/* full: reuse one taken out long ago */
	if (!slot)
		return;
	if (!in) {
		/* Out of the text, but a thread may have trapped on it just
		 * before: one byte past it, it must still go back. */
		if (slot->in && slot->addr == addr)
			__atomic_store_n(&slot->in, JOURNAL_INT3_OUT,
					 __ATOMIC_RELEASE);
		return;
	}
	if (slot->addr != addr || slot->in != JOURNAL_INT3_IN) {
		__atomic_store_n(&slot->in, 0, __ATOMIC_RELEASE);
		slot->addr = addr;
		slot->orig = orig;
		__atomic_store_n(&slot->in, JOURNAL_INT3_IN, __ATOMIC_RELEASE);
	}
}

void journal_cache_int3(struct journal *j, unsigned k, uint64_t addr,
			uint8_t orig)
{
	struct journal_int3 *e = &j->h->cache_int3[k];
	__atomic_store_n(&e->in, 0, __ATOMIC_RELEASE);
	if (!addr)
		return;
	e->addr = addr;
	e->orig = orig;
	__atomic_store_n(&e->in, JOURNAL_INT3_IN, __ATOMIC_RELEASE);
}

void journal_dr_used(struct journal *j)
{
	__atomic_store_n(&j->h->dr_used, 1, __ATOMIC_RELEASE);
}

void journal_cache(struct journal *j, unsigned i, uint64_t lo, uint64_t hi)
{
	if (i >= JOURNAL_CACHES)
		return;
	/* The range is whole before it counts: hi last. */
	__atomic_store_n(&j->h->cache[i][1], 0, __ATOMIC_RELEASE);
	__atomic_store_n(&j->h->cache[i][0], lo, __ATOMIC_RELEASE);
	__atomic_store_n(&j->h->cache[i][1], hi, __ATOMIC_RELEASE);
}

void journal_hold(struct journal *j, bool held)
{
	__atomic_store_n(&j->h->hold, held, __ATOMIC_RELEASE);
}

void journal_state(struct journal *j, enum journal_state state)
{
	__atomic_store_n(&j->h->state, state, __ATOMIC_RELEASE);
}

void journal_signal(struct journal *j, unsigned *slot, pid_t tid, int sig)
{
	if (*slot && j->h->sig[*slot - 1].tid != tid)
		*slot = 0;	/* taken by another thread since */
	if (!*slot) {
		if (!sig)
			return;
		/* A free entry, or this thread's from before. */
		for (unsigned i = 0; i < JOURNAL_SIGS && !*slot; i++) {
			struct journal_sig *e = &j->h->sig[i];
			if (e->tid == tid || !e->tid || !e->sig)
				*slot = i + 1;
		}
		if (!*slot)
			return;		/* full: this signal is not kept */
		j->h->sig[*slot - 1].sig = 0;
		j->h->sig[*slot - 1].tid = tid;
	}
	__atomic_store_n(&j->h->sig[*slot - 1].sig, sig, __ATOMIC_RELEASE);
}

void journal_pin(struct journal *j, pid_t tid, const uint64_t *mask,
		 unsigned words)
{
	struct journal_pin *free = NULL;
	for (unsigned i = 0; i < JOURNAL_PINS; i++) {
		struct journal_pin *e = &j->h->pin[i];
		if (e->tid == tid) {
			__atomic_store_n(&e->tid, 0, __ATOMIC_RELEASE);
			free = e;
		} else if (!e->tid && !free) {
			free = e;
		}
	}
	if (!mask || !free)
		return;		/* given back, or full: not kept */
	if (words > 16)
		words = 16;
	memcpy(free->mask, mask, words * sizeof(uint64_t));
	free->words = words;
	/* whole before it counts */
	__atomic_store_n(&free->tid, tid, __ATOMIC_RELEASE);
}

void journal_wb_begin(struct journal *j)
{
	j->wb_len = 0;
	j->h->wb_overflow = 0;
}

void journal_wb_add(struct journal *j, enum journal_rec kind, pid_t tid,
		    uint64_t addr, const void *buf, size_t len)
{
	size_t need = sizeof(struct journal_rec_hdr) + ((len + 7) & ~(size_t)7);
	if (j->h->wb_overflow || need > j->cap - j->wb_len) {
		j->h->wb_overflow = 1;
		return;
	}
	struct journal_rec_hdr r = { kind, tid, addr, len };
	memcpy(j->data + j->wb_len, &r, sizeof(r));
	memcpy(j->data + j->wb_len + sizeof(r), buf, len);
	j->wb_len += need;
}

void journal_wb_commit(struct journal *j)
{
	j->h->wb_len = j->wb_len;
	__atomic_store_n(&j->h->wb, 1, __ATOMIC_RELEASE);
}

void journal_wb_done(struct journal *j)
{
	__atomic_store_n(&j->h->wb, 0, __ATOMIC_RELEASE);
}

bool journal_trap_queued(pid_t tid)
{
	siginfo_t si[8];
	struct __ptrace_peeksiginfo_args args = { .off = 0, .flags = 0,
						  .nr = 8 };
	int n = (int)ptrace(PTRACE_PEEKSIGINFO, tid, &args, si);
	for (int i = 0; i < n; i++)
		if (si[i].si_signo == SIGTRAP && si[i].si_code != SI_USER &&
		    si[i].si_code != SI_TKILL)
			return true;
	return false;
}
