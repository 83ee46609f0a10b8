/* cachetrace-annotate: read Cachegrind-format profiles (ours or valgrind's),
 * merge or difference them, and print where the costs are, down to the
 * source line; or write the merged profile back out.  Replaces cg_annotate,
 * cg_merge and cg_diff.  See docs/annotate.md. */
#include "profile.h"
#include "report.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "error.h"

static const char usage_text[] =
"Usage: cachetrace-annotate [OPTION]... [FILE]...\n"
"       cachetrace-annotate --diff [OPTION]... A B\n"
"Show where the costs of Cachegrind-format profiles are, by function and by\n"
"source line.  Several FILEs are merged; - (or no FILE) reads standard input.\n"
"\n"
"  --show=EV,...          show only these events, in this order [all]\n"
"  --sort=EV[:PCT],...    sort by these events; PCT sets a per-event\n"
"                         threshold [the events in file order]\n"
"  --threshold=PCT        show functions with at least PCT%% of the primary\n"
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
"  --output-profile=FILE  write the merged (or diffed) profile to FILE in\n"
"                         Cachegrind format instead of annotating (- = stdout)\n"
"  --no-summary-check     read on when summary: is missing or wrong\n"
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

static bool parse_yes_no(const char *opt, const char *v)
{
	if (!strcmp(v, "yes"))
		return true;
	if (!strcmp(v, "no"))
		return false;
	error_usage_and_die("%s: expected yes or no, not '%s'", opt, v);
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

static int find_event(const struct profile *p, const char *name, size_t n)
{
	for (unsigned e = 0; e < p->n_events; e++)
		if (strlen(p->events[e]) == n && !strncmp(p->events[e], name, n))
			return e;
	return -1;
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
		int ev = find_event(p, s, name_end - s);
		if (ev < 0 && allow_badness && name_end - s == 7 &&
		    !strncmp(s, "Badness", 7))
			ev = p->n_events;
		if (ev < 0)
			error_msg_and_die("%s: event '%.*s' is not in the "
					  "profile's events:", opt,
					  (int)(name_end - s), s);
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

static void report_error(const struct prof_error *err)
{
	fflush(stdout);
	fprintf(stderr, "%s:%llu: %s\n", err->name, err->line, err->msg);
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
	bool only_files = false;

	for (int i = 1; i < argc; i++) {
		char *a = argv[i];
		char *v;
#define OPTVAL(name) (!strncmp(a, name "=", sizeof(name)) ? \
		      (v = a + sizeof(name), 1) : 0)
		if (only_files || a[0] != '-' || !strcmp(a, "-")) {
			files[n_files++] = a;
		} else if (!strcmp(a, "--")) {
			only_files = true;
		} else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			usage();
		} else if (!strcmp(a, "--version")) {
			printf("cachetrace-annotate %s\n", CT_VERSION);
			return 0;
		} else if (OPTVAL("--show")) {
			show = v;
		} else if (OPTVAL("--sort")) {
			sort = v;
		} else if (OPTVAL("--threshold")) {
			threshold = parse_pct("--threshold", v);
		} else if (OPTVAL("--annotate")) {
			annotate = parse_yes_no("--annotate", v);
		} else if (OPTVAL("--auto")) {
			annotate = parse_yes_no("--auto", v);
		} else if (!strcmp(a, "--annotate")) {
			annotate = true;
		} else if (!strcmp(a, "--no-annotate")) {
			annotate = false;
		} else if (OPTVAL("--context")) {
			char *end;
			errno = 0;
			context = strtoul(v, &end, 10);
			if (errno || end == v || *end || v[0] == '-' ||
			    context > 100000000)
				error_usage_and_die("--context: bad number '%s'",
						    v);
		} else if (OPTVAL("--include")) {
			include[n_include++] = v;
		} else if (!strncmp(a, "-I", 2)) {
			if (a[2]) {
				include[n_include++] = a + 2;
			} else if (i + 1 < argc) {
				include[n_include++] = argv[++i];
			} else {
				error_usage_and_die("-I needs a directory");
			}
		} else if (!strcmp(a, "--include")) {
			if (i + 1 >= argc)
				error_usage_and_die("--include needs a directory");
			include[n_include++] = argv[++i];
		} else if (OPTVAL("--percent")) {
			percent = parse_yes_no("--percent", v);
		} else if (OPTVAL("--show-percs")) {
			percent = parse_yes_no("--show-percs", v);
		} else if (!strcmp(a, "--show-percs")) {
			percent = true;
		} else if (!strcmp(a, "--no-show-percs")) {
			percent = false;
		} else if (!strcmp(a, "--badness")) {
			badness = true;
		} else if (!strcmp(a, "--diff")) {
			diff = true;
		} else if (OPTVAL("--mod-filename")) {
			mod_file = v;
		} else if (OPTVAL("--mod-funcname")) {
			mod_fn = v;
		} else if (OPTVAL("--output-profile")) {
			output_profile = v;
		} else if (!strcmp(a, "-o")) {
			if (i + 1 >= argc)
				error_usage_and_die("-o needs a file name");
			output_profile = argv[++i];
		} else if (!strcmp(a, "--no-summary-check")) {
			check_summary = false;
		} else {
			error_usage_and_die("unknown option '%s'", a);
		}
#undef OPTVAL
	}
	if (!n_files)
		files[n_files++] = "-";
	if (diff && n_files != 2)
		error_usage_and_die("--diff needs exactly two files, A and B");

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

	for (unsigned i = 0; i < n_files; i++) {
		bool is_stdin = !strcmp(files[i], "-");
		const char *name = is_stdin ? "<stdin>" : files[i];
		int fd = is_stdin ? 0 : open(files[i], O_RDONLY | O_CLOEXEC);
		struct prof_error perr;
		if (fd < 0)
			perror_msg_and_die("%s", files[i]);
		int sign = diff && i == 0 ? -1 : 1;
		if (prof_read_fd(&prof, fd, name, sign, check_summary, &perr)) {
			report_error(&perr);
			prof_free(&prof);
			free(include);
			free(files);
			return 1;
		}
		if (!is_stdin)
			close(fd);
	}

	if (output_profile) {
		bool to_stdout = !strcmp(output_profile, "-");
		FILE *out = to_stdout ? stdout : fopen(output_profile, "w");
		if (!out)
			perror_msg_and_die("%s", output_profile);
		setvbuf(out, NULL, _IOFBF, 1 << 20);
		if (prof_write(&prof, out) || fflush(out) ||
		    (!to_stdout && fclose(out)))
			perror_msg_and_die("writing %s", output_profile);
		prof_free(&prof);
		free(include);
		free(files);
		return 0;
	}

	struct report_opts o = {
		.annotate = annotate,
		.percent = percent,
		.context = context,
		.include = include,
		.n_include = n_include,
		.badness_ir = -1, .badness_dlmr = -1, .badness_dlmw = -1,
	};
	if (badness) {
		o.badness_ir = find_event(&prof, "Ir", 2);
		o.badness_dlmr = find_event(&prof, "DLmr", 4);
		o.badness_dlmw = find_event(&prof, "DLmw", 4);
		if (o.badness_ir < 0 || o.badness_dlmr < 0 ||
		    o.badness_dlmw < 0) {
			error_msg("--badness: the profile has no Ir, DLmr and "
				  "DLmw events; no Badness column");
			o.badness_ir = o.badness_dlmr = o.badness_dlmw = -1;
		}
	}
	bool have_bad = o.badness_ir >= 0;
	if (show) {
		o.n_show = parse_event_list(&prof, "--show", show, have_bad,
					    false, &o.show, NULL);
	} else {
		o.show = xcalloc(prof.n_events + 2, sizeof(*o.show));
		for (unsigned e = 0; e < prof.n_events; e++)
			o.show[o.n_show++] = e;
		if (have_bad)
			o.show[o.n_show++] = prof.n_events;
	}
	if (sort) {
		o.n_sort = parse_event_list(&prof, "--sort", sort, false, true,
					    &o.sort, &o.sort_threshold);
	} else {
		o.sort = xcalloc(prof.n_events + 1, sizeof(*o.sort));
		o.sort_threshold = xcalloc(prof.n_events + 1,
					   sizeof(*o.sort_threshold));
		for (unsigned e = 0; e < prof.n_events; e++) {
			o.sort[o.n_sort++] = e;
			o.sort_threshold[e] = -1;
		}
	}
	bool any_thr = false;
	for (unsigned k = 0; k < o.n_sort; k++)
		any_thr |= o.sort_threshold[k] >= 0;
	if (!any_thr)
		o.sort_threshold[0] = threshold;

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
	if (report_print(stdout, &prof, &o)) {
		error_msg("counts overflow a 64-bit integer");
		return 1;
	}
	if (fflush(stdout) || ferror(stdout))
		perror_msg_and_die("writing the report");

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
