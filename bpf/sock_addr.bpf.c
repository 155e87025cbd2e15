// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* connect4/6 and sendmsg4/6: a destination leaves only if the allowlist has it. */
#include "common.bpf.h"
#include "dns.bpf.h"

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

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, MAX_SANDBOXES);
	__type(key, __u32);
	__array(values, struct exact_inner);
} allow_exact SEC(".maps");

/* Prefixes, when they have more than MAX_HASHED_PREFIX_LENGTHS lengths. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, MAX_SANDBOXES);
	__type(key, __u32);
	__array(values, struct prefix_trie_inner);
} allow_prefix SEC(".maps");

/* Prefixes, when they have few lengths: see sandbox_cfg.prefix_masks. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, MAX_SANDBOXES);
	__type(key, __u32);
	__array(values, struct prefix_hash_inner);
} allow_prefix_hash SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, MAX_SANDBOXES);
	__type(key, __u32);
	__array(values, struct port_sets_inner);
} port_sets SEC(".maps");

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
 * The one decision for connect and sendmsg, IPv4 and IPv6. Returns 1 to let the call
 * through, 0 to fail it with EPERM.
 */
static __always_inline int sock_addr_judge(struct bpf_sock_addr *ctx, struct prefix_key *dst,
					   __u16 family, __u16 op)
{
	const struct sandbox_cfg *cfg = sandbox_get();
	__u16 port = bpf_ntohs((__u16)ctx->user_port);
	__u32 type = ctx->type;
	__u32 proto = 0;
	struct deny_event *event;

	if (!cfg)
		return 0;
	if (type == SOCK_STREAM && ctx->protocol == IPPROTO_TCP)
		proto = PROTO_TCP;
	else if (type == SOCK_DGRAM && ctx->protocol == IPPROTO_UDP)
		proto = PROTO_UDP;

	dst->prefixlen = 128;
	/* DNS goes to the launcher's proxy whatever the address (docs/dns.md). */
	if (proto && dns_redirect(cfg, ctx, dst, family, port, proto))
		return 1;
	if (proto && (allowlist_allows(cfg, dst, port, proto) || dns_allows(cfg, dst, port, proto)))
		return 1;

	event = audit_reserve(cfg, op, family);
	if (event) {
		event->sock_type = type;
		event->protocol = ctx->protocol;
		event->port = port;
		__builtin_memcpy(event->addr, dst->addr, sizeof(event->addr));
		bpf_ringbuf_submit(event, 0);
	}
	return 0;
}

static __always_inline int sock_addr4(struct bpf_sock_addr *ctx, __u16 op)
{
	struct prefix_key dst = {};
	__u32 ip4 = ctx->user_ip4;

	/* IPv4 lives in the IPv4-mapped IPv6 space: ::ffff:a.b.c.d */
	dst.addr[10] = 0xff;
	dst.addr[11] = 0xff;
	__builtin_memcpy(&dst.addr[12], &ip4, 4);
	return sock_addr_judge(ctx, &dst, AF_INET, op);
}

static __always_inline int sock_addr6(struct bpf_sock_addr *ctx, __u16 op)
{
	struct prefix_key dst = {};
	__u32 word;

	/* user_ip6 is read one 32-bit word at a time, as the verifier requires. */
	word = ctx->user_ip6[0];
	__builtin_memcpy(&dst.addr[0], &word, 4);
	word = ctx->user_ip6[1];
	__builtin_memcpy(&dst.addr[4], &word, 4);
	word = ctx->user_ip6[2];
	__builtin_memcpy(&dst.addr[8], &word, 4);
	word = ctx->user_ip6[3];
	__builtin_memcpy(&dst.addr[12], &word, 4);
	return sock_addr_judge(ctx, &dst, AF_INET6, op);
}

SEC("cgroup/connect4")
int launch_connect4(struct bpf_sock_addr *ctx)
{
	return sock_addr4(ctx, AUDIT_OP_CONNECT);
}

SEC("cgroup/connect6")
int launch_connect6(struct bpf_sock_addr *ctx)
{
	return sock_addr6(ctx, AUDIT_OP_CONNECT);
}

SEC("cgroup/sendmsg4")
int launch_sendmsg4(struct bpf_sock_addr *ctx)
{
	return sock_addr4(ctx, AUDIT_OP_SENDMSG);
}

SEC("cgroup/sendmsg6")
int launch_sendmsg6(struct bpf_sock_addr *ctx)
{
	return sock_addr6(ctx, AUDIT_OP_SENDMSG);
}
