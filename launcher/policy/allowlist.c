// SPDX-License-Identifier: LGPL-2.1-or-later
/* Turns resolved rules into the BPF maps' contents: exact addresses, prefixes, port sets. */
#include <errno.h>
#include <stddef.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <arpa/inet.h>

#include "allowlist.h"
#include "lib/hashtable.h"
#include "policy.h"

/* Open-addressing table for port set deduplication: a power of two, at most half full. */
#define SET_HASH_SLOTS (4 * MAX_PORT_SETS)
/* Nested prefixes have strictly growing lengths 0..128, so a chain holds at most 129. */
#define PREFIX_CHAIN_MAX 129

/* A rule's place in the sorted order: its masked prefix, then which rule it was. */
struct rule_ref {
	struct in6_addr addr; /* host bits cleared */
	unsigned int prefixlen;
	size_t rule;
};

/* One distinct (masked address, prefix length): becomes one map entry. */
struct node {
	struct in6_addr addr;
	unsigned int prefixlen;
	size_t first_ref; /* its rules are refs[first_ref .. first_ref + nrefs) */
	size_t nrefs;
	__u32 set;
};

/* Port intervals of one protocol; 32-bit so that hi + 1 cannot wrap at 65535. */
struct interval {
	__u32 lo;
	__u32 hi;
};

struct interval_vec {
	struct interval *items;
	size_t n;
	size_t cap;
};

struct set_table {
	struct port_set *sets;
	size_t nsets;
	int slots[SET_HASH_SLOTS]; /* index into sets, or -1 */
};

__attribute__((format(printf, 3, 4))) static void set_error(char *errbuf, size_t errlen,
							    const char *fmt, ...)
{
	va_list ap;

	if (!errbuf || errlen == 0)
		return;
	va_start(ap, fmt);
	vsnprintf(errbuf, errlen, fmt, ap);
	va_end(ap);
}

/* "10.0.0.0/8", "192.0.2.1", "2001:db8::/32": IPv4 lengths in IPv4 terms when mapped. */
static const char *format_prefix(const struct in6_addr *addr, unsigned int prefixlen, char *buf,
				 size_t len)
{
	char abuf[INET6_ADDRSTRLEN];

	policy_format_addr(addr, abuf, sizeof(abuf));
	if (prefixlen == 128)
		snprintf(buf, len, "%s", abuf);
	else if (policy_addr_is_v4(addr) && prefixlen >= 96)
		snprintf(buf, len, "%s/%u", abuf, prefixlen - 96);
	else
		snprintf(buf, len, "%s/%u", abuf, prefixlen);
	return buf;
}

static void mask_addr(struct in6_addr *addr, unsigned int prefixlen)
{
	unsigned int byte = prefixlen / 8, bits = prefixlen % 8;

	if (prefixlen >= 128)
		return;
	if (bits) {
		addr->s6_addr[byte] &= (uint8_t)(0xff << (8 - bits));
		byte++;
	}
	memset(&addr->s6_addr[byte], 0, 16 - byte);
}

static int cmp_prefix(const struct in6_addr *a, unsigned int alen, const struct in6_addr *b,
		      unsigned int blen)
{
	int r = memcmp(a, b, sizeof(*a));

	if (r)
		return r;
	return (alen > blen) - (alen < blen);
}

static int cmp_rule_ref(const void *a, const void *b)
{
	const struct rule_ref *x = a, *y = b;
	int r = cmp_prefix(&x->addr, x->prefixlen, &y->addr, y->prefixlen);

	if (r)
		return r;
	/* Stable order within a node keeps the output independent of qsort's whims. */
	return (x->rule > y->rule) - (x->rule < y->rule);
}

static bool prefix_contains(const struct node *outer, const struct node *inner)
{
	struct in6_addr masked;

	if (outer->prefixlen >= inner->prefixlen)
		return false;
	masked = inner->addr;
	mask_addr(&masked, outer->prefixlen);
	return memcmp(&masked, &outer->addr, sizeof(masked)) == 0;
}

static int interval_push(struct interval_vec *vec, __u32 lo, __u32 hi)
{
	if (vec->n == vec->cap) {
		size_t cap = vec->cap ? vec->cap * 2 : 64;
		struct interval *items = realloc(vec->items, cap * sizeof(*items));

		if (!items)
			return -ENOMEM;
		vec->items = items;
		vec->cap = cap;
	}
	vec->items[vec->n++] = (struct interval){ .lo = lo, .hi = hi };
	return 0;
}

static int cmp_interval(const void *a, const void *b)
{
	const struct interval *x = a, *y = b;

	if (x->lo != y->lo)
		return (x->lo > y->lo) - (x->lo < y->lo);
	return (x->hi > y->hi) - (x->hi < y->hi);
}

/* Sorts and merges overlapping or adjacent intervals (80-90 and 91-100 become 80-100). */
static void interval_coalesce(struct interval_vec *vec)
{
	size_t i, out = 0;

	if (vec->n < 2)
		return;
	qsort(vec->items, vec->n, sizeof(*vec->items), cmp_interval);
	for (i = 1; i < vec->n; i++) {
		struct interval *last = &vec->items[out];

		if (vec->items[i].lo <= last->hi + 1) {
			if (vec->items[i].hi > last->hi)
				last->hi = vec->items[i].hi;
		} else {
			vec->items[++out] = vec->items[i];
		}
	}
	vec->n = out + 1;
}

static void port_set_append(struct port_set *set, const struct interval *iv, __u32 protos)
{
	set->ranges[set->nranges++] =
		(struct port_range){ .lo = (__u16)iv->lo, .hi = (__u16)iv->hi, .protos = protos };
}

/* Which list holds the next interval in port order: < 0 TCP, > 0 UDP, 0 both alike. */
static int next_interval(const struct interval_vec *tcp, size_t i, const struct interval_vec *udp,
			 size_t j)
{
	if (i == tcp->n)
		return 1;
	if (j == udp->n)
		return -1;
	return cmp_interval(&tcp->items[i], &udp->items[j]);
}

/*
 * Emits the TCP and UDP intervals as one canonical port set: an interval present in both
 * lists becomes one PROTO_ANY range, the rest keep their protocol, all sorted by port. The
 * set is zeroed first because it is copied byte for byte into a BPF map and compared
 * with memcmp for deduplication.
 */
static int port_set_from_intervals(const struct interval_vec *tcp, const struct interval_vec *udp,
				   struct port_set *set, unsigned int *ret_needed)
{
	size_t i = 0, j = 0;
	unsigned int needed = 0;

	/* Count first so an oversized set is reported with its real size. */
	while (i < tcp->n || j < udp->n) {
		int c = next_interval(tcp, i, udp, j);

		if (c <= 0)
			i++;
		if (c >= 0)
			j++;
		needed++;
	}
	*ret_needed = needed;
	if (needed > MAX_PORT_RANGES)
		return -E2BIG;

	memset(set, 0, sizeof(*set));
	i = j = 0;
	while (i < tcp->n || j < udp->n) {
		int c = next_interval(tcp, i, udp, j);

		if (c == 0) {
			port_set_append(set, &tcp->items[i++], PROTO_ANY);
			j++;
		} else if (c < 0) {
			port_set_append(set, &tcp->items[i++], PROTO_TCP);
		} else {
			port_set_append(set, &udp->items[j++], PROTO_UDP);
		}
	}
	return 0;
}

static __u32 port_set_hash(const struct port_set *set)
{
	return hashtable_hash_bytes(set, offsetof(struct port_set, ranges) +
						 set->nranges * sizeof(set->ranges[0]));
}

/* Returns the index of an identical set, adding it when new; -E2BIG past MAX_PORT_SETS. */
static int set_table_intern(struct set_table *table, const struct port_set *set, __u32 *ret_index)
{
	size_t slot = port_set_hash(set) & (SET_HASH_SLOTS - 1);

	for (;; slot = (slot + 1) & (SET_HASH_SLOTS - 1)) {
		int index = table->slots[slot];

		if (index < 0)
			break;
		if (memcmp(&table->sets[index], set, sizeof(*set)) == 0) {
			*ret_index = (__u32)index;
			return 0;
		}
	}
	if (table->nsets == MAX_PORT_SETS)
		return -E2BIG;
	table->sets[table->nsets] = *set;
	table->slots[slot] = (int)table->nsets;
	*ret_index = (__u32)table->nsets++;
	return 0;
}

static int validate_rules(const struct allow_rule *rules, size_t nrules, char *errbuf,
			  size_t errlen)
{
	size_t i, k;

	for (i = 0; i < nrules; i++) {
		const struct allow_rule *rule = &rules[i];

		if (rule->prefixlen > 128) {
			set_error(errbuf, errlen,
				  "allowlist: rule %zu: prefix length %u is beyond 128", i,
				  rule->prefixlen);
			return -EINVAL;
		}
		if (rule->nports > 0 && !rule->ports) {
			set_error(errbuf, errlen, "allowlist: rule %zu: %u ports but no array", i,
				  rule->nports);
			return -EINVAL;
		}
		if (rule->protos & ~PROTO_ANY) {
			set_error(errbuf, errlen, "allowlist: rule %zu: unknown protocol bits 0x%x",
				  i, rule->protos);
			return -EINVAL;
		}
		for (k = 0; k < rule->nports; k++)
			if (rule->ports[k].lo > rule->ports[k].hi) {
				set_error(errbuf, errlen,
					  "allowlist: rule %zu: port range %u-%u is reversed", i,
					  rule->ports[k].lo, rule->ports[k].hi);
				return -EINVAL;
			}
	}
	return 0;
}

/* A rule without ports or protocols allows nothing and needs no map entry. */
static bool rule_allows_something(const struct allow_rule *rule)
{
	return rule->nports > 0 && (rule->protos & PROTO_ANY);
}

/*
 * The protocols come from rule->protos, not from each range's own protos field: the rule
 * is what the policy entry said ("protocol"), and a caller that fills only one of the two
 * must not get a silently narrower or wider allowlist.
 */
static int collect_rule_ports(const struct allow_rule *rule, struct interval_vec *tcp,
			      struct interval_vec *udp)
{
	unsigned int k;
	int r;

	for (k = 0; k < rule->nports; k++) {
		const struct port_range *range = &rule->ports[k];

		if (rule->protos & PROTO_TCP) {
			r = interval_push(tcp, range->lo, range->hi);
			if (r < 0)
				return r;
		}
		if (rule->protos & PROTO_UDP) {
			r = interval_push(udp, range->lo, range->hi);
			if (r < 0)
				return r;
		}
	}
	return 0;
}

static int collect_set_ports(const struct port_set *set, struct interval_vec *tcp,
			     struct interval_vec *udp)
{
	__u32 k;
	int r;

	for (k = 0; k < set->nranges; k++) {
		const struct port_range *range = &set->ranges[k];

		if (range->protos & PROTO_TCP) {
			r = interval_push(tcp, range->lo, range->hi);
			if (r < 0)
				return r;
		}
		if (range->protos & PROTO_UDP) {
			r = interval_push(udp, range->lo, range->hi);
			if (r < 0)
				return r;
		}
	}
	return 0;
}

void allowlist_free(struct allowlist *list)
{
	if (!list)
		return;
	free(list->exact);
	free(list->prefixes);
	free(list->sets);
	free(list);
}

static void set_table_free(struct set_table *table)
{
	if (!table)
		return;
	free(table->sets);
	free(table);
}
DEFINE_TRIVIAL_CLEANUP_FUNC(struct set_table *, set_table_free)

static void interval_vec_release(struct interval_vec *vec)
{
	free(vec->items);
}

/*
 * Gives every node the union of its own ports and those of every prefix containing it.
 * Nodes are sorted by (address, prefix length), so a prefix comes before everything it
 * contains, and prefixes are either nested or disjoint; a stack of the open chain of
 * enclosing prefixes therefore yields each node's nearest container in O(1) amortised.
 * That container's set is already final (its own containers folded in), so one union per
 * node is enough: O(n log n) overall, dominated by the sort.
 */
static int assign_port_sets(const struct allow_rule *rules, const struct rule_ref *refs,
			    struct node *nodes, size_t nnodes, struct set_table *table,
			    char *errbuf, size_t errlen)
{
	_cleanup_(interval_vec_release) struct interval_vec tcp = { 0 }, udp = { 0 };
	size_t chain[PREFIX_CHAIN_MAX], depth = 0, i, k;
	char pbuf[INET6_ADDRSTRLEN + 16];
	struct port_set set;
	int r;

	for (i = 0; i < nnodes; i++) {
		struct node *node = &nodes[i];
		unsigned int needed;

		while (depth > 0 && !prefix_contains(&nodes[chain[depth - 1]], node))
			depth--;
		tcp.n = udp.n = 0;
		if (depth > 0) {
			r = collect_set_ports(&table->sets[nodes[chain[depth - 1]].set], &tcp,
					      &udp);
			if (r < 0)
				return r;
		}
		for (k = 0; k < node->nrefs; k++) {
			r = collect_rule_ports(&rules[refs[node->first_ref + k].rule], &tcp, &udp);
			if (r < 0)
				return r;
		}
		interval_coalesce(&tcp);
		interval_coalesce(&udp);

		r = port_set_from_intervals(&tcp, &udp, &set, &needed);
		if (r == -E2BIG) {
			set_error(errbuf, errlen,
				  "allowlist: %s needs %u port ranges (its own and those of "
				  "enclosing prefixes), at most %d (MAX_PORT_RANGES)",
				  format_prefix(&node->addr, node->prefixlen, pbuf, sizeof(pbuf)),
				  needed, MAX_PORT_RANGES);
			return r;
		}
		r = set_table_intern(table, &set, &node->set);
		if (r == -E2BIG) {
			set_error(errbuf, errlen,
				  "allowlist: more than %d distinct port sets (MAX_PORT_SETS), "
				  "exceeded at %s",
				  MAX_PORT_SETS,
				  format_prefix(&node->addr, node->prefixlen, pbuf, sizeof(pbuf)));
			return r;
		}
		/* Only a prefix can contain later nodes; a /128 never goes on the chain. */
		if (node->prefixlen < 128)
			chain[depth++] = i;
	}
	return 0;
}

int allowlist_build(const struct allow_rule *rules, size_t nrules, struct allowlist **ret_list,
		    char *errbuf, size_t errlen)
{
	_cleanup_(allowlist_freep) struct allowlist *list = NULL;
	_cleanup_(set_table_freep) struct set_table *table = NULL;
	_cleanup_free_ struct rule_ref *refs = NULL;
	_cleanup_free_ struct node *nodes = NULL;
	char pbuf[INET6_ADDRSTRLEN + 16];
	size_t nrefs = 0, nnodes = 0, nexact = 0, i;
	int r;

	if (errbuf && errlen)
		errbuf[0] = '\0';
	if (!ret_list || (nrules > 0 && !rules))
		return -EINVAL;
	r = validate_rules(rules, nrules, errbuf, errlen);
	if (r < 0)
		return r;

	list = calloc(1, sizeof(*list));
	table = calloc(1, sizeof(*table));
	if (!list || !table)
		return -ENOMEM;
	memset(table->slots, 0xff, sizeof(table->slots));
	table->sets = calloc(MAX_PORT_SETS, sizeof(*table->sets));
	if (!table->sets)
		return -ENOMEM;

	if (nrules > 0) {
		refs = calloc(nrules, sizeof(*refs));
		nodes = calloc(nrules, sizeof(*nodes));
		if (!refs || !nodes)
			return -ENOMEM;
	}
	for (i = 0; i < nrules; i++) {
		if (!rule_allows_something(&rules[i]))
			continue;
		refs[nrefs] = (struct rule_ref){ .addr = rules[i].addr,
						 .prefixlen = rules[i].prefixlen,
						 .rule = i };
		mask_addr(&refs[nrefs].addr, rules[i].prefixlen);
		nrefs++;
	}
	if (nrefs > 1)
		qsort(refs, nrefs, sizeof(*refs), cmp_rule_ref);

	for (i = 0; i < nrefs; i++) {
		if (nnodes > 0 && cmp_prefix(&nodes[nnodes - 1].addr, nodes[nnodes - 1].prefixlen,
					     &refs[i].addr, refs[i].prefixlen) == 0) {
			nodes[nnodes - 1].nrefs++;
			continue;
		}
		if (nnodes == MAX_ALLOW_ENTRIES) {
			set_error(errbuf, errlen,
				  "allowlist: more than %d addresses and prefixes "
				  "(MAX_ALLOW_ENTRIES), exceeded at %s",
				  MAX_ALLOW_ENTRIES,
				  format_prefix(&refs[i].addr, refs[i].prefixlen, pbuf,
						sizeof(pbuf)));
			return -E2BIG;
		}
		nodes[nnodes++] = (struct node){ .addr = refs[i].addr,
						 .prefixlen = refs[i].prefixlen,
						 .first_ref = i,
						 .nrefs = 1 };
	}

	r = assign_port_sets(rules, refs, nodes, nnodes, table, errbuf, errlen);
	if (r < 0)
		return r;

	for (i = 0; i < nnodes; i++)
		if (nodes[i].prefixlen == 128)
			nexact++;
	if (nexact > 0) {
		list->exact = calloc(nexact, sizeof(*list->exact));
		if (!list->exact)
			return -ENOMEM;
	}
	if (nnodes - nexact > 0) {
		list->prefixes = calloc(nnodes - nexact, sizeof(*list->prefixes));
		if (!list->prefixes)
			return -ENOMEM;
	}
	/* Both arrays stay in (address, prefix length) order: allowlist_allows bsearches them. */
	for (i = 0; i < nnodes; i++) {
		const struct node *node = &nodes[i];

		if (node->prefixlen == 128) {
			struct allow_exact *e = &list->exact[list->nexact++];

			memcpy(e->key.addr, &node->addr, sizeof(e->key.addr));
			e->set = node->set;
		} else {
			struct allow_prefix *p = &list->prefixes[list->nprefixes++];

			p->key.prefixlen = node->prefixlen;
			memcpy(p->key.addr, &node->addr, sizeof(p->key.addr));
			p->set = node->set;
		}
	}
	if (table->nsets > 0) {
		list->sets = calloc(table->nsets, sizeof(*list->sets));
		if (!list->sets)
			return -ENOMEM;
		memcpy(list->sets, table->sets, table->nsets * sizeof(*list->sets));
		list->nsets = table->nsets;
	}
	*ret_list = TAKE_PTR(list);
	return 0;
}

bool port_set_allows(const struct port_set *set, uint16_t port, unsigned int proto)
{
	__u32 i;

	/* Same bound as the BPF loop: nranges beyond the array counts as the array. */
	for (i = 0; i < set->nranges && i < MAX_PORT_RANGES; i++) {
		const struct port_range *range = &set->ranges[i];

		if (range->lo <= port && port <= range->hi && (range->protos & proto))
			return true;
	}
	return false;
}

static int cmp_exact(const void *key, const void *elem)
{
	const struct allow_exact *e = elem;

	return memcmp(key, e->key.addr, sizeof(e->key.addr));
}

static int cmp_prefix_key(const void *key, const void *elem)
{
	const struct prefix_key *k = key;
	const struct allow_prefix *p = elem;
	int r = memcmp(k->addr, p->key.addr, sizeof(k->addr));

	if (r)
		return r;
	return (k->prefixlen > p->key.prefixlen) - (k->prefixlen < p->key.prefixlen);
}

static const struct port_set *lookup_set(const struct allowlist *list, __u32 index)
{
	return index < list->nsets ? &list->sets[index] : NULL;
}

bool allowlist_allows(const struct allowlist *list, const struct in6_addr *addr, uint16_t port,
		      unsigned int proto)
{
	const struct allow_exact *exact;
	const struct port_set *set = NULL;
	int len;

	if (!list || !addr)
		return false;
	exact = list->nexact ? bsearch(addr->s6_addr, list->exact, list->nexact,
				       sizeof(*list->exact), cmp_exact)
			     : NULL;
	if (exact) {
		set = lookup_set(list, exact->set);
	} else if (list->nprefixes > 0) {
		/* Longest prefix first, as the LPM trie answers. */
		for (len = 127; len >= 0; len--) {
			struct prefix_key key = { .prefixlen = (__u32)len };
			struct in6_addr masked = *addr;
			const struct allow_prefix *p;

			mask_addr(&masked, (unsigned int)len);
			memcpy(key.addr, &masked, sizeof(key.addr));
			p = bsearch(&key, list->prefixes, list->nprefixes, sizeof(*list->prefixes),
				    cmp_prefix_key);
			if (p) {
				set = lookup_set(list, p->set);
				break;
			}
		}
	}
	return set && port_set_allows(set, port, proto);
}

int allowlist_prefix_masks(const struct allowlist *list, struct prefix_mask *ret_masks, size_t max)
{
	return allowlist_masks_of(list->prefixes, list->nprefixes, ret_masks, max);
}

int allowlist_masks_of(const struct allow_prefix *prefixes, size_t nprefixes,
		       struct prefix_mask *ret_masks, size_t max)
{
	bool seen[129] = { false };
	size_t n = 0;

	for (size_t i = 0; i < nprefixes; i++)
		seen[prefixes[i].key.prefixlen] = true;
	for (int len = 128; len >= 0; len--) {
		if (!seen[len])
			continue;
		if (n == max)
			return -E2BIG;
		ret_masks[n].prefixlen = (__u32)len;
		for (int w = 0; w < 4; w++) {
			int bits = len - 32 * w;

			bits = bits < 0 ? 0 : bits > 32 ? 32 : bits;
			ret_masks[n].mask[w] = bits ? htonl(~0u << (32 - bits)) : 0;
		}
		n++;
	}
	return (int)n;
}

/* One expanded entry, and the length of the prefix it came from. */
struct expanded {
	struct allow_prefix prefix;
	unsigned int from_len;
};

/* By length and address; for the same key, the entry from the longest prefix first. */
static int cmp_expanded(const void *a, const void *b)
{
	const struct expanded *x = a, *y = b;
	int r;

	if (x->prefix.key.prefixlen != y->prefix.key.prefixlen)
		return x->prefix.key.prefixlen < y->prefix.key.prefixlen ? -1 : 1;
	r = memcmp(x->prefix.key.addr, y->prefix.key.addr, sizeof(x->prefix.key.addr));
	if (r)
		return r;
	return (x->from_len < y->from_len) - (x->from_len > y->from_len);
}

/* Sets bits [from, from + nbits) of addr (network order) to the low bits of value. */
static void set_bits(__u8 *addr, unsigned int from, unsigned int nbits, __u32 value)
{
	for (unsigned int b = 0; b < nbits; b++) {
		unsigned int bit = from + b;
		__u8 mask = (__u8)(0x80u >> (bit % 8));

		if (value & (1u << (nbits - 1 - b)))
			addr[bit / 8] |= mask;
		else
			addr[bit / 8] &= (__u8)~mask;
	}
}

int allowlist_expand_prefixes(const struct allowlist *list, size_t max_entries,
			      struct allow_prefix **ret_prefixes, size_t *ret_n)
{
	size_t count[129] = { 0 }, total = list->nprefixes, n = 0, out = 0;
	unsigned int target[129];
	_cleanup_free_ struct expanded *all = NULL;
	struct allow_prefix *result;

	for (unsigned int len = 0; len <= 128; len++)
		target[len] = len;
	for (size_t i = 0; i < list->nprefixes; i++)
		count[list->prefixes[i].key.prefixlen]++;
	/*
	 * Shortest first: a length goes into the next longer one present when that multiplies
	 * its prefixes by at most EXPAND_MAX_FACTOR and the whole stays within max_entries.
	 */
	for (unsigned int len = 0; len < 128; len++) {
		unsigned int next = len + 1;
		size_t grown;

		if (!count[len])
			continue;
		while (next <= 128 && !count[next])
			next++;
		if (next > 128 || next - len > EXPAND_MAX_BITS)
			continue;
		grown = count[len] << (next - len);
		if (total - count[len] + grown > max_entries)
			continue;
		total = total - count[len] + grown;
		count[next] += grown;
		count[len] = 0;
		target[len] = next;
	}
	for (unsigned int len = 128; len-- > 0;)
		target[len] = target[target[len]];

	all = calloc(total ? total : 1, sizeof(*all));
	if (!all)
		return -ENOMEM;
	for (size_t i = 0; i < list->nprefixes; i++) {
		const struct allow_prefix *p = &list->prefixes[i];
		unsigned int len = p->key.prefixlen, to = target[len];

		for (__u32 v = 0; v < (1u << (to - len)); v++) {
			struct expanded *e = &all[n++];

			e->prefix = *p;
			e->prefix.key.prefixlen = to;
			set_bits(e->prefix.key.addr, len, to - len, v);
			e->from_len = len;
		}
	}
	/*
	 * Where pieces of several prefixes meet, the longest prefix's stays: its port set holds
	 * every covering prefix's ports already (allowlist_build).
	 */
	qsort(all, n, sizeof(*all), cmp_expanded);
	result = calloc(n ? n : 1, sizeof(*result));
	if (!result)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		if (i == 0 || all[i].prefix.key.prefixlen != all[i - 1].prefix.key.prefixlen ||
		    memcmp(all[i].prefix.key.addr, all[i - 1].prefix.key.addr,
			   sizeof(all[i].prefix.key.addr)) != 0)
			result[out++] = all[i].prefix;
	*ret_prefixes = result;
	*ret_n = out;
	return 0;
}
