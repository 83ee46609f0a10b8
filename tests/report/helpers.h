/* Shared helpers of the report tests (each test is one C file). */
#ifndef CT_TEST_REPORT_HELPERS_H
#define CT_TEST_REPORT_HELPERS_H

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <unistd.h>

#include "testutil.h"

#define TEST_UNUSED __attribute__((unused))
#define CT_FMT_UNUSED __attribute__((unused, format(printf, 1, 2)))

static CT_FMT_UNUSED char *fmt(const char *f, ...)
{
	va_list ap;
	char *s;

	va_start(ap, f);
	if (vasprintf(&s, f, ap) < 0)
		abort();
	va_end(ap);
	return s;
}

/* Run CMD through the shell; its stdout, malloc'd, or NULL on failure. */
static TEST_UNUSED char *capture(const char *cmd)
{
	FILE *p = popen(cmd, "r");
	char *buf = NULL;
	size_t len = 0, cap = 0, n;
	char chunk[4096];

	if (!p)
		return NULL;
	while ((n = fread(chunk, 1, sizeof(chunk), p)) > 0) {
		if (len + n + 1 > cap) {
			cap = (len + n + 1) * 2;
			buf = realloc(buf, cap);
		}
		memcpy(buf + len, chunk, n);
		len += n;
	}
	if (!buf)
		buf = calloc(1, 1);
	else
		buf[len] = '\0';
	if (pclose(p) != 0) {
		free(buf);
		return NULL;
	}
	return buf;
}

static TEST_UNUSED int run(const char *cmd)
{
	int st = system(cmd);

	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* A fresh directory under /tmp (removed by the caller with rm -rf). */
static TEST_UNUSED char *make_tmpdir(void)
{
	char *d = strdup("/tmp/ct-report-XXXXXX");

	if (!mkdtemp(d)) {
		perror("mkdtemp");
		exit(1);
	}
	return d;
}

/* The line of SRC holding MARKER, or 0. */
static TEST_UNUSED unsigned marker_line(const char *src, const char *marker)
{
	FILE *f = fopen(src, "r");
	char line[512];
	unsigned n = 0;

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		n++;
		if (strstr(line, marker)) {
			fclose(f);
			return n;
		}
	}
	fclose(f);
	return 0;
}

/* Fork and exec PATH traced; returns the pid stopped at its exec SIGTRAP
 * (only the executable, ld.so and the vdso are mapped then). */
static TEST_UNUSED pid_t start_stopped(const char *path)
{
	pid_t pid = fork();
	int st;

	if (pid < 0)
		return -1;
	if (pid == 0) {
		int devnull = open("/dev/null", O_WRONLY);

		if (devnull >= 0)
			dup2(devnull, 1);
		ptrace(PTRACE_TRACEME, 0, NULL, NULL);
		execl(path, path, (char *)NULL);
		_exit(127);
	}
	if (waitpid(pid, &st, 0) != pid || !WIFSTOPPED(st)
	    || WSTOPSIG(st) != SIGTRAP) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		return -1;
	}
	return pid;
}

/* Run PID until it reaches ADDR (an int3 planted there), e.g. main: the
 * loader has mapped the libraries by then. */
static TEST_UNUSED int run_to(pid_t pid, unsigned long addr)
{
	long word;
	int st;

	errno = 0;
	word = ptrace(PTRACE_PEEKTEXT, pid, (void *)addr, NULL);
	if (errno)
		return -1;
	if (ptrace(PTRACE_POKETEXT, pid, (void *)addr,
		   (void *)((word & ~0xffL) | 0xcc)) < 0)
		return -1;
	if (ptrace(PTRACE_CONT, pid, NULL, NULL) < 0)
		return -1;
	if (waitpid(pid, &st, 0) != pid || !WIFSTOPPED(st)
	    || WSTOPSIG(st) != SIGTRAP)
		return -1;
	return 0;
}

static TEST_UNUSED void kill_child(pid_t pid)
{
	if (pid > 0) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
	}
}

#endif
