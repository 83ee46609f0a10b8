/* cachetrace-annotate: read Cachegrind-format profiles (ours or valgrind's),
 * merge or difference them, and print where the costs are, down to the
 * source line; or write the merged profile back out.  Replaces cg_annotate,
 * cg_merge and cg_diff.  See docs/annotate.md. */
#include "profile.h"
#include "report.h"
#include "calltree.h"
#include "html.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdlib.h>
#include <stdnoreturn.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config.h"
#include "error.h"
#include "outfile.h"
#include "parse.h"

static const char usage_text[] =
"Usage: cachetrace-annotate [OPTION]... [FILE]...\n"
"       cachetrace-annotate --diff [OPTION]... A B\n"
"Show where the costs of Cachegrind- or Callgrind-format profiles are, by\n"
"function and by source line.  Several FILEs are merged; - reads standard\n"
"input, and so does no FILE when standard input is not a terminal.\n"
"\n"
"  --show=EV,...          show only these events, in this order [all]\n"
"  --sort=EV[:PCT],...    sort by these events; PCT sets a per-event\n"
"                         threshold [the events in file order]\n"
"  --threshold=PCT        show functions with at least PCT% of the primary\n"
"                         sort event [0.1]\n"
"  --annotate=yes|no      annotate the source files of the functions shown [yes]\n"
"  --context=N            lines of context around annotated lines [8]\n"
"  -I DIR, --include=DIR  also look for source files in DIR (repeatable)\n"
"  --percent=yes|no       show percentages of the totals [yes]\n"
"  --badness              add a column (DLmr + DLmw)^2 / Ir\n"
"  --diff                 show B - A for exactly two files A and B\n"
"  --mod-filename=s/RE/REPL/[gi]  rewrite file names (POSIX extended RE;\n"
"                         \\1-\\9 or $1-$9 in REPL are groups, & the match)\n"
"  --mod-funcname=s/RE/REPL/[gi]  rewrite function names likewise\n"
"  --html=OUT.html        write the report as one self-contained HTML page\n"
"                         (- = stdout); also reads folded stacks\n"
"  -o FILE, --output-profile=FILE  write the merged (or diffed) profile to\n"
"                         FILE in Cachegrind format instead of annotating\n"
"                         (- = stdout)\n"
"  --no-summary-check     read on when summary: is missing or wrong\n"
"Call stacks (Callgrind-format profiles, or folded stacks 'a;b;c COUNT'):\n"
"  --tree=callee          print the call tree from the roots down\n"
"  --blame=FUNC           print the callers of FUNC, and theirs, with their\n"
"                         shares of FUNC's inclusive cost\n"
"  --flamegraph=OUT.svg   draw the call tree (or with --blame, FUNC's callers)\n"
"                         as a self-contained SVG flame graph (- = stdout)\n"
"  --event=EV             the event of --tree, --blame and --flamegraph\n"
"                         [the first sort event]; names the folded counts\n"
"  --folded               the inputs are folded stacks (else detected)\n"
"  -h, --help             show this help\n"
"  --version              show the version\n"
"\n"
"Errors in an input are reported as FILE:LINE: message (<stdin> for -);\n"
"the exit status is then 1, and 2 for bad usage.\n";

static void usage(void)
{
	fputs(usage_text, stdout);
	exit(0);
}

static double parse_pct(const char *opt, const char *v)
{
	char *end;
	errno = 0;
	double d = strtod(v, &end);
	if (end != v && *end == '%')
		end++;
	if (errno || end == v || *end || !(d >= 0 && d <= 100))
		error_usage_and_die("%s: '%s' is not a percentage in [0, 100]",
				    opt, v);
	return d;
}

/* OPT named NAME (N bytes), which is no event of P: say so, with P's
 * events, and exit with status 1 (the profile decides, not the usage). */
static noreturn void no_such_event(const struct profile *p, const char *opt,
				   const char *name, int n)
{
	struct strbuf b = { 0 };

	for (unsigned e = 0; e < p->n_events; e++) {
		strbuf_add(&b, " ", 1);
		strbuf_add(&b, p->events[e], strlen(p->events[e]));
	}
	error_msg_and_die("%s: event '%.*s' is not in the profile's events:%s",
			  opt, n, name, b.s ? b.s : " (none)");
}

/* Split "A,B:1,C" into event indices, with optional ":PCT" parts. */
static unsigned parse_event_list(const struct profile *p, const char *opt,
				 const char *list, bool allow_badness,
				 bool allow_pct, unsigned **idx, double **pct)
{
	unsigned n = 0;
	const char *s = list;

	*idx = xcalloc(strlen(list) + 2, sizeof(**idx));
	if (pct)
		*pct = xcalloc(strlen(list) + 2, sizeof(**pct));
	for (;;) {
		const char *e = s + strcspn(s, ",");
		const char *colon = memchr(s, ':', e - s);
		const char *name_end = colon && allow_pct ? colon : e;
		int ev = prof_find_event(p, s, name_end - s);
		bool badness = name_end - s == 7 && !strncmp(s, "Badness", 7);
		if (ev < 0 && badness && allow_badness)
			ev = p->n_events;
		if (ev < 0 && badness && allow_pct)
			error_usage_and_die("%s: Badness cannot be sorted on", opt);
		if (ev < 0)
			no_such_event(p, opt, s, (int)(name_end - s));
		for (unsigned k = 0; k < n; k++)
			if ((*idx)[k] == (unsigned)ev)
				error_usage_and_die("%s: event '%.*s' given twice",
						    opt, (int)(name_end - s), s);
		(*idx)[n] = ev;
		if (pct) {
			(*pct)[n] = -1;
			if (colon) {
				char *v = xasprintf("%.*s", (int)(e - colon - 1),
						    colon + 1);
				(*pct)[n] = parse_pct(opt, v);
				free(v);
			}
		}
		n++;
		if (!*e)
			break;
		s = e + 1;
	}
	return n;
}

/* The syntax of an event list (OPT=LIST: --show, --sort with PCT), before
 * any profile is read: no empty event name. */
static void check_event_list(const char *opt, const char *list, bool allow_pct)
{
	for (const char *s = list;; s++) {
		size_t n = strcspn(s, allow_pct ? ",:" : ",");
		if (!n)
			error_usage_and_die("%s: empty event name in '%s'", opt,
					    list);
		s += strcspn(s, ",");
		if (!*s)
			break;
	}
}

static void report_error(const struct prof_error *err)
{
	fflush(stdout);
	fprintf(stderr, "%s:%llu: %s\n", err->name, err->line, err->msg);
}

/* All of FD, for the stack modes, which detect folded stacks by content. */
static char *read_all(int fd, const char *name, size_t *len)
{
	size_t cap = 1 << 16, n = 0;
	char *buf = xmalloc(cap);

	for (;;) {
		if (n == cap) {
			if (cap >= (size_t)1 << 32)
				error_msg_and_die("%s: input larger than 4 GiB",
						  name);
			cap *= 2;
			buf = xreallocarray(buf, cap, 1);
		}
		ssize_t r = read(fd, buf + n, cap - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			perror_msg_and_die("%s", name);
		if (!r)
			break;
		n += r;
	}
	*len = n;
	return buf;
}

/* Does FD hold folded stacks?  The stack modes read it whole and look;
 * with STREAM (the text and HTML reports, which stream profiles) only a
 * regular file is looked at, its start, and a pipe is a profile. */
static bool fd_is_folded(int fd, bool stream, char **data, size_t *len,
			 const char *name)
{
	struct stat st;
	if (!stream) {
		*data = read_all(fd, name, len);
		return ctree_is_folded(*data, *len);
	}
	*data = NULL;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode))
		return false;
	char head[4096];
	ssize_t n = pread(fd, head, sizeof(head), 0);
	return n > 0 && ctree_is_folded(head, n);
}

/* Read FILES into PROF, or when they are folded stacks (FOLDED, or by
 * content) into FWD, counting those in *N_FOLDED; with DIFF the first file
 * counts negative; STREAM as fd_is_folded; DETECT: look at the content
 * (the text report does not: folded stacks are a syntax error to it).
 * Returns 0, or 1 after printing
 * the reader's error. */
static int read_inputs(struct profile *prof, struct ctree *fwd, char **files,
		       unsigned n_files, bool check_summary, bool folded,
		       bool diff, bool stream, bool detect, int *n_folded)
{
	*n_folded = 0;
	for (unsigned i = 0; i < n_files; i++) {
		bool is_stdin = !strcmp(files[i], "-");
		const char *name = is_stdin ? "<stdin>" : files[i];
		int fd = is_stdin ? 0 : open(files[i], O_RDONLY | O_CLOEXEC);
		struct prof_error perr;
		size_t len = 0;
		char *data;
		if (fd < 0)
			perror_msg_and_die("%s", files[i]);
		bool f = folded;
		data = NULL;
		if (detect || !stream)
			f = fd_is_folded(fd, stream, &data, &len, name) || f;
		if (f && !data)
			data = read_all(fd, name, &len);
		if (i && f != (*n_folded > 0))
			error_msg_and_die("%s: cannot mix folded stacks and "
					  "profiles", name);
		*n_folded += f;
		int sign = diff && i == 0 ? -1 : 1;
		int r = f ? ctree_read_folded(fwd, data, len, name, &perr) :
			data ? prof_read_mem(prof, data, len, name, sign,
					     check_summary, &perr) :
			prof_read_fd(prof, fd, name, sign, check_summary,
				     &perr);
		free(data);
		if (!is_stdin)
			close(fd);
		if (r) {
			report_error(&perr);
			return 1;
		}
	}
	return 0;
}

/* The annotator's outputs (-o, --html, --flamegraph) as the tracer's:
 * written to a temporary file renamed into place, so that a failed write
 * never leaves a truncated file, with the umask's mode (outfile.h); "-"
 * is standard output.  OPT names the option in messages. */
static struct outfile *open_output(const char *opt, const char *name)
{
	struct outfile *of = outfile_open(name);
	if (!of)
		perror_msg_and_die("%s: cannot write %s", opt, name);
	return of;
}

static noreturn void abort_output(struct outfile *of, const char *opt)
{
	int err = errno ? errno : EIO;
	char *name = xstrdup(outfile_name(of));
	outfile_abort(of);
	errno = err;
	perror_msg_and_die("%s: cannot write %s", opt, name);
}

static void commit_output(struct outfile *of, const char *opt)
{
	char *name = xstrdup(outfile_name(of));
	if (outfile_commit(of) < 0)
		perror_msg_and_die("%s: cannot write %s", opt,
				   strcmp(name, "-") ? name : "standard output");
	free(name);
}

/* --tree, --blame and --flamegraph.  Returns the exit status. */
static int stacks_main(struct profile *prof, char **files, unsigned n_files,
		       bool check_summary, bool folded, const char *blame,
		       bool tree, const char *flamegraph, const char *event,
		       const char *sort, double threshold, bool percent)
{
	struct ctree fwd;
	int n_folded = 0;
	int rc = 0;

	ctree_init(&fwd, "all");
	if (read_inputs(prof, &fwd, files, n_files, check_summary, folded,
			false, false, true, &n_folded)) {
		ctree_free(&fwd);
		return 1;
	}

	const char *ev_name;
	struct cgraph g;
	unsigned ev = 0;
	bool have_graph = !n_folded;
	if (n_folded) {
		ctree_finish_folded(&fwd);
		ev_name = event ? event : "count";
	} else {
		if (event) {
			int e = prof_find_event(prof, event, strlen(event));
			if (e < 0)
				no_such_event(prof, "--event", event,
					      (int)strlen(event));
			ev = e;
		} else if (sort) {
			int n = (int)strcspn(sort, ",:");
			int e = prof_find_event(prof, sort, n);
			if (e < 0)
				no_such_event(prof, "--sort", sort, n);
			ev = e;
		}
		ev_name = prof->events[ev];
		if (cgraph_build(&g, prof)) {
			error_msg("counts overflow a 64-bit integer");
			cgraph_free(&g);
			ctree_free(&fwd);
			return 1;
		}
		if (!prof->has_calls)
			error_msg("warning: no call edges in the input (not in "
				  "Callgrind format): every function is a root");
	}

	/* The text tree, the blame tree, the flame graph: each built for
	 * itself, thresholded at MIN_FRAC of its root. */
	struct ctree t;
	for (int k = 0; k < 3 && !rc; k++) {
		bool up = k == 1;
		/* With --flamegraph, --blame picks the graph's tree. */
		if ((k == 0 && !tree) || (k == 1 && (!blame || flamegraph)) ||
		    (k == 2 && !flamegraph))
			continue;
		if (k == 2)
			up = blame != NULL;
		double min_frac = k == 2 ? 0.1 / 1180 : threshold / 100;
		ctree_init(&t, up ? blame : "all");
		if (!have_graph && up) {
			if (ctree_reverse(&t, &fwd, blame))
				rc = -1;
		} else if (have_graph &&
			   ctree_from_graph(&t, &g, ev, up ? blame : NULL,
					    min_frac)) {
			rc = -1;
		}
		if (rc) {
			error_msg("--blame: no function '%s' in the input",
				  blame);
			ctree_free(&t);
			rc = 1;
			break;
		}
		struct ctree *use = !have_graph && !up ? &fwd : &t;
		if (k < 2) {
			char *title = up ?
				xasprintf("Blame: the callers of %s, by %s", blame,
					  ev_name) :
				xasprintf("Call tree (callee), by %s", ev_name);
			ctree_print(stdout, use, title, ev_name, threshold,
				    percent);
			free(title);
		} else {
			struct outfile *of = open_output("--flamegraph",
							 flamegraph);
			char *title = up ?
				xasprintf("Blame: %s, by %s", blame, ev_name) :
				xasprintf("Flame Graph: %s", ev_name);
			struct svg_opts so = { title, ev_name, up, 1200 };
			if (ctree_write_svg(outfile_stream(of), use, &so))
				abort_output(of, "--flamegraph");
			commit_output(of, "--flamegraph");
			free(title);
		}
		ctree_free(&t);
	}
	if (have_graph)
		cgraph_free(&g);
	ctree_free(&fwd);
	if (fflush(stdout) || ferror(stdout))
		perror_msg_and_die("writing the report");
	return rc;
}

/* Long options.  Those from OPT_SHOW to OPT_HTML are valgrind style, a
 * value after '=' only (optional_argument keeps getopt from taking the
 * next word); --annotate, --show-percs and --include also stand alone. */
enum {
	OPT_SHOW = 256, OPT_SORT, OPT_THRESHOLD, OPT_AUTO, OPT_CONTEXT,
	OPT_PERCENT, OPT_MOD_FILENAME, OPT_MOD_FUNCNAME, OPT_OUTPUT_PROFILE,
	OPT_BLAME, OPT_TREE, OPT_FLAMEGRAPH, OPT_EVENT, OPT_HTML,
	OPT_ANNOTATE, OPT_SHOW_PERCS, OPT_INCLUDE,
	OPT_NO_ANNOTATE, OPT_NO_SHOW_PERCS, OPT_BADNESS, OPT_DIFF,
	OPT_NO_SUMMARY_CHECK, OPT_FOLDED, OPT_VERSION,
};

static const struct option longopts[] = {
	{ "show", optional_argument, NULL, OPT_SHOW },
	{ "sort", optional_argument, NULL, OPT_SORT },
	{ "threshold", optional_argument, NULL, OPT_THRESHOLD },
	{ "annotate", optional_argument, NULL, OPT_ANNOTATE },
	{ "auto", optional_argument, NULL, OPT_AUTO },
	{ "no-annotate", no_argument, NULL, OPT_NO_ANNOTATE },
	{ "context", optional_argument, NULL, OPT_CONTEXT },
	{ "include", optional_argument, NULL, OPT_INCLUDE },
	{ "percent", optional_argument, NULL, OPT_PERCENT },
	{ "show-percs", optional_argument, NULL, OPT_SHOW_PERCS },
	{ "no-show-percs", no_argument, NULL, OPT_NO_SHOW_PERCS },
	{ "badness", no_argument, NULL, OPT_BADNESS },
	{ "diff", no_argument, NULL, OPT_DIFF },
	{ "mod-filename", optional_argument, NULL, OPT_MOD_FILENAME },
	{ "mod-funcname", optional_argument, NULL, OPT_MOD_FUNCNAME },
	{ "output-profile", optional_argument, NULL, OPT_OUTPUT_PROFILE },
	{ "no-summary-check", no_argument, NULL, OPT_NO_SUMMARY_CHECK },
	{ "blame", optional_argument, NULL, OPT_BLAME },
	{ "tree", optional_argument, NULL, OPT_TREE },
	{ "flamegraph", optional_argument, NULL, OPT_FLAMEGRAPH },
	{ "event", optional_argument, NULL, OPT_EVENT },
	{ "html", optional_argument, NULL, OPT_HTML },
	{ "folded", no_argument, NULL, OPT_FOLDED },
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, OPT_VERSION },
	{ NULL, 0, NULL, 0 },
};

/* getopt takes more than the annotator ever has: bundles (-hI.), -oFILE
 * and abbreviations (--thr=1).  These stay unknown options. */
static bool short_form_ok(const char *a)
{
	if (a[0] != '-' || a[1] == '-' || !a[1])
		return true;		/* not a short option */
	return !strcmp(a, "-h") || !strcmp(a, "-o") || a[1] == 'I';
}

static bool long_name_exact(const char *a, const char *name)
{
	size_t n = strlen(name);
	return !strncmp(a + 2, name, n) && (!a[2 + n] || a[2 + n] == '=');
}

int main(int argc, char **argv)
{
	const char *show = NULL, *sort = NULL, *output_profile = NULL;
	const char *mod_file = NULL, *mod_fn = NULL;
	double threshold = 0.1;
	bool annotate = true, percent = true, badness = false, diff = false;
	bool check_summary = true;
	unsigned long context = 8;
	char **include = xcalloc(argc + 1, sizeof(*include));
	unsigned n_include = 0;
	char **files = xcalloc(argc + 2, sizeof(*files));
	unsigned n_files = 0;
	const char *blame = NULL, *flamegraph = NULL, *event = NULL;
	const char *html = NULL;
	bool tree = false, folded = false;

	/* "-": in order, argv untouched (the report prints the invocation as
	 * given, and --diff's A and B keep their order); ":": our messages
	 * for a missing value. */
	opterr = 0;
	for (;;) {
		if (optind < argc && !short_form_ok(argv[optind]))
			error_usage_and_die("unknown option '%s'", argv[optind]);
		int li = -1;
		int c = getopt_long(argc, argv, "-:hI:o:", longopts, &li);
		if (c == -1)
			break;
		const char *a = argv[optind - 1];
		if (li >= 0 && !long_name_exact(a, longopts[li].name))
			error_usage_and_die("unknown option '%s'", a);
		if (c >= OPT_SHOW && c <= OPT_HTML && !optarg)
			error_usage_and_die("unknown option '%s'", a);
		char *v = optarg;
		switch (c) {
		case 1: files[n_files++] = v; break;
		case 'h': usage(); break;
		case OPT_VERSION:
			printf("cachetrace-annotate %s\n", CT_VERSION);
			exit(0);
		case OPT_SHOW:
			check_event_list("--show", v, false);
			show = v;
			break;
		case OPT_SORT:
			check_event_list("--sort", v, true);
			sort = v;
			break;
		case OPT_THRESHOLD:
			threshold = parse_pct("--threshold", v);
			break;
		case OPT_ANNOTATE:
			annotate = !v || parse_bool_or_die("--annotate", v,
							   PARSE_YES_NO);
			break;
		case OPT_AUTO:
			annotate = parse_bool_or_die("--auto", v, PARSE_YES_NO);
			break;
		case OPT_NO_ANNOTATE: annotate = false; break;
		case OPT_CONTEXT: {
			char *end;
			errno = 0;
			context = strtoul(v, &end, 10);
			if (errno || end == v || *end || v[0] == '-' ||
			    context > 100000000)
				error_usage_and_die("--context: bad number '%s'",
						    v);
			break;
		}
		case OPT_INCLUDE:
			if (!v && optind < argc)
				v = argv[optind++];
			if (!v || !*v)
				error_usage_and_die("--include needs a directory");
			include[n_include++] = v;
			break;
		case 'I':
			if (!*v)
				error_usage_and_die("-I needs a directory");
			include[n_include++] = v;
			break;
		case OPT_PERCENT:
			percent = parse_bool_or_die("--percent", v, PARSE_YES_NO);
			break;
		case OPT_SHOW_PERCS:
			percent = !v || parse_bool_or_die("--show-percs", v,
							  PARSE_YES_NO);
			break;
		case OPT_NO_SHOW_PERCS: percent = false; break;
		case OPT_BADNESS: badness = true; break;
		case OPT_DIFF: diff = true; break;
		case OPT_MOD_FILENAME: mod_file = v; break;
		case OPT_MOD_FUNCNAME: mod_fn = v; break;
		case OPT_OUTPUT_PROFILE: case 'o':
			if (!*v)
				error_usage_and_die("%s needs a file name",
						    c == 'o' ? "-o" :
						    "--output-profile");
			output_profile = v;
			break;
		case OPT_NO_SUMMARY_CHECK: check_summary = false; break;
		case OPT_BLAME:
			if (!*v)
				error_usage_and_die("--blame needs a function name");
			blame = v;
			break;
		case OPT_TREE:
			if (strcmp(v, "callee"))
				error_usage_and_die("--tree: expected callee, not "
						    "'%s'", v);
			tree = true;
			break;
		case OPT_FLAMEGRAPH:
			if (!*v)
				error_usage_and_die("--flamegraph needs a file name");
			flamegraph = v;
			break;
		case OPT_EVENT:
			if (!*v)
				error_usage_and_die("--event needs an event name");
			event = v;
			break;
		case OPT_HTML:
			if (!*v)
				error_usage_and_die("--html needs a file name");
			html = v;
			break;
		case OPT_FOLDED: folded = true; break;
		case ':':
			if (optopt == 'I')
				error_usage_and_die("-I needs a directory");
			error_usage_and_die("-o needs a file name");
		default:
			error_usage_and_die("unknown option '%s'", a);
		}
	}
	/* After "--", only files. */
	while (optind < argc)
		files[n_files++] = argv[optind++];
	/* No FILE reads a pipe or a redirected file, never a terminal: a
	 * silent wait for typed input helps nobody (cg_annotate prints its
	 * usage). */
	if (!n_files && isatty(0)) {
		error_msg("no profile given (a file, or - for standard input); "
			  "see --help");
		exit(2);
	}
	if (!n_files)
		files[n_files++] = "-";
	if (diff && n_files != 2)
		error_usage_and_die("--diff needs exactly two files, A and B");
	bool stacks = blame || tree || flamegraph;
	if (stacks && (diff || output_profile))
		error_usage_and_die("--tree, --blame and --flamegraph cannot be "
				    "used with --diff or --output-profile");
	if (html && (stacks || output_profile))
		error_usage_and_die("--html cannot be used with --tree, --blame, "
				    "--flamegraph or --output-profile");
	if (folded && !stacks && !html)
		error_usage_and_die("--folded needs --tree, --blame, "
				    "--flamegraph or --html");

	struct profile prof;
	char err[256];
	prof_init(&prof);
	if (mod_file && prof_mod_compile(&prof.mod_file, mod_file, err,
					 sizeof(err)))
		error_usage_and_die("--mod-filename: %s", err);
	if (mod_fn && prof_mod_compile(&prof.mod_fn, mod_fn, err, sizeof(err)))
		error_usage_and_die("--mod-funcname: %s", err);

	unsigned n_stdin = 0;
	for (unsigned i = 0; i < n_files; i++)
		n_stdin += !strcmp(files[i], "-");
	if (n_stdin > 1)
		error_usage_and_die("standard input (-) can be read only once");

	if (stacks) {
		int rc = stacks_main(&prof, files, n_files, check_summary,
				     folded, blame, tree, flamegraph, event, sort,
				     threshold, percent);
		prof_free(&prof);
		free(include);
		free(files);
		return rc;
	}

	/* --html also takes folded stacks; the text report does not. */
	struct ctree fwd;
	int n_folded = 0;
	ctree_init(&fwd, "all");
	if (read_inputs(&prof, &fwd, files, n_files, check_summary,
			folded, diff, true, html != NULL, &n_folded)) {
		ctree_free(&fwd);
		prof_free(&prof);
		free(include);
		free(files);
		return 1;
	}
	if (n_folded && diff)
		error_usage_and_die("--diff cannot compare folded stacks");
	if (n_folded)
		ctree_finish_folded(&fwd);

	if (output_profile) {
		struct outfile *of = open_output("-o", output_profile);
		setvbuf(outfile_stream(of), NULL, _IOFBF, 1 << 20);
		if (prof_write(&prof, outfile_stream(of)))
			abort_output(of, "-o");
		commit_output(of, "-o");
		ctree_free(&fwd);
		prof_free(&prof);
		free(include);
		free(files);
		return 0;
	}

	/* The HTML page always has the Badness column when it can. */
	struct report_opts o;
	if (badness && !report_opts_defaults(&o, &prof, threshold, true))
		error_msg("--badness: the profile has no Ir, DLmr and DLmw "
			  "events; no Badness column");
	else if (!badness)
		report_opts_defaults(&o, &prof, threshold, html != NULL);
	o.annotate = annotate;
	o.percent = percent;
	o.context = context;
	o.include = include;
	o.n_include = n_include;
	bool have_bad = o.badness_ir >= 0;
	if (show) {
		free(o.show);
		o.n_show = parse_event_list(&prof, "--show", show, have_bad,
					    false, &o.show, NULL);
	}
	if (sort) {
		free(o.sort);
		free(o.sort_threshold);
		o.n_sort = parse_event_list(&prof, "--sort", sort, false, true,
					    &o.sort, &o.sort_threshold);
		bool any_thr = false;
		for (unsigned k = 0; k < o.n_sort; k++)
			any_thr |= o.sort_threshold[k] >= 0;
		if (!any_thr)
			o.sort_threshold[0] = threshold;
	}

	size_t inv_len = strlen(program_invocation_short_name) + 1;
	for (int i = 1; i < argc; i++)
		inv_len += strlen(argv[i]) + 1;
	char *inv = xmalloc(inv_len + 1);
	strcpy(inv, program_invocation_short_name);
	for (int i = 1; i < argc; i++) {
		strcat(inv, " ");
		strcat(inv, argv[i]);
	}
	o.invocation = inv;

	size_t in_len = 1;
	for (unsigned i = 0; i < n_files; i++)
		in_len += strlen(files[i]) + 9;
	char *inputs = xcalloc(in_len, 1);
	for (unsigned i = 0; i < n_files; i++) {
		if (i)
			strcat(inputs, diff ? " - " : ", ");
		strcat(inputs, strcmp(files[i], "-") ? files[i] : "<stdin>");
	}
	if (diff) {
		/* Say it the way the numbers read: B - A. */
		free(inputs);
		inputs = xasprintf("%s - %s",
				   strcmp(files[1], "-") ? files[1] : "<stdin>",
				   strcmp(files[0], "-") ? files[0] : "<stdin>");
	}
	o.inputs = inputs;
	o.inputs_label = diff ? "Files compared:" :
			 n_files > 1 ? "Files merged:" : "Data file:";

	static char outbuf[1 << 20];
	setvbuf(stdout, outbuf, _IOFBF, sizeof(outbuf));
	int rc = 0;
	if (html) {
		struct html_opts ho = {
			.ro = &o, .diff = diff, .event = -1,
			.folded = n_folded ? &fwd : NULL,
			.folded_event = event ? event : "count",
		};
		if (event && !n_folded) {
			ho.event = prof_find_event(&prof, event, strlen(event));
			if (ho.event < 0)
				no_such_event(&prof, "--event", event,
					      (int)strlen(event));
		}
		struct outfile *of = open_output("--html", html);
		if (!outfile_is_stdout(of))
			setvbuf(outfile_stream(of), NULL, _IOFBF, 1 << 20);
		errno = 0;
		rc = html_write(outfile_stream(of), &prof, &ho);
		if (rc && errno)
			abort_output(of, "--html");
		commit_output(of, "--html");
	} else {
		rc = report_print(stdout, &prof, &o);
	}
	if (rc) {
		error_msg("counts overflow a 64-bit integer");
		return 1;
	}
	if (fflush(stdout) || ferror(stdout))
		perror_msg_and_die("writing the report");
	ctree_free(&fwd);

	free(inv);
	free(inputs);
	free(o.show);
	free(o.sort);
	free(o.sort_threshold);
	free(include);
	free(files);
	prof_free(&prof);
	return 0;
}
