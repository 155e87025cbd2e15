/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Turns resolved rules into the BPF maps' contents: exact addresses, prefixes, port sets. */
#ifndef LAUNCH_ALLOWLIST_H
#define LAUNCH_ALLOWLIST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/types.h>
#include <netinet/in.h>

#include "bpf/launch.h"
#include "lib/util.h"

/* One resolved rule: an address prefix (mapped form) with its ports and protocols. */
struct allow_rule {
	struct in6_addr addr;
	unsigned int prefixlen; /* 0-128, IPv4 as 96 + N */
	const struct port_range *ports;
	unsigned int nports;
	unsigned int protos;
};

struct allow_exact {
	struct addr_key key;
	__u32 set; /* index into sets */
};

struct allow_prefix {
	struct prefix_key key; /* host bits are zero */
	__u32 set;
};

/*
 * What the kernel gets. Every entry's port set is the union of its own rules and of every
 * shorter prefix that contains it, because the LPM trie returns only the longest match:
 * 10.0.0.0/8 port 80 plus 10.1.0.0/16 port 443 must still allow 10.1.2.3:80.
 */
struct allowlist {
	struct allow_exact *exact; /* prefixlen 128 */
	size_t nexact;
	struct allow_prefix *prefixes; /* prefixlen < 128 */
	size_t nprefixes;
	struct port_set *sets; /* deduplicated */
	size_t nsets;
};

/*
 * Builds the allowlist. Returns 0, -ENOMEM, or -E2BIG with errbuf naming the limit that was
 * exceeded (MAX_ALLOW_ENTRIES, MAX_PORT_SETS or MAX_PORT_RANGES).
 */
int allowlist_build(const struct allow_rule *rules, size_t nrules, struct allowlist **ret_list,
		    char *errbuf, size_t errlen);
void allowlist_free(struct allowlist *list);
DEFINE_TRIVIAL_CLEANUP_FUNC(struct allowlist *, allowlist_free)

/*
 * Writes the distinct prefix lengths of list->prefixes, longest first, with their masks.
 * Returns how many, or -E2BIG when there are more than max (the trie is used then).
 */
int allowlist_prefix_masks(const struct allowlist *list, struct prefix_mask *ret_masks, size_t max);
/* The same for any array of prefixes. */
int allowlist_masks_of(const struct allow_prefix *prefixes, size_t nprefixes,
		       struct prefix_mask *ret_masks, size_t max);

/* A prefix is expanded into at most 2^EXPAND_MAX_BITS longer ones. */
#define EXPAND_MAX_BITS 4

/*
 * Controlled prefix expansion: list->prefixes rewritten with fewer distinct lengths, each
 * prefix turned into the 2^k prefixes k bits longer that make it up, where k is up to the
 * next longer length present (at most EXPAND_MAX_BITS) and the total stays within
 * max_entries. A longest-match lookup over the result gives every address the port set it
 * gets from list->prefixes, with fewer lengths to try: the hashed lookup costs one hash
 * lookup per length. Writes a new array (free it) and its length; 0 or -ENOMEM.
 */
int allowlist_expand_prefixes(const struct allowlist *list, size_t max_entries,
			      struct allow_prefix **ret_prefixes, size_t *ret_n);

/* The decision the BPF programs make, in user space: for tests and `launch check`. */
bool allowlist_allows(const struct allowlist *list, const struct in6_addr *addr, uint16_t port,
		      unsigned int proto);
/* The decision for one port set, shared with allowlist_allows. */
bool port_set_allows(const struct port_set *set, uint16_t port, unsigned int proto);

#endif /* LAUNCH_ALLOWLIST_H */
