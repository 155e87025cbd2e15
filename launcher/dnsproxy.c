// SPDX-License-Identifier: LGPL-2.1-or-later
/* The sandbox's DNS proxy: allowed names go upstream and open their addresses, others are refused.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <limits.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include "dnsproxy.h"

#define DNS_FLAG_TC 0x0200
/* Connected UDP sockets to the upstream; each query goes out on one drawn at random. */
#define DNSPROXY_UPSTREAM_SOCKETS 8
/* While queries wait or TCP clients are connected, the timer ticks this often. */
#define DNSPROXY_TICK_MS 100
#define DNSPROXY_EVENTS	 64
/* Datagrams or connections handled per descriptor and round, so no one starves the rest. */
#define DNSPROXY_BATCH 64
/* Replies queued for a TCP client that does not read; beyond it the connection is closed. */
#define DNSPROXY_TCP_OUT_MAX (256 * 1024)
/* (name, address) pairs over all names: wildcards let a job make up names. */
#define DNSPROXY_MAX_CLAIMS (4 * MAX_DNS_ALLOW_ENTRIES)
#define DNSPROXY_NEVER	    LLONG_MAX
/* An OPT record: root name, TYPE, CLASS (the UDP payload size), TTL, RDLENGTH. */
#define DNS_OPT_LEN 11

/* --- a chained hash table, intrusive: each element starts with a struct hnode ------------- */

struct hnode {
	struct hnode *next;
	uint32_t hash;
};

struct htab {
	struct hnode **buckets;
	size_t nbuckets; /* a power of two */
	size_t n;
};

static uint32_t hash_bytes(const void *data, size_t len)
{
	const unsigned char *p = data;
	uint32_t h = 2166136261u; /* FNV-1a */

	for (size_t i = 0; i < len; i++)
		h = (h ^ p[i]) * 16777619u;
	return h;
}

/* Makes room for one more element: the table grows when it would hold more than its buckets. */
static int htab_reserve(struct htab *t)
{
	struct hnode **buckets;
	size_t nbuckets;

	if (t->n < t->nbuckets)
		return 0;
	nbuckets = t->nbuckets ? t->nbuckets * 2 : 64;
	buckets = calloc(nbuckets, sizeof(*buckets));
	if (!buckets)
		return -ENOMEM;
	for (size_t i = 0; i < t->nbuckets; i++) {
		struct hnode *node = t->buckets[i], *next;

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

/* The caller has called htab_reserve. */
static void htab_insert(struct htab *t, struct hnode *node, uint32_t hash)
{
	size_t slot = hash & (t->nbuckets - 1);

	node->hash = hash;
	node->next = t->buckets[slot];
	t->buckets[slot] = node;
	t->n++;
}

static struct hnode *htab_chain(const struct htab *t, uint32_t hash)
{
	return t->nbuckets ? t->buckets[hash & (t->nbuckets - 1)] : NULL;
}

static void htab_remove(struct htab *t, struct hnode *node)
{
	struct hnode **link = &t->buckets[node->hash & (t->nbuckets - 1)];

	while (*link != node)
		link = &(*link)->next;
	*link = node->next;
	t->n--;
}

/* --- state ---------------------------------------------------------------------------- */

/* One name holds one address until expires_ms. */
struct dnsproxy_claim {
	struct in6_addr addr;
	long long expires_ms;
};

/* A name the job looked up and got addresses for. */
struct dnsproxy_name {
	struct hnode node;
	uint32_t set_id; /* the union of the port sets of every rule matching the name */
	struct dnsproxy_claim *claims; /* oldest answer first */
	size_t nclaims, cap;
	char text[];
};

/* An address open in the kernel: the union of the port sets of the names holding it. */
struct dnsproxy_addr {
	struct hnode node;
	struct in6_addr addr;
	uint32_t set_id;
	struct dnsproxy_name **names;
	size_t nnames, cap;
};

/* An address's name, for audit lines; kept after the address closed. */
struct dnsproxy_seen {
	struct hnode node;
	struct in6_addr addr;
	bool from_policy; /* a launch-time address: never forgotten */
	char *name;
};

struct dnsproxy_query {
	unsigned int slot;
	unsigned long long gen;
	enum dnsproxy_transport transport; /* how the job asked */
	bool upstream_tcp;		   /* asking the upstream over TCP */
	bool would_deny; /* --audit-only: forwarded though the policy refuses it */
	bool retried;
	uint16_t client_id, upstream_id;
	struct dns_question q;
	size_t client_limit; /* the largest reply the job takes over UDP */
	uint8_t client_pkt[DNSPROXY_QUERY_MAX_LEN];
	size_t client_len;
	uint8_t up[DNS_HEADER_LEN + DNS_NAME_WIRE_MAX + 4 + DNS_OPT_LEN];
	size_t up_len;
	long long retry_ms, deadline_ms;
	/* Where the reply goes: a UDP peer of a listener, or a TCP client. */
	int client_fd;
	struct sockaddr_storage client_addr;
	socklen_t client_addrlen;
	unsigned int client_slot;
	unsigned long long client_gen;
	/* The upstream: one of the UDP sockets, or a TCP connection of its own. */
	unsigned int up_index;
	int tcp_fd;
	uint8_t *tcp_buf;
	size_t tcp_len, tcp_off;
	bool tcp_reading;
};

/* A TCP connection from the job: 2-byte length, message, again (RFC 1035 4.2.2, RFC 7766). */
struct dnsproxy_client {
	int fd;
	unsigned int slot;
	unsigned long long gen;
	uint8_t in[2 + DNSPROXY_QUERY_MAX_LEN];
	size_t in_len;
	uint8_t *out;
	size_t out_len, out_off, out_cap;
	bool want_out;
	long long last_ms;
};

enum dnsproxy_kind {
	KIND_TIMER = 1,
	KIND_LISTEN,
	KIND_UPSTREAM_UDP,
	KIND_UPSTREAM_TCP,
	KIND_CLIENT,
};

enum { LISTEN_UDP4, LISTEN_TCP4, LISTEN_UDP6, LISTEN_TCP6, LISTEN_COUNT };

struct dnsproxy {
	int fatal; /* a closed address the kernel could not forget: -errno */
	struct dnsproxy_config config;
	const struct dnsproxy_ops *ops;
	void *ops_ctx;
	struct audit_log *log;

	const struct policy_entry **hosts; /* every "host" entry of the policies */
	size_t nhosts;
	struct port_set sets[MAX_DNS_PORT_SETS]; /* as written to the kernel, by id */
	size_t nsets;
	struct htab names, addrs, seen;
	size_t nclaims;
	struct in6_addr *seen_ring; /* answer addresses in the order first seen, for forgetting */
	size_t seen_head, seen_count;
	long long next_expiry_ms; /* no claim expires before; DNSPROXY_NEVER when none */
	struct dns_answer_addr *answer_addrs; /* config.max_ips of them, for one answer */
	struct in6_addr *opened;	      /* as many: what one answer opened */
	struct dnsproxy_stats stats;
	/* The sender of the message being judged (set by the I/O layer), for deny lines. */
	dnsproxy_pid_fn pid_find;
	void *pid_ctx;
	struct sockaddr_storage peer;
	socklen_t peerlen;
	/*
	 * The last sender looked up, for a second: a flood from one socket costs a scan of
	 * /proc a second, and a port reused later by another process is looked up afresh.
	 */
	struct sockaddr_storage pid_peer;
	socklen_t pid_peerlen;
	int pid_found;
	long long pid_found_ms;

	struct dnsproxy_query *queries[DNSPROXY_MAX_PENDING];
	size_t npending, next_slot;
	uint16_t id_slot[65536]; /* upstream id -> slot + 1 */
	uint8_t random[256];
	size_t random_left;
	unsigned long long gen;

	int epoll_fd, timer_fd;
	int listen_fd[LISTEN_COUNT];
	int up_udp[DNSPROXY_UPSTREAM_SOCKETS];
	struct dnsproxy_client *clients[DNSPROXY_MAX_TCP_CLIENTS];
	size_t nclients;
	long long timer_armed_ms; /* 0: not armed */
	uint8_t rx[2 + DNS_TCP_MAX_LEN];
	uint8_t tx[2 + DNS_TCP_MAX_LEN];
};

static uint16_t get16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static void put16(uint8_t *p, uint16_t v)
{
	p[0] = v >> 8;
	p[1] = v & 0xff;
}

static uint32_t addr_hash(const struct in6_addr *addr)
{
	return hash_bytes(addr, sizeof(*addr));
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
	for (struct hnode *n = htab_chain(&p->names, hash); n; n = n->next) {
		struct dnsproxy_name *name = (struct dnsproxy_name *)n;

		if (n->hash == hash && strcmp(name->text, text) == 0)
			return name;
	}
	return NULL;
}

static int dnsproxy_name_get(struct dnsproxy *p, const char *text, struct dnsproxy_name **ret_name)
{
	uint32_t hash = hash_bytes(text, strlen(text));
	struct dnsproxy_name *name = dnsproxy_name_find(p, text, hash);
	int r;

	if (name) {
		*ret_name = name;
		return 0;
	}
	r = htab_reserve(&p->names);
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
	htab_insert(&p->names, &name->node, hash);
	*ret_name = name;
	return 0;
}

static void dnsproxy_name_free(struct dnsproxy *p, struct dnsproxy_name *name)
{
	htab_remove(&p->names, &name->node);
	free(name->claims);
	free(name);
}

static struct dnsproxy_addr *dnsproxy_addr_find(const struct dnsproxy *p,
						const struct in6_addr *addr)
{
	uint32_t hash = addr_hash(addr);

	for (struct hnode *n = htab_chain(&p->addrs, hash); n; n = n->next) {
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

	for (struct hnode *n = htab_chain(&p->seen, hash); n; n = n->next) {
		struct dnsproxy_seen *s = (struct dnsproxy_seen *)n;

		if (n->hash == hash && memcmp(&s->addr, addr, sizeof(*addr)) == 0)
			return s;
	}
	return NULL;
}

static void dnsproxy_seen_free(struct dnsproxy *p, struct dnsproxy_seen *s)
{
	htab_remove(&p->seen, &s->node);
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
	r = htab_reserve(&p->seen);
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
	htab_insert(&p->seen, &s->node, addr_hash(addr));
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
			htab_remove(&p->addrs, &a->node);
			free(a->names);
			free(a);
			p->stats.closed++;
		} else if (dnsproxy_addr_set(p, a, &set_id) == 0 && set_id != a->set_id &&
			   p->ops->open_addr(p->ops_ctx, &a->addr, set_id) == 0) {
			a->set_id = set_id;
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
		for (struct hnode *n = p->names.buckets[b]; n; n = n->next) {
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

static int dnsproxy_grow(void **array, size_t *cap, size_t need, size_t size)
{
	void *grown;
	size_t ncap;

	if (need <= *cap)
		return 0;
	ncap = *cap ? *cap * 2 : 4;
	while (ncap < need)
		ncap *= 2;
	grown = realloc(*array, ncap * size);
	if (!grown)
		return -ENOMEM;
	*array = grown;
	*cap = ncap;
	return 0;
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
	r = dnsproxy_grow((void **)&name->claims, &name->cap, name->nclaims + 1,
			  sizeof(*name->claims));
	if (r < 0)
		return r;

	a = dnsproxy_addr_find(p, addr);
	if (!a) {
		if (p->addrs.n >= MAX_DNS_ALLOW_ENTRIES)
			dnsproxy_evict_oldest(p, name);
		if (p->addrs.n >= MAX_DNS_ALLOW_ENTRIES)
			return -ENOSPC;
		r = htab_reserve(&p->addrs);
		if (r < 0)
			return r;
		a = calloc(1, sizeof(*a));
		if (!a)
			return -ENOMEM;
		a->addr = *addr;
		htab_insert(&p->addrs, &a->node, addr_hash(addr));
		created = true;
	}
	r = dnsproxy_grow((void **)&a->names, &a->cap, a->nnames + 1, sizeof(*a->names));
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
			htab_remove(&p->addrs, &a->node);
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
		struct hnode *n = p->names.buckets[b], *following;

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

static void dnsproxy_audit(struct dnsproxy *p, bool allow, struct audit_dns *dns)
{
	char line[AUDIT_LINE_MAX];
	int n;

	if (!p->log)
		return;
	/* Only refusals: a look-up costs a scan of /proc, which allowed ones need not pay. */
	if (!allow && p->pid_find && p->peerlen) {
		struct timespec ts;
		long long now_ms;

		clock_gettime(CLOCK_MONOTONIC, &ts);
		now_ms = ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
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
	/* A refusal is counted with the others, in sandbox_exit's denied and denied_by_op. */
	if (!allow) {
		audit_dns_deny(p->log, dns);
		return;
	}
	n = audit_format_dns_allow(p->log, dns, line, sizeof(line));
	if (n > 0)
		audit_append(p->log, line, (size_t)n);
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

static uint16_t dnsproxy_random16(struct dnsproxy *p)
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
		put16(query->up + query->up_len - DNS_OPT_LEN + 3, size);
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

static uint8_t ascii_lower(uint8_t c)
{
	return c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c;
}

/*
 * Our query went out in lower case; a job that randomised its letters (0x20, for spoofing
 * resistance) expects them back as it sent them, so the question is given its spelling.
 */
static void dnsproxy_restore_case(uint8_t *reply, size_t rlen, const uint8_t *query, size_t qlen)
{
	size_t a, b;

	if (rlen < DNS_HEADER_LEN || get16(reply + 4) != 1)
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
	int r;

	*ret_reply_len = 0;
	r = dns_parse_response(answer, len, query->upstream_id, query->q.name, p->answer_addrs,
			       p->config.max_ips, &n, &rcode, &truncated);
	if (r == -ENOMSG)
		return r;
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
	put16(reply, query->client_id);
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
	p->epoll_fd = p->timer_fd = -1;
	for (size_t i = 0; i < LISTEN_COUNT; i++)
		p->listen_fd[i] = -1;
	for (size_t i = 0; i < DNSPROXY_UPSTREAM_SOCKETS; i++)
		p->up_udp[i] = -1;
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
	/*
	 * Every address an answer opened closes: its name's ports were the old policy's, and a
	 * name the new one refuses must open nothing from now on. The job's next look-up opens
	 * what the new policy allows.
	 */
	dnsproxy_expire(p, DNSPROXY_NEVER);
	return p->fatal;
}

static void dnsproxy_client_close(struct dnsproxy *p, struct dnsproxy_client *c);

void dnsproxy_free(struct dnsproxy *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < DNSPROXY_MAX_PENDING; i++)
		dnsproxy_query_free(p, p->queries[i]);
	for (size_t i = 0; i < DNSPROXY_MAX_TCP_CLIENTS; i++)
		if (p->clients[i])
			dnsproxy_client_close(p, p->clients[i]);
	for (size_t i = 0; i < DNSPROXY_UPSTREAM_SOCKETS; i++)
		if (p->up_udp[i] >= 0)
			close(p->up_udp[i]);
	for (size_t i = 0; i < LISTEN_COUNT; i++)
		if (p->listen_fd[i] >= 0)
			close(p->listen_fd[i]);
	if (p->timer_fd >= 0)
		close(p->timer_fd);
	if (p->epoll_fd >= 0)
		close(p->epoll_fd);
	/* The kernel's maps go with the BPF object: only memory is freed here. */
	for (size_t b = 0; b < p->names.nbuckets; b++) {
		struct hnode *n = p->names.buckets[b], *next;

		for (; n; n = next) {
			next = n->next;
			free(((struct dnsproxy_name *)n)->claims);
			free(n);
		}
	}
	for (size_t b = 0; b < p->addrs.nbuckets; b++) {
		struct hnode *n = p->addrs.buckets[b], *next;

		for (; n; n = next) {
			next = n->next;
			free(((struct dnsproxy_addr *)n)->names);
			free(n);
		}
	}
	for (size_t b = 0; b < p->seen.nbuckets; b++) {
		struct hnode *n = p->seen.buckets[b], *next;

		for (; n; n = next) {
			next = n->next;
			free(((struct dnsproxy_seen *)n)->name);
			free(n);
		}
	}
	free(p->names.buckets);
	free(p->addrs.buckets);
	free(p->seen.buckets);
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

/* --- I/O: the listeners, the upstream, the timer ------------------------------------------ */

static long long dnsproxy_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

/* Events carry the kind, a slot and the slot's generation, so a stale event finds nothing. */
static uint64_t dnsproxy_tag(enum dnsproxy_kind kind, unsigned int index, unsigned long long gen)
{
	return (uint64_t)kind << 56 | (gen & 0xffffffffffULL) << 16 | (index & 0xffff);
}

static int dnsproxy_watch(struct dnsproxy *p, int fd, uint32_t events, uint64_t tag)
{
	struct epoll_event ev = { .events = events, .data.u64 = tag };

	return epoll_ctl(p->epoll_fd, EPOLL_CTL_ADD, fd, &ev) < 0 ? -errno : 0;
}

static int dnsproxy_rewatch(struct dnsproxy *p, int fd, uint32_t events, uint64_t tag)
{
	struct epoll_event ev = { .events = events, .data.u64 = tag };

	return epoll_ctl(p->epoll_fd, EPOLL_CTL_MOD, fd, &ev) < 0 ? -errno : 0;
}

static int dnsproxy_bind(int family, int type, uint16_t *ret_port, int *ret_fd)
{
	_cleanup_close_ int fd = socket(family, type | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	struct sockaddr_storage ss = { 0 };
	socklen_t len;
	int one = 1;

	if (fd < 0)
		return -errno;
	if (family == AF_INET6) {
		struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)&ss;

		if (setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one)) < 0)
			return -errno;
		sin6->sin6_family = AF_INET6;
		sin6->sin6_addr = in6addr_loopback;
		len = sizeof(*sin6);
	} else {
		struct sockaddr_in *sin = (struct sockaddr_in *)&ss;

		sin->sin_family = AF_INET;
		sin->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		len = sizeof(*sin);
	}
	if (bind(fd, (struct sockaddr *)&ss, len) < 0)
		return -errno;
	if (type == SOCK_STREAM && listen(fd, DNSPROXY_MAX_TCP_CLIENTS) < 0)
		return -errno;
	if (getsockname(fd, (struct sockaddr *)&ss, &len) < 0)
		return -errno;
	*ret_port = ntohs(family == AF_INET6 ? ((struct sockaddr_in6 *)&ss)->sin6_port
					     : ((struct sockaddr_in *)&ss)->sin_port);
	*ret_fd = TAKE_FD(fd);
	return 0;
}

int dnsproxy_listen(struct dnsproxy *p, struct dnsproxy_ports *ret_ports)
{
	struct dnsproxy_ports ports = { 0 };
	int r;

	p->epoll_fd = epoll_create1(EPOLL_CLOEXEC);
	if (p->epoll_fd < 0)
		return -errno;
	p->timer_fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	if (p->timer_fd < 0)
		return -errno;
	r = dnsproxy_watch(p, p->timer_fd, EPOLLIN, dnsproxy_tag(KIND_TIMER, 0, 0));
	if (r < 0)
		return r;

	r = dnsproxy_bind(AF_INET, SOCK_DGRAM, &ports.udp4, &p->listen_fd[LISTEN_UDP4]);
	if (r == 0)
		r = dnsproxy_bind(AF_INET, SOCK_STREAM, &ports.tcp4, &p->listen_fd[LISTEN_TCP4]);
	if (r < 0)
		return r;
	/* No ::1 (IPv6 off): IPv6 sockets are sent to ::ffff:127.0.0.1 instead. */
	r = dnsproxy_bind(AF_INET6, SOCK_DGRAM, &ports.udp6, &p->listen_fd[LISTEN_UDP6]);
	if (r == 0)
		r = dnsproxy_bind(AF_INET6, SOCK_STREAM, &ports.tcp6, &p->listen_fd[LISTEN_TCP6]);
	if (r < 0) {
		if (r != -EADDRNOTAVAIL && r != -EAFNOSUPPORT)
			return r;
		for (size_t i = LISTEN_UDP6; i <= LISTEN_TCP6; i++) {
			if (p->listen_fd[i] >= 0)
				close(p->listen_fd[i]);
			p->listen_fd[i] = -1;
		}
		ports.udp6 = ports.tcp6 = 0;
	}
	for (unsigned int i = 0; i < LISTEN_COUNT; i++) {
		if (p->listen_fd[i] < 0)
			continue;
		r = dnsproxy_watch(p, p->listen_fd[i], EPOLLIN, dnsproxy_tag(KIND_LISTEN, i, 0));
		if (r < 0)
			return r;
	}
	*ret_ports = ports;
	return 0;
}

int dnsproxy_fd(const struct dnsproxy *p)
{
	return p ? p->epoll_fd : -1;
}

static void dnsproxy_client_close(struct dnsproxy *p, struct dnsproxy_client *c)
{
	close(c->fd);
	p->clients[c->slot] = NULL;
	p->nclients--;
	free(c->out);
	free(c);
}

/* Sends a framed message to a TCP client, queueing what the socket does not take now. */
static bool dnsproxy_client_send(struct dnsproxy *p, struct dnsproxy_client *c, const uint8_t *msg,
				 size_t len)
{
	if (c->out_off == c->out_len) {
		ssize_t n = send(c->fd, msg, len, MSG_NOSIGNAL | MSG_DONTWAIT);

		if (n < 0 && errno != EAGAIN && errno != EINTR) {
			dnsproxy_client_close(p, c);
			return false;
		}
		if (n > 0) {
			msg += n;
			len -= (size_t)n;
		}
		c->out_off = c->out_len = 0;
	}
	if (!len)
		return true;
	if (c->out_off > 0) {
		memmove(c->out, c->out + c->out_off, c->out_len - c->out_off);
		c->out_len -= c->out_off;
		c->out_off = 0;
	}
	if (c->out_len + len > DNSPROXY_TCP_OUT_MAX ||
	    dnsproxy_grow((void **)&c->out, &c->out_cap, c->out_len + len, 1) < 0) {
		dnsproxy_client_close(p, c);
		return false;
	}
	memcpy(c->out + c->out_len, msg, len);
	c->out_len += len;
	if (!c->want_out) {
		c->want_out = true;
		dnsproxy_rewatch(p, c->fd, EPOLLIN | EPOLLOUT,
				 dnsproxy_tag(KIND_CLIENT, c->slot, c->gen));
	}
	return true;
}

/* Sends the reply in p->tx + 2 to whoever asked, and forgets the query. */
static void dnsproxy_deliver(struct dnsproxy *p, struct dnsproxy_query *q, int action, size_t len)
{
	if (action == DNSPROXY_REPLY && q->transport == DNSPROXY_UDP) {
		sendto(q->client_fd, p->tx + 2, len, MSG_DONTWAIT,
		       (struct sockaddr *)&q->client_addr, q->client_addrlen);
	} else if (action == DNSPROXY_REPLY) {
		struct dnsproxy_client *c = p->clients[q->client_slot];

		/* The client may have gone, and its slot been taken by another since. */
		if (c && c->gen == q->client_gen) {
			put16(p->tx, (uint16_t)len);
			dnsproxy_client_send(p, c, p->tx, len + 2);
		}
	}
	dnsproxy_query_free(p, q);
}

static void dnsproxy_fail(struct dnsproxy *p, struct dnsproxy_query *q)
{
	size_t len;
	int action = dnsproxy_query_fail(p, q, p->tx + 2, sizeof(p->tx) - 2, &len);

	dnsproxy_deliver(p, q, action, len);
}

static int dnsproxy_upstream_udp(struct dnsproxy *p, unsigned int index)
{
	const struct resolver *up = &p->config.upstream;
	int fd, r;

	if (p->up_udp[index] >= 0)
		return p->up_udp[index];
	fd = socket(up->addr.ss_family, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	/* Connected: the kernel drops datagrams from anyone but the upstream. */
	if (connect(fd, (const struct sockaddr *)&up->addr, up->addrlen) < 0) {
		r = -errno;
		close(fd);
		return r;
	}
	r = dnsproxy_watch(p, fd, EPOLLIN, dnsproxy_tag(KIND_UPSTREAM_UDP, index, 0));
	if (r < 0) {
		close(fd);
		return r;
	}
	p->up_udp[index] = fd;
	return fd;
}

static int dnsproxy_send_udp(struct dnsproxy *p, struct dnsproxy_query *q)
{
	int fd = dnsproxy_upstream_udp(p, q->up_index);

	if (fd < 0)
		return fd;
	if (send(fd, q->up, q->up_len, MSG_DONTWAIT) < 0)
		return -errno;
	return 0;
}

static int dnsproxy_start_tcp(struct dnsproxy *p, struct dnsproxy_query *q, long long now_ms)
{
	const struct resolver *up = &p->config.upstream;

	q->upstream_tcp = true;
	q->deadline_ms = now_ms + DNSPROXY_QUERY_TIMEOUT_MS;
	q->tcp_fd = socket(up->addr.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (q->tcp_fd < 0)
		return -errno;
	if (connect(q->tcp_fd, (const struct sockaddr *)&up->addr, up->addrlen) < 0 &&
	    errno != EINPROGRESS)
		return -errno;
	q->tcp_buf = malloc(2 + DNS_TCP_MAX_LEN);
	if (!q->tcp_buf)
		return -ENOMEM;
	put16(q->tcp_buf, (uint16_t)q->up_len);
	memcpy(q->tcp_buf + 2, q->up, q->up_len);
	q->tcp_len = 2 + q->up_len;
	q->tcp_off = 0;
	return dnsproxy_watch(p, q->tcp_fd, EPOLLOUT,
			      dnsproxy_tag(KIND_UPSTREAM_TCP, q->slot, q->gen));
}

static void dnsproxy_forward(struct dnsproxy *p, struct dnsproxy_query *q, long long now_ms)
{
	int r;

	if (q->transport == DNSPROXY_TCP) {
		r = dnsproxy_start_tcp(p, q, now_ms);
	} else {
		q->up_index = dnsproxy_random16(p) % DNSPROXY_UPSTREAM_SOCKETS;
		r = dnsproxy_send_udp(p, q);
	}
	if (r < 0)
		dnsproxy_fail(p, q);
}

/* An answer for q: reply, or go on over TCP, or keep waiting (-ENOMSG). */
static void dnsproxy_on_answer(struct dnsproxy *p, struct dnsproxy_query *q, const uint8_t *answer,
			       size_t len, long long now_ms)
{
	size_t rlen;
	int action = dnsproxy_query_answer(p, q, answer, len, now_ms, p->tx + 2, sizeof(p->tx) - 2,
					   &rlen);

	if (action == -ENOMSG) {
		/* Over UDP someone else's datagram; over TCP the connection carries nothing else.
		 */
		if (q->upstream_tcp)
			dnsproxy_fail(p, q);
		return;
	}
	if (action == DNSPROXY_RETRY_TCP) {
		if (dnsproxy_start_tcp(p, q, now_ms) < 0)
			dnsproxy_fail(p, q);
		return;
	}
	dnsproxy_deliver(p, q, action, rlen);
}

static void dnsproxy_on_upstream_udp(struct dnsproxy *p, unsigned int index, long long now_ms)
{
	int fd = p->up_udp[index];

	for (int i = 0; fd >= 0 && i < DNSPROXY_BATCH; i++) {
		ssize_t n = recv(fd, p->rx, sizeof(p->rx), MSG_DONTWAIT);
		struct dnsproxy_query *q;
		uint16_t slot;

		if (n < 0 && errno == EAGAIN)
			break;
		/* ECONNREFUSED and friends: an earlier datagram's ICMP; the query times out. */
		if (n < DNS_HEADER_LEN)
			continue;
		slot = p->id_slot[get16(p->rx)];
		if (!slot)
			continue;
		q = p->queries[slot - 1];
		if (q->upstream_tcp || q->up_index != index)
			continue;
		dnsproxy_on_answer(p, q, p->rx, (size_t)n, now_ms);
	}
}

static void dnsproxy_on_upstream_tcp(struct dnsproxy *p, struct dnsproxy_query *q, long long now_ms)
{
	ssize_t n;

	if (!q->tcp_reading) {
		int error = 0;
		socklen_t elen = sizeof(error);

		if (getsockopt(q->tcp_fd, SOL_SOCKET, SO_ERROR, &error, &elen) < 0 || error) {
			dnsproxy_fail(p, q);
			return;
		}
		n = send(q->tcp_fd, q->tcp_buf + q->tcp_off, q->tcp_len - q->tcp_off,
			 MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n < 0 && errno != EAGAIN) {
			dnsproxy_fail(p, q);
			return;
		}
		if (n > 0)
			q->tcp_off += (size_t)n;
		if (q->tcp_off == q->tcp_len) {
			q->tcp_reading = true;
			q->tcp_off = 0;
			if (dnsproxy_rewatch(p, q->tcp_fd, EPOLLIN,
					     dnsproxy_tag(KIND_UPSTREAM_TCP, q->slot, q->gen)) < 0)
				dnsproxy_fail(p, q);
		}
		return;
	}
	n = recv(q->tcp_fd, q->tcp_buf + q->tcp_off, 2 + DNS_TCP_MAX_LEN - q->tcp_off,
		 MSG_DONTWAIT);
	if (n < 0 && errno == EAGAIN)
		return;
	if (n <= 0) {
		dnsproxy_fail(p, q);
		return;
	}
	q->tcp_off += (size_t)n;
	if (q->tcp_off >= 2 && q->tcp_off >= 2 + (size_t)get16(q->tcp_buf))
		dnsproxy_on_answer(p, q, q->tcp_buf + 2, get16(q->tcp_buf), now_ms);
}

/* A query from the job; returns false when it cost the TCP client its connection. */
static bool dnsproxy_on_query(struct dnsproxy *p, const uint8_t *pkt, size_t len, int fd,
			      const struct sockaddr_storage *from, socklen_t fromlen,
			      struct dnsproxy_client *c, long long now_ms)
{
	unsigned int slot = c ? c->slot : 0;
	unsigned long long gen = c ? c->gen : 0;
	struct dnsproxy_query *q;
	size_t rlen;
	int action;

	/* The sender, for a deny line's pid: found only if the message is refused. */
	p->peerlen = 0;
	if (from && fromlen <= sizeof(p->peer)) {
		memcpy(&p->peer, from, fromlen);
		p->peerlen = fromlen;
	} else if (c) {
		socklen_t len = sizeof(p->peer);

		if (getpeername(c->fd, (struct sockaddr *)&p->peer, &len) == 0)
			p->peerlen = len;
	}
	action = dnsproxy_query_begin(p, pkt, len, c ? DNSPROXY_TCP : DNSPROXY_UDP, now_ms, &q,
				      p->tx + 2, sizeof(p->tx) - 2, &rlen);

	if (action == DNSPROXY_REPLY && !c) {
		sendto(fd, p->tx + 2, rlen, MSG_DONTWAIT, (const struct sockaddr *)from, fromlen);
	} else if (action == DNSPROXY_REPLY) {
		put16(p->tx, (uint16_t)rlen);
		return dnsproxy_client_send(p, c, p->tx, rlen + 2);
	} else if (action == DNSPROXY_FORWARD) {
		if (c) {
			q->client_slot = c->slot;
			q->client_gen = c->gen;
		} else {
			q->client_fd = fd;
			memcpy(&q->client_addr, from, fromlen);
			q->client_addrlen = fromlen;
		}
		/* A failure is answered at once, and that may cost the client its connection. */
		dnsproxy_forward(p, q, now_ms);
		if (c)
			return p->clients[slot] && p->clients[slot]->gen == gen;
	}
	return true;
}

static void dnsproxy_on_udp(struct dnsproxy *p, int fd, long long now_ms)
{
	for (int i = 0; i < DNSPROXY_BATCH; i++) {
		struct sockaddr_storage from;
		socklen_t fromlen = sizeof(from);
		ssize_t n = recvfrom(fd, p->rx, sizeof(p->rx), MSG_DONTWAIT,
				     (struct sockaddr *)&from, &fromlen);

		if (n < 0) {
			if (errno == EAGAIN)
				break;
			continue;
		}
		dnsproxy_on_query(p, p->rx, (size_t)n, fd, &from, fromlen, NULL, now_ms);
	}
}

static void dnsproxy_on_accept(struct dnsproxy *p, int fd, long long now_ms)
{
	for (int i = 0; i < DNSPROXY_BATCH; i++) {
		int cfd = accept4(fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		struct dnsproxy_client *c;
		unsigned int slot;

		if (cfd < 0)
			break;
		if (p->nclients == DNSPROXY_MAX_TCP_CLIENTS || !(c = calloc(1, sizeof(*c)))) {
			close(cfd);
			continue;
		}
		for (slot = 0; p->clients[slot]; slot++)
			;
		c->fd = cfd;
		c->slot = slot;
		c->gen = ++p->gen;
		c->last_ms = now_ms;
		if (dnsproxy_watch(p, cfd, EPOLLIN, dnsproxy_tag(KIND_CLIENT, slot, c->gen)) < 0) {
			close(cfd);
			free(c);
			continue;
		}
		p->clients[slot] = c;
		p->nclients++;
	}
}

static void dnsproxy_on_client(struct dnsproxy *p, struct dnsproxy_client *c, uint32_t events,
			       long long now_ms)
{
	if (events & EPOLLOUT) {
		ssize_t n = send(c->fd, c->out + c->out_off, c->out_len - c->out_off,
				 MSG_NOSIGNAL | MSG_DONTWAIT);

		if (n < 0 && errno != EAGAIN) {
			dnsproxy_client_close(p, c);
			return;
		}
		if (n > 0)
			c->out_off += (size_t)n;
		if (c->out_off == c->out_len) {
			c->out_off = c->out_len = 0;
			c->want_out = false;
			dnsproxy_rewatch(p, c->fd, EPOLLIN,
					 dnsproxy_tag(KIND_CLIENT, c->slot, c->gen));
		}
	}
	if (!(events & (EPOLLIN | EPOLLHUP | EPOLLERR)))
		return;
	for (int i = 0; i < DNSPROXY_BATCH; i++) {
		ssize_t n = recv(c->fd, c->in + c->in_len, sizeof(c->in) - c->in_len, MSG_DONTWAIT);

		if (n < 0 && errno == EAGAIN)
			return;
		if (n <= 0) {
			dnsproxy_client_close(p, c);
			return;
		}
		c->in_len += (size_t)n;
		c->last_ms = now_ms;
		while (c->in_len >= 2) {
			size_t msglen = get16(c->in);

			/* Longer than any query we take: nothing sensible can follow. */
			if (msglen > DNSPROXY_QUERY_MAX_LEN) {
				dnsproxy_client_close(p, c);
				return;
			}
			if (c->in_len < 2 + msglen)
				break;
			if (!dnsproxy_on_query(p, c->in + 2, msglen, -1, NULL, 0, c, now_ms))
				return;
			memmove(c->in, c->in + 2 + msglen, c->in_len - 2 - msglen);
			c->in_len -= 2 + msglen;
		}
	}
}

static void dnsproxy_on_timer(struct dnsproxy *p, long long now_ms)
{
	uint64_t ticks;

	if (read(p->timer_fd, &ticks, sizeof(ticks)) < 0 && errno != EAGAIN)
		return;
	p->timer_armed_ms = 0;
	for (size_t i = 0; i < DNSPROXY_MAX_PENDING; i++) {
		struct dnsproxy_query *q = p->queries[i];

		if (!q)
			continue;
		if (now_ms >= q->deadline_ms) {
			dnsproxy_fail(p, q);
		} else if (!q->upstream_tcp && !q->retried && now_ms >= q->retry_ms) {
			/* Same id, same socket: either answer will do. */
			q->retried = true;
			if (dnsproxy_send_udp(p, q) < 0)
				dnsproxy_fail(p, q);
		}
	}
	for (size_t i = 0; i < DNSPROXY_MAX_TCP_CLIENTS; i++) {
		struct dnsproxy_client *c = p->clients[i];

		if (c && now_ms - c->last_ms >= DNSPROXY_TCP_IDLE_MS)
			dnsproxy_client_close(p, c);
	}
	dnsproxy_expire(p, now_ms);
}

/* One timer for everything: the next expiry, or a tick while anything waits. */
static void dnsproxy_arm_timer(struct dnsproxy *p, long long now_ms)
{
	long long want = p->next_expiry_ms;
	struct itimerspec spec = { 0 };

	if ((p->npending || p->nclients) && now_ms + DNSPROXY_TICK_MS < want)
		want = now_ms + DNSPROXY_TICK_MS;
	if (want == DNSPROXY_NEVER)
		return;
	/* Armed to fire no later than needed: an early tick does no harm. */
	if (p->timer_armed_ms > now_ms && p->timer_armed_ms <= want)
		return;
	if (want <= now_ms)
		want = now_ms + 1;
	spec.it_value.tv_sec = want / 1000;
	spec.it_value.tv_nsec = (want % 1000) * 1000000;
	if (timerfd_settime(p->timer_fd, TFD_TIMER_ABSTIME, &spec, NULL) == 0)
		p->timer_armed_ms = want;
}

int dnsproxy_process(struct dnsproxy *p)
{
	struct epoll_event evs[DNSPROXY_EVENTS];
	long long now_ms;
	int n;

	if (p->epoll_fd < 0)
		return 0;
	n = epoll_wait(p->epoll_fd, evs, DNSPROXY_EVENTS, 0);
	if (n < 0)
		return errno == EINTR ? 0 : -errno;
	now_ms = dnsproxy_now_ms();
	for (int i = 0; i < n; i++) {
		uint64_t tag = evs[i].data.u64;
		enum dnsproxy_kind kind = (enum dnsproxy_kind)(tag >> 56);
		unsigned int index = tag & 0xffff;
		unsigned long long gen = (tag >> 16) & 0xffffffffffULL;

		switch (kind) {
		case KIND_TIMER:
			dnsproxy_on_timer(p, now_ms);
			break;
		case KIND_LISTEN:
			if (index == LISTEN_UDP4 || index == LISTEN_UDP6)
				dnsproxy_on_udp(p, p->listen_fd[index], now_ms);
			else
				dnsproxy_on_accept(p, p->listen_fd[index], now_ms);
			break;
		case KIND_UPSTREAM_UDP:
			if (index < DNSPROXY_UPSTREAM_SOCKETS)
				dnsproxy_on_upstream_udp(p, index, now_ms);
			break;
		case KIND_UPSTREAM_TCP:
			if (index < DNSPROXY_MAX_PENDING && p->queries[index] &&
			    (p->queries[index]->gen & 0xffffffffffULL) == gen &&
			    p->queries[index]->tcp_fd >= 0)
				dnsproxy_on_upstream_tcp(p, p->queries[index], now_ms);
			break;
		case KIND_CLIENT:
			if (index < DNSPROXY_MAX_TCP_CLIENTS && p->clients[index] &&
			    (p->clients[index]->gen & 0xffffffffffULL) == gen)
				dnsproxy_on_client(p, p->clients[index], evs[i].events, now_ms);
			break;
		}
	}
	dnsproxy_arm_timer(p, now_ms);
	return p->fatal;
}
