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

#endif
