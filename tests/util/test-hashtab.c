/* The shared hash table and string interner (include/hashtab.h), against
 * hand-computed expectations: hash values, slot placement, collisions,
 * growth, removal by rebuilding, first-seen order, interning. */
#include "hashtab.h"

#include <stdlib.h>

#include "testutil.h"

/* A caller-owned entry array, as the tree's users keep one. */
struct ent {
	uint64_t key;
	uint64_t hash;
};

static struct ent ents[4096];
static uint32_t n_ents;

static uint32_t find(const struct hashtab *t, uint64_t key, uint64_t hash,
		     struct hashtab_probe *p)
{
	for (uint32_t i = hashtab_first(t, hash, p); i != HASHTAB_NONE;
	     i = hashtab_next(t, p))
		if (ents[i].key == key)
			return i;
	return HASHTAB_NONE;
}

static uint64_t ent_hash(const void *ctx, uint32_t i)
{
	return ((const struct ent *)ctx)[i].hash;
}

/* Find KEY or append it; its index. */
static uint32_t get(struct hashtab *t, uint64_t key, uint64_t hash)
{
	struct hashtab_probe p;
	uint32_t i = find(t, key, hash, &p);

	if (i != HASHTAB_NONE)
		return i;
	ents[n_ents] = (struct ent){ key, hash };
	hashtab_insert(t, &p, n_ents, ent_hash, ents);
	return n_ents++;
}

static void test_hashes(void)
{
	/* FNV-1a 64 reference values (the FNV authors' test vectors). */
	CHECK_U64(hash_fnv1a(HASH_FNV1A_INIT, "", 0), 0xcbf29ce484222325ull);
	CHECK_U64(hash_fnv1a(HASH_FNV1A_INIT, "a", 1), 0xaf63dc4c8601ec8cull);
	CHECK_U64(hash_fnv1a(HASH_FNV1A_INIT, "foobar", 6),
		  0x85944171f73967e8ull);
	/* Continuing a hash is hashing the concatenation. */
	CHECK_U64(hash_fnv1a(hash_fnv1a(HASH_FNV1A_INIT, "foo", 3), "bar", 3),
		  0x85944171f73967e8ull);
	CHECK_U64(hash_bytes("a", 1), 0xaf63dc4c8601ec8cull *
		  0x9e3779b97f4a7c15ull);
	CHECK_U64(hash_u64(1), 0x9e3779b97f4a7c15ull);
	CHECK_U64(hash_u64(2), 0x3c6ef372fe94f82aull);
	/* (1 * G ^ 2) * G */
	CHECK_U64(hash_pair(1, 2), 0x9e3779b97f4a7c17ull * 0x9e3779b97f4a7c15ull);
}

static void test_table(void)
{
	struct hashtab t = { 0 };
	struct hashtab_probe p;

	n_ents = 0;
	/* Empty: nothing found, no memory. */
	CHECK(find(&t, 1, hash_u64(1), &p) == HASHTAB_NONE);
	CHECK_U64(hashtab_memory(&t), 0);

	/* 64 slots, slot = top 6 bits: 0x9e3779b9... >> 26 = 39. */
	CHECK_U64(get(&t, 1, hash_u64(1)), 0);
	CHECK_U64(t.mask, 63);
	CHECK_U64(t.slots[39], 1);
	CHECK_U64(get(&t, 1, hash_u64(1)), 0);
	CHECK_U64(t.count, 1);

	/* Three keys of one home slot (top 6 bits 0x28 = 40): the second
	 * and third take the next slots, and a probe offers every entry of
	 * the run as a candidate until the empty slot after it. */
	uint64_t ha = 0xa0000000ull << 32 | 1, hb = 0xa0000000ull << 32 | 2;
	uint64_t hc = 0xa0000001ull << 32;
	CHECK_U64(get(&t, 100, ha), 1);
	CHECK_U64(get(&t, 200, hb), 2);
	CHECK_U64(get(&t, 300, hc), 3);
	CHECK(t.slots[40] == 2 && t.slots[41] == 3 && t.slots[42] == 4);
	CHECK_U64(hashtab_first(&t, hb, &p), 1);
	CHECK_U64(hashtab_next(&t, &p), 2);
	CHECK_U64(hashtab_next(&t, &p), 3);
	CHECK_U64(hashtab_next(&t, &p), HASHTAB_NONE);
	CHECK_U64(p.pos, 43);		/* where a new key would go */
	CHECK_U64(find(&t, 200, hb, &p), 2);
	CHECK_U64(find(&t, 300, hc, &p), 3);
	/* A key of the same hash, absent: the probe ends past the chain. */
	CHECK_U64(find(&t, 400, hb, &p), HASHTAB_NONE);
	CHECK_U64(p.pos, 43);
	/* Wrapping around the end: home 63, then 0. */
	uint64_t hw = 0xfc000000ull << 32;
	CHECK_U64(get(&t, 500, hw), 4);
	CHECK_U64(get(&t, 501, hw + 1), 5);
	CHECK(t.slots[63] == 5 && t.slots[0] == 6);
	CHECK_U64(find(&t, 501, hw + 1, &p), 5);
	hashtab_free(&t);

	/* Growth: 32 entries fit in 64 slots, the 33rd doubles; 1000 need
	 * 2048.  Every key stays found at its first-seen index. */
	n_ents = 0;
	for (uint64_t k = 0; k < 32; k++)
		CHECK_U64(get(&t, k, hash_u64(k)), k);
	CHECK_U64(t.mask, 63);
	CHECK_U64(get(&t, 32, hash_u64(32)), 32);
	CHECK_U64(t.mask, 127);
	for (uint64_t k = 33; k < 1000; k++)
		CHECK_U64(get(&t, k, hash_u64(k)), k);
	CHECK_U64(t.mask, 2047);
	CHECK_U64(t.count, 1000);
	CHECK_U64(hashtab_memory(&t), 2048 * 4);
	int bad = 0;
	for (uint64_t k = 0; k < 1000; k++)
		bad += find(&t, k, hash_u64(k), &p) != k;
	CHECK_U64(bad, 0);
	CHECK(find(&t, 1000, hash_u64(1000), &p) == HASHTAB_NONE);

	/* Removal as decode_invalidate does it: drop [100, 900), compact
	 * the entries (keeping their order), rebuild. */
	uint32_t kept = 0;
	for (uint32_t i = 0; i < n_ents; i++)
		if (ents[i].key < 100 || ents[i].key >= 900)
			ents[kept++] = ents[i];
	n_ents = kept;
	hashtab_clear(&t);
	CHECK_U64(t.count, 0);
	CHECK(find(&t, 5, hash_u64(5), &p) == HASHTAB_NONE);
	for (uint32_t i = 0; i < n_ents; i++)
		hashtab_add(&t, ents[i].hash, i, ent_hash, ents);
	CHECK_U64(t.count, 200);
	CHECK_U64(t.mask, 2047);	/* the memory is kept */
	bad = 0;
	for (uint64_t k = 0; k < 1000; k++) {
		uint32_t want = k < 100 ? (uint32_t)k : k < 900 ? HASHTAB_NONE
				: (uint32_t)(k - 800);
		bad += find(&t, k, hash_u64(k), &p) != want;
	}
	CHECK_U64(bad, 0);
	/* Re-inserting a removed key appends it. */
	CHECK_U64(get(&t, 500, hash_u64(500)), 200);
	hashtab_free(&t);
	CHECK(t.slots == NULL && t.count == 0);
}

static void test_intern(void)
{
	struct strintern si = { 0 };
	bool is_new = false;

	CHECK_U64(strintern_id(&si, "main", 4, &is_new), 0);
	CHECK(is_new);
	CHECK_U64(strintern_id(&si, "foo", 3, &is_new), 1);
	CHECK(is_new);
	/* Not NUL-terminated input: "mainly" cut to 4 is "main". */
	CHECK_U64(strintern_id(&si, "mainly", 4, &is_new), 0);
	CHECK(!is_new);
	CHECK_U64(strintern_id(&si, "mainly", 6, &is_new), 2);
	CHECK(is_new);
	/* Prefixes, the empty string and embedded NULs are other strings. */
	CHECK_U64(strintern_id(&si, "ma", 2, NULL), 3);
	CHECK_U64(strintern_id(&si, "", 0, NULL), 4);
	CHECK_U64(strintern_id(&si, "fo\0o", 4, NULL), 5);
	CHECK_U64(strintern_id(&si, "fo", 2, NULL), 6);
	CHECK_U64(si.n, 7);
	CHECK(!strcmp(si.str[0], "main") && si.len[0] == 4);
	CHECK(!strcmp(si.str[4], "") && si.len[4] == 0);
	CHECK(si.len[5] == 4 && !memcmp(si.str[5], "fo\0o", 5));

	/* One copy per distinct string, at a fixed address. */
	const char *a = strintern(&si, "foo", 3);
	char buf[] = "foo";
	CHECK(a == si.str[1]);
	CHECK(strintern(&si, buf, 3) == a);
	CHECK(a != buf);

	/* Many strings: ids in first-seen order, copies that do not move
	 * when the arrays grow. */
	char name[32];
	int bad = 0;
	for (int i = 0; i < 3000; i++) {
		int len = snprintf(name, sizeof(name), "fn%d", i);
		bad += strintern_id(&si, name, (size_t)len, NULL) != 7u + i;
	}
	CHECK_U64(bad, 0);
	CHECK(strintern(&si, "foo", 3) == a);
	CHECK_U64(strintern_id(&si, "fn2999", 6, &is_new), 7 + 2999);
	CHECK(!is_new);
	CHECK_U64(si.n, 3007);
	strintern_free(&si);

	/* strintern of a new string whose id array must grow (64, 128):
	 * the copy returned is in the moved array. */
	bad = 0;
	for (int i = 0; i < 200; i++) {
		int len = snprintf(name, sizeof(name), "s%d", i);
		const char *c = strintern(&si, name, (size_t)len);
		bad += c != si.str[i] || strcmp(c, name);
	}
	CHECK_U64(bad, 0);
	strintern_free(&si);
	CHECK(si.n == 0 && si.str == NULL);
}

int main(void)
{
	test_hashes();
	test_table();
	test_intern();
	return test_summary("test-hashtab");
}
