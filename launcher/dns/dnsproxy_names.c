// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The DNS proxy's names and addresses: which names the policies allow, the port sets their
 * answers open, each address's names and claims, and closing them when their time is over.
 */
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "dnsproxy_internal.h"
#include "lib/util.h"

/* (name, address) pairs over all names: wildcards let a job make up names. */
#define DNSPROXY_MAX_CLAIMS (4 * MAX_DNS_ALLOW_ENTRIES)

static uint32_t addr_hash(const struct in6_addr *addr)
{
	return hashtable_hash_bytes(addr, sizeof(*addr));
}

/* --- names, port sets, addresses --------------------------------------------------------- */

/* Whether any "host" rule covers the name (exact, or a wildcard it is below). */
bool dnsproxy_name_allowed(const struct dnsproxy *p, const char *name)
{
	for (size_t i = 0; i < p->nhosts; i++)
		if (dns_name_matches(p->hosts[i]->host, name))
			return true;
	return false;
}

/*
 * The id of a port set, writing it to the kernel when it is new. Sets are never freed or
 * rewritten: an address looked up an instant before it moved to another set must still find
 * the ports it was given, and the distinct unions of a few rules are few.
 */
static int dnsproxy_intern(struct dnsproxy *p, const struct port_set *set, uint32_t *ret_id)
{
	int r;

	for (size_t i = 0; i < p->nsets; i++) {
		if (memcmp(&p->sets[i], set, sizeof(*set)) == 0) {
			*ret_id = (uint32_t)i;
			return 0;
		}
	}
	if (p->nsets == MAX_DNS_PORT_SETS)
		return -E2BIG;
	r = p->ops->write_set(p->ops_ctx, (uint32_t)p->nsets, set);
	if (r < 0)
		return r;
	p->sets[p->nsets] = *set;
	*ret_id = (uint32_t)p->nsets++;
	return 0;
}

/*
 * The union of rules' ports, all given at one address, in the canonical form allowlist_build
 * makes (merged, sorted, zero-filled), so that equal unions intern to one set.
 */
static int dnsproxy_union(struct dnsproxy *p, const struct allow_rule *rules, size_t nrules,
			  uint32_t *ret_id)
{
	_cleanup_(allowlist_freep) struct allowlist *list = NULL;
	struct port_set set;
	int r;

	r = allowlist_build(rules, nrules, &list, NULL, 0);
	if (r < 0)
		return r;
	memset(&set, 0, sizeof(set));
	if (list->nexact > 0)
		set = list->sets[list->exact[0].set];
	return dnsproxy_intern(p, &set, ret_id);
}

/* The port set of a name: the union of every host rule matching it. */
static int dnsproxy_name_set(struct dnsproxy *p, const char *name, uint32_t *ret_id)
{
	_cleanup_free_ struct allow_rule *rules = calloc(p->nhosts ? p->nhosts : 1, sizeof(*rules));
	size_t n = 0;

	if (!rules)
		return -ENOMEM;
	for (size_t i = 0; i < p->nhosts; i++) {
		const struct policy_entry *entry = p->hosts[i];

		if (!dns_name_matches(entry->host, name))
			continue;
		rules[n++] = (struct allow_rule){
			.prefixlen = 128,
			.ports = entry->ports,
			.nports = entry->nports,
			.protos = entry->protos,
		};
	}
	return dnsproxy_union(p, rules, n, ret_id);
}

/* Whether a host rule with "http" matches the name: its addresses go to the gateway. */
static bool dnsproxy_name_gateway(const struct dnsproxy *p, const char *name)
{
	for (size_t i = 0; i < p->nhosts; i++)
		if (p->hosts[i]->http && dns_name_matches(p->hosts[i]->host, name))
			return true;
	return false;
}

/*
 * DNS_SET_GATEWAY when a name holding the address has a gateway host rule: the kernel then
 * sends the job's TCP connects to it to the gateway, whatever the other names allow.
 */
static uint32_t dnsproxy_addr_gateway(const struct dnsproxy *p, const struct dnsproxy_addr *a)
{
	for (size_t i = 0; i < a->nnames; i++)
		if (dnsproxy_name_gateway(p, a->names[i]->text))
			return DNS_SET_GATEWAY;
	return 0;
}

static int dnsproxy_addr_set_ports(struct dnsproxy *p, const struct dnsproxy_addr *a,
				   uint32_t *ret_id);

/* The value of an address in the kernel: its port set's id, and DNS_SET_GATEWAY. */
static int dnsproxy_addr_set(struct dnsproxy *p, const struct dnsproxy_addr *a, uint32_t *ret_id)
{
	int r = dnsproxy_addr_set_ports(p, a, ret_id);

	if (r == 0)
		*ret_id |= dnsproxy_addr_gateway(p, a);
	return r;
}

/* The port set of an address: its one name's, or the union of its names'. */
static int dnsproxy_addr_set_ports(struct dnsproxy *p, const struct dnsproxy_addr *a,
				   uint32_t *ret_id)
{
	_cleanup_free_ struct allow_rule *rules = NULL;
	size_t n = 0;

	if (a->nnames == 1) {
		*ret_id = a->names[0]->set_id;
		return 0;
	}
	rules = calloc(a->nnames * MAX_PORT_RANGES, sizeof(*rules));
	if (!rules)
		return -ENOMEM;
	for (size_t i = 0; i < a->nnames; i++) {
		const struct port_set *set = &p->sets[a->names[i]->set_id];

		for (uint32_t k = 0; k < set->nranges && k < MAX_PORT_RANGES; k++)
			rules[n++] = (struct allow_rule){
				.prefixlen = 128,
				.ports = &set->ranges[k],
				.nports = 1,
				.protos = set->ranges[k].protos,
			};
	}
	return dnsproxy_union(p, rules, n, ret_id);
}

/*
 * The SNI-checked ports of a name: those of every "sni" rule it matches. More than room for
 * is refused: the name's look-ups fail rather than open ports without the check.
 */
static int dnsproxy_name_sni(struct dnsproxy *p, struct dnsproxy_name *name)
{
	name->sni_udp = true;
	for (size_t i = 0; i < p->nhosts; i++) {
		const struct policy_entry *entry = p->hosts[i];

		if (!entry->sni || !dns_name_matches(entry->host, name->text))
			continue;
		name->sni_udp &= (entry->protos & PROTO_UDP) != 0;
		for (unsigned int k = 0; k < entry->nports; k++)
			for (unsigned int port = entry->ports[k].lo; port <= entry->ports[k].hi;
			     port++) {
				bool seen = false;

				for (size_t j = 0; j < name->nsni_ports && !seen; j++)
					seen = name->sni_ports[j] == port;
				if (seen)
					continue;
				if (name->nsni_ports == DNSPROXY_SNI_PORTS)
					return -E2BIG;
				name->sni_ports[name->nsni_ports++] = (uint16_t)port;
			}
	}
	return 0;
}

static struct dnsproxy_name *dnsproxy_name_find(const struct dnsproxy *p, const char *text,
						uint32_t hash)
{
	for (struct hashtable_node *n = hashtable_chain(&p->names, hash); n; n = n->next) {
		struct dnsproxy_name *name = (struct dnsproxy_name *)n;

		if (n->hash == hash && strcmp(name->text, text) == 0)
			return name;
	}
	return NULL;
}

static int dnsproxy_name_get(struct dnsproxy *p, const char *text, struct dnsproxy_name **ret_name)
{
	uint32_t hash = hashtable_hash_bytes(text, strlen(text));
	struct dnsproxy_name *name = dnsproxy_name_find(p, text, hash);
	int r;

	if (name) {
		*ret_name = name;
		return 0;
	}
	r = hashtable_reserve(&p->names);
	if (r < 0)
		return r;
	name = calloc(1, sizeof(*name) + strlen(text) + 1);
	if (!name)
		return -ENOMEM;
	strcpy(name->text, text);
	r = dnsproxy_name_set(p, text, &name->set_id);
	if (r == 0)
		r = dnsproxy_name_sni(p, name);
	if (r < 0) {
		free(name);
		return r;
	}
	hashtable_insert(&p->names, &name->node, hash);
	*ret_name = name;
	return 0;
}

static void dnsproxy_name_free(struct dnsproxy *p, struct dnsproxy_name *name)
{
	hashtable_remove(&p->names, &name->node);
	free(name->claims);
	free(name);
}

struct dnsproxy_addr *dnsproxy_addr_find(const struct dnsproxy *p, const struct in6_addr *addr)
{
	uint32_t hash = addr_hash(addr);

	for (struct hashtable_node *n = hashtable_chain(&p->addrs, hash); n; n = n->next) {
		struct dnsproxy_addr *a = (struct dnsproxy_addr *)n;

		if (n->hash == hash && memcmp(&a->addr, addr, sizeof(*addr)) == 0)
			return a;
	}
	return NULL;
}

struct dnsproxy_seen *dnsproxy_seen_find(const struct dnsproxy *p, const struct in6_addr *addr)
{
	uint32_t hash = addr_hash(addr);

	for (struct hashtable_node *n = hashtable_chain(&p->seen, hash); n; n = n->next) {
		struct dnsproxy_seen *s = (struct dnsproxy_seen *)n;

		if (n->hash == hash && memcmp(&s->addr, addr, sizeof(*addr)) == 0)
			return s;
	}
	return NULL;
}

static void dnsproxy_seen_free(struct dnsproxy *p, struct dnsproxy_seen *s)
{
	hashtable_remove(&p->seen, &s->node);
	free(s->name);
	free(s);
}

/* Remembers the latest name of an address; answers' addresses are forgotten oldest first. */
int dnsproxy_remember(struct dnsproxy *p, const struct in6_addr *addr, const char *name,
		      bool from_policy)
{
	struct dnsproxy_seen *s = dnsproxy_seen_find(p, addr);
	char *copy;
	int r;

	if (s) {
		if (strcmp(s->name, name) == 0)
			return 0;
		copy = strdup(name);
		if (!copy)
			return -ENOMEM;
		free(s->name);
		s->name = copy;
		return 0;
	}
	if (!from_policy && p->seen_count == DNSPROXY_NAME_HISTORY) {
		struct dnsproxy_seen *old = dnsproxy_seen_find(p, &p->seen_ring[p->seen_head]);

		if (old)
			dnsproxy_seen_free(p, old);
		p->seen_head = (p->seen_head + 1) % DNSPROXY_NAME_HISTORY;
		p->seen_count--;
	}
	r = hashtable_reserve(&p->seen);
	if (r < 0)
		return r;
	s = calloc(1, sizeof(*s));
	copy = strdup(name);
	if (!s || !copy) {
		free(s);
		free(copy);
		return -ENOMEM;
	}
	s->addr = *addr;
	s->name = copy;
	s->from_policy = from_policy;
	hashtable_insert(&p->seen, &s->node, addr_hash(addr));
	if (!from_policy) {
		p->seen_ring[(p->seen_head + p->seen_count) % DNSPROXY_NAME_HISTORY] = *addr;
		p->seen_count++;
	}
	return 0;
}

static void dnsproxy_addr_drop_name(struct dnsproxy_addr *a, const struct dnsproxy_name *name)
{
	for (size_t i = 0; i < a->nnames; i++) {
		if (a->names[i] == name) {
			a->names[i] = a->names[--a->nnames];
			return;
		}
	}
}

/*
 * Takes claim `index` away from its name: the address closes when no name holds it any more,
 * or narrows to the ports its other names allow. The name stays, even when empty.
 */
static void dnsproxy_unclaim(struct dnsproxy *p, struct dnsproxy_name *name, size_t index)
{
	struct dnsproxy_claim claim = name->claims[index];
	struct dnsproxy_addr *a = dnsproxy_addr_find(p, &claim.addr);
	uint32_t set_id;

	if (a) {
		dnsproxy_addr_drop_name(a, name);
		if (a->nnames == 0) {
			/*
			 * Only new connections are judged again: established ones go on. An
			 * address the kernel would keep allowing after we forgot it fails open:
			 * remembered, and dnsproxy_process stops the sandbox.
			 */
			int r = p->ops->close_addr(p->ops_ctx, &a->addr);

			if (r < 0 && !p->fatal)
				p->fatal = r;
			hashtable_remove(&p->addrs, &a->node);
			free(a->names);
			free(a);
			p->stats.closed++;
		} else {
			/* Narrowed to the names left, or the proxy stops: never the wider set. */
			int r = dnsproxy_addr_set(p, a, &set_id);
			if (r == 0 && set_id != a->set_id)
				r = p->ops->open_addr(p->ops_ctx, &a->addr, set_id);
			if (r == 0)
				a->set_id = set_id;
			else if (!p->fatal)
				p->fatal = r;
		}
		/*
		 * The name's SNI entries go last, as dnsproxy_claim writes them first: while the
		 * address is open for the name's ports, its marker stays, or a connection made in
		 * between would go unjudged for good.
		 */
		if (name->nsni_ports && p->ops->close_name) {
			int r = p->ops->close_name(p->ops_ctx, &claim.addr, name->text,
						   name->sni_ports, name->nsni_ports,
						   name->sni_udp);

			if (r < 0 && !p->fatal)
				p->fatal = r;
		}
	}
	memmove(&name->claims[index], &name->claims[index + 1],
		(name->nclaims - index - 1) * sizeof(*name->claims));
	name->nclaims--;
	p->nclaims--;
}

/* Closes the claim that would expire first, of any name; frees its name if empty but `keep`. */
static void dnsproxy_evict_oldest(struct dnsproxy *p, const struct dnsproxy_name *keep)
{
	struct dnsproxy_name *oldest = NULL;
	size_t oldest_index = 0;

	for (size_t b = 0; b < p->names.nbuckets; b++) {
		for (struct hashtable_node *n = p->names.buckets[b]; n; n = n->next) {
			struct dnsproxy_name *name = (struct dnsproxy_name *)n;

			for (size_t i = 0; i < name->nclaims; i++) {
				if (!oldest || name->claims[i].expires_ms <
						       oldest->claims[oldest_index].expires_ms) {
					oldest = name;
					oldest_index = i;
				}
			}
		}
	}
	if (!oldest)
		return;
	dnsproxy_unclaim(p, oldest, oldest_index);
	if (oldest->nclaims == 0 && oldest != keep)
		dnsproxy_name_free(p, oldest);
}

/*
 * The name holds the address until expires_ms: opened in the kernel (or given the union of
 * its names' ports) before this returns, that is before the answer reaches the job.
 */
static int dnsproxy_claim(struct dnsproxy *p, struct dnsproxy_name *name,
			  const struct in6_addr *addr, long long expires_ms)
{
	struct dnsproxy_addr *a;
	bool created = false;
	uint32_t set_id;
	int r;

	for (size_t i = 0; i < name->nclaims; i++) {
		struct dnsproxy_claim claim = name->claims[i];

		if (memcmp(&claim.addr, addr, sizeof(*addr)) != 0)
			continue;
		/* Seen again: it moves to the young end, and never closes earlier than before. */
		if (expires_ms > claim.expires_ms)
			claim.expires_ms = expires_ms;
		memmove(&name->claims[i], &name->claims[i + 1],
			(name->nclaims - i - 1) * sizeof(*name->claims));
		name->claims[name->nclaims - 1] = claim;
		return 0;
	}
	if (name->nclaims >= p->config.max_ips)
		dnsproxy_unclaim(p, name, 0);
	if (p->nclaims >= DNSPROXY_MAX_CLAIMS)
		dnsproxy_evict_oldest(p, name);
	r = array_grow((void **)&name->claims, &name->cap, name->nclaims + 1,
		       sizeof(*name->claims));
	if (r < 0)
		return r;

	a = dnsproxy_addr_find(p, addr);
	if (!a) {
		if (p->addrs.n >= MAX_DNS_ALLOW_ENTRIES)
			dnsproxy_evict_oldest(p, name);
		if (p->addrs.n >= MAX_DNS_ALLOW_ENTRIES)
			return -ENOSPC;
		r = hashtable_reserve(&p->addrs);
		if (r < 0)
			return r;
		a = calloc(1, sizeof(*a));
		if (!a)
			return -ENOMEM;
		a->addr = *addr;
		hashtable_insert(&p->addrs, &a->node, addr_hash(addr));
		created = true;
	}
	r = array_grow((void **)&a->names, &a->cap, a->nnames + 1, sizeof(*a->names));
	/*
	 * The SNI entries before the address opens (or widens) for this name: a connection
	 * the new ports allow is checked from the first.
	 */
	if (r == 0 && name->nsni_ports && p->ops->open_name)
		r = p->ops->open_name(p->ops_ctx, addr, name->text, name->sni_ports,
				      name->nsni_ports, name->sni_udp);
	if (r == 0) {
		a->names[a->nnames++] = name;
		r = dnsproxy_addr_set(p, a, &set_id);
		if (r == 0 && (created || set_id != a->set_id))
			r = p->ops->open_addr(p->ops_ctx, addr, set_id);
		if (r < 0) {
			a->nnames--;
			if (name->nsni_ports && p->ops->close_name)
				p->ops->close_name(p->ops_ctx, addr, name->text, name->sni_ports,
						   name->nsni_ports, name->sni_udp);
		}
	}
	if (r < 0) {
		if (created) {
			hashtable_remove(&p->addrs, &a->node);
			free(a->names);
			free(a);
		}
		return r;
	}
	a->set_id = set_id;
	if (created)
		p->stats.opened++;
	name->claims[name->nclaims++] =
		(struct dnsproxy_claim){ .addr = *addr, .expires_ms = expires_ms };
	p->nclaims++;
	if (expires_ms < p->next_expiry_ms)
		p->next_expiry_ms = expires_ms;
	return 0;
}

size_t dnsproxy_expire(struct dnsproxy *p, long long now_ms)
{
	unsigned long long closed = p->stats.closed;
	long long next = DNSPROXY_NEVER;

	if (now_ms < p->next_expiry_ms)
		return 0;
	for (size_t b = 0; b < p->names.nbuckets; b++) {
		struct hashtable_node *n = p->names.buckets[b], *following;

		for (; n; n = following) {
			struct dnsproxy_name *name = (struct dnsproxy_name *)n;

			following = n->next;
			for (size_t i = 0; i < name->nclaims;) {
				if (name->claims[i].expires_ms <= now_ms) {
					dnsproxy_unclaim(p, name, i);
					continue;
				}
				if (name->claims[i].expires_ms < next)
					next = name->claims[i].expires_ms;
				i++;
			}
			if (name->nclaims == 0)
				dnsproxy_name_free(p, name);
		}
	}
	p->next_expiry_ms = next;
	return (size_t)(p->stats.closed - closed);
}

/*
 * Opens an answer's addresses for the name the job asked, listing them in p->opened, and
 * fills the dns_allow line's fields.
 */
void dnsproxy_open(struct dnsproxy *p, const char *qname, const struct dns_answer_addr *addrs,
		   size_t n, long long now_ms, struct audit_dns *ret_audit)
{
	struct dnsproxy_name *name;
	uint32_t min_ttl = UINT32_MAX;

	ret_audit->addrs = p->opened;
	ret_audit->naddrs = 0;
	if (dnsproxy_name_get(p, qname, &name) < 0) {
		p->stats.open_failed += n;
		return;
	}
	for (size_t i = 0; i < n; i++) {
		uint32_t ttl =
			addrs[i].ttl < p->config.min_ttl_s ? p->config.min_ttl_s : addrs[i].ttl;
		long long expires_ms = now_ms + ((long long)ttl + p->config.grace_s) * 1000;

		if (dnsproxy_claim(p, name, &addrs[i].addr, expires_ms) < 0) {
			p->stats.open_failed++;
			continue;
		}
		/* Best effort: a name missing from a later audit line is no reason to refuse. */
		dnsproxy_remember(p, &addrs[i].addr, qname, false);
		if (addrs[i].ttl < min_ttl)
			min_ttl = addrs[i].ttl;
		p->opened[ret_audit->naddrs++] = addrs[i].addr;
	}
	if (name->nclaims == 0)
		dnsproxy_name_free(p, name);
	if (ret_audit->naddrs) {
		uint32_t ttl = min_ttl < p->config.min_ttl_s ? p->config.min_ttl_s : min_ttl;

		ret_audit->ttl_s = min_ttl;
		ret_audit->open_s = ttl + p->config.grace_s;
	}
}

/* --- the core: query in, reply out -------------------------------------------------------- */
