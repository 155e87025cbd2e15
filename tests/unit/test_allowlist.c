// SPDX-License-Identifier: LGPL-2.1-or-later
/* Unit tests for allowlist.c: covering-prefix unions, merging, dedup, limits, scale. */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "test.h"
#include "test_addr.h"
#include "policy/allowlist.h"
#include "policy/policy.h"

static const struct port_range PORT_80[] = { { 80, 80, PROTO_TCP } };
static const struct port_range PORT_443[] = { { 443, 443, PROTO_TCP } };
static const struct port_range PORT_22[] = { { 22, 22, PROTO_TCP } };
static const struct port_range PORT_53[] = { { 53, 53, PROTO_UDP } };
static const struct port_range ALL_PORTS[] = { { 0, 65535, PROTO_TCP } };

static bool allows(const struct allowlist *list, const char *addr, uint16_t port,
		   unsigned int proto)
{
	struct in6_addr a = addr_of(addr);

	return allowlist_allows(list, &a, port, proto);
}

static struct allowlist *build_ok_at(int line, const struct allow_rule *rules, size_t n)
{
	char err[256] = "";
	struct allowlist *list = NULL;
	int r = allowlist_build(rules, n, &list, err, sizeof(err));

	if (r != 0 || !list) {
		printf("  %s:%d: allowlist_build = %d (%s)\n", __FILE__, line, r, err);
		test_current_failed = 1;
	}
	return list;
}
#define BUILD_OK(rules, n) build_ok_at(__LINE__, rules, n)

static const struct port_set *exact_set(const struct allowlist *list, const char *addr)
{
	struct in6_addr a = addr_of(addr);
	size_t i;

	for (i = 0; i < list->nexact; i++)
		if (memcmp(list->exact[i].key.addr, &a, 16) == 0)
			return list->exact[i].set < list->nsets ? &list->sets[list->exact[i].set]
								: NULL;
	return NULL;
}

/* Every byte past nranges is zero: the struct goes into a BPF map as it is. */
static bool tail_is_zero(const struct port_set *set)
{
	const unsigned char *p = (const unsigned char *)&set->ranges[set->nranges];
	const unsigned char *end = (const unsigned char *)(set + 1);

	for (; p < end; p++)
		if (*p)
			return false;
	return true;
}

static void check_range(int line, const struct port_set *set, unsigned int i, unsigned int lo,
			unsigned int hi, unsigned int protos)
{
	if (!set || i >= set->nranges || set->ranges[i].lo != lo || set->ranges[i].hi != hi ||
	    set->ranges[i].protos != protos) {
		printf("  %s:%d: range %u is not %u-%u/%u\n", __FILE__, line, i, lo, hi, protos);
		test_current_failed = 1;
	}
}
#define CHECK_RANGE(set, i, lo, hi, protos) check_range(__LINE__, set, i, lo, hi, protos)

static void test_empty(void)
{
	_cleanup_(allowlist_freep) struct allowlist *list = BUILD_OK(NULL, 0);

	if (!list)
		return;
	CHECK_EQ_INT(list->nexact, 0);
	CHECK_EQ_INT(list->nprefixes, 0);
	CHECK_EQ_INT(list->nsets, 0);
	CHECK(!allows(list, "192.0.2.1", 443, PROTO_TCP));
	CHECK(!allows(list, "::1", 443, PROTO_TCP));
	CHECK(!allowlist_allows(NULL, NULL, 1, PROTO_TCP));
}

static void test_exact_and_prefix_split(void)
{
	struct allow_rule rules[] = {
		rule_of("192.0.2.1", PORT_443, 1, PROTO_TCP),
		rule_of("198.51.100.0/24", PORT_443, 1, PROTO_TCP),
		rule_of("2001:db8::1", PORT_443, 1, PROTO_TCP),
		rule_of("2001:db8:1::/48", PORT_443, 1, PROTO_TCP),
	};
	_cleanup_(allowlist_freep) struct allowlist *list = BUILD_OK(rules, ARRAY_SIZE(rules));
	struct in6_addr want;
	size_t i;

	if (!list)
		return;
	CHECK_EQ_INT(list->nexact, 2);
	CHECK_EQ_INT(list->nprefixes, 2);
	CHECK_EQ_INT(list->nsets, 1);
	for (i = 0; i < list->nexact; i++)
		CHECK_EQ_INT(list->exact[i].set, 0);
	/* Sorted by address: the mapped IPv4 range (::ffff:...) sorts before 2001:... */
	want = addr_of("198.51.100.0");
	CHECK(memcmp(list->prefixes[0].key.addr, &want, 16) == 0);
	CHECK_EQ_INT(list->prefixes[0].key.prefixlen, 96 + 24);
	want = addr_of("2001:db8:1::");
	CHECK(memcmp(list->prefixes[1].key.addr, &want, 16) == 0);
	CHECK_EQ_INT(list->prefixes[1].key.prefixlen, 48);
	CHECK(allows(list, "198.51.100.77", 443, PROTO_TCP));
	CHECK(!allows(list, "198.51.101.1", 443, PROTO_TCP));
	CHECK(allows(list, "2001:db8:1:ffff::5", 443, PROTO_TCP));
	CHECK(!allows(list, "2001:db8:2::5", 443, PROTO_TCP));
	CHECK(allows(list, "2001:db8::1", 443, PROTO_TCP));
	CHECK(!allows(list, "2001:db8::2", 443, PROTO_TCP));
}

static void test_host_bits_masked(void)
{
	/* Rules from elsewhere (resolve.c) may carry host bits; the key must not. */
	struct allow_rule rule = { .addr = addr_of("10.1.2.3"),
				   .prefixlen = 96 + 8,
				   .ports = PORT_80,
				   .nports = 1,
				   .protos = PROTO_TCP };
	_cleanup_(allowlist_freep) struct allowlist *list = BUILD_OK(&rule, 1);
	struct in6_addr want = addr_of("10.0.0.0");

	if (!list)
		return;
	CHECK_EQ_INT(list->nprefixes, 1);
	CHECK(memcmp(list->prefixes[0].key.addr, &want, 16) == 0);
	CHECK(allows(list, "10.200.0.1", 80, PROTO_TCP));
}

static void test_covering_union(void)
{
	struct allow_rule rules[] = {
		rule_of("10.0.0.0/8", PORT_80, 1, PROTO_TCP),
		rule_of("10.1.0.0/16", PORT_443, 1, PROTO_TCP),
		rule_of("10.1.2.3", PORT_22, 1, PROTO_TCP),
		rule_of("10.1.2.0/24", PORT_53, 1, PROTO_UDP),
	};
	_cleanup_(allowlist_freep) struct allowlist *list = BUILD_OK(rules, ARRAY_SIZE(rules));
	const struct port_set *set;

	if (!list)
		return;
	/* The example from allowlist.h: the /16 must still allow port 80 of the /8. */
	CHECK(allows(list, "10.1.2.3", 80, PROTO_TCP));
	CHECK(allows(list, "10.1.2.3", 443, PROTO_TCP));
	CHECK(allows(list, "10.1.2.3", 22, PROTO_TCP));
	CHECK(allows(list, "10.1.2.3", 53, PROTO_UDP));
	CHECK(!allows(list, "10.1.2.3", 53, PROTO_TCP));
	CHECK(!allows(list, "10.1.2.3", 8080, PROTO_TCP));
	CHECK(allows(list, "10.1.2.4", 53, PROTO_UDP));
	CHECK(allows(list, "10.1.2.4", 443, PROTO_TCP));
	CHECK(!allows(list, "10.1.2.4", 22, PROTO_TCP));
	CHECK(allows(list, "10.1.9.9", 80, PROTO_TCP));
	CHECK(allows(list, "10.1.9.9", 443, PROTO_TCP));
	CHECK(!allows(list, "10.1.9.9", 22, PROTO_TCP));
	CHECK(!allows(list, "10.1.9.9", 53, PROTO_UDP));
	CHECK(allows(list, "10.2.0.1", 80, PROTO_TCP));
	CHECK(!allows(list, "10.2.0.1", 443, PROTO_TCP));
	CHECK(!allows(list, "11.0.0.1", 80, PROTO_TCP));
	CHECK(!allows(list, "9.255.255.255", 80, PROTO_TCP));

	set = exact_set(list, "10.1.2.3");
	CHECK(set != NULL);
	if (!set)
		return;
	CHECK_EQ_INT(set->nranges, 4);
	CHECK_RANGE(set, 0, 22, 22, PROTO_TCP);
	CHECK_RANGE(set, 1, 53, 53, PROTO_UDP);
	CHECK_RANGE(set, 2, 80, 80, PROTO_TCP);
	CHECK_RANGE(set, 3, 443, 443, PROTO_TCP);
	CHECK(tail_is_zero(set));
}

static void test_no_union_from_siblings(void)
{
	struct allow_rule rules[] = {
		rule_of("10.1.0.0/16", PORT_443, 1, PROTO_TCP),
		rule_of("10.2.0.0/16", PORT_80, 1, PROTO_TCP),
		rule_of("10.1.0.0/24", PORT_22, 1, PROTO_TCP),
		rule_of("10.2.0.0/15", PORT_53, 1, PROTO_UDP), /* 10.2.0.0-10.3.255.255 */
	};
	_cleanup_(allowlist_freep) struct allowlist *list = BUILD_OK(rules, ARRAY_SIZE(rules));

	if (!list)
		return;
	CHECK(!allows(list, "10.1.0.1", 80, PROTO_TCP));
	CHECK(allows(list, "10.1.0.1", 443, PROTO_TCP));
	CHECK(allows(list, "10.1.0.1", 22, PROTO_TCP));
	CHECK(!allows(list, "10.1.0.1", 53, PROTO_UDP));
	CHECK(!allows(list, "10.2.0.1", 443, PROTO_TCP));
	CHECK(allows(list, "10.2.0.1", 53, PROTO_UDP));
	CHECK(allows(list, "10.2.0.1", 80, PROTO_TCP));
	CHECK(allows(list, "10.3.0.1", 53, PROTO_UDP));
	CHECK(!allows(list, "10.3.0.1", 80, PROTO_TCP));
}

static void test_same_prefix_rules_merge(void)
{
	static const struct port_range a[] = { { 80, 90, 0 }, { 200, 300, 0 } };
	static const struct port_range b[] = { { 91, 100, 0 }, { 95, 150, 0 } };
	static const struct port_range c[] = { { 1, 100, 0 } };
	struct allow_rule rules[] = {
		rule_of("192.0.2.1", a, 2, PROTO_TCP),
		rule_of("192.0.2.1", b, 2, PROTO_TCP),
		/* Same address written the IPv6 way: one node. */
		rule_of("::ffff:192.0.2.1", c, 1, PROTO_UDP),
	};
	_cleanup_(allowlist_freep) struct allowlist *list = BUILD_OK(rules, ARRAY_SIZE(rules));
	const struct port_set *set;

	if (!list)
		return;
	CHECK_EQ_INT(list->nexact, 1);
	set = exact_set(list, "192.0.2.1");
	if (!set) {
		CHECK(set != NULL);
		return;
	}
	/* TCP: 80-90 + 91-100 (adjacent) + 95-150 (overlapping) = 80-150, and 200-300. */
	CHECK_EQ_INT(set->nranges, 3);
	CHECK_RANGE(set, 0, 1, 100, PROTO_UDP);
	CHECK_RANGE(set, 1, 80, 150, PROTO_TCP);
	CHECK_RANGE(set, 2, 200, 300, PROTO_TCP);
	CHECK(tail_is_zero(set));
	CHECK(allows(list, "192.0.2.1", 150, PROTO_TCP));
	CHECK(!allows(list, "192.0.2.1", 151, PROTO_TCP));
	CHECK(!allows(list, "192.0.2.1", 79, PROTO_TCP));
	CHECK(allows(list, "192.0.2.1", 1, PROTO_UDP));
	CHECK(!allows(list, "192.0.2.1", 101, PROTO_UDP));
}

static void test_any_merging(void)
{
	static const struct port_range web[] = { { 443, 443, 0 }, { 8000, 8999, 0 } };
	static const struct port_range dns[] = { { 53, 53, 0 }, { 8000, 8999, 0 } };
	struct allow_rule rules[] = {
		rule_of("192.0.2.1", web, 2, PROTO_TCP), rule_of("192.0.2.1", dns, 2, PROTO_UDP),
		rule_of("192.0.2.2", web, 2, PROTO_ANY), rule_of("192.0.2.3", web, 2, PROTO_TCP),
		rule_of("192.0.2.3", web, 2, PROTO_UDP),
	};
	_cleanup_(allowlist_freep) struct allowlist *list = BUILD_OK(rules, ARRAY_SIZE(rules));
	const struct port_set *set;

	if (!list)
		return;
	set = exact_set(list, "192.0.2.1");
	CHECK(set && set->nranges == 3);
	CHECK_RANGE(set, 0, 53, 53, PROTO_UDP);
	CHECK_RANGE(set, 1, 443, 443, PROTO_TCP);
	CHECK_RANGE(set, 2, 8000, 8999, PROTO_ANY);

	set = exact_set(list, "192.0.2.2");
	CHECK(set && set->nranges == 2);
	CHECK_RANGE(set, 0, 443, 443, PROTO_ANY);
	CHECK_RANGE(set, 1, 8000, 8999, PROTO_ANY);
	/* TCP and UDP given separately with the same ports: the same set as "any". */
	CHECK(exact_set(list, "192.0.2.3") == set);
	CHECK_EQ_INT(list->nsets, 2);
	CHECK(allows(list, "192.0.2.2", 443, PROTO_UDP));
	CHECK(!allows(list, "192.0.2.1", 443, PROTO_UDP));
}

static void test_dedup(void)
{
	static const struct port_range ab[] = { { 80, 80, 0 }, { 443, 443, 0 } };
	static const struct port_range ba[] = { { 443, 443, 0 }, { 80, 80, 0 } };
	struct allow_rule rules[1000];
	char text[64];
	size_t i;
	struct allowlist *list;

	for (i = 0; i < ARRAY_SIZE(rules); i++) {
		snprintf(text, sizeof(text), "172.16.%zu.%zu", i / 250, i % 250);
		rules[i] = rule_of(text, i % 2 ? ab : ba, 2, PROTO_TCP);
	}
	list = BUILD_OK(rules, ARRAY_SIZE(rules));
	if (list) {
		CHECK_EQ_INT(list->nexact, 1000);
		CHECK_EQ_INT(list->nsets, 1);
		CHECK(tail_is_zero(&list->sets[0]));
	}
	allowlist_free(list);

	/* Every third address gets an extra port: exactly two sets. */
	for (i = 0; i < ARRAY_SIZE(rules); i += 3)
		rules[i].nports = 1;
	list = BUILD_OK(rules, ARRAY_SIZE(rules));
	if (list) {
		CHECK_EQ_INT(list->nsets, 3); /* {80,443}, {443} (ba[0]), {80} (ab[0]) */
		for (i = 0; i < list->nexact; i++)
			CHECK(list->exact[i].set < list->nsets);
	}
	allowlist_free(list);
}

static void test_protocols(void)
{
	struct allow_rule rules[] = {
		rule_of("192.0.2.10", PORT_53, 1, PROTO_UDP),
		rule_of("192.0.2.11", PORT_53, 1, PROTO_ANY),
		rule_of("192.0.2.12", PORT_53, 1, PROTO_TCP),
		rule_of("192.0.2.13", PORT_53, 1, 0),	      /* no protocol: allows nothing */
		rule_of("192.0.2.14", PORT_53, 0, PROTO_ANY), /* no ports: allows nothing */
	};
	_cleanup_(allowlist_freep) struct allowlist *list = BUILD_OK(rules, ARRAY_SIZE(rules));

	if (!list)
		return;
	/* The rule's protos decide, whatever each range's own protos field says. */
	CHECK(allows(list, "192.0.2.10", 53, PROTO_UDP));
	CHECK(!allows(list, "192.0.2.10", 53, PROTO_TCP));
	CHECK(allows(list, "192.0.2.11", 53, PROTO_UDP));
	CHECK(allows(list, "192.0.2.11", 53, PROTO_TCP));
	CHECK(allows(list, "192.0.2.12", 53, PROTO_TCP));
	CHECK(!allows(list, "192.0.2.12", 53, PROTO_UDP));
	CHECK(!allows(list, "192.0.2.13", 53, PROTO_UDP));
	CHECK(!allows(list, "192.0.2.14", 53, PROTO_UDP));
	CHECK_EQ_INT(list->nexact, 3);
}

static void test_all_ports_and_edges(void)
{
	struct allow_rule rules[] = {
		rule_of("192.0.2.0/24", ALL_PORTS, 1, PROTO_TCP),
		rule_of("0.0.0.0/0", PORT_53, 1, PROTO_UDP),
		rule_of("::/0", PORT_443, 1, PROTO_TCP),
	};
	_cleanup_(allowlist_freep) struct allowlist *list = BUILD_OK(rules, ARRAY_SIZE(rules));

	if (!list)
		return;
	CHECK(allows(list, "192.0.2.200", 0, PROTO_TCP));
	CHECK(allows(list, "192.0.2.200", 65535, PROTO_TCP));
	CHECK(allows(list, "192.0.2.200", 53, PROTO_UDP));
	CHECK(!allows(list, "192.0.2.200", 54, PROTO_UDP));
	/* 0.0.0.0/0 is every IPv4 address, and only those. */
	CHECK(allows(list, "203.0.113.9", 53, PROTO_UDP));
	CHECK(!allows(list, "2001:db8::1", 53, PROTO_UDP));
	/* ::/0 contains the mapped IPv4 space too. */
	CHECK(allows(list, "203.0.113.9", 443, PROTO_TCP));
	CHECK(allows(list, "192.0.2.1", 443, PROTO_TCP));
	CHECK(allows(list, "2001:db8::1", 443, PROTO_TCP));
	CHECK(!allows(list, "2001:db8::1", 80, PROTO_TCP));
}

static void test_port_set_allows(void)
{
	struct port_set set;

	memset(&set, 0, sizeof(set));
	CHECK(!port_set_allows(&set, 0, PROTO_TCP));
	set.nranges = 2;
	set.ranges[0] = (struct port_range){ 100, 200, PROTO_TCP };
	set.ranges[1] = (struct port_range){ 150, 150, PROTO_UDP };
	CHECK(port_set_allows(&set, 100, PROTO_TCP));
	CHECK(port_set_allows(&set, 200, PROTO_TCP));
	CHECK(!port_set_allows(&set, 99, PROTO_TCP));
	CHECK(!port_set_allows(&set, 201, PROTO_TCP));
	CHECK(port_set_allows(&set, 150, PROTO_UDP));
	CHECK(!port_set_allows(&set, 151, PROTO_UDP));
	CHECK(!port_set_allows(&set, 150, 0));
	/* Ranges past nranges do not count. */
	set.ranges[2] = (struct port_range){ 1, 65535, PROTO_ANY };
	CHECK(!port_set_allows(&set, 5000, PROTO_TCP));
	set.nranges = 3;
	CHECK(port_set_allows(&set, 5000, PROTO_TCP));
}

static void test_invalid_rules(void)
{
	static const struct port_range reversed[] = { { 90, 80, PROTO_TCP } };
	struct allow_rule rule = rule_of("192.0.2.1", PORT_80, 1, PROTO_TCP);
	struct allowlist *list = NULL;
	char err[256];

	rule.prefixlen = 129;
	CHECK_EQ_INT(allowlist_build(&rule, 1, &list, err, sizeof(err)), -EINVAL);
	CHECK_CONTAINS(err, "prefix length 129");
	rule = rule_of("192.0.2.1", reversed, 1, PROTO_TCP);
	CHECK_EQ_INT(allowlist_build(&rule, 1, &list, err, sizeof(err)), -EINVAL);
	CHECK_CONTAINS(err, "90-80");
	rule = rule_of("192.0.2.1", PORT_80, 1, 4);
	CHECK_EQ_INT(allowlist_build(&rule, 1, &list, err, sizeof(err)), -EINVAL);
	rule = rule_of("192.0.2.1", NULL, 1, PROTO_TCP);
	CHECK_EQ_INT(allowlist_build(&rule, 1, &list, err, sizeof(err)), -EINVAL);
	CHECK_EQ_INT(allowlist_build(NULL, 1, &list, err, sizeof(err)), -EINVAL);
	CHECK(list == NULL);
	allowlist_free(list);
}

static void test_limit_port_ranges(void)
{
	struct port_range many[MAX_PORT_RANGES + 1], low[20], high[13], adjacent[100];
	struct allow_rule rules[2];
	struct allowlist *list = NULL;
	char err[256];
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(many); i++)
		many[i] = (struct port_range){ (__u16)(1000 + 2 * i), (__u16)(1000 + 2 * i), 0 };
	rules[0] = rule_of("192.0.2.1", many, MAX_PORT_RANGES, PROTO_TCP);
	list = BUILD_OK(rules, 1);
	if (list)
		CHECK_EQ_INT(list->sets[0].nranges, MAX_PORT_RANGES);
	allowlist_free(list);
	list = NULL;

	rules[0] = rule_of("192.0.2.1", many, MAX_PORT_RANGES + 1, PROTO_TCP);
	CHECK_EQ_INT(allowlist_build(rules, 1, &list, err, sizeof(err)), -E2BIG);
	CHECK_CONTAINS(err, "192.0.2.1");
	CHECK_CONTAINS(err, "33 port ranges");
	CHECK_CONTAINS(err, "MAX_PORT_RANGES");
	allowlist_free(list); /* only set if the build wrongly succeeded */
	list = NULL;

	/* Adjacent ports merge into one range: 100 ports, one range. */
	for (i = 0; i < ARRAY_SIZE(adjacent); i++)
		adjacent[i] = (struct port_range){ (__u16)(2000 + i), (__u16)(2000 + i), 0 };
	rules[0] = rule_of("192.0.2.1", adjacent, ARRAY_SIZE(adjacent), PROTO_TCP);
	list = BUILD_OK(rules, 1);
	if (list) {
		CHECK_EQ_INT(list->sets[0].nranges, 1);
		CHECK_RANGE(&list->sets[0], 0, 2000, 2099, PROTO_TCP);
	}
	allowlist_free(list);
	list = NULL;

	/* 20 ranges on the /8 plus 13 others on the /16: the /16 overflows through the union. */
	for (i = 0; i < ARRAY_SIZE(low); i++)
		low[i] = (struct port_range){ (__u16)(100 + 2 * i), (__u16)(100 + 2 * i), 0 };
	for (i = 0; i < ARRAY_SIZE(high); i++)
		high[i] = (struct port_range){ (__u16)(5000 + 2 * i), (__u16)(5000 + 2 * i), 0 };
	rules[0] = rule_of("10.0.0.0/8", low, ARRAY_SIZE(low), PROTO_TCP);
	rules[1] = rule_of("10.1.0.0/16", high, ARRAY_SIZE(high), PROTO_TCP);
	CHECK_EQ_INT(allowlist_build(rules, 2, &list, err, sizeof(err)), -E2BIG);
	CHECK_CONTAINS(err, "10.1.0.0/16");
	CHECK_CONTAINS(err, "MAX_PORT_RANGES");
	CHECK(list == NULL);
	allowlist_free(list);
	rules[1].nports = 12;
	list = BUILD_OK(rules, 2);
	allowlist_free(list);
}

static void test_limit_port_sets(void)
{
	static struct port_range ports[MAX_PORT_SETS + 1];
	static struct allow_rule rules[MAX_PORT_SETS + 1];
	struct allowlist *list = NULL;
	char err[256], text[64];
	size_t i;

	for (i = 0; i < ARRAY_SIZE(rules); i++) {
		ports[i] = (struct port_range){ (__u16)(1 + i), (__u16)(1 + i), 0 };
		snprintf(text, sizeof(text), "10.0.%zu.%zu", i / 256, i % 256);
		rules[i] = rule_of(text, &ports[i], 1, PROTO_TCP);
	}
	list = BUILD_OK(rules, MAX_PORT_SETS);
	if (list) {
		CHECK_EQ_INT(list->nsets, MAX_PORT_SETS);
		CHECK(allows(list, "10.0.3.255", MAX_PORT_SETS, PROTO_TCP));
		CHECK(!allows(list, "10.0.3.255", MAX_PORT_SETS - 1, PROTO_TCP));
	}
	allowlist_free(list);
	list = NULL;
	CHECK_EQ_INT(allowlist_build(rules, MAX_PORT_SETS + 1, &list, err, sizeof(err)), -E2BIG);
	CHECK_CONTAINS(err, "MAX_PORT_SETS");
	CHECK_CONTAINS(err, "10.0.4.0");
	CHECK(list == NULL);
	allowlist_free(list);
}

/* n distinct IPv4 /32s (10.x.y.z) or, with `wide`, spread over IPv6 too. */
static struct allow_rule *make_rules(size_t n, const struct port_range *ports)
{
	struct allow_rule *rules = calloc(n, sizeof(*rules));
	size_t i;

	if (!rules)
		return NULL;
	for (i = 0; i < n; i++) {
		struct in6_addr a = { 0 };

		a.s6_addr[10] = a.s6_addr[11] = 0xff;
		a.s6_addr[12] = 10;
		a.s6_addr[13] = (uint8_t)(i >> 16);
		a.s6_addr[14] = (uint8_t)(i >> 8);
		a.s6_addr[15] = (uint8_t)i;
		rules[i] = (struct allow_rule){ .addr = a,
						.prefixlen = 128,
						.ports = ports,
						.nports = 1,
						.protos = PROTO_TCP };
	}
	return rules;
}

static void test_limit_entries(void)
{
	_cleanup_free_ struct allow_rule *rules = make_rules(MAX_ALLOW_ENTRIES + 1, PORT_443);
	struct allowlist *list = NULL;
	char err[256];

	CHECK(rules != NULL);
	if (!rules)
		return;
	list = BUILD_OK(rules, MAX_ALLOW_ENTRIES);
	if (list)
		CHECK_EQ_INT(list->nexact, MAX_ALLOW_ENTRIES);
	allowlist_free(list);
	list = NULL;

	CHECK_EQ_INT(allowlist_build(rules, MAX_ALLOW_ENTRIES + 1, &list, err, sizeof(err)),
		     -E2BIG);
	CHECK_CONTAINS(err, "MAX_ALLOW_ENTRIES");
	CHECK_CONTAINS(err, "10.1.134.160"); /* the 100,001st address */
	CHECK(list == NULL);
	allowlist_free(list);
	list = NULL;

	/* Duplicates are one entry: 100,001 rules over 100,000 addresses fit. */
	rules[MAX_ALLOW_ENTRIES] = rules[0];
	list = BUILD_OK(rules, MAX_ALLOW_ENTRIES + 1);
	if (list)
		CHECK_EQ_INT(list->nexact, MAX_ALLOW_ENTRIES);
	allowlist_free(list);
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* xorshift64: deterministic, so a failure can be replayed. */
static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static uint64_t rng(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

/* The decision without any cleverness: some rule contains the address and the port. */
static bool brute_allows(const struct allow_rule *rules, size_t n, const struct in6_addr *addr,
			 uint16_t port, unsigned int proto)
{
	size_t i;
	unsigned int b, k;

	for (i = 0; i < n; i++) {
		const struct allow_rule *r = &rules[i];
		bool inside = true;

		if (!(r->protos & proto))
			continue;
		for (b = 0; b < r->prefixlen && inside; b++) {
			unsigned int mask = 0x80 >> (b % 8);

			inside = (addr->s6_addr[b / 8] & mask) == (r->addr.s6_addr[b / 8] & mask);
		}
		if (!inside)
			continue;
		for (k = 0; k < r->nports; k++)
			if (r->ports[k].lo <= port && port <= r->ports[k].hi)
				return true;
	}
	return false;
}

static struct in6_addr random_addr_near(const struct in6_addr *base)
{
	struct in6_addr a = *base;
	uint64_t x = rng();

	/* Keep the top bits mostly, so queries land inside and around the rules. */
	a.s6_addr[15] ^= (uint8_t)x;
	if (x & 0x100)
		a.s6_addr[14] ^= (uint8_t)(x >> 16);
	if ((x & 0x600) == 0x600)
		a.s6_addr[13] ^= (uint8_t)(x >> 24);
	if ((x & 0x7000) == 0x7000)
		a.s6_addr[3] ^= (uint8_t)(x >> 32);
	return a;
}

static void test_random_against_brute_force(void)
{
	static const struct port_range choices[][2] = {
		{ { 80, 80, 0 }, { 443, 443, 0 } },	  { { 22, 22, 0 }, { 0, 0, 0 } },
		{ { 1000, 2000, 0 }, { 1500, 3000, 0 } }, { { 53, 53, 0 }, { 54, 60, 0 } },
		{ { 0, 65535, 0 }, { 0, 0, 0 } },
	};
	static const char *const bases[] = { "10.20.30.40", "2001:db8:aa:bb::1234", "::ffff:0:0" };
	static const uint16_t probe_ports[] = { 0,   22,   53,	 57,   80,   443,
						999, 1000, 2500, 3000, 3001, 65535 };
	struct allow_rule rules[400];
	size_t round, i, mismatches = 0, queries = 0, allowed = 0;

	for (round = 0; round < 5; round++) {
		_cleanup_(allowlist_freep) struct allowlist *list = NULL;
		struct in6_addr base = addr_of(bases[round % ARRAY_SIZE(bases)]);
		size_t nrules = 50 + round * 80;

		for (i = 0; i < nrules; i++) {
			uint64_t x = rng();
			unsigned int c = (unsigned int)(x % ARRAY_SIZE(choices));
			unsigned int protos = 1 + (unsigned int)((x >> 8) % 3);
			unsigned int len = 96 + (unsigned int)((x >> 16) % 33);

			if (round % ARRAY_SIZE(bases) == 1)
				len = 64 + (unsigned int)((x >> 16) % 65);
			if (((x >> 24) & 7) == 0)
				len = 128;
			rules[i] = (struct allow_rule){ .addr = random_addr_near(&base),
							.prefixlen = len,
							.ports = choices[c],
							.nports = choices[c][1].hi ? 2 : 1,
							.protos = protos };
		}
		list = BUILD_OK(rules, nrules);
		if (!list)
			return;
		for (i = 0; i < 4000; i++) {
			struct in6_addr q = random_addr_near(&base);
			uint16_t port = probe_ports[rng() % ARRAY_SIZE(probe_ports)];
			unsigned int proto = rng() & 1 ? PROTO_TCP : PROTO_UDP;
			bool want = brute_allows(rules, nrules, &q, port, proto);

			/* Half the queries reuse a rule's own address, to hit exact entries. */
			if (i % 2) {
				q = rules[rng() % nrules].addr;
				want = brute_allows(rules, nrules, &q, port, proto);
			}
			queries++;
			allowed += want;
			if (allowlist_allows(list, &q, port, proto) != want) {
				char buf[INET6_ADDRSTRLEN];

				if (mismatches++ < 5)
					printf("  round %zu: %s port %u proto %u: expected %d\n",
					       round, policy_format_addr(&q, buf, sizeof(buf)),
					       port, proto, want);
			}
		}
	}
	CHECK_EQ_INT(mismatches, 0);
	/* The test means something only if both answers occur often. */
	CHECK(allowed > queries / 10);
	CHECK(allowed < queries - queries / 10);
}

static void test_large_build(void)
{
	static const struct port_range sets[4][2] = {
		{ { 443, 443, 0 }, { 0, 0, 0 } },
		{ { 80, 80, 0 }, { 443, 443, 0 } },
		{ { 22, 22, 0 }, { 0, 0, 0 } },
		{ { 8000, 8100, 0 }, { 9000, 9000, 0 } },
	};
	const size_t n = 100000;
	_cleanup_free_ struct allow_rule *rules = calloc(n, sizeof(*rules));
	_cleanup_(allowlist_freep) struct allowlist *list = NULL;
	size_t i, mismatches = 0;
	double start, elapsed;

	CHECK(rules != NULL);
	if (!rules)
		return;
	/* Mostly random /32s and /128s, some prefixes of every length, some duplicates. */
	for (i = 0; i < n; i++) {
		uint64_t x = rng();
		const struct port_range *ports = sets[x % 4];
		struct in6_addr a = { 0 };
		unsigned int len;

		if (i % 3) {
			a.s6_addr[10] = a.s6_addr[11] = 0xff;
			memcpy(&a.s6_addr[12], &x, 4);
			a.s6_addr[12] &= 0x0f; /* 0.0.0.0/4-ish: denser, more nesting */
			len = (i % 50) ? 128 : 96 + (unsigned int)((x >> 40) % 33);
		} else {
			a.s6_addr[0] = 0x20;
			a.s6_addr[1] = 0x01;
			a.s6_addr[2] = 0x0d;
			a.s6_addr[3] = 0xb8;
			memcpy(&a.s6_addr[8], &x, 8);
			a.s6_addr[8] &= 0x03;
			len = (i % 40) ? 128 : 32 + (unsigned int)((x >> 40) % 97);
		}
		rules[i] = (struct allow_rule){ .addr = a,
						.prefixlen = len,
						.ports = ports,
						.nports = ports[1].hi ? 2 : 1,
						.protos = (x >> 50) & 1 ? PROTO_ANY : PROTO_TCP };
		/* Host bits beyond the prefix are the builder's to clear. */
	}
	start = now_s();
	list = BUILD_OK(rules, n);
	elapsed = now_s() - start;
	printf("  100,000 rules built in %.3f s\n", elapsed);
	if (!list)
		return;
	/* Generous: a quadratic build takes minutes; this one takes well under a second. */
	CHECK(elapsed < 20.0);
	CHECK(list->nexact + list->nprefixes <= n);
	CHECK(list->nexact > 90000);
	CHECK(list->nprefixes > 1000);
	CHECK(list->nsets < 64);
	for (i = 0; i < list->nsets; i++)
		CHECK(tail_is_zero(&list->sets[i]));
	for (i = 1; i < list->nexact; i++)
		CHECK(memcmp(list->exact[i - 1].key.addr, list->exact[i].key.addr, 16) < 0);

	/* Spot-check against the brute force decision (O(n) each, so only some). */
	for (i = 0; i < 300; i++) {
		struct in6_addr q = rules[rng() % n].addr;
		uint16_t port = (i % 3) ? 443 : 80;
		unsigned int proto = i % 2 ? PROTO_TCP : PROTO_UDP;

		if (i % 5 == 0)
			q.s6_addr[15] ^= 1;
		if (allowlist_allows(list, &q, port, proto) !=
		    brute_allows(rules, n, &q, port, proto))
			mismatches++;
	}
	CHECK_EQ_INT(mismatches, 0);
}

/* Distinct prefix lengths, longest first, with masks in network byte order. */
static void test_prefix_masks(void)
{
	struct allow_rule rules[3] = { 0 };
	struct prefix_mask masks[MAX_HASHED_PREFIX_LENGTHS];
	struct port_range all = { .lo = 0, .hi = 65535 };
	struct allowlist *list = NULL;
	char err[256];

	for (int i = 0; i < 3; i++) {
		rules[i].ports = &all;
		rules[i].nports = 1;
		rules[i].protos = PROTO_TCP;
	}
	CHECK_EQ_INT(policy_parse_cidr("10.0.0.0/8", &rules[0].addr, &rules[0].prefixlen), 0);
	CHECK_EQ_INT(policy_parse_cidr("10.1.0.0/16", &rules[1].addr, &rules[1].prefixlen), 0);
	CHECK_EQ_INT(policy_parse_cidr("2001:db8::/33", &rules[2].addr, &rules[2].prefixlen), 0);
	CHECK_EQ_INT(allowlist_build(rules, 3, &list, err, sizeof(err)), 0);
	if (!list)
		return;
	CHECK_EQ_INT(allowlist_prefix_masks(list, masks, MAX_HASHED_PREFIX_LENGTHS), 3);
	CHECK_EQ_INT(masks[0].prefixlen, 112);
	CHECK_EQ_INT(masks[0].mask[3], htonl(0xffff0000));
	CHECK_EQ_INT(masks[1].prefixlen, 104);
	CHECK_EQ_INT(masks[1].mask[2], htonl(0xffffffff));
	CHECK_EQ_INT(masks[1].mask[3], htonl(0xff000000));
	CHECK_EQ_INT(masks[2].prefixlen, 33);
	CHECK_EQ_INT(masks[2].mask[0], htonl(0xffffffff));
	CHECK_EQ_INT(masks[2].mask[1], htonl(0x80000000));
	CHECK_EQ_INT(masks[2].mask[2], 0);
	/* More lengths than room: the caller falls back to the trie. */
	CHECK_EQ_INT(allowlist_prefix_masks(list, masks, 2), -E2BIG);
	allowlist_free(list);
}

/* The programs' hashed lookup over expanded prefixes: exact first, then longest length first. */
static bool expanded_allows(const struct allowlist *list, const struct allow_prefix *prefixes,
			    size_t n, const struct prefix_mask *masks, int nmasks,
			    const struct in6_addr *addr, uint16_t port, unsigned int proto)
{
	struct allowlist exact_only = *list;

	exact_only.nprefixes = 0;
	if (allowlist_allows(&exact_only, addr, port, proto))
		return true;
	for (size_t i = 0; i < list->nexact; i++)
		if (memcmp(list->exact[i].key.addr, addr, 16) == 0)
			return false; /* an exact entry that does not allow it decides */
	for (int m = 0; m < nmasks; m++) {
		__u32 words[4], masked[4];

		memcpy(words, addr, sizeof(words));
		for (int w = 0; w < 4; w++)
			masked[w] = words[w] & masks[m].mask[w];
		for (size_t i = 0; i < n; i++)
			if (prefixes[i].key.prefixlen == masks[m].prefixlen &&
			    memcmp(prefixes[i].key.addr, masked, 16) == 0)
				return port_set_allows(&list->sets[prefixes[i].set], port, proto);
	}
	return false;
}

/*
 * Prefix expansion keeps every decision and cuts the lengths: random nested prefixes of
 * close lengths (IPv4 /26-/30 and a few /24, IPv6 /118-/126), with different ports, checked
 * against the brute-force answer at addresses in and around them.
 */
static void test_expand_prefixes(void)
{
	static const struct port_range choices[][2] = {
		{ { 80, 80, 0 }, { 443, 443, 0 } },
		{ { 22, 22, 0 }, { 0, 0, 0 } },
		{ { 1000, 2000, 0 }, { 0, 0, 0 } },
		{ { 0, 65535, 0 }, { 0, 0, 0 } },
	};
	static const char *const bases[] = { "10.20.30.0", "2001:db8::1:0" };
	static const uint16_t probe_ports[] = { 22, 80, 443, 1500, 3000 };
	struct allow_rule rules[300];
	size_t mismatches = 0, queries = 0, allowed = 0;

	for (size_t round = 0; round < 6; round++) {
		_cleanup_(allowlist_freep) struct allowlist *list = NULL;
		_cleanup_free_ struct allow_prefix *expanded = NULL;
		struct prefix_mask masks[MAX_HASHED_PREFIX_LENGTHS];
		struct in6_addr base = addr_of(bases[round % ARRAY_SIZE(bases)]);
		size_t nrules = 20 + round * 50, nexp = 0, budget = round == 5 ? 40 : 4096;
		int before, after;

		for (size_t i = 0; i < nrules; i++) {
			uint64_t x = rng();
			unsigned int c = (unsigned int)(x % ARRAY_SIZE(choices));
			unsigned int len = 122 + (unsigned int)((x >> 8) % 5);

			if (((x >> 16) & 7) == 0)
				len = 120;
			rules[i] =
				(struct allow_rule){ .addr = random_addr_near(&base),
						     .prefixlen = len,
						     .ports = choices[c],
						     .nports = choices[c][1].hi ? 2 : 1,
						     .protos = 1 + (unsigned int)((x >> 24) % 3) };
		}
		list = BUILD_OK(rules, nrules);
		if (!list)
			return;
		CHECK_EQ_INT(allowlist_expand_prefixes(list, budget, &expanded, &nexp), 0);
		before = allowlist_prefix_masks(list, masks, MAX_HASHED_PREFIX_LENGTHS);
		after = allowlist_masks_of(expanded, nexp, masks, MAX_HASHED_PREFIX_LENGTHS);
		CHECK(after > 0 && after <= before);
		CHECK(nexp <= (budget > list->nprefixes ? budget : list->nprefixes));
		/* With room, lengths at most EXPAND_MAX_BITS apart end up as one. */
		if (budget == 4096)
			CHECK_EQ_INT(after, 1);
		for (size_t i = 0; i < 3000; i++) {
			struct in6_addr q = random_addr_near(&base);
			uint16_t port = probe_ports[rng() % ARRAY_SIZE(probe_ports)];
			unsigned int proto = rng() & 1 ? PROTO_TCP : PROTO_UDP;
			bool want;

			if (i % 3 == 0)
				q = rules[rng() % nrules].addr;
			want = brute_allows(rules, nrules, &q, port, proto);
			queries++;
			allowed += want;
			if (expanded_allows(list, expanded, nexp, masks, after, &q, port, proto) !=
			    want)
				mismatches++;
		}
	}
	CHECK_EQ_INT(mismatches, 0);
	CHECK(allowed > queries / 10);
	CHECK(allowed < queries - queries / 10);
}

int main(void)
{
	RUN(test_empty);
	RUN(test_exact_and_prefix_split);
	RUN(test_host_bits_masked);
	RUN(test_covering_union);
	RUN(test_no_union_from_siblings);
	RUN(test_same_prefix_rules_merge);
	RUN(test_any_merging);
	RUN(test_dedup);
	RUN(test_protocols);
	RUN(test_all_ports_and_edges);
	RUN(test_port_set_allows);
	RUN(test_invalid_rules);
	RUN(test_limit_port_ranges);
	RUN(test_limit_port_sets);
	RUN(test_limit_entries);
	RUN(test_random_against_brute_force);
	RUN(test_large_build);
	RUN(test_prefix_masks);
	RUN(test_expand_prefixes);
	return test_failures != 0;
}
