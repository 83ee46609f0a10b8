#include "procmaps.h"

#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
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
	while (fgets(it->line, sizeof(it->line), it->f)) {
		int name_at = 0;
		if (sscanf(it->line, "%" SCNx64 "-%" SCNx64
			   " %4s %*s %*s %*s %n", &e->lo, &e->hi, e->perms,
			   &name_at) < 3)
			continue;
		e->name = name_at ? it->line + name_at : "";
		it->line[strcspn(it->line, "\n")] = '\0';
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
	m->n = 0;
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
	if (!maps_open(&it, pid))
		return;
	while (maps_next(&it, &e)) {
		if (m->n == m->cap) {
			m->cap = m->cap ? 2 * m->cap : 64;
			m->r = xreallocarray(m->r, m->cap, sizeof(*m->r));
		}
		m->r[m->n++] = (struct codemap_range){
			e.lo, e.hi, maps_fixed_code(&e), e.name[0] == '/' };
	}
	maps_close(&it);
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
static bool file_page(struct codemap *m, uint64_t page)
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
		    ours_page(page);
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
	return r && r->fixed && (!r->file || file_page(m, pc >> 12));
}

void codemap_free(struct codemap *m)
{
	free(m->r);
	if (m->pid && m->pagemap >= 0)
		close(m->pagemap);
	*m = (struct codemap){ 0 };
}
