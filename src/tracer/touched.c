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

/* Read the present bits of the regions from FD. */
static bool read_bits(struct touched_map *m, int fd)
{
	enum { CHUNK = 4096 };

	if (!m->buf)
		m->buf = xmalloc(CHUNK * sizeof(*m->buf));
	memset(m->untouched, 0, m->words * sizeof(*m->untouched));
	for (size_t i = 0; i < m->n; i++) {
		const struct touched_region *r = &m->r[i];
		uint64_t pages = (r->end - r->start) >> PAGE_SHIFT_4K;
		for (uint64_t done = 0; done < pages; ) {
			size_t want = pages - done < CHUNK ? pages - done : CHUNK;
			off_t at = (off_t)(((r->start >> PAGE_SHIFT_4K) + done) *
					   sizeof(uint64_t));
			ssize_t got = pread(fd, m->buf, want * sizeof(uint64_t),
					    at);
			if (got <= 0)
				return false;
			size_t k = (size_t)got / sizeof(uint64_t);
			for (size_t j = 0; j < k; j++) {
				if (m->buf[j] & (PM_PRESENT | PM_SWAPPED))
					continue;
				size_t b = r->bit0 + done + j;
				m->untouched[b / 64] |= 1ull << (b % 64);
			}
			done += k;
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
	}
	if (m->failed)
		return NULL;
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
	free(m);
	tr->smp.touched = NULL;
}
