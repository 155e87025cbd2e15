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

/*
 * The last destination the allowlist let an unconnected datagram of the socket reach, under
 * the sandbox's settings of that generation: the next send there, and its packet at the
 * backstop, skip the map lookups, which on a big allowlist cost more than the rest of the
 * hook. Written by sendmsg only, under the socket's lock, which the kernel holds for that
 * hook; the backstop runs outside it, hence the spin lock.
 */
struct send_verdict {
	struct bpf_spin_lock lock;
	__u32 generation;
	__u32 addr[4]; /* as addr_key, in 32-bit words */
	__u16 port;
	__u16 proto;
	__u32 valid; /* 0 until a verdict is written */
};

struct send_verdicts_map {
	__uint(type, BPF_MAP_TYPE_SK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct send_verdict);
};

/* Defined once, in maps.bpf.c; every hook group is linked into one object. */
#ifdef LAUNCH_DEFINE_ALLOWLIST
struct allow_exact_map allow_exact SEC(".maps");
struct allow_prefix_map allow_prefix SEC(".maps");
struct allow_prefix_hash_map allow_prefix_hash SEC(".maps");
struct port_sets_map port_sets SEC(".maps");
struct send_verdicts_map send_verdicts SEC(".maps");
#else
extern struct allow_exact_map allow_exact SEC(".maps");
extern struct allow_prefix_map allow_prefix SEC(".maps");
extern struct allow_prefix_hash_map allow_prefix_hash SEC(".maps");
extern struct port_sets_map port_sets SEC(".maps");
extern struct send_verdicts_map send_verdicts SEC(".maps");
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

/*
 * Whether judging a destination may look up a map: only then is a remembered verdict worth
 * its own lookup (the settings' few addresses and prefixes are compared in place).
 */
static __always_inline bool allowlist_in_maps(const struct sandbox_cfg *cfg)
{
	return ((cfg->flags & CFG_HAS_EXACT) && !cfg->ninline_exact) ||
	       ((cfg->flags & CFG_HAS_PREFIXES) && !cfg->ninline_prefixes);
}

static __always_inline bool send_verdict_is(const struct send_verdict *v,
					    const struct sandbox_cfg *cfg,
					    const struct prefix_key *dst, __u16 port, __u32 proto)
{
	__u32 words[4];

	__builtin_memcpy(words, dst->addr, sizeof(words));
	return v->valid && v->generation == cfg->generation && v->port == port &&
	       v->proto == proto && v->addr[3] == words[3] && v->addr[2] == words[2] &&
	       v->addr[1] == words[1] && v->addr[0] == words[0];
}

/*
 * allowlist_allows for an unconnected datagram of socket sk, at sendmsg: a destination
 * allowed is remembered on the socket for the next send there. The caller holds the socket's
 * lock (the kernel takes it for sendmsg's hook), so reading needs no spin lock: only sendmsg
 * writes.
 */
static __always_inline bool allowlist_allows_send(const struct sandbox_cfg *cfg,
						  struct bpf_sock *sk, const struct prefix_key *dst,
						  __u16 port, __u32 proto)
{
	struct send_verdict *v = NULL;
	bool in_maps = allowlist_in_maps(cfg);
	__u32 words[4];

	if (in_maps) {
		v = bpf_sk_storage_get(&send_verdicts, sk, 0, 0);
		if (v && send_verdict_is(v, cfg, dst, port, proto))
			return true;
	}
	/* One copy of the lookup in the program: its code is what every call runs through. */
	if (!allowlist_allows(cfg, dst, port, proto))
		return false;
	if (!in_maps)
		return true;
	if (!v)
		v = bpf_sk_storage_get(&send_verdicts, sk, 0, BPF_SK_STORAGE_GET_F_CREATE);
	/* Without room for it, the next send is judged from the maps again. */
	if (v) {
		__builtin_memcpy(words, dst->addr, sizeof(words));
		bpf_spin_lock(&v->lock);
		v->generation = cfg->generation;
		v->addr[0] = words[0];
		v->addr[1] = words[1];
		v->addr[2] = words[2];
		v->addr[3] = words[3];
		v->port = port;
		v->proto = proto;
		v->valid = 1;
		bpf_spin_unlock(&v->lock);
	}
	return true;
}

/*
 * Whether sendmsg allowed this destination on socket sk under the current settings: what
 * allowlist_allows would say, for the packet of a datagram sent there. False when nothing is
 * remembered, or something else is.
 */
static __always_inline bool allowlist_sent(const struct sandbox_cfg *cfg, struct bpf_sock *sk,
					   const struct prefix_key *dst, __u16 port, __u32 proto)
{
	struct send_verdict *v = bpf_sk_storage_get(&send_verdicts, sk, 0, 0);
	bool same;

	if (!v)
		return false;
	/* A send on another thread may be rewriting it. */
	bpf_spin_lock(&v->lock);
	same = send_verdict_is(v, cfg, dst, port, proto);
	bpf_spin_unlock(&v->lock);
	return same;
}

#endif /* LAUNCH_ALLOWLIST_BPF_H */
