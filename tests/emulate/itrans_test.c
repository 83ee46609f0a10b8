/* The instrument engine's translator (src/engine/itrans.c), in one
 * process and no ptrace: functions of this file are translated into a
 * code cache mapped near them and run from it, their exits caught by a
 * handler that plays the supervisor (the exits' getpid made a SIGSYS by a
 * seccomp filter, as PTRACE_SYSEMU makes it a stop; it translates the exit's
 * target and goes on there; a return it executes itself, so that the
 * caller's code runs from the cache too).  Checked:
 *   - every function returns what it returns natively (the copies, the
 *     rip-relative operands moved, the scratch registers chosen among the
 *     ones a block does not use, the flags kept across the logging);
 *   - the ring holds exactly the loads of a loop over an array, in order,
 *     as the loop makes them (worked out from the source, not from the
 *     translator), and a global's read-modify-write as a read and a
 *     write of its address;
 *   - itrans_locate's answers at each point of a block's code;
 *   - string instructions run from the cache, their records worked out
 *     from the source;
 *   - the instructions the cache refuses. */
#include <asm/prctl.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <signal.h>
#include <stddef.h>
#include <sys/prctl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <ucontext.h>
#include <unistd.h>

#include "decode.h"
#include "itrans.h"
#include "testutil.h"

/* The functions under test: uninstrumented, in a section of their own
 * (a return into it goes on in the cache). */
#define NOSAN __attribute__((noinline, no_sanitize_address, \
			     no_sanitize("undefined"), section("ctcache")))
extern const char __start_ctcache[], __stop_ctcache[];

static struct itrans *x;
static struct decoder *dec;
static uint8_t *cache;
static uint64_t *ring;		/* the slot, then the ring */
static unsigned exits, returns, indirect, fills;
#define RING_LEN (1u << 20)	/* the records' room */
static pid_t self_pid;		/* getpid is the exits' from now on */

/* ---- functions run from the cache ---- */

static int arr[64];
static uint64_t counter;

NOSAN static long sum(const int *a, unsigned n)
{
	long s = 0;
	for (unsigned i = 0; i < n; i++)
		s += a[i];
	return s;
}

NOSAN static uint64_t bump(uint64_t by)
{
	counter += by;			/* a read-modify-write, rip-relative */
	return counter;
}

NOSAN static unsigned fib(unsigned n)
{
	return n < 2 ? n : fib(n - 1) + fib(n - 2);
}

NOSAN static uint64_t many(uint64_t s)
{
	uint64_t a = s, b = s + 1, c = s + 2, d = s + 3, e = s + 4, f = s + 5;
	uint64_t g = s + 6, h = s + 7, i = s + 8, j = s + 9, k = s + 10;
	uint64_t l = s + 11, m = s + 12;
	for (unsigned n = 0; n < 50; n++) {
		a += b ^ (uint64_t)arr[n & 63]; b += c * 3; c ^= d + n;
		d += e >> 1; e ^= f + 7; f += g ^ a; g += h; h ^= i << 2;
		i += j; j ^= k + a; k += l; l ^= m * 5; m += a ^ n;
		__asm__ volatile("" : "+r"(a), "+r"(b), "+r"(c), "+r"(d),
				 "+r"(e), "+r"(f), "+r"(g), "+r"(h), "+r"(i),
				 "+r"(j), "+r"(k), "+r"(l), "+r"(m));
	}
	return a + b + c + d + e + f + g + h + i + j + k + l + m;
}

/* Indirect calls through a table of pointers, and a switch's jump
 * table (an indirect jmp, notrack under -fcf-protection). */
NOSAN static int add1(int v) { return v + 1; }
NOSAN static int dbl(int v) { return v * 2; }
static int (*volatile ops[2])(int) = { add1, dbl };

NOSAN static int apply(unsigned n)
{
	int s = 0;
	for (unsigned i = 0; i < n; i++)
		s = ops[i & 1](s + (int)i);
	return s;
}

NOSAN static int sw(unsigned n)
{
	int s = 0;
	for (unsigned i = 0; i < n; i++)
		switch ((i * 7 + (unsigned)s) % 9) {
		case 0: s += 3; break;
		case 1: s ^= 5; break;
		case 2: s -= 7; break;
		case 3: s *= 3; break;
		case 4: s += (int)i; break;
		case 5: s ^= (int)i << 1; break;
		case 6: s -= 11; break;
		case 7: s += 13; break;
		default: s = s / 2 + 1; break;
		}
	return s;
}

/* Flags set before a load and tested after it: the logging must keep
 * them. */
NOSAN static int flags_kept(const int *a, int v)
{
	int r;
	__asm__ volatile("cmp %2, %1\n\t"
			 "mov (%3), %%ecx\n\t"
			 "sete %b0\n\t"
			 "movzbl %b0, %0"
			 : "=&r"(r) : "r"(v), "r"(7), "r"(a) : "rcx", "cc");
	return r;
}

/* A string copy, then a fill after it: a block of its own each
 * (IEND_STR), whose record is rcx, rsi and rdi before and after. */
NOSAN static uint64_t copy_fill(uint8_t *dst, const uint8_t *src)
{
	uint64_t n = 100, m = 5, v = 0x0101010101010101ull;
	__asm__ volatile("rep movsb" : "+D"(dst), "+S"(src), "+c"(n)
			 : : "memory");
	__asm__ volatile("rep stosq" : "+D"(dst), "+c"(m) : "a"(v)
			 : "memory");
	return (uint64_t)dst;
}

/* A compare that stops at the first difference: its record has ZF after
 * it too. */
NOSAN static uint64_t cmp_until(const uint8_t *p, const uint8_t *q)
{
	uint64_t n = 64;
	__asm__ volatile("repe cmpsb" : "+D"(p), "+S"(q), "+c"(n)
			 : : "memory", "cc");
	return n;
}

/* ---- the supervisor's part ---- */

static ssize_t read_self(void *ctx, uint64_t addr, void *buf, size_t len)
{
	(void)ctx;
	struct iovec l = { buf, len }, r = { (void *)addr, len };
	ssize_t n = process_vm_readv(self_pid, &l, 1, &r, 1, 0);
	return n < 0 ? -1 : n;
}

static ssize_t no_xstate(void *ctx, void *buf, size_t len)
{
	(void)ctx; (void)buf; (void)len;
	return -1;
}

/* Where the cache goes on from PC, or 0 (PC runs natively). */
static uint64_t entry_of(uint64_t pc)
{
	const char *why;
	const struct iblock *b = itrans_block(x, dec, pc, 0, &why);
	return b ? itrans_entry(x, b) : 0;
}

static bool ours(uint64_t pc)
{
	return pc >= (uint64_t)__start_ctcache && pc < (uint64_t)__stop_ctcache;
}

static void on_trap(int sig, siginfo_t *si, void *uv)
{
	(void)sig; (void)si;
	ucontext_t *uc = uv;
	greg_t *g = uc->uc_mcontext.gregs;
	const struct iblock *b;
	const struct iexit *e = itrans_exit_at(x, (uint64_t)g[REG_RIP], &b);
	if (!e)
		abort();
	/* The stub's registers, as the supervisor takes them back. */
	g[REG_RAX] = (greg_t)ring[ISLOT_XRAX / 8];
	g[REG_RCX] = (greg_t)ring[ISLOT_XRCX / 8];
	g[REG_R11] = (greg_t)ring[ISLOT_XR11 / 8];
	exits++;
	uint64_t to = e->target, at;
	if (e->fill) {
		/* the ring is full: read (here, dropped), the block again */
		CHECK_U64(to, b->pc);
		ring[ISLOT_CUR / 8] = (uint64_t)(ring + ISLOT_SIZE / 8);
		fills++;
	}
	if (e->ret_miss || e->ind_miss) {
		/* A return or an indirect jmp or call the table does not
		 * know: ours to finish, into the cache (and its table) when
		 * it goes to a function under test. */
		if (e->ret_miss) {
			to = *(uint64_t *)g[REG_RSP];
			g[REG_RSP] += 8;
		} else {
			to = ring[ISLOT_TGT / 8];
			indirect++;
		}
		if (b->kind == IEND_ICALL) {
			const struct insn *call = b->in[b->n - 1];
			g[REG_RSP] -= 8;
			*(uint64_t *)g[REG_RSP] = call->pc + call->len;
		}
		at = 0;
		if (ours(to)) {
			const char *why;
			const struct iblock *nb = itrans_block(x, dec, to, 0,
							       &why);
			returns += e->ret_miss;
			if (nb) {
				itrans_ret_add(x, (uint8_t *)ring + ISLOT_TBL,
					       to, nb);
				at = itrans_entry(x, nb);
			}
		}
	} else {
		at = entry_of(to);
	}
	g[REG_RIP] = (greg_t)(at ? at : to);
}

/* Run FN(ARG...) from the cache: its entry block's code is called as the
 * function itself. */
typedef uint64_t (*fn2)(uint64_t, uint64_t);
static uint64_t run(void *fn, uint64_t a0, uint64_t a1)
{
	uint64_t at = entry_of((uint64_t)fn);
	if (!at)
		return ~0ull;
	return ((fn2)at)(a0, a1);
}

/* The string instructions' records ring_addrs met. */
static uint64_t str_rec[4][7];
static unsigned n_str;

/* The addresses of the records from the ring's start to the cursor, and
 * the kinds of the accesses they are. */
static size_t ring_addrs(uint64_t *out, uint8_t *kind, size_t max)
{
	uint64_t end = ring[ISLOT_CUR / 8];
	const uint64_t *w = ring + ISLOT_SIZE / 8;
	size_t nw = (end - (uint64_t)w) / 8, p = 0, n = 0;
	n_str = 0;
	while (p < nw) {
		const struct iblock *b = itrans_by_id(x, w[p++]);
		if (!b)
			return n;
		if (b->kind == IEND_STR) {
			if (n_str < 4)
				memcpy(str_rec[n_str++], w + p, b->n_addr * 8);
			p += b->n_addr;
			continue;
		}
		for (unsigned i = 0; i < b->n; i++) {
			const struct decode_lean *l = decode_lean(b->in[i]);
			for (unsigned j = 0; j < l->n_acc; j++, p++)
				if (n < max) {
					kind[n] = l->acc[j].kind;
					out[n++] = w[p];
				}
		}
	}
	return n;
}

/* String record K is WANT: rcx, rsi and rdi before, then after. */
static void check_str_rec(unsigned k, const uint64_t *want)
{
	for (unsigned i = 0; i < 6; i++)
		CHECK_U64(str_rec[k][i], want[i]);
}

static uint64_t addrs_scratch[1];
static uint8_t kinds_scratch[1];

static void ring_reset(void)
{
	ring[ISLOT_CUR / 8] = (uint64_t)(ring + ISLOT_SIZE / 8);
}

/* A cache within reach of this program's code: the first free range
 * above it. */
static uint8_t *map_cache(size_t len)
{
	uint64_t at = ((uint64_t)&sum + (1u << 30)) & ~0xfffffull;
	for (unsigned i = 0; i < 64; i++, at += 16u << 20) {
		void *p = mmap((void *)at, len, PROT_READ | PROT_WRITE |
			       PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS |
			       MAP_FIXED_NOREPLACE, -1, 0);
		if (p == (void *)at)
			return p;
		if (p != MAP_FAILED)
			munmap(p, len);
	}
	return NULL;
}

static void test_locate(void)
{
	const char *why;
	const struct iblock *b = itrans_block(x, dec, (uint64_t)&sum, 0, &why);
	struct ipos pos;
	if (!CHECK(b, "%s", why))
		return;
	uint64_t base = itrans_entry(x, b) - b->off;
	/* What a guardian reads: the header. */
	struct itrans_hdr h;
	memcpy(&h, cache + b->off - ITRANS_HDR, sizeof(h));
	CHECK(h.magic == ITRANS_MAGIC && h.pc == b->pc && h.rt == b->rt);
	CHECK(b->rt != 1, "rT is rcx");
	CHECK(b->exit[b->n_exit - 1].fill);
	for (unsigned j = 0; j < b->n_exit; j++) {
		uint64_t to;
		const uint8_t *st = cache + b->exit[j].stub;
		memcpy(&to, st + ITRANS_STUB - 8, 8);
		CHECK(st[ITRANS_STUB_SC - 2] == 0x0f &&
		      st[ITRANS_STUB_SC - 1] == 0x05 && to == b->exit[j].target);
	}
	CHECK(itrans_locate(x, base + b->off, &pos) && pos.done == 0 &&
	      pos.pc == b->pc && !pos.rt_spilled && !pos.rt_live);
	CHECK(itrans_locate(x, base + b->probe, &pos) && !pos.prcx_spilled &&
	      pos.rt_live && pos.rt_spilled && pos.done == 0);
	/* the ring-full check: rcx in its slot, then at the jmp to the fill
	 * exit rcx and rT back, then in the fill exit's stub */
	CHECK(itrans_locate(x, base + b->chk, &pos) && pos.prcx_spilled &&
	      pos.rt_live && pos.done == 0 && pos.pc == b->pc);
	CHECK(itrans_locate(x, base + b->full, &pos) && pos.prcx_spilled);
	CHECK(itrans_locate(x, base + b->full + 18, &pos) &&
	      !pos.prcx_spilled && !pos.rt_live && !pos.rt_spilled &&
	      pos.done == 0);
	CHECK(itrans_locate(x, base + b->full + 23, &pos) &&
	      pos.prcx_spilled && pos.rt_live);
	uint32_t fs = b->exit[b->n_exit - 1].stub;
	CHECK(itrans_locate(x, base + fs + ITRANS_STUB_SC, &pos) &&
	      pos.done == 0 && pos.pc == b->pc && pos.xrax && !pos.rt_live &&
	      !pos.rt_spilled && !pos.prcx_spilled && !pos.rt_bumped);
	for (unsigned i = 0; i < b->n; i++) {
		CHECK(itrans_locate(x, base + b->copy[i], &pos) &&
		      pos.done == i && pos.pc == b->in[i]->pc,
		      "instruction %u", i);
		if (b->rs[i] != 16 && i + 1 < b->n)
			CHECK(pos.rs == b->rs[i] && pos.rs_spilled);
	}
	CHECK(itrans_locate(x, base + b->ep_rest, &pos) && pos.rt_bumped &&
	      pos.cur_bumped && !pos.rt_live);
	CHECK(!itrans_locate(x, base + b->end + (1u << 20), &pos));
}

int main(void)
{
	static const struct decode_target t = { .read_mem = read_self,
						.read_xstate = no_xstate };
	const char *err;
	dec = decode_new(&t, &err);
	if (!CHECK(dec, "%s", err))
		return test_summary("itrans");
	decode_set_chase(dec, true);
	size_t clen = 4u << 20;
	cache = map_cache(clen);
	if (!CHECK(cache, "no room for a cache near the code"))
		return test_summary("itrans");
	/* The ring, and its shadow: 0 for the records, 1 past them. */
	size_t rlen = ISLOT_SIZE + RING_LEN;
	ring = mmap(NULL, rlen, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uint8_t *shadow = mmap(NULL, RING_LEN + 4096, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (!CHECK(ring != MAP_FAILED && shadow != MAP_FAILED))
		return test_summary("itrans");
	memset(shadow + RING_LEN, 1, 4096);
	int64_t sd = shadow - ((uint8_t *)ring + ISLOT_SIZE);
	if (!CHECK(sd > INT32_MIN / 2 && sd < INT32_MAX / 2,
		   "the shadow is out of a disp32's reach"))
		return test_summary("itrans");
	x = itrans_new(cache, (uint64_t)cache, clen, 1u << 24, (int32_t)sd);
	ring_reset();
	struct sigaction sa = { 0 };
	sa.sa_sigaction = on_trap;
	sa.sa_flags = SA_SIGINFO;
	sigaction(SIGSYS, &sa, NULL);
	self_pid = getpid();
	/* getpid (the exits' system call) traps: SIGSYS, not run. */
	struct sock_filter filt[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
			 offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, ITRANS_STUB_NR, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_TRAP),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { sizeof(filt) / sizeof(filt[0]), filt };
	CHECK(prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0 &&
	      prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) == 0);
	CHECK(syscall(SYS_arch_prctl, ARCH_SET_GS, ring) == 0);

	/* The loop over an array: its loads, in order. */
	for (int i = 0; i < 64; i++)
		arr[i] = i * 3 + 1;
	long want = sum(arr, 64);
	long got = (long)run((void *)&sum, (uint64_t)arr, 64);
	CHECK_U64((uint64_t)got, (uint64_t)want);
	uint64_t addrs[4096];
	uint8_t kinds[4096];
	size_t n = ring_addrs(addrs, kinds, 4096), k = 0;
	for (size_t i = 0; i < n; i++)
		if (addrs[i] >= (uint64_t)arr && addrs[i] < (uint64_t)(arr + 64)) {
			CHECK_U64(addrs[i], (uint64_t)&arr[k]);
			CHECK(kinds[i] == ACC_READ);
			k++;
		}
	CHECK_U64(k, 64);
	CHECK_U64(fills, 0);

	/* The ring full at the first block: out through its fill exit,
	 * read, the block run again from the ring's start. */
	ring[ISLOT_CUR / 8] = (uint64_t)(ring + (ISLOT_SIZE + RING_LEN) / 8 - 1);
	got = (long)run((void *)&sum, (uint64_t)arr, 64);
	CHECK_U64((uint64_t)got, (uint64_t)want);
	CHECK_U64(fills, 1);
	n = ring_addrs(addrs, kinds, 4096);
	k = 0;
	for (size_t i = 0; i < n; i++)
		k += addrs[i] >= (uint64_t)arr && addrs[i] < (uint64_t)(arr + 64);
	CHECK_U64(k, 64);
	/* with room for half of the run's records: full midway, in the
	 * loop */
	ring_reset();
	got = (long)run((void *)&sum, (uint64_t)arr, 64);
	uint64_t per = ring[ISLOT_CUR / 8] - (uint64_t)(ring + ISLOT_SIZE / 8);
	ring[ISLOT_CUR / 8] = (uint64_t)(ring + (ISLOT_SIZE + RING_LEN) / 8) -
			      per / 2;
	fills = 0;
	CHECK_U64((uint64_t)run((void *)&sum, (uint64_t)arr, 64),
		  (uint64_t)want);
	CHECK_U64(fills, 1);

	/* A global's read-modify-write through a moved rip-relative
	 * operand: one read and one write of it (or one modify). */
	ring_reset();
	counter = 5;
	CHECK_U64(run((void *)&bump, 7, 0), 12);
	CHECK_U64(counter, 12);
	n = ring_addrs(addrs, kinds, 4096);
	unsigned rd = 0, wr = 0;
	for (size_t i = 0; i < n; i++)
		if (addrs[i] == (uint64_t)&counter) {
			rd += kinds[i] == ACC_READ || kinds[i] == ACC_MODIFY;
			wr += kinds[i] == ACC_WRITE || kinds[i] == ACC_MODIFY;
		}
	CHECK(rd >= 1 && wr >= 1, "%u reads, %u writes", rd, wr);

	/* Calls and returns inside the cache. */
	ring_reset();
	unsigned r0 = returns;
	unsigned e0 = exits;
	CHECK_U64(run((void *)&fib, 12, 0), 144);
	/* fib(12) makes 465 calls: the returns inside fib are looked up
	 * in the cache's table, each return address missed once. */
	CHECK(returns - r0 >= 1 && returns - r0 < 10, "%u returns missed",
	      returns - r0);
	CHECK(exits - e0 < 20, "%u exits", exits - e0);

	/* Thirteen live values: the registers picked must be free ones. */
	ring_reset();
	uint64_t m = many(3);
	CHECK_U64(run((void *)&many, 3, 0), m);

	/* Flags across a logged load. */
	ring_reset();
	int seven = 7;
	CHECK_U64(run((void *)&flags_kept, (uint64_t)&seven, 7), 1);
	CHECK_U64(run((void *)&flags_kept, (uint64_t)&seven, 8), 0);
	CHECK(exits > 0);

	/* Indirect calls and jumps: their destinations looked up in the
	 * cache's table, each missed once. */
	ring_reset();
	unsigned i0 = indirect;
	int want_apply = apply(200);
	CHECK_U64((uint64_t)(int64_t)(int)run((void *)&apply, 200, 0),
		  (uint64_t)(int64_t)want_apply);
	CHECK(indirect - i0 >= 2 && indirect - i0 < 6, "%u misses",
	      indirect - i0);
	ring_reset();
	i0 = indirect;
	int want_sw = sw(500);
	CHECK_U64((uint64_t)(int64_t)(int)run((void *)&sw, 500, 0),
		  (uint64_t)(int64_t)want_sw);
	CHECK(indirect - i0 >= 2 && indirect - i0 <= 12, "%u misses",
	      indirect - i0);

	test_locate();

	/* String instructions in the cache: the copy and the fill done,
	 * their records (rcx, rsi, rdi before, then after) as the source
	 * says: 100 bytes from src to dst, then 5 quadwords after them. */
	ring_reset();
	static uint8_t src[100], dst[160];
	for (unsigned i = 0; i < sizeof(src); i++)
		src[i] = (uint8_t)(i * 7 + 1);
	CHECK_U64(run((void *)&copy_fill, (uint64_t)dst, (uint64_t)src),
		  (uint64_t)(dst + 140));
	CHECK(!memcmp(dst, src, sizeof(src)));
	CHECK_U64(dst[139], 1);
	ring_addrs(addrs_scratch, kinds_scratch, 1);
	CHECK_U64(n_str, 2);
	const uint64_t want_mov[6] = { 100, (uint64_t)src, (uint64_t)dst,
				       0, (uint64_t)(src + 100),
				       (uint64_t)(dst + 100) };
	check_str_rec(0, want_mov);
	CHECK_U64(str_rec[1][0], 5);
	CHECK_U64(str_rec[1][2], (uint64_t)(dst + 100));
	CHECK_U64(str_rec[1][3], 0);
	CHECK_U64(str_rec[1][4], str_rec[1][1]);
	CHECK_U64(str_rec[1][5], (uint64_t)(dst + 140));

	/* repe cmpsb over 64 bytes that differ first at byte 40: 41
	 * compared, rcx 23 left, ZF clear (the record's seventh word's low
	 * byte). */
	ring_reset();
	dst[40] ^= 0xff;
	CHECK_U64(run((void *)&cmp_until, (uint64_t)src, (uint64_t)dst), 23);
	ring_addrs(addrs_scratch, kinds_scratch, 1);
	CHECK_U64(n_str, 1);
	const uint64_t want_cmp[6] = { 64, (uint64_t)dst, (uint64_t)src,
				       23, (uint64_t)(dst + 41),
				       (uint64_t)(src + 41) };
	check_str_rec(0, want_cmp);
	CHECK_U64(str_rec[0][6] & 0xff, 0);

	/* String instructions, by their opcode: Capstone gives SSE2's movsd
	 * and cmpsd the string instructions' ids (python3.11 failed to
	 * start when its movsd xmm1, [rip + x] ran as a string move). */
	static const uint8_t code[] = {
		0xf2, 0x0f, 0x10, 0x0d, 0, 0, 0, 0,	/* movsd xmm1, [rip] */
		0xa5,					/* movsd (string) */
		0xf3, 0x48, 0xab,			/* rep stosq */
		0xf2, 0x0f, 0xc2, 0xc1, 0x01,		/* cmpsd xmm0, xmm1, 1 */
		0xf3, 0xa6,				/* repe cmpsb */
	};
	const char *err2;
	const struct insn *i1 = decode_insn(dec, (uint64_t)code, &err2);
	const struct insn *i2 = decode_insn(dec, (uint64_t)code + 8, &err2);
	const struct insn *i3 = decode_insn(dec, (uint64_t)code + 9, &err2);
	const struct insn *i4 = decode_insn(dec, (uint64_t)code + 12, &err2);
	const struct insn *i5 = decode_insn(dec, (uint64_t)code + 17, &err2);
	if (CHECK(i1 && i2 && i3 && i4 && i5)) {
		CHECK(!itrans_is_string(i1), "%s", i1->text);
		CHECK(itrans_is_string(i2), "%s", i2->text);
		CHECK(itrans_is_string(i3), "%s", i3->text);
		CHECK(!itrans_is_string(i4), "%s", i4->text);
		CHECK(itrans_is_string(i5), "%s", i5->text);
	}
	syscall(SYS_arch_prctl, ARCH_SET_GS, 0);
	itrans_free(x);
	decode_free(dec);
	return test_summary("itrans");
}
