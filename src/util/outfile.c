/* Profiles written to a temporary file and renamed into place; see
 * include/outfile.h for the promise.  Why each step:
 * - same directory: rename() is atomic only within one file system;
 * - ".BASE.XXXXXX": a dot file, so `cg_merge cachegrind.out.*` never picks
 *   up a temporary file of a run still writing;
 * - O_EXCL (mkostemp) with O_NOFOLLOW: in a shared directory (/tmp) another
 *   user's symlink or file at the temporary name is never opened;
 * - O_CLOEXEC: a launched target must not inherit our output files;
 * - fsync before rename: after a crash, NAME is the old file or the whole
 *   new one, never an empty file renamed over the old (delayed allocation);
 * - rename over NAME: a symlink at NAME is replaced, not written through;
 * - the mode is set before the rename to what open(O_CREAT, 0666) would
 *   give under the umask (issue 26: --html's page was 0600, the
 *   annotator's 0644): the file is readable while it is only the
 *   temporary one, but its contents are not there yet. */
#include "outfile.h"

#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "error.h"

struct outfile {
	char *name;	/* final name, as given */
	char *tmp;	/* temporary file's path; NULL for stdout */
	FILE *f;	/* the stream written to */
	bool direct;	/* NAME is a FIFO or a device: written in place */
};

/* ".BASE.XXXXXX" in NAME's directory; BASE cut so that the temporary
 * name fits NAME_MAX when NAME does. */
static char *temp_template(const char *name)
{
	const char *slash = strrchr(name, '/');
	const char *base = slash ? slash + 1 : name;
	int dirlen = slash ? (int)(slash - name + 1) : 0;
	int baselen = (int)strlen(base);

	if (baselen > NAME_MAX - 8)
		baselen = NAME_MAX - 8;
	return xasprintf("%.*s.%.*s.XXXXXX", dirlen, name, baselen, base);
}

struct outfile *outfile_open(const char *name)
{
	struct outfile *of;
	struct stat st;
	int fd, saved;

	if (!name || !*name) {
		errno = ENOENT;
		return NULL;
	}
	of = xcalloc(1, sizeof(*of));
	of->name = xstrdup(name);
	if (!strcmp(name, "-")) {
		of->f = stdout;
		return of;
	}
	/* A directory would only be refused by rename(), after the run:
	 * say so now.  "dir/" has no file name at all. */
	if (name[strlen(name) - 1] == '/' ||
	    (lstat(name, &st) == 0 && S_ISDIR(st.st_mode))) {
		errno = EISDIR;
		goto fail;
	}
	/* A FIFO, /dev/null, a terminal: nothing to rename over (and a
	 * rename would replace the device): write to it in place. */
	if (stat(name, &st) == 0 && !S_ISREG(st.st_mode)) {
		fd = open(name, O_WRONLY | O_CLOEXEC | O_NOCTTY);
		of->f = fd < 0 ? NULL : fdopen(fd, "w");
		if (!of->f) {
			saved = errno;
			if (fd >= 0)
				close(fd);
			errno = saved;
			goto fail;
		}
		of->direct = true;
		return of;
	}
	of->tmp = temp_template(name);
	/* mkostemp adds O_RDWR|O_CREAT|O_EXCL and mode 0600 */
	fd = mkostemp(of->tmp, O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		goto fail;
	of->f = fdopen(fd, "w");
	if (!of->f) {
		saved = errno;
		close(fd);
		unlink(of->tmp);
		errno = saved;
		goto fail;
	}
	return of;
fail:
	saved = errno;
	free(of->tmp);
	free(of->name);
	free(of);
	errno = saved;
	return NULL;
}

int outfile_check(const char *name)
{
	struct stat st;
	if (!name || !*name) {
		errno = ENOENT;
		return -1;
	}
	if (!strcmp(name, "-"))
		return 0;
	if (name[strlen(name) - 1] == '/' ||
	    (stat(name, &st) == 0 && S_ISDIR(st.st_mode))) {
		errno = EISDIR;
		return -1;
	}
	if (stat(name, &st) == 0 && !S_ISREG(st.st_mode))
		return access(name, W_OK);	/* written in place */
	/* Create the temporary file and remove it: access() says yes to
	 * root for /proc and for a read-only file system (issue 26: -o
	 * /proc/x.out failed only after the whole run). */
	char *tmp = temp_template(name);
	int fd = mkostemp(tmp, O_CLOEXEC | O_NOFOLLOW), saved = errno;
	if (fd >= 0) {
		close(fd);
		unlink(tmp);
	}
	free(tmp);
	errno = saved;
	return fd < 0 ? -1 : 0;
}

/* The mode open(O_CREAT, 0666) gives a new file: the umask's. */
static mode_t created_mode(void)
{
	mode_t mask = umask(0);

	umask(mask);
	return 0666 & ~mask;
}

FILE *outfile_stream(const struct outfile *of)
{
	return of->f;
}

const char *outfile_name(const struct outfile *of)
{
	return of->name;
}

int outfile_is_stdout(const struct outfile *of)
{
	return of->f == stdout;
}

static void outfile_free(struct outfile *of)
{
	free(of->tmp);
	free(of->name);
	free(of);
}

/* 0 when F's contents are all out without an error; else -1, errno the
 * first error seen (EIO when the stream's error flag was set by a write
 * whose errno is gone). */
static int flush_checked(FILE *f)
{
	int had_error = ferror(f);

	errno = 0;
	if (fflush(f) != 0)
		return -1;
	if (had_error) {
		errno = EIO;
		return -1;
	}
	return 0;
}

int outfile_commit(struct outfile *of)
{
	int err = 0;

	if (outfile_is_stdout(of)) {
		if (flush_checked(of->f) < 0)
			err = errno ? errno : EIO;
		outfile_free(of);
		errno = err;
		return err ? -1 : 0;
	}
	if (flush_checked(of->f) < 0)
		err = errno ? errno : EIO;
	else if (!of->direct && fchmod(fileno(of->f), created_mode()) < 0)
		err = errno;
	else if (!of->direct && fsync(fileno(of->f)) < 0)
		err = errno;
	/* fclose in every case (it frees the stream); its error counts only
	 * when nothing failed before: NFS reports write errors here. */
	if (fclose(of->f) != 0 && !err)
		err = errno ? errno : EIO;
	if (!err && !of->direct && rename(of->tmp, of->name) < 0)
		err = errno;
	if (err && !of->direct)
		unlink(of->tmp);
	outfile_free(of);
	errno = err;
	return err ? -1 : 0;
}

void outfile_abort(struct outfile *of)
{
	int saved = errno;

	if (!of)
		return;
	if (!outfile_is_stdout(of)) {
		fclose(of->f);
		if (!of->direct)
			unlink(of->tmp);
	}
	outfile_free(of);
	errno = saved;
}
