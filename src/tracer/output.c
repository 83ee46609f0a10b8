/* The profiles (Cachegrind format, and with call stacks the Callgrind
 * format and folded stacks) and the summary on stderr.
 *
 * A profile is rendered into memory while the target is still attached
 * (its mappings name the pcs), and written out only after the target is
 * released (output_commit): no output that can block (a pipe, a FIFO, a
 * slow disk) ever happens while a thread of the target is stopped by us.
 * Files are written through outfile: a 0600 temporary file renamed into
 * place, so a failed write never leaves a truncated profile, and every
 * failure makes the exit status non-zero. */
#include "tracer.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "callgrind.h"
#include "cgout.h"
#include "error.h"
#include "html.h"
#include "outfile.h"

/* NAME (option OPT's value, expanded for PID) can be written: 0, or -1
 * after a message. */
static int check_name(const char *opt, const char *value, pid_t pid)
{
	char err[256];
	char *name = cgout_expand_name(value, pid, err, sizeof(err));
	if (!name) {
		error_msg("%s %s: %s", opt, value, err);
		return -1;
	}
	int rc = outfile_check(name);
	if (rc < 0)
		perror_msg("%s: cannot write %s", opt, name);
	free(name);
	return rc;
}

int output_check(struct tracer *tr)
{
	const struct options *o = &tr->opt;
	/* The pid is not known yet: the check expands %p with ours. */
	pid_t pid = getpid();
	if (check_name("-o", o->out, pid) < 0)
		return -1;
	if (o->callgrind_file &&
	    check_name("--callgrind-out-file", o->callgrind_out, pid) < 0)
		return -1;
	if (o->folded_out &&
	    check_name("--folded-out-file", o->folded_out, pid) < 0)
		return -1;
	if (o->html && check_name("--html", o->html, pid) < 0)
		return -1;
	return 0;
}

int output_open(struct tracer *tr)
{
	char err[256];
	if (!strcmp(tr->opt.out, "-")) {
		tr->out_name = xstrdup("-");
		return 0;
	}
	tr->out_name = cgout_expand_name(tr->opt.out, tr->target_pid, err,
					 sizeof(err));
	if (!tr->out_name) {
		error_msg("-o %s: %s", tr->opt.out, err);
		return -1;
	}
	return 0;
}

void output_abort(struct tracer *tr)
{
	for (unsigned i = 0; i < tr->n_pending; i++) {
		free(tr->pending[i].name);
		free(tr->pending[i].buf);
	}
	free(tr->pending);
	tr->pending = NULL;
	tr->n_pending = 0;
}

/* A memory stream for a profile of NAME (option OPT's), queued for
 * output_commit. */
static FILE *pending_open(struct tracer *tr, const char *opt, char *name)
{
	tr->pending = xreallocarray(tr->pending, tr->n_pending + 1,
				    sizeof(*tr->pending));
	struct pending_output *p = &tr->pending[tr->n_pending++];
	*p = (struct pending_output){ .name = name, .opt = opt };
	FILE *m = open_memstream(&p->buf, &p->len);
	if (!m)
		error_msg_and_die("out of memory");
	return m;
}

void output_commit(struct tracer *tr)
{
	for (unsigned i = 0; i < tr->n_pending; i++) {
		struct pending_output *p = &tr->pending[i];
		if (p->memory_only)
			continue;
		struct outfile *of = outfile_open(p->name);
		bool ok = of != NULL;
		if (ok && fwrite(p->buf, 1, p->len, outfile_stream(of)) !=
			  p->len) {
			outfile_abort(of);	/* keeps errno */
			ok = false;
		} else if (ok) {
			ok = outfile_commit(of) == 0;	/* frees OF */
		}
		if (!ok) {
			perror_msg("%s: cannot write %s", p->opt,
				   strcmp(p->name, "-") ? p->name :
				   "the profile to stdout");
			tr->had_error = true;
		}
	}
	output_abort(tr);
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

/* How the model's report names code and data: libdw, through SYMS. */
static struct model_resolver resolver(struct tracer *tr)
{
	return (struct model_resolver){
		.ctx = tr->syms,
		.pc_name = resolve_pc_name,
		.data_name = resolve_data_name,
	};
}

/* Where each thread's accesses went: a false-sharing report is empty
 * when two threads share a core.  Each line starts with PREFIX. */
static void describe_cores(struct tracer *tr, FILE *out, const char *prefix)
{
	if (window_cores(tr) <= 1 || !tr->n_core_log)
		return;
	fprintf(out, "%sThreads: ", prefix);
	for (unsigned i = 0; i < tr->n_core_log; i++)
		fprintf(out, "%s%d -> core %u", i ? ", " : "",
			tr->core_log[i].tid, tr->core_log[i].core);
	fputc('\n', out);
}

/* One "desc: KEY: VALUE" line, the value in the column of Cachegrind's
 * own "desc: I1 cache:         " lines (cg_annotate and ours print the
 * text as it is, under their own "Command:          " lines). */
static void desc_line(FILE *m, const char *key, const char *fmt, ...)
	CT_FMT(3, 4);
static void desc_line(FILE *m, const char *key, const char *fmt, ...)
{
	int pad = 18 - (int)strlen(key);
	va_list ap;

	fprintf(m, "desc: %s%*s", key, pad > 1 ? pad : 1, "");
	va_start(ap, fmt);
	vfprintf(m, fmt, ap);
	va_end(ap);
	fputc('\n', m);
}

/* The region as the profile's desc: line says it. */
static void describe_region(const struct tracer *tr, FILE *m)
{
	const struct options *o = &tr->opt;
	const char *stop = o->stop ? o->stop : o->stop_watch;
	const char *stop_opt = o->stop ? "--stop=" : "--stop-watch=";
	if (o->start && !stop)
		desc_line(m, "Region:", "--start=%s, stop at the return of the "
			  "start function", o->start);
	else if (o->start || o->start_watch)
		desc_line(m, "Region:", "--%s=%s, %s%s",
			  o->start ? "start" : "start-watch",
			  o->start ? o->start : o->start_watch,
			  stop ? stop_opt : "no stop event", stop ? stop : "");
	else if (o->toggle_signal)
		desc_line(m, "Region:", "--toggle-signal=%s",
			  sigabbrev_np(o->toggle_signal));
	else if (o->sample_len)
		desc_line(m, "Region:", "--sample=%s, wherever the target "
			  "stands", o->sample_arg);
	else
		desc_line(m, "Region:", "the whole run");
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
	bool native = tr->engine == &native_engine;
	if (native) {
		gate_describe(tr, m, "desc: ");
	} else {
		cache_describe(tr->eng.cm, m);
		/* After the cache lines, which stay Cachegrind's own. */
		if (cache_geom_source(tr->eng.cm)[0])
			desc_line(m, "Geometry:", "%s",
				  cache_geom_source(tr->eng.cm));
	}
	describe_region(tr, m);
	if (o->max_insns)
		desc_line(m, "Window limit:", "%" PRIu64 " instructions",
			  o->max_insns);
	if (window_has_start_event(tr))
		desc_line(m, "Windows:", "%u", tr->windows_done);
	sample_describe(tr, m, "desc: ", true);
	if (!native && (o->cache_state_given || tr->windows_done > 1))
		desc_line(m, "Cache state:", "%s", o->cold_windows ?
			  "cold at every window (--cache-state=cold)" :
			  "cold at the first window, then kept "
			  "(--cache-state=warm)");
	if (o->threads_all)
		desc_line(m, "Threads:", "all");
	if (o->cpuid_valgrind)
		desc_line(m, "CPUID:", "valgrind 3.19's on this host, %s "
			  "(--cpuid=valgrind)", vg_cpuid_model(&tr->vg));
	else if (!native)
		desc_line(m, "CPUID:", "this host's, %s", host_cpu_brand());
	if (o->auxv_valgrind)
		desc_line(m, "Auxv:", "as valgrind 3.19 passes it on: no vDSO "
			  "(--auxv=valgrind)");
	else if (o->auxv_given)
		desc_line(m, "Auxv:", "the kernel's (--auxv=host)");
	if (tr->engine != &step_engine)
		desc_line(m, "Engine:", "%s", tr->engine->name);
	if (tr->partial_reason)
		desc_line(m, "Partial profile:", "%s", tr->partial_reason);
	/* The model's end-of-run report (levels, prefetchers, coherence: the
	 * false- and true-sharing lines), which Cachegrind's format has no
	 * place for, as "desc: Report: " lines: cg_annotate shows desc: text
	 * as it is, the HTML report reads the coherence lines back. */
	const struct model_resolver res = resolver(tr);
	if (!native) {
		cache_report(tr->eng.cm, m, "desc: Report: ", &res);
		describe_cores(tr, m, "desc: Report: ");
	}
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

/* The call-stack profiles, rendered with the flat one.  Returns the
 * index in tr->pending of the Callgrind one, or -1. */
static int render_call_stacks(struct tracer *tr)
{
	const struct options *o = &tr->opt;
	struct callstack *cs = tr->eng.cs;
	char err[256];
	/* Kept for --html only: labelled with the flat profile's name, the
	 * file the user has. */
	char *name = o->callgrind_file ?
		cgout_expand_name(o->callgrind_out, tr->target_pid, err,
				  sizeof(err)) : xstrdup(tr->out_name);
	int at = -1;
	if (!name) {
		error_msg("--callgrind-out-file=%s: %s", o->callgrind_out, err);
		tr->had_error = true;
	} else {
		at = tr->n_pending;
		FILE *m = pending_open(tr, "--callgrind-out-file", name);
		tr->pending[at].memory_only = !o->callgrind_file;
		callgrind_write(callstack_profile(cs), m,
				(const char *const *)tr->desc_lines,
				tr->cmd_line, tr->event_names);
		fclose(m);
	}
	if (!o->folded_out)
		return at;
	name = cgout_expand_name(o->folded_out, tr->target_pid, err,
				 sizeof(err));
	if (!name) {
		error_msg("--folded-out-file=%s: %s", o->folded_out, err);
		tr->had_error = true;
		return at;
	}
	FILE *m = pending_open(tr, "--folded-out-file", name);
	callgrind_write_folded(callstack_profile(cs), m, tr->folded_event);
	fclose(m);
	return at;
}

/* --html: the annotator's page of the profile pending at SRC (the
 * Callgrind one with call stacks: its calls make the call tree), queued
 * with the profiles.  Rendered in memory like them. */
static void render_html(struct tracer *tr, unsigned src)
{
	char err[256];
	char *name = cgout_expand_name(tr->opt.html, tr->target_pid, err,
				       sizeof(err));
	if (!name) {
		error_msg("--html=%s: %s", tr->opt.html, err);
		tr->had_error = true;
		return;
	}
	if (tr->execs) {
		/* The page of each image after an exec, as FILE.execN for the
		 * profile: r.html, r.exec1.html, ... */
		size_t l = strlen(name);
		bool ext = l > 5 && !strcmp(name + l - 5, ".html");
		char *n = xasprintf("%.*s.exec%u%s", (int)(ext ? l - 5 : l), name,
				    tr->execs, ext ? ".html" : "");
		free(name);
		name = n;
	}
	const char *buf = tr->pending[src].buf;
	size_t len = tr->pending[src].len;
	const char *label = tr->pending[src].name;
	struct prof_error perr;
	FILE *m = pending_open(tr, "--html", name);	/* moves tr->pending */
	int rc = html_write_profile(m, buf, len, label, &perr);
	if (fclose(m) || rc) {
		if (rc > 0)
			error_msg("--html: %s:%llu: %s", perr.name, perr.line,
				  perr.msg);
		else
			error_msg("--html: cannot render the report");
		tr->had_error = true;
		struct pending_output *p = &tr->pending[--tr->n_pending];
		free(p->name);
		free(p->buf);
	}
}

void output_write_profile(struct tracer *tr)
{
	engine_models_sync(&tr->eng);
	if (tr->profile_written)
		return;
	tr->profile_written = true;
	/* --trace-children: a process (or an image before its exec) that
	 * never reached the start event has nothing to show; its empty
	 * profile would only bury the others (issue 26). */
	if (tr->opt.trace_children && window_has_start_event(tr) &&
	    !tr->eng.windows) {
		if (!tr->opt.quiet)
			error_msg("note: process %d (%s): %s: no profile "
				  "written", tr->target_pid, tr->cmd_line,
				  tr->partial_reason ? tr->partial_reason :
				  "no window was traced");
		return;
	}
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
	int src = tr->n_pending;
	FILE *m = pending_open(tr, "-o", xstrdup(tr->out_name));
	cgout_write(m, &meta, sample_costs(tr), tr->syms, tr->totals);
	sample_write_stats(tr, m);
	fclose(m);
	if (tr->eng.cs) {
		int cg = render_call_stacks(tr);
		if (cg >= 0)
			src = cg;
	}
	if (tr->opt.html)
		render_html(tr, src);
}

void output_print_summary(struct tracer *tr)
{
	engine_models_sync(&tr->eng);
	struct engine *e = &tr->eng;
	if (tr->summary_printed || !tr->totals || tr->opt.quiet)
		return;
	tr->summary_printed = true;
	/* In one write: a --trace-children helper's summary and another
	 * process's note on the same stderr must not cut into each other's
	 * lines. */
	char *text = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&text, &len);
	if (!out)
		out = stderr;
	char prefix[32];
	snprintf(prefix, sizeof(prefix), "==%d== ", tr->target_pid);
	fprintf(out, "%s\n", prefix);
	double t = e->t_stepping;
	if (tr->engine == &native_engine) {
		gate_print_summary(tr, out, prefix);
		fprintf(out, "%s\n%sCounted natively in %.2f s by the native "
			"engine", prefix, prefix, t);
	} else {
		cgout_print_summary(out, prefix, tr->n_events,
				    tr->event_names, tr->totals);
		const struct model_resolver res = resolver(tr);
		cache_report(e->cm, out, prefix, &res);
		if (window_cores(tr) > 1 && tr->n_core_log)
			fprintf(out, "%s\n", prefix);
		describe_cores(tr, out, prefix);
		fprintf(out, "%s\n%sTraced %" PRIu64 " instructions in %.2f s "
			"(%.1fk/s) by the %s engine", prefix, prefix, e->steps,
			t, t > 0 ? e->steps / t / 1000 : 0.0, tr->engine->name);
	}
	if (window_has_start_event(tr))
		fprintf(out, ", %u window%s", tr->windows_done,
			tr->windows_done == 1 ? "" : "s");
	if (tr->partial_reason)
		fprintf(out, "; partial profile: %s", tr->partial_reason);
	fputc('\n', out);
	sample_describe(tr, out, prefix, false);
	sample_print_support(tr, out, prefix);
	emu_describe(tr, out, prefix);
	inst_describe(tr, out, prefix);
	proof_describe(&tr->eng, out, prefix);
	int st = tr->target_status;
	if (st >= 0 && WIFEXITED(st))
		fprintf(out, "%sThe target exited with status %d.\n", prefix,
			WEXITSTATUS(st));
	else if (st >= 0 && WIFSIGNALED(st))
		fprintf(out, "%sThe target was killed by signal %d (%s)%s.\n",
			prefix, WTERMSIG(st), strsignal(WTERMSIG(st)),
			WCOREDUMP(st) ? ", core dumped" : "");
	if (out != stderr && fclose(out) == 0) {
		fwrite(text, 1, len, stderr);
		fflush(stderr);
	}
	free(text);
}
