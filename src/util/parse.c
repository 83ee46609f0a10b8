#include "parse.h"

#include <stdint.h>
#include <string.h>

#include "error.h"

int parse_bool(const char *v, enum parse_bool_words words, bool *out)
{
	bool on_off = words == PARSE_YES_NO_ON_OFF;
	if (!strcmp(v, "yes") || (on_off && !strcmp(v, "on")))
		*out = true;
	else if (!strcmp(v, "no") || (on_off && !strcmp(v, "off")))
		*out = false;
	else
		return -1;
	return 0;
}

bool parse_bool_or_die(const char *opt, const char *v,
		       enum parse_bool_words words)
{
	bool b;
	/* The message names yes and no even where on and off work: the
	 * tracer has always said it that way. */
	if (parse_bool(v, words, &b) < 0)
		error_usage_and_die("%s: expected yes or no, not '%s'", opt, v);
	return b;
}

/* Optimal string alignment distance: Levenshtein plus the transposition
 * of two adjacent characters as one edit, the commonest typo ("wrok" is
 * one edit from "work", two from "brk" and "ftok"). */
size_t parse_edit_distance(const char *a, size_t la, const char *b,
			   size_t lb)
{
	size_t r2[128], r1[128], r0[128];	/* rows j-2, j-1, j */

	if (la >= sizeof(r0) / sizeof(r0[0]))
		return SIZE_MAX;
	for (size_t i = 0; i <= la; i++)
		r1[i] = i;
	for (size_t j = 1; j <= lb; j++) {
		r0[0] = j;
		for (size_t i = 1; i <= la; i++) {
			size_t best = r1[i - 1] + (a[i - 1] != b[j - 1]);

			if (r1[i] + 1 < best)
				best = r1[i] + 1;
			if (r0[i - 1] + 1 < best)
				best = r0[i - 1] + 1;
			if (i > 1 && j > 1 && a[i - 1] == b[j - 2] &&
			    a[i - 2] == b[j - 1] && r2[i - 2] + 1 < best)
				best = r2[i - 2] + 1;
			r0[i] = best;
		}
		memcpy(r2, r1, (la + 1) * sizeof(r1[0]));
		memcpy(r1, r0, (la + 1) * sizeof(r0[0]));
	}
	return r1[la];
}

int parse_size(const char *s, size_t len, uint64_t *out)
{
	uint64_t v = 0;
	size_t i = 0;

	if (!len || s[0] < '0' || s[0] > '9')
		return -1;
	for (; i < len && s[i] >= '0' && s[i] <= '9'; i++) {
		v = v * 10 + (uint64_t)(s[i] - '0');
		if (v > (1ULL << 40))
			return -1;
	}
	if (i < len) {
		switch (s[i]) {
		case 'k': case 'K': v <<= 10; break;
		case 'm': case 'M': v <<= 20; break;
		case 'g': case 'G': v <<= 30; break;
		default: return -1;
		}
		i++;
	}
	if (i != len)
		return -1;
	*out = v;
	return 0;
}
