/* A fake /sys/devices/system/cpu/cpu0/cache for the geometry tests: one
 * file of one index directory at a time. */
#ifndef CT_TESTS_FAKESYS_H
#define CT_TESTS_FAKESYS_H

#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

/* DIR/indexIDX/NAME holds VAL (and a newline), as sysfs shows it. */
static inline void fakesys_put(const char *dir, unsigned idx,
			       const char *name, const char *val)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/index%u", dir, idx);
	mkdir(path, 0700);
	snprintf(path, sizeof(path), "%s/index%u/%s", dir, idx, name);
	f = fopen(path, "w");
	if (!f) {
		perror(path);
		exit(1);
	}
	fprintf(f, "%s\n", val);
	fclose(f);
}

#endif
