/* Instructions counted by mnemonic, for the summary's lines of what an
 * engine ran on the real CPU most (engine.h: struct insn_tally). */
#include "engine.h"

#include <capstone/capstone.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"

#define TALLY_EXTRA 32		/* names without a Capstone id */

struct tally_count {
	char name[16];		/* the mnemonic */
	uint64_t n;
};

struct insn_tally {
	/* By Capstone id, then by name for what has none (the fallback
	 * decoder's VEX and EVEX instructions); the last slot takes what
	 * does not fit. */
	struct tally_count c[X86_INS_ENDING + TALLY_EXTRA];
	unsigned n_extra;
};

struct insn_tally *insn_tally_new(void)
{
	return xcalloc(1, sizeof(struct insn_tally));
}

void insn_tally_free(struct insn_tally *t)
{
	free(t);
}

void insn_tally_add(struct insn_tally *t, const struct insn *in)
{
	char name[sizeof(t->c[0].name)];
	size_t len = strcspn(in->text, " ");
	if (len >= sizeof(name))
		len = sizeof(name) - 1;
	memcpy(name, in->text, len);
	name[len] = '\0';
	struct tally_count *c = NULL;
	if (in->id > 0 && in->id < X86_INS_ENDING) {
		c = &t->c[in->id];
	} else {
		struct tally_count *x = t->c + X86_INS_ENDING;
		for (unsigned i = 0; i < t->n_extra && !c; i++)
			if (!strcmp(x[i].name, name))
				c = &x[i];
		if (!c && t->n_extra < TALLY_EXTRA)
			c = &x[t->n_extra++];
		if (!c) {
			c = &x[TALLY_EXTRA - 1];
			snprintf(name, sizeof(name), "(more)");
		}
	}
	if (!c->n || in->id == 0)
		memcpy(c->name, name, sizeof(name));
	c->n++;
}

void insn_tally_print(const struct insn_tally *t, FILE *f, const char *prefix,
		      const char *title)
{
	/* The five largest counts. */
	unsigned top[5], n_top = 0;
	for (unsigned i = 0; i < X86_INS_ENDING + t->n_extra; i++) {
		uint64_t c = t->c[i].n;
		if (!c)
			continue;
		unsigned k = n_top;
		if (k == 5) {
			if (t->c[top[4]].n >= c)
				continue;
			k = 4;
		} else {
			n_top++;
		}
		for (; k > 0 && t->c[top[k - 1]].n < c; k--)
			top[k] = top[k - 1];
		top[k] = i;
	}
	if (!n_top)
		return;
	fprintf(f, "%s%s:", prefix, title);
	for (unsigned i = 0; i < n_top; i++)
		fprintf(f, "%s %s %" PRIu64, i ? "," : "", t->c[top[i]].name,
			t->c[top[i]].n);
	fputc('\n', f);
}
