/* callstack.c on synthetic steps: a forked, stopped copy of this program
 * gives the symbols (and the stack callstack_begin unwinds); the steps are
 * made up here, with pcs inside this program's functions, and every cost
 * is 1 Ir per step, so the expected counts follow by hand:
 *
 *   recursion 50 deep: r self 3, r'2 self 3 * 48 + 2, edges outer -> r
 *     (1 call, 149), r -> r'2 (1, 146), r'2 -> r'2 (48, sum over levels
 *     3..50 of 3 * (50 - k) + 2 = 3480); no stack deeper than r;r'2;
 *   a tail call fa -> fb: both popped by fb's return;
 *   a longjmp out of fa/fb/fc (an indirect jump with rsp back up): the
 *     three frames go, the next cost is outer's;
 *   a return to an unexpected address: unwound again, the cost after it
 *     lands above outer, at the stack the real thread has;
 *   a library mapped after the symbols were read (late_library): its
 *     functions, bare pcs while stepping, are named at the end. */
#include "callstack.h"
#include "callgrind.h"

#include <dlfcn.h>
#include <inttypes.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "testutil.h"

static volatile long sink;

#define BODY                                                                   \
	do {                                                                   \
		for (int i = 0; i < 8; i++)                                    \
			sink += sink * i + 3;                                  \
	} while (0)

__attribute__((noinline)) static void outer(void) { BODY; }
__attribute__((noinline)) static void r(void) { BODY; }
__attribute__((noinline)) static void fa(void) { BODY; }
__attribute__((noinline)) static void fb(void) { BODY; }
__attribute__((noinline)) static void fc(void) { BODY; }

static struct callstack *cs;
static pid_t child;
static struct user_regs_struct cur;

static void step(uint8_t branch, uint8_t len, uint64_t next, uint64_t rsp)
{
	uint64_t *row = callstack_row(cs, cur.rip);
	row[0] += 1;
	struct insn in = { .pc = cur.rip, .len = len, .branch = branch };
	struct user_regs_struct after = cur;
	after.rip = next;
	after.rsp = rsp;
	callstack_step(cs, child, &in, &cur, &after);
	cur = after;
}

static void plain(void) { step(BR_NONE, 1, cur.rip + 1, cur.rsp); }

/* A 5-byte call at the current pc to TARGET; returns the return address. */
static uint64_t call_pc(uint64_t target)
{
	uint64_t ret = cur.rip + 5;
	step(BR_CALL, 5, target, cur.rsp - 8);
	return ret;
}

static uint64_t call(void (*f)(void)) { return call_pc((uintptr_t)f); }

static void ret_to(uint64_t to) { step(BR_RET, 1, to, cur.rsp + 8); }

/* "stack COUNT" lines of the folded output, the PREFIX above outer cut. */
static char folded[64][256];
static uint64_t folded_n[64];
static size_t n_folded;

static void read_folded(const char *prefix)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);
	CHECK(callgrind_write_folded(callstack_profile(cs), m, 0) == 0, "write_folded failed");
	fclose(m);
	n_folded = 0;
	for (char *l = strtok(buf, "\n"); l && n_folded < 64;
	     l = strtok(NULL, "\n")) {
		char *sp = strrchr(l, ' ');
		if (!sp)
			continue;
		*sp = 0;
		const char *s = l;
		size_t pl = strlen(prefix);
		if (!strncmp(s, prefix, pl))
			s += pl;
		else if (pl && strlen(s) == pl - 1 && !strncmp(s, prefix, pl - 1))
			s = "";		/* the thread's own frame: the call */
		else
			s = "(other)";
		snprintf(folded[n_folded], sizeof(folded[0]), "%s", s);
		folded_n[n_folded++] = strtoull(sp + 1, NULL, 10);
	}
	free(buf);
}

static uint64_t folded_count(const char *stack)
{
	for (size_t i = 0; i < n_folded; i++)
		if (!strcmp(folded[i], stack))
			return folded_n[i];
	return 0;
}

/* Callgrind edges "caller callee": calls and the first event. */
struct cg_edge {
	char from[64], to[64];
	uint64_t calls, incl;
};
static struct cg_edge edges[64];
static size_t n_edges;

static void read_callgrind(void)
{
	static const char *const ev[] = { "Ir", "Dr" };
	char *buf = NULL, names[256][64] = { { 0 } }, fn[64] = "", cfn[64] = "";
	size_t len = 0;
	uint64_t calls = 0;
	bool pending = false;
	FILE *m = open_memstream(&buf, &len);
	CHECK(callgrind_write(callstack_profile(cs), m, NULL, "test", ev) == 0,
	      "write_callgrind failed");
	fclose(m);
	n_edges = 0;
	for (char *l = strtok(buf, "\n"); l; l = strtok(NULL, "\n")) {
		char *dst = !strncmp(l, "fn=", 3) ? fn :
			    !strncmp(l, "cfn=", 4) ? cfn : NULL;
		if (dst) {
			char *v = strchr(l, '=') + 1;
			unsigned id;
			int off = 0;
			if (sscanf(v, "(%u)%n", &id, &off) == 1 && id < 256) {
				if (v[off] == ' ')
					snprintf(names[id], 64, "%s", v + off + 1);
				snprintf(dst, 64, "%s", names[id]);
			} else {
				snprintf(dst, 64, "%s", v);
			}
		} else if (!strncmp(l, "calls=", 6)) {
			calls = strtoull(l + 6, NULL, 10);
			pending = true;
		} else if (pending && l[0] >= '0' && l[0] <= '9' &&
			   n_edges < 64) {
			struct cg_edge *e = &edges[n_edges++];
			snprintf(e->from, 64, "%s", fn);
			snprintf(e->to, 64, "%s", cfn);
			e->calls = calls;
			char *p = strchr(l, ' ');
			e->incl = p ? strtoull(p + 1, NULL, 10) : 0;
			pending = false;
		}
	}
	free(buf);
}

static void check_edge(const char *from, const char *to, uint64_t calls,
		       uint64_t incl)
{
	uint64_t c = 0, i = 0;
	for (size_t k = 0; k < n_edges; k++)
		if (!strcmp(edges[k].from, from) && !strcmp(edges[k].to, to)) {
			c += edges[k].calls;
			i += edges[k].incl;
		}
	CHECK(c == calls && i == incl, "edge %s -> %s: %" PRIu64 " calls, %"
	      PRIu64 " Ir; expected %" PRIu64 ", %" PRIu64, from, to, c, i,
	      calls, incl);
}

/* The Callgrind file's fn= blocks named NAME, name compression undone. */
static unsigned fn_blocks(const char *name)
{
	static const char *const ev[] = { "Ir", "Dr" };
	char *buf = NULL, names[256][64] = { { 0 } };
	size_t len = 0;
	unsigned n = 0;
	FILE *m = open_memstream(&buf, &len);
	callgrind_write(callstack_profile(cs), m, NULL, "test", ev);
	fclose(m);
	for (char *l = strtok(buf, "\n"); l; l = strtok(NULL, "\n")) {
		unsigned id;
		int off = 0;
		/* fn= and cfn= share their ids */
		char *v = !strncmp(l, "fn=", 3) ? l + 3 :
			  !strncmp(l, "cfn=", 4) ? l + 4 : NULL;
		if (!v || sscanf(v, "(%u)%n", &id, &off) != 1 || id >= 256)
			continue;
		if (v[off] == ' ')
			snprintf(names[id], 64, "%s", v + off + 1);
		n += v == l + 3 && !strcmp(names[id], name);
	}
	free(buf);
	return n;
}

/* libm, dlopen'ed by a child after sym_open: sin and cos are pcs in no
 * known module while stepping.  Three pcs in no module at all come first,
 * so that the refresh backs off (a refresh for the first finds nothing:
 * skip 1; the third: skip 2) and the two libm pcs of the first window
 * stay bare: sin, and cos + 8.  The second window refreshes for cos and
 * names it; at the end (after the sym_refresh output_write_profile
 * makes), sin is named, and the bare cos + 8 becomes that same cos: one
 * fn= block. */
static void late_library(void)
{
	int fd[2];
	if (!CHECK(pipe(fd) == 0, "pipe"))
		return;
	pid_t pid = fork();
	if (pid == 0) {
		ptrace(PTRACE_TRACEME, 0, NULL, NULL);
		raise(SIGSTOP);
		void *h = dlopen("libm.so.6", RTLD_NOW);
		uint64_t a[2] = { h ? (uintptr_t)dlsym(h, "sin") : 0,
				  h ? (uintptr_t)dlsym(h, "cos") : 0 };
		if (write(fd[1], a, sizeof(a)) != sizeof(a))
			_exit(1);
		raise(SIGSTOP);
		_exit(0);
	}
	int st;
	if (!CHECK(pid > 0 && waitpid(pid, &st, 0) == pid && WIFSTOPPED(st),
		   "cannot trace a second child"))
		return;
	child = pid;
	char err[256];
	struct symbols *syms = sym_open(child, err, sizeof(err));
	CHECK(syms, "sym_open: %s", err);
	cs = syms ? callstack_new(2, syms) : NULL;
	uint64_t a[2] = { 0, 0 };
	if (cs) {
		ptrace(PTRACE_GETREGS, child, NULL, &cur);
		callstack_begin(cs, child, &cur);
		for (uint64_t pc = 0x10000; pc <= 0x30000; pc += 0x10000)
			ret_to(call_pc(pc));
		/* The child maps libm and stops again. */
		ptrace(PTRACE_CONT, child, NULL, NULL);
		CHECK(read(fd[0], a, sizeof(a)) == sizeof(a) && a[0] && a[1],
		      "no sin/cos from the child");
		CHECK(waitpid(child, &st, 0) == child && WIFSTOPPED(st),
		      "the child did not stop after dlopen");
	}
	if (cs && a[0] && a[1]) {
		ret_to(call_pc(a[0]));
		ret_to(call_pc(a[1] + 8));
		callstack_end(cs);
		callstack_begin(cs, child, &cur);
		ret_to(call_pc(a[1]));
		callstack_end(cs);
		CHECK(sym_refresh(syms, err, sizeof(err)) == 0, "%s", err);
		struct src_loc sin_loc, cos_loc;
		sym_lookup(syms, a[0], &sin_loc);
		sym_lookup(syms, a[1], &cos_loc);
		CHECK(strcmp(sin_loc.fn, "???") && strcmp(cos_loc.fn, "???"),
		      "libm's sin and cos have no symbols");
		CHECK(fn_blocks(sin_loc.fn) == 1, "%u fn= blocks of %s, "
		      "expected 1", fn_blocks(sin_loc.fn), sin_loc.fn);
		CHECK(fn_blocks(cos_loc.fn) == 1, "%u fn= blocks of %s, "
		      "expected 1", fn_blocks(cos_loc.fn), cos_loc.fn);
		char *buf = NULL;
		size_t len = 0;
		FILE *m = open_memstream(&buf, &len);
		callgrind_write_folded(callstack_profile(cs), m, 0);
		fclose(m);
		if (getenv("CS_DEBUG"))
			printf("%s", buf);
		CHECK(!strstr(buf, "0x00007f"), "a library pc left bare in the "
		      "folded stacks:\n%s", buf);
		free(buf);
	}
	callstack_free(cs);
	sym_close(syms);
	close(fd[0]);
	close(fd[1]);
	kill(child, SIGKILL);
	waitpid(child, &st, 0);
}

/* --bench N: the cost of callstack_row + callstack_step per step, N
 * steps looping over 32 pcs of outer() with a call to fa() and its return
 * every 16 steps. */
static int bench(long n)
{
	double t0, t1;
	struct timespec ts;
	uint64_t base = (uintptr_t)outer + 8;

	call(outer);
	step(BR_COND, 2, base, cur.rsp);
	clock_gettime(CLOCK_MONOTONIC, &ts);
	t0 = ts.tv_sec + ts.tv_nsec / 1e9;
	for (long i = 0; i < n; i++) {
		if ((i & 15) == 15) {
			uint64_t ra = call(fa);
			ret_to(ra);
			continue;
		}
		step(BR_COND, 2, base + (i & 15), cur.rsp);
	}
	clock_gettime(CLOCK_MONOTONIC, &ts);
	t1 = ts.tv_sec + ts.tv_nsec / 1e9;
	printf("callstack_row + callstack_step: %.1f ns per step (%ld steps, "
	       "1 call in 16)\n", (t1 - t0) / n * 1e9, n);
	return 0;
}

int main(int argc, char **argv)
{
	child = fork();
	if (child == 0) {
		ptrace(PTRACE_TRACEME, 0, NULL, NULL);
		raise(SIGSTOP);
		_exit(0);
	}
	int st;
	if (child < 0 || waitpid(child, &st, 0) != child || !WIFSTOPPED(st)) {
		/* our own set-up failing is a failure, never a skip */
		puts("cannot trace a child here");
		return 1;
	}
	char err[256];
	struct symbols *syms = sym_open(child, err, sizeof(err));
	if (!syms) {
		printf("sym_open: %s\n", err);
		kill(child, SIGKILL);
		return 1;
	}
	void (*fns[])(void) = { outer, r, fa, fb, fc };
	for (size_t i = 0; i < 5; i++) {
		uint64_t lo, hi;
		CHECK(sym_function_range(syms, (uintptr_t)fns[i], &lo, &hi,
					 NULL) == 0 && hi - lo >= 32,
		      "function %zu: no symbol of 32 bytes or more", i);
	}
	if (test_failures) {
		kill(child, SIGKILL);
		return 1;
	}
	cs = callstack_new(2, syms);
	CHECK(cs, "callstack_new failed");
	ptrace(PTRACE_GETREGS, child, NULL, &cur);
	CHECK(callstack_begin(cs, child, &cur) == 0,
	      "no stack unwound for a thread stopped in raise()");

	if (argc > 2 && !strcmp(argv[1], "--bench")) {
		int rc = bench(atol(argv[2]));
		callstack_free(cs);
		sym_close(syms);
		kill(child, SIGKILL);
		waitpid(child, &st, 0);
		return rc;
	}

	uint64_t base_ret = call(outer);
	plain();			/* outer: 1 */

	/* Recursion, 50 levels. */
	uint64_t rets[51];
	for (int k = 1; k <= 50; k++) {
		rets[k] = call(r);
		plain();		/* r + 0 */
		if (k == 50)
			break;
		cur.rip = (uintptr_t)r + 1;
	}
	for (int k = 50; k >= 1; k--) {
		if (k < 50)
			cur.rip = rets[k + 1];	/* r + 6, after the call */
		ret_to(rets[k]);
	}
	/* The calls above came from r + 1; the first from outer. */

	/* A tail call: fa jumps to fb, whose return pops both. */
	plain();
	uint64_t ra = call(fa);
	plain();
	step(BR_JMP, 5, (uintptr_t)fb, cur.rsp);
	plain();
	ret_to(ra);
	plain();			/* outer again */

	/* longjmp out of fa, fb, fc. */
	uint64_t outer_rsp = cur.rsp;
	uint64_t landing = cur.rip + 3;
	call(fa);
	plain();
	call(fb);
	plain();
	call(fc);
	plain();
	step(BR_JMP_IND, 2, landing, outer_rsp);
	plain();			/* outer, after the jump */

	/* A return to the wrong place: unwound again. */
	call(fa);
	plain();
	ret_to(base_ret + 1);

	callstack_end(cs);

	/* The real thread's stack above outer: the first stack line. */
	char prefix[256] = "";
	{
		char *buf = NULL;
		size_t len = 0;
		FILE *m = open_memstream(&buf, &len);
		callgrind_write_folded(callstack_profile(cs), m, 0);
		fclose(m);
		char *o = strstr(buf, ";outer ");
		if (o) {
			char *start = o;
			while (start > buf && start[-1] != '\n')
				start--;
			snprintf(prefix, sizeof(prefix), "%.*s",
				 (int)(o - start + 1), start);
		}
		free(buf);
	}
	CHECK(prefix[0], "no stack ends in outer");
	if (getenv("CS_DEBUG")) {
		char *buf = NULL;
		size_t len = 0;
		FILE *m = open_memstream(&buf, &len);
		callgrind_write_folded(callstack_profile(cs), m, 0);
		fclose(m);
		printf("prefix '%s'\n%s", prefix, buf);
		free(buf);
	}
	read_folded(prefix);
	/* outer: 1 + call r + plain + call fa + plain (after the return)
	 * + call fa + plain (after the jump) + call fa = 8 */
	CHECK(folded_count("") == 1, "the first call %" PRIu64 ", expected 1",
	      folded_count(""));
	CHECK(folded_count("outer") == 8, "outer self %" PRIu64 ", expected 8",
	      folded_count("outer"));
	CHECK(folded_count("outer;r") == 3, "r self %" PRIu64 ", expected 3",
	      folded_count("outer;r"));
	CHECK(folded_count("outer;r;r'2") == 3 * 48 + 2,
	      "r'2 self %" PRIu64 ", expected 146", folded_count("outer;r;r'2"));
	CHECK(folded_count("outer;fa;fb") == 2 + 2,
	      "fb (tail call, then under the longjmp) %" PRIu64 ", expected 4",
	      folded_count("outer;fa;fb"));
	CHECK(folded_count("outer;fa;fb;fc") == 2,
	      "fc %" PRIu64 ", expected 2 (plain, the jump)",
	      folded_count("outer;fa;fb;fc"));
	/* fa: plain + jmp; plain + call fb; plain + ret */
	CHECK(folded_count("outer;fa") == 6, "fa self %" PRIu64 ", expected 6",
	      folded_count("outer;fa"));
	for (size_t i = 0; i < n_folded; i++)
		CHECK(!strstr(folded[i], "r'2;r'2") &&
		      !strstr(folded[i], "(other)"),
		      "unexpected stack %s", folded[i]);

	read_callgrind();
	check_edge("outer", "r", 1, 149);
	check_edge("r", "r'2", 1, 146);
	check_edge("r'2", "r'2", 48, 3480);
	/* fa -> fb: the tail call (fb's plain, ret), then fb's plain and
	 * call and fc's plain and jump */
	check_edge("fa", "fb", 2, 2 + 4);
	check_edge("fb", "fc", 1, 2);
	/* outer -> fa: tail (plain, jmp, plain, ret), longjmp (fa: plain,
	 * call; fb: plain, call; fc: plain, jmp), wrong return (plain, ret) */
	check_edge("outer", "fa", 3, 4 + 6 + 2);

	callstack_free(cs);
	sym_close(syms);
	kill(child, SIGKILL);
	waitpid(child, &st, 0);

	late_library();
	return test_summary("test-callstack");
}
