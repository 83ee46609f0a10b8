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
 * kernel's zeroing of a fresh page does not warm it), but for memory the
 * target gave back (munmap, MADV_DONTNEED) and maps again, whose lines a
 * whole run may still hold.  So a page counts as untouched only if no look
 * ever saw it present: one at each sample's start and one at its end (the
 * pages the sample itself touched), and a page keeps what the looks saw
 * while a mapping holds its address (the heap may shrink and grow again
 * between two looks).  What is still missed: memory touched and given
 * back between two looks, and mapped again at an address no mapping held
 * at the last look.
 *
 * The present bits come from /proc/PID/pagemap, 8 bytes a page (the bit
 * needs no privilege), read for the target's anonymous private writable
 * mappings only: a fault maps file pages around the one touched, so
 * presence there says nothing of a reference.  At most TOUCHED_MAX_PAGES
 * pages are looked at (16 MB of page map); the rest counts as touched, as
 * does everything when the page map cannot be read
 * (CACHETRACE_HOST=pagemap=no forces that): DLuf then undercounts, and the
 * lower bound stays a lower bound. */
#include "tracer.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "error.h"
#include "hostenv.h"
#include "procmaps.h"

#define TOUCHED_MAX_PAGES (1u << 21)
#define PAGE_SHIFT_4K 12
#define PM_PRESENT (1ull << 63)
#define PM_SWAPPED (1ull << 62)

struct touched_region {
	uint64_t start, end;	/* page aligned */
	size_t bit0;		/* its first page's bit in untouched */
};

/* What a look found: the regions, and a bit a page of them. */
struct touched_look {
	struct touched_region *r;
	size_t n, cap;
	uint64_t *untouched;	/* a bit a page: never seen present */
	size_t words;
};

struct touched_map {
	struct sample_mem base;
	struct touched_look now, last;	/* this look's, the last one's */
	uint64_t *buf;		/* pagemap entries, read in chunks */
	size_t maps;		/* mappings at the last look */
	uint64_t looks, look_ns;	/* looks, and their time */
	bool failed;		/* noted once */
};

static bool map_untouched(const struct sample_mem *mem, uint64_t addr)
{
	const struct touched_map *m = (const struct touched_map *)mem;
	size_t lo = 0, hi = m->now.n;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		const struct touched_region *r = &m->now.r[mid];
		if (addr < r->start)
			hi = mid;
		else if (addr >= r->end)
			lo = mid + 1;
		else {
			size_t b = r->bit0 +
				   ((addr - r->start) >> PAGE_SHIFT_4K);
			return m->now.untouched[b / 64] >> (b % 64) & 1;
		}
	}
	return false;
}

/* An anonymous private writable mapping (the heap, a stack, malloc's
 * mmaps, .bss past the file)?  The kernel's own ([vvar], [vdso],
 * [vsyscall]) and every file's (a memfd's too) are not. */
static bool anon_private(const struct maps_entry *e)
{
	return e->perms[1] == 'w' && e->perms[3] == 'p' &&
	       (!e->name[0] || !strcmp(e->name, "[heap]") ||
		!strncmp(e->name, "[stack", 6) ||
		!strncmp(e->name, "[anon:", 6));
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

/* Pages FROM to TO of region R: those present in FD's page map (or
 * swapped) are touched. */
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
			if (!(m->buf[j] & (PM_PRESENT | PM_SWAPPED)))
				continue;
			size_t b = r->bit0 + from + j;
			m->now.untouched[b / 64] &= ~(1ull << (b % 64));
		}
		from += k;
	}
	return true;
}

/* TAKE (1 to 64) bits of BITS from POS, as the low bits of a word. */
static uint64_t bits_get(const uint64_t *bits, size_t pos, size_t take)
{
	uint64_t v = bits[pos / 64] >> (pos % 64);
	if (pos % 64 + take > 64)
		v |= bits[pos / 64 + 1] << (64 - pos % 64);
	return take == 64 ? v : v & ((1ull << take) - 1);
}

/* Bits D to D + N of DST: ANDed with bits S to S + N of SRC (FILL 1s
 * first where FILL). */
static void bits_and(uint64_t *dst, size_t d, const uint64_t *src, size_t s,
		     size_t n, bool fill)
{
	for (size_t k = 0; k < n; ) {
		size_t at = d + k, take = 64 - at % 64;
		if (take > n - k)
			take = n - k;
		uint64_t mask = (take == 64 ? ~0ull : (1ull << take) - 1) <<
				(at % 64);
		uint64_t v = src ? bits_get(src, s + k, take) << (at % 64) :
			     ~0ull;
		if (fill)
			dst[at / 64] |= mask;
		dst[at / 64] &= ~mask | v;
		k += take;
	}
}

/* What the last look (M->last) saw, kept: a page seen present there, at
 * the same address in a mapping still there, counts as touched still, even
 * if given back since; every other page of the regions may be untouched. */
static void inherit(struct touched_map *m)
{
	const struct touched_look *o = &m->last;
	struct touched_look *l = &m->now;
	size_t j = 0;

	for (size_t i = 0; i < l->n; i++) {
		const struct touched_region *r = &l->r[i];
		bits_and(l->untouched, r->bit0, NULL, 0,
			 (r->end - r->start) >> PAGE_SHIFT_4K, true);
		while (j < o->n && o->r[j].end <= r->start)
			j++;
		for (size_t k = j; k < o->n && o->r[k].start < r->end; k++) {
			uint64_t lo = o->r[k].start > r->start ?
				      o->r[k].start : r->start;
			uint64_t hi = o->r[k].end < r->end ?
				      o->r[k].end : r->end;
			bits_and(l->untouched,
				 r->bit0 + ((lo - r->start) >> PAGE_SHIFT_4K),
				 o->untouched,
				 o->r[k].bit0 + ((lo - o->r[k].start) >>
						 PAGE_SHIFT_4K),
				 (hi - lo) >> PAGE_SHIFT_4K, false);
		}
	}
}

/* The pages of the regions that may be untouched: read from FD, in spans
 * that may take in runs of others shorter than GAP (the kernel's walk of
 * the page tables costs most: 2% of a sampled xz run when every page was
 * read at each sample). */
static bool read_bits(struct touched_map *m, int fd)
{
	enum { GAP = 256 };
	const struct touched_look *l = &m->now;
	const uint64_t *u = l->untouched;	/* read_span clears bits */

	for (size_t i = 0; i < l->n; i++) {
		const struct touched_region *r = &l->r[i];
		size_t b0 = r->bit0;
		size_t end = b0 + ((r->end - r->start) >> PAGE_SHIFT_4K);
		size_t s = bit_next(u, b0, end, true);
		while (s < end) {
			size_t e = bit_next(u, s, end, false);
			size_t n = bit_next(u, e, end, true);
			while (n < end && n - e < GAP) {
				e = bit_next(u, n, end, false);
				n = bit_next(u, e, end, true);
			}
			if (!read_span(m, fd, r, s - b0, e - b0))
				return false;
			s = n;
		}
	}
	return true;
}

static uint64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* A look at a sample's start: the mappings, then their pages. */
static bool look_begin(struct touched_map *m, pid_t pid, int fd)
{
	struct maps_iter it;
	struct maps_entry e;
	size_t pages = 0;

	if (!maps_open(&it, pid))
		return false;
	/* the last look's regions and bits aside; theirs to fill */
	struct touched_look *l = &m->now, spare = m->last;
	m->last = m->now;
	m->now = spare;
	l->n = 0;
	m->maps = 0;
	while (maps_next(&it, &e)) {
		m->maps++;
		if (!anon_private(&e))
			continue;
		uint64_t np = (e.hi - e.lo) >> PAGE_SHIFT_4K;
		if (pages + np > TOUCHED_MAX_PAGES)
			continue;	/* counted touched */
		if (l->n == l->cap) {
			l->cap = l->cap ? 2 * l->cap : 64;
			l->r = xreallocarray(l->r, l->cap, sizeof(*l->r));
		}
		l->r[l->n++] = (struct touched_region){ e.lo, e.hi, pages };
		pages += np;
	}
	maps_close(&it);
	size_t words = (pages + 63) / 64;
	if (words > l->words) {
		free(l->untouched);
		l->untouched = xcalloc(words, sizeof(*l->untouched));
		l->words = words;
	}
	inherit(m);
	return read_bits(m, fd);
}

/* PID's untouched memory now, from a look at it and the earlier ones;
 * NULL (with a one-line note, once, and for good) when it cannot be read,
 * or when reading it has cost more than a twentieth of the samples' time
 * (each look reads /proc/PID/maps: 8 ms for 20,000 mappings here).
 * AT_END: the look at a sample's end, at the pages of the mappings its
 * start saw (the next start sees the others); it may find the thread gone
 * (nothing said: the next look reads again what this one left unread). */
const struct sample_mem *touched_snapshot(struct tracer *tr, pid_t pid,
					  bool at_end)
{
	struct touched_map *m = tr->smp.touched;
	char path[64];

	if (!m) {
		m = tr->smp.touched = xcalloc(1, sizeof(*m));
		m->base.untouched = map_untouched;
	}
	if (m->failed)
		return NULL;
	if (!at_end && m->looks >= 8 &&
	    (double)m->look_ns > 0.05e9 * tr->eng.t_stepping) {
		if (!tr->opt.quiet)
			error_msg("note: reading the target's page map took "
				  "%.1f%% of the samples' time (%zu mappings): "
				  "from here its untouched memory is not told "
				  "apart (DLuf counts the first %" PRIu64
				  " samples' only)", 100 * (double)m->look_ns /
				  1e9 / tr->eng.t_stepping, m->maps,
				  tr->smp.n - 1);
		m->failed = true;
		return NULL;
	}
	uint64_t t0 = mono_ns();
	snprintf(path, sizeof(path), "/proc/%d/pagemap", pid);
	int fd = host_forced("pagemap", "no") ? (errno = ENOSYS, -1) :
		 open(path, O_RDONLY | O_CLOEXEC);
	bool ok = fd >= 0 && (at_end ? read_bits(m, fd) :
			      look_begin(m, pid, fd));
	if (fd >= 0)
		close(fd);
	m->looks++;
	m->look_ns += mono_ns() - t0;
	if (ok)
		return &m->base;
	if (at_end)
		return NULL;
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
	free(m->now.r);
	free(m->now.untouched);
	free(m->buf);
	free(m->last.r);
	free(m->last.untouched);
	free(m);
	tr->smp.touched = NULL;
}
