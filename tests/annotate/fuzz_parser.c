/* libFuzzer target for the readers: any input must either parse or give a
 * NAME:LINE: error, never crash, hang or leak.  When it parses as a
 * profile (Cachegrind or Callgrind format), the profile is written back
 * out and read again, which must succeed, and its call trees and flame
 * graph are built; as folded stacks, likewise the trees. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "calltree.h"
#include "profile.h"

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);

static void trees(struct ctree *t, const char *blame_name)
{
	FILE *null = fopen("/dev/null", "w");
	struct svg_opts so = { "fuzz", "ev", false, 1200 };

	if (!null)
		abort();
	ctree_print(null, t, "tree", "ev", 0.1, true);
	if (ctree_write_svg(null, t, &so))
		abort();
	if (blame_name) {
		struct ctree r;
		ctree_init(&r, blame_name);
		if (!ctree_reverse(&r, t, blame_name)) {
			so.inverted = true;
			ctree_print(null, &r, "blame", "ev", 0, false);
			ctree_write_svg(null, &r, &so);
		}
		ctree_free(&r);
	}
	fclose(null);
}

static void graph_trees(const struct profile *p)
{
	struct cgraph g;
	FILE *null = fopen("/dev/null", "w");
	struct svg_opts so = { "fuzz", "ev", false, 1200 };

	if (!null)
		abort();
	if (!cgraph_build(&g, p) && p->n_events) {
		struct ctree t;
		ctree_init(&t, "all");
		ctree_from_graph(&t, &g, p->n_events - 1, NULL, 0.001);
		ctree_print(null, &t, "tree", "ev", 0, true);
		ctree_write_svg(null, &t, &so);
		ctree_free(&t);
		if (p->n_fn) {
			const char *f = p->fns.str[p->fn[0].name];
			ctree_init(&t, f);
			if (!ctree_from_graph(&t, &g, 0, f, 0.001)) {
				so.inverted = true;
				ctree_write_svg(null, &t, &so);
			}
			ctree_free(&t);
		}
	}
	cgraph_free(&g);
	fclose(null);
}

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
	struct profile p;
	struct prof_error err;
	struct ctree t;

	ctree_init(&t, "all");
	err.msg[0] = '\0';
	if (ctree_read_folded(&t, (const char *)data, size, "fuzz", &err)) {
		if (!err.msg[0])
			abort();
	} else {
		ctree_finish_folded(&t);
		trees(&t, t.n_nodes > 1 ? t.n[1].name : NULL);
	}
	ctree_free(&t);

	prof_init(&p);
	err.msg[0] = '\0';
	int rc = prof_read_mem(&p, (const char *)data, size, "fuzz", 1, size & 1,
			       &err);
	if (rc) {
		if (!err.msg[0])
			abort();
		prof_free(&p);
		return 0;
	}
	graph_trees(&p);
	char *buf = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&buf, &len);
	int64_t tot[PROF_MAX_EVENTS];
	if (!out)
		abort();
	if (prof_totals(&p, tot) == 0) {
		if (prof_write(&p, out))
			abort();
		fclose(out);
		struct profile q;
		prof_init(&q);
		if (prof_read_mem(&q, buf, len, "rewritten", 1, true, &err)) {
			fprintf(stderr, "rewritten profile rejected: %s:%llu: %s\n",
				err.name, err.line, err.msg);
			abort();
		}
		prof_free(&q);
	} else {
		fclose(out);
	}
	free(buf);
	prof_free(&p);
	return 0;
}
