#include "procmaps.h"

#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "error.h"

bool maps_open(struct maps_iter *it, pid_t pid)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	it->f = fopen(path, "re");
	return it->f != NULL;
}

bool maps_next(struct maps_iter *it, struct maps_entry *e)
{
	/* "lo-hi perms offset dev inode   name", by hand: sscanf was 0.5%
	 * of a sampled run that reads it twice a sample (touched.c) */
	while (fgets(it->line, sizeof(it->line), it->f)) {
		char *p = it->line, *q;
		it->line[strcspn(it->line, "\n")] = '\0';
		e->lo = strtoull(p, &q, 16);
		if (q == p || *q != '-')
			continue;
		e->hi = strtoull(p = q + 1, &q, 16);
		if (q == p || *q != ' ' || strlen(q + 1) < 5 || q[5] != ' ')
			continue;
		memcpy(e->perms, q + 1, 4);
		e->perms[4] = '\0';
		e->offset = strtoull(p = q + 6, &q, 16);
		if (q == p)
			continue;
		for (int field = 0; field < 2; field++) {	/* dev, inode */
			q += strspn(q, " ");
			q += strcspn(q, " ");
		}
		e->name = q + strspn(q, " ");
		return true;
	}
	return false;
}

void maps_close(struct maps_iter *it)
{
	if (it->f)
		fclose(it->f);
	it->f = NULL;
}

bool maps_fixed_code(const struct maps_entry *e)
{
	if (e->perms[2] != 'x' || e->perms[1] == 'w' || e->perms[3] == 's')
		return false;
	return (e->name[0] == '/' && strncmp(e->name, "/memfd:", 7)) ||
	       !strcmp(e->name, "[vdso]") || !strcmp(e->name, "[vsyscall]");
}

static void codemap_read(struct codemap *m, pid_t pid)
{
	struct maps_iter it;
	struct maps_entry e;
	m->stale = false;
	if (!++m->gen)
		m->gen = 1;
	if (m->pid != pid) {
		if (m->pid && m->pagemap >= 0)
			close(m->pagemap);
		char path[64];
		snprintf(path, sizeof(path), "/proc/%d/pagemap", (int)pid);
		m->pagemap = open(path, O_RDONLY | O_CLOEXEC);
		m->pid = pid;
	}
	for (size_t i = 0; i < m->n; i++)
		free(m->r[i].path);
	m->n = 0;
	if (!maps_open(&it, pid))
		return;
	while (maps_next(&it, &e)) {
		if (m->n == m->cap) {
			m->cap = m->cap ? 2 * m->cap : 64;
			m->r = xreallocarray(m->r, m->cap, sizeof(*m->r));
		}
		bool fixed = maps_fixed_code(&e);
		m->r[m->n++] = (struct codemap_range){
			e.lo, e.hi, e.offset,
			fixed && e.name[0] == '/' ? xstrdup(e.name) : NULL,
			fixed };
	}
	maps_close(&it);
}

/* Does the process's own copy of PAGE, in range R, hold the file's bytes
 * (its int3s restored, or a debugger's before)?  True too when that
 * cannot be told (the file replaced: its bytes cannot be had; reads
 * refused): as before copies were looked at. */
static bool same_as_file(const struct codemap *m,
			 const struct codemap_range *r, uint64_t page)
{
	static uint8_t mine[4096], file[4096];
	uint64_t at = page << 12;
	struct iovec local = { mine, sizeof(mine) };
	struct iovec remote = { (void *)(uintptr_t)at, sizeof(mine) };
	if (process_vm_readv(m->pid, &local, 1, &remote, 1, 0) !=
	    (ssize_t)sizeof(mine))
		return true;
	int fd = open(r->path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;	/* " (deleted)": not the bytes it has */
	ssize_t got = pread(fd, file, sizeof(file),
			    (off_t)(r->offset + (at - r->lo)));
	close(fd);
	/* past the file's end the mapping reads zeros */
	if (got >= 0 && (size_t)got < sizeof(file))
		memset(file + got, 0, sizeof(file) - (size_t)got);
	return got >= 0 && !memcmp(mine, file, sizeof(mine));
}

/* The range of M holding PC (they are in address order), or NULL. */
static const struct codemap_range *codemap_find(const struct codemap *m,
						uint64_t pc)
{
	size_t lo = 0, hi = m->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (pc < m->r[mid].lo)
			hi = mid;
		else if (pc >= m->r[mid].hi)
			lo = mid + 1;
		else
			return &m->r[mid];
	}
	return NULL;
}

/* The pages codemap_ours was told of (a few: the int3s' pages) */
#define OURS 64
static uint64_t ours[OURS];
static unsigned n_ours;

void codemap_ours(uint64_t addr, size_t len)
{
	for (uint64_t pg = addr >> 12; pg <= (addr + (len ? len - 1 : 0)) >> 12;
	     pg++) {
		bool have = false;
		for (unsigned i = 0; i < n_ours && i < OURS; i++)
			have |= ours[i] == pg + 1;
		if (!have)
			ours[n_ours++ % OURS] = pg + 1;
	}
}

static bool ours_page(uint64_t page)
{
	for (unsigned i = 0; i < n_ours && i < OURS; i++)
		if (ours[i] == page + 1)
			return true;
	return false;
}

/* Is PAGE (a page number) still the file's, not a copy the process
 * wrote?  Bit 61 of its pagemap entry: a file page (or shared); or a
 * copy that only the tracer's int3s made. */
static bool file_page(struct codemap *m, const struct codemap_range *r,
		      uint64_t page)
{
	unsigned k = (unsigned)page % CODEMAP_PAGES;
	if (m->page[k].gen == m->gen && m->page[k].page == page)
		return m->page[k].file;
	uint64_t pm;
	/* present: bit 61 says; swapped: anonymous; neither: never read,
	 * the file's when it is */
	bool file = m->pagemap < 0 ||
		    pread(m->pagemap, &pm, 8, (off_t)(page * 8)) != 8 ||
		    (pm & 1ull << 63 ? (pm >> 61) & 1 : !(pm & 1ull << 62)) ||
		    ours_page(page) || same_as_file(m, r, page);
	m->page[k].page = page;
	m->page[k].gen = m->gen;
	m->page[k].file = file;
	return file;
}

bool codemap_fixed(struct codemap *m, pid_t pid, uint64_t pc)
{
	const struct codemap_range *r = m->stale || m->pid != pid ? NULL :
					codemap_find(m, pc);
	if (!r) {
		codemap_read(m, pid);
		r = codemap_find(m, pc);
	}
	return r && r->fixed && (!r->path || file_page(m, r, pc >> 12));
}

void codemap_free(struct codemap *m)
{
	for (size_t i = 0; i < m->n; i++)
		free(m->r[i].path);
	free(m->r);
	if (m->pid && m->pagemap >= 0)
		close(m->pagemap);
	*m = (struct codemap){ 0 };
}
