#include "hashtab.h"

#include <stdlib.h>
#include <string.h>

#include "error.h"

#define MIN_SLOTS 64u

uint64_t hash_fnv1a(uint64_t h, const void *s, size_t n)
{
	const unsigned char *b = s;

	for (size_t i = 0; i < n; i++) {
		h ^= b[i];
		h *= 0x100000001b3ull;
	}
	return h;
}

/* The first empty slot from HASH's home (the key is known absent). */
static void place(struct hashtab *t, uint64_t hash, uint32_t idx)
{
	uint32_t i = (uint32_t)(hash >> t->shift);

	while (t->slots[i])
		i = (i + 1) & t->mask;
	t->slots[i] = idx + 1;
}

static bool has_room(const struct hashtab *t)
{
	return t->slots && ((size_t)t->count + 1) * 2 <= (size_t)t->mask + 1;
}

/* Double the table (or make the first), rehashing every entry. */
static void grow(struct hashtab *t, hashtab_hash_fn *hash_of, const void *ctx)
{
	size_t size = t->slots ? (size_t)t->mask + 1 : 0;

	if (t->count >= HASHTAB_MAX_ENTRIES)
		error_msg_and_die("hash table of %u entries is full", t->count);
	size_t nsize = size ? size * 2 : MIN_SLOTS;
	uint32_t *old = t->slots;
	t->slots = xcalloc(nsize, sizeof(*t->slots));
	t->mask = (uint32_t)(nsize - 1);
	t->shift = (uint8_t)(64 - __builtin_ctzll(nsize));
	free(old);
	for (uint32_t i = 0; i < t->count; i++)
		place(t, hash_of(ctx, i), i);
}

/* Entries not inserted in order would be lost by the next growth. */
static void check_dense(const struct hashtab *t, uint32_t idx)
{
	if (idx != t->count)
		error_msg_and_die("hash table entry %u inserted as entry %u",
				  idx, t->count);
}

void hashtab_insert(struct hashtab *t, const struct hashtab_probe *p,
		    uint32_t idx, hashtab_hash_fn *hash_of, const void *ctx)
{
	check_dense(t, idx);
	if (has_room(t)) {
		/* The common case: the probe's empty slot is still it. */
		t->slots[p->pos] = idx + 1;
	} else {
		grow(t, hash_of, ctx);
		place(t, p->hash, idx);
	}
	t->count++;
}

void hashtab_add(struct hashtab *t, uint64_t hash, uint32_t idx,
		 hashtab_hash_fn *hash_of, const void *ctx)
{
	check_dense(t, idx);
	if (!has_room(t))
		grow(t, hash_of, ctx);
	place(t, hash, idx);
	t->count++;
}

void hashtab_clear(struct hashtab *t)
{
	if (t->slots)
		memset(t->slots, 0, ((size_t)t->mask + 1) * sizeof(*t->slots));
	t->count = 0;
}

void hashtab_free(struct hashtab *t)
{
	free(t->slots);
	memset(t, 0, sizeof(*t));
}

/* ---- interned strings ---- */

static uint64_t str_hash(const void *ctx, uint32_t id)
{
	const struct strintern *si = ctx;
	return hash_bytes(si->str[id], si->len[id]);
}

uint32_t strintern_id(struct strintern *si, const char *s, size_t n,
		      bool *is_new)
{
	struct hashtab_probe p;

	for (uint32_t i = hashtab_first(&si->map, hash_bytes(s, n), &p);
	     i != HASHTAB_NONE; i = hashtab_next(&si->map, &p)) {
		if (si->len[i] == n && !memcmp(si->str[i], s, n)) {
			if (is_new)
				*is_new = false;
			return i;
		}
	}
	if (n > UINT32_MAX)
		error_msg_and_die("string of %zu bytes is too long to intern",
				  n);
	if (si->n == si->cap) {
		si->cap = si->cap ? si->cap * 2 : 64;
		si->str = xreallocarray(si->str, si->cap, sizeof(*si->str));
		si->len = xreallocarray(si->len, si->cap, sizeof(*si->len));
	}
	char *copy = xmalloc(n + 1);
	memcpy(copy, s, n);
	copy[n] = '\0';
	si->str[si->n] = copy;
	si->len[si->n] = (uint32_t)n;
	hashtab_insert(&si->map, &p, si->n, str_hash, si);
	if (is_new)
		*is_new = true;
	return si->n++;
}

void strintern_free(struct strintern *si)
{
	for (uint32_t i = 0; i < si->n; i++)
		free(si->str[i]);
	free(si->str);
	free(si->len);
	hashtab_free(&si->map);
	memset(si, 0, sizeof(*si));
}
