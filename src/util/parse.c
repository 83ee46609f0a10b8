#include "parse.h"

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
