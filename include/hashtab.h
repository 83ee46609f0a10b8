/* The tree's one hash table, its hash functions and its string interner.
 *
 * The table maps a key to an index into an array that the caller owns:
 * it stores no keys, only index + 1 per 4-byte slot, so the caller keeps
 * its entries in first-seen order (the writers rely on that order) and
 * compares keys itself.  Open addressing, linear probing, power-of-two
 * size, at most half full; the home slot is the top bits of the 64-bit
 * hash (Knuth's multiplicative hashing).  Nothing is allocated per lookup.
 * The entries are the caller's 0, 1, ..., count - 1, inserted in that
 * order; an insertion may grow the table, which rehashes them in that
 * order (sequential reads) through the caller's HASH_OF(CTX, index), the
 * same key hash it looks up with.
 *
 * Finding or inserting KEY:
 *
 *	struct hashtab_probe p;
 *	for (uint32_t i = hashtab_first(&t, key_hash(key), &p);
 *	     i != HASHTAB_NONE; i = hashtab_next(&t, &p))
 *		if (entries[i].key == key)
 *			return i;
 *	... append the entry as index n ...
 *	hashtab_insert(&t, &p, n, entry_hash, entries);
 *
 * A zeroed struct hashtab is an empty table.  There is no removal of a
 * single entry: callers that drop entries (decode_invalidate) compact
 * their array and hashtab_clear + hashtab_add the rest, which keeps the
 * chains exact without tombstones. */
#ifndef CT_HASHTAB_H
#define CT_HASHTAB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ---- hash functions: all bits of the key reach the top bits ---- */

#define HASH_FNV1A_INIT 0xcbf29ce484222325ull

/* Fibonacci hashing: pcs and block numbers are dense and oddly aligned;
 * one multiply spreads them over the top bits. */
static inline uint64_t hash_u64(uint64_t k)
{
	return k * 0x9e3779b97f4a7c15ull;
}

/* A key of two words (a context and a pc, a parent and a child). */
static inline uint64_t hash_pair(uint64_t a, uint64_t b)
{
	return hash_u64(hash_u64(a) ^ b);
}

/* Plain FNV-1a of the N bytes at S, continued from H (HASH_FNV1A_INIT to
 * start).  Its top bits are weak: hash the result with hash_u64 before
 * using it in a table (hash_bytes does). */
uint64_t hash_fnv1a(uint64_t h, const void *s, size_t n);

static inline uint64_t hash_bytes(const void *s, size_t n)
{
	return hash_u64(hash_fnv1a(HASH_FNV1A_INIT, s, n));
}

/* ---- the table ---- */

#define HASHTAB_NONE UINT32_MAX
/* The most entries a table indexes (its size then is 2^31 slots). */
#define HASHTAB_MAX_ENTRIES (1u << 30)

struct hashtab {
	uint32_t *slots;	/* entry index + 1, 0 = empty; NULL at first */
	uint32_t mask;		/* size - 1 */
	uint8_t shift;		/* 64 - log2(size): home = hash >> shift */
	uint32_t count;		/* entries */
};

/* Where a lookup stands: the candidate's slot, or after HASHTAB_NONE the
 * empty slot where the key goes. */
struct hashtab_probe {
	uint64_t hash;
	uint32_t pos;
};

/* The hash of the caller's entry IDX (CTX: the caller's table). */
typedef uint64_t hashtab_hash_fn(const void *ctx, uint32_t idx);

/* The first candidate for a key of hash HASH, or HASHTAB_NONE. */
static inline uint32_t hashtab_first(const struct hashtab *t, uint64_t hash,
				     struct hashtab_probe *p)
{
	p->hash = hash;
	if (!t->slots) {
		p->pos = 0;
		return HASHTAB_NONE;
	}
	p->pos = (uint32_t)(hash >> t->shift);
	return t->slots[p->pos] - 1;	/* 0 - 1 is HASHTAB_NONE */
}

/* The next candidate, or HASHTAB_NONE. */
static inline uint32_t hashtab_next(const struct hashtab *t,
				    struct hashtab_probe *p)
{
	p->pos = (p->pos + 1) & t->mask;
	return t->slots[p->pos] - 1;
}

/* Record entry IDX (always the count: entries are dense) for the key of
 * a lookup P that ended in HASHTAB_NONE (no insertion since).  HASH_OF and CTX rehash the entries if the table
 * grows.  Dies beyond HASHTAB_MAX_ENTRIES: callers that read untrusted
 * input check the count first. */
void hashtab_insert(struct hashtab *t, const struct hashtab_probe *p,
		    uint32_t idx, hashtab_hash_fn *hash_of, const void *ctx);

/* Record entry IDX (the count) under HASH, known to be absent
 * (rebuilding). */
void hashtab_add(struct hashtab *t, uint64_t hash, uint32_t idx,
		 hashtab_hash_fn *hash_of, const void *ctx);

/* Forget all entries, keeping the memory. */
void hashtab_clear(struct hashtab *t);

void hashtab_free(struct hashtab *t);

/* Bytes held (for the memory benchmark). */
static inline size_t hashtab_memory(const struct hashtab *t)
{
	return t->slots ? ((size_t)t->mask + 1) * sizeof(*t->slots) : 0;
}

/* ---- interned strings ---- */

/* Strings numbered 0, 1, ... in first-seen order; equal strings get one
 * id and one NUL-terminated copy, which stays put until strintern_free.
 * A zeroed struct strintern is empty. */
struct strintern {
	char **str;		/* id -> copy */
	uint32_t *len;		/* id -> its length */
	uint32_t n, cap;
	struct hashtab map;
};

/* The id of the N bytes at S; *IS_NEW (when not NULL) says whether this
 * call added it. */
uint32_t strintern_id(struct strintern *si, const char *s, size_t n,
		      bool *is_new);

/* The interned copy of the N bytes at S. */
static inline const char *strintern(struct strintern *si, const char *s,
				    size_t n)
{
	uint32_t id = strintern_id(si, s, n, NULL);	/* may move si->str */
	return si->str[id];
}

void strintern_free(struct strintern *si);

#endif
