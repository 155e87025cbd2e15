// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The policy's kernel image: from compiled rules to one sandbox's settings and the entries of
 * every map it holds at its slot, and the programs' decisions over that image.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "allowlist.h"
#include "image.h"
#include "rules.h"

const struct image_map_spec image_map_specs[IMAGE_NMAPS] = {
	[IMAGE_MAP_EVENTS] = { .outer_name = "events",
			       .name = "launch_events",
			       .type = BPF_MAP_TYPE_RINGBUF,
			       .fixed_entries = RINGBUF_SIZE_BYTES,
			       .runtime = true },
	[IMAGE_MAP_ALLOW_EXACT] = { .outer_name = "allow_exact",
				    .name = "launch_exact",
				    .type = BPF_MAP_TYPE_HASH,
				    .key_size = sizeof(struct addr_key),
				    .value_size = sizeof(struct allow_value),
				    .flags = BPF_F_NO_PREALLOC },
	[IMAGE_MAP_ALLOW_PREFIX] = { .outer_name = "allow_prefix",
				     .name = "launch_prefix",
				     .type = BPF_MAP_TYPE_LPM_TRIE,
				     .key_size = sizeof(struct prefix_key),
				     .value_size = sizeof(struct allow_value),
				     .flags = BPF_F_NO_PREALLOC },
	[IMAGE_MAP_ALLOW_PREFIX_HASH] = { .outer_name = "allow_prefix_hash",
					  .name = "launch_prefixh",
					  .type = BPF_MAP_TYPE_HASH,
					  .key_size = sizeof(struct prefix_key),
					  .value_size = sizeof(struct allow_value),
					  .flags = BPF_F_NO_PREALLOC },
	/* BPF_F_INNER_MAP: each sandbox's array has its own number of sets. */
	[IMAGE_MAP_PORT_SETS] = { .outer_name = "port_sets",
				  .name = "launch_ports",
				  .type = BPF_MAP_TYPE_ARRAY,
				  .key_size = sizeof(__u32),
				  .value_size = sizeof(struct port_set),
				  .flags = BPF_F_INNER_MAP },
	[IMAGE_MAP_DNS_ALLOW] = { .outer_name = "dns_allow",
				  .name = "launch_dns",
				  .type = BPF_MAP_TYPE_HASH,
				  .key_size = sizeof(struct addr_key),
				  .value_size = sizeof(__u32),
				  .flags = BPF_F_NO_PREALLOC,
				  .fixed_entries = MAX_DNS_ALLOW_ENTRIES,
				  .runtime = true },
	[IMAGE_MAP_DNS_PORT_SETS] = { .outer_name = "dns_port_sets",
				      .name = "launch_dnsports",
				      .type = BPF_MAP_TYPE_ARRAY,
				      .key_size = sizeof(__u32),
				      .value_size = sizeof(struct port_set),
				      .fixed_entries = MAX_DNS_PORT_SETS,
				      .runtime = true },
	[IMAGE_MAP_UNIX_ALLOW] = { .outer_name = "unix_allow",
				   .name = "launch_unix",
				   .type = BPF_MAP_TYPE_HASH,
				   .key_size = sizeof(struct unix_path_key),
				   .value_size = sizeof(__u8),
				   .flags = BPF_F_NO_PREALLOC,
				   .fixed_entries = MAX_UNIX_PATHS },
	/* The values: SNI_MARK* for a marker (len 0), 1 for a name. */
	[IMAGE_MAP_SNI] = { .outer_name = "sni_allow",
			    .name = "launch_sni",
			    .type = BPF_MAP_TYPE_HASH,
			    .key_size = sizeof(struct sni_key),
			    .value_size = sizeof(__u32),
			    .flags = BPF_F_NO_PREALLOC },
	[IMAGE_MAP_DNS_SNI] = { .outer_name = "dns_sni_allow",
				.name = "launch_dnssni",
				.type = BPF_MAP_TYPE_HASH,
				.key_size = sizeof(struct sni_key),
				.value_size = sizeof(__u32),
				.flags = BPF_F_NO_PREALLOC,
				.fixed_entries = MAX_DNS_SNI_ENTRIES,
				.runtime = true },
};

void image_free(struct image *image)
{
	if (!image)
		return;
	for (int m = 0; m < IMAGE_NMAPS; m++) {
		free(image->maps[m].keys);
		free(image->maps[m].values);
	}
	free(image);
}

static bool spec_is_keyed(const struct image_map_spec *spec)
{
	return spec->type == BPF_MAP_TYPE_HASH || spec->type == BPF_MAP_TYPE_LPM_TRIE;
}

/*
 * The room a map is made with: a fixed size, or the entries. A hash or trie gets a power of
 * two of at least IMAGE_MIN_HASH_ENTRIES, so that a slightly bigger policy later finds room
 * in the slot's map (loader_slots.c reuses it); an array exactly its entries, and at least one.
 */
static __u32 map_room(const struct image_map_spec *spec, size_t n)
{
	if (spec->fixed_entries)
		return spec->fixed_entries;
	if (!spec_is_keyed(spec))
		return n ? (__u32)n : 1;
	if (n <= IMAGE_MIN_HASH_ENTRIES)
		return IMAGE_MIN_HASH_ENTRIES;
	return 1u << (32 - __builtin_clz((unsigned int)n - 1));
}

/* Gives map `kind` room for n entries, zeroed; the caller writes them. */
static int map_alloc(struct image *image, enum image_map kind, size_t n)
{
	const struct image_map_spec *spec = &image_map_specs[kind];
	struct image_entries *e = &image->maps[kind];

	if (spec->fixed_entries && n > spec->fixed_entries)
		return -E2BIG;
	e->present = true;
	e->max_entries = map_room(spec, n);
	e->n = n;
	if (n == 0)
		return 0;
	e->keys = calloc(n, spec->key_size);
	e->values = calloc(n, spec->value_size);
	return e->keys && e->values ? 0 : -ENOMEM;
}

static int cmp_key(const void *a, const void *b, void *key_size)
{
	return memcmp(a, b, *(const __u32 *)key_size);
}

/*
 * Puts the entries of a hash or trie in key order, which image_lookup searches. The kernel
 * would keep one of two equal keys silently: the builder never makes them (the unit tests
 * check), and sorting here keeps the first.
 */
static int map_sort(struct image *image, enum image_map kind)
{
	const struct image_map_spec *spec = &image_map_specs[kind];
	struct image_entries *e = &image->maps[kind];
	size_t rec = (size_t)spec->key_size + spec->value_size, out = 0;
	_cleanup_free_ char *pairs = NULL;
	__u32 key_size = spec->key_size;

	if (e->n < 2)
		return 0;
	pairs = malloc(e->n * rec);
	if (!pairs)
		return -ENOMEM;
	for (size_t i = 0; i < e->n; i++) {
		memcpy(pairs + i * rec, (char *)e->keys + i * spec->key_size, spec->key_size);
		memcpy(pairs + i * rec + spec->key_size, (char *)e->values + i * spec->value_size,
		       spec->value_size);
	}
	qsort_r(pairs, e->n, rec, cmp_key, &key_size);
	for (size_t i = 0; i < e->n; i++) {
		if (out > 0 && memcmp(pairs + i * rec, (char *)e->keys + (out - 1) * key_size,
				      key_size) == 0) {
			/* An SNI marker of two rules: what either allows (SNI_MARK_UDP). */
			if (kind == IMAGE_MAP_SNI)
				((__u32 *)e->values)[out - 1] |=
					*(__u32 *)(pairs + i * rec + key_size);
			continue;
		}
		memcpy((char *)e->keys + out * key_size, pairs + i * rec, key_size);
		memcpy((char *)e->values + out * spec->value_size, pairs + i * rec + key_size,
		       spec->value_size);
		out++;
	}
	e->n = out;
	return 0;
}

/* An entry's value: its port set, and that set's range in place when it is the only one. */
static struct allow_value allow_value_of(const struct allowlist *list, __u32 set)
{
	struct allow_value value = { .set = set };

	if (list->sets[set].nranges == 1)
		value.range = list->sets[set].ranges[0];
	return value;
}

static int image_port_sets(struct image *image, const struct allowlist *list)
{
	struct image_entries *e = &image->maps[IMAGE_MAP_PORT_SETS];
	int r = map_alloc(image, IMAGE_MAP_PORT_SETS, list->nsets);

	if (r < 0)
		return r;
	for (size_t i = 0; i < list->nsets; i++) {
		((__u32 *)e->keys)[i] = (__u32)i;
		((struct port_set *)e->values)[i] = list->sets[i];
	}
	return 0;
}

/* A handful of exact addresses sit in the settings, compared in place by the programs. */
static int image_exact(struct image *image, const struct allowlist *list)
{
	struct image_entries *e = &image->maps[IMAGE_MAP_ALLOW_EXACT];
	int r;

	if (!list->nexact)
		return 0;
	image->cfg.flags |= CFG_HAS_EXACT;
	if (list->nexact <= MAX_INLINE_EXACT) {
		for (size_t i = 0; i < list->nexact; i++) {
			memcpy(image->cfg.inline_exact[i].addr, list->exact[i].key.addr,
			       sizeof(image->cfg.inline_exact[i].addr));
			image->cfg.inline_exact[i].value = allow_value_of(list, list->exact[i].set);
		}
		image->cfg.ninline_exact = (__u32)list->nexact;
		return 0;
	}
	r = map_alloc(image, IMAGE_MAP_ALLOW_EXACT, list->nexact);
	if (r < 0)
		return r;
	for (size_t i = 0; i < list->nexact; i++) {
		((struct addr_key *)e->keys)[i] = list->exact[i].key;
		((struct allow_value *)e->values)[i] = allow_value_of(list, list->exact[i].set);
	}
	return map_sort(image, IMAGE_MAP_ALLOW_EXACT);
}

/*
 * A handful of prefixes: in the settings, longest first, each with its mask; the programs
 * try them in that order, so the first match is the longest, as the trie's would be.
 */
static int image_inline_prefixes(struct image *image, const struct allowlist *list)
{
	struct prefix_mask masks[MAX_HASHED_PREFIX_LENGTHS];
	int nmasks = allowlist_prefix_masks(list, masks, MAX_HASHED_PREFIX_LENGTHS);
	__u32 n = 0;

	/*
	 * Never with CFG_HAS_PREFIXES and no prefix in place: the programs would then look in
	 * the slot's maps, which this image does not fill.
	 */
	if (nmasks < 0)
		return nmasks;

	/* At most MAX_INLINE_PREFIXES prefixes have at most as many lengths. */
	for (int m = 0; m < nmasks; m++)
		for (size_t i = 0; i < list->nprefixes; i++) {
			struct inline_prefix *p = &image->cfg.inline_prefixes[n];

			if (list->prefixes[i].key.prefixlen != masks[m].prefixlen)
				continue;
			memcpy(p->mask, masks[m].mask, sizeof(p->mask));
			memcpy(p->addr, list->prefixes[i].key.addr, sizeof(p->addr));
			p->value = allow_value_of(list, list->prefixes[i].set);
			n++;
		}
	image->cfg.ninline_prefixes = n;
	return 0;
}

/*
 * Prefixes beyond the handful: with few lengths, one hash lookup per length beats the trie
 * (see launch.h); fewer still after expansion (a /28 is four /30s): each length saved is a
 * lookup saved on every call that matches no prefix, for at most IMAGE_EXPAND_FACTOR times
 * the policy's entries. With too many lengths even so, the trie, with the policy's own
 * prefixes.
 */
static int image_prefixes(struct image *image, const struct allowlist *list)
{
	_cleanup_free_ struct allow_prefix *expanded = NULL;
	const struct allow_prefix *prefixes;
	size_t nexpanded = 0, nprefixes, budget;
	enum image_map kind;
	struct image_entries *e;
	int r, nmasks;

	if (!list->nprefixes)
		return 0;
	image->cfg.flags |= CFG_HAS_PREFIXES;
	if (list->nprefixes <= MAX_INLINE_PREFIXES) {
		return image_inline_prefixes(image, list);
	}
	budget = list->nprefixes * IMAGE_EXPAND_FACTOR;
	if (budget < IMAGE_EXPAND_MIN_ENTRIES)
		budget = IMAGE_EXPAND_MIN_ENTRIES;
	r = allowlist_expand_prefixes(list, budget, &expanded, &nexpanded);
	if (r < 0)
		return r;
	nmasks = allowlist_masks_of(expanded, nexpanded, image->cfg.prefix_masks,
				    MAX_HASHED_PREFIX_LENGTHS);
	if (nmasks >= 0) {
		kind = IMAGE_MAP_ALLOW_PREFIX_HASH;
		prefixes = expanded;
		nprefixes = nexpanded;
		image->cfg.nprefix_masks = (__u32)nmasks;
	} else {
		kind = IMAGE_MAP_ALLOW_PREFIX;
		prefixes = list->prefixes;
		nprefixes = list->nprefixes;
		memset(image->cfg.prefix_masks, 0, sizeof(image->cfg.prefix_masks));
		image->cfg.nprefix_masks = 0;
	}
	r = map_alloc(image, kind, nprefixes);
	if (r < 0)
		return r;
	e = &image->maps[kind];
	for (size_t i = 0; i < nprefixes; i++) {
		((struct prefix_key *)e->keys)[i] = prefixes[i].key;
		((struct allow_value *)e->values)[i] = allow_value_of(list, prefixes[i].set);
	}
	return map_sort(image, kind);
}

/* The value says what the job may do at that address: connect, bind, or both. */
static int image_unix(struct image *image, const struct rules *rules)
{
	struct image_entries *e = &image->maps[IMAGE_MAP_UNIX_ALLOW];
	int r;

	if (!rules->nunix)
		return 0;
	r = map_alloc(image, IMAGE_MAP_UNIX_ALLOW, rules->nunix);
	if (r < 0)
		return r;
	for (size_t i = 0; i < rules->nunix; i++) {
		((struct unix_path_key *)e->keys)[i] = rules->unix_allows[i].key;
		((__u8 *)e->values)[i] = rules->unix_allows[i].flags;
	}
	image->cfg.flags |= CFG_HAS_UNIX;
	return map_sort(image, IMAGE_MAP_UNIX_ALLOW);
}

/*
 * The exact addresses of host rules with "http" are flagged: the programs send every TCP
 * connect to them to the gateway (gateway.bpf.h). An address two rules share, one with
 * "http" and one without, goes to the gateway too: none of the job's connections reaches a
 * gateway host's address itself.
 */
static void image_mark_gateway(struct image *image, const struct rules *rules)
{
	struct image_entries *e = &image->maps[IMAGE_MAP_ALLOW_EXACT];

	for (size_t h = 0; h < rules->nhosts; h++) {
		const struct resolved_host *host = &rules->hosts[h];

		if (!host->entry || !host->entry->http)
			continue;
		for (size_t a = 0; a < host->naddrs; a++) {
			const void *addr = &host->addrs[a];

			for (__u32 i = 0; i < image->cfg.ninline_exact; i++)
				if (memcmp(image->cfg.inline_exact[i].addr, addr, 16) == 0)
					image->cfg.inline_exact[i].value.flags |= ALLOW_GATEWAY;
			for (size_t i = 0; e->present && i < e->n; i++)
				if (memcmp(&((struct addr_key *)e->keys)[i], addr, 16) == 0)
					((struct allow_value *)e->values)[i].flags |= ALLOW_GATEWAY;
		}
	}
}

void image_sni_key(struct sni_key *key, const struct in6_addr *dst, uint16_t port, const char *name)
{
	memset(key, 0, sizeof(*key));
	memcpy(key->addr, dst, sizeof(key->addr));
	key->port = port;
	if (name) {
		key->len = (__u16)strnlen(name, SNI_NAME_MAX);
		memcpy(key->name, name, key->len);
	}
}

/* Calls fn for every port of an "sni" entry (at most SNI_MAX_PORTS: policy.c checks). */
static size_t sni_ports(const struct policy_entry *entry, uint16_t ports[SNI_MAX_PORTS])
{
	size_t n = 0;

	for (unsigned int i = 0; i < entry->nports; i++)
		for (unsigned int p = entry->ports[i].lo; p <= entry->ports[i].hi; p++)
			if (n < SNI_MAX_PORTS)
				ports[n++] = (uint16_t)p;
	return n;
}

/*
 * The SNI map: for every address a host rule with "sni" resolved to at start, and each of its
 * ports, the marker and the rule's name. Absent when no rule checks names; with the DNS proxy,
 * its own map for the names its answers open.
 */
static int image_sni(struct image *image, const struct rules *rules, bool dns_proxy)
{
	struct image_entries *e = &image->maps[IMAGE_MAP_SNI];
	uint16_t ports[SNI_MAX_PORTS];
	bool any = false;
	size_t n = 0, k = 0;
	int r;

	for (size_t p = 0; p < rules->npolicies; p++)
		for (size_t i = 0; i < rules->policies[p]->nentries; i++)
			any |= rules->policies[p]->entries[i].sni;
	if (!any)
		return 0;
	image->cfg.flags |= CFG_HAS_SNI;
	for (size_t h = 0; h < rules->nhosts; h++)
		if (rules->hosts[h].entry->sni)
			n += rules->hosts[h].naddrs * sni_ports(rules->hosts[h].entry, ports) * 2;
	r = map_alloc(image, IMAGE_MAP_SNI, n);
	if (r == 0 && dns_proxy)
		r = map_alloc(image, IMAGE_MAP_DNS_SNI, 0);
	if (r < 0)
		return r;
	for (size_t h = 0; h < rules->nhosts; h++) {
		const struct resolved_host *host = &rules->hosts[h];
		size_t np;

		if (!host->entry->sni)
			continue;
		np = sni_ports(host->entry, ports);
		for (size_t a = 0; a < host->naddrs; a++)
			for (size_t i = 0; i < np; i++) {
				struct sni_key *key = (struct sni_key *)e->keys + k;
				__u32 *value = (__u32 *)e->values + k;

				image_sni_key(key, &host->addrs[a], ports[i], NULL);
				*value = SNI_MARK |
					 ((host->entry->protos & PROTO_UDP) ? SNI_MARK_UDP : 0);
				image_sni_key(key + 1, &host->addrs[a], ports[i],
					      host->entry->host);
				value[1] = 1;
				k += 2;
			}
	}
	return map_sort(image, IMAGE_MAP_SNI);
}

unsigned int image_sni_mark(const struct image *image, const struct in6_addr *dst, uint16_t port)
{
	const __u32 *value;
	struct sni_key key;

	if (!(image->cfg.flags & CFG_HAS_SNI))
		return 0;
	image_sni_key(&key, dst, port, NULL);
	value = image_lookup(image, IMAGE_MAP_SNI, &key);
	return value ? *value : 0;
}

bool image_sni_allows(const struct image *image, const struct in6_addr *dst, uint16_t port,
		      const char *name)
{
	struct sni_key key;

	if (!(image->cfg.flags & CFG_HAS_SNI))
		return false;
	image_sni_key(&key, dst, port, name);
	return key.len && image_lookup(image, IMAGE_MAP_SNI, &key);
}

int image_build(const struct rules *rules, bool dns_proxy, struct image **ret_image)
{
	_cleanup_(image_freep) struct image *image = NULL;
	const struct allowlist *list;
	int r;

	if (!rules || !rules->list || !ret_image)
		return -EINVAL;
	list = rules->list;
	image = calloc(1, sizeof(*image));
	if (!image)
		return -ENOMEM;
	/* Every sandbox has its ring buffer and port sets, whatever its policy. */
	r = map_alloc(image, IMAGE_MAP_EVENTS, 0);
	if (r == 0)
		r = image_port_sets(image, list);
	if (r == 0)
		r = image_exact(image, list);
	if (r == 0)
		image_mark_gateway(image, rules);
	if (r == 0)
		r = image_prefixes(image, list);
	if (r == 0)
		r = image_unix(image, rules);
	if (r == 0)
		r = image_sni(image, rules, dns_proxy);
	/* Filled at run time by the proxy (dnsbpf.c), from empty. */
	if (r == 0 && dns_proxy)
		r = map_alloc(image, IMAGE_MAP_DNS_ALLOW, 0);
	if (r == 0 && dns_proxy)
		r = map_alloc(image, IMAGE_MAP_DNS_PORT_SETS, 0);
	if (r < 0)
		return r;
	/* The "listen" ports live in the settings: the programs read them in place. */
	image->cfg.listen = rules->listen;
	*ret_image = TAKE_PTR(image);
	return 0;
}

static int cmp_lookup(const void *key, const void *elem, void *key_size)
{
	return memcmp(key, elem, *(const __u32 *)key_size);
}

/* An exact match of key, as a hash map (or a trie given a full-length key) finds it. */
static const void *entries_find(const struct image_entries *e, const struct image_map_spec *spec,
				const void *key)
{
	__u32 key_size = spec->key_size;
	const char *keys = e->keys, *hit;

	if (!e->n)
		return NULL;
	/* bsearch has no variant with an argument; the keys are few enough to halve by hand. */
	for (size_t lo = 0, hi = e->n; lo < hi;) {
		size_t mid = lo + (hi - lo) / 2;
		int c;

		hit = keys + mid * key_size;
		c = cmp_lookup(key, hit, &key_size);
		if (c == 0)
			return (const char *)e->values + mid * spec->value_size;
		if (c < 0)
			hi = mid;
		else
			lo = mid + 1;
	}
	return NULL;
}

/* Clears the bits of addr past prefixlen. */
static void mask_bytes(__u8 addr[16], unsigned int prefixlen)
{
	unsigned int byte = prefixlen / 8, bits = prefixlen % 8;

	if (prefixlen >= 128)
		return;
	if (bits)
		addr[byte++] &= (__u8)(0xff << (8 - bits));
	memset(addr + byte, 0, 16 - byte);
}

/*
 * BPF_MAP_TYPE_LPM_TRIE's lookup: the entry of the longest prefix, at most key->prefixlen
 * long, that contains key->addr.
 */
static const void *trie_find(const struct image_entries *e, const struct image_map_spec *spec,
			     const struct prefix_key *key)
{
	unsigned int from = key->prefixlen > 128 ? 128 : key->prefixlen;

	for (int len = (int)from; len >= 0; len--) {
		struct prefix_key probe = { .prefixlen = (__u32)len };
		const void *value;

		memcpy(probe.addr, key->addr, sizeof(probe.addr));
		mask_bytes(probe.addr, (unsigned int)len);
		value = entries_find(e, spec, &probe);
		if (value)
			return value;
	}
	return NULL;
}

const void *image_lookup(const struct image *image, enum image_map kind, const void *key)
{
	const struct image_map_spec *spec;
	const struct image_entries *e;

	if (!image || kind >= IMAGE_NMAPS)
		return NULL;
	spec = &image_map_specs[kind];
	e = &image->maps[kind];
	if (!e->present)
		return NULL;
	switch (spec->type) {
	case BPF_MAP_TYPE_HASH:
		return entries_find(e, spec, key);
	case BPF_MAP_TYPE_LPM_TRIE:
		return trie_find(e, spec, key);
	case BPF_MAP_TYPE_ARRAY: {
		__u32 index;

		/* Past the entries written, a new array reads zero: no set, nothing allowed. */
		memcpy(&index, key, sizeof(index));
		return index < e->n ? (const char *)e->values + (size_t)index * spec->value_size
				    : NULL;
	}
	default:
		return NULL;
	}
}

/*
 * From here on, the programs' code (allowlist.bpf.h), line for line over the image: the
 * settings compared in place, then the maps the flags name.
 */
static const struct allow_value *inline_lookup(const struct sandbox_cfg *cfg,
					       const struct prefix_key *dst)
{
	__u32 words[4];

	memcpy(words, dst->addr, sizeof(words));
	for (__u32 i = 0; i < MAX_INLINE_EXACT && i < cfg->ninline_exact; i++) {
		const struct inline_exact *e = &cfg->inline_exact[i];

		if (e->addr[3] == words[3] && e->addr[2] == words[2] && e->addr[1] == words[1] &&
		    e->addr[0] == words[0])
			return &e->value;
	}
	return NULL;
}

static const struct allow_value *inline_prefix_lookup(const struct sandbox_cfg *cfg,
						      const struct prefix_key *dst)
{
	__u32 words[4];

	memcpy(words, dst->addr, sizeof(words));
	for (__u32 i = 0; i < MAX_INLINE_PREFIXES && i < cfg->ninline_prefixes; i++) {
		const struct inline_prefix *p = &cfg->inline_prefixes[i];

		if ((words[3] & p->mask[3]) == p->addr[3] &&
		    (words[2] & p->mask[2]) == p->addr[2] &&
		    (words[1] & p->mask[1]) == p->addr[1] && (words[0] & p->mask[0]) == p->addr[0])
			return &p->value;
	}
	return NULL;
}

static const struct allow_value *prefix_hash_lookup(const struct image *image,
						    const struct prefix_key *dst)
{
	const struct sandbox_cfg *cfg = &image->cfg;
	__u32 words[4];

	memcpy(words, dst->addr, sizeof(words));
	for (__u32 i = 0; i < MAX_HASHED_PREFIX_LENGTHS && i < cfg->nprefix_masks; i++) {
		const struct prefix_mask *m = &cfg->prefix_masks[i];
		const struct allow_value *value;
		struct prefix_key key = { .prefixlen = m->prefixlen };
		__u32 masked[4];

		for (int w = 0; w < 4; w++)
			masked[w] = words[w] & m->mask[w];
		memcpy(key.addr, masked, sizeof(key.addr));
		value = image_lookup(image, IMAGE_MAP_ALLOW_PREFIX_HASH, &key);
		if (value)
			return value;
	}
	return NULL;
}

bool image_decide(const struct image *image, const struct in6_addr *dst, uint16_t port,
		  unsigned int proto)
{
	const struct sandbox_cfg *cfg = &image->cfg;
	const struct allow_value *value = NULL;
	const struct port_set *set;
	struct prefix_key key = { .prefixlen = 128 };
	__u32 set_index;

	memcpy(key.addr, dst, sizeof(key.addr));
	if (cfg->flags & CFG_HAS_EXACT) {
		if (cfg->ninline_exact)
			value = inline_lookup(cfg, &key);
		else
			value = image_lookup(image, IMAGE_MAP_ALLOW_EXACT, key.addr);
	}
	if (!value && (cfg->flags & CFG_HAS_PREFIXES)) {
		if (cfg->ninline_prefixes)
			value = inline_prefix_lookup(cfg, &key);
		else if (cfg->nprefix_masks)
			value = prefix_hash_lookup(image, &key);
		else
			value = image_lookup(image, IMAGE_MAP_ALLOW_PREFIX, &key);
	}
	if (!value)
		return false;
	if (value->range.protos)
		return port >= value->range.lo && port <= value->range.hi &&
		       (value->range.protos & proto);
	set_index = value->set;
	set = image_lookup(image, IMAGE_MAP_PORT_SETS, &set_index);
	return set && port_set_allows(set, port, proto);
}

bool image_decide_unix(const struct image *image, const struct unix_path_key *key)
{
	const __u8 *flags = NULL;

	if (image->cfg.flags & CFG_HAS_UNIX)
		flags = image_lookup(image, IMAGE_MAP_UNIX_ALLOW, key);
	return flags && (*flags & UNIX_ALLOW_CONNECT);
}

bool image_decide_listen(const struct image *image, uint16_t port, unsigned int proto)
{
	return image->cfg.listen.nranges && port_set_allows(&image->cfg.listen, port, proto);
}
