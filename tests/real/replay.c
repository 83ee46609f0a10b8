/* Replay a memory-access trace in Lackey's format (valgrind --tool=lackey
 * --trace-mem=yes, or cachetrace --trace-mem=FILE) through our Cachegrind
 * model and print the totals, so that replay.sh can require them to equal
 * Cachegrind's (or our own profile's) exactly: I1mr, ILmr, D1mr, DLmr,
 * D1mw, DLmw are deterministic functions of the stream, and model bugs
 * cannot hide in the oracle's 3% miss tolerance.
 *
 *   replay [--clamp16] I1 D1 LL TRACE
 * I1, D1, LL: "size,assoc,line".  Lines: "I  addr,size" (fetch),
 * " L addr,size", " S ...", " M ..." (load, store, modify); anything else
 * (valgrind's ==pid== lines) is skipped.  --clamp16: data accesses larger
 * than 32 bytes count as 16: Cachegrind clamps the accesses of VEX's dirty
 * helpers (fxsave, xsave...: the only ones above 32 bytes under valgrind,
 * which has no AVX-512) to 16 bytes, Lackey prints their real size.
 * Plain loads and stores of 32 bytes are simulated whole by both (measured:
 * strmem's AVX2 accesses give Cachegrind's D1mw only unclamped).
 * Prints "Ir I1mr ILmr Dr D1mr DLmr Dw D1mw DLmw" with their values. */
#include "model.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
	struct model_config cfg = { .cache_sim = true, .branch_sim = false };
	struct cache_model *cm;
	struct branch_model *bm;
	char err[256], note[256], line[256];
	bool clamp = false;
	int a = 1;

	if (argc > 1 && strcmp(argv[1], "--clamp16") == 0) {
		clamp = true;
		a++;
	}
	if (argc - a != 4) {
		fprintf(stderr, "usage: replay [--clamp16] I1 D1 LL TRACE\n");
		return 2;
	}
	if (cache_geom_parse(argv[a], &cfg.i1, err, sizeof(err)) < 0 ||
	    cache_geom_parse(argv[a + 1], &cfg.d1, err, sizeof(err)) < 0 ||
	    cache_geom_parse(argv[a + 2], &cfg.ll, err, sizeof(err)) < 0 ||
	    model_create(NULL, &cfg, &cm, &bm, err, sizeof(err), note, sizeof(note)) < 0) {
		fprintf(stderr, "replay: %s\n", err);
		return 2;
	}
	FILE *f = fopen(argv[a + 3], "r");
	if (!f) {
		perror(argv[a + 3]);
		return 2;
	}
	uint64_t *row = calloc(cm->n_events, sizeof(*row));
	if (!row)
		return 2;
	unsigned long long addr;
	unsigned int size;
	char k;
	while (fgets(line, sizeof(line), f)) {
		const char *p = line;
		if (*p == ' ')
			p++;
		if (sscanf(p, "%c %llx,%u", &k, &addr, &size) != 3 || !size)
			continue;
		if (k == 'I') {
			cache_fetch(cm, addr, size, row);
			continue;
		}
		struct mem_access acc = { .addr = addr, .size = size };
		if (clamp && acc.size > 32)
			acc.size = 16;
		if (k == 'L')
			acc.kind = ACC_READ;
		else if (k == 'S')
			acc.kind = ACC_WRITE;
		else if (k == 'M')
			acc.kind = ACC_MODIFY;
		else
			continue;
		cache_access(cm, &acc, row);
	}
	fclose(f);
	for (unsigned int i = 0; i < cm->n_events; i++)
		printf("%s%s", i ? " " : "", cm->event_names[i]);
	printf("\n");
	for (unsigned int i = 0; i < cm->n_events; i++)
		printf("%s%" PRIu64, i ? " " : "", row[i]);
	printf("\n");
	free(row);
	cache_destroy(cm);
	return 0;
}
