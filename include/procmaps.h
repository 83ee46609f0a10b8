/* /proc/PID/maps, a line at a time: the start and end of each mapping,
 * its permissions ("r-xp") and its name ("" for an anonymous one).
 *
 *	struct maps_iter it;
 *	struct maps_entry m;
 *	if (maps_open(&it, pid)) {
 *		while (maps_next(&it, &m))
 *			...;
 *		maps_close(&it);
 *	} */
#ifndef CT_PROCMAPS_H
#define CT_PROCMAPS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

struct maps_entry {
	uint64_t lo, hi;
	uint64_t offset;	/* in its file */
	char perms[5];
	const char *name;	/* valid until the next maps_next */
};

struct maps_iter {
	FILE *f;
	char line[512];
};

/* False when the file cannot be opened (the process is gone). */
bool maps_open(struct maps_iter *it, pid_t pid);
/* The next mapping into E; false at the end. */
bool maps_next(struct maps_iter *it, struct maps_entry *e);
void maps_close(struct maps_iter *it);

/* Code that cannot change but by a system call that maps, unmaps or
 * protects it (which a tracer sees in a window): an executable mapping,
 * not writable, private, of a file (not a memfd, whose contents its fd
 * writes), or the vDSO.  A JIT's code (anonymous, or a double mapping's
 * shared one) is not. */
bool maps_fixed_code(const struct maps_entry *e);

/* A process's mappings, each fixed code or not, read again when asked
 * about an address in none of them or when STALE (a system call that
 * maps, unmaps or protects memory ran).  A page of a file's mapping that
 * the process wrote (a copy of its own, /proc/PID/pagemap says) is fixed
 * only while it holds the file's bytes: code patched where it was loaded
 * is not; a page an earlier debugger's int3 copied, restored since, is. */
#define CODEMAP_PAGES 256
struct codemap {
	struct codemap_range {
		uint64_t lo, hi;
		uint64_t offset;	/* in its file */
		char *path;		/* a file's (else NULL): its pages
					 * looked at */
		bool fixed;
	} *r;
	size_t n, cap;
	bool stale;
	pid_t pid;
	int pagemap;			/* its fd, or -1 (unreadable: every
					 * page of a fixed mapping is) */
	uint32_t gen;			/* of the reads, for PAGE */
	struct {			/* the pages looked at lately */
		uint64_t page;
		uint32_t gen;
		bool file;
	} page[CODEMAP_PAGES];
};
/* The tracer wrote [ADDR, ADDR + LEN) of the text itself (an int3, its
 * removal): its pages are still the file's code, though the process has
 * its own copy of them now (a start event's page was stepped whole). */
void codemap_ours(uint64_t addr, size_t len);
/* Is the code at PC in PID fixed (maps_fixed_code, its page the file's)? */
bool codemap_fixed(struct codemap *m, pid_t pid, uint64_t pc);
void codemap_free(struct codemap *m);

#endif
