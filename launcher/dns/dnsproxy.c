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

void dnsproxy_set_pid_finder(struct dnsproxy *p, dnsproxy_pid_fn find, void *ctx)
{
	p->pid_find = find;
	p->pid_ctx = ctx;
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

/*
 * A packet to port 53 that is not a query dns_parse_query takes (r its error): answered
 * FORMERR or NOTIMP, or dropped when it is a response (two resolvers must not ping-pong), and
 * logged as a refusal: it is data the job tried to send there.
 */
static int dnsproxy_refuse_malformed(struct dnsproxy *p, int r, const uint8_t *pkt, size_t len,
				     struct audit_dns *audit, uint8_t *reply, size_t reply_cap,
				     size_t *ret_reply_len)
{
	uint8_t rcode = r == -EOPNOTSUPP ? DNS_RCODE_NOTIMP : DNS_RCODE_FORMERR;
	int action;

	p->stats.malformed++;
	action = r == -EPROTO
			 ? DNSPROXY_DROP
			 : dnsproxy_error_reply(pkt, len, rcode, reply, reply_cap, ret_reply_len);
	audit->reason = "malformed";
	audit->rcode = action == DNSPROXY_REPLY ? dns_rcode_name(rcode) : NULL;
	dnsproxy_audit(p, false, audit);
	return action;
}

int dnsproxy_query_begin(struct dnsproxy *p, const uint8_t *pkt, size_t len,
			 enum dnsproxy_transport transport, long long now_ms,
			 struct dnsproxy_query **ret_query, uint8_t *reply, size_t reply_cap,
			 size_t *ret_reply_len)
{
	struct audit_dns audit = { .protocol = dnsproxy_transport_name(transport) };
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
	if (r < 0)
		return dnsproxy_refuse_malformed(p, r, pkt, len, &audit, reply, reply_cap,
						 ret_reply_len);

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
		/* As many look-ups wait upstream as the proxy keeps: refused, and on record. */
		p->stats.upstream_failed++;
		p->stats.denied++;
		audit.reason = "busy";
		audit.rcode = dns_rcode_name(DNS_RCODE_SERVFAIL);
		dnsproxy_audit(p, false, &audit);
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
		if (dnsproxy_ascii_lower(reply[DNS_HEADER_LEN + i]) !=
		    dnsproxy_ascii_lower(query[DNS_HEADER_LEN + i]))
			return;
	memcpy(reply + DNS_HEADER_LEN, query + DNS_HEADER_LEN, a);
}

int dnsproxy_query_fail(struct dnsproxy *p, struct dnsproxy_query *query, const char *reason,
			uint8_t *reply, size_t reply_cap, size_t *ret_reply_len)
{
	struct audit_dns audit = {
		.protocol = dnsproxy_transport_name(query->transport),
		.qname = query->q.name_original,
		.reason = reason,
		.rcode = dns_rcode_name(DNS_RCODE_SERVFAIL),
	};
	char qtype[16];

	snprintf(qtype, sizeof(qtype), "%s", dns_type_name(query->q.qtype));
	audit.qtype = qtype;
	/* The deny line's pid is the asker's, as at the query. */
	memcpy(&p->peer, &query->peer, query->peerlen);
	p->peerlen = query->peerlen;
	p->stats.upstream_failed++;
	p->stats.denied++;
	dnsproxy_audit(p, false, &audit);
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
		.protocol = dnsproxy_transport_name(query->transport),
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
		.protocol = dnsproxy_transport_name(query->transport),
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
		return dnsproxy_query_fail(p, query, "upstream_error", reply, reply_cap,
					   ret_reply_len);
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
