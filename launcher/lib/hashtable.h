/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A chained hash table, intrusive: each element embeds a struct hashtable_node (usually as its
 * first member) and the caller compares keys while walking a chain.
 */
#ifndef LAUNCH_HASHTABLE_H
#define LAUNCH_HASHTABLE_H

#include <stddef.h>
#include <stdint.h>

struct hashtable_node {
	struct hashtable_node *next;
	uint32_t hash;
};

/* Zero-filled is an empty table. Callers may walk buckets[0..nbuckets) to visit every node. */
struct hashtable {
	struct hashtable_node **buckets;
	size_t nbuckets; /* 0, or a power of two */
	size_t n;
};

/* FNV-1a over the bytes. */
uint32_t hashtable_hash_bytes(const void *data, size_t len);
/*
 * Makes room for one more node, so that the hashtable_insert after it cannot fail: the table
 * doubles when it would hold more nodes than buckets. Returns 0 or -ENOMEM.
 */
int hashtable_reserve(struct hashtable *t);
void hashtable_insert(struct hashtable *t, struct hashtable_node *node, uint32_t hash);
/* The chain where nodes of `hash` live (with others); NULL when there is none. */
struct hashtable_node *hashtable_chain(const struct hashtable *t, uint32_t hash);
/* The node must be in the table. */
void hashtable_remove(struct hashtable *t, struct hashtable_node *node);
/* Passes every node to free_node (which may be NULL) and empties the table. */
void hashtable_clear(struct hashtable *t, void (*free_node)(struct hashtable_node *node));

#endif /* LAUNCH_HASHTABLE_H */
