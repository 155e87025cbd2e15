// SPDX-License-Identifier: LGPL-2.1-or-later
/* Unit tests for hashtable.c: FNV-1a vectors, growth, and random operations against an array. */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test.h"
#include "lib/hashtable.h"

struct item {
	struct hashtable_node node;
	uint32_t key;
};

/* xorshift64*: a fixed seed, so a failure is reproducible. */
static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static uint64_t rng(void)
{
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 2685821657736338717ull;
}

static struct item *find(const struct hashtable *t, uint32_t key, uint32_t hash)
{
	for (struct hashtable_node *n = hashtable_chain(t, hash); n; n = n->next) {
		struct item *it = (struct item *)n;

		if (n->hash == hash && it->key == key)
			return it;
	}
	return NULL;
}

static void free_item(struct hashtable_node *node)
{
	free(node);
}

/* Every node sits in the bucket of its hash, and the count is the number of nodes. */
static bool well_formed(const struct hashtable *t)
{
	size_t count = 0;

	if (t->nbuckets & (t->nbuckets - 1))
		return false;
	for (size_t b = 0; b < t->nbuckets; b++)
		for (struct hashtable_node *n = t->buckets[b]; n; n = n->next, count++)
			if ((n->hash & (t->nbuckets - 1)) != b)
				return false;
	return count == t->n && (t->nbuckets == 0 || t->n <= t->nbuckets);
}

static void test_hash_vectors(void)
{
	/* The published FNV-1a 32-bit test vectors. */
	CHECK_EQ_INT(hashtable_hash_bytes("", 0), 0x811c9dc5u);
	CHECK_EQ_INT(hashtable_hash_bytes("a", 1), 0xe40c292cu);
	CHECK_EQ_INT(hashtable_hash_bytes("foobar", 6), 0xbf9cf968u);
}

static void test_empty(void)
{
	struct hashtable t = { 0 };

	CHECK(hashtable_chain(&t, 0) == NULL);
	CHECK(hashtable_chain(&t, 12345) == NULL);
	CHECK(well_formed(&t));
	hashtable_clear(&t, free_item);
	CHECK(t.buckets == NULL && t.n == 0);
}

static void test_grows_and_keeps_everything(void)
{
	struct hashtable t = { 0 };
	size_t n = 5000, found = 0;

	for (uint32_t k = 0; k < n; k++) {
		struct item *it = calloc(1, sizeof(*it));

		CHECK(it != NULL);
		if (!it || hashtable_reserve(&t) < 0) {
			free(it);
			break;
		}
		it->key = k;
		hashtable_insert(&t, &it->node, hashtable_hash_bytes(&k, sizeof(k)));
	}
	CHECK_EQ_INT(t.n, n);
	CHECK(t.nbuckets >= n);
	CHECK(well_formed(&t));
	for (uint32_t k = 0; k < n; k++)
		found += find(&t, k, hashtable_hash_bytes(&k, sizeof(k))) != NULL;
	CHECK_EQ_INT(found, n);
	hashtable_clear(&t, free_item);
	CHECK(t.n == 0 && t.nbuckets == 0);
}

/*
 * Inserts, removals and look-ups drawn at random, with a weak hash (many keys share one) and a
 * real one, checked after every step against a plain array searched from end to end.
 */
static void run_against_array(uint32_t (*hash_of)(uint32_t), uint32_t keyspace, size_t steps)
{
	struct hashtable t = { 0 };
	struct item **oracle = calloc(keyspace, sizeof(*oracle));
	size_t live = 0, mismatches = 0;

	CHECK(oracle != NULL);
	if (!oracle)
		return;
	for (size_t step = 0; step < steps; step++) {
		uint64_t x = rng();
		uint32_t key = (uint32_t)(x % keyspace);
		uint32_t hash = hash_of(key);
		struct item *got = find(&t, key, hash);
		struct item *want = NULL;

		for (uint32_t k = 0; k < keyspace; k++)
			if (oracle[k] && oracle[k]->key == key)
				want = oracle[k];
		if (got != want)
			mismatches++;
		if ((x >> 32) % 3 != 0 && !got) {
			struct item *it = calloc(1, sizeof(*it));

			if (!it || hashtable_reserve(&t) < 0) {
				free(it);
				CHECK(!"out of memory");
				break;
			}
			it->key = key;
			hashtable_insert(&t, &it->node, hash);
			oracle[key] = it;
			live++;
		} else if ((x >> 32) % 3 == 0 && got) {
			hashtable_remove(&t, &got->node);
			free(got);
			oracle[key] = NULL;
			live--;
		}
		if (t.n != live || (step % 64 == 0 && !well_formed(&t)))
			mismatches++;
	}
	CHECK_EQ_INT(mismatches, 0);
	CHECK(well_formed(&t));
	CHECK_EQ_INT(t.n, live);
	hashtable_clear(&t, free_item);
	free(oracle);
}

static uint32_t weak_hash(uint32_t key)
{
	return key % 7;
}

static uint32_t fnv_hash(uint32_t key)
{
	return hashtable_hash_bytes(&key, sizeof(key));
}

static void test_random_against_array_colliding(void)
{
	run_against_array(weak_hash, 300, 20000);
}

static void test_random_against_array(void)
{
	run_against_array(fnv_hash, 3000, 40000);
}

static void test_clear_without_free(void)
{
	struct item items[10];
	struct hashtable t = { 0 };

	for (uint32_t k = 0; k < 10; k++) {
		items[k].key = k;
		CHECK_EQ_INT(hashtable_reserve(&t), 0);
		hashtable_insert(&t, &items[k].node, fnv_hash(k));
	}
	CHECK(find(&t, 3, fnv_hash(3)) == &items[3]);
	/* Nodes owned elsewhere: only the buckets go. */
	hashtable_clear(&t, NULL);
	CHECK(t.n == 0 && hashtable_chain(&t, fnv_hash(3)) == NULL);
}

int main(void)
{
	RUN(test_hash_vectors);
	RUN(test_empty);
	RUN(test_grows_and_keeps_everything);
	RUN(test_random_against_array_colliding);
	RUN(test_random_against_array);
	RUN(test_clear_without_free);
	return test_failures != 0;
}
