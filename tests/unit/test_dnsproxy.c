// SPDX-License-Identifier: LGPL-2.1-or-later
/* The DNS proxy's core: which queries go upstream, what answers open, when addresses close. */
#include <arpa/inet.h>
#include <net/if.h>
#include <stdlib.h>
#include <unistd.h>

#include "dns/dnsproxy.h"
#include "test.h"

#define NOW_MS 1000000LL
/* How many refusals the proxy keeps waiting (DNSPROXY_REFUSALS_MAX, internal). */
#define DNSPROXY_REFUSALS_MAX_TEST 256

/* --- a kernel allowlist in memory, with the checks the BPF maps cannot make ---------------- */

struct fake_kernel {
	struct port_set sets[MAX_DNS_PORT_SETS];
	bool written[MAX_DNS_PORT_SETS];
	struct {
		struct in6_addr addr;
		uint32_t set;
	} addrs[4096];
	size_t naddrs;
	int rewrites;	   /* a set written twice: the kernel could read it half-written */
	int dangling;	   /* an address pointing at a set not yet written */
	int opens, closes; /* calls */
	int fail_open;	   /* make open_addr fail with this (negative) */
	/* SNI entries: (address, port, name). */
	struct {
		struct in6_addr addr;
		uint16_t port;
		char name[64];
	} snis[256];
	size_t nsnis;
};

static struct fake_kernel kernel;

static int fake_write_set(void *ctx, uint32_t id, const struct port_set *set)
{
	(void)ctx;
	if (id >= MAX_DNS_PORT_SETS)
		return -E2BIG;
	if (kernel.written[id])
		kernel.rewrites++;
	kernel.sets[id] = *set;
	kernel.written[id] = true;
	return 0;
}

static int fake_find(const struct in6_addr *addr)
{
	for (size_t i = 0; i < kernel.naddrs; i++)
		if (memcmp(&kernel.addrs[i].addr, addr, sizeof(*addr)) == 0)
			return (int)i;
	return -1;
}

static int fake_open(void *ctx, const struct in6_addr *addr, uint32_t set)
{
	int i = fake_find(addr);

	(void)ctx;
	if (kernel.fail_open)
		return kernel.fail_open;
	kernel.opens++;
	if (set >= MAX_DNS_PORT_SETS || !kernel.written[set])
		kernel.dangling++;
	if (i < 0) {
		if (kernel.naddrs == ARRAY_SIZE(kernel.addrs))
			return -ENOSPC;
		i = (int)kernel.naddrs++;
		kernel.addrs[i].addr = *addr;
	}
	kernel.addrs[i].set = set;
	return 0;
}

static int fake_close(void *ctx, const struct in6_addr *addr)
{
	int i = fake_find(addr);

	(void)ctx;
	kernel.closes++;
	if (i < 0)
		return -ENOENT;
	kernel.addrs[i] = kernel.addrs[--kernel.naddrs];
	return 0;
}

static int fake_sni_find(const struct in6_addr *addr, uint16_t port, const char *name)
{
	for (size_t i = 0; i < kernel.nsnis; i++)
		if (!memcmp(&kernel.snis[i].addr, addr, sizeof(*addr)) &&
		    kernel.snis[i].port == port && !strcmp(kernel.snis[i].name, name))
			return (int)i;
	return -1;
}

static int fake_open_name(void *ctx, const struct in6_addr *addr, const char *name,
			  const uint16_t *ports, size_t nports, bool udp)
{
	(void)ctx;
	(void)udp;
	/* Called before the address opens for the name: nothing may be open unchecked. */
	for (size_t i = 0; i < nports; i++) {
		if (fake_sni_find(addr, ports[i], name) >= 0)
			continue;
		if (kernel.nsnis == ARRAY_SIZE(kernel.snis))
			return -ENOSPC;
		kernel.snis[kernel.nsnis].addr = *addr;
		kernel.snis[kernel.nsnis].port = ports[i];
		snprintf(kernel.snis[kernel.nsnis].name, sizeof(kernel.snis[0].name), "%s", name);
		kernel.nsnis++;
	}
	return 0;
}

static int fake_close_name(void *ctx, const struct in6_addr *addr, const char *name,
			   const uint16_t *ports, size_t nports, bool udp)
{
	(void)ctx;
	(void)udp;
	for (size_t i = 0; i < nports; i++) {
		int k = fake_sni_find(addr, ports[i], name);

		if (k >= 0)
			kernel.snis[k] = kernel.snis[--kernel.nsnis];
	}
	return 0;
}

static const struct dnsproxy_ops fake_ops = {
	.write_set = fake_write_set,
	.open_addr = fake_open,
	.close_addr = fake_close,
	.open_name = fake_open_name,
	.close_name = fake_close_name,
};

static struct in6_addr addr_of(const char *text)
{
	struct in6_addr addr;
	unsigned int prefixlen;

	if (policy_parse_cidr(text, &addr, &prefixlen) < 0)
		memset(&addr, 0xee, sizeof(addr));
	return addr;
}

/* The decision the BPF programs make for an address the proxy opened. */
static bool kernel_allows(const char *addr_text, uint16_t port, unsigned int proto)
{
	struct in6_addr addr = addr_of(addr_text);
	int i = fake_find(&addr);

	return i >= 0 && port_set_allows(&kernel.sets[kernel.addrs[i].set], port, proto);
}

/* --- fixtures ------------------------------------------------------------------------------ */

static const char POLICY[] =
	"{\"name\": \"prov\", \"allow\": ["
	"{\"host\": \"api.provider.test\", \"ports\": [443]},"
	"{\"host\": \"*.cdn.provider.test\", \"ports\": [8443]},"
	"{\"host\": \"both.cdn.provider.test\", \"ports\": [80], \"protocol\": \"udp\"},"
	"{\"cidr\": \"192.0.2.0/24\", \"ports\": [22]}]}";

struct fixture {
	struct rules rules;
	struct policy *policy;
	struct policy *policies[1];
	struct resolved_host hosts[3];
	struct in6_addr launch_addr;
	struct dnsproxy *proxy;
};

static struct audit_log test_log;

static void fixture_free(struct fixture *f)
{
	dnsproxy_free(f->proxy);
	policy_free(f->policy);
	free(f);
}

/*
 * Sets rules to hold the one policy json, parsed as file name: the policy, or NULL (a failed
 * check) when it does not parse.
 */
static struct policy *one_policy_rules(const char *name, const char *json,
				       struct policy *policies[1], struct rules *rules)
{
	struct policy *policy = NULL;
	char err[POLICY_ERR_LEN];

	CHECK_EQ_INT(policy_parse(name, json, &policy, err, sizeof(err)), 0);
	if (!policy)
		return NULL;
	policies[0] = policy;
	rules->policies = policies;
	rules->npolicies = 1;
	return policy;
}

static struct fixture *fixture_new_with(const struct dnsproxy_config *config)
{
	struct fixture *f = calloc(1, sizeof(*f));
	int r;

	memset(&kernel, 0, sizeof(kernel));
	memset(&test_log, 0, sizeof(test_log));
	test_log.fd = -1;
	snprintf(test_log.sandbox, sizeof(test_log.sandbox), "sb");
	snprintf(test_log.policy, sizeof(test_log.policy), "prov");
	if (!f)
		return NULL;
	f->policy = one_policy_rules("prov.json", POLICY, f->policies, &f->rules);
	if (!f->policy) {
		free(f);
		return NULL;
	}
	/* api.provider.test resolved at launch to 198.51.100.7; the wildcards resolve nothing. */
	f->launch_addr = addr_of("198.51.100.7");
	f->hosts[0] = (struct resolved_host){ .policy = f->policy,
					      .entry = &f->policy->entries[0],
					      .addrs = &f->launch_addr,
					      .naddrs = 1 };
	f->hosts[1] =
		(struct resolved_host){ .policy = f->policy, .entry = &f->policy->entries[1] };
	f->hosts[2] =
		(struct resolved_host){ .policy = f->policy, .entry = &f->policy->entries[2] };
	f->rules.hosts = f->hosts;
	f->rules.nhosts = 3;
	r = dnsproxy_new(config, &f->rules, &fake_ops, NULL, &test_log, &f->proxy);
	CHECK_EQ_INT(r, 0);
	if (r < 0) {
		fixture_free(f);
		return NULL;
	}
	return f;
}

static struct fixture *fixture_new(void)
{
	struct dnsproxy_config config;

	dnsproxy_config_default(&config);
	config.audit_allowed = true;
	return fixture_new_with(&config);
}

static const char *log_text(void)
{
	static char text[AUDIT_QUEUE_BYTES];

	audit_queued_text(&test_log, text, sizeof(text));
	return text;
}

/* The log once the refusals still in their window are written. */
static const char *flushed_text(struct fixture *f)
{
	dnsproxy_flush_refusals(f->proxy, DNSPROXY_FLUSH_ALL);
	return log_text();
}

static size_t count_of(const char *text, const char *needle)
{
	size_t n = 0;

	for (const char *p = strstr(text, needle); p; p = strstr(p + 1, needle))
		n++;
	return n;
}

static size_t make_query(uint8_t *buf, size_t cap, uint16_t id, const char *name, uint16_t qtype,
			 bool edns)
{
	size_t len = 0;

	CHECK_EQ_INT(dns_build_query(id, name, qtype, edns, buf, cap, &len), 0);
	return len;
}

struct rr {
	const char *owner; /* NULL: the question name (a compression pointer to it) */
	uint16_t type;
	uint32_t ttl;
	const char *data; /* an address, or the CNAME target */
};

static size_t put_name(uint8_t *p, const char *name)
{
	size_t n = 0;

	while (*name) {
		const char *dot = strchr(name, '.');
		size_t len = dot ? (size_t)(dot - name) : strlen(name);

		p[n++] = (uint8_t)len;
		memcpy(p + n, name, len);
		n += len;
		name += len + (dot ? 1 : 0);
	}
	p[n++] = 0;
	return n;
}

/* A response to `query` (its id, flags, question) with these answer records. */
static size_t make_answer(const uint8_t *query, size_t qlen, uint8_t *buf, uint8_t rcode,
			  bool truncated, const struct rr *rrs, size_t nrr)
{
	size_t qend = DNS_HEADER_LEN, n;

	while (query[qend])
		qend += 1 + query[qend];
	qend += 1 + 4;
	(void)qlen;
	memcpy(buf, query, qend);
	buf[2] = 0x81 | (truncated ? 0x02 : 0); /* QR, RD, maybe TC */
	buf[3] = 0x80 | rcode;			/* RA */
	buf[6] = (uint8_t)(nrr >> 8);
	buf[7] = (uint8_t)nrr;
	buf[8] = buf[9] = buf[10] = buf[11] = 0;
	n = qend;
	for (size_t i = 0; i < nrr; i++) {
		struct in6_addr addr;
		size_t rdlen_at;

		if (rrs[i].owner) {
			n += put_name(buf + n, rrs[i].owner);
		} else {
			buf[n++] = 0xc0;
			buf[n++] = DNS_HEADER_LEN;
		}
		buf[n++] = (uint8_t)(rrs[i].type >> 8);
		buf[n++] = (uint8_t)rrs[i].type;
		buf[n++] = 0;
		buf[n++] = DNS_CLASS_IN;
		buf[n++] = (uint8_t)(rrs[i].ttl >> 24);
		buf[n++] = (uint8_t)(rrs[i].ttl >> 16);
		buf[n++] = (uint8_t)(rrs[i].ttl >> 8);
		buf[n++] = (uint8_t)rrs[i].ttl;
		rdlen_at = n;
		n += 2;
		if (rrs[i].type == DNS_TYPE_A) {
			addr = addr_of(rrs[i].data);
			memcpy(buf + n, &addr.s6_addr[12], 4);
			n += 4;
		} else if (rrs[i].type == DNS_TYPE_AAAA) {
			addr = addr_of(rrs[i].data);
			memcpy(buf + n, &addr, 16);
			n += 16;
		} else {
			n += put_name(buf + n, rrs[i].data);
		}
		buf[rdlen_at] = (uint8_t)((n - rdlen_at - 2) >> 8);
		buf[rdlen_at + 1] = (uint8_t)(n - rdlen_at - 2);
	}
	return n;
}

static uint8_t rcode_of(const uint8_t *reply)
{
	return reply[3] & 0xf;
}

static uint16_t id_of(const uint8_t *pkt)
{
	return (uint16_t)(pkt[0] << 8 | pkt[1]);
}

/* Sends a query for name/qtype through the core; returns the action and the query. */
static int ask(struct fixture *f, const char *name, uint16_t qtype, struct dnsproxy_query **ret_q,
	       uint8_t *reply, size_t *ret_len)
{
	uint8_t pkt[512];
	size_t len = make_query(pkt, sizeof(pkt), 0x4242, name, qtype, false);

	return dnsproxy_query_begin(f->proxy, pkt, len, DNSPROXY_UDP, NOW_MS, ret_q, reply, 65535,
				    ret_len);
}

static int ask_at(struct fixture *f, const char *name, uint16_t qtype, long long now_ms)
{
	static uint8_t reply[65536];
	struct dnsproxy_query *q = NULL;
	uint8_t pkt[512];
	size_t len = make_query(pkt, sizeof(pkt), 0x4242, name, qtype, false);
	int action = dnsproxy_query_begin(f->proxy, pkt, len, DNSPROXY_UDP, now_ms, &q, reply,
					  sizeof(reply), &len);

	dnsproxy_query_free(f->proxy, q);
	return action;
}

/* The upstream's answer with these records, to a query just forwarded; returns the action. */
static int answer(struct fixture *f, struct dnsproxy_query *q, const struct rr *rrs, size_t nrr,
		  long long now_ms, uint8_t *reply, size_t *ret_len)
{
	uint8_t resp[4096];
	size_t up_len, n;
	const uint8_t *up = dnsproxy_query_packet(q, &up_len);

	n = make_answer(up, up_len, resp, DNS_RCODE_NOERROR, false, rrs, nrr);
	return dnsproxy_query_answer(f->proxy, q, resp, n, now_ms, reply, 65535, ret_len);
}

/* Looks up name, answers with rrs, and frees the query: the addresses are then open. */
static void resolve(struct fixture *f, const char *name, const struct rr *rrs, size_t nrr,
		    long long now_ms)
{
	static uint8_t reply[65536];
	struct dnsproxy_query *q = NULL;
	size_t len;

	CHECK_EQ_INT(ask(f, name, DNS_TYPE_A, &q, reply, &len), DNSPROXY_FORWARD);
	if (!q)
		return;
	CHECK_EQ_INT(answer(f, q, rrs, nrr, now_ms, reply, &len), DNSPROXY_REPLY);
	dnsproxy_query_free(f->proxy, q);
}

/* --- tests --------------------------------------------------------------------------------- */

static void test_denied_name_refused_and_audited(void)
{
	struct fixture *f = fixture_new();
	static uint8_t reply[65536];
	struct dnsproxy_query *q = (void *)1;
	size_t len = 0;

	if (!f)
		return;
	CHECK_EQ_INT(ask(f, "secret-data.attacker.example", DNS_TYPE_A, &q, reply, &len),
		     DNSPROXY_REPLY);
	CHECK(q == NULL);
	CHECK(len > DNS_HEADER_LEN);
	CHECK_EQ_INT(rcode_of(reply), DNS_RCODE_REFUSED);
	CHECK_EQ_INT(id_of(reply), 0x4242);
	CHECK_CONTAINS(flushed_text(f), "\"event\":\"deny\"");
	CHECK_CONTAINS(log_text(), "\"op\":\"dns\"");
	CHECK_CONTAINS(log_text(), "\"qname\":\"secret-data.attacker.example\"");
	CHECK_CONTAINS(log_text(), "\"qtype\":\"A\"");
	CHECK_CONTAINS(log_text(), "\"reason\":\"name\"");
	CHECK_CONTAINS(log_text(), "\"rcode\":\"REFUSED\"");
	/* The apex of a wildcard is not below it; a look-alike suffix is not either. */
	CHECK_EQ_INT(ask(f, "cdn.provider.test", DNS_TYPE_A, &q, reply, &len), DNSPROXY_REPLY);
	CHECK_EQ_INT(ask(f, "evilcdn.provider.test", DNS_TYPE_A, &q, reply, &len), DNSPROXY_REPLY);
	CHECK_EQ_INT(ask(f, "api.provider.test.evil", DNS_TYPE_A, &q, reply, &len), DNSPROXY_REPLY);
	CHECK_EQ_INT(kernel.opens, 0);
	fixture_free(f);
}

static void test_denied_name_nxdomain_option(void)
{
	struct dnsproxy_config config;
	static uint8_t reply[65536];
	struct dnsproxy_query *q;
	struct fixture *f;
	size_t len;

	dnsproxy_config_default(&config);
	config.deny_rcode = DNS_RCODE_NXDOMAIN;
	f = fixture_new_with(&config);
	if (!f)
		return;
	CHECK_EQ_INT(ask(f, "evil.example", DNS_TYPE_AAAA, &q, reply, &len), DNSPROXY_REPLY);
	CHECK_EQ_INT(rcode_of(reply), DNS_RCODE_NXDOMAIN);
	CHECK_CONTAINS(flushed_text(f), "\"rcode\":\"NXDOMAIN\"");
	/* A refused type of an allowed name stays REFUSED: NXDOMAIN would deny the name. */
	CHECK_EQ_INT(ask(f, "api.provider.test", DNS_TYPE_TXT, &q, reply, &len), DNSPROXY_REPLY);
	CHECK_EQ_INT(rcode_of(reply), DNS_RCODE_REFUSED);
	fixture_free(f);
}

static void test_refused_types_and_classes(void)
{
	static const uint16_t refused[] = { DNS_TYPE_TXT, DNS_TYPE_NULL, DNS_TYPE_ANY, DNS_TYPE_MX,
					    DNS_TYPE_SRV, DNS_TYPE_PTR,	 DNS_TYPE_NS,  65280 };
	static const uint16_t allowed[] = { DNS_TYPE_A, DNS_TYPE_AAAA, DNS_TYPE_CNAME,
					    DNS_TYPE_HTTPS, DNS_TYPE_SVCB };
	struct fixture *f = fixture_new();
	static uint8_t reply[65536];
	struct dnsproxy_query *q;
	uint8_t pkt[512];
	size_t len, qlen;

	if (!f)
		return;
	for (size_t i = 0; i < ARRAY_SIZE(refused); i++) {
		CHECK_EQ_INT(ask(f, "api.provider.test", refused[i], &q, reply, &len),
			     DNSPROXY_REPLY);
		CHECK_EQ_INT(rcode_of(reply), DNS_RCODE_REFUSED);
	}
	CHECK_CONTAINS(flushed_text(f), "\"qtype\":\"TXT\"");
	CHECK_CONTAINS(log_text(), "\"qtype\":\"NULL\"");
	CHECK_CONTAINS(log_text(), "\"qtype\":\"TYPE65280\"");
	CHECK_CONTAINS(log_text(), "\"reason\":\"qtype\"");
	for (size_t i = 0; i < ARRAY_SIZE(allowed); i++) {
		CHECK_EQ_INT(ask(f, "x.cdn.provider.test", allowed[i], &q, reply, &len),
			     DNSPROXY_FORWARD);
		dnsproxy_query_free(f->proxy, q);
	}
	/* CHAOS class (version.bind and friends) */
	qlen = make_query(pkt, sizeof(pkt), 7, "api.provider.test", DNS_TYPE_A, false);
	pkt[qlen - 1] = 3;
	CHECK_EQ_INT(dnsproxy_query_begin(f->proxy, pkt, qlen, DNSPROXY_UDP, NOW_MS, &q, reply,
					  sizeof(reply), &len),
		     DNSPROXY_REPLY);
	CHECK_EQ_INT(rcode_of(reply), DNS_RCODE_REFUSED);
	CHECK_CONTAINS(flushed_text(f), "\"reason\":\"qclass\"");
	fixture_free(f);
}

static void test_malformed_queries(void)
{
	struct fixture *f = fixture_new();
	static uint8_t reply[65536];
	struct dnsproxy_query *q;
	uint8_t pkt[512];
	size_t len, qlen;

	if (!f)
		return;
	/* Shorter than a header: nothing to answer. */
	CHECK_EQ_INT(dnsproxy_query_begin(f->proxy, (const uint8_t *)"abc", 3, DNSPROXY_UDP, NOW_MS,
					  &q, reply, sizeof(reply), &len),
		     DNSPROXY_DROP);
	CHECK_EQ_INT(dnsproxy_query_begin(f->proxy, pkt, 0, DNSPROXY_UDP, NOW_MS, &q, reply,
					  sizeof(reply), &len),
		     DNSPROXY_DROP);
	/* A response is never answered. */
	qlen = make_query(pkt, sizeof(pkt), 7, "api.provider.test", DNS_TYPE_A, false);
	pkt[2] |= 0x80;
	CHECK_EQ_INT(dnsproxy_query_begin(f->proxy, pkt, qlen, DNSPROXY_UDP, NOW_MS, &q, reply,
					  sizeof(reply), &len),
		     DNSPROXY_DROP);
	/* Another opcode (UPDATE): NOTIMP. */
	qlen = make_query(pkt, sizeof(pkt), 7, "api.provider.test", DNS_TYPE_A, false);
	pkt[2] = (uint8_t)(5 << 3);
	CHECK_EQ_INT(dnsproxy_query_begin(f->proxy, pkt, qlen, DNSPROXY_UDP, NOW_MS, &q, reply,
					  sizeof(reply), &len),
		     DNSPROXY_REPLY);
	CHECK_EQ_INT(rcode_of(reply), DNS_RCODE_NOTIMP);
	/* Trailing garbage, two questions, a label running off the end: FORMERR. */
	qlen = make_query(pkt, sizeof(pkt), 7, "api.provider.test", DNS_TYPE_A, false);
	pkt[qlen] = 0;
	CHECK_EQ_INT(dnsproxy_query_begin(f->proxy, pkt, qlen + 1, DNSPROXY_UDP, NOW_MS, &q, reply,
					  sizeof(reply), &len),
		     DNSPROXY_REPLY);
	CHECK_EQ_INT(rcode_of(reply), DNS_RCODE_FORMERR);
	pkt[5] = 2;
	CHECK_EQ_INT(dnsproxy_query_begin(f->proxy, pkt, qlen, DNSPROXY_UDP, NOW_MS, &q, reply,
					  sizeof(reply), &len),
		     DNSPROXY_REPLY);
	CHECK_EQ_INT(rcode_of(reply), DNS_RCODE_FORMERR);
	pkt[5] = 1;
	pkt[DNS_HEADER_LEN] = 60;
	CHECK_EQ_INT(dnsproxy_query_begin(f->proxy, pkt, qlen, DNSPROXY_UDP, NOW_MS, &q, reply,
					  sizeof(reply), &len),
		     DNSPROXY_REPLY);
	CHECK_EQ_INT(rcode_of(reply), DNS_RCODE_FORMERR);
	/* A name with a dot inside a label must not pass for api.provider.test. */
	qlen = make_query(pkt, sizeof(pkt), 7, "api-provider.test", DNS_TYPE_A, false);
	pkt[DNS_HEADER_LEN + 4] = '.';
	CHECK(dnsproxy_query_begin(f->proxy, pkt, qlen, DNSPROXY_UDP, NOW_MS, &q, reply,
				   sizeof(reply), &len) != DNSPROXY_FORWARD);
	CHECK_EQ_INT(kernel.opens, 0);
	fixture_free(f);
}

/* Text sent to port 53 is no query: refused, and a deny line says so, without a question. */
static void test_malformed_is_logged(void)
{
	static const char text[] = "exfil:sk_live_secret";
	struct fixture *f = fixture_new();
	static uint8_t reply[65536];
	struct dnsproxy_query *q;
	const char *line;
	size_t len;

	if (!f)
		return;
	audit_discard(&test_log);
	CHECK(dnsproxy_query_begin(f->proxy, (const uint8_t *)text, sizeof(text) - 1, DNSPROXY_UDP,
				   NOW_MS, &q, reply, sizeof(reply), &len) != DNSPROXY_FORWARD);
	line = log_text();
	CHECK(strstr(line, "\"event\":\"deny\"") != NULL);
	CHECK(strstr(line, "\"op\":\"dns\"") != NULL);
	CHECK(strstr(line, "\"reason\":\"malformed\"") != NULL);
	CHECK(strstr(line, "\"protocol\":\"udp\"") != NULL);
	CHECK(strstr(line, "qname") == NULL);
	/* No I/O layer here to find the sender: no pid rather than a wrong one. */
	CHECK(strstr(line, "\"pid\"") == NULL);
	/* Too short for a header, dropped: logged all the same, without an rcode. */
	audit_discard(&test_log);
	CHECK_EQ_INT(dnsproxy_query_begin(f->proxy, (const uint8_t *)"abc", 3, DNSPROXY_TCP, NOW_MS,
					  &q, reply, sizeof(reply), &len),
		     DNSPROXY_DROP);
	line = log_text();
	CHECK(strstr(line, "\"reason\":\"malformed\"") != NULL);
	CHECK(strstr(line, "\"protocol\":\"tcp\"") != NULL);
	CHECK(strstr(line, "rcode") == NULL);
	fixture_free(f);
}

/* Random bytes and mutated queries: never a crash, never a forward of something malformed. */
static void test_fuzzed_queries(void)
{
	struct fixture *f = fixture_new();
	static uint8_t reply[65536];
	uint8_t base[512], pkt[600];
	size_t blen, len;
	unsigned int seed = 12345;
	int forwarded = 0;

	if (!f)
		return;
	blen = make_query(base, sizeof(base), 9, "a.cdn.provider.test", DNS_TYPE_A, true);
	for (int i = 0; i < 200000; i++) {
		struct dnsproxy_query *q = NULL;
		size_t n;
		int action;

		if (i % 2) {
			n = (size_t)rand_r(&seed) % sizeof(pkt);
			for (size_t k = 0; k < n; k++)
				pkt[k] = (uint8_t)rand_r(&seed);
		} else {
			n = blen;
			memcpy(pkt, base, blen);
			for (int k = rand_r(&seed) % 4; k >= 0; k--)
				pkt[(size_t)rand_r(&seed) % blen] = (uint8_t)rand_r(&seed);
			if (rand_r(&seed) % 8 == 0)
				n = (size_t)rand_r(&seed) % (blen + 20);
		}
		action = dnsproxy_query_begin(f->proxy, pkt, n, DNSPROXY_UDP, NOW_MS, &q, reply,
					      sizeof(reply), &len);
		CHECK(action >= DNSPROXY_DROP && action <= DNSPROXY_FORWARD);
		if (action == DNSPROXY_REPLY)
			CHECK(len >= DNS_HEADER_LEN && len <= 512);
		if (action == DNSPROXY_FORWARD) {
			struct dns_question question;

			/* Whatever was forwarded parses, and its name is allowed. */
			CHECK_EQ_INT(dns_parse_query(pkt, n, NULL, &question, NULL), 0);
			CHECK(dns_name_matches("*.cdn.provider.test", question.name) ||
			      dns_name_matches("api.provider.test", question.name));
			forwarded++;
			dnsproxy_query_free(f->proxy, q);
		}
		/* Keep the audit buffer from filling: nothing is written anywhere. */
		audit_discard(&test_log);
	}
	CHECK(forwarded > 0);
	fixture_free(f);
}

static void test_forwarded_query_is_fresh(void)
{
	struct fixture *f = fixture_new();
	static uint8_t reply[65536];
	struct dns_question question;
	struct dns_edns edns;
	struct dnsproxy_query *q;
	const uint8_t *up;
	uint8_t pkt[512];
	size_t len, qlen, up_len;
	uint16_t up_id;

	if (!f)
		return;
	/* 0x20 letter case, EDNS with a small buffer. */
	qlen = make_query(pkt, sizeof(pkt), 0x1111, "ApI.PROVIDER.test", DNS_TYPE_AAAA, true);
	pkt[qlen - 8] = 0x04; /* the OPT's payload size: 1200 */
	pkt[qlen - 7] = 0xb0;
	CHECK_EQ_INT(dnsproxy_query_begin(f->proxy, pkt, qlen, DNSPROXY_UDP, NOW_MS, &q, reply,
					  sizeof(reply), &len),
		     DNSPROXY_FORWARD);
	up = dnsproxy_query_packet(q, &up_len);
	CHECK_EQ_INT(dns_parse_query(up, up_len, &up_id, &question, &edns), 0);
	CHECK_EQ_STR(question.name, "api.provider.test");
	CHECK_EQ_INT(question.qtype, DNS_TYPE_AAAA);
	CHECK(edns.present);
	CHECK_EQ_INT(edns.udp_size, 1200);
	CHECK(memmem(up, up_len, "PROVIDER", 8) == NULL);
	dnsproxy_query_free(f->proxy, q);
	/* No EDNS from the job: none upstream either, so the answer fits 512 bytes. */
	qlen = make_query(pkt, sizeof(pkt), 0x1111, "api.provider.test", DNS_TYPE_A, false);
	CHECK_EQ_INT(dnsproxy_query_begin(f->proxy, pkt, qlen, DNSPROXY_UDP, NOW_MS, &q, reply,
					  sizeof(reply), &len),
		     DNSPROXY_FORWARD);
	up = dnsproxy_query_packet(q, &up_len);
	CHECK_EQ_INT(dns_parse_query(up, up_len, NULL, NULL, &edns), 0);
	CHECK(!edns.present);
	dnsproxy_query_free(f->proxy, q);
	fixture_free(f);
}

static void test_answer_opens_before_reply(void)
{
	static const struct rr rrs[] = {
		{ NULL, DNS_TYPE_CNAME, 300, "edge.cdn-other.example" },
		{ "edge.cdn-other.example", DNS_TYPE_A, 30, "203.0.113.10" },
		{ "edge.cdn-other.example", DNS_TYPE_A, 30, "203.0.113.11" },
		{ "unrelated.example", DNS_TYPE_A, 30, "203.0.113.99" },
	};
	struct fixture *f = fixture_new();
	static uint8_t reply[65536];
	struct dnsproxy_query *q;
	uint8_t pkt[512];
	size_t len, qlen;

	if (!f)
		return;
	qlen = make_query(pkt, sizeof(pkt), 0xbeef, "API.provider.TEST", DNS_TYPE_A, false);
	CHECK_EQ_INT(dnsproxy_query_begin(f->proxy, pkt, qlen, DNSPROXY_UDP, NOW_MS, &q, reply,
					  sizeof(reply), &len),
		     DNSPROXY_FORWARD);
	CHECK_EQ_INT(answer(f, q, rrs, ARRAY_SIZE(rrs), NOW_MS, reply, &len), DNSPROXY_REPLY);
	/* Opened with the rule's ports only, before the reply exists. */
	CHECK(kernel_allows("203.0.113.10", 443, PROTO_TCP));
	CHECK(kernel_allows("203.0.113.11", 443, PROTO_TCP));
	CHECK(!kernel_allows("203.0.113.10", 80, PROTO_TCP));
	CHECK(!kernel_allows("203.0.113.10", 443, PROTO_UDP));
	CHECK(!kernel_allows("203.0.113.99", 443, PROTO_TCP));
	CHECK_EQ_INT(kernel.dangling, 0);
	/* The reply: the job's id and letter case, the upstream's records. */
	CHECK_EQ_INT(id_of(reply), 0xbeef);
	CHECK(memcmp(reply + DNS_HEADER_LEN, pkt + DNS_HEADER_LEN, qlen - DNS_HEADER_LEN) == 0);
	CHECK_EQ_INT(reply[7], 4);
	CHECK_CONTAINS(log_text(), "\"event\":\"dns_allow\"");
	CHECK_CONTAINS(log_text(), "\"addrs\":[\"203.0.113.10\",\"203.0.113.11\"]");
	CHECK_CONTAINS(log_text(), "\"ttl\":30");
	CHECK_CONTAINS(log_text(), "\"open_s\":90");
	/* Audit lines name the address. */
	{
		struct in6_addr a = addr_of("203.0.113.11"), launch = addr_of("198.51.100.7");
		struct in6_addr other = addr_of("203.0.113.99");

		CHECK_EQ_STR(dnsproxy_addr_name(f->proxy, &a), "api.provider.test");
		CHECK_EQ_STR(dnsproxy_addr_name(f->proxy, &launch), "api.provider.test");
		CHECK(dnsproxy_addr_name(f->proxy, &other) == NULL);
	}
	dnsproxy_query_free(f->proxy, q);
	fixture_free(f);
}

static void test_answer_not_ours(void)
{
	struct fixture *f = fixture_new();
	static uint8_t reply[65536];
	static const struct rr rrs[] = { { NULL, DNS_TYPE_A, 30, "203.0.113.10" } };
	struct dnsproxy_query *q;
	uint8_t resp[1024];
	const uint8_t *up;
	size_t len, up_len, n;
	struct dnsproxy_stats stats;

	if (!f)
		return;
	CHECK_EQ_INT(ask(f, "api.provider.test", DNS_TYPE_A, &q, reply, &len), DNSPROXY_FORWARD);
	up = dnsproxy_query_packet(q, &up_len);
	n = make_answer(up, up_len, resp, 0, false, rrs, 1);
	/* Another id: a spoofing attempt or a late answer; keep waiting. */
	resp[0] ^= 0x5a;
	CHECK_EQ_INT(
		dnsproxy_query_answer(f->proxy, q, resp, n, NOW_MS, reply, sizeof(reply), &len),
		-ENOMSG);
	CHECK_EQ_INT(kernel.opens, 0);
	resp[0] ^= 0x5a;
	/* Garbage with the right id: SERVFAIL, nothing opened. */
	resp[5] = 9;
	CHECK_EQ_INT(
		dnsproxy_query_answer(f->proxy, q, resp, n, NOW_MS, reply, sizeof(reply), &len),
		DNSPROXY_REPLY);
	CHECK_EQ_INT(rcode_of(reply), DNS_RCODE_SERVFAIL);
	CHECK_EQ_INT(id_of(reply), 0x4242);
	CHECK_EQ_INT(kernel.opens, 0);
	/* A timeout: SERVFAIL too. Each failure is a refusal the job met, counted. */
	CHECK_EQ_INT(
		dnsproxy_query_fail(f->proxy, q, "upstream_timeout", reply, sizeof(reply), &len),
		DNSPROXY_REPLY);
	CHECK_EQ_INT(rcode_of(reply), DNS_RCODE_SERVFAIL);
	dnsproxy_get_stats(f->proxy, &stats);
	CHECK_EQ_INT(stats.denied, 2);
	CHECK_EQ_INT(stats.upstream_failed, 2);
	dnsproxy_query_free(f->proxy, q);
	fixture_free(f);
}

static void test_wildcard_and_union_of_rules(void)
{
	static const struct rr both[] = { { NULL, DNS_TYPE_A, 30, "203.0.113.20" } };
	static const struct rr x[] = { { NULL, DNS_TYPE_A, 30, "203.0.113.21" } };
	struct fixture *f = fixture_new();

	if (!f)
		return;
	/* both.cdn matches the wildcard (8443/tcp) and its own rule (80/udp). */
	resolve(f, "both.cdn.provider.test", both, 1, NOW_MS);
	CHECK(kernel_allows("203.0.113.20", 8443, PROTO_TCP));
	CHECK(kernel_allows("203.0.113.20", 80, PROTO_UDP));
	CHECK(!kernel_allows("203.0.113.20", 80, PROTO_TCP));
	/* a.b.x.cdn: any depth below the wildcard. */
	resolve(f, "a.b.x.cdn.provider.test", x, 1, NOW_MS);
	CHECK(kernel_allows("203.0.113.21", 8443, PROTO_TCP));
	CHECK(!kernel_allows("203.0.113.21", 80, PROTO_UDP));
	CHECK_EQ_INT(kernel.rewrites, 0);
	fixture_free(f);
}

static void test_shared_address_union_and_narrowing(void)
{
	static const struct rr shared[] = { { NULL, DNS_TYPE_A, 10, "203.0.113.30" } };
	static const struct rr shared_long[] = { { NULL, DNS_TYPE_A, 100, "203.0.113.30" } };
	struct fixture *f = fixture_new();

	if (!f)
		return;
	/* One CDN address for two names: open for both rules' ports. */
	resolve(f, "x.cdn.provider.test", shared, 1, NOW_MS);
	resolve(f, "api.provider.test", shared_long, 1, NOW_MS);
	CHECK(kernel_allows("203.0.113.30", 443, PROTO_TCP));
	CHECK(kernel_allows("203.0.113.30", 8443, PROTO_TCP));
	/* x.cdn's claim ends at 10 + 60 s: the address narrows to api's port, stays open. */
	CHECK_EQ_INT(dnsproxy_expire(f->proxy, NOW_MS + 70 * 1000), 0);
	CHECK(kernel_allows("203.0.113.30", 443, PROTO_TCP));
	CHECK(!kernel_allows("203.0.113.30", 8443, PROTO_TCP));
	/* api's ends at 100 + 60 s. */
	CHECK_EQ_INT(dnsproxy_expire(f->proxy, NOW_MS + 160 * 1000), 1);
	CHECK(!kernel_allows("203.0.113.30", 443, PROTO_TCP));
	CHECK_EQ_INT(kernel.naddrs, 0);
	CHECK_EQ_INT(kernel.rewrites, 0);
	CHECK_EQ_INT(kernel.dangling, 0);
	fixture_free(f);
}

/* A name of an "sni" rule enters the SNI entries with its address before it opens, and leaves. */
static void test_sni_names(void)
{
	static const struct rr api[] = { { NULL, DNS_TYPE_A, 10, "203.0.113.50" } };
	static const struct rr cdn[] = { { NULL, DNS_TYPE_A, 10, "203.0.113.50" } };
	struct in6_addr a = addr_of("203.0.113.50");
	struct fixture *f = fixture_new();

	if (!f)
		return;
	kernel.nsnis = 0;
	/* api.provider.test: ports [443], so "sni" by default. */
	resolve(f, "API.provider.test", api, 1, NOW_MS);
	CHECK(kernel_allows("203.0.113.50", 443, PROTO_TCP));
	CHECK(fake_sni_find(&a, 443, "api.provider.test") >= 0);
	CHECK_EQ_INT(kernel.nsnis, 1);
	/* The wildcard's 8443 is not checked: no entry for its name. */
	resolve(f, "x.cdn.provider.test", cdn, 1, NOW_MS + 20000);
	CHECK_EQ_INT(kernel.nsnis, 1);
	/* api's claim ends first: its entry goes, the address stays open for x.cdn. */
	CHECK_EQ_INT(dnsproxy_expire(f->proxy, NOW_MS + 75 * 1000), 0);
	CHECK_EQ_INT(kernel.nsnis, 0);
	CHECK(kernel_allows("203.0.113.50", 8443, PROTO_TCP));
	fixture_free(f);
}

static void test_expiry_ttl_floor_and_grace(void)
{
	static const struct rr zero[] = { { NULL, DNS_TYPE_A, 0, "203.0.113.40" },
					  { NULL, DNS_TYPE_AAAA, 120, "2001:db8::40" } };
	struct dnsproxy_stats stats;
	struct fixture *f = fixture_new();

	if (!f)
		return;
	resolve(f, "api.provider.test", zero, 2, NOW_MS);
	CHECK(kernel_allows("203.0.113.40", 443, PROTO_TCP));
	CHECK(kernel_allows("2001:db8::40", 443, PROTO_TCP));
	/* TTL 0 is floored at 5 s, plus 60 s of grace. */
	CHECK_EQ_INT(dnsproxy_expire(f->proxy, NOW_MS + 64999), 0);
	CHECK(kernel_allows("203.0.113.40", 443, PROTO_TCP));
	CHECK_EQ_INT(dnsproxy_expire(f->proxy, NOW_MS + 65000), 1);
	CHECK(!kernel_allows("203.0.113.40", 443, PROTO_TCP));
	CHECK(kernel_allows("2001:db8::40", 443, PROTO_TCP));
	/* Seen again later: open again, with a later end. */
	resolve(f, "api.provider.test", zero, 2, NOW_MS + 100000);
	CHECK(kernel_allows("203.0.113.40", 443, PROTO_TCP));
	CHECK_EQ_INT(dnsproxy_expire(f->proxy, NOW_MS + 180000), 1);
	CHECK(kernel_allows("2001:db8::40", 443, PROTO_TCP));
	CHECK_EQ_INT(dnsproxy_expire(f->proxy, NOW_MS + 100000 + 180000), 1);
	CHECK_EQ_INT(kernel.naddrs, 0);
	dnsproxy_get_stats(f->proxy, &stats);
	CHECK_EQ_INT(stats.opened, 3);
	CHECK_EQ_INT(stats.closed, 3);
	CHECK_EQ_INT(stats.open_now, 0);
	/* The name outlives the address, for audit lines. */
	{
		struct in6_addr a = addr_of("203.0.113.40");

		CHECK_EQ_STR(dnsproxy_addr_name(f->proxy, &a), "api.provider.test");
	}
	fixture_free(f);
}

static void test_refresh_never_shortens(void)
{
	static const struct rr long_ttl[] = { { NULL, DNS_TYPE_A, 600, "203.0.113.50" } };
	static const struct rr short_ttl[] = { { NULL, DNS_TYPE_A, 1, "203.0.113.50" } };
	struct fixture *f = fixture_new();

	if (!f)
		return;
	resolve(f, "api.provider.test", long_ttl, 1, NOW_MS);
	resolve(f, "api.provider.test", short_ttl, 1, NOW_MS + 1000);
	CHECK_EQ_INT(dnsproxy_expire(f->proxy, NOW_MS + 100000), 0);
	CHECK(kernel_allows("203.0.113.50", 443, PROTO_TCP));
	CHECK_EQ_INT(dnsproxy_expire(f->proxy, NOW_MS + 660000), 1);
	fixture_free(f);
}

static void test_max_ips_per_name_oldest_first(void)
{
	struct dnsproxy_config config;
	struct fixture *f;
	char text[5][32];
	struct rr rr[5];

	dnsproxy_config_default(&config);
	config.max_ips = 3;
	f = fixture_new_with(&config);
	if (!f)
		return;
	for (int i = 0; i < 5; i++) {
		snprintf(text[i], sizeof(text[i]), "203.0.113.%d", 60 + i);
		rr[i] = (struct rr){ NULL, DNS_TYPE_A, 300, text[i] };
		resolve(f, "api.provider.test", &rr[i], 1, NOW_MS + i * 1000);
	}
	CHECK_EQ_INT(kernel.naddrs, 3);
	CHECK(!kernel_allows("203.0.113.60", 443, PROTO_TCP));
	CHECK(!kernel_allows("203.0.113.61", 443, PROTO_TCP));
	CHECK(kernel_allows("203.0.113.62", 443, PROTO_TCP));
	CHECK(kernel_allows("203.0.113.64", 443, PROTO_TCP));
	/* Seen again, .62 becomes the youngest: .63 goes next. */
	resolve(f, "api.provider.test", &rr[2], 1, NOW_MS + 10000);
	resolve(f, "api.provider.test", &rr[0], 1, NOW_MS + 11000);
	CHECK(kernel_allows("203.0.113.62", 443, PROTO_TCP));
	CHECK(!kernel_allows("203.0.113.63", 443, PROTO_TCP));
	CHECK(kernel_allows("203.0.113.60", 443, PROTO_TCP));
	/* The limit is per name: another name has its own three. */
	resolve(f, "x.cdn.provider.test", &rr[1], 1, NOW_MS + 12000);
	CHECK_EQ_INT(kernel.naddrs, 4);
	fixture_free(f);
}

static void test_truncated_answers(void)
{
	struct fixture *f = fixture_new();
	static uint8_t reply[65536];
	static uint8_t resp[65536];
	struct rr rrs[40];
	char text[40][32];
	struct dnsproxy_query *q;
	const uint8_t *up;
	size_t len, up_len, n;

	if (!f)
		return;
	CHECK_EQ_INT(ask(f, "api.provider.test", DNS_TYPE_A, &q, reply, &len), DNSPROXY_FORWARD);
	up = dnsproxy_query_packet(q, &up_len);
	/* Over UDP the upstream says TC: ask again over TCP, open nothing yet. */
	n = make_answer(up, up_len, resp, 0, true, NULL, 0);
	CHECK_EQ_INT(
		dnsproxy_query_answer(f->proxy, q, resp, n, NOW_MS, reply, sizeof(reply), &len),
		DNSPROXY_RETRY_TCP);
	CHECK_EQ_INT(kernel.opens, 0);
	/* Over TCP, 40 addresses: 40 * 16 bytes is more than the job's 512. */
	for (int i = 0; i < 40; i++) {
		snprintf(text[i], sizeof(text[i]), "203.0.113.%d", 100 + i);
		rrs[i] = (struct rr){ NULL, DNS_TYPE_A, 60, text[i] };
	}
	n = make_answer(up, up_len, resp, 0, false, rrs, 40);
	CHECK(n > 512);
	CHECK_EQ_INT(
		dnsproxy_query_answer(f->proxy, q, resp, n, NOW_MS, reply, sizeof(reply), &len),
		DNSPROXY_REPLY);
	/* Every address opened; the job gets TC and its question, and asks over TCP. */
	CHECK_EQ_INT(kernel.naddrs, 40);
	CHECK(len <= 512);
	CHECK(reply[2] & 0x02);
	CHECK_EQ_INT(rcode_of(reply), DNS_RCODE_NOERROR);
	CHECK_EQ_INT(reply[5], 1);
	CHECK_EQ_INT(reply[7], 0);
	dnsproxy_query_free(f->proxy, q);
	fixture_free(f);
}

static void test_nxdomain_and_nodata_open_nothing(void)
{
	struct fixture *f = fixture_new();
	static uint8_t reply[65536];
	struct dnsproxy_query *q;
	uint8_t resp[1024];
	const uint8_t *up;
	size_t len, up_len, n;

	if (!f)
		return;
	CHECK_EQ_INT(ask(f, "gone.cdn.provider.test", DNS_TYPE_A, &q, reply, &len),
		     DNSPROXY_FORWARD);
	up = dnsproxy_query_packet(q, &up_len);
	n = make_answer(up, up_len, resp, DNS_RCODE_NXDOMAIN, false, NULL, 0);
	CHECK_EQ_INT(
		dnsproxy_query_answer(f->proxy, q, resp, n, NOW_MS, reply, sizeof(reply), &len),
		DNSPROXY_REPLY);
	CHECK_EQ_INT(rcode_of(reply), DNS_RCODE_NXDOMAIN);
	CHECK_EQ_INT(kernel.opens, 0);
	dnsproxy_query_free(f->proxy, q);
	fixture_free(f);
}

static void test_open_failure_still_answers(void)
{
	static const struct rr rrs[] = { { NULL, DNS_TYPE_A, 30, "203.0.113.70" } };
	struct dnsproxy_stats stats;
	struct fixture *f = fixture_new();

	if (!f)
		return;
	kernel.fail_open = -ENOMEM;
	resolve(f, "api.provider.test", rrs, 1, NOW_MS);
	kernel.fail_open = 0;
	dnsproxy_get_stats(f->proxy, &stats);
	CHECK_EQ_INT(stats.open_failed, 1);
	CHECK_EQ_INT(stats.open_now, 0);
	/* Nothing half-done is left: the next answer opens it. */
	resolve(f, "api.provider.test", rrs, 1, NOW_MS);
	CHECK(kernel_allows("203.0.113.70", 443, PROTO_TCP));
	fixture_free(f);
}

static void test_pending_limit(void)
{
	static struct dnsproxy_query *queries[DNSPROXY_MAX_PENDING];
	struct fixture *f = fixture_new();
	static uint8_t reply[65536];
	struct dnsproxy_query *q;
	size_t len;
	bool ids_unique = true;

	if (!f)
		return;
	for (size_t i = 0; i < DNSPROXY_MAX_PENDING; i++)
		CHECK_EQ_INT(ask(f, "api.provider.test", DNS_TYPE_A, &queries[i], reply, &len),
			     DNSPROXY_FORWARD);
	CHECK_EQ_INT(ask(f, "api.provider.test", DNS_TYPE_A, &q, reply, &len), DNSPROXY_REPLY);
	CHECK_EQ_INT(rcode_of(reply), DNS_RCODE_SERVFAIL);
	/* Every waiting query has its own upstream id. */
	for (size_t i = 1; i < 64; i++) {
		size_t a_len, b_len;
		const uint8_t *a = dnsproxy_query_packet(queries[i], &a_len);

		for (size_t k = 0; k < i; k++) {
			const uint8_t *b = dnsproxy_query_packet(queries[k], &b_len);

			if (id_of(a) == id_of(b))
				ids_unique = false;
		}
	}
	CHECK(ids_unique);
	dnsproxy_query_free(f->proxy, queries[0]);
	CHECK_EQ_INT(ask(f, "api.provider.test", DNS_TYPE_A, &queries[0], reply, &len),
		     DNSPROXY_FORWARD);
	/* dnsproxy_free frees what is still waiting. */
	fixture_free(f);
}

static void test_resolv_conf(void)
{
	char path[] = "/tmp/test_dnsproxy.XXXXXX";
	struct resolver r;
	char addr[INET6_ADDRSTRLEN];
	int fd = mkstemp(path);
	FILE *f;

	CHECK(fd >= 0);
	if (fd < 0)
		return;
	f = fdopen(fd, "w");
	fputs("# comment\nsearch example.com\noptions ndots:2\nnameserver fe80::1%nosuchif0\n"
	      "nameserver\tnot-an-address\n  nameserver 2001:db8::53 # the first usable\n"
	      "nameserver 192.0.2.1\n",
	      f);
	fclose(f);
	CHECK_EQ_INT(dnsproxy_read_resolv_conf(path, &r), 0);
	CHECK_EQ_INT(r.addr.ss_family, AF_INET6);
	inet_ntop(AF_INET6, &((struct sockaddr_in6 *)&r.addr)->sin6_addr, addr, sizeof(addr));
	CHECK_EQ_STR(addr, "2001:db8::53");
	CHECK_EQ_INT(ntohs(((struct sockaddr_in6 *)&r.addr)->sin6_port), 53);

	/* A scoped link-local server keeps its interface. */
	f = fopen(path, "w");
	fputs("nameserver fe80::53%lo\n", f);
	fclose(f);
	CHECK_EQ_INT(dnsproxy_read_resolv_conf(path, &r), 0);
	CHECK_EQ_INT(((struct sockaddr_in6 *)&r.addr)->sin6_scope_id, if_nametoindex("lo"));

	f = fopen(path, "w");
	fputs("search example.com\nnameserver not-an-address\n", f);
	fclose(f);
	r.addr.ss_family = AF_UNIX;
	CHECK_EQ_INT(dnsproxy_read_resolv_conf(path, &r), -ENOENT);
	CHECK_EQ_INT(r.addr.ss_family, AF_UNIX);
	unlink(path);
	CHECK_EQ_INT(dnsproxy_read_resolv_conf(path, &r), -ENOENT);
}

/*
 * --audit-only: a name or type the policy refuses is forwarded and logged as would_deny; its
 * answer opens nothing (the kernel refuses nothing then) but names its addresses for the
 * connections' lines. A class other than IN is still refused.
 */
static void test_audit_only_forwards_would_deny(void)
{
	static const struct rr rrs[] = { { NULL, DNS_TYPE_A, 30, "203.0.113.50" } };
	struct dnsproxy_config config;
	struct dnsproxy_stats stats;
	struct fixture *f;
	static uint8_t reply[65536];
	struct dnsproxy_query *q = NULL;
	struct in6_addr addr = addr_of("203.0.113.50");
	uint8_t pkt[512];
	size_t len, qlen;

	dnsproxy_config_default(&config);
	config.audit_only = true;
	f = fixture_new_with(&config);
	if (!f)
		return;
	CHECK_EQ_INT(ask(f, "New.Host.example", DNS_TYPE_A, &q, reply, &len), DNSPROXY_FORWARD);
	CHECK(q != NULL);
	if (!q) {
		fixture_free(f);
		return;
	}
	CHECK_CONTAINS(log_text(), "\"event\":\"would_deny\",");
	CHECK_CONTAINS(log_text(), "\"op\":\"dns\"");
	CHECK_CONTAINS(log_text(), "\"qname\":\"New.Host.example\"");
	CHECK_CONTAINS(log_text(), "\"rcode\":\"REFUSED\",\"reason\":\"name\"");
	CHECK(!strstr(log_text(), "\"event\":\"deny\""));
	CHECK_EQ_INT(answer(f, q, rrs, ARRAY_SIZE(rrs), NOW_MS, reply, &len), DNSPROXY_REPLY);
	dnsproxy_query_free(f->proxy, q);
	CHECK_EQ_INT(kernel.opens, 0);
	CHECK_EQ_STR(dnsproxy_addr_name(f->proxy, &addr), "new.host.example");
	/* A refused type of an allowed name goes through too. */
	CHECK_EQ_INT(ask(f, "api.provider.test", DNS_TYPE_TXT, &q, reply, &len), DNSPROXY_FORWARD);
	dnsproxy_query_free(f->proxy, q);
	CHECK_CONTAINS(log_text(), "\"qtype\":\"TXT\",\"rcode\":\"REFUSED\",\"reason\":\"qtype\"");
	qlen = make_query(pkt, sizeof(pkt), 7, "api.provider.test", DNS_TYPE_A, false);
	pkt[qlen - 1] = 3;
	CHECK_EQ_INT(dnsproxy_query_begin(f->proxy, pkt, qlen, DNSPROXY_UDP, NOW_MS, &q, reply,
					  sizeof(reply), &len),
		     DNSPROXY_REPLY);
	CHECK_CONTAINS(flushed_text(f), "\"event\":\"deny\"");
	dnsproxy_get_stats(f->proxy, &stats);
	CHECK_EQ_INT(stats.would_deny, 2);
	CHECK_EQ_INT(stats.denied, 1);
	CHECK_EQ_INT(test_log.would_deny_dns, 2);
	fixture_free(f);
}

static void test_audit_dst_name(void)
{
	struct deny_event event = { .op = AUDIT_OP_CONNECT,
				    .family = AF_INET,
				    .sock_type = 1,
				    .protocol = 6,
				    .port = 443 };
	char line[AUDIT_LINE_MAX];

	memset(&test_log, 0, sizeof(test_log));
	event.addr[10] = event.addr[11] = 0xff;
	event.addr[12] = 203;
	event.addr[15] = 9;
	strcpy(event.comm, "curl");
	CHECK(audit_format_deny_name(&test_log, &event, "evil.example", line, sizeof(line)) > 0);
	CHECK_CONTAINS(line,
		       "\"dst_ip\":\"203.0.0.9\",\"dst_port\":443,\"dst_name\":\"evil.example\"}");
	CHECK(audit_format_deny(&test_log, &event, line, sizeof(line)) > 0);
	CHECK(strstr(line, "dst_name") == NULL);
}

/*
 * launch update: names are judged by the new policy's hosts from then on, and every address an
 * answer opened under the old one closes, whatever its TTL.
 */
static void test_set_rules(void)
{
	static const char NEW_POLICY[] = "{\"name\": \"next\", \"allow\": ["
					 "{\"host\": \"next.provider.test\", \"ports\": [443]}]}";
	static const struct rr api[] = { { NULL, DNS_TYPE_A, 3600, "203.0.113.30" } };
	static const struct rr next[] = { { NULL, DNS_TYPE_A, 3600, "203.0.113.31" } };
	struct fixture *f = fixture_new();
	struct rules rules = { 0 };
	struct policy *policy = NULL, *policies[1];
	static uint8_t reply[65536];
	struct dnsproxy_query *q = NULL;
	size_t len = 0;

	if (!f)
		return;
	resolve(f, "api.provider.test", api, 1, NOW_MS);
	CHECK(kernel_allows("203.0.113.30", 443, PROTO_TCP));
	/* Refused under the old policy. */
	CHECK_EQ_INT(ask(f, "next.provider.test", DNS_TYPE_A, &q, reply, &len), DNSPROXY_REPLY);
	CHECK_EQ_INT(rcode_of(reply), DNS_RCODE_REFUSED);

	policy = one_policy_rules("next.json", NEW_POLICY, policies, &rules);
	if (!policy) {
		fixture_free(f);
		return;
	}
	CHECK_EQ_INT(dnsproxy_set_rules(f->proxy, &rules), 0);
	/* The old name's address closed at once, an hour before its TTL. */
	CHECK(!kernel_allows("203.0.113.30", 443, PROTO_TCP));
	CHECK_EQ_INT(ask(f, "api.provider.test", DNS_TYPE_A, &q, reply, &len), DNSPROXY_REPLY);
	CHECK_EQ_INT(rcode_of(reply), DNS_RCODE_REFUSED);
	resolve(f, "next.provider.test", next, 1, NOW_MS);
	CHECK(kernel_allows("203.0.113.31", 443, PROTO_TCP));
	CHECK(!kernel_allows("203.0.113.31", 8443, PROTO_TCP));
	fixture_free(f);
	policy_free(policy);
}

/*
 * launch update with look-ups in flight: a query the old policy let go upstream is answered
 * after the swap, and the answer is judged by the rules in force then. A name the new policy
 * refuses gets the refusal, logged as any refused look-up, and its addresses open nowhere; a
 * name it still allows opens with the new ports.
 */
static void test_set_rules_judges_answers_in_flight(void)
{
	static const char NEW_POLICY[] = "{\"name\": \"next\", \"allow\": ["
					 "{\"host\": \"*.cdn.provider.test\", \"ports\": [9443]}]}";
	static const struct rr api[] = { { NULL, DNS_TYPE_A, 3600, "203.0.113.40" } };
	static const struct rr cdn[] = { { NULL, DNS_TYPE_A, 3600, "203.0.113.41" } };
	struct fixture *f = fixture_new();
	struct rules rules = { 0 };
	struct policy *policy = NULL, *policies[1];
	static uint8_t reply[65536];
	struct dnsproxy_query *qa = NULL, *qc = NULL;
	struct dnsproxy_stats stats;
	size_t len = 0;
	int opens;

	if (!f)
		return;
	CHECK_EQ_INT(ask(f, "API.provider.test", DNS_TYPE_A, &qa, reply, &len), DNSPROXY_FORWARD);
	CHECK_EQ_INT(ask(f, "x.cdn.provider.test", DNS_TYPE_A, &qc, reply, &len), DNSPROXY_FORWARD);
	policy = one_policy_rules("next.json", NEW_POLICY, policies, &rules);
	if (!policy || !qa || !qc) {
		dnsproxy_query_free(f->proxy, qa);
		dnsproxy_query_free(f->proxy, qc);
		fixture_free(f);
		policy_free(policy);
		return;
	}
	CHECK_EQ_INT(dnsproxy_set_rules(f->proxy, &rules), 0);
	opens = kernel.opens;
	/* Judged again before it is sent again: the name still allowed goes on. */
	CHECK_EQ_INT(dnsproxy_query_rejudge(f->proxy, qc, NOW_MS, reply, sizeof(reply), &len),
		     -EAGAIN);
	CHECK_EQ_INT(answer(f, qa, api, ARRAY_SIZE(api), NOW_MS, reply, &len), DNSPROXY_REPLY);
	dnsproxy_query_free(f->proxy, qa);
	/* The refusal, not the upstream's records: nothing of the answer reaches the job. */
	CHECK_EQ_INT(rcode_of(reply), DNS_RCODE_REFUSED);
	CHECK_EQ_INT(id_of(reply), 0x4242);
	CHECK_EQ_INT(reply[7], 0);
	CHECK(len > DNS_HEADER_LEN && !memmem(reply, len, "\xcb\x00\x71\x28", 4));
	CHECK_EQ_INT(kernel.opens, opens);
	CHECK(!kernel_allows("203.0.113.40", 443, PROTO_TCP));
	CHECK_CONTAINS(flushed_text(f), "\"event\":\"deny\"");
	CHECK_CONTAINS(log_text(), "\"qname\":\"API.provider.test\",\"qtype\":\"A\","
				   "\"rcode\":\"REFUSED\",\"reason\":\"name\"");
	CHECK(!strstr(log_text(), "\"addrs\":[\"203.0.113.40\"]"));
	/* Still allowed: answered, with the new policy's ports. */
	CHECK_EQ_INT(answer(f, qc, cdn, ARRAY_SIZE(cdn), NOW_MS, reply, &len), DNSPROXY_REPLY);
	dnsproxy_query_free(f->proxy, qc);
	CHECK_EQ_INT(rcode_of(reply), DNS_RCODE_NOERROR);
	CHECK(kernel_allows("203.0.113.41", 9443, PROTO_TCP));
	CHECK(!kernel_allows("203.0.113.41", 8443, PROTO_TCP));
	dnsproxy_get_stats(f->proxy, &stats);
	CHECK_EQ_INT(stats.denied, 1);
	CHECK_EQ_INT(stats.deny_lines, 1);
	fixture_free(f);
	policy_free(policy);
}

/*
 * The same under --audit-only: the answer still reaches the job (nothing is enforced), but a
 * name the new policy refuses is a would_deny line, and its addresses are only remembered.
 */
static void test_set_rules_in_flight_audit_only(void)
{
	static const char NEW_POLICY[] = "{\"name\": \"next\", \"allow\": ["
					 "{\"host\": \"next.provider.test\", \"ports\": [443]}]}";
	static const struct rr api[] = { { NULL, DNS_TYPE_A, 3600, "203.0.113.42" } };
	struct dnsproxy_config config;
	struct fixture *f;
	struct rules rules = { 0 };
	struct policy *policy = NULL, *policies[1];
	static uint8_t reply[65536];
	struct dnsproxy_query *q = NULL;
	struct in6_addr addr = addr_of("203.0.113.42");
	size_t len = 0;

	dnsproxy_config_default(&config);
	config.audit_only = true;
	f = fixture_new_with(&config);
	if (!f)
		return;
	CHECK_EQ_INT(ask(f, "api.provider.test", DNS_TYPE_A, &q, reply, &len), DNSPROXY_FORWARD);
	CHECK(!strstr(log_text(), "would_deny"));
	policy = one_policy_rules("next.json", NEW_POLICY, policies, &rules);
	if (!policy || !q) {
		dnsproxy_query_free(f->proxy, q);
		fixture_free(f);
		policy_free(policy);
		return;
	}
	CHECK_EQ_INT(dnsproxy_set_rules(f->proxy, &rules), 0);
	CHECK_EQ_INT(answer(f, q, api, ARRAY_SIZE(api), NOW_MS, reply, &len), DNSPROXY_REPLY);
	dnsproxy_query_free(f->proxy, q);
	CHECK_EQ_INT(rcode_of(reply), DNS_RCODE_NOERROR);
	CHECK_EQ_INT(kernel.opens, 0);
	CHECK_EQ_STR(dnsproxy_addr_name(f->proxy, &addr), "api.provider.test");
	CHECK_CONTAINS(log_text(), "\"event\":\"would_deny\",");
	CHECK_CONTAINS(log_text(), "\"qname\":\"api.provider.test\",\"qtype\":\"A\","
				   "\"rcode\":\"REFUSED\",\"reason\":\"name\"");
	fixture_free(f);
	policy_free(policy);
}

/*
 * launch update's order: when the new settings go in, no address an answer opened under the
 * old policy is open any more (it would keep the old name's ports under the new settings);
 * and a failed install leaves the old hosts in force, with nothing open either.
 */
struct swap_seen {
	int calls;
	bool old_open; /* the old name's address, at the moment of the install */
	size_t naddrs; /* DNS-opened addresses then */
	int fail;      /* install's result */
};

static int swap_install(void *ctx)
{
	struct swap_seen *seen = ctx;

	seen->calls++;
	seen->old_open = kernel_allows("203.0.113.30", 443, PROTO_TCP);
	seen->naddrs = kernel.naddrs;
	return seen->fail;
}

static void test_swap_rules_closes_before_install(void)
{
	static const char NEW_POLICY[] = "{\"name\": \"next\", \"allow\": ["
					 "{\"host\": \"api.provider.test\", \"ports\": [22]}]}";
	static const struct rr api[] = { { NULL, DNS_TYPE_A, 3600, "203.0.113.30" } };
	struct fixture *f = fixture_new();
	struct rules rules = { 0 };
	struct policy *policy = NULL, *policies[1];
	struct swap_seen seen = { 0 };
	bool installed = true;

	if (!f)
		return;
	policy = one_policy_rules("next.json", NEW_POLICY, policies, &rules);
	if (!policy) {
		fixture_free(f);
		return;
	}

	/* A failed install: nothing opened stays open, and the old hosts still judge names. */
	resolve(f, "api.provider.test", api, 1, NOW_MS);
	CHECK(kernel_allows("203.0.113.30", 443, PROTO_TCP));
	seen.fail = -ENOSPC;
	CHECK_EQ_INT(dnsproxy_swap_rules(f->proxy, &rules, swap_install, &seen, &installed),
		     -ENOSPC);
	CHECK(!installed);
	CHECK_EQ_INT(seen.calls, 1);
	CHECK(!seen.old_open);
	CHECK(!kernel_allows("203.0.113.30", 443, PROTO_TCP));
	resolve(f, "api.provider.test", api, 1, NOW_MS);
	CHECK(kernel_allows("203.0.113.30", 443, PROTO_TCP));
	CHECK(!kernel_allows("203.0.113.30", 22, PROTO_TCP));

	/* The install: the old name's address closed before it, the new ports after it. */
	seen = (struct swap_seen){ 0 };
	CHECK_EQ_INT(dnsproxy_swap_rules(f->proxy, &rules, swap_install, &seen, &installed), 0);
	CHECK(installed);
	CHECK_EQ_INT(seen.calls, 1);
	CHECK(!seen.old_open);
	CHECK_EQ_INT(seen.naddrs, 0);
	CHECK(!kernel_allows("203.0.113.30", 443, PROTO_TCP));
	resolve(f, "api.provider.test", api, 1, NOW_MS);
	CHECK(kernel_allows("203.0.113.30", 22, PROTO_TCP));
	CHECK(!kernel_allows("203.0.113.30", 443, PROTO_TCP));

	/* The kernel cannot forget an address: nothing is installed, the sandbox must stop. */
	seen = (struct swap_seen){ 0 };
	kernel.naddrs = 0; /* forgotten behind the proxy's back: close_addr fails */
	CHECK(dnsproxy_swap_rules(f->proxy, &rules, swap_install, &seen, &installed) < 0);
	CHECK(!installed);
	CHECK_EQ_INT(seen.calls, 0);
	fixture_free(f);
	policy_free(policy);
}

/*
 * A resolver asks again after REFUSED: identical refusals within the window are one line,
 * written when the window closes, with the others counted; a new type, a new window or a new
 * reason is a new line, and every refusal is in exactly one line.
 */
static void test_refusal_repeats_one_line(void)
{
	struct fixture *f = fixture_new();
	struct dnsproxy_stats stats;
	const char *text;

	if (!f)
		return;
	audit_discard(&test_log);
	CHECK_EQ_INT(ask_at(f, "evil.example", DNS_TYPE_A, NOW_MS), DNSPROXY_REPLY);
	CHECK_EQ_INT(ask_at(f, "evil.example", DNS_TYPE_A, NOW_MS + 3), DNSPROXY_REPLY);
	/* The case a job chose (0x20) does not make another look-up. */
	CHECK_EQ_INT(ask_at(f, "EVIL.example", DNS_TYPE_A, NOW_MS + 500), DNSPROXY_REPLY);
	CHECK_EQ_INT(ask_at(f, "evil.example", DNS_TYPE_AAAA, NOW_MS + 10), DNSPROXY_REPLY);
	CHECK_EQ_INT(ask_at(f, "api.provider.test", DNS_TYPE_TXT, NOW_MS + 20), DNSPROXY_REPLY);
	CHECK_EQ_INT(ask_at(f, "api.provider.test", DNS_TYPE_TXT, NOW_MS + 21), DNSPROXY_REPLY);
	CHECK_EQ_INT(strlen(log_text()), 0);
	CHECK_EQ_INT(dnsproxy_flush_refusals(f->proxy, NOW_MS + DNSPROXY_REPEAT_WINDOW_MS - 1), 0);
	CHECK_EQ_INT(dnsproxy_flush_refusals(f->proxy, NOW_MS + DNSPROXY_REPEAT_WINDOW_MS), 1);
	text = log_text();
	CHECK_EQ_INT(count_of(text, "\"event\":\"deny\""), 1);
	CHECK_CONTAINS(text, "\"qname\":\"evil.example\",\"qtype\":\"A\"");
	CHECK_CONTAINS(text, "\"repeats\":2");
	/* Past the window: a new line. */
	CHECK_EQ_INT(ask_at(f, "evil.example", DNS_TYPE_A, NOW_MS + 1500), DNSPROXY_REPLY);
	text = flushed_text(f);
	CHECK_EQ_INT(count_of(text, "\"event\":\"deny\""), 4);
	CHECK_EQ_INT(count_of(text, "\"qtype\":\"AAAA\""), 1);
	CHECK_EQ_INT(count_of(text, "\"qtype\":\"TXT\",\"rcode\":\"REFUSED\",\"reason\":"
				    "\"qtype\",\"repeats\":1"),
		     1);
	CHECK_EQ_INT(count_of(text, "\"repeats\":0"), 2);
	dnsproxy_get_stats(f->proxy, &stats);
	CHECK_EQ_INT(stats.denied, 7);
	CHECK_EQ_INT(stats.deny_lines, 4);
	/* Nothing waits any more. */
	CHECK_EQ_INT(dnsproxy_flush_refusals(f->proxy, DNSPROXY_FLUSH_ALL), 0);
	fixture_free(f);
}

/*
 * More distinct refusals than the proxy keeps waiting: the oldest are written early, none is
 * lost, and the lines add up to the refusals.
 */
static void test_refusal_flood_loses_nothing(void)
{
	struct fixture *f = fixture_new();
	struct dnsproxy_stats stats;
	unsigned long long repeats = 0;
	char name[64];
	const char *text;
	size_t lines;

	if (!f)
		return;
	audit_discard(&test_log);
	/* 200 names, five times each: 200 lines. */
	for (int i = 0; i < 1000; i++) {
		snprintf(name, sizeof(name), "x%d.evil.example", i % 200);
		CHECK_EQ_INT(ask_at(f, name, DNS_TYPE_A, NOW_MS + i / 10), DNSPROXY_REPLY);
	}
	/* Then 400 others, once each: more than wait at once, so some are written early. */
	for (int i = 0; i < 400; i++) {
		snprintf(name, sizeof(name), "y%d.evil.example", i);
		CHECK_EQ_INT(ask_at(f, name, DNS_TYPE_A, NOW_MS + 200), DNSPROXY_REPLY);
	}
	CHECK(count_of(log_text(), "\"event\":\"deny\"") >= 400 - DNSPROXY_REFUSALS_MAX_TEST);
	text = flushed_text(f);
	lines = count_of(text, "\"event\":\"deny\"");
	for (const char *p = strstr(text, "\"repeats\":"); p; p = strstr(p + 1, "\"repeats\":"))
		repeats += strtoull(p + strlen("\"repeats\":"), NULL, 10);
	dnsproxy_get_stats(f->proxy, &stats);
	CHECK_EQ_INT(stats.denied, 1400);
	CHECK_EQ_INT(stats.deny_lines, lines);
	CHECK_EQ_INT(lines, 600);
	CHECK_EQ_INT(lines + repeats, 1400);
	fixture_free(f);
}

int main(void)
{
	RUN(test_denied_name_refused_and_audited);
	RUN(test_denied_name_nxdomain_option);
	RUN(test_refused_types_and_classes);
	RUN(test_malformed_queries);
	RUN(test_malformed_is_logged);
	RUN(test_fuzzed_queries);
	RUN(test_forwarded_query_is_fresh);
	RUN(test_answer_opens_before_reply);
	RUN(test_answer_not_ours);
	RUN(test_wildcard_and_union_of_rules);
	RUN(test_shared_address_union_and_narrowing);
	RUN(test_sni_names);
	RUN(test_expiry_ttl_floor_and_grace);
	RUN(test_refresh_never_shortens);
	RUN(test_max_ips_per_name_oldest_first);
	RUN(test_truncated_answers);
	RUN(test_nxdomain_and_nodata_open_nothing);
	RUN(test_open_failure_still_answers);
	RUN(test_pending_limit);
	RUN(test_resolv_conf);
	RUN(test_audit_dst_name);
	RUN(test_set_rules);
	RUN(test_swap_rules_closes_before_install);
	RUN(test_set_rules_judges_answers_in_flight);
	RUN(test_set_rules_in_flight_audit_only);
	RUN(test_audit_only_forwards_would_deny);
	RUN(test_refusal_repeats_one_line);
	RUN(test_refusal_flood_loses_nothing);
	return test_failures ? 1 : 0;
}
