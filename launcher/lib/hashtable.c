// SPDX-License-Identifier: LGPL-2.1-or-later
/* A chained, intrusive hash table: the memory of the DNS proxy's names and addresses. */
#include <errno.h>
#include <stdlib.h>

#include "hashtable.h"

/* The first size a table takes: the proxy's tables rarely stay below it. */
#define HASHTABLE_MIN_BUCKETS 64

uint32_t hashtable_hash_bytes(const void *data, size_t len)
{
	const unsigned char *p = data;
	uint32_t h = 2166136261u;

	for (size_t i = 0; i < len; i++)
		h = (h ^ p[i]) * 16777619u;
	return h;
}

int hashtable_reserve(struct hashtable *t)
{
	struct hashtable_node **buckets;
	size_t nbuckets;

	if (t->n < t->nbuckets)
		return 0;
	nbuckets = t->nbuckets ? t->nbuckets * 2 : HASHTABLE_MIN_BUCKETS;
	buckets = calloc(nbuckets, sizeof(*buckets));
	if (!buckets)
		return -ENOMEM;
	/* Each node keeps its hash: moving it costs no call back into the caller. */
	for (size_t i = 0; i < t->nbuckets; i++) {
		struct hashtable_node *node = t->buckets[i], *next;

		for (; node; node = next) {
			size_t slot = node->hash & (nbuckets - 1);

			next = node->next;
			node->next = buckets[slot];
			buckets[slot] = node;
		}
	}
	free(t->buckets);
	t->buckets = buckets;
	t->nbuckets = nbuckets;
	return 0;
}

void hashtable_insert(struct hashtable *t, struct hashtable_node *node, uint32_t hash)
{
	size_t slot = hash & (t->nbuckets - 1);

	node->hash = hash;
	node->next = t->buckets[slot];
	t->buckets[slot] = node;
	t->n++;
}

struct hashtable_node *hashtable_chain(const struct hashtable *t, uint32_t hash)
{
	return t->nbuckets ? t->buckets[hash & (t->nbuckets - 1)] : NULL;
}

void hashtable_remove(struct hashtable *t, struct hashtable_node *node)
{
	struct hashtable_node **link = &t->buckets[node->hash & (t->nbuckets - 1)];

	while (*link != node)
		link = &(*link)->next;
	*link = node->next;
	t->n--;
}

void hashtable_clear(struct hashtable *t, void (*free_node)(struct hashtable_node *node))
{
	for (size_t b = 0; b < t->nbuckets; b++) {
		struct hashtable_node *node = t->buckets[b], *next;

		for (; node; node = next) {
			next = node->next;
			if (free_node)
				free_node(node);
		}
	}
	free(t->buckets);
	t->buckets = NULL;
	t->nbuckets = t->n = 0;
}
