/* Output files that are never truncated, never followed through a link,
 * never left half written (issue 10, items 8 and 11).
 *
 * outfile_open(NAME) creates a temporary file next to NAME, in the same
 * directory (so rename() is atomic): ".BASE.XXXXXX", O_CREAT|O_EXCL|
 * O_NOFOLLOW|O_CLOEXEC, mode 0600 until the commit gives it the
 * umask's.  NAME itself is not touched until outfile_commit() has
 * written, flushed, synced and closed the temporary file without an
 * error and renamed it over NAME: a
 * symbolic link at NAME is replaced, not followed; a failure leaves NAME
 * as it was and no temporary file behind.  "-" is stdout, which commit
 * only flushes and checks (EPIPE, ENOSPC... are errors); so is a NAME that
 * exists and is not a regular file (a FIFO, /dev/null, /dev/full, a
 * terminal): it is opened and written in place, nothing renamed over it.
 *
 *	struct outfile *of = outfile_open(name);
 *	if (!of) ...errno;  write to outfile_stream(of);
 *	if (outfile_commit(of) < 0) ...errno (the message names outfile_name)
 *
 * Or outfile_abort(of) to give up (e.g. the run failed): NAME untouched. */
#ifndef CT_OUTFILE_H
#define CT_OUTFILE_H

#include <stdio.h>

struct outfile;

/* Open NAME for writing as above.  NULL with errno set: the directory is
 * missing or not writable (ENOENT, EACCES...), NAME is a directory
 * (EISDIR), NAME is empty (ENOENT). */
struct outfile *outfile_open(const char *name);

/* Would outfile_open(NAME) work?  Checked before a long run, so that a
 * bad name is an error before anything is traced: 0, or -1 with errno
 * (EISDIR, ENOENT, EACCES, EROFS...).  The temporary file is created and
 * removed (access() says yes to root where nothing can be created:
 * /proc); NAME is not touched. */
int outfile_check(const char *name);

/* The stream to write the contents to (stdout for "-"). */
FILE *outfile_stream(const struct outfile *of);

/* NAME as given to outfile_open, for messages. */
const char *outfile_name(const struct outfile *of);

/* True when OF writes to stdout ("-"). */
int outfile_is_stdout(const struct outfile *of);

/* Finish: check the stream's error flag, flush, fsync, close, rename onto
 * NAME.  Frees OF in every case.  0, or -1 with errno set (EIO when the
 * stream failed earlier without saying why); on failure the temporary
 * file is removed and NAME is unchanged. */
int outfile_commit(struct outfile *of);

/* Give up: close and remove the temporary file, NAME unchanged (for "-":
 * nothing is undone, what was written is out).  Frees OF; NULL is allowed;
 * keeps errno, so it can be called on an error path before reporting. */
void outfile_abort(struct outfile *of);

#endif
