/* The emulate engine's copy of the target's memory: see emumem.h.
 *
 * Pages are 4 KiB.  Per VMA a byte per page says absent, present (read
 * from the target, read-only in our buffer) or dirty (written by the
 * emulator, not yet written back).  The SIGSEGV handler is the only code
 * that fills pages; it uses nothing but system calls and the tables,
 * which are not changed while the emulator runs.  The one file-scope
 * variable is the mirror the handler serves (a signal handler has no other
 * way to find it). */
#include "emumem.h"

#include "journal.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <ucontext.h>
#include <unistd.h>

#include "error.h"

#define PG 4096u
#define PG_SHIFT 12

enum { PG_ABSENT = 0, PG_PRESENT = 1, PG_DIRTY = 2 };
#define DIRTY_LOG 256
#define REVALIDATE 64		/* pages compared at most, else forgotten */

struct vma {
	uint64_t start, end;
	uint64_t offset, inode;
	char perms[5];
	bool special;		/* [vvar], [vsyscall]: never mirrored */
	uintptr_t own;		/* a [vvar*] region we have too: our copy's
				 * address (emumem_share_vvar), else 0 */
	bool own_mapped;	/* ... mapped in Unicorn over ours, live */
	uint8_t *buf;		/* NULL until mapped in Unicorn */
	uint8_t *state;		/* per page */
};

/* A page of ours, in VMA V. */
struct page_ref {
	struct vma *v;
	size_t pg;
};

struct emumem {
	uc_engine *uc;
	pid_t pid;
	uc_hook unmapped_hook;
	struct vma *v;
	size_t n, cap;
	uint64_t bp_addr[4];
	uint8_t bp_orig[4];
	unsigned n_bp;
	uint64_t reads, writes, unreadable;
	/* The pages made dirty since the last write-back, in order; when
	 * more, every state table is scanned. */
	struct { uint32_t vma; uint32_t pg; } dirty[DIRTY_LOG];
	uint8_t *orig;		/* each logged page as it was before the
				 * emulator's first write: only the bytes it
				 * changed are written back */
	unsigned n_dirty;
	bool dirty_overflow;
	/* Lockstep: the logged pages emumem_settle kept (the target's bytes
	 * after the CPU's step), which emumem_invalidate_range leaves, until
	 * the next emulation's emumem_discard. */
	struct page_ref settled[REVALIDATE];
	unsigned n_settled;
	int maps_fd;		/* /proc/PID/maps, kept open; -1: none */
	char *maps_buf;
	size_t maps_cap;
	char *maps_last;	/* the text the VMAs were built from */
	size_t maps_last_len;
	/* Read-ahead: the page after the last one read, where a run of
	 * first touches in address order goes on. */
	uint64_t next_addr;
	unsigned run;		/* pages of that run so far */
	/* The budget: pages held (present or dirty), at most BUDGET; past
	 * it the oldest clean pages are dropped (their addresses in a ring,
	 * in the order they were read). */
	uint64_t held, budget, dropped;
	uint64_t *ring;		/* target addresses; RING slots */
	size_t ring_head, ring_len;
	uint8_t *scratch;	/* REVALIDATE pages, for emumem_revalidate */
	/* Our own [vvar] and [vvar_vclock] (emumem_share_vvar), where the
	 * target's are the same data: address and size, 0 if not. */
	struct { uintptr_t addr; size_t len; } own_vvar[2];
};

#define RING ((size_t)1 << 20)	/* pages remembered for dropping: 4 GiB */
#define READ_AHEAD 16		/* pages read at once on a run */

static struct emumem *served;	/* the mirror the SIGSEGV handler serves */
static struct sigaction old_segv;
/* Ours is SIGSEGV's action (from the first emulation on): installed
 * once, not around every emulation (lockstep's two sigaction calls an
 * instruction); outside one, served is NULL and a fault is not ours. */
static volatile sig_atomic_t segv_installed;

static size_t vma_pages(const struct vma *v)
{
	return (size_t)((v->end - v->start) >> PG_SHIFT);
}

static uint32_t vma_prot(const struct vma *v)
{
	uint32_t p = 0;
	if (v->perms[0] == 'r')
		p |= UC_PROT_READ;
	if (v->perms[1] == 'w')
		p |= UC_PROT_WRITE;
	if (v->perms[2] == 'x')
		p |= UC_PROT_EXEC;
	return p;
}

static bool mirrorable(const struct vma *v)
{
	return !v->special && v->perms[0] == 'r';
}

/* A [vvar*] region mapped in Unicorn over our own (read-only, live: the
 * kernel updates it as it does the target's). */
static int own_map(struct emumem *m, struct vma *v)
{
	if (uc_mem_map_ptr(m->uc, v->start, v->end - v->start, UC_PROT_READ,
			   (void *)v->own) != UC_ERR_OK)
		return -EINVAL;
	v->own_mapped = true;
	return 0;
}

static struct vma *vma_of(struct emumem *m, uint64_t addr);

/* Drop the oldest clean pages until one more fits the budget; in the
 * SIGSEGV handler (system calls only). */
static void make_room(struct emumem *m)
{
	while (m->budget && m->held >= m->budget && m->ring_len) {
		uint64_t a = m->ring[m->ring_head];
		m->ring_head = (m->ring_head + 1) & (RING - 1);
		m->ring_len--;
		struct vma *v = vma_of(m, a);
		if (!v || !v->buf)
			continue;
		size_t pg = (a - v->start) >> PG_SHIFT;
		if (v->state[pg] != PG_PRESENT)
			continue;	/* dirty: kept until written back */
		uint8_t *p = v->buf + (pg << PG_SHIFT);
		mprotect(p, PG, PROT_NONE);
		madvise(p, PG, MADV_DONTNEED);
		v->state[pg] = PG_ABSENT;
		m->held--;
		m->dropped++;
	}
}

/* Pages [PG, PG + N) of V were read: our int3s shadowed, counted, held. */
static void filled(struct emumem *m, struct vma *v, size_t pg, size_t n)
{
	uint64_t addr = v->start + ((uint64_t)pg << PG_SHIFT);
	uint64_t len = (uint64_t)n << PG_SHIFT;
	uint8_t *p = v->buf + ((size_t)pg << PG_SHIFT);
	for (unsigned i = 0; i < m->n_bp; i++)
		if (m->bp_addr[i] >= addr && m->bp_addr[i] < addr + len)
			p[m->bp_addr[i] - addr] = m->bp_orig[i];
	m->reads += n;
	m->held += n;
	if (!m->budget || !m->ring)
		return;
	for (size_t k = 0; k < n; k++) {
		if (m->ring_len == RING) {	/* forget the oldest */
			m->ring_head = (m->ring_head + 1) & (RING - 1);
			m->ring_len--;
		}
		m->ring[(m->ring_head + m->ring_len++) & (RING - 1)] =
			addr + ((uint64_t)k << PG_SHIFT);
	}
}

/* Fill page PG of V from the target, and when the first touches run on
 * in address order, the absent pages after it in one read (READ_AHEAD at
 * most): in the SIGSEGV handler.  Returns the pages filled (writable:
 * the caller sets their protection). */
static size_t fill_page(struct emumem *m, struct vma *v, size_t pg)
{
	uint8_t *p = v->buf + ((size_t)pg << PG_SHIFT);
	uint64_t addr = v->start + ((uint64_t)pg << PG_SHIFT);
	size_t n = 1;
	if (addr == m->next_addr && ++m->run >= 2)
		while (n < READ_AHEAD && pg + n < vma_pages(v) &&
		       v->state[pg + n] == PG_ABSENT)
			n++;
	else if (addr != m->next_addr)
		m->run = 0;
	make_room(m);
	if (n > 1)
		mprotect(p + PG, (n - 1) * PG, PROT_READ | PROT_WRITE);
	struct iovec local = { p, n * PG };
	struct iovec remote = { (void *)(uintptr_t)addr, n * PG };
	ssize_t got = process_vm_readv(m->pid, &local, 1, &remote, 1, 0);
	if (got != (ssize_t)(n * PG)) {
		/* Short: keep the whole pages read; the first page, if not
		 * even it, reads as zeros (unreadable). */
		size_t whole = got > 0 ? (size_t)got / PG : 0;
		if (n > 1)
			mprotect(p + PG, (n - 1) * PG, PROT_NONE);
		n = whole ? whole : 1;
		if (!whole) {
			memset(p, 0, PG);
			m->unreadable++;
		}
		if (n > 1)
			mprotect(p + PG, (n - 1) * PG, PROT_READ | PROT_WRITE);
	}
	m->next_addr = addr + (uint64_t)n * PG;
	filled(m, v, pg, n);
	if (n > 1)
		memset(v->state + pg + 1, PG_PRESENT, n - 1);
	return n;
}

static struct vma *vma_of_host(struct emumem *m, uintptr_t a)
{
	for (size_t i = 0; i < m->n; i++) {
		struct vma *v = &m->v[i];
		if (v->buf && a >= (uintptr_t)v->buf &&
		    a < (uintptr_t)v->buf + (v->end - v->start))
			return v;
	}
	return NULL;
}

static void segv_handler(int sig, siginfo_t *si, void *uctx)
{
	struct emumem *m = served;
	uintptr_t a = (uintptr_t)si->si_addr;
	struct vma *v = m ? vma_of_host(m, a) : NULL;
	if (!v) {
		/* Not ours: a real crash, or the native executor's fault;
		 * fault again under the old action. */
		sigaction(sig, &old_segv, NULL);
		segv_installed = false;
		return;
	}
	size_t pg = (a - (uintptr_t)v->buf) >> PG_SHIFT;
	uint8_t *p = v->buf + (pg << PG_SHIFT);
	bool write = ((ucontext_t *)uctx)->uc_mcontext.gregs[REG_ERR] & 2;
	if (v->state[pg] == PG_ABSENT) {
		mprotect(p, PG, PROT_READ | PROT_WRITE);
		size_t n = fill_page(m, v, pg);
		v->state[pg] = PG_PRESENT;
		if (n > 1)
			mprotect(p + PG, (n - 1) * PG, PROT_READ);
		if (!write) {
			mprotect(p, PG, PROT_READ);
			return;
		}
	}
	if (write) {
		if (m->n_dirty < DIRTY_LOG)
			memcpy(m->orig + ((size_t)m->n_dirty << PG_SHIFT), p, PG);
		mprotect(p, PG, PROT_READ | PROT_WRITE);
		v->state[pg] = PG_DIRTY;
		if (m->n_dirty < DIRTY_LOG) {
			m->dirty[m->n_dirty].vma = (uint32_t)(v - m->v);
			m->dirty[m->n_dirty++].pg = (uint32_t)pg;
		} else {
			m->dirty_overflow = true;
		}
	}
}

void emumem_activate(struct emumem *m)
{
	served = m;
	if (segv_installed)
		return;
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = segv_handler;
	sa.sa_flags = SA_SIGINFO | SA_NODEFER;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGSEGV, &sa, &old_segv);
	segv_installed = true;
}

void emumem_deactivate(struct emumem *m)
{
	(void)m;
	served = NULL;
}

static struct vma *vma_of(struct emumem *m, uint64_t addr)
{
	size_t lo = 0, hi = m->n;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (addr < m->v[mid].start)
			hi = mid;
		else if (addr >= m->v[mid].end)
			lo = mid + 1;
		else
			return &m->v[mid];
	}
	return NULL;
}

static int vma_map(struct emumem *m, struct vma *v)
{
	size_t len = v->end - v->start;
	void *buf = mmap(NULL, len, PROT_NONE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (buf == MAP_FAILED)
		return -errno;
	v->state = calloc(vma_pages(v), 1);
	if (!v->state) {
		munmap(buf, len);
		return -ENOMEM;
	}
	if (uc_mem_map_ptr(m->uc, v->start, len, vma_prot(v), buf) != UC_ERR_OK) {
		free(v->state);
		v->state = NULL;
		munmap(buf, len);
		return -EINVAL;
	}
	v->buf = buf;
	return 0;
}

static void vma_unmap(struct emumem *m, struct vma *v)
{
	if (v->own_mapped) {
		uc_mem_unmap(m->uc, v->start, v->end - v->start);
		v->own_mapped = false;
	}
	if (!v->buf)
		return;
	for (size_t pg = 0; pg < vma_pages(v); pg++)
		m->held -= v->state[pg] != PG_ABSENT;
	uc_mem_unmap(m->uc, v->start, v->end - v->start);
	munmap(v->buf, v->end - v->start);
	free(v->state);
	v->buf = NULL;
	v->state = NULL;
}

bool emumem_can_map(struct emumem *m, uint64_t addr)
{
	struct vma *v = vma_of(m, addr);
	return v && mirrorable(v);
}

bool emumem_access_ok(struct emumem *m, uint64_t addr, uint64_t len,
		      bool write)
{
	uint64_t end = addr + len;
	if (end < addr)
		return false;
	while (addr < end) {
		struct vma *v = vma_of(m, addr);
		if (v && v->own && !write) {
			if (!v->own_mapped && own_map(m, v) < 0)
				return false;
			addr = v->end;
			continue;
		}
		if (!v || !mirrorable(v) ||
		    (write && (v->perms[1] != 'w' || v->perms[2] == 'x')))
			return false;
		if (!v->buf && vma_map(m, v) < 0)
			return false;
		addr = v->end;
	}
	return true;
}

/* Unicorn touched an address it has no region for: the target's VMA is
 * mapped now, or the emulation stops there (the real CPU faults). */
static bool on_unmapped(uc_engine *uc, uc_mem_type type, uint64_t addr,
			int size, int64_t value, void *ctx)
{
	(void)uc; (void)type; (void)size; (void)value;
	struct emumem *m = ctx;
	struct vma *v = vma_of(m, addr);
	if (v && v->own && !v->own_mapped)
		return own_map(m, v) == 0;
	if (!v || !mirrorable(v) || v->buf)
		return false;
	return vma_map(m, v) == 0;
}

/* /proc/PID/maps from its start, into maps_buf; its length. */
static size_t pread_maps(struct emumem *m)
{
	size_t len = 0;
	for (;;) {
		if (len + 4096 + 1 > m->maps_cap) {
			m->maps_cap = m->maps_cap ? 2 * m->maps_cap : 16384;
			m->maps_buf = xreallocarray(m->maps_buf, m->maps_cap, 1);
		}
		ssize_t r = pread(m->maps_fd, m->maps_buf + len,
				  m->maps_cap - len - 1, (off_t)len);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		len += (size_t)r;
	}
	m->maps_buf[len] = 0;
	return len;
}

/* The target's maps, read through a descriptor kept open across windows
 * (an open and a close less per window).  It holds the address space it
 * was opened on: one that reads empty (the target exec'd since; a live
 * process always has mappings) is opened again. */
static char *read_maps(struct emumem *m)
{
	bool fresh = m->maps_fd < 0;
	for (;;) {
		if (m->maps_fd < 0) {
			char path[64];
			snprintf(path, sizeof(path), "/proc/%d/maps",
				 (int)m->pid);
			m->maps_fd = open(path, O_RDONLY | O_CLOEXEC);
			if (m->maps_fd < 0)
				return NULL;
		}
		if (pread_maps(m) || fresh)
			return m->maps_buf;
		close(m->maps_fd);
		m->maps_fd = -1;
		fresh = true;
	}
}

/* Append the piece [start, end) of kernel VMA KV, not mapped yet. */
static struct vma *add_piece(struct vma *out, size_t *n, size_t *cap,
			     const struct vma *kv, uint64_t start, uint64_t end)
{
	if (*n == *cap) {
		*cap = *cap ? 2 * *cap : 64;
		out = xreallocarray(out, *cap, sizeof(*out));
	}
	struct vma *p = &out[(*n)++];
	*p = *kv;
	p->start = start;
	p->end = end;
	if (kv->inode)
		p->offset = kv->offset + (start - kv->start);
	p->buf = NULL;
	p->state = NULL;
	p->own_mapped = false;
	return out;
}

/* Which of our own_vvar slots a mapping named NAME would be: 0 [vvar],
 * 1 [vvar_vclock], 2 neither. */
static unsigned vvar_slot(const char *name)
{
	return !strcmp(name, "[vvar]") ? 0 :
	       !strcmp(name, "[vvar_vclock]") ? 1 : 2;
}

/* The kernel's time data for the vDSO ([vvar]: the clocks' bases and
 * their sequence counter; [vvar_vclock]: the hypervisor's clock page) is
 * the same in every process of one time namespace, and updated in place
 * by the kernel; the target's cannot be read (process_vm_readv refuses a
 * VM_PFNMAP mapping), so each vDSO read of it was a real step (ten per
 * clock_gettime).  Where the target shares our time namespace, its
 * regions are mapped in Unicorn over ours, read-only (lockstep keeps the
 * real steps: the clock moves between the emulator's read and the
 * CPU's).  False with nothing shared (another namespace, no [vvar]). */
bool emumem_share_vvar(struct emumem *m)
{
	char a[64], b[64], path[64];
	ssize_t na = readlink("/proc/self/ns/time", a, sizeof(a));
	snprintf(path, sizeof(path), "/proc/%d/ns/time", (int)m->pid);
	ssize_t nb = readlink(path, b, sizeof(b));
	if (na <= 0 || na != nb || memcmp(a, b, (size_t)na))
		return false;
	FILE *f = fopen("/proc/self/maps", "re");
	if (!f)
		return false;
	char line[512];
	bool any = false;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long lo, hi;
		int pos = 0;
		if (sscanf(line, "%llx-%llx %*s %*s %*s %*s %n", &lo, &hi,
			   &pos) < 2 || !pos)
			continue;
		char *name = line + pos;
		name[strcspn(name, "\n")] = 0;
		unsigned k = vvar_slot(name);
		if (k < 2) {
			m->own_vvar[k].addr = (uintptr_t)lo;
			m->own_vvar[k].len = (size_t)(hi - lo);
			any = true;
		}
	}
	fclose(f);
	return any;
}

int emumem_refresh_maps(struct emumem *m)
{
	char *text = read_maps(m);
	if (!text)
		return -errno;
	/* Nothing mapped or unmapped since (most windows, most system
	 * calls): nothing to do. */
	size_t len = strlen(text);
	if (m->maps_last && len == m->maps_last_len &&
	    !memcmp(text, m->maps_last, len))
		return 0;
	m->maps_last = xreallocarray(m->maps_last, len + 1, 1);
	memcpy(m->maps_last, text, len + 1);
	m->maps_last_len = len;
	struct vma *nv = NULL;
	size_t nn = 0, ncap = 0;
	for (char *line = text; *line; ) {
		char *eol = strchr(line, '\n');
		if (eol)
			*eol = 0;
		struct vma v;
		memset(&v, 0, sizeof(v));
		unsigned long long s, e, off, ino;
		int pos = 0;
		if (sscanf(line, "%llx-%llx %4s %llx %*s %llu %n", &s, &e,
			   v.perms, &off, &ino, &pos) >= 5) {
			v.start = s;
			v.end = e;
			v.offset = off;
			v.inode = ino;
			const char *name = line + pos;
			v.special = !strcmp(name, "[vvar]") ||
				    !strcmp(name, "[vsyscall]") ||
				    !strncmp(name, "[vvar", 5);
			unsigned k = vvar_slot(name);
			if (k < 2 && m->own_vvar[k].addr &&
			    m->own_vvar[k].len == e - s &&
			    v.perms[0] == 'r' && v.perms[1] != 'w')
				v.own = m->own_vvar[k].addr;
			if (nn == ncap) {
				ncap = ncap ? 2 * ncap : 64;
				nv = xreallocarray(nv, ncap, sizeof(*nv));
			}
			nv[nn++] = v;
		}
		if (!eol)
			break;
		line = eol + 1;
	}
	/* Keep the mirror of every old entry that lies inside a new VMA of
	 * the same mapping (permissions, file, offset): a VMA that grew (the
	 * stack downwards, the heap with brk) keeps its pages, and only the
	 * part that is new becomes an entry of its own.  Our entries are
	 * thus pieces of the kernel's VMAs. */
	struct vma *out = NULL;
	size_t no = 0, ocap = 0;
	size_t j = 0;
	bool *kept = xcalloc(m->n ? m->n : 1, sizeof(*kept));
	for (size_t k = 0; k < nn; k++) {
		const struct vma *kv = &nv[k];
		uint64_t at = kv->start;
		while (j < m->n && m->v[j].end <= kv->start)
			j++;
		for (size_t i = j; i < m->n && m->v[i].start < kv->end; i++) {
			const struct vma *o = &m->v[i];
			if (o->start < kv->start || o->end > kv->end ||
			    memcmp(o->perms, kv->perms, 4) || o->inode != kv->inode ||
			    (kv->inode && o->offset - kv->offset != o->start - kv->start) ||
			    o->special != kv->special || o->own != kv->own)
				continue;
			if (at < o->start)
				out = add_piece(out, &no, &ocap, kv, at, o->start);
			if (no == ocap) {
				ocap = ocap ? 2 * ocap : 64;
				out = xreallocarray(out, ocap, sizeof(*out));
			}
			out[no++] = *o;
			kept[i] = true;
			at = o->end;
		}
		if (at < kv->end)
			out = add_piece(out, &no, &ocap, kv, at, kv->end);
	}
	for (size_t i = 0; i < m->n; i++)
		if (!kept[i])
			vma_unmap(m, &m->v[i]);
	free(kept);
	free(nv);
	free(m->v);
	m->v = out;
	m->n = no;
	m->cap = ocap;
	return 0;
}

struct emumem *emumem_new(uc_engine *uc, pid_t pid)
{
	struct emumem *m = xcalloc(1, sizeof(*m));
	m->uc = uc;
	m->pid = pid;
	m->maps_fd = -1;
	m->orig = mmap(NULL, (size_t)DIRTY_LOG << PG_SHIFT, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m->orig == MAP_FAILED) {
		free(m);
		return NULL;
	}
	if (uc_hook_add(uc, &m->unmapped_hook, UC_HOOK_MEM_UNMAPPED,
			(void *)on_unmapped, m, 1, 0) != UC_ERR_OK) {
		munmap(m->orig, (size_t)DIRTY_LOG << PG_SHIFT);
		free(m);
		return NULL;
	}
	return m;
}

void emumem_set_budget(struct emumem *m, uint64_t bytes)
{
	m->budget = bytes >> PG_SHIFT;
	if (m->budget && !m->ring)
		m->ring = xcalloc(RING, sizeof(*m->ring));
}

void emumem_free(struct emumem *m)
{
	if (!m)
		return;
	if (segv_installed && served == NULL) {
		sigaction(SIGSEGV, &old_segv, NULL);
		segv_installed = false;
	}
	free(m->ring);
	free(m->scratch);
	free(m->maps_last);
	for (size_t i = 0; i < m->n; i++)
		vma_unmap(m, &m->v[i]);
	free(m->v);
	free(m->maps_buf);
	if (m->maps_fd >= 0)
		close(m->maps_fd);
	munmap(m->orig, (size_t)DIRTY_LOG << PG_SHIFT);
	free(m);
}

void emumem_set_int3s(struct emumem *m, const uint64_t *addr,
		      const uint8_t *orig, unsigned n)
{
	m->n_bp = n > 4 ? 4 : n;
	for (unsigned i = 0; i < m->n_bp; i++) {
		m->bp_addr[i] = addr[i];
		m->bp_orig[i] = orig[i];
	}
}

/* Our int3s in [addr, addr + len) of BUF: put in (ON) or take out. */
static void patch_int3s(struct emumem *m, uint64_t addr, uint8_t *buf,
			size_t len, bool on)
{
	for (unsigned i = 0; i < m->n_bp; i++)
		if (m->bp_addr[i] >= addr && m->bp_addr[i] < addr + len)
			buf[m->bp_addr[i] - addr] = on ? 0xcc : m->bp_orig[i];
}

/* Write pages [first, last) of V back (all dirty); with J, only record
 * what would be written in J's write-back. */
static int write_run(struct emumem *m, struct vma *v, size_t first,
		     size_t last, struct journal *j)
{
	uint8_t *p = v->buf + (first << PG_SHIFT);
	size_t len = (last - first) << PG_SHIFT;
	uint64_t addr = v->start + ((uint64_t)first << PG_SHIFT);
	patch_int3s(m, addr, p, len, true);
	if (j) {
		journal_wb_add(j, JREC_MEM, 0, addr, p, len);
		patch_int3s(m, addr, p, len, false);
		return 0;
	}
	struct iovec local = { p, len }, remote = { (void *)(uintptr_t)addr, len };
	ssize_t w = process_vm_writev(m->pid, &local, 1, &remote, 1, 0);
	int err = errno;
	patch_int3s(m, addr, p, len, false);
	if (w != (ssize_t)len) {
		errno = w < 0 ? err : EIO;
		perror_msg("cannot write the emulator's memory back to "
			   "0x%" PRIx64, addr);
		return -errno;
	}
	mprotect(p, len, PROT_READ);
	memset(v->state + first, PG_PRESENT, last - first);
	m->writes += last - first;
	return 0;
}

/* Write back the bytes of page PG of V that differ from ORIG, its
 * content before the emulator wrote to it: another thread or the kernel
 * may have written the rest of the page meanwhile.  With J, only record
 * them. */
static int write_diff(struct emumem *m, struct vma *v, size_t pg,
		      const uint8_t *orig, struct journal *j)
{
	uint8_t *p = v->buf + (pg << PG_SHIFT);
	uint64_t addr = v->start + ((uint64_t)pg << PG_SHIFT);
	for (unsigned i = 0; i < m->n_bp; i++)
		if (m->bp_addr[i] >= addr && m->bp_addr[i] < addr + PG)
			return write_run(m, v, pg, pg + 1, j);	/* keeps our int3 */
	struct iovec local[64], remote[64];
	unsigned n = 0;
	ssize_t want = 0;
	for (size_t at = 0; at < PG; ) {
		uint64_t a, b;
		if (!(at & 7)) {
			/* equal words skipped eight bytes at a time */
			memcpy(&a, p + at, 8);
			memcpy(&b, orig + at, 8);
			if (a == b) {
				at += 8;
				continue;
			}
		}
		if (p[at] == orig[at]) {
			at++;
			continue;
		}
		size_t end = at + 1;
		/* a run, gaps of under 16 equal bytes included */
		for (size_t same = 0; end < PG && same < 16; end++)
			same = p[end] == orig[end] ? same + 1 : 0;
		while (end > at + 1 && p[end - 1] == orig[end - 1])
			end--;
		if (n == 64)
			return write_run(m, v, pg, pg + 1, j);
		local[n] = (struct iovec){ p + at, end - at };
		remote[n] = (struct iovec){ (void *)(uintptr_t)(addr + at), end - at };
		want += (ssize_t)(end - at);
		n++;
		at = end;
	}
	if (j) {
		for (unsigned k = 0; k < n; k++)
			journal_wb_add(j, JREC_MEM, 0,
				       (uint64_t)(uintptr_t)remote[k].iov_base,
				       local[k].iov_base, local[k].iov_len);
		return 0;
	}
	if (n && process_vm_writev(m->pid, local, n, remote, n, 0) != want) {
		perror_msg("cannot write the emulator's memory back to "
			   "0x%" PRIx64, addr);
		return -EIO;
	}
	mprotect(p, PG, PROT_READ);
	v->state[pg] = PG_PRESENT;
	m->writes++;
	return 0;
}

/* Write every dirty page back, or with J only record it (nothing
 * changes). */
static int writeback(struct emumem *m, struct journal *j)
{
	int rc = 0;
	if (!m->dirty_overflow) {
		for (unsigned i = 0; i < m->n_dirty; i++) {
			struct vma *v = &m->v[m->dirty[i].vma];
			size_t pg = m->dirty[i].pg;
			if (v->state[pg] == PG_DIRTY &&
			    write_diff(m, v, pg, m->orig +
				       ((size_t)i << PG_SHIFT), j) < 0)
				rc = -1;
		}
		if (!j)
			m->n_dirty = 0;
		return rc;
	}
	for (size_t i = 0; i < m->n; i++) {
		struct vma *v = &m->v[i];
		if (!v->buf || v->perms[1] != 'w')
			continue;
		size_t n = vma_pages(v);
		for (size_t pg = 0; pg < n; pg++) {
			if (v->state[pg] != PG_DIRTY)
				continue;
			size_t end = pg + 1;
			while (end < n && v->state[end] == PG_DIRTY)
				end++;
			if (write_run(m, v, pg, end, j) < 0)
				rc = -1;
			pg = end;
		}
	}
	if (!j) {
		m->n_dirty = 0;
		m->dirty_overflow = false;
	}
	return rc;
}

int emumem_writeback(struct emumem *m)
{
	return writeback(m, NULL);
}

void emumem_record(struct emumem *m, struct journal *j)
{
	writeback(m, j);
}

/* Pages [first, last) of V are absent again, their memory given back. */
static void forget_pages(struct emumem *m, struct vma *v, size_t first,
			 size_t last)
{
	size_t pg = first;
	while (pg < last) {
		if (v->state[pg] == PG_ABSENT) {
			pg++;
			continue;
		}
		size_t end = pg + 1;
		while (end < last && v->state[end] != PG_ABSENT)
			end++;
		mprotect(v->buf + (pg << PG_SHIFT), (end - pg) << PG_SHIFT,
			 PROT_NONE);
		madvise(v->buf + (pg << PG_SHIFT), (end - pg) << PG_SHIFT,
			MADV_DONTNEED);
		memset(v->state + pg, PG_ABSENT, end - pg);
		m->held -= end - pg;
		pg = end;
	}
}

/* Page PG of V forgotten, and Unicorn's translations of code there. */
static void forget_code_page(struct emumem *m, struct vma *v, size_t pg)
{
	forget_pages(m, v, pg, pg + 1);
	if (v->perms[2] == 'x') {
		uint64_t addr = v->start + ((uint64_t)pg << PG_SHIFT);
		uc_ctl_remove_cache(m->uc, addr, addr + PG);
	}
}

void emumem_discard(struct emumem *m)
{
	m->n_settled = 0;
	if (m->dirty_overflow) {
		emumem_invalidate(m, false);
	} else {
		for (unsigned i = 0; i < m->n_dirty; i++) {
			struct vma *v = &m->v[m->dirty[i].vma];
			size_t pg = m->dirty[i].pg;
			if (v->state[pg] == PG_DIRTY)
				forget_pages(m, v, pg, pg + 1);
		}
	}
	m->n_dirty = 0;
	m->dirty_overflow = false;
}

/* The N pages of P (REVALIDATE at most) read from the target in one call
 * and compared with ours, our int3s hidden: SAME[k] where P[k] is still
 * what the target has. */
static void compare_pages(struct emumem *m, const struct page_ref *p,
			  size_t n, bool *same)
{
	struct iovec remote[REVALIDATE];
	for (size_t k = 0; k < n; k++)
		remote[k] = (struct iovec){ (void *)(uintptr_t)(p[k].v->start +
				((uint64_t)p[k].pg << PG_SHIFT)), PG };
	if (!m->scratch)
		m->scratch = xmalloc((size_t)REVALIDATE << PG_SHIFT);
	struct iovec local = { m->scratch, n << PG_SHIFT };
	ssize_t got = process_vm_readv(m->pid, &local, 1, remote, n, 0);
	size_t whole = got > 0 ? (size_t)got >> PG_SHIFT : 0;
	for (size_t k = 0; k < n; k++) {
		uint8_t *fresh = m->scratch + (k << PG_SHIFT);
		same[k] = false;
		if (k >= whole)
			continue;
		patch_int3s(m, (uint64_t)(uintptr_t)remote[k].iov_base, fresh,
			    PG, false);
		same[k] = !memcmp(fresh, p[k].v->buf + (p[k].pg << PG_SHIFT), PG);
	}
}

static bool settled(const struct emumem *m, const struct vma *v, size_t pg)
{
	for (unsigned k = 0; k < m->n_settled; k++)
		if (m->settled[k].pg == pg && m->settled[k].v == v)
			return true;
	return false;
}

void emumem_invalidate_range(struct emumem *m, uint64_t addr, uint64_t len)
{
	uint64_t end = addr + (len ? len : 1);
	struct page_ref pages[REVALIDATE];
	bool same[REVALIDATE];
	size_t n = 0;
	for (struct vma *v = vma_of(m, addr); v && v < m->v + m->n &&
	     v->start < end; v++) {
		if (!v->buf)
			continue;
		uint64_t s = addr > v->start ? addr : v->start;
		uint64_t e = end < v->end ? end : v->end;
		size_t first = (s - v->start) >> PG_SHIFT;
		size_t last = (e - v->start + PG - 1) >> PG_SHIFT;
		for (size_t pg = first; pg < last; pg++) {
			if (v->state[pg] == PG_ABSENT || settled(m, v, pg))
				continue;
			if (v->state[pg] == PG_DIRTY || n == REVALIDATE) {
				forget_pages(m, v, pg, pg + 1);
				continue;
			}
			pages[n++] = (struct page_ref){ v, pg };
		}
		/* a JIT's code, written by the real CPU: Unicorn's
		 * translation of it goes too (tests/emulate/jit.sh, avx) */
		if (v->perms[2] == 'x')
			uc_ctl_remove_cache(m->uc, s, e);
	}
	if (!n)
		return;
	/* The pages held: kept where the step did not change them (the
	 * pages it only read, lockstep's every load), forgotten where it
	 * did. */
	compare_pages(m, pages, n, same);
	for (size_t k = 0; k < n; k++)
		if (!same[k])
			forget_pages(m, pages[k].v, pages[k].pg, pages[k].pg + 1);
}

void emumem_invalidate(struct emumem *m, bool all)
{
	for (size_t i = 0; i < m->n; i++) {
		struct vma *v = &m->v[i];
		if (!v->buf || (!all && v->perms[1] != 'w'))
			continue;
		forget_pages(m, v, 0, vma_pages(v));
		if (all && v->perms[2] == 'x')
			uc_ctl_remove_cache(m->uc, v->start, v->end);
	}
}

void emumem_revalidate(struct emumem *m, bool all)
{
	struct page_ref pages[REVALIDATE];
	bool same[REVALIDATE];
	size_t n = 0;
	bool over = false;
	for (size_t i = 0; i < m->n && !over; i++) {
		struct vma *v = &m->v[i];
		if (!v->buf || (!all && v->perms[1] != 'w'))
			continue;
		for (size_t pg = 0; pg < vma_pages(v) && !over; pg++) {
			if (v->state[pg] == PG_ABSENT)
				continue;
			if (v->state[pg] != PG_PRESENT || n == REVALIDATE) {
				over = true;
				break;
			}
			pages[n++] = (struct page_ref){ v, pg };
		}
	}
	if (over || !n) {
		emumem_invalidate(m, all);
		return;
	}
	compare_pages(m, pages, n, same);
	for (size_t k = 0; k < n; k++)
		if (!same[k])		/* else still what the target has */
			forget_code_page(m, pages[k].v, pages[k].pg);
}

void emumem_settle(struct emumem *m)
{
	bool same[REVALIDATE];
	size_t n = 0;
	m->n_settled = 0;
	for (unsigned i = 0; i < m->n_dirty && !m->dirty_overflow; i++) {
		struct vma *v = &m->v[m->dirty[i].vma];
		size_t pg = m->dirty[i].pg;
		if (v->state[pg] != PG_DIRTY)
			continue;
		if (n == REVALIDATE) {
			n = 0;		/* more than we compare: forgotten */
			break;
		}
		m->settled[n++] = (struct page_ref){ v, pg };
	}
	if (!n) {
		emumem_discard(m);
		return;
	}
	compare_pages(m, m->settled, n, same);
	unsigned kept = 0;
	for (size_t k = 0; k < n; k++) {
		struct page_ref r = m->settled[k];
		if (same[k] &&
		    !mprotect(r.v->buf + (r.pg << PG_SHIFT), PG, PROT_READ)) {
			r.v->state[r.pg] = PG_PRESENT;
			m->settled[kept++] = r;
		} else {
			forget_code_page(m, r.v, r.pg);
		}
	}
	m->n_settled = kept;
	m->n_dirty = 0;
}

void emumem_stats(const struct emumem *m, uint64_t *reads, uint64_t *writes,
		  uint64_t *unreadable, uint64_t *dropped)
{
	*dropped = m->dropped;
	*reads = m->reads;
	*writes = m->writes;
	*unreadable = m->unreadable;
}
