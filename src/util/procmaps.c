#include "procmaps.h"

#include <inttypes.h>
#include <string.h>

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
