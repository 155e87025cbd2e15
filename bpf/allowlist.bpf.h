/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The policy's allowlist and its lookup, shared by the address hooks (sock_addr.bpf.c) and the
 * packet-level backstop (packet.bpf.c), so both judge a destination the same way.
 */
#ifndef LAUNCH_ALLOWLIST_BPF_H
#define LAUNCH_ALLOWLIST_BPF_H

#include "common.bpf.h"

/*
 * Each sandbox's allowlist lives in maps its launcher makes at the policy's own sizes; these
 * maps-of-maps hold them at the sandbox's slot. The inner definitions are the templates the
 * launcher's maps must match (type, key and value sizes, flags).
 */
struct exact_inner {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(key_size, sizeof(struct addr_key));
	__uint(value_size, sizeof(struct allow_value));
	__uint(max_entries, 1);
	__uint(map_flags, BPF_F_NO_PREALLOC);
};

struct prefix_trie_inner {
	__uint(type, BPF_MAP_TYPE_LPM_TRIE);
	__uint(key_size, sizeof(struct prefix_key));
	__uint(value_size, sizeof(struct allow_value));
	__uint(max_entries, 1);
	__uint(map_flags, BPF_F_NO_PREALLOC);
};

struct prefix_hash_inner {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(key_size, sizeof(struct prefix_key));
	__uint(value_size, sizeof(struct allow_value));
	__uint(max_entries, 1);
	__uint(map_flags, BPF_F_NO_PREALLOC);
};

/* BPF_F_INNER_MAP: each sandbox's array has its own number of sets. */
struct port_sets_inner {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, sizeof(struct port_set));
	__uint(max_entries, 1);
	__uint(map_flags, BPF_F_INNER_MAP);
};

struct allow_exact_map {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, MAX_SANDBOXES);
	__type(key, __u32);
	__array(values, struct exact_inner);
};

/* Prefixes, when they have more than MAX_HASHED_PREFIX_LENGTHS lengths. */
struct allow_prefix_map {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, MAX_SANDBOXES);
	__type(key, __u32);
	__array(values, struct prefix_trie_inner);
};

/* Prefixes, when they have few lengths: see sandbox_cfg.prefix_masks. */
struct allow_prefix_hash_map {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, MAX_SANDBOXES);
	__type(key, __u32);
	__array(values, struct prefix_hash_inner);
};

struct port_sets_map {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, MAX_SANDBOXES);
	__type(key, __u32);
	__array(values, struct port_sets_inner);
};

/* Defined once, in maps.bpf.c; every hook group is linked into one object. */
#ifdef LAUNCH_DEFINE_ALLOWLIST
struct allow_exact_map allow_exact SEC(".maps");
struct allow_prefix_map allow_prefix SEC(".maps");
struct allow_prefix_hash_map allow_prefix_hash SEC(".maps");
struct port_sets_map port_sets SEC(".maps");
#else
extern struct allow_exact_map allow_exact SEC(".maps");
extern struct allow_prefix_map allow_prefix SEC(".maps");
extern struct allow_prefix_hash_map allow_prefix_hash SEC(".maps");
extern struct port_sets_map port_sets SEC(".maps");
#endif

static __always_inline struct allow_value *
prefix_hash_lookup(const struct sandbox_cfg *cfg, void *map, const struct prefix_key *dst)
{
	struct allow_value *value;
	struct prefix_key key;
	__u32 words[4];

	__builtin_memcpy(words, dst->addr, sizeof(words));
#pragma unroll
	for (__u32 i = 0; i < MAX_HASHED_PREFIX_LENGTHS; i++) {
		const struct prefix_mask *m = &cfg->prefix_masks[i];
		__u32 masked[4];

		if (i >= cfg->nprefix_masks)
			break;
		key.prefixlen = m->prefixlen;
		masked[0] = words[0] & m->mask[0];
		masked[1] = words[1] & m->mask[1];
		masked[2] = words[2] & m->mask[2];
		masked[3] = words[3] & m->mask[3];
		__builtin_memcpy(key.addr, masked, sizeof(key.addr));
		/* Longest first: the first hit is the longest match, as the trie's would be. */
		value = bpf_map_lookup_elem(map, &key);
		if (value)
			return value;
	}
	return NULL;
}

/* The few exact addresses kept in the settings (MAX_INLINE_EXACT), compared in place. */
static __always_inline const struct allow_value *inline_lookup(const struct sandbox_cfg *cfg,
							       const struct prefix_key *dst)
{
	__u32 words[4];

	__builtin_memcpy(words, dst->addr, sizeof(words));
#pragma unroll
	for (__u32 i = 0; i < MAX_INLINE_EXACT; i++) {
		const struct inline_exact *e = &cfg->inline_exact[i];

		if (i >= cfg->ninline_exact)
			break;
		if (e->addr[3] == words[3] && e->addr[2] == words[2] && e->addr[1] == words[1] &&
		    e->addr[0] == words[0])
			return &e->value;
	}
	return NULL;
}

/* The few prefixes kept in the settings (MAX_INLINE_PREFIXES), longest first. */
static __always_inline const struct allow_value *inline_prefix_lookup(const struct sandbox_cfg *cfg,
								      const struct prefix_key *dst)
{
	__u32 words[4];

	__builtin_memcpy(words, dst->addr, sizeof(words));
#pragma unroll
	for (__u32 i = 0; i < MAX_INLINE_PREFIXES; i++) {
		const struct inline_prefix *p = &cfg->inline_prefixes[i];

		if (i >= cfg->ninline_prefixes)
			break;
		if ((words[3] & p->mask[3]) == p->addr[3] &&
		    (words[2] & p->mask[2]) == p->addr[2] &&
		    (words[1] & p->mask[1]) == p->addr[1] && (words[0] & p->mask[0]) == p->addr[0])
			return &p->value;
	}
	return NULL;
}

static __always_inline bool allowlist_allows(const struct sandbox_cfg *cfg,
					     const struct prefix_key *dst, __u16 port, __u32 proto)
{
	const struct allow_value *value = NULL;
	__u32 slot = cfg->slot;
	struct port_set *set;
	void *map;

	/* Exact addresses (every resolved host) take one hash lookup; prefixes come after. */
	if (cfg->flags & CFG_HAS_EXACT) {
		if (cfg->ninline_exact) {
			value = inline_lookup(cfg, dst);
		} else {
			map = bpf_map_lookup_elem(&allow_exact, &slot);
			if (map)
				value = bpf_map_lookup_elem(map, dst->addr);
		}
	}
	if (!value && (cfg->flags & CFG_HAS_PREFIXES)) {
		if (cfg->ninline_prefixes) {
			value = inline_prefix_lookup(cfg, dst);
		} else if (cfg->nprefix_masks) {
			map = bpf_map_lookup_elem(&allow_prefix_hash, &slot);
			if (map)
				value = prefix_hash_lookup(cfg, map, dst);
		} else {
			map = bpf_map_lookup_elem(&allow_prefix, &slot);
			if (map)
				value = bpf_map_lookup_elem(map, dst);
		}
	}
	if (!value)
		return false;
	/* One range (a single port, or all of them): decided here. */
	if (value->range.protos)
		return port >= value->range.lo && port <= value->range.hi &&
		       (value->range.protos & proto);
	map = bpf_map_lookup_elem(&port_sets, &slot);
	if (!map)
		return false;
	set = bpf_map_lookup_elem(map, &value->set);
	return set && port_set_allows(set, port, proto);
}

#endif /* LAUNCH_ALLOWLIST_BPF_H */
