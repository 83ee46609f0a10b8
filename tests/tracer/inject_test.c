/* inject.c against forked children of this program, seized as cachetrace
 * seizes a target:
 *   - a child interrupted in a loop that keeps state in every general
 *     register, the flags and its red zone: getpid injected returns its
 *     pid and leaves every register, the FPU state, the memory under the
 *     stack pointer and the interrupt stop as they were; the saved
 *     registers are a write-back in the guardian's journal; a shared
 *     mapping is made (read and written from both sides, listed in its
 *     maps, no descriptor left), unmapped, made at a hint and refused at
 *     a hint in use; a cached instruction address that is now data is
 *     found again; CACHETRACE_HOST=inject=no refuses; from a
 *     signal-delivery stop of a sigqueue'd signal, the signal arrives with
 *     its value; signals sent meanwhile are pending again, a queued one
 *     with its value; the child then checks its loop's checksum against a
 *     run never stopped, and its handlers' counts;
 *   - a child blocked in read() on a pipe, interrupted (the call to be
 *     restarted): getpid and a mapping injected, then the read completes
 *     with the bytes written after;
 *   - the same in a group stop (SIGSTOP): the stop is a group stop again
 *     (PTRACE_LISTEN accepts it);
 *   - a child spinning inside an rseq critical section: its rseq_cs word
 *     is kept (the kernel clears it when the thread returns to user space
 *     outside the section, at our instruction), so that the section is
 *     aborted when the child runs on, as after any stop;
 *   - a child with a seccomp filter: refused, nothing run. */
#include "tracer.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdlib.h>
#include <stdnoreturn.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/rseq.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "journal.h"
#include "testutil.h"

/* mix_run(limit, stop, iters): mixes rax..r13 and the flags (adc) and
 * three words of its red zone, LIMIT times or (0) until *STOP; the count
 * in *ITERS, a checksum of everything returned.  rip inside it: the
 * child is in its loop. */
__asm__(
	".pushsection .text\n"
	".globl mix_run\n.hidden mix_run\n"
	".globl mix_end\n.hidden mix_end\n"
	".type mix_run, @function\n"
	"mix_run:\n"
	"	push %rbx\n	push %rbp\n	push %r12\n	push %r13\n"
	"	push %r14\n	push %r15\n	push %rdx\n"
	"	mov %rdi, %r15\n	mov %rsi, %r14\n	xor %r13d, %r13d\n"
	"	movabs $0x0123456789abcdef, %rax\n"
	"	movabs $0x1111111111111111, %rbx\n"
	"	movabs $0x2222222222222223, %rcx\n"
	"	movabs $0x3333333333333335, %rdx\n"
	"	movabs $0x4444444444444447, %rsi\n"
	"	movabs $0x5555555555555559, %rdi\n"
	"	movabs $0x666666666666666b, %rbp\n"
	"	movabs $0x777777777777777d, %r8\n"
	"	movabs $0x1234567812345678, %r9\n"
	"	movabs $0x2345678923456789, %r10\n"
	"	movabs $0x3456789a3456789a, %r11\n"
	"	movabs $0x456789ab456789ab, %r12\n"
	"	movq %rax, -8(%rsp)\n	movq %rbx, -64(%rsp)\n"
	"	movq %rcx, -120(%rsp)\n"
	"1:\n"
	"	addq %rbx, %rax\n"
	"	adcq %rcx, %rdx\n"
	"	xorq %rax, %rsi\n"
	"	rolq $13, %rsi\n"
	"	addq %rsi, %rdi\n"
	"	adcq %r8, %r9\n"
	"	xorq %rdi, %r10\n"
	"	rorq $7, %r10\n"
	"	addq %r10, %r11\n"
	"	adcq %r11, %r12\n"
	"	xorq %r12, %rbp\n"
	"	leaq 1(%rbx,%rbp), %rbx\n"
	"	addq %r13, %rcx\n"
	"	xorq %r9, %r8\n"
	"	rolq $5, %r8\n"
	"	xorq -8(%rsp), %rdx\n"
	"	addq -64(%rsp), %r9\n"
	"	xorq -120(%rsp), %r12\n"
	"	movq %rdx, -8(%rsp)\n"
	"	movq %rsi, -64(%rsp)\n"
	"	movq %r11, -120(%rsp)\n"
	"	incq %r13\n"
	"	testq %r15, %r15\n"
	"	jz 2f\n"
	"	cmpq %r15, %r13\n"
	"	jb 1b\n"
	"	jmp 3f\n"
	"2:	cmpl $0, (%r14)\n"
	"	je 1b\n"
	"3:\n"
	"	xorq %rbx, %rax\n	xorq %rcx, %rax\n	xorq %rdx, %rax\n"
	"	xorq %rsi, %rax\n	xorq %rdi, %rax\n	xorq %rbp, %rax\n"
	"	xorq %r8, %rax\n	xorq %r9, %rax\n	xorq %r10, %rax\n"
	"	xorq %r11, %rax\n	xorq %r12, %rax\n	xorq %r13, %rax\n"
	"	xorq %r14, %rax\n"
	"	pop %rdx\n	movq %r13, (%rdx)\n"
	"	pop %r15\n	pop %r14\n	pop %r13\n	pop %r12\n"
	"	pop %rbp\n	pop %rbx\n"
	"	ret\n"
	"mix_end:\n"
	".size mix_run, .-mix_run\n"
	".popsection\n");
uint64_t mix_run(uint64_t limit, volatile int *stop, uint64_t *iters);
extern const char mix_end[];

/* rseq_spin(&rseq_cs): enter a critical section [rseq_start, rseq_post)
 * that spins until the kernel aborts it (to rseq_abort, after glibc's
 * signature), and return. */
__asm__(
	".pushsection .data\n"
	".balign 32\n"
	"rseq_desc:\n"
	"	.long 0, 0\n"
	"	.quad rseq_start, rseq_post - rseq_start, rseq_abort\n"
	".popsection\n"
	".pushsection .text\n"
	".globl rseq_spin\n.hidden rseq_spin\n"
	".globl rseq_start\n.hidden rseq_start\n"
	".type rseq_spin, @function\n"
	"rseq_spin:\n"
	"	leaq rseq_desc(%rip), %rax\n"
	"	movq %rax, (%rdi)\n"
	"rseq_start:\n"
	"	jmp rseq_start\n"
	"rseq_post:\n"
	"	.long 0x53053053\n"		/* RSEQ_SIG */
	"rseq_abort:\n"
	"	ret\n"
	".size rseq_spin, .-rseq_spin\n"
	".popsection\n");
void rseq_spin(volatile uint64_t *rseq_cs);
extern const char rseq_start[];

/* ---- the children ------------------------------------------------------ */

static volatile int stop_flag;		/* set by the parent */
/* Two bytes of a syscall in data: a cached "instruction" that is not
 * executable (the parent points the tracer's cache at it). */
static const volatile uint8_t fake_site[2] __attribute__((aligned(16))) =
	{ 0x0f, 0x05 };
static volatile int usr1_count, usr2_code, usr2_value, rt_code, rt_value;

static void on_usr1(int sig)
{
	(void)sig;
	usr1_count++;
}

static void on_info(int sig, siginfo_t *si, void *uc)
{
	(void)uc;
	if (sig == SIGUSR2) {
		usr2_code = si->si_code;
		usr2_value = si->si_value.sival_int;
	} else {
		rt_code = si->si_code;
		rt_value = si->si_value.sival_int;
	}
}

/* The loop, stopped where the parent likes; exit status 0 when its
 * checksum is that of a run never stopped and each signal came once
 * with its value. */
static noreturn void child_mix(int ready)
{
	struct sigaction sa = { .sa_handler = on_usr1 };
	sigaction(SIGUSR1, &sa, NULL);
	sa.sa_sigaction = on_info;
	sa.sa_flags = SA_SIGINFO;
	sigaction(SIGUSR2, &sa, NULL);
	sigaction(SIGRTMIN, &sa, NULL);
	if (write(ready, "m", 1) != 1)
		_exit(100);
	uint64_t n, n2;
	uint64_t got = mix_run(0, &stop_flag, &n);
	uint64_t want = mix_run(n, &stop_flag, &n2);
	int rc = 0;
	if (got != want || n2 != n)
		rc |= 1;
	if (usr1_count != 1)
		rc |= 2;
	if (usr2_code != SI_QUEUE || usr2_value != 77)
		rc |= 4;
	if (rt_code != SI_QUEUE || rt_value != 42)
		rc |= 8;
	_exit(rc);
}

static noreturn void child_read(int ready, int data)
{
	char buf[16];
	if (write(ready, "r", 1) != 1)
		_exit(100);
	ssize_t n = read(data, buf, sizeof(buf));
	if (n < 0)
		_exit(10);
	_exit(n == 8 && !memcmp(buf, "restart!", 8) ? 0 : 11);
}

static volatile int rseq_go;		/* set by the parent */

/* Aborted out of its critical section once the parent said so: exit 0. */
static noreturn void child_rseq(int ready)
{
	volatile uint64_t *cs = (volatile uint64_t *)
		((char *)__builtin_thread_pointer() + __rseq_offset + 8);
	if (write(ready, "q", 1) != 1)
		_exit(100);
	for (;;) {
		rseq_spin(cs);
		if (rseq_go)
			_exit(0);
	}
}

static noreturn void child_seccomp(int ready)
{
	struct sock_filter allow[] = {
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { 1, allow };
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 ||
	    prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) < 0)
		_exit(100);
	if (write(ready, "s", 1) != 1)
		_exit(100);
	for (;;)
		pause();
}

/* ---- the parent's tools ------------------------------------------------ */

/* main.c's, which tracee.c reads: no signal handlers here. */
volatile sig_atomic_t interrupted_by;
volatile sig_atomic_t toggle_requests;

static struct tracer tr;

static void msleep(int ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
	nanosleep(&ts, NULL);
}

static int wait_stop(pid_t pid)
{
	int status;
	while (waitpid(pid, &status, __WALL) < 0)
		if (errno != EINTR)
			return -1;
	return status;
}

/* Seize the child once it has written its byte to READY. */
static pid_t start(pid_t pid, int ready)
{
	char c;
	if (read(ready, &c, 1) != 1)
		return -1;
	if (ptrace(PTRACE_SEIZE, pid, NULL, (void *)PTRACE_O_TRACEEXIT) < 0)
		return -1;
	return pid;
}

/* Interrupt PID: its PTRACE_EVENT_STOP. */
static bool interrupt(pid_t pid)
{
	if (ptrace(PTRACE_INTERRUPT, pid, NULL, NULL) < 0)
		return false;
	int status = wait_stop(pid);
	return status >= 0 && WIFSTOPPED(status) &&
	       (unsigned)status >> 16 == PTRACE_EVENT_STOP;
}

/* Fork CHILD (it writes a byte to the pipe it is given when it is
 * ready), seize it, let it run MS milliseconds, interrupt it, and make
 * the tracer tr its: its pid, or -1. */
static pid_t spawn_interrupted(void (*child)(int ready), int ms)
{
	int ready[2];
	if (pipe(ready) < 0)
		return -1;
	pid_t pid = fork();
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		child(ready[1]);
		_exit(127);
	}
	if (!CHECK(start(pid, ready[0]) == pid))
		return -1;
	if (ms)
		msleep(ms);
	if (!CHECK(interrupt(pid)))
		return -1;
	memset(&tr, 0, sizeof(tr));
	tr.target_pid = pid;
	return pid;
}

/* Run PID to its end, passing on the signals it stops with; its exit
 * status, or -1 when it died of a signal. */
static int run_to_exit(pid_t pid, int sig)
{
	for (;;) {
		if (ptrace(PTRACE_CONT, pid, NULL, (void *)(long)sig) < 0 &&
		    errno != ESRCH)
			return -2;
		int status = wait_stop(pid);
		if (status < 0)
			return -3;
		if (WIFEXITED(status))
			return WEXITSTATUS(status);
		if (WIFSIGNALED(status)) {
			fprintf(stderr, "child died of signal %d\n",
				WTERMSIG(status));
			return -1;
		}
		sig = (unsigned)status >> 16 ? 0 : WSTOPSIG(status);
	}
}

static unsigned count_fds(pid_t pid)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/fd", pid);
	DIR *d = opendir(path);
	unsigned n = 0;
	struct dirent *de;
	while (d && (de = readdir(d)))
		n += de->d_name[0] != '.';
	if (d)
		closedir(d);
	return n;
}

/* The line of PID's maps that begins at ADDR, in LINE; false if none. */
static bool maps_line(pid_t pid, uint64_t addr, char *line, size_t len)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	FILE *f = fopen(path, "r");
	bool found = false;
	while (f && !found && fgets(line, (int)len, f))
		found = strtoull(line, NULL, 16) == addr;
	if (f)
		fclose(f);
	return found;
}

/* The range of PID's mapping named NAME. */
static bool maps_range(pid_t pid, const char *name, uint64_t *lo,
		       uint64_t *hi)
{
	char path[64], line[512];
	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	FILE *f = fopen(path, "r");
	bool found = false;
	while (f && !found && fgets(line, sizeof(line), f))
		found = strstr(line, name) &&
			sscanf(line, "%" SCNx64 "-%" SCNx64, lo, hi) == 2;
	if (f)
		fclose(f);
	return found;
}

static bool regs_equal(const struct user_regs_struct *a,
		       const struct user_regs_struct *b)
{
	const unsigned long long *x = (const void *)a, *y = (const void *)b;
	bool same = true;
	for (size_t i = 0; i < sizeof(*a) / sizeof(*x); i++)
		if (x[i] != y[i]) {
			fprintf(stderr, "  register word %zu: 0x%llx, was "
				"0x%llx\n", i, y[i], x[i]);
			same = false;
		}
	return same;
}

/* getpid injected into T: its pid, and everything as it was. */
static bool getpid_unchanged(struct tracee *t, const char *when)
{
	struct user_regs_struct before, after;
	struct user_fpregs_struct fp_before, fp_after;
	uint8_t stack_before[512], stack_after[512];
	const long args[6] = { 0 };
	const char *why = NULL;
	long res = 0;
	ptrace(PTRACE_GETREGS, t->tid, NULL, &before);
	ptrace(PTRACE_GETFPREGS, t->tid, NULL, &fp_before);
	tracee_read_mem(t->tid, before.rsp - 512, stack_before, 512);
	int rc = inject_syscall(&tr, t, SYS_getpid, args, &res, &why);
	bool ok = CHECK(rc == 0, "%s: %d (%s)", when, rc, why ? why : "") &&
		  CHECK(res == t->tid, "%s: getpid %ld, want %d", when, res,
			t->tid);
	ptrace(PTRACE_GETREGS, t->tid, NULL, &after);
	ptrace(PTRACE_GETFPREGS, t->tid, NULL, &fp_after);
	tracee_read_mem(t->tid, before.rsp - 512, stack_after, 512);
	ok &= CHECK(regs_equal(&before, &after), "%s", when);
	ok &= CHECK(!memcmp(&fp_before, &fp_after, sizeof(fp_after)), "%s",
		    when);
	ok &= CHECK(!memcmp(stack_before, stack_after, 512), "%s", when);
	return ok;
}

static bool in_event_stop(pid_t tid, int sig)
{
	siginfo_t si;
	return ptrace(PTRACE_GETSIGINFO, tid, NULL, &si) == 0 &&
	       si.si_code == (sig | PTRACE_EVENT_STOP << 8);
}

/* SIG is pending for TID (its own queue or its process's), with VALUE
 * when it was queued (-1: not checked). */
static bool pending(pid_t tid, int sig, int value)
{
	siginfo_t si[32];
	for (int shared = 0; shared < 2; shared++) {
		struct __ptrace_peeksiginfo_args a = {
			0, shared ? PTRACE_PEEKSIGINFO_SHARED : 0, 32 };
		int n = (int)ptrace(PTRACE_PEEKSIGINFO, tid, &a, si);
		for (int i = 0; i < n; i++)
			if (si[i].si_signo == sig &&
			    (value < 0 || (si[i].si_code == SI_QUEUE &&
					   si[i].si_value.sival_int == value)))
				return true;
	}
	return false;
}

/* ---- the tests --------------------------------------------------------- */

static void test_journal(struct tracee *t)
{
	struct journal j;
	struct user_regs_struct regs;
	if (!CHECK(journal_open(&j, t->tid, false) == 0))
		return;
	ptrace(PTRACE_GETREGS, t->tid, NULL, &regs);
	guard_journal = &j;
	getpid_unchanged(t, "journalled");
	guard_journal = NULL;
	struct journal_rec_hdr r;
	memcpy(&r, j.data, sizeof(r));
	CHECK(j.h->wb == 0, "the write-back is still open");
	CHECK_U64(j.h->wb_len, sizeof(r) + sizeof(regs));
	CHECK(r.kind == JREC_REGS && r.tid == t->tid &&
	      r.len == sizeof(regs) &&
	      !memcmp(j.data + sizeof(r), &regs, sizeof(regs)),
	      "the journal does not hold the saved registers");
	journal_close(&j);
}

static void test_maps(struct tracee *t)
{
	pid_t pid = t->tid;
	const size_t len = 64 * 1024;
	char line[512];
	const char *why = NULL;
	uint64_t at = 0;
	void *local = NULL;
	unsigned fds = count_fds(pid);
	struct user_regs_struct regs;
	uint8_t stack_before[1024], stack_after[1024];
	ptrace(PTRACE_GETREGS, pid, NULL, &regs);
	tracee_read_mem(pid, regs.rsp - 1024, stack_before, 1024);

	int rc = inject_map_shared(&tr, t, 0, len, PROT_READ | PROT_WRITE,
				   "cachetrace-test", &at, &local, &why);
	if (!CHECK(rc == 0, "%d (%s)", rc, why ? why : ""))
		return;
	/* the name went below the red zone, and went away */
	tracee_read_mem(pid, regs.rsp - 1024, stack_after, 1024);
	CHECK(!memcmp(stack_before, stack_after, 1024),
	      "the memory below the stack pointer changed");
	uint8_t *p = local, back[64 * 1024];
	for (size_t i = 0; i < len; i++)
		p[i] = (uint8_t)(i * 7 + 3);
	CHECK(tracee_read_mem(pid, at, back, len) == (ssize_t)len &&
	      !memcmp(back, p, len), "the child does not see our bytes");
	struct iovec l = { (void *)"from the child", 15 };
	struct iovec r = { (void *)(uintptr_t)(at + 100), 15 };
	CHECK(process_vm_writev(pid, &l, 1, &r, 1, 0) == 15 &&
	      !memcmp(p + 100, "from the child", 15),
	      "we do not see the child's bytes");
	CHECK(maps_line(pid, at, line, sizeof(line)) &&
	      strstr(line, " rw-s ") && strstr(line, "memfd:cachetrace-test"),
	      "maps: %s", line);
	CHECK(count_fds(pid) == fds, "%u descriptors, were %u",
	      count_fds(pid), fds);

	rc = inject_unmap(&tr, t, at, len, &why);
	CHECK(rc == 0, "munmap: %d (%s)", rc, why);
	CHECK(!maps_line(pid, at, line, sizeof(line)), "still mapped: %s",
	      line);
	munmap(local, len);

	/* At a hint: where it was (free now), then there again (taken). */
	uint64_t hint = at, at2 = 0;
	rc = inject_map_shared(&tr, t, hint, len, PROT_READ | PROT_EXEC,
			       "cachetrace-code", &at2, &local, &why);
	if (CHECK(rc == 0, "at a hint: %d (%s)", rc, why ? why : "")) {
		CHECK(at2 == hint, "0x%" PRIx64 ", hint 0x%" PRIx64, at2, hint);
		CHECK(maps_line(pid, at2, line, sizeof(line)) &&
		      strstr(line, " r-xs "), "maps: %s", line);
		void *local2 = NULL;
		uint64_t at3 = 0;
		why = NULL;
		rc = inject_map_shared(&tr, t, hint, len, PROT_READ,
				       "cachetrace-twice", &at3, &local2, &why);
		CHECK(rc == -EEXIST && why, "a hint in use: %d", rc);
		inject_unmap(&tr, t, at2, len, &why);
		munmap(local, len);
	}
	CHECK(count_fds(pid) == fds, "%u descriptors, were %u",
	      count_fds(pid), fds);
}

static void test_mix(void)
{
	pid_t pid = spawn_interrupted(child_mix, 20);
	if (pid < 0)
		return;
	struct tracee t = { .tid = pid, .flags = TF_STOPPED };
	struct user_regs_struct regs;
	ptrace(PTRACE_GETREGS, pid, NULL, &regs);
	CHECK(regs.rip >= (uintptr_t)mix_run && regs.rip < (uintptr_t)mix_end,
	      "the child is not in its loop: rip 0x%llx", regs.rip);

	/* (1) getpid; the instruction is the vDSO's; the stop is kept */
	getpid_unchanged(&t, "in the loop");
	uint64_t lo, hi;
	CHECK(maps_range(pid, "[vdso]", &lo, &hi) && tr.inject_site >= lo &&
	      tr.inject_site < hi, "site 0x%" PRIx64, tr.inject_site);
	CHECK(in_event_stop(pid, SIGTRAP), "not in its interrupt stop");
	test_journal(&t);

	/* (2) and (3) */
	test_maps(&t);

	/* A cached address that is no instruction any more: bytes 0f 05 in
	 * data fault; found again. */
	tr.inject_site = (uintptr_t)fake_site;
	getpid_unchanged(&t, "after a fault");
	CHECK(tr.inject_site != (uintptr_t)fake_site);

	/* (5) */
	const long args[6] = { 0 };
	const char *why = NULL;
	long res;
	setenv("CACHETRACE_HOST", "inject=no", 1);
	int rc = inject_syscall(&tr, &t, SYS_getpid, args, &res, &why);
	unsetenv("CACHETRACE_HOST");
	CHECK(rc == -EPERM && why && strstr(why, "CACHETRACE_HOST"),
	      "forced: %d", rc);

	/* A signal-delivery stop of a queued signal: delivered afterwards
	 * with its value (the child checks). */
	union sigval v = { .sival_int = 77 };
	sigqueue(pid, SIGUSR2, v);
	ptrace(PTRACE_CONT, pid, NULL, NULL);
	int status = wait_stop(pid);
	CHECK(WIFSTOPPED(status) && WSTOPSIG(status) == SIGUSR2 &&
	      (unsigned)status >> 16 == 0, "status 0x%x", status);
	getpid_unchanged(&t, "in a signal-delivery stop");
	siginfo_t si;
	CHECK(ptrace(PTRACE_GETSIGINFO, pid, NULL, &si) == 0 &&
	      si.si_signo == SIGUSR2 && si.si_code == SI_QUEUE &&
	      si.si_value.sival_int == 77, "its siginfo changed");

	/* Signals that come in the middle: pending again. */
	kill(pid, SIGUSR1);
	v.sival_int = 42;
	sigqueue(pid, SIGRTMIN, v);
	getpid_unchanged(&t, "with signals pending");
	CHECK(pending(pid, SIGUSR1, -1), "SIGUSR1 is not pending");
	CHECK(pending(pid, SIGRTMIN, 42), "SIGRTMIN is not pending with "
	      "its value");

	/* (6) the child ends its loop and checks itself */
	int one = 1;
	struct iovec l = { &one, sizeof(one) };
	struct iovec r = { (void *)&stop_flag, sizeof(one) };
	CHECK(process_vm_writev(pid, &l, 1, &r, 1, 0) == sizeof(one));
	rc = run_to_exit(pid, SIGUSR2);
	CHECK(rc == 0, "the child's exit status %d (1: checksum, 2: SIGUSR1, "
	      "4: SIGUSR2, 8: SIGRTMIN)", rc);

	/* A thread that is gone. */
	why = NULL;
	rc = inject_syscall(&tr, &t, SYS_getpid, args, &res, &why);
	CHECK(rc == -ESRCH && why, "gone: %d", rc);
}

/* PID's thread is asleep in read(). */
static bool in_read(pid_t pid)
{
	char path[64], buf[64];
	snprintf(path, sizeof(path), "/proc/%d/syscall", pid);
	for (int ms = 0; ms < 5000; ms++) {
		int fd = open(path, O_RDONLY);
		ssize_t n = fd < 0 ? -1 : read(fd, buf, sizeof(buf) - 1);
		if (fd >= 0)
			close(fd);
		if (n > 2 && !strncmp(buf, "0 ", 2)) {
			msleep(5);	/* and asleep there */
			return true;
		}
		msleep(1);
	}
	return false;
}

/* An injected call interrupted by a signal (-ERESTARTSYS) runs again:
 * read(SIDE[0]) into the child's mapping AT (LOCAL here), blocking until
 * a helper has sent SIGWINCH (ignored by default, but queued for a traced
 * thread), then written the bytes.  The signal is pending afterwards. */
static void blocking_call(struct tracee *t, uint64_t at, void *local,
			  const int side[2])
{
	pid_t helper = fork();
	if (helper == 0) {
		msleep(100);
		kill(t->tid, SIGWINCH);
		msleep(100);
		_exit(write(side[1], "blocking", 8) == 8 ? 0 : 1);
	}
	const long args[6] = { side[0], (long)at, 8 };
	const char *why = NULL;
	long res = 0;
	int rc = inject_syscall(&tr, t, SYS_read, args, &res, &why);
	CHECK(rc == 0 && res == 8, "read: %d %ld (%s)", rc, res,
	      why ? why : "");
	CHECK(!memcmp(local, "blocking", 8));
	CHECK(pending(t->tid, SIGWINCH, -1), "SIGWINCH is not pending");
	waitpid(helper, NULL, 0);
}

/* (4) A call to be restarted: interrupted (GROUP false) or in a group
 * stop. */
static void test_read(bool group)
{
	const char *what = group ? "group stop" : "interrupt";
	int ready[2], data[2], side[2];
	if (pipe(ready) < 0 || pipe(data) < 0 || pipe(side) < 0)
		return;
	pid_t pid = fork();
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		child_read(ready[1], data[0]);
	}
	if (!CHECK(start(pid, ready[0]) == pid) || !CHECK(in_read(pid)))
		return;
	int stop_sig = SIGTRAP;
	if (!group) {
		if (!CHECK(interrupt(pid)))
			return;
	} else {
		kill(pid, SIGSTOP);
		int status = wait_stop(pid);
		CHECK(WIFSTOPPED(status) && WSTOPSIG(status) == SIGSTOP);
		ptrace(PTRACE_CONT, pid, NULL, (void *)SIGSTOP);
		status = wait_stop(pid);
		CHECK((unsigned)status >> 16 == PTRACE_EVENT_STOP &&
		      WSTOPSIG(status) == SIGSTOP, "not a group stop: 0x%x",
		      status);
		stop_sig = SIGSTOP;
	}
	memset(&tr, 0, sizeof(tr));
	tr.target_pid = pid;
	struct tracee t = { .tid = pid, .flags = TF_STOPPED };
	struct user_regs_struct regs;
	ptrace(PTRACE_GETREGS, pid, NULL, &regs);
	CHECK(regs.orig_rax == SYS_read && (long)regs.rax == -512,
	      "%s: orig_rax %lld rax %lld: not an interrupted read", what,
	      regs.orig_rax, regs.rax);
	getpid_unchanged(&t, what);
	uint64_t at;
	void *local;
	const char *why = NULL;
	if (CHECK(inject_map_shared(&tr, &t, 0, 4096, PROT_READ | PROT_WRITE,
				    "cachetrace-r", &at, &local, &why) == 0,
		  "%s", why)) {
		if (!group)
			blocking_call(&t, at, local, side);
		CHECK(inject_unmap(&tr, &t, at, 4096, &why) == 0);
		munmap(local, 4096);
	}
	ptrace(PTRACE_GETREGS, pid, NULL, &regs);
	CHECK(regs.orig_rax == SYS_read && (long)regs.rax == -512, "%s", what);
	CHECK(in_event_stop(pid, stop_sig), "%s: not in the same stop", what);
	if (group) {
		/* a group stop again: listened to, then continued */
		CHECK(ptrace(PTRACE_LISTEN, pid, NULL, NULL) == 0,
		      "PTRACE_LISTEN: %s", strerror(errno));
		kill(pid, SIGCONT);
		wait_stop(pid);		/* the listen ends with an event stop */
	}
	CHECK(write(data[1], "restart!", 8) == 8);
	int rc = run_to_exit(pid, 0);
	CHECK(rc == 0, "%s: the child's read: exit status %d (10: failed, "
	      "11: wrong bytes)", what, rc);
}

static void test_rseq(void)
{
	if (__rseq_size == 0) {
		fprintf(stderr, "inject_test: glibc registered no rseq area: "
			"rseq not tested\n");
		return;
	}
	pid_t pid = spawn_interrupted(child_rseq, 10);
	if (pid < 0)
		return;
	struct tracee t = { .tid = pid, .flags = TF_STOPPED };
	struct user_regs_struct regs;
	struct __ptrace_rseq_configuration conf;
	uint64_t before = 0, after = 0;
	ptrace(PTRACE_GETREGS, pid, NULL, &regs);
	if (!CHECK(ptrace(PTRACE_GET_RSEQ_CONFIGURATION, pid,
			  (void *)sizeof(conf), &conf) > 0 &&
		   conf.rseq_abi_pointer))
		return;
	tracee_read_mem(pid, conf.rseq_abi_pointer + 8, &before, 8);
	CHECK(regs.rip == (uintptr_t)rseq_start && before,
	      "not in its critical section: rip 0x%llx, rseq_cs 0x%" PRIx64,
	      regs.rip, before);
	getpid_unchanged(&t, "in an rseq critical section");
	tracee_read_mem(pid, conf.rseq_abi_pointer + 8, &after, 8);
	CHECK(after == before, "rseq_cs 0x%" PRIx64 ", was 0x%" PRIx64,
	      after, before);
	int one = 1;
	struct iovec l = { &one, sizeof(one) };
	struct iovec r = { (void *)&rseq_go, sizeof(one) };
	CHECK(process_vm_writev(pid, &l, 1, &r, 1, 0) == sizeof(one));
	/* Not aborted, it would spin for ever. */
	ptrace(PTRACE_CONT, pid, NULL, NULL);
	int status = -1;
	for (int ms = 0; ms < 3000; ms++) {
		if (waitpid(pid, &status, __WALL | WNOHANG) == pid &&
		    !WIFSTOPPED(status))
			break;
		if (WIFSTOPPED(status))
			ptrace(PTRACE_CONT, pid, NULL, NULL);
		status = -1;
		msleep(1);
	}
	CHECK(status != -1 && WIFEXITED(status) && WEXITSTATUS(status) == 0,
	      "the critical section was not aborted (status 0x%x)", status);
	if (status == -1) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, __WALL);
	}
}

static void test_seccomp(void)
{
	pid_t pid = spawn_interrupted(child_seccomp, 0);
	if (pid < 0)
		return;
	struct tracee t = { .tid = pid, .flags = TF_STOPPED };
	const long args[6] = { 0 };
	const char *why = NULL;
	long res = 0;
	int rc = inject_syscall(&tr, &t, SYS_getpid, args, &res, &why);
	CHECK(rc == -EPERM && why && strstr(why, "seccomp"), "%d", rc);
	CHECK(!tr.inject_site, "looked for an instruction all the same");
	kill(pid, SIGKILL);
	waitpid(pid, NULL, __WALL);
}

int main(void)
{
	/* The suite's pass that forces every probe's other answer refuses
	 * injection (CACHETRACE_HOST=...inject=no): this test is of the
	 * injection itself, and forces the refusal where it checks it. */
	unsetenv("CACHETRACE_HOST");
	/* Can we trace a child here at all? */
	pid_t pid = fork();
	if (pid == 0) {
		pause();
		_exit(0);
	}
	int err = ptrace(PTRACE_SEIZE, pid, NULL, NULL) < 0 ? errno : 0;
	kill(pid, SIGKILL);
	waitpid(pid, NULL, __WALL);
	if (err) {
		fprintf(stderr, "inject_test: no ptrace here (%s): skipped\n",
			strerror(err));
		return 77;
	}
	test_mix();
	test_read(false);
	test_read(true);
	test_rseq();
	test_seccomp();
	return test_summary("inject_test");
}
