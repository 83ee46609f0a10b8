/* libFuzzer target for the profile parser: any input must either parse or
 * give a NAME:LINE: error, never crash, hang or leak.  When it parses, the
 * profile is written back out and read again, which must succeed. */
#include <stdio.h>
#include <stdlib.h>

#include "profile.h"

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
	struct profile p;
	struct prof_error err;

	prof_init(&p);
	int rc = prof_read_mem(&p, (const char *)data, size, "fuzz", 1, size & 1,
			       &err);
	if (rc) {
		if (!err.msg[0])
			abort();
		prof_free(&p);
		return 0;
	}
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
