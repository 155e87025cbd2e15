// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Unit tests for image.c: which layout a policy gets (inline, hash, trie, port sets, AF_UNIX,
 * listen ports), the maps' specs, and the C twin of the programs' decision checked against
 * the brute-force decision over the rules on random policies.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test.h"
#include "test_addr.h"
#include "policy/allowlist.h"
#include "policy/image.h"
#include "policy/policy.h"
#include "policy/rules.h"

/* xorshift64: deterministic, so a failure can be replayed (IMAGE_TEST_SEED picks another). */
static uint64_t rng_state = 0x2545f4914f6cdd1dull;

static uint64_t rng(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

/* What rules_compile hands over, with only the parts the image reads. */
struct test_policy {
	struct allowlist *list;
	struct rules rules;
	struct image *image;
};

static void test_policy_release(struct test_policy *p)
{
	image_free(p->image);
	allowlist_free(p->list);
	memset(p, 0, sizeof(*p));
}

static int policy_build_at(int line, struct test_policy *p, const struct allow_rule *rules,
			   size_t n, bool dns_proxy)
{
	char err[256] = "";
	int r;

	p->image = NULL;
	p->list = NULL;
	r = allowlist_build(rules, n, &p->list, err, sizeof(err));
	if (r == 0) {
		p->rules.list = p->list;
		r = image_build(&p->rules, dns_proxy, &p->image);
	}
	if (r < 0) {
		printf("  %s:%d: build = %d (%s)\n", __FILE__, line, r, err);
		test_current_failed = 1;
	}
	return r;
}
#define POLICY_BUILD(p, rules, n, dns) policy_build_at(__LINE__, p, rules, n, dns)

static bool decide(const struct image *image, const char *addr, uint16_t port, unsigned int proto)
{
	struct in6_addr a = addr_of(addr);

	return image_decide(image, &a, port, proto);
}

static bool prefix_contains(const struct in6_addr *prefix, unsigned int prefixlen,
			    const struct in6_addr *addr)
{
	unsigned int full = prefixlen / 8, bits = prefixlen % 8;

	if (memcmp(prefix->s6_addr, addr->s6_addr, full) != 0)
		return false;
	if (!bits)
		return true;
	return ((prefix->s6_addr[full] ^ addr->s6_addr[full]) & (0xff << (8 - bits))) == 0;
}

/* The decision without any cleverness: some rule contains the address, the port and protocol. */
static bool brute_allows(const struct allow_rule *rules, size_t n, const struct in6_addr *addr,
			 uint16_t port, unsigned int proto)
{
	for (size_t i = 0; i < n; i++) {
		const struct allow_rule *r = &rules[i];

		if (!(r->protos & proto) || !prefix_contains(&r->addr, r->prefixlen, addr))
			continue;
		for (unsigned int k = 0; k < r->nports; k++)
			if (r->ports[k].lo <= port && port <= r->ports[k].hi)
				return true;
	}
	return false;
}

/* Names at most 15 characters, distinct as the kernel keeps them: the loader finds maps so. */
static void test_spec_table(void)
{
	for (int m = 0; m < IMAGE_NMAPS; m++) {
		const struct image_map_spec *spec = &image_map_specs[m];

		CHECK(spec->name && strlen(spec->name) <= 15);
		CHECK(spec->outer_name != NULL);
		for (int o = 0; o < m; o++) {
			CHECK(strncmp(spec->name, image_map_specs[o].name, 15) != 0);
			CHECK(strncmp(spec->outer_name, image_map_specs[o].outer_name, 15) != 0);
		}
		if (spec->type == BPF_MAP_TYPE_ARRAY)
			CHECK_EQ_INT(spec->key_size, sizeof(__u32));
		if (spec->type == BPF_MAP_TYPE_RINGBUF)
			CHECK(spec->key_size == 0 && spec->value_size == 0 && spec->fixed_entries);
	}
	/* The sizes the programs' lookups use (allowlist.bpf.h, dns.bpf.h, unix.bpf.c). */
	CHECK_EQ_INT(image_map_specs[IMAGE_MAP_ALLOW_EXACT].key_size, sizeof(struct addr_key));
	CHECK_EQ_INT(image_map_specs[IMAGE_MAP_ALLOW_PREFIX].key_size, sizeof(struct prefix_key));
	CHECK_EQ_INT(image_map_specs[IMAGE_MAP_ALLOW_PREFIX].type, BPF_MAP_TYPE_LPM_TRIE);
	CHECK_EQ_INT(image_map_specs[IMAGE_MAP_ALLOW_PREFIX_HASH].key_size,
		     sizeof(struct prefix_key));
	CHECK_EQ_INT(image_map_specs[IMAGE_MAP_PORT_SETS].value_size, sizeof(struct port_set));
	CHECK_EQ_INT(image_map_specs[IMAGE_MAP_DNS_ALLOW].fixed_entries, MAX_DNS_ALLOW_ENTRIES);
	CHECK_EQ_INT(image_map_specs[IMAGE_MAP_DNS_PORT_SETS].fixed_entries, MAX_DNS_PORT_SETS);
	CHECK_EQ_INT(image_map_specs[IMAGE_MAP_UNIX_ALLOW].key_size, sizeof(struct unix_path_key));
	CHECK_EQ_INT(image_map_specs[IMAGE_MAP_UNIX_ALLOW].fixed_entries, MAX_UNIX_PATHS);
	CHECK_EQ_INT(image_map_specs[IMAGE_MAP_EVENTS].fixed_entries, RINGBUF_SIZE_BYTES);
}

/* Hash and trie keys sorted and distinct, n within the room, every value's set there. */
static void check_image_at(int line, const struct image *image, const struct allowlist *list)
{
	const struct sandbox_cfg *cfg = &image->cfg;
	int before = test_current_failed;

	test_current_failed = 0;
	for (int m = 0; m < IMAGE_NMAPS; m++) {
		const struct image_map_spec *spec = &image_map_specs[m];
		const struct image_entries *e = &image->maps[m];

		if (!e->present) {
			CHECK_EQ_INT(e->n, 0);
			continue;
		}
		CHECK(e->n <= e->max_entries);
		if (spec->fixed_entries)
			CHECK_EQ_INT(e->max_entries, spec->fixed_entries);
		for (size_t i = 1; i < e->n; i++)
			if (spec->type == BPF_MAP_TYPE_HASH || spec->type == BPF_MAP_TYPE_LPM_TRIE)
				CHECK(memcmp((char *)e->keys + (i - 1) * spec->key_size,
					     (char *)e->keys + i * spec->key_size,
					     spec->key_size) < 0);
		if (spec->type == BPF_MAP_TYPE_ARRAY)
			for (size_t i = 0; i < e->n; i++)
				CHECK_EQ_INT(((__u32 *)e->keys)[i], i);
		if (spec->value_size == sizeof(struct allow_value) &&
		    spec->type != BPF_MAP_TYPE_ARRAY)
			for (size_t i = 0; i < e->n; i++) {
				const struct allow_value *v = &((struct allow_value *)e->values)[i];

				CHECK(v->set < list->nsets);
				if (v->set < list->nsets && list->sets[v->set].nranges == 1)
					CHECK(memcmp(&v->range, &list->sets[v->set].ranges[0],
						     sizeof(v->range)) == 0);
				else
					CHECK_EQ_INT(v->range.protos, 0);
			}
		if (m == IMAGE_MAP_ALLOW_PREFIX || m == IMAGE_MAP_ALLOW_PREFIX_HASH)
			for (size_t i = 0; i < e->n; i++) {
				const struct prefix_key *k = &((struct prefix_key *)e->keys)[i];
				struct in6_addr masked;

				memcpy(&masked, k->addr, sizeof(masked));
				CHECK(k->prefixlen < 128);
				CHECK(prefix_contains(&masked, k->prefixlen, &masked));
				/* Host bits zero: the hash is looked up with a masked address. */
				for (unsigned int b = k->prefixlen; b < 128; b++)
					CHECK(!(k->addr[b / 8] & (0x80 >> (b % 8))));
			}
	}
	/* A map the flags name is there; the programs never look at one they do not. */
	CHECK(!(cfg->flags & CFG_HAS_EXACT) || cfg->ninline_exact ||
	      image->maps[IMAGE_MAP_ALLOW_EXACT].present);
	CHECK(!(cfg->flags & CFG_HAS_PREFIXES) || cfg->ninline_prefixes ||
	      image->maps[cfg->nprefix_masks ? IMAGE_MAP_ALLOW_PREFIX_HASH : IMAGE_MAP_ALLOW_PREFIX]
		      .present);
	CHECK(!(cfg->flags & CFG_HAS_UNIX) || image->maps[IMAGE_MAP_UNIX_ALLOW].present);
	CHECK(!(cfg->flags & CFG_DNS_PROXY)); /* the proxy's, once it listens (dnsbpf.c) */
	CHECK(cfg->slot == 0 && cfg->cgroup_id == 0);
	for (__u32 i = 1; i < cfg->nprefix_masks; i++)
		CHECK(cfg->prefix_masks[i - 1].prefixlen > cfg->prefix_masks[i].prefixlen);
	if (test_current_failed)
		printf("  %s:%d: the image above is malformed\n", __FILE__, line);
	test_current_failed |= before;
}
#define CHECK_IMAGE(image, list) check_image_at(__LINE__, image, list)

static const struct port_range PORT_443[] = { { 443, 443, PROTO_TCP } };
static const struct port_range PORTS_WEB[] = { { 80, 80, PROTO_TCP }, { 443, 443, PROTO_TCP } };

static void test_empty_policy(void)
{
	struct test_policy p = { 0 };

	if (POLICY_BUILD(&p, NULL, 0, false) < 0)
		return;
	CHECK_IMAGE(p.image, p.list);
	CHECK_EQ_INT(p.image->cfg.flags, 0);
	/* Every sandbox has its ring buffer and a port-set array. */
	CHECK(p.image->maps[IMAGE_MAP_EVENTS].present);
	CHECK(p.image->maps[IMAGE_MAP_PORT_SETS].present);
	CHECK_EQ_INT(p.image->maps[IMAGE_MAP_PORT_SETS].max_entries, 1);
	for (int m = IMAGE_MAP_ALLOW_EXACT; m < IMAGE_NMAPS; m++)
		CHECK(m == IMAGE_MAP_PORT_SETS || !p.image->maps[m].present);
	CHECK(!decide(p.image, "192.0.2.1", 443, PROTO_TCP));
	CHECK(!decide(p.image, "::", 0, PROTO_UDP));
	test_policy_release(&p);
}

static void test_inline_exact(void)
{
	struct allow_rule rules[] = {
		rule_of("192.0.2.1", PORT_443, 1, PROTO_TCP),
		rule_of("192.0.2.2", PORTS_WEB, 2, PROTO_TCP),
		rule_of("2001:db8::1", PORT_443, 1, PROTO_TCP),
		rule_of("2001:db8::2", PORT_443, 1, PROTO_ANY),
	};
	struct test_policy p = { 0 };

	if (POLICY_BUILD(&p, rules, ARRAY_SIZE(rules), false) < 0)
		return;
	CHECK_IMAGE(p.image, p.list);
	CHECK_EQ_INT(p.image->cfg.flags, CFG_HAS_EXACT);
	CHECK_EQ_INT(p.image->cfg.ninline_exact, MAX_INLINE_EXACT);
	CHECK(!p.image->maps[IMAGE_MAP_ALLOW_EXACT].present);
	CHECK(decide(p.image, "192.0.2.1", 443, PROTO_TCP));
	CHECK(!decide(p.image, "192.0.2.1", 443, PROTO_UDP));
	CHECK(!decide(p.image, "192.0.2.1", 80, PROTO_TCP));
	/* Two ranges: the value sends the programs to the port set. */
	CHECK(decide(p.image, "192.0.2.2", 80, PROTO_TCP));
	CHECK(decide(p.image, "192.0.2.2", 443, PROTO_TCP));
	CHECK(!decide(p.image, "192.0.2.2", 81, PROTO_TCP));
	CHECK(decide(p.image, "::ffff:192.0.2.2", 80, PROTO_TCP));
	CHECK(decide(p.image, "2001:db8::2", 443, PROTO_UDP));
	CHECK(!decide(p.image, "2001:db8::3", 443, PROTO_TCP));
	test_policy_release(&p);
}

static void test_exact_map(void)
{
	struct allow_rule rules[MAX_INLINE_EXACT + 1];
	struct test_policy p = { 0 };
	char text[64];

	for (size_t i = 0; i < ARRAY_SIZE(rules); i++) {
		/* Written out of order: the map's keys come sorted all the same. */
		snprintf(text, sizeof(text), "198.51.100.%zu", 50 - i);
		rules[i] = rule_of(text, PORT_443, 1, PROTO_TCP);
	}
	if (POLICY_BUILD(&p, rules, ARRAY_SIZE(rules), false) < 0)
		return;
	CHECK_IMAGE(p.image, p.list);
	CHECK_EQ_INT(p.image->cfg.ninline_exact, 0);
	CHECK_EQ_INT(p.image->cfg.flags, CFG_HAS_EXACT);
	CHECK(p.image->maps[IMAGE_MAP_ALLOW_EXACT].present);
	CHECK_EQ_INT(p.image->maps[IMAGE_MAP_ALLOW_EXACT].n, ARRAY_SIZE(rules));
	CHECK_EQ_INT(p.image->maps[IMAGE_MAP_ALLOW_EXACT].max_entries, IMAGE_MIN_HASH_ENTRIES);
	CHECK(decide(p.image, "198.51.100.46", 443, PROTO_TCP));
	CHECK(!decide(p.image, "198.51.100.45", 443, PROTO_TCP));
	test_policy_release(&p);
}

static void test_inline_prefixes(void)
{
	struct allow_rule rules[] = {
		rule_of("10.0.0.0/8", PORT_443, 1, PROTO_TCP),
		rule_of("10.1.0.0/16", PORTS_WEB, 2, PROTO_TCP),
		rule_of("2001:db8::/32", PORT_443, 1, PROTO_TCP),
	};
	struct test_policy p = { 0 };
	const struct sandbox_cfg *cfg;

	if (POLICY_BUILD(&p, rules, ARRAY_SIZE(rules), false) < 0)
		return;
	cfg = &p.image->cfg;
	CHECK_IMAGE(p.image, p.list);
	CHECK_EQ_INT(cfg->flags, CFG_HAS_PREFIXES);
	CHECK_EQ_INT(cfg->ninline_prefixes, 3);
	CHECK_EQ_INT(cfg->nprefix_masks, 0);
	/* Longest first (/16 is 112 bits in the mapped form), so the first match is the longest. */
	CHECK_EQ_INT(cfg->inline_prefixes[0].mask[3], htonl(0xffff0000));
	CHECK_EQ_INT(cfg->inline_prefixes[1].mask[3], htonl(0xff000000));
	CHECK_EQ_INT(cfg->inline_prefixes[2].mask[0], htonl(0xffffffff));
	CHECK_EQ_INT(cfg->inline_prefixes[2].mask[1], 0);
	CHECK(decide(p.image, "10.1.2.3", 80, PROTO_TCP));
	CHECK(decide(p.image, "10.1.2.3", 443, PROTO_TCP));
	CHECK(!decide(p.image, "10.2.2.3", 80, PROTO_TCP));
	CHECK(decide(p.image, "2001:db8:ffff::1", 443, PROTO_TCP));
	CHECK(!decide(p.image, "2001:db9::1", 443, PROTO_TCP));
	test_policy_release(&p);
}

/* A /24 and /26s: expanded into /26s, one length, one hash lookup. */
static void test_prefix_hash_expanded(void)
{
	struct allow_rule rules[] = {
		rule_of("10.0.0.0/24", PORT_443, 1, PROTO_TCP),
		rule_of("10.0.1.0/26", PORTS_WEB, 2, PROTO_TCP),
		rule_of("10.0.1.64/26", PORT_443, 1, PROTO_TCP),
		rule_of("10.0.2.0/26", PORT_443, 1, PROTO_UDP),
		rule_of("10.0.3.0/26", PORT_443, 1, PROTO_TCP),
	};
	struct test_policy p = { 0 };
	const struct sandbox_cfg *cfg;

	if (POLICY_BUILD(&p, rules, ARRAY_SIZE(rules), false) < 0)
		return;
	cfg = &p.image->cfg;
	CHECK_IMAGE(p.image, p.list);
	CHECK_EQ_INT(cfg->ninline_prefixes, 0);
	CHECK_EQ_INT(cfg->nprefix_masks, 1);
	CHECK_EQ_INT(cfg->prefix_masks[0].prefixlen, 96 + 26);
	CHECK(p.image->maps[IMAGE_MAP_ALLOW_PREFIX_HASH].present);
	CHECK(!p.image->maps[IMAGE_MAP_ALLOW_PREFIX].present);
	CHECK_EQ_INT(p.image->maps[IMAGE_MAP_ALLOW_PREFIX_HASH].n, 4 + 4);
	CHECK(decide(p.image, "10.0.0.255", 443, PROTO_TCP));
	CHECK(decide(p.image, "10.0.1.63", 80, PROTO_TCP));
	CHECK(!decide(p.image, "10.0.1.64", 80, PROTO_TCP));
	CHECK(decide(p.image, "10.0.2.1", 443, PROTO_UDP));
	CHECK(!decide(p.image, "10.0.2.64", 443, PROTO_UDP));
	test_policy_release(&p);
}

/* More than MAX_HASHED_PREFIX_LENGTHS lengths too far apart to merge: the trie. */
static void test_prefix_trie(void)
{
	struct allow_rule rules[12];
	struct test_policy p = { 0 };
	char text[64];

	for (size_t i = 0; i < ARRAY_SIZE(rules); i++) {
		snprintf(text, sizeof(text), "2001:db8:%zx::/%zu", i + 1, 48 + 6 * i);
		rules[i] = rule_of(text, PORT_443, 1, PROTO_TCP);
	}
	if (POLICY_BUILD(&p, rules, ARRAY_SIZE(rules), false) < 0)
		return;
	CHECK_IMAGE(p.image, p.list);
	CHECK_EQ_INT(p.image->cfg.nprefix_masks, 0);
	CHECK_EQ_INT(p.image->cfg.ninline_prefixes, 0);
	CHECK(p.image->maps[IMAGE_MAP_ALLOW_PREFIX].present);
	CHECK(!p.image->maps[IMAGE_MAP_ALLOW_PREFIX_HASH].present);
	/* The policy's own prefixes, not expanded ones. */
	CHECK_EQ_INT(p.image->maps[IMAGE_MAP_ALLOW_PREFIX].n, ARRAY_SIZE(rules));
	CHECK(decide(p.image, "2001:db8:1::5", 443, PROTO_TCP));
	CHECK(!decide(p.image, "2001:db8:d::5", 443, PROTO_TCP));
	CHECK(!decide(p.image, "2001:db8:1::5", 80, PROTO_TCP));
	test_policy_release(&p);
}

static void test_dns_unix_listen(void)
{
	struct allow_rule rules[] = { rule_of("192.0.2.1", PORT_443, 1, PROTO_TCP) };
	struct unix_allow unix_allows[3] = { 0 };
	struct test_policy p = { 0 };
	struct unix_path_key key = { 0 };
	char err[128];

	strcpy(unix_allows[0].key.path, "/run/x.sock");
	unix_allows[0].flags = UNIX_ALLOW_CONNECT;
	memcpy(unix_allows[1].key.path, "\0agent", 6);
	unix_allows[1].flags = UNIX_ALLOW_BIND;
	strcpy(unix_allows[2].key.path, "/run/both.sock");
	unix_allows[2].flags = UNIX_ALLOW_CONNECT | UNIX_ALLOW_BIND;
	p.rules.unix_allows = unix_allows;
	p.rules.nunix = ARRAY_SIZE(unix_allows);
	p.rules.listen.nranges = 1;
	p.rules.listen.ranges[0] = (struct port_range){ 8000, 8080, PROTO_TCP };
	if (allowlist_build(rules, ARRAY_SIZE(rules), &p.list, err, sizeof(err)) < 0) {
		CHECK(!"allowlist_build");
		return;
	}
	p.rules.list = p.list;
	CHECK_EQ_INT(image_build(&p.rules, true, &p.image), 0);
	if (!p.image) {
		test_policy_release(&p);
		return;
	}
	CHECK_IMAGE(p.image, p.list);
	CHECK_EQ_INT(p.image->cfg.flags, CFG_HAS_EXACT | CFG_HAS_UNIX);
	CHECK(p.image->maps[IMAGE_MAP_DNS_ALLOW].present);
	CHECK(p.image->maps[IMAGE_MAP_DNS_PORT_SETS].present);
	CHECK_EQ_INT(p.image->maps[IMAGE_MAP_DNS_ALLOW].n, 0);
	CHECK_EQ_INT(p.image->maps[IMAGE_MAP_UNIX_ALLOW].n, 3);
	strcpy(key.path, "/run/x.sock");
	CHECK(image_decide_unix(p.image, &key));
	strcpy(key.path, "/run/both.sock");
	CHECK(image_decide_unix(p.image, &key));
	/* A "listen" name may be bound, not connected to. */
	memset(&key, 0, sizeof(key));
	memcpy(key.path, "\0agent", 6);
	CHECK(!image_decide_unix(p.image, &key));
	memset(&key, 0, sizeof(key));
	strcpy(key.path, "/run/x.sock2");
	CHECK(!image_decide_unix(p.image, &key));
	CHECK(image_decide_listen(p.image, 8000, PROTO_TCP));
	CHECK(image_decide_listen(p.image, 8080, PROTO_TCP));
	CHECK(!image_decide_listen(p.image, 8081, PROTO_TCP));
	CHECK(!image_decide_listen(p.image, 8000, PROTO_UDP));
	test_policy_release(&p);
	/* Without the proxy, no DNS maps. */
	if (POLICY_BUILD(&p, rules, ARRAY_SIZE(rules), false) < 0)
		return;
	CHECK(!p.image->maps[IMAGE_MAP_DNS_ALLOW].present);
	CHECK(!p.image->maps[IMAGE_MAP_DNS_PORT_SETS].present);
	CHECK(!p.image->maps[IMAGE_MAP_UNIX_ALLOW].present);
	CHECK(!image_decide_listen(p.image, 8000, PROTO_TCP));
	test_policy_release(&p);
}

/* How a random policy's prefixes are drawn: each shape aims at one layout. */
enum shape {
	SHAPE_FEW_EXACT,     /* inline exact addresses */
	SHAPE_MANY_EXACT,    /* the exact hash */
	SHAPE_FEW_PREFIXES,  /* inline prefixes */
	SHAPE_CLOSE_LENGTHS, /* the prefix hash, after expansion */
	SHAPE_SPREAD,	     /* lengths everywhere: the trie */
	SHAPE_MIXED,
	NSHAPES,
};

static const struct port_range PORT_CHOICES[][3] = {
	{ { 80, 80, 0 }, { 443, 443, 0 } },
	{ { 22, 22, 0 } },
	{ { 1000, 2000, 0 }, { 1500, 3000, 0 } },
	{ { 53, 53, 0 }, { 54, 60, 0 }, { 8080, 8080, 0 } },
	{ { 0, 65535, 0 } },
	{ { 0, 0, 0 } },
	{ { 65535, 65535, 0 } },
	{ { 443, 443, 0 } },
};
static const unsigned int PORT_CHOICE_COUNTS[] = { 2, 1, 2, 3, 1, 1, 1, 1 };

static struct in6_addr random_near(const struct in6_addr *base, bool v4)
{
	struct in6_addr a = *base;
	uint64_t x = rng();

	/* The top bits mostly kept, so that queries land inside and around the rules. */
	a.s6_addr[15] ^= (uint8_t)x;
	if (x & 0x100)
		a.s6_addr[14] ^= (uint8_t)(x >> 16);
	if ((x & 0x600) == 0x600)
		a.s6_addr[13] ^= (uint8_t)(x >> 24);
	if ((x & 0x7000) == 0x7000)
		a.s6_addr[v4 ? 12 : 5] ^= (uint8_t)(x >> 32);
	return a;
}

static unsigned int random_len(enum shape shape, bool v4, uint64_t x)
{
	switch (shape) {
	case SHAPE_FEW_EXACT:
	case SHAPE_MANY_EXACT:
		return 128;
	case SHAPE_CLOSE_LENGTHS:
		/* Within EXPAND_MAX_BITS of one another: /24-/28 or /116-/120. */
		return (v4 ? 120 : 116) + (unsigned int)(x % 5);
	default:
		/* IPv4 /8-/32, IPv6 /16-/128: more lengths than expansion can fold. */
		return v4 ? 96 + 8 + (unsigned int)(x % 25) : 16 + (unsigned int)(x % 113);
	}
}

/* The first and last address of a prefix, and one either side of them. */
static void prefix_edges(const struct allow_rule *r, struct in6_addr out[4])
{
	struct in6_addr first = r->addr, last;
	unsigned int full = r->prefixlen / 8, bits = r->prefixlen % 8;

	if (r->prefixlen < 128) {
		if (bits)
			first.s6_addr[full] &= (uint8_t)(0xff << (8 - bits));
		memset(&first.s6_addr[full + (bits ? 1 : 0)], 0, 16 - full - (bits ? 1 : 0));
	}
	last = first;
	if (r->prefixlen < 128) {
		if (bits)
			last.s6_addr[full] |= (uint8_t)(0xff >> bits);
		memset(&last.s6_addr[full + (bits ? 1 : 0)], 0xff, 16 - full - (bits ? 1 : 0));
	}
	out[0] = first;
	out[1] = last;
	out[2] = first;
	for (int i = 15; i >= 0 && out[2].s6_addr[i]-- == 0; i--)
		;
	out[3] = last;
	for (int i = 15; i >= 0 && ++out[3].s6_addr[i] == 0; i--)
		;
}

static uint16_t random_port(const struct allow_rule *rules, size_t n)
{
	static const uint16_t fixed[] = { 0, 1, 22, 53, 79, 80, 81, 443, 999, 3001, 65534, 65535 };
	uint64_t x = rng();
	const struct allow_rule *r = &rules[(x >> 8) % (n ? n : 1)];
	const struct port_range *range;

	if (!n || !r->nports || (x & 3) == 0)
		return fixed[(x >> 32) % ARRAY_SIZE(fixed)];
	/* A rule's own range, at an edge or one past it. */
	range = &r->ports[(x >> 16) % r->nports];
	switch ((x >> 24) % 4) {
	case 0:
		return range->lo;
	case 1:
		return range->hi;
	case 2:
		return (uint16_t)(range->lo - 1);
	default:
		return (uint16_t)(range->hi + 1);
	}
}

struct layouts_seen {
	unsigned int inline_exact, exact_map, inline_prefixes, prefix_hash, trie;
};

static void note_layout(const struct image *image, struct layouts_seen *seen)
{
	const struct sandbox_cfg *cfg = &image->cfg;

	seen->inline_exact += cfg->ninline_exact > 0;
	seen->exact_map += image->maps[IMAGE_MAP_ALLOW_EXACT].present;
	seen->inline_prefixes += cfg->ninline_prefixes > 0;
	seen->prefix_hash += cfg->nprefix_masks > 0;
	seen->trie += image->maps[IMAGE_MAP_ALLOW_PREFIX].present;
}

/* Draws a random policy of one shape into rules; returns how many. */
static size_t random_policy(enum shape shape, bool v4, const struct in6_addr *base,
			    struct allow_rule *rules, size_t max)
{
	size_t n;

	switch (shape) {
	case SHAPE_FEW_EXACT:
	case SHAPE_FEW_PREFIXES:
		n = 1 + rng() % 4;
		break;
	case SHAPE_MANY_EXACT:
		n = 5 + rng() % (max - 5);
		break;
	default:
		n = 5 + rng() % (max - 5);
		break;
	}
	for (size_t i = 0; i < n; i++) {
		uint64_t x = rng();
		unsigned int c = (unsigned int)(x % ARRAY_SIZE(PORT_CHOICES));
		enum shape s = shape == SHAPE_MIXED ? (enum shape)((x >> 40) % SHAPE_MIXED) : shape;

		if (shape == SHAPE_FEW_PREFIXES)
			s = SHAPE_SPREAD;
		rules[i] = (struct allow_rule){ .addr = random_near(base, v4),
						.prefixlen = random_len(s, v4, x >> 8),
						.ports = PORT_CHOICES[c],
						.nports = PORT_CHOICE_COUNTS[c],
						.protos = 1 + (unsigned int)((x >> 20) % 3) };
		/* Now and then a rule that allows nothing: no protocol, or no port. */
		if (((x >> 48) & 31) == 0)
			rules[i].protos = 0;
		if (((x >> 48) & 31) == 1)
			rules[i].nports = 0;
	}
	return n;
}

/* One query: an address (random, a rule's own, or a prefix's edge) and a port. */
static void random_query(const struct allow_rule *rules, size_t n, const struct in6_addr *base,
			 bool v4, struct in6_addr *ret_addr, uint16_t *ret_port,
			 unsigned int *ret_proto)
{
	uint64_t x = rng();
	struct in6_addr edges[4];

	*ret_addr = random_near(base, v4);
	if (n && (x & 3) == 1) {
		*ret_addr = rules[(x >> 8) % n].addr;
	} else if (n && (x & 3) == 2) {
		prefix_edges(&rules[(x >> 8) % n], edges);
		*ret_addr = edges[(x >> 32) % 4];
	}
	*ret_port = random_port(rules, n);
	*ret_proto = (x >> 40) & 1 ? PROTO_TCP : PROTO_UDP;
}

static size_t compare_with_brute(const struct image *image, const struct allow_rule *rules,
				 size_t n, const struct in6_addr *base, bool v4, size_t nqueries,
				 bool report, size_t *allowed)
{
	size_t mismatches = 0;

	for (size_t q = 0; q < nqueries; q++) {
		struct in6_addr addr;
		uint16_t port;
		unsigned int proto;
		bool want, got;

		random_query(rules, n, base, v4, &addr, &port, &proto);
		want = brute_allows(rules, n, &addr, port, proto);
		got = image_decide(image, &addr, port, proto);
		*allowed += want;
		if (got != want && mismatches++ < 5 && report) {
			char buf[INET6_ADDRSTRLEN];

			printf("  %s port %u proto %u: image says %d, the rules %d\n",
			       policy_format_addr(&addr, buf, sizeof(buf)), port, proto, got, want);
		}
	}
	return mismatches;
}

/*
 * Random policies of every shape, IPv4 and IPv6, each laid out by image_build and judged by
 * image_decide at random addresses, the rules' own and their prefixes' edges: every answer
 * must be the brute-force answer over the rules, and every layout must have been tried.
 */
static void test_random_policies(void)
{
	static const char *const bases[] = { "10.20.30.40", "2001:db8:aa:bb::1234",
					     "::ffff:0.0.0.0", "ffff:ffff:ffff:ffff::" };
	enum { ROUNDS = 120, QUERIES = 1500, MAX_RULES = 160 };
	struct allow_rule rules[MAX_RULES];
	struct layouts_seen seen = { 0 };
	size_t mismatches = 0, queries = 0, allowed = 0;

	for (size_t round = 0; round < ROUNDS; round++) {
		enum shape shape = (enum shape)(round % NSHAPES);
		const char *base_text = bases[(round / NSHAPES) % ARRAY_SIZE(bases)];
		bool v4 = strchr(base_text, '.') != NULL;
		struct in6_addr base = addr_of(base_text);
		struct test_policy p = { 0 };
		size_t n = random_policy(shape, v4, &base, rules, MAX_RULES), bad;

		if (POLICY_BUILD(&p, rules, n, round & 1) < 0)
			return;
		CHECK_IMAGE(p.image, p.list);
		note_layout(p.image, &seen);
		bad = compare_with_brute(p.image, rules, n, &base, v4, QUERIES, true, &allowed);
		if (bad)
			printf("  round %zu (shape %d, %zu rules, base %s): %zu mismatches\n",
			       round, shape, n, base_text, bad);
		mismatches += bad;
		queries += QUERIES;
		test_policy_release(&p);
	}
	CHECK_EQ_INT(mismatches, 0);
	/* Both answers often, and every layout the programs read. */
	CHECK(allowed > queries / 10);
	CHECK(allowed < queries - queries / 10);
	CHECK(seen.inline_exact > 0);
	CHECK(seen.exact_map > 0);
	CHECK(seen.inline_prefixes > 0);
	CHECK(seen.prefix_hash > 0);
	CHECK(seen.trie > 0);
	printf("  %zu queries over %d policies: %zu allowed; layouts: %u inline exact, %u exact "
	       "hash, %u inline prefixes, %u prefix hash, %u trie\n",
	       queries, ROUNDS, allowed, seen.inline_exact, seen.exact_map, seen.inline_prefixes,
	       seen.prefix_hash, seen.trie);
}

/*
 * The comparison can fail: a policy of one layout whose image loses that layout (the flags
 * still naming it) disagrees with the rules wherever they allow something.
 */
static void test_broken_image_is_caught(void)
{
	static const char *const bases[] = { "10.20.30.40", "2001:db8:aa:bb::1234" };
	struct allow_rule rules[120];
	unsigned int caught = 0, tried = 0;

	for (size_t round = 0; round < 4 * SHAPE_MIXED; round++) {
		enum shape shape = (enum shape)(round % SHAPE_MIXED);
		bool v4 = round % 2;
		struct in6_addr base = addr_of(bases[!v4]);
		struct test_policy p = { 0 };
		size_t n = random_policy(shape, v4, &base, rules, ARRAY_SIZE(rules)), allowed = 0;
		struct sandbox_cfg *cfg;
		size_t bad;

		if (POLICY_BUILD(&p, rules, n, false) < 0)
			return;
		cfg = &p.image->cfg;
		cfg->ninline_exact = 0;
		cfg->ninline_prefixes = 0;
		cfg->nprefix_masks = 0;
		for (int m = IMAGE_MAP_ALLOW_EXACT; m <= IMAGE_MAP_ALLOW_PREFIX_HASH; m++)
			p.image->maps[m].n = 0;
		bad = compare_with_brute(p.image, rules, n, &base, v4, 500, false, &allowed);
		/* Only a policy that allows something can lose it. */
		if (allowed) {
			tried++;
			caught += bad == allowed;
		}
		test_policy_release(&p);
	}
	CHECK(tried >= 2 * SHAPE_MIXED);
	CHECK_EQ_INT(caught, tried);
}

/* AF_UNIX: random names with random rights, judged as unix.bpf.c judges them. */
static void test_random_unix(void)
{
	static const char *const names[] = { "/run/a.sock", "/run/b.sock",   "/var/run/docker.sock",
					     "@agent",	    "@agent2",	     "@",
					     "/",	    "/run/a.sock/x", "@/run/a.sock",
					     "/tmp/x" };
	size_t mismatches = 0, allowed = 0, queries = 0;

	for (size_t round = 0; round < 50; round++) {
		struct unix_allow allows[ARRAY_SIZE(names)] = { 0 };
		struct test_policy p = { 0 };
		size_t n = 0;

		for (size_t i = 0; i < ARRAY_SIZE(names); i++) {
			uint64_t x = rng();

			if (x & 1)
				continue;
			allows[n].text = names[i];
			if (names[i][0] == '@')
				strcpy(allows[n].key.path + 1, names[i] + 1);
			else
				strcpy(allows[n].key.path, names[i]);
			allows[n].flags = 1 + (uint8_t)((x >> 8) % 3);
			n++;
		}
		p.rules.unix_allows = allows;
		p.rules.nunix = n;
		if (POLICY_BUILD(&p, NULL, 0, false) < 0)
			return;
		CHECK_IMAGE(p.image, p.list);
		for (size_t q = 0; q < ARRAY_SIZE(names); q++) {
			struct unix_path_key key = { 0 };
			bool want = false;

			if (names[q][0] == '@')
				strcpy(key.path + 1, names[q] + 1);
			else
				strcpy(key.path, names[q]);
			for (size_t i = 0; i < n; i++)
				if (memcmp(&allows[i].key, &key, sizeof(key)) == 0)
					want = allows[i].flags & UNIX_ALLOW_CONNECT;
			queries++;
			allowed += want;
			mismatches += image_decide_unix(p.image, &key) != want;
		}
		test_policy_release(&p);
	}
	CHECK_EQ_INT(mismatches, 0);
	CHECK(allowed > queries / 10 && allowed < queries - queries / 10);
}

/* The "listen" ports, judged as inbound.bpf.c judges them. */
static void test_random_listen(void)
{
	size_t mismatches = 0, allowed = 0, queries = 0;

	for (size_t round = 0; round < 50; round++) {
		struct test_policy p = { 0 };
		struct port_set *listen = &p.rules.listen;

		listen->nranges = (__u32)(rng() % 5);
		for (__u32 i = 0; i < listen->nranges; i++) {
			uint16_t lo = (uint16_t)(rng() % 2000), len = (uint16_t)(rng() % 50);

			listen->ranges[i] = (struct port_range){ lo, (uint16_t)(lo + len),
								 1 + (__u32)(rng() % 3) };
		}
		if (POLICY_BUILD(&p, NULL, 0, false) < 0)
			return;
		for (size_t q = 0; q < 400; q++) {
			uint16_t port = (uint16_t)(rng() % 2100);
			unsigned int proto = rng() & 1 ? PROTO_TCP : PROTO_UDP;
			bool want = false;

			for (__u32 i = 0; i < listen->nranges; i++)
				want |= listen->ranges[i].lo <= port &&
					port <= listen->ranges[i].hi &&
					(listen->ranges[i].protos & proto);
			queries++;
			allowed += want;
			mismatches += image_decide_listen(p.image, port, proto) != want;
		}
		test_policy_release(&p);
	}
	CHECK_EQ_INT(mismatches, 0);
	CHECK(allowed > 0 && allowed < queries);
}

static void test_bad_input(void)
{
	struct rules rules = { 0 };
	struct image *image = NULL;
	struct unix_allow many[MAX_UNIX_PATHS + 1] = { 0 };
	struct allowlist *list = NULL;

	CHECK_EQ_INT(image_build(NULL, false, &image), -EINVAL);
	/* No allowlist: rules_compile did not run. */
	CHECK_EQ_INT(image_build(&rules, false, &image), -EINVAL);
	CHECK(image == NULL);
	if (allowlist_build(NULL, 0, &list, NULL, 0) < 0) {
		CHECK(!"allowlist_build");
		return;
	}
	rules.list = list;
	for (size_t i = 0; i < ARRAY_SIZE(many); i++)
		snprintf(many[i].key.path, sizeof(many[i].key.path), "/run/%zu", i);
	rules.unix_allows = many;
	rules.nunix = ARRAY_SIZE(many);
	CHECK_EQ_INT(image_build(&rules, false, &image), -E2BIG);
	CHECK(image == NULL);
	image_free(NULL);
	allowlist_free(list);
}

/* The flags of addr in the image: its inline entry's, or its exact map entry's; -1: none. */
static long exact_flags(const struct image *image, const char *text)
{
	struct in6_addr a = addr_of(text);
	const struct allow_value *v;

	for (__u32 i = 0; i < image->cfg.ninline_exact; i++)
		if (!memcmp(image->cfg.inline_exact[i].addr, &a, sizeof(a)))
			return image->cfg.inline_exact[i].value.flags;
	v = image_lookup(image, IMAGE_MAP_ALLOW_EXACT, &a);
	return v ? (long)v->flags : -1;
}

/*
 * A host rule with "http" flags its resolved addresses ALLOW_GATEWAY, in the settings and in
 * the exact map alike; an address it shares with a rule without "http" is flagged too, and
 * the rest are not.
 */
static void test_gateway_flags(void)
{
	static struct port_range https = { .lo = 443, .hi = 443, .protos = PROTO_TCP };
	static struct policy_http http;
	struct policy_entry gw = { .host = "api.example", .http = &http },
			    plain = { .host = "cdn.example" };
	const char *addrs[] = { "192.0.2.1",   "192.0.2.2", "192.0.2.3",
				"2001:db8::1", "192.0.2.9", "192.0.2.10" };
	struct in6_addr gw_addrs[3], plain_addrs[3];
	struct resolved_host hosts[2];
	struct allow_rule rules[6];

	for (size_t n = 2; n <= 6; n += 4) {
		struct test_policy p = { 0 };

		/* api.example: the first three; cdn.example: the third (shared) and the rest. */
		for (size_t i = 0; i < 6; i++)
			rules[i] = (struct allow_rule){ .addr = addr_of(addrs[i]),
							.prefixlen = 128,
							.ports = &https,
							.nports = 1,
							.protos = PROTO_TCP };
		for (size_t i = 0; i < 3; i++) {
			gw_addrs[i] = addr_of(addrs[i]);
			plain_addrs[i] = addr_of(addrs[i + 2]);
		}
		hosts[0] = (struct resolved_host){ .entry = &gw,
						   .addrs = gw_addrs,
						   .naddrs = n < 3 ? n : 3 };
		hosts[1] = (struct resolved_host){ .entry = &plain,
						   .addrs = plain_addrs,
						   .naddrs = n < 3 ? 0 : 3 };
		p.rules.hosts = hosts;
		p.rules.nhosts = 2;
		if (POLICY_BUILD(&p, rules, n, false) < 0)
			return;
		CHECK(exact_flags(p.image, "192.0.2.1") == ALLOW_GATEWAY);
		CHECK(exact_flags(p.image, "192.0.2.2") == ALLOW_GATEWAY);
		if (n == 6) {
			CHECK(p.image->cfg.ninline_exact ==
			      0); /* beyond MAX_INLINE_EXACT: the map */
			CHECK(exact_flags(p.image, "192.0.2.3") == ALLOW_GATEWAY);
			CHECK(exact_flags(p.image, "2001:db8::1") == 0);
			CHECK(exact_flags(p.image, "192.0.2.9") == 0);
		} else {
			CHECK(p.image->cfg.ninline_exact == 2);
		}
		test_policy_release(&p);
	}
}

/* The SNI map: a marker and the name per address and port of each "sni" host, nothing else. */
static void test_sni_map(void)
{
	struct policy_entry entries[2] = {
		{ .host = "api.example", .nports = 1, .protos = PROTO_TCP, .sni = true },
		{ .host = "other.example", .nports = 1, .protos = PROTO_ANY, .sni = true },
	};
	struct policy policy = { .entries = entries, .nentries = 2 }, *policies[] = { &policy };
	struct in6_addr shared = addr_of("192.0.2.7"), own = addr_of("192.0.2.8");
	struct in6_addr a_addrs[] = { shared }, b_addrs[] = { shared, own };
	struct resolved_host hosts[] = { { &policy, &entries[0], a_addrs, 1 },
					 { &policy, &entries[1], b_addrs, 2 } };
	struct allow_rule rules[] = { rule_of("192.0.2.7", PORT_443, 1, PROTO_TCP) };
	struct test_policy p = { 0 };
	char err[128];

	entries[0].ports[0] = (struct port_range){ 443, 443, PROTO_TCP };
	entries[1].ports[0] = (struct port_range){ 443, 443, PROTO_ANY };
	if (allowlist_build(rules, ARRAY_SIZE(rules), &p.list, err, sizeof(err)) < 0) {
		CHECK(!"allowlist_build");
		return;
	}
	p.rules.list = p.list;
	p.rules.policies = policies;
	p.rules.npolicies = 1;
	p.rules.hosts = hosts;
	p.rules.nhosts = ARRAY_SIZE(hosts);
	CHECK_EQ_INT(image_build(&p.rules, true, &p.image), 0);
	if (!p.image) {
		test_policy_release(&p);
		return;
	}
	CHECK(p.image->cfg.flags & CFG_HAS_SNI);
	CHECK(p.image->maps[IMAGE_MAP_DNS_SNI].present);
	/* Two markers (one merged from both rules) and three names. */
	CHECK_EQ_INT(p.image->maps[IMAGE_MAP_SNI].n, 5);
	/* The shared address: either rule's name; UDP only as the second rule allows it. */
	CHECK(image_sni_allows(p.image, &shared, 443, "api.example"));
	CHECK(image_sni_allows(p.image, &shared, 443, "other.example"));
	CHECK(!image_sni_allows(p.image, &shared, 443, "evil.example"));
	CHECK(!image_sni_allows(p.image, &shared, 8443, "api.example"));
	CHECK(!image_sni_allows(p.image, &shared, 443, ""));
	CHECK_EQ_INT(image_sni_mark(p.image, &shared, 443), SNI_MARK | SNI_MARK_UDP);
	CHECK(!image_sni_allows(p.image, &own, 443, "api.example"));
	CHECK(image_sni_allows(p.image, &own, 443, "other.example"));
	CHECK_EQ_INT(image_sni_mark(p.image, &own, 443), SNI_MARK | SNI_MARK_UDP);
	CHECK_EQ_INT(image_sni_mark(p.image, &own, 80), 0);
	image_free(p.image);
	p.image = NULL;
	/* Without an "sni" rule, no map and no flag: nothing is looked up. */
	entries[0].sni = entries[1].sni = false;
	CHECK_EQ_INT(image_build(&p.rules, false, &p.image), 0);
	if (p.image) {
		CHECK(!(p.image->cfg.flags & CFG_HAS_SNI));
		CHECK(!p.image->maps[IMAGE_MAP_SNI].present);
		CHECK_EQ_INT(image_sni_mark(p.image, &shared, 443), 0);
	}
	test_policy_release(&p);
}

int main(void)
{
	const char *seed = getenv("IMAGE_TEST_SEED");

	if (seed && *seed)
		rng_state = strtoull(seed, NULL, 0) | 1;
	printf("image tests: seed 0x%llx\n", (unsigned long long)rng_state);
	RUN(test_spec_table);
	RUN(test_gateway_flags);
	RUN(test_empty_policy);
	RUN(test_inline_exact);
	RUN(test_exact_map);
	RUN(test_inline_prefixes);
	RUN(test_prefix_hash_expanded);
	RUN(test_prefix_trie);
	RUN(test_dns_unix_listen);
	RUN(test_random_policies);
	RUN(test_broken_image_is_caught);
	RUN(test_random_unix);
	RUN(test_random_listen);
	RUN(test_bad_input);
	RUN(test_sni_map);
	return test_failures != 0;
}
