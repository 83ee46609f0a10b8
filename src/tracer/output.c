/* The profiles (Cachegrind format, and with call stacks the Callgrind
 * format and folded stacks) and the summary on stderr.  Profiles are
 * written while the target is still attached: its mappings name the pcs. */
#include "tracer.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cgout.h"
#include "error.h"

int output_open(struct tracer *tr)
{
	char err[256];
	if (!strcmp(tr->opt.out, "-")) {
		tr->out_file = stdout;
		return 0;
	}
	tr->out_name = cgout_expand_name(tr->opt.out, tr->target_pid, err,
					 sizeof(err));
	if (!tr->out_name) {
		error_msg("-o %s: %s", tr->opt.out, err);
		return -1;
	}
	tr->out_file = fopen(tr->out_name, "w");
	if (!tr->out_file) {
		perror_msg("cannot write %s", tr->out_name);
		return -1;
	}
	return 0;
}

void output_abort(struct tracer *tr)
{
	if (tr->out_file && tr->out_file != stdout) {
		fclose(tr->out_file);
		if (tr->out_name)
			unlink(tr->out_name);
	}
	tr->out_file = NULL;
}

/* The region as the profile's desc: line says it. */
static void describe_region(const struct tracer *tr, FILE *m)
{
	const struct options *o = &tr->opt;
	const char *stop = o->stop ? o->stop : o->stop_watch;
	const char *stop_opt = o->stop ? "--stop=" : "--stop-watch=";
	if (o->start && !stop)
		fprintf(m, "desc: Region:          --start=%s, stop at the "
			"return of the start function\n", o->start);
	else if (o->start || o->start_watch)
		fprintf(m, "desc: Region:          --%s=%s, %s%s\n",
			o->start ? "start" : "start-watch",
			o->start ? o->start : o->start_watch,
			stop ? stop_opt : "no stop event", stop ? stop : "");
	else if (o->toggle_signal)
		fprintf(m, "desc: Region:          --toggle-signal=%s\n",
			sigabbrev_np(o->toggle_signal));
	else
		fprintf(m, "desc: Region:          the whole run\n");
}

static void collect_desc(struct tracer *tr)
{
	const struct options *o = &tr->opt;
	size_t len = 0;
	free(tr->desc_buf);
	free(tr->desc_lines);
	tr->desc_buf = NULL;
	FILE *m = open_memstream(&tr->desc_buf, &len);
	if (!m)
		error_msg_and_die("out of memory");
	cache_describe(tr->eng.cm, m);
	describe_region(tr, m);
	if (o->max_insns)
		fprintf(m, "desc: Window limit:    %" PRIu64 " instructions\n",
			o->max_insns);
	if (window_has_start_event(tr))
		fprintf(m, "desc: Windows:         %u\n", tr->windows_done);
	if (o->threads_all)
		fprintf(m, "desc: Threads:         all\n");
	if (tr->partial_reason)
		fprintf(m, "desc: Partial profile: %s\n", tr->partial_reason);
	/* Every line above starts with "desc: ", which cgout_write adds. */
	fclose(m);
	size_t n = 0;
	for (char *p = tr->desc_buf; *p; p++)
		n += *p == '\n';
	tr->desc_lines = xcalloc(n + 1, sizeof(char *));
	n = 0;
	for (char *p = tr->desc_buf, *nl; *p; p = nl + 1) {
		nl = strchr(p, '\n');
		if (!nl)
			break;
		*nl = 0;
		tr->desc_lines[n++] = strncmp(p, "desc: ", 6) ? p : p + 6;
	}
}

/* Open the file that OPT (its option NAME) names for this target, or
 * NULL after a message.  *PATH is the expanded name (free it). */
static FILE *open_named(struct tracer *tr, const char *name, const char *opt,
			char **path)
{
	char err[256];
	*path = cgout_expand_name(opt, tr->target_pid, err, sizeof(err));
	if (!*path) {
		error_msg("%s=%s: %s", name, opt, err);
		return NULL;
	}
	FILE *f = fopen(*path, "w");
	if (!f)
		perror_msg("cannot write %s", *path);
	return f;
}

/* The call-stack profiles, written with the flat one (target attached). */
static void write_call_stacks(struct tracer *tr)
{
	const struct options *o = &tr->opt;
	struct callstack *cs = tr->eng.cs;
	char *name;
	FILE *f = open_named(tr, "--callgrind-out-file", o->callgrind_out,
			     &name);
	if (f && (callstack_write_callgrind(cs, f,
					    (const char *const *)tr->desc_lines,
					    tr->cmd_line, tr->event_names) < 0 ||
		  fclose(f) != 0))
		perror_msg("writing %s", name);
	free(name);
	if (!o->folded_out)
		return;
	unsigned ev = tr->n_events;
	for (unsigned i = 0; i < tr->n_events; i++)
		if (!strcmp(tr->event_names[i], o->folded_event))
			ev = i;
	if (ev == tr->n_events) {
		error_msg("--folded-event=%s: no such event", o->folded_event);
		return;
	}
	f = open_named(tr, "--folded-out-file", o->folded_out, &name);
	if (f && (callstack_write_folded(cs, f, ev) < 0 || fclose(f) != 0))
		perror_msg("writing %s", name);
	free(name);
}

void output_write_profile(struct tracer *tr)
{
	if (tr->profile_written)
		return;
	tr->profile_written = true;
	char err[256];
	if (sym_refresh(tr->syms, err, sizeof(err)) < 0)
		debug_msg("re-reading mappings: %s", err);
	collect_desc(tr);
	struct cgout_meta meta = {
		.desc = (const char *const *)tr->desc_lines,
		.cmd = tr->cmd_line,
		.n_events = tr->n_events,
		.events = tr->event_names,
	};
	free(tr->totals);
	tr->totals = xcalloc(tr->n_events, sizeof(*tr->totals));
	if (cgout_write(tr->out_file, &meta, tr->eng.costs, tr->syms,
			tr->totals) < 0 || fflush(tr->out_file) != 0)
		perror_msg("writing %s", tr->out_name ? tr->out_name
						     : "the profile");
	if (tr->out_file != stdout)
		fclose(tr->out_file);
	tr->out_file = NULL;
	if (tr->eng.cs)
		write_call_stacks(tr);
}

static const char *resolve_pc_name(void *ctx, uint64_t pc, char *buf,
				   size_t len)
{
	struct src_loc loc;
	sym_lookup(ctx, pc, &loc);
	snprintf(buf, len, "%s:%u (%s)", loc.file, loc.line, loc.fn);
	return buf;
}

static const char *resolve_data_name(void *ctx, uint64_t addr, char *buf,
				     size_t len)
{
	return sym_data_name(ctx, addr, buf, len);
}

void output_print_summary(struct tracer *tr)
{
	struct engine *e = &tr->eng;
	if (tr->summary_printed || !tr->totals || tr->opt.quiet)
		return;
	tr->summary_printed = true;
	char prefix[32];
	snprintf(prefix, sizeof(prefix), "==%d== ", tr->target_pid);
	fprintf(stderr, "%s\n", prefix);
	cgout_print_summary(stderr, prefix, tr->n_events, tr->event_names,
			    tr->totals);
	const struct model_resolver res = {
		.ctx = tr->syms,
		.pc_name = resolve_pc_name,
		.data_name = resolve_data_name,
	};
	cache_report(e->cm, stderr, prefix, &res);
	double t = e->t_stepping;
	fprintf(stderr, "%s\n%sStepped %" PRIu64 " instructions in %.2f s "
		"(%.1fk steps/s)", prefix, prefix, e->steps, t,
		t > 0 ? e->steps / t / 1000 : 0.0);
	if (window_has_start_event(tr))
		fprintf(stderr, ", %u window%s", tr->windows_done,
			tr->windows_done == 1 ? "" : "s");
	if (tr->partial_reason)
		fprintf(stderr, "; partial profile: %s", tr->partial_reason);
	fputc('\n', stderr);
	int st = tr->target_status;
	if (st >= 0 && WIFEXITED(st))
		fprintf(stderr, "%sThe target exited with status %d.\n", prefix,
			WEXITSTATUS(st));
	else if (st >= 0 && WIFSIGNALED(st))
		fprintf(stderr, "%sThe target was killed by signal %d (%s)%s.\n",
			prefix, WTERMSIG(st), strsignal(WTERMSIG(st)),
			WCOREDUMP(st) ? ", core dumped" : "");
}
