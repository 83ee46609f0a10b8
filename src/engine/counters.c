/* perf_event_open(2) for the native engine: perf's event names, the
 * host's PMU probed, a thread's counters opened, gated and read. */
#include "counters.h"

#include <errno.h>
#include <linux/perf_event.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "error.h"
#include "hostenv.h"

#define HWC(cache, op, result) \
	(PERF_COUNT_HW_CACHE_##cache | (PERF_COUNT_HW_CACHE_OP_##op << 8) | \
	 (PERF_COUNT_HW_CACHE_RESULT_##result << 16))

static const struct {
	const char *name;
	uint32_t type;
	uint64_t config;
} names[] = {
	{ "cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES },
	{ "cpu-cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES },
	{ "instructions", PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS },
	{ "cache-references", PERF_TYPE_HARDWARE,
	  PERF_COUNT_HW_CACHE_REFERENCES },
	{ "cache-misses", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_MISSES },
	{ "branches", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_INSTRUCTIONS },
	{ "branch-instructions", PERF_TYPE_HARDWARE,
	  PERF_COUNT_HW_BRANCH_INSTRUCTIONS },
	{ "branch-misses", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_MISSES },
	{ "bus-cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BUS_CYCLES },
	{ "ref-cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_REF_CPU_CYCLES },
	{ "stalled-cycles-frontend", PERF_TYPE_HARDWARE,
	  PERF_COUNT_HW_STALLED_CYCLES_FRONTEND },
	{ "stalled-cycles-backend", PERF_TYPE_HARDWARE,
	  PERF_COUNT_HW_STALLED_CYCLES_BACKEND },
	{ "L1-dcache-loads", PERF_TYPE_HW_CACHE, HWC(L1D, READ, ACCESS) },
	{ "L1-dcache-load-misses", PERF_TYPE_HW_CACHE, HWC(L1D, READ, MISS) },
	{ "L1-dcache-stores", PERF_TYPE_HW_CACHE, HWC(L1D, WRITE, ACCESS) },
	{ "L1-icache-load-misses", PERF_TYPE_HW_CACHE, HWC(L1I, READ, MISS) },
	{ "LLC-loads", PERF_TYPE_HW_CACHE, HWC(LL, READ, ACCESS) },
	{ "LLC-load-misses", PERF_TYPE_HW_CACHE, HWC(LL, READ, MISS) },
	{ "LLC-stores", PERF_TYPE_HW_CACHE, HWC(LL, WRITE, ACCESS) },
	{ "LLC-store-misses", PERF_TYPE_HW_CACHE, HWC(LL, WRITE, MISS) },
	{ "dTLB-loads", PERF_TYPE_HW_CACHE, HWC(DTLB, READ, ACCESS) },
	{ "dTLB-load-misses", PERF_TYPE_HW_CACHE, HWC(DTLB, READ, MISS) },
	{ "iTLB-load-misses", PERF_TYPE_HW_CACHE, HWC(ITLB, READ, MISS) },
	{ "branch-loads", PERF_TYPE_HW_CACHE, HWC(BPU, READ, ACCESS) },
	{ "branch-load-misses", PERF_TYPE_HW_CACHE, HWC(BPU, READ, MISS) },
	{ "task-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK },
	{ "cpu-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK },
	{ "page-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS },
	{ "faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS },
	{ "minor-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS_MIN },
	{ "major-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS_MAJ },
	{ "context-switches", PERF_TYPE_SOFTWARE,
	  PERF_COUNT_SW_CONTEXT_SWITCHES },
	{ "cs", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES },
	{ "cpu-migrations", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_MIGRATIONS },
	{ "migrations", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_MIGRATIONS },
	{ "alignment-faults", PERF_TYPE_SOFTWARE,
	  PERF_COUNT_SW_ALIGNMENT_FAULTS },
	{ "emulation-faults", PERF_TYPE_SOFTWARE,
	  PERF_COUNT_SW_EMULATION_FAULTS },
};

/* The software counters of the default set, in this order. */
static const char *const soft_default[] = {
	"task-clock", "page-faults", "minor-faults", "major-faults",
	"context-switches", "cpu-migrations",
};
static const char *const hard_default[] = {
	"cycles", "instructions", "branches", "branch-misses",
	"cache-references", "cache-misses",
};

static int lookup(const char *name, size_t len, struct counter_spec *s)
{
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (strlen(names[i].name) == len &&
		    !strncmp(names[i].name, name, len)) {
			s->name = names[i].name;
			s->type = names[i].type;
			s->config = names[i].config;
			s->hardware = s->type != PERF_TYPE_SOFTWARE;
			return 0;
		}
	return -1;
}

int counters_parse(const char *list, struct counter_spec *v, unsigned *n,
		   char *err, size_t errlen)
{
	*n = 0;
	const char *p = list;
	if (!*p) {
		snprintf(err, errlen, "--counters: no event named");
		return -1;
	}
	for (;;) {
		size_t len = strcspn(p, ",");
		size_t nlen = strcspn(p, ",:");
		struct counter_spec s = { 0 };
		if (lookup(p, nlen, &s) < 0) {
			snprintf(err, errlen, "--counters: unknown event '%.*s' "
				 "(perf's names: cycles, instructions, "
				 "cache-misses, page-faults, task-clock, ...)",
				 (int)nlen, p);
			return -1;
		}
		if (nlen < len) {
			const char *m = p + nlen + 1;
			size_t mlen = len - nlen - 1;
			if (mlen == 1 && *m == 'u') {
				s.kernel = false;
			} else if (mlen == 1 && *m == 'k') {
				s.kernel = true;
			} else {
				snprintf(err, errlen, "--counters: '%.*s': the "
					 "modifiers are :u (user space, the "
					 "default) and :k (the kernel too)",
					 (int)len, p);
				return -1;
			}
		}
		for (unsigned i = 0; i < *n; i++)
			if (v[i].type == s.type && v[i].config == s.config &&
			    v[i].kernel == s.kernel) {
				snprintf(err, errlen, "--counters: '%.*s' twice",
					 (int)len, p);
				return -1;
			}
		if (*n == COUNTERS_MAX) {
			snprintf(err, errlen, "--counters: more than %d events",
				 COUNTERS_MAX);
			return -1;
		}
		v[(*n)++] = s;
		if (!p[len])
			return 0;
		p += len + 1;
	}
}

void counters_default(struct counter_spec *v, unsigned *n, bool have_pmu)
{
	*n = 0;
	for (size_t i = 0; have_pmu && i < sizeof(hard_default) /
					    sizeof(hard_default[0]); i++)
		lookup(hard_default[i], strlen(hard_default[i]), &v[(*n)++]);
	for (size_t i = 0; i < sizeof(soft_default) / sizeof(soft_default[0]);
	     i++) {
		struct counter_spec *s = &v[(*n)++];
		lookup(soft_default[i], strlen(soft_default[i]), s);
		s->kernel = false;
	}
}

/* SPEC on thread TID (0: ourselves), disabled: counted, or sampled every
 * PERIOD with STACK_BYTES of the user stack and the registers (0: the IP
 * alone).  A hardware event where CACHETRACE_HOST says pmu=no: ENOENT. */
static long perf_open(const struct counter_spec *spec, pid_t tid,
		      uint64_t period, unsigned stack_bytes)
{
	if (spec->hardware && host_forced("pmu", "no")) {
		errno = ENOENT;
		return -1;
	}
	struct perf_event_attr a;
	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = spec->type;
	a.config = spec->config;
	a.disabled = 1;
	a.exclude_kernel = !spec->kernel;
	a.exclude_hv = 1;
	if (!period) {
		a.read_format = PERF_FORMAT_TOTAL_TIME_ENABLED |
				PERF_FORMAT_TOTAL_TIME_RUNNING;
	} else {
		a.sample_period = period;
		a.sample_type = PERF_SAMPLE_IP;
	}
	if (stack_bytes) {
		a.sample_type |= PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;
		/* ax bx cx dx si di bp sp ip, r8..r15 */
		a.sample_regs_user = 0x1ffull | (0xffull << 16);
		a.sample_stack_user = stack_bytes;
	}
	return syscall(SYS_perf_event_open, &a, tid, -1, -1,
		       PERF_FLAG_FD_CLOEXEC);
}

bool counters_pmu(const char **why)
{
	if (host_forced("pmu", "no")) {
		*why = "forced by CACHETRACE_HOST";
		return false;
	}
	struct stat st;
	if (stat("/sys/bus/event_source/devices/cpu", &st) < 0) {
		*why = "no hardware PMU (/sys/bus/event_source/devices has no "
		       "cpu)";
		return false;
	}
	struct counter_spec s = { "instructions", PERF_TYPE_HARDWARE,
				  PERF_COUNT_HW_INSTRUCTIONS, false, true };
	long fd = perf_open(&s, 0, 0, 0);
	if (fd < 0) {
		*why = errno == EACCES || errno == EPERM ?
		       "perf_event_open refused (perf_event_paranoid)" :
		       "the PMU does not count for us";
		return false;
	}
	close((int)fd);
	return true;
}

int counters_try(const struct counter_spec *spec, pid_t tid)
{
	long fd = perf_open(spec, tid, 0, 0);
	if (fd < 0)
		return -errno;
	close((int)fd);
	return 0;
}

int counters_open(struct counter_set *s, pid_t tid,
		  const struct counter_spec *v, unsigned n,
		  const char **which)
{
	s->tid = tid;
	s->n = 0;
	for (unsigned i = 0; i < n; i++) {
		long fd = perf_open(&v[i], tid, 0, 0);
		if (fd < 0) {
			int e = errno;
			*which = v[i].name;
			counters_close(s);
			return -e;
		}
		s->fd[s->n++] = (int)fd;
	}
	return 0;
}

void counters_enable(struct counter_set *s, bool on)
{
	for (unsigned i = 0; i < s->n; i++)
		ioctl(s->fd[i], on ? PERF_EVENT_IOC_ENABLE :
				     PERF_EVENT_IOC_DISABLE, 0);
}

void counters_mark(struct counter_set *s)
{
	for (unsigned i = 0; i < s->n; i++)
		if (read(s->fd[i], s->base[i], sizeof(s->base[i])) !=
		    (ssize_t)sizeof(s->base[i]))
			memset(s->base[i], 0, sizeof(s->base[i]));
}

void counters_read(const struct counter_set *s, uint64_t *out, bool *scaled)
{
	for (unsigned i = 0; i < s->n; i++) {
		uint64_t v[3] = { 0, 0, 0 };
		out[i] = 0;
		if (read(s->fd[i], v, sizeof(v)) != (ssize_t)sizeof(v))
			continue;
		for (unsigned k = 0; k < 3; k++)
			v[k] -= s->base[i][k];
		if (v[2] && v[2] < v[1]) {
			/* multiplexed: counted for RUNNING of ENABLED ns */
			out[i] = (uint64_t)((double)v[0] * v[1] / v[2]);
			*scaled = true;
		} else {
			out[i] = v[0];
		}
	}
}

void counters_close(struct counter_set *s)
{
	for (unsigned i = 0; i < s->n; i++)
		close(s->fd[i]);
	s->n = 0;
}

/* Samples between two reads of the ring (every 20 ms at most, gate.c):
 * 512 pages hold 32k of IPs alone, or ~240 with 8 KB of stack each (4
 * times the pages then).  Fewer where the kernel's limit of locked
 * memory (perf_event_mlock_kb) refuses as many. */
#define SAMPLE_PAGES 512

int counters_sampler_open(struct counter_sampler *s, pid_t tid,
			  const struct counter_spec *spec, uint64_t period,
			  unsigned stack_bytes)
{
	memset(s, 0, sizeof(*s));
	s->fd = -1;
	long fd = perf_open(spec, tid, period, stack_bytes);
	if (fd < 0)
		return -errno;
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	int err = 0;
	for (size_t pages = SAMPLE_PAGES * (stack_bytes ? 4 : 1); pages >= 8;
	     pages /= 2) {
		s->map_len = (1 + pages) * page;
		s->map = mmap(NULL, s->map_len, PROT_READ | PROT_WRITE,
			      MAP_SHARED, (int)fd, 0);
		if (s->map != MAP_FAILED)
			break;
		err = errno;
		s->map = NULL;
	}
	if (!s->map) {
		close((int)fd);
		return -err;
	}
	s->fd = (int)fd;
	return 0;
}

void counters_sampler_enable(struct counter_sampler *s, bool on)
{
	if (s->fd >= 0)
		ioctl(s->fd, on ? PERF_EVENT_IOC_ENABLE :
				  PERF_EVENT_IOC_DISABLE, 0);
}

/* perf's registers, in the record's order, to DWARF's numbers */
static const uint8_t dwarf_of[17] = {
	0, 3, 2, 1, 4, 5, 6, 7, 16, 8, 9, 10, 11, 12, 13, 14, 15,
};

/* A sample record REC of LEN bytes (after its header) into *SMP. */
static void parse_sample(const struct counter_sampler *s, const uint8_t *rec,
			 size_t len, struct counter_sample *smp)
{
	(void)s;
	memset(smp, 0, sizeof(*smp));
	size_t at = 0;
	uint64_t v;
	if (len < 8)
		return;
	memcpy(&smp->ip, rec, 8);
	at = 8;
	if (len < at + 8)
		return;			/* the IP alone */
	memcpy(&v, rec + at, 8);	/* the registers' ABI */
	at += 8;
	if (v) {
		if (len < at + 17 * 8)
			return;
		for (unsigned i = 0; i < 17; i++)
			memcpy(&smp->regs[dwarf_of[i]], rec + at + 8 * i, 8);
		smp->has_regs = true;
		at += 17 * 8;
	}
	if (len < at + 8)
		return;
	uint64_t size;
	memcpy(&size, rec + at, 8);
	at += 8;
	if (!size || len < at + size + 8)
		return;
	uint64_t dyn;
	memcpy(&dyn, rec + at + size, 8);
	smp->stack = rec + at;
	smp->stack_len = dyn < size ? dyn : size;
}

uint64_t counters_sampler_read(struct counter_sampler *s,
			       void (*fn)(void *ctx,
					  const struct counter_sample *smp),
			       void *ctx)
{
	if (!s->map)
		return 0;
	struct perf_event_mmap_page *mp = s->map;
	const uint8_t *data = (const uint8_t *)s->map + mp->data_offset;
	uint64_t size = mp->data_size, n = 0;
	uint64_t head = __atomic_load_n(&mp->data_head, __ATOMIC_ACQUIRE);
	uint64_t tail = mp->data_tail;
	while (tail < head) {
		struct perf_event_header h;
		for (size_t i = 0; i < sizeof(h); i++)
			((uint8_t *)&h)[i] = data[(tail + i) % size];
		if (h.size < sizeof(h))
			break;		/* cannot be: give up on the rest */
		if (h.size > s->rec_cap) {
			s->rec_cap = h.size;
			s->rec = xreallocarray(s->rec, s->rec_cap, 1);
		}
		uint64_t from = (tail + sizeof(h)) % size;
		size_t len = h.size - sizeof(h);
		size_t first = len < size - from ? len : (size_t)(size - from);
		memcpy(s->rec, data + from, first);
		memcpy(s->rec + first, data, len - first);
		if (h.type == PERF_RECORD_SAMPLE) {
			struct counter_sample smp;
			parse_sample(s, s->rec, len, &smp);
			fn(ctx, &smp);
			n++;
		} else if (h.type == PERF_RECORD_LOST && len >= 16) {
			uint64_t lost;
			memcpy(&lost, s->rec + 8, 8);
			s->lost += lost;
		} else if (h.type == PERF_RECORD_THROTTLE) {
			s->throttled++;
		}
		tail += h.size;
	}
	__atomic_store_n(&mp->data_tail, head, __ATOMIC_RELEASE);
	return n;
}

void counters_sampler_close(struct counter_sampler *s)
{
	if (s->map)
		munmap(s->map, s->map_len);
	if (s->fd >= 0)
		close(s->fd);
	free(s->rec);
	s->rec = NULL;
	s->rec_cap = 0;
	s->map = NULL;
	s->fd = -1;
}
