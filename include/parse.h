/* Option values that both front ends parse the same way. */
#ifndef CT_PARSE_H
#define CT_PARSE_H

#include <stdbool.h>

/* The words a yes/no option takes. */
enum parse_bool_words {
	PARSE_YES_NO,		/* yes, no: cg_annotate's words */
	PARSE_YES_NO_ON_OFF,	/* also on, off: the tracer's --aslr=on|off */
};

/* Sets *OUT from V; returns 0, or -1 when V is not one of WORDS. */
int parse_bool(const char *v, enum parse_bool_words words, bool *out);
/* parse_bool, or error_usage_and_die naming OPT ("--annotate"). */
bool parse_bool_or_die(const char *opt, const char *v,
		       enum parse_bool_words words);

#include <stddef.h>

/* The optimal string alignment distance between A (LA bytes) and B (LB):
 * Levenshtein plus the transposition of two adjacent characters as one
 * edit, the commonest typo.  SIZE_MAX when A is longer than 127 bytes.
 * For "did you mean" hints. */
size_t parse_edit_distance(const char *a, size_t la, const char *b,
			   size_t lb);

#include <stdint.h>

/* A size: digits, then k, M or G (KiB, MiB, GiB), LEN bytes of S ("32k",
 * "1M", "32768"), at most 2^40 before the suffix.  0, or -1. */
int parse_size(const char *s, size_t len, uint64_t *out);

#endif
