/* src/report/outfile.c: profiles through a temporary file and rename().
 *
 * Each case is what a plain fopen(NAME, "w") gets wrong, checked on a real
 * file system: NAME not truncated before the commit nor after a failed
 * one, mode 0600, close-on-exec, a symlink at NAME replaced and its target
 * untouched, no temporary file left behind, and every write error
 * reported with its errno.  A full disk is RLIMIT_FSIZE (writes past the
 * limit fail with EFBIG, SIGXFSZ ignored), so it needs no mount and no
 * root; stdout is checked in a child whose stdout is a pipe without a
 * reader (EPIPE) and /dev/full (ENOSPC). */
#include "outfile.h"

#include <dirent.h>
#include <fnmatch.h>
#include <sys/resource.h>
#include <sys/stat.h>

#include "helpers.h"

static char *dir;

static char *path(const char *name)
{
	return fmt("%s/%s", dir, name);
}

/* The file's contents, or NULL when it cannot be read. */
static char *slurp(const char *p)
{
	FILE *f = fopen(p, "r");
	char *s;
	long n;

	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	s = calloc(1, (size_t)n + 1);
	if (fread(s, 1, (size_t)n, f) != (size_t)n)
		s[0] = '\0';
	fclose(f);
	return s;
}

static void put(const char *p, const char *text)
{
	FILE *f = fopen(p, "w");

	if (!f || fputs(text, f) < 0 || fclose(f) != 0) {
		perror(p);
		exit(1);
	}
}

static void check_contents(const char *what, const char *p, const char *want)
{
	char *got = slurp(p);

	CHECK(got && !strcmp(got, want), "%s: %s holds '%.40s', want '%.40s'",
	      what, p, got ? got : "(nothing)", want);
	free(got);
}

/* Entries of the test directory, sorted and space-separated, match the
 * fnmatch pattern WANT ("" for none): no temporary file left behind. */
static void check_entries(const char *what, const char *want)
{
	struct dirent **ents;
	int n = scandir(dir, &ents, NULL, alphasort);
	char got[4096] = "";

	for (int i = 0; i < n; i++) {
		if (strcmp(ents[i]->d_name, ".") && strcmp(ents[i]->d_name, "..")) {
			if (*got)
				strcat(got, " ");
			strncat(got, ents[i]->d_name, sizeof(got) - strlen(got) - 2);
		}
		free(ents[i]);
	}
	free(ents);
	CHECK(n >= 0 && !fnmatch(want, got, 0), "%s: directory holds '%s', want '%s'",
	      what, got, want);
}

/* The one entry whose name starts with PREFIX, or NULL. */
static char *find_entry(const char *prefix)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char *found = NULL;

	while (d && (e = readdir(d)))
		if (!strncmp(e->d_name, prefix, strlen(prefix)) && !found)
			found = path(e->d_name);
	if (d)
		closedir(d);
	return found;
}

static void clean(void)
{
	char *cmd = fmt("rm -rf '%s'/* '%s'/.[!.]*", dir, dir);

	run(cmd);
	free(cmd);
}

/* Write TEXT to P through outfile and commit: WHAT says why it matters. */
static void write_committed(const char *what, const char *p, const char *text)
{
	struct outfile *of = outfile_open(p);

	CHECK(of, "%s: open: %s", what, strerror(errno));
	if (!of)
		return;
	fputs(text, outfile_stream(of));
	CHECK(outfile_commit(of) == 0, "%s: commit: %s", what, strerror(errno));
}

static void test_new_file(void)
{
	char *p = path("out"), *tmp;
	struct outfile *of = outfile_open(p);
	struct stat st;
	int fl;

	CHECK(of, "open %s: %s", p, strerror(errno));
	if (!of)
		goto out;
	CHECK(!strcmp(outfile_name(of), p) && !outfile_is_stdout(of), "name");
	fputs("hello\n", outfile_stream(of));
	/* until the commit, only a hidden temporary file exists */
	check_entries("before commit", ".out.??????");
	tmp = find_entry(".out.");
	CHECK(tmp && lstat(tmp, &st) == 0 && S_ISREG(st.st_mode)
	      && (st.st_mode & 07777) == 0600, "temporary file mode %o",
	      tmp ? (unsigned)st.st_mode & 07777 : 0);
	free(tmp);
	fl = fcntl(fileno(outfile_stream(of)), F_GETFD);
	CHECK(fl >= 0 && (fl & FD_CLOEXEC), "not close-on-exec");
	CHECK(outfile_commit(of) == 0, "commit: %s", strerror(errno));
	check_contents("new file", p, "hello\n");
	/* The umask's mode, as open(O_CREAT, 0666) (main sets 022). */
	CHECK(stat(p, &st) == 0 && (st.st_mode & 07777) == 0644,
	      "mode %o, want 0644", (unsigned)st.st_mode & 07777);
	check_entries("after commit", "out");
	umask(077);
	of = outfile_open(p);
	CHECK(of && outfile_commit(of) == 0, "umask 077: %s", strerror(errno));
	CHECK(stat(p, &st) == 0 && (st.st_mode & 07777) == 0600,
	      "umask 077: mode %o, want 0600", (unsigned)st.st_mode & 07777);
	umask(022);
out:
	free(p);
	clean();
}

/* The existing file keeps its contents until the commit. */
static void test_existing(void)
{
	char *p = path("prof");
	struct outfile *of;

	put(p, "old profile\n");
	of = outfile_open(p);
	CHECK(of, "open: %s", strerror(errno));
	if (!of)
		goto out;
	fputs("new profile\n", outfile_stream(of));
	fflush(outfile_stream(of));
	check_contents("while writing", p, "old profile\n");
	CHECK(outfile_commit(of) == 0, "commit: %s", strerror(errno));
	check_contents("committed", p, "new profile\n");

	/* abort: NAME untouched, no temporary file, errno kept */
	of = outfile_open(p);
	CHECK(of, "open: %s", strerror(errno));
	if (of) {
		fputs("discarded\n", outfile_stream(of));
		errno = ERANGE;
		outfile_abort(of);
		CHECK(errno == ERANGE, "abort changed errno to %d", errno);
	}
	check_contents("aborted", p, "new profile\n");
	check_entries("aborted", "prof");
	outfile_abort(NULL);
out:
	free(p);
	clean();
}

/* A symlink at NAME (planted in a shared directory) is replaced by the
 * profile; the file it points to is never written, a dangling one never
 * created. */
static void test_symlink(void)
{
	char *p = path("cg.out"), *victim = path("victim"), *ghost = path("ghost");
	struct stat st;

	put(victim, "precious\n");
	CHECK(symlink(victim, p) == 0, "symlink: %s", strerror(errno));
	write_committed("through a symlink", p, "profile\n");
	CHECK(lstat(p, &st) == 0 && S_ISREG(st.st_mode),
	      "%s is not a regular file after the commit", p);
	check_contents("symlink replaced", p, "profile\n");
	check_contents("symlink target", victim, "precious\n");

	unlink(p);
	CHECK(symlink(ghost, p) == 0, "symlink: %s", strerror(errno));
	write_committed("through a dangling symlink", p, "profile\n");
	CHECK(access(ghost, F_OK) != 0, "the dangling symlink's target was created");
	check_entries("dangling symlink", "cg.out victim");
	free(p);
	free(victim);
	free(ghost);
	clean();
}

/* A full disk, as RLIMIT_FSIZE: every write past LIMIT bytes fails with
 * EFBIG.  BYTES written before the commit; the existing file survives and
 * no temporary file is left.  EXPECT_ERRNO 0 accepts EFBIG or EIO (the
 * write failed while writing and its errno is gone). */
static void full_disk(const char *what, rlim_t limit, size_t bytes,
		      int expect_errno)
{
	char *p = path("full");
	struct rlimit old, small = { 0 };
	struct outfile *of;
	int rc, err;

	put(p, "old\n");
	of = outfile_open(p);
	CHECK(of, "%s: open: %s", what, strerror(errno));
	if (!of)
		goto out;
	getrlimit(RLIMIT_FSIZE, &old);
	small.rlim_cur = limit;
	small.rlim_max = old.rlim_max;
	CHECK(setrlimit(RLIMIT_FSIZE, &small) == 0, "setrlimit");
	for (size_t i = 0; i < bytes; i++)
		putc('x', outfile_stream(of));
	errno = 0;
	rc = outfile_commit(of);
	err = errno;
	setrlimit(RLIMIT_FSIZE, &old);
	CHECK(rc == -1, "%s: commit succeeded on a full disk", what);
	if (expect_errno)
		CHECK(err == expect_errno, "%s: errno %d (%s), want %d", what,
		      err, strerror(err), expect_errno);
	else
		CHECK(err == EFBIG || err == EIO, "%s: errno %d (%s)", what,
		      err, strerror(err));
	check_contents(what, p, "old\n");
	check_entries(what, "full");
out:
	free(p);
	clean();
}

static void test_bad_names(void)
{
	char *missing = path("no/such/dir/out"), *slash = path("d/");
	struct outfile *of;

	errno = 0;
	of = outfile_open(missing);
	CHECK(!of && errno == ENOENT, "missing directory: errno %d", errno);
	outfile_abort(of);
	CHECK(mkdir(slash, 0700) == 0, "mkdir");
	errno = 0;
	of = outfile_open(slash);
	CHECK(!of && errno == EISDIR, "'dir/': errno %d", errno);
	outfile_abort(of);
	slash[strlen(slash) - 1] = '\0';
	errno = 0;
	of = outfile_open(slash);
	CHECK(!of && errno == EISDIR, "a directory: errno %d", errno);
	outfile_abort(of);
	errno = 0;
	of = outfile_open("");
	CHECK(!of && errno == ENOENT, "empty name: errno %d", errno);
	outfile_abort(of);
	check_entries("bad names", "d");
	free(missing);
	free(slash);
	clean();
}

/* A file name of NAME_MAX bytes still gets its temporary file. */
static void test_long_name(void)
{
	char base[256], *p;

	memset(base, 'n', 255);
	base[255] = '\0';
	p = path(base);
	write_committed("a 255-byte name", p, "long\n");
	check_contents("long name", p, "long\n");
	check_entries("long name", base);
	free(p);
	clean();
}

/* "-" in a child whose stdout is OUT_FD: the commit's status and errno,
 * written to the parent as "rc errno". */
static void stdout_case(const char *what, int out_fd, int expect_rc,
			int expect_errno)
{
	int pfd[2], rc = -2, err = -2;
	pid_t pid;

	if (pipe(pfd) < 0)
		exit(1);
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		struct outfile *of;
		char msg[64];

		close(pfd[0]);
		signal(SIGPIPE, SIG_IGN);
		dup2(out_fd, 1);
		of = outfile_open("-");
		if (!of)
			_exit(1);
		if (!outfile_is_stdout(of) || outfile_stream(of) != stdout)
			_exit(2);
		fputs("profile\n", outfile_stream(of));
		errno = 0;
		rc = outfile_commit(of);
		snprintf(msg, sizeof(msg), "%d %d", rc, rc ? errno : 0);
		if (write(pfd[1], msg, strlen(msg)) < 0)
			_exit(3);
		_exit(0);
	}
	close(pfd[1]);
	{
		char buf[64] = "";
		ssize_t n = read(pfd[0], buf, sizeof(buf) - 1);

		if (n > 0)
			sscanf(buf, "%d %d", &rc, &err);
	}
	close(pfd[0]);
	waitpid(pid, NULL, 0);
	CHECK(rc == expect_rc && err == expect_errno,
	      "%s: commit %d errno %d, want %d errno %d", what, rc, err,
	      expect_rc, expect_errno);
}

static void test_stdout(void)
{
	char *p = path("stdout");
	int fd, pfd[2];

	fd = open(p, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	stdout_case("stdout to a file", fd, 0, 0);
	close(fd);
	check_contents("stdout", p, "profile\n");
	/* a reader that is gone: EPIPE, not a silent success */
	if (pipe(pfd) < 0)
		exit(1);
	close(pfd[0]);
	stdout_case("stdout to a closed pipe", pfd[1], -1, EPIPE);
	close(pfd[1]);
	fd = open("/dev/full", O_WRONLY | O_CLOEXEC);
	CHECK(fd >= 0, "cannot open /dev/full");
	stdout_case("stdout to /dev/full", fd, -1, ENOSPC);
	close(fd);
	free(p);
	clean();
}

int main(void)
{
	signal(SIGXFSZ, SIG_IGN);	/* a write past RLIMIT_FSIZE: EFBIG */
	umask(022);
	dir = make_tmpdir();
	test_new_file();
	test_existing();
	test_symlink();
	/* the write fails while writing (more than stdio's buffer) */
	full_disk("full disk while writing", 100, 1 << 20, 0);
	/* the data is still in the buffer: it fails at the commit's flush */
	full_disk("full disk at the commit", 10, 100, EFBIG);
	/* nothing fits at all */
	full_disk("full disk, no room", 0, 1, EFBIG);
	test_bad_names();
	test_long_name();
	test_stdout();
	rmdir(dir);
	free(dir);
	return test_summary("test-outfile");
}
