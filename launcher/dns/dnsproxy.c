// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The DNS proxy's core, without I/O: judges each query, opens the addresses of allowed answers
 * through the ops table, closes them when their time is over, and remembers their names.
 */
#include <errno.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

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
static bool dnsproxy_name_allowed(const struct dnsproxy *p, const char *name)
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

/* The port set of an address: its one name's, or the union of its names'. */
static int dnsproxy_addr_set(struct dnsproxy *p, const struct dnsproxy_addr *a, uint32_t *ret_id)
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

static struct dnsproxy_addr *dnsproxy_addr_find(const struct dnsproxy *p,
						const struct in6_addr *addr)
{
	uint32_t hash = addr_hash(addr);

	for (struct hashtable_node *n = hashtable_chain(&p->addrs, hash); n; n = n->next) {
		struct dnsproxy_addr *a = (struct dnsproxy_addr *)n;

		if (n->hash == hash && memcmp(&a->addr, addr, sizeof(*addr)) == 0)
			return a;
	}
	return NULL;
}

static struct dnsproxy_seen *dnsproxy_seen_find(const struct dnsproxy *p,
						const struct in6_addr *addr)
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
static int dnsproxy_remember(struct dnsproxy *p, const struct in6_addr *addr, const char *name,
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
	if (r == 0) {
		a->names[a->nnames++] = name;
		r = dnsproxy_addr_set(p, a, &set_id);
		if (r == 0 && (created || set_id != a->set_id))
			r = p->ops->open_addr(p->ops_ctx, addr, set_id);
		if (r < 0)
			a->nnames--;
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
static void dnsproxy_open(struct dnsproxy *p, const char *qname,
			  const struct dns_answer_addr *addrs, size_t n, long long now_ms,
			  struct audit_dns *ret_audit)
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

static const char *transport_name(enum dnsproxy_transport transport)
{
	return transport == DNSPROXY_TCP ? "tcp" : "udp";
}

void dnsproxy_set_pid_finder(struct dnsproxy *p, dnsproxy_pid_fn find, void *ctx)
{
	p->pid_find = find;
	p->pid_ctx = ctx;
}

static uint8_t ascii_lower(uint8_t c)
{
	return c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c;
}

/* A refusal is counted with the others, in sandbox_exit's denied and denied_by_op. */
static void dnsproxy_deny_line(struct dnsproxy *p, const struct audit_dns *dns)
{
	audit_dns_deny(p->log, dns);
	/* would_deny lines are counted apart, one per look-up (stats.would_deny). */
	if (!dns->would_deny)
		p->stats.deny_lines++;
}

static void dnsproxy_refusal_line(struct dnsproxy *p, const struct dnsproxy_refusal *r)
{
	struct audit_dns dns = {
		.protocol = r->protocol,
		.qname = r->qname,
		.qtype = r->qtype,
		.rcode = r->rcode[0] ? r->rcode : NULL,
		.reason = r->reason,
		.pid = r->pid,
		.ts_ns = r->first_real_ns,
		.repeats = r->repeats,
	};

	dnsproxy_deny_line(p, &dns);
}

/* The key of a refusal: the name in any case, its type, why, how, and who asked. */
static uint32_t dnsproxy_refusal_hash(const struct audit_dns *dns)
{
	char key[DNS_NAME_TEXT_MAX + 64];
	size_t n = 0;

	for (const char *c = dns->qname; *c && n < DNS_NAME_TEXT_MAX; c++)
		key[n++] = (char)ascii_lower((uint8_t)*c);
	n += (size_t)snprintf(key + n, sizeof(key) - n, "|%s|%s|%s|%d", dns->qtype, dns->reason,
			      dns->protocol, dns->pid);
	return hashtable_hash_bytes(key, n < sizeof(key) ? n : sizeof(key) - 1);
}

static bool dnsproxy_refusal_same(const struct dnsproxy_refusal *r, const struct audit_dns *dns)
{
	return strcasecmp(r->qname, dns->qname) == 0 && strcmp(r->qtype, dns->qtype) == 0 &&
	       strcmp(r->reason, dns->reason) == 0 && strcmp(r->protocol, dns->protocol) == 0 &&
	       r->pid == dns->pid;
}

/* Writes the oldest waiting refusal's line and forgets it. */
static void dnsproxy_refusal_pop(struct dnsproxy *p)
{
	struct dnsproxy_refusal *r = p->refusals[p->refusal_head];

	dnsproxy_refusal_line(p, r);
	hashtable_remove(&p->refusal_index, &r->node);
	free(r);
	p->refusals[p->refusal_head] = NULL;
	p->refusal_head = (p->refusal_head + 1) % DNSPROXY_REFUSALS_MAX;
	p->nrefusals--;
}

size_t dnsproxy_flush_refusals(struct dnsproxy *p, long long now_ms)
{
	size_t n = 0;

	/* One window for all: the oldest is the first to close. */
	while (p->nrefusals &&
	       now_ms - p->refusals[p->refusal_head]->first_ms >= DNSPROXY_REPEAT_WINDOW_MS) {
		dnsproxy_refusal_pop(p);
		n++;
	}
	return n;
}

long long dnsproxy_next_flush_ms(const struct dnsproxy *p)
{
	if (!p->nrefusals)
		return DNSPROXY_NEVER;
	return p->refusals[p->refusal_head]->first_ms + DNSPROXY_REPEAT_WINDOW_MS;
}

/*
 * A refused look-up: a resolver asks again after REFUSED (glibc does, at once), and a loop
 * asks without end, so identical refusals within DNSPROXY_REPEAT_WINDOW_MS of the first are
 * one line, written when the window closes, with the count of the others in "repeats".
 * Malformed messages are each written at once (each carries different bytes), and so are
 * --audit-only's would_deny look-ups (each was answered, and is counted in sandbox_exit).
 */
static void dnsproxy_refusal_note(struct dnsproxy *p, const struct audit_dns *dns)
{
	struct dnsproxy_refusal *r;
	struct timespec ts;
	uint32_t hash;

	if (!dns->qname || !dns->qtype || dns->would_deny) {
		dnsproxy_deny_line(p, dns);
		return;
	}
	dnsproxy_flush_refusals(p, p->now_ms);
	hash = dnsproxy_refusal_hash(dns);
	for (struct hashtable_node *n = hashtable_chain(&p->refusal_index, hash); n; n = n->next) {
		r = (struct dnsproxy_refusal *)n;
		if (n->hash == hash && dnsproxy_refusal_same(r, dns)) {
			r->repeats++;
			return;
		}
	}
	if (p->nrefusals == DNSPROXY_REFUSALS_MAX)
		dnsproxy_refusal_pop(p);
	r = calloc(1, sizeof(*r));
	if (!r || hashtable_reserve(&p->refusal_index) < 0) {
		/* Out of memory: a line for each rather than none. */
		free(r);
		dnsproxy_deny_line(p, dns);
		return;
	}
	clock_gettime(CLOCK_REALTIME, &ts);
	r->first_ms = p->now_ms;
	r->first_real_ns = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
	r->protocol = dns->protocol;
	r->reason = dns->reason;
	r->pid = dns->pid;
	snprintf(r->qname, sizeof(r->qname), "%s", dns->qname);
	snprintf(r->qtype, sizeof(r->qtype), "%s", dns->qtype);
	snprintf(r->rcode, sizeof(r->rcode), "%s", dns->rcode ? dns->rcode : "");
	hashtable_insert(&p->refusal_index, &r->node, hash);
	p->refusals[(p->refusal_head + p->nrefusals) % DNSPROXY_REFUSALS_MAX] = r;
	p->nrefusals++;
}

static void dnsproxy_audit(struct dnsproxy *p, bool allow, struct audit_dns *dns)
{
	char line[AUDIT_LINE_MAX];
	int n;

	if (!p->log)
		return;
	/* Only refusals: a look-up costs a scan of /proc, which allowed ones need not pay. */
	if (!allow && p->pid_find && p->peerlen) {
		long long now_ms = monotonic_now_ms();

		if (p->pid_peerlen != p->peerlen || memcmp(&p->pid_peer, &p->peer, p->peerlen) ||
		    now_ms - p->pid_found_ms >= 1000) {
			int pid = p->pid_find(p->pid_ctx, (const struct sockaddr *)&p->peer,
					      p->peerlen, strcmp(dns->protocol, "tcp") == 0);

			p->pid_found = pid > 0 ? pid : 0;
			p->pid_found_ms = now_ms;
			memcpy(&p->pid_peer, &p->peer, p->peerlen);
			p->pid_peerlen = p->peerlen;
		}
		dns->pid = p->pid_found;
	}
	if (!allow) {
		dnsproxy_refusal_note(p, dns);
		return;
	}
	n = audit_format_dns_allow(p->log, dns, line, sizeof(line));
	audit_append_formatted(p->log, AUDIT_KIND_OTHER, line, n);
}

static bool dnsproxy_qtype_allowed(uint16_t qtype)
{
	/* Address look-ups and what leads to them; TXT and NULL are the tunnellers' favourites. */
	switch (qtype) {
	case DNS_TYPE_A:
	case DNS_TYPE_AAAA:
	case DNS_TYPE_CNAME:
	case DNS_TYPE_SVCB:
	case DNS_TYPE_HTTPS:
		return true;
	default:
		return false;
	}
}

static int dnsproxy_error_reply(const uint8_t *pkt, size_t len, uint8_t rcode, uint8_t *reply,
				size_t cap, size_t *ret_len)
{
	if (dns_build_error_response(pkt, len, rcode, reply, cap, ret_len) < 0)
		return DNSPROXY_DROP;
	return DNSPROXY_REPLY;
}

uint16_t dnsproxy_random16(struct dnsproxy *p)
{
	uint16_t v;

	if (p->random_left < 2) {
		/* Only before the kernel's pool is ready can this come up short: fall back. */
		if (getrandom(p->random, sizeof(p->random), GRND_NONBLOCK) != sizeof(p->random)) {
			struct timespec ts;

			clock_gettime(CLOCK_MONOTONIC, &ts);
			for (size_t i = 0; i < sizeof(p->random); i++)
				p->random[i] ^= (uint8_t)(ts.tv_nsec >> (i % 24)) + (uint8_t)i;
		}
		p->random_left = sizeof(p->random);
	}
	p->random_left -= 2;
	memcpy(&v, &p->random[p->random_left], 2);
	return v;
}

int dnsproxy_query_begin(struct dnsproxy *p, const uint8_t *pkt, size_t len,
			 enum dnsproxy_transport transport, long long now_ms,
			 struct dnsproxy_query **ret_query, uint8_t *reply, size_t reply_cap,
			 size_t *ret_reply_len)
{
	struct audit_dns audit = { .protocol = transport_name(transport) };
	struct dnsproxy_query *query;
	struct dns_question q;
	struct dns_edns edns;
	char qtype[16];
	uint16_t id;
	uint8_t rcode;
	size_t slot;
	int r;

	*ret_query = NULL;
	*ret_reply_len = 0;
	p->now_ms = now_ms;
	p->stats.queries++;
	r = dns_parse_query(pkt, len, &id, &q, &edns);
	if (r == 0 && len > DNSPROXY_QUERY_MAX_LEN)
		r = -EBADMSG;
	if (r < 0) {
		uint8_t rcode = r == -EOPNOTSUPP ? DNS_RCODE_NOTIMP : DNS_RCODE_FORMERR;
		int action;

		p->stats.malformed++;
		/* A response is never answered: two resolvers must not ping-pong. */
		action = r == -EPROTO ? DNSPROXY_DROP
				      : dnsproxy_error_reply(pkt, len, rcode, reply, reply_cap,
							     ret_reply_len);
		/* Not a query, yet it went to port 53: data the job tried to send there. */
		audit.reason = "malformed";
		audit.rcode = action == DNSPROXY_REPLY ? dns_rcode_name(rcode) : NULL;
		dnsproxy_audit(p, false, &audit);
		return action;
	}

	snprintf(qtype, sizeof(qtype), "%s", dns_type_name(q.qtype));
	/* Matching ignores case; the log keeps the job's own (a payload may hide in it). */
	audit.qname = q.name_original;
	audit.qtype = qtype;
	rcode = DNS_RCODE_REFUSED;
	if (q.qclass != DNS_CLASS_IN) {
		audit.reason = "qclass";
	} else if (!dnsproxy_name_allowed(p, q.name)) {
		audit.reason = "name";
		rcode = p->config.deny_rcode;
	} else if (!dnsproxy_qtype_allowed(q.qtype)) {
		audit.reason = "qtype";
	}
	/* A class other than IN is never forwarded: the upstream query is rebuilt as IN. */
	if (audit.reason && p->config.audit_only && q.qclass == DNS_CLASS_IN) {
		p->stats.would_deny++;
		/* The answer enforcing would have given: what the job would have seen. */
		audit.rcode = dns_rcode_name(rcode);
		audit.would_deny = true;
		dnsproxy_audit(p, false, &audit);
	} else if (audit.reason) {
		/* Answered here: nothing about this name leaves the host. */
		p->stats.denied++;
		audit.rcode = dns_rcode_name(rcode);
		dnsproxy_audit(p, false, &audit);
		return dnsproxy_error_reply(pkt, len, rcode, reply, reply_cap, ret_reply_len);
	}
	if (p->npending == DNSPROXY_MAX_PENDING) {
		p->stats.upstream_failed++;
		return dnsproxy_error_reply(pkt, len, DNS_RCODE_SERVFAIL, reply, reply_cap,
					    ret_reply_len);
	}

	query = calloc(1, sizeof(*query));
	if (!query)
		return -ENOMEM;
	for (slot = p->next_slot; p->queries[slot]; slot = (slot + 1) % DNSPROXY_MAX_PENDING)
		;
	p->next_slot = (slot + 1) % DNSPROXY_MAX_PENDING;
	query->slot = (unsigned int)slot;
	query->gen = ++p->gen;
	query->transport = transport;
	query->client_id = id;
	query->q = q;
	query->client_limit = transport == DNSPROXY_TCP ? DNS_TCP_MAX_LEN
			      : edns.present		? edns.udp_size
							: DNS_UDP_MAX_LEN;
	memcpy(query->client_pkt, pkt, len);
	query->client_len = len;
	query->tcp_fd = -1;
	query->client_fd = -1;
	query->would_deny = audit.would_deny;
	query->rules_gen = p->rules_gen;
	memcpy(&query->peer, &p->peer, p->peerlen);
	query->peerlen = p->peerlen;
	do
		query->upstream_id = dnsproxy_random16(p);
	while (p->id_slot[query->upstream_id]);

	/*
	 * A fresh query rather than the job's bytes: the upstream sees no letter case (0x20
	 * bits), id, flag or EDNS option that the job chose, only the name and the type.
	 */
	r = dns_build_query(query->upstream_id, q.name, q.qtype, edns.present, query->up,
			    sizeof(query->up), &query->up_len);
	if (r < 0) {
		free(query);
		return r;
	}
	if (edns.present) {
		/* Ask for no more than the job takes, so the upstream truncates when it must. */
		uint16_t size = DNS_EDNS_UDP_SIZE;

		if (transport == DNSPROXY_UDP && edns.udp_size < size)
			size = edns.udp_size;
		dnsproxy_put16(query->up + query->up_len - DNS_OPT_LEN + 3, size);
	}
	p->queries[slot] = query;
	p->id_slot[query->upstream_id] = (uint16_t)(slot + 1);
	p->npending++;
	p->stats.allowed++;
	query->retry_ms = now_ms + DNSPROXY_UDP_RETRY_MS;
	query->deadline_ms = now_ms + DNSPROXY_QUERY_TIMEOUT_MS;
	*ret_query = query;
	return DNSPROXY_FORWARD;
}

const uint8_t *dnsproxy_query_packet(const struct dnsproxy_query *query, size_t *ret_len)
{
	*ret_len = query->up_len;
	return query->up;
}

/* Length of the uncompressed name at `off`, its final zero included; 0 when it is not one. */
static size_t plain_name_len(const uint8_t *pkt, size_t len, size_t off)
{
	for (size_t pos = off; pos < len;) {
		uint8_t c = pkt[pos];

		if (c == 0)
			return pos + 1 - off;
		if (c & 0xc0)
			return 0;
		pos += 1 + (size_t)c;
	}
	return 0;
}

/*
 * Our query went out in lower case; a job that randomised its letters (0x20, for spoofing
 * resistance) expects them back as it sent them, so the question is given its spelling.
 */
static void dnsproxy_restore_case(uint8_t *reply, size_t rlen, const uint8_t *query, size_t qlen)
{
	size_t a, b;

	if (rlen < DNS_HEADER_LEN || dnsproxy_get16(reply + 4) != 1)
		return;
	a = plain_name_len(reply, rlen, DNS_HEADER_LEN);
	b = plain_name_len(query, qlen, DNS_HEADER_LEN);
	if (!a || a != b)
		return;
	for (size_t i = 0; i < a; i++)
		if (ascii_lower(reply[DNS_HEADER_LEN + i]) !=
		    ascii_lower(query[DNS_HEADER_LEN + i]))
			return;
	memcpy(reply + DNS_HEADER_LEN, query + DNS_HEADER_LEN, a);
}

int dnsproxy_query_fail(struct dnsproxy *p, struct dnsproxy_query *query, uint8_t *reply,
			size_t reply_cap, size_t *ret_reply_len)
{
	p->stats.upstream_failed++;
	return dnsproxy_error_reply(query->client_pkt, query->client_len, DNS_RCODE_SERVFAIL, reply,
				    reply_cap, ret_reply_len);
}

/*
 * A launch update may have come between the query and its answer: the answer is judged by the
 * rules in force now, as a new query would be. One the policy now refuses gets the refusal
 * (DNSPROXY_REPLY) and a deny line like any refused look-up, and its records reach neither
 * the job nor the kernel; under --audit-only it goes on as a would_deny look-up. -EAGAIN:
 * answer it.
 */
int dnsproxy_query_rejudge(struct dnsproxy *p, struct dnsproxy_query *query, long long now_ms,
			   uint8_t *reply, size_t reply_cap, size_t *ret_reply_len)
{
	struct audit_dns audit = {
		.protocol = transport_name(query->transport),
		.qname = query->q.name_original,
	};
	bool refused;
	char qtype[16];

	/* No update since it was judged (nearly always): that verdict stands. */
	if (query->rules_gen == p->rules_gen)
		return -EAGAIN;
	query->rules_gen = p->rules_gen;
	refused = !dnsproxy_name_allowed(p, query->q.name);
	if (p->config.audit_only && !refused && dnsproxy_qtype_allowed(query->q.qtype)) {
		/* Allowed now: its addresses open as the policy in force says. */
		query->would_deny = false;
		return -EAGAIN;
	}
	/* The type and class are no policy's: forwarded once, only the name can be refused. */
	if (!refused || query->would_deny)
		return -EAGAIN;
	snprintf(qtype, sizeof(qtype), "%s", dns_type_name(query->q.qtype));
	audit.qtype = qtype;
	audit.reason = "name";
	audit.rcode = dns_rcode_name(p->config.deny_rcode);
	/* The deny line's pid is the asker's, as at the query. */
	p->now_ms = now_ms;
	memcpy(&p->peer, &query->peer, query->peerlen);
	p->peerlen = query->peerlen;
	if (p->config.audit_only) {
		p->stats.would_deny++;
		audit.would_deny = true;
		query->would_deny = true;
		dnsproxy_audit(p, false, &audit);
		return -EAGAIN;
	}
	p->stats.denied++;
	dnsproxy_audit(p, false, &audit);
	return dnsproxy_error_reply(query->client_pkt, query->client_len, p->config.deny_rcode,
				    reply, reply_cap, ret_reply_len);
}

int dnsproxy_query_answer(struct dnsproxy *p, struct dnsproxy_query *query, const uint8_t *answer,
			  size_t len, long long now_ms, uint8_t *reply, size_t reply_cap,
			  size_t *ret_reply_len)
{
	struct audit_dns audit = {
		.protocol = transport_name(query->transport),
		.qname = query->q.name_original,
	};
	char qtype[16];
	uint8_t rcode = 0;
	bool truncated = false;
	size_t n = 0;
	int r, action;

	*ret_reply_len = 0;
	r = dns_parse_response(answer, len, query->upstream_id, query->q.name, p->answer_addrs,
			       p->config.max_ips, &n, &rcode, &truncated);
	if (r == -ENOMSG)
		return r;
	action = dnsproxy_query_rejudge(p, query, now_ms, reply, reply_cap, ret_reply_len);
	if (action != -EAGAIN)
		return action;
	if (r < 0 || len > reply_cap)
		return dnsproxy_query_fail(p, query, reply, reply_cap, ret_reply_len);
	if (truncated && !query->upstream_tcp) {
		/* The full answer may name more addresses: they are all opened before replying. */
		query->upstream_tcp = true;
		return DNSPROXY_RETRY_TCP;
	}

	if (rcode == DNS_RCODE_NOERROR && n > 0 && query->would_deny) {
		/* Audit-only: nothing to open, but the connections' lines name the address. */
		for (size_t i = 0; i < n; i++)
			dnsproxy_remember(p, &p->answer_addrs[i].addr, query->q.name, false);
	} else if (rcode == DNS_RCODE_NOERROR && n > 0) {
		dnsproxy_open(p, query->q.name, p->answer_addrs, n, now_ms, &audit);
	}
	if (p->config.audit_allowed) {
		snprintf(qtype, sizeof(qtype), "%s", dns_type_name(query->q.qtype));
		audit.qtype = qtype;
		audit.rcode = dns_rcode_name(rcode);
		dnsproxy_audit(p, true, &audit);
	}

	if (query->transport == DNSPROXY_UDP && len > query->client_limit) {
		/* Too big for the job's buffer: TC and no records, and it asks again over TCP. */
		if (dns_build_error_response(query->client_pkt, query->client_len, rcode, reply,
					     reply_cap, ret_reply_len) < 0)
			return DNSPROXY_DROP;
		reply[2] |= DNS_FLAG_TC >> 8;
		return DNSPROXY_REPLY;
	}
	memcpy(reply, answer, len);
	dnsproxy_put16(reply, query->client_id);
	dnsproxy_restore_case(reply, len, query->client_pkt, query->client_len);
	*ret_reply_len = len;
	return DNSPROXY_REPLY;
}

void dnsproxy_query_free(struct dnsproxy *p, struct dnsproxy_query *query)
{
	if (!query)
		return;
	if (p->queries[query->slot] == query) {
		p->queries[query->slot] = NULL;
		p->id_slot[query->upstream_id] = 0;
		p->npending--;
	}
	if (query->tcp_fd >= 0)
		close(query->tcp_fd);
	free(query->tcp_buf);
	free(query);
}

/* --- set-up ----------------------------------------------------------------------------- */

void dnsproxy_config_default(struct dnsproxy_config *config)
{
	memset(config, 0, sizeof(*config));
	config->min_ttl_s = DNSPROXY_MIN_TTL_S;
	config->grace_s = DNSPROXY_GRACE_S;
	config->max_ips = DNSPROXY_MAX_IPS;
	config->deny_rcode = DNS_RCODE_REFUSED;
	resolve_parse_server("127.0.0.1", &config->upstream);
}

int dnsproxy_read_resolv_conf(const char *path, struct resolver *ret_upstream)
{
	_cleanup_free_ char *line = NULL;
	struct resolver server;
	size_t cap = 0;
	FILE *f = fopen(path, "re");
	int r = -ENOENT;

	if (!f)
		return -errno;
	while (getline(&line, &cap, f) > 0) {
		char *p = line + strspn(line, " \t"), *addr, *end, *scope;

		if (strncmp(p, "nameserver", 10) != 0 || !strchr(" \t", p[10]) || !p[10])
			continue;
		addr = p + 10 + strspn(p + 10, " \t");
		end = addr + strcspn(addr, " \t\r\n#;");
		*end = '\0';
		scope = strchr(addr, '%');
		if (scope)
			*scope++ = '\0';
		if (resolve_parse_server(addr, &server) < 0)
			continue;
		/* "fe80::1%eth0": a link-local server needs its interface, as glibc gives it. */
		if (scope) {
			struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)&server.addr;
			unsigned int index = if_nametoindex(scope);

			if (server.addr.ss_family != AF_INET6 || !index)
				continue;
			sin6->sin6_scope_id = index;
		}
		/* Only a usable line changes *ret_upstream: the caller's default stays otherwise.
		 */
		*ret_upstream = server;
		r = 0;
		break;
	}
	fclose(f);
	return r;
}

/* The policies' "host" entries, which the names the job looks up are judged by. */
static int dnsproxy_take_hosts(struct dnsproxy *p, const struct rules *rules)
{
	const struct policy_entry **hosts;
	size_t nhosts = 0, n = 0;
	int r;

	for (size_t i = 0; i < rules->npolicies; i++)
		for (size_t e = 0; e < rules->policies[i]->nentries; e++)
			nhosts += rules->policies[i]->entries[e].host != NULL;
	hosts = calloc(nhosts ? nhosts : 1, sizeof(*hosts));
	if (!hosts)
		return -ENOMEM;
	for (size_t i = 0; i < rules->npolicies; i++)
		for (size_t e = 0; e < rules->policies[i]->nentries; e++)
			if (rules->policies[i]->entries[e].host)
				hosts[n++] = &rules->policies[i]->entries[e];
	free(p->hosts);
	p->hosts = hosts;
	p->nhosts = n;

	/* Launch-time addresses keep their policy host's name in audit lines. */
	for (size_t i = 0; i < rules->nhosts; i++) {
		const struct resolved_host *host = &rules->hosts[i];

		for (size_t a = 0; a < host->naddrs; a++) {
			r = dnsproxy_remember(p, &host->addrs[a], host->entry->host, true);
			if (r < 0)
				return r;
		}
	}
	return 0;
}

int dnsproxy_new(const struct dnsproxy_config *config, const struct rules *rules,
		 const struct dnsproxy_ops *ops, void *ops_ctx, struct audit_log *log,
		 struct dnsproxy **ret_proxy)
{
	_cleanup_(dnsproxy_freep) struct dnsproxy *p = NULL;
	int r;

	if (!config->max_ips || config->max_ips > DNSPROXY_MAX_IPS_LIMIT)
		return -EINVAL;
	p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	p->config = *config;
	p->ops = ops;
	p->ops_ctx = ops_ctx;
	p->log = log;
	p->next_expiry_ms = DNSPROXY_NEVER;
	p->answer_addrs = calloc(config->max_ips, sizeof(*p->answer_addrs));
	p->opened = calloc(config->max_ips, sizeof(*p->opened));
	p->seen_ring = calloc(DNSPROXY_NAME_HISTORY, sizeof(*p->seen_ring));
	if (!p->answer_addrs || !p->opened || !p->seen_ring)
		return -ENOMEM;

	r = dnsproxy_take_hosts(p, rules);
	if (r < 0)
		return r;
	*ret_proxy = TAKE_PTR(p);
	return 0;
}

int dnsproxy_set_rules(struct dnsproxy *p, const struct rules *rules)
{
	int r = dnsproxy_take_hosts(p, rules);

	if (r < 0)
		return r;
	/* The queries in flight are judged again by these rules when they are answered. */
	p->rules_gen++;
	/*
	 * Every address an answer opened closes: its name's ports were the old policy's, and a
	 * name the new one refuses must open nothing from now on. The job's next look-up opens
	 * what the new policy allows.
	 */
	dnsproxy_expire(p, DNSPROXY_NEVER);
	return p->fatal;
}

int dnsproxy_swap_rules(struct dnsproxy *p, const struct rules *rules, int (*install)(void *ctx),
			void *install_ctx, bool *ret_installed)
{
	int r;

	*ret_installed = false;
	/*
	 * The old names' addresses close first, while the old settings are still in force: the
	 * new settings must never meet an address opened with the old policy's ports. Nothing
	 * opens one again until this returns: the proxy answers from the loop that called it.
	 */
	dnsproxy_expire(p, DNSPROXY_NEVER);
	if (p->fatal)
		return p->fatal;
	r = install(install_ctx);
	if (r < 0)
		return r;
	*ret_installed = true;
	return dnsproxy_set_rules(p, rules);
}

static void free_node(struct hashtable_node *n)
{
	free(n);
}

static void dnsproxy_name_node_free(struct hashtable_node *n)
{
	free(((struct dnsproxy_name *)n)->claims);
	free(n);
}

static void dnsproxy_addr_node_free(struct hashtable_node *n)
{
	free(((struct dnsproxy_addr *)n)->names);
	free(n);
}

static void dnsproxy_seen_node_free(struct hashtable_node *n)
{
	free(((struct dnsproxy_seen *)n)->name);
	free(n);
}

void dnsproxy_free(struct dnsproxy *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < DNSPROXY_MAX_PENDING; i++)
		dnsproxy_query_free(p, p->queries[i]);
	if (p->loop)
		p->loop_free(p->loop);
	/* The kernel's maps go with the BPF object: only memory is freed here. */
	hashtable_clear(&p->names, dnsproxy_name_node_free);
	hashtable_clear(&p->addrs, dnsproxy_addr_node_free);
	hashtable_clear(&p->seen, dnsproxy_seen_node_free);
	/* Written by dnsproxy_flush_refusals before sandbox_exit; none is left but on errors. */
	hashtable_clear(&p->refusal_index, free_node);
	free(p->seen_ring);
	free(p->answer_addrs);
	free(p->opened);
	free(p->hosts);
	free(p);
}

const char *dnsproxy_addr_name(const struct dnsproxy *p, const struct in6_addr *addr)
{
	const struct dnsproxy_seen *s;

	if (!p || !addr)
		return NULL;
	s = dnsproxy_seen_find(p, addr);
	return s ? s->name : NULL;
}

void dnsproxy_get_stats(const struct dnsproxy *p, struct dnsproxy_stats *ret_stats)
{
	*ret_stats = p->stats;
	ret_stats->open_now = p->addrs.n;
}