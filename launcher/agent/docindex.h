/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* search_docs' index: the packages' declared methods and README sections, in SQLite FTS5. */
#ifndef LAUNCH_DOCINDEX_H
#define LAUNCH_DOCINDEX_H

#include <stddef.h>

struct cJSON;
struct docindex;

#define DOCINDEX_LIMIT_DEFAULT 5
#define DOCINDEX_LIMIT_MAX     20

/*
 * Reads the packages of a node_modules folder (files are parsed, nothing runs) into an index in
 * memory. Returns 0 and fills ret_index and the counts, or a negative errno.
 */
int docindex_build(const char *modules, struct docindex **ret_index, size_t *ret_entries,
		   size_t *ret_packages);

/*
 * The best limit entries for a query of words, best first: a JSON array of objects with
 * name, signature, description and source ("file:line"), empty when nothing matches. Returns 0
 * and *ret_results, or a negative errno.
 */
int docindex_search(struct docindex *index, const char *query, int limit,
		    struct cJSON **ret_results);

void docindex_free(struct docindex *index);

#endif /* LAUNCH_DOCINDEX_H */
