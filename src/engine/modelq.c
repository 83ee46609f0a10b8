/* The model queue (modelq.h): a single-producer, single-consumer ring of
 * 16-byte units in the supervisor's memory.
 *
 * The producer keeps its head to itself and publishes it every
 * MODELQ_BATCH records (and before it waits), so the two CPUs do not pass
 * a cache line back and forth per instruction; the consumer publishes its
 * tail as often.  A consumer with nothing to do spins for a while, then
 * sleeps on a futex; the producer wakes it when it publishes (Dekker's
 * pattern: each side stores, fences, then loads the other's word).  A
 * record never wraps: the space left at the ring's end is a padding
 * record.
 *
 * The producer builds each record in its own memory and streams it into
 * the ring (non-temporal stores: no read for ownership of a line the
 * consumer last held, no line passed back).  Written into the ring field
 * by field, a record cost the producer a line's round trip between the
 * CPUs: on bench/region.c (2-vCPU EPYC guest) the costlier models took
 * twice as long on their thread as in the engine's; built and copied,
 * they run 6-15% faster there (bench/README.md). */
#include "modelq.h"

#include <emmintrin.h>
#include <errno.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "engine.h"
#include "error.h"
#include "hostenv.h"

#define MODELQ_UNITS (1u << 14)	/* 256 KiB: stays in a CPU's L2 */
#define MODELQ_BATCH 32		/* records between publications */
#define MODELQ_SPIN_NS 50000	/* a consumer's spin before it sleeps */

struct unit {
	uint64_t a, b;
};

struct modelq {
	_Alignas(64) uint64_t head;	/* published by the producer */
	_Alignas(64) uint64_t tail;	/* published by the consumer */
	_Alignas(64) int sleeping;	/* the consumer waits on this */
	int stop;
	/* the producer's own */
	_Alignas(64) uint64_t p_head;
	uint64_t p_tail;		/* the tail it saw last */
	unsigned p_unpub;
	/* shared, read-only once running */
	_Alignas(64) struct unit *buf;
	struct engine *e;
	pthread_t thread;
	int cpu;
};

static void futex_wait(int *word, int val)
{
	syscall(SYS_futex, word, FUTEX_WAIT_PRIVATE, val, NULL, NULL, 0);
}

static void futex_wake(int *word)
{
	syscall(SYS_futex, word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

static uint64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void publish(struct modelq *q)
{
	q->p_unpub = 0;
	_mm_sfence();		/* the streamed records before the head */
	__atomic_store_n(&q->head, q->p_head, __ATOMIC_RELEASE);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (__atomic_load_n(&q->sleeping, __ATOMIC_RELAXED) &&
	    __atomic_exchange_n(&q->sleeping, 0, __ATOMIC_SEQ_CST))
		futex_wake(&q->sleeping);
}

/* The consumer has records up to HEAD or stops: returns the head, or the
 * tail when it should stop. */
static uint64_t await_records(struct modelq *q, uint64_t tail)
{
	uint64_t start = 0;
	for (unsigned spins = 0;; spins++) {
		uint64_t h = __atomic_load_n(&q->head, __ATOMIC_ACQUIRE);
		if (h != tail)
			return h;
		if (__atomic_load_n(&q->stop, __ATOMIC_ACQUIRE))
			return tail;
		if ((spins & 255) == 0) {
			uint64_t now = mono_ns();
			if (!start)
				start = now;
			else if (now - start > MODELQ_SPIN_NS) {
				__atomic_store_n(&q->sleeping, 1,
						 __ATOMIC_SEQ_CST);
				__atomic_thread_fence(__ATOMIC_SEQ_CST);
				if (__atomic_load_n(&q->head, __ATOMIC_ACQUIRE)
				    == tail &&
				    !__atomic_load_n(&q->stop, __ATOMIC_ACQUIRE))
					futex_wait(&q->sleeping, 1);
				__atomic_store_n(&q->sleeping, 0,
						 __ATOMIC_SEQ_CST);
				start = 0;
				continue;
			}
		}
		__builtin_ia32_pause();
	}
}

static void *consume(void *arg)
{
	struct modelq *q = arg;
	uint64_t tail = 0;
	for (;;) {
		uint64_t head = await_records(q, tail);
		if (head == tail)
			return NULL;	/* stopped, and nothing left */
		unsigned n = 0;
		while (tail != head) {
			const struct model_rec *r = (const struct model_rec *)
				&q->buf[tail & (MODELQ_UNITS - 1)];
			if (!r->in) {
				tail += r->next;	/* padding */
			} else if ((uintptr_t)r->in & 1) {
				tail += engine_account_lean_rec(q->e, r);
			} else {
				const struct mem_access *acc =
					(const struct mem_access *)(r + 1);
				engine_account_rec(q->e, r, acc,
					(const struct model_spec *)
					(acc + r->n_acc));
				tail += r->units;
			}
			if (++n % MODELQ_BATCH == 0)
				__atomic_store_n(&q->tail, tail,
						 __ATOMIC_RELEASE);
		}
		__atomic_store_n(&q->tail, tail, __ATOMIC_RELEASE);
	}
}

/* The producer waits until the consumer's tail reaches AT. */
static void await_tail(struct modelq *q, uint64_t at)
{
	unsigned spins = 0;
	while ((q->p_tail = __atomic_load_n(&q->tail, __ATOMIC_ACQUIRE)) < at) {
		if (++spins < 4096)
			__builtin_ia32_pause();
		else
			sched_yield();	/* the consumer lost its CPU */
	}
}

static inline struct model_rec *reserve(struct modelq *q, unsigned units)
{
	uint64_t pos = q->p_head & (MODELQ_UNITS - 1);
	if (pos + units > MODELQ_UNITS) {
		/* Pad to the ring's end: records never wrap. */
		unsigned pad = (unsigned)(MODELQ_UNITS - pos);
		if (q->p_head + pad - q->p_tail > MODELQ_UNITS) {
			publish(q);
			await_tail(q, q->p_head + pad - MODELQ_UNITS);
		}
		/* A padding record is its first unit: no record, its
		 * length (it may be one unit: the fields past it are not
		 * the ring's). */
		struct unit *u = &q->buf[pos];
		u->a = 0;
		u->b = pad;
		q->p_head += pad;
		pos = 0;
	}
	if (q->p_head + units - q->p_tail > MODELQ_UNITS) {
		publish(q);
		await_tail(q, q->p_head + units - MODELQ_UNITS);
	}
	return (struct model_rec *)&q->buf[pos];
}

void modelq_put(struct modelq *q, const void *rec, unsigned units)
{
	__m128i *dst = (__m128i *)reserve(q, units);
	const __m128i *src = rec;
	for (unsigned i = 0; i < units; i++)
		_mm_stream_si128(dst + i, _mm_load_si128(src + i));
	q->p_head += units;
	if (++q->p_unpub >= MODELQ_BATCH)
		publish(q);
}

void modelq_drain(struct modelq *q)
{
	publish(q);
	await_tail(q, q->p_head);
}

int modelq_cpu(const struct modelq *q)
{
	return q->cpu;
}

/* The CPU for the model thread: the last one of ALLOWED (NULL: ours)
 * that is not AVOID; -1 when there is only one. */
static int pick_cpu(const cpu_set_t *allowed, int avoid)
{
	cpu_set_t set;
	if (allowed)
		set = *allowed;
	else if (sched_getaffinity(0, sizeof(set), &set) < 0)
		return -1;
	if (CPU_COUNT(&set) < 2)
		return -1;
	for (int i = CPU_SETSIZE - 1; i >= 0; i--)
		if (CPU_ISSET(i, &set) && i != avoid)
			return i;
	return -1;
}

struct modelq *modelq_new(struct engine *e, const cpu_set_t *allowed,
			  int avoid_cpu, const char **why)
{
	if (host_forced("model-thread", "no")) {
		*why = "forced: no model thread";
		return NULL;
	}
	int cpu = pick_cpu(allowed, avoid_cpu >= 0 ? avoid_cpu : sched_getcpu());
	if (cpu < 0) {
		*why = "one CPU allowed";
		return NULL;
	}
	struct modelq *q;
	if (posix_memalign((void **)&q, 64, sizeof(*q))) {
		*why = "out of memory";
		return NULL;
	}
	memset(q, 0, sizeof(*q));
	q->e = e;
	q->cpu = cpu;
	if (posix_memalign((void **)&q->buf, 4096,
			   MODELQ_UNITS * sizeof(struct unit))) {
		free(q);
		*why = "out of memory";
		return NULL;
	}
	pthread_attr_t attr;
	cpu_set_t one;
	CPU_ZERO(&one);
	CPU_SET(cpu, &one);
	pthread_attr_init(&attr);
	pthread_attr_setaffinity_np(&attr, sizeof(one), &one);
	/* Signals are the tracer's: the thread takes none. */
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	int rc = pthread_create(&q->thread, &attr, consume, q);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	pthread_attr_destroy(&attr);
	if (rc == 0) {
		pthread_setname_np(q->thread, "cachetrace-mdl");
		/* We keep off its CPU: a spinning consumer on ours would
		 * take our time slices. */
		cpu_set_t self;
		if (sched_getaffinity(0, sizeof(self), &self) == 0 &&
		    CPU_ISSET(cpu, &self) && CPU_COUNT(&self) > 1) {
			CPU_CLR(cpu, &self);
			sched_setaffinity(0, sizeof(self), &self);
		}
	}
	if (rc) {
		free(q->buf);
		free(q);
		*why = "no thread";
		return NULL;
	}
	return q;
}

void modelq_free(struct modelq *q)
{
	if (!q)
		return;
	modelq_drain(q);
	__atomic_store_n(&q->stop, 1, __ATOMIC_RELEASE);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	__atomic_store_n(&q->sleeping, 0, __ATOMIC_SEQ_CST);
	futex_wake(&q->sleeping);
	pthread_join(q->thread, NULL);
	free(q->buf);
	free(q);
}
