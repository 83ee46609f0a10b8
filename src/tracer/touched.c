/* Which of the target's memory it had never touched, when a sample begins
 * (issue 31).
 *
 * A sample's first reference to a line meets the LL state earlier samples
 * left, not the one the native run between them would have left: its hit
 * or miss is a guess (cachegrind.c's DLu).  One kind is no guess: a line
 * in an anonymous private page the kernel had not yet given the target
 * (not present in /proc/PID/pagemap, not swapped) was never referenced,
 * so its first reference misses in the whole run too, at every level.
 * That holds for the whole-run model, which sees no kernel work (the
 * kernel's zeroing of a fresh page does not warm it); it fails only where
 * the target gave a page back (munmap, MADV_DONTNEED) and takes the same
 * address again, whose lines a whole run may still hold: rare, and such a
 * page is only counted untouched if it is absent when the sample begins.
 *
 * So at each sample's start the present bits of the target's anonymous
 * private writable mappings are read (8 bytes of pagemap a page; the
 * present bit needs no privilege).  File mappings are left out: a fault
 * maps file pages around the one touched, so presence says nothing of a
 * reference.  At most TOUCHED_MAX_PAGES pages are read a sample (16 MB of
 * pagemap); the rest counts as touched, as does everything when pagemap
 * cannot be read (CACHETRACE_HOST=pagemap=no forces that): DLuf then
 * undercounts, and the lower bound stays a lower bound. */
#include "tracer.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "error.h"
#include "hostenv.h"

#define TOUCHED_MAX_PAGES (1u << 21)
#define PAGE_SHIFT_4K 12
#define PM_PRESENT (1ull << 63)
#define PM_SWAPPED (1ull << 62)
#define SWAP(a, b) do { __typeof__(a) t_ = (a); (a) = (b); (b) = t_; } while (0)

struct touched_region {
	uint64_t start, end;	/* page aligned */
	size_t bit0;		/* its first page's bit in untouched */
};

struct touched_map {
	struct sample_mem base;
	struct touched_region *r;
	size_t n, cap;
	uint64_t *untouched;	/* a bit a page: never touched */
	size_t words;
	struct touched_map *prev;	/* the last sample's (its base unused) */
	uint64_t *buf;		/* pagemap entries, read in chunks */
	bool failed;		/* noted once */
};

static bool map_untouched(const struct sample_mem *mem, uint64_t addr)
{
	const struct touched_map *m = (const struct touched_map *)mem;
	size_t lo = 0, hi = m->n;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		const struct touched_region *r = &m->r[mid];
		if (addr < r->start)
			hi = mid;
		else if (addr >= r->end)
			lo = mid + 1;
		else {
			size_t b = r->bit0 +
				   ((addr - r->start) >> PAGE_SHIFT_4K);
			return m->untouched[b / 64] >> (b % 64) & 1;
		}
	}
	return false;
}

/* A line of /proc/PID/maps: an anonymous private writable mapping (the
 * heap, a stack, malloc's mmaps, .bss past the file)?  The kernel's own
 * ([vvar], [vdso], [vsyscall]) are not. */
static bool anon_private(const char *line, uint64_t *start, uint64_t *end)
{
	char perms[8];
	unsigned long long s, e, inode;
	int path = 0;

	if (sscanf(line, "%llx-%llx %7s %*s %*s %llu %n", &s, &e, perms,
		   &inode, &path) < 4 || inode != 0)
		return false;
	if (perms[1] != 'w' || perms[3] != 'p')
		return false;
	const char *p = line + path;
	if (*p && *p != '\n' && strncmp(p, "[heap]", 6) &&
	    strncmp(p, "[stack", 6) && strncmp(p, "[anon:", 6))
		return false;
	*start = s;
	*end = e;
	return true;
}

/* The first bit from FROM to TO (exclusive) that is SET, or TO. */
static size_t bit_next(const uint64_t *bits, size_t from, size_t to, bool set)
{
	while (from < to) {
		uint64_t w = bits[from / 64] ^ (set ? 0 : ~0ull);
		w &= ~0ull << (from % 64);
		if (w) {
			size_t b = from / 64 * 64 + (size_t)__builtin_ctzll(w);
			return b < to ? b : to;
		}
		from = (from / 64 + 1) * 64;
	}
	return to;
}

/* Pages FROM to TO of region R: their present bits from FD. */
static bool read_span(struct touched_map *m, int fd,
		      const struct touched_region *r, uint64_t from, uint64_t to)
{
	enum { CHUNK = 4096 };

	if (!m->buf)
		m->buf = xmalloc(CHUNK * sizeof(*m->buf));
	while (from < to) {
		size_t want = to - from < CHUNK ? to - from : CHUNK;
		off_t at = (off_t)(((r->start >> PAGE_SHIFT_4K) + from) *
				   sizeof(uint64_t));
		ssize_t got = pread(fd, m->buf, want * sizeof(uint64_t), at);
		if (got <= 0)
			return false;
		size_t k = (size_t)got / sizeof(uint64_t);
		for (size_t j = 0; j < k; j++) {
			if (m->buf[j] & (PM_PRESENT | PM_SWAPPED))
				continue;
			size_t b = r->bit0 + from + j;
			m->untouched[b / 64] |= 1ull << (b % 64);
		}
		from += k;
	}
	return true;
}

/* The present bits of the regions from FD.  A page touched at the last
 * sample counts as touched still, unread (the kernel's walk of the page
 * tables costs most: 2% of a sampled xz run when every page was read):
 * where a region is the one the last sample saw, only its pages untouched
 * then are read again, in spans that may take in runs of touched pages
 * shorter than GAP.  (A page given back since then stays touched: DLuf a
 * lower count, never a higher one.) */
static bool read_bits(struct touched_map *m, int fd)
{
	enum { GAP = 256 };
	const struct touched_map *o = m->prev;
	size_t j = 0;

	memset(m->untouched, 0, m->words * sizeof(*m->untouched));
	for (size_t i = 0; i < m->n; i++) {
		const struct touched_region *r = &m->r[i];
		uint64_t pages = (r->end - r->start) >> PAGE_SHIFT_4K;
		while (j < o->n && o->r[j].start < r->start)
			j++;
		if (j == o->n || o->r[j].start != r->start ||
		    o->r[j].end != r->end) {
			if (!read_span(m, fd, r, 0, pages))
				return false;
			continue;
		}
		size_t b0 = o->r[j].bit0, end = b0 + pages;
		size_t s = bit_next(o->untouched, b0, end, true);
		while (s < end) {
			size_t e = bit_next(o->untouched, s, end, false);
			size_t n = bit_next(o->untouched, e, end, true);
			while (n < end && n - e < GAP) {
				e = bit_next(o->untouched, n, end, false);
				n = bit_next(o->untouched, e, end, true);
			}
			if (!read_span(m, fd, r, s - b0, e - b0))
				return false;
			s = n;
		}
	}
	return true;
}

/* PID's untouched memory now; NULL (with a one-line note, once) when it
 * cannot be read. */
const struct sample_mem *touched_snapshot(struct tracer *tr, pid_t pid)
{
	struct touched_map *m = tr->smp.touched;
	char path[64], line[512];

	if (!m) {
		m = tr->smp.touched = xcalloc(1, sizeof(*m));
		m->base.untouched = map_untouched;
		m->prev = xcalloc(1, sizeof(*m->prev));
	}
	if (m->failed)
		return NULL;
	/* the last sample's regions and bits aside; theirs to fill */
	struct touched_map *o = m->prev;
	SWAP(m->r, o->r);
	SWAP(m->n, o->n);
	SWAP(m->cap, o->cap);
	SWAP(m->untouched, o->untouched);
	SWAP(m->words, o->words);
	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	FILE *f = fopen(path, "re");
	snprintf(path, sizeof(path), "/proc/%d/pagemap", pid);
	int fd = host_forced("pagemap", "no") ? (errno = ENOSYS, -1) :
		 open(path, O_RDONLY | O_CLOEXEC);
	bool ok = f && fd >= 0;
	size_t pages = 0;

	m->n = 0;
	while (ok && fgets(line, sizeof(line), f)) {
		uint64_t s, e;
		if (!strchr(line, '\n')) {	/* a long path: not anonymous */
			int c;
			while ((c = getc(f)) != EOF && c != '\n')
				;
			continue;
		}
		if (!anon_private(line, &s, &e))
			continue;
		uint64_t np = (e - s) >> PAGE_SHIFT_4K;
		if (pages + np > TOUCHED_MAX_PAGES)
			continue;	/* counted touched */
		if (m->n == m->cap) {
			m->cap = m->cap ? 2 * m->cap : 64;
			m->r = xreallocarray(m->r, m->cap, sizeof(*m->r));
		}
		m->r[m->n++] = (struct touched_region){ s, e, pages };
		pages += np;
	}
	size_t words = (pages + 63) / 64;
	if (ok && words > m->words) {
		free(m->untouched);
		m->untouched = xcalloc(words, sizeof(*m->untouched));
		m->words = words;
	}
	if (ok)
		ok = read_bits(m, fd);
	if (f)
		fclose(f);
	if (fd >= 0)
		close(fd);
	if (ok)
		return &m->base;
	if (!tr->opt.quiet)
		error_msg("note: the target's page map cannot be read (%s): "
			  "its untouched memory is not told apart (DLuf 0)",
			  errno ? strerror(errno) : "short read");
	m->failed = true;
	return NULL;
}

void touched_free(struct tracer *tr)
{
	struct touched_map *m = tr->smp.touched;
	if (!m)
		return;
	free(m->r);
	free(m->untouched);
	free(m->buf);
	free(m->prev->r);
	free(m->prev->untouched);
	free(m->prev);
	free(m);
	tr->smp.touched = NULL;
}
