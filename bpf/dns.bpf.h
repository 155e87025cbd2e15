/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* DNS through the launcher's proxy: port 53 goes to the proxy, its answers open addresses. */
#ifndef LAUNCH_DNS_BPF_H
#define LAUNCH_DNS_BPF_H

#include "common.bpf.h"

#define DNS_LOOPBACK4 0x7f000001 /* 127.0.0.1 */

/* Addresses the proxy saw in an answer to the job, each with the port set it may reach. */
struct dns_allow_inner {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(key_size, sizeof(struct addr_key));
	__uint(value_size, sizeof(__u32));
	__uint(max_entries, 1);
	__uint(map_flags, BPF_F_NO_PREALLOC);
};

/* Written once each, before any address points at them, and never rewritten. */
struct dns_port_sets_inner {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, sizeof(struct port_set));
	__uint(max_entries, MAX_DNS_PORT_SETS);
};

/* Each sandbox's two maps above, at its slot (see common.bpf.h). */
struct dns_allow_map {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, MAX_SANDBOXES);
	__type(key, __u32);
	__array(values, struct dns_allow_inner);
};

struct dns_port_sets_map {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, MAX_SANDBOXES);
	__type(key, __u32);
	__array(values, struct dns_port_sets_inner);
};

struct dns_orig_map {
	__uint(type, BPF_MAP_TYPE_SK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct dns_orig_dst);
};

/* Defined once, in maps.bpf.c; every hook group is linked into one object. */
#ifdef LAUNCH_DEFINE_DNS
struct dns_allow_map dns_allow SEC(".maps");
struct dns_port_sets_map dns_port_sets SEC(".maps");
struct dns_orig_map dns_orig SEC(".maps");
#else
extern struct dns_allow_map dns_allow SEC(".maps");
extern struct dns_port_sets_map dns_port_sets SEC(".maps");
extern struct dns_orig_map dns_orig SEC(".maps");
#endif

static __always_inline bool dns_addr_is_v4(const __u8 *addr)
{
	__u32 w0, w1, w2;

	__builtin_memcpy(&w0, addr, 4);
	__builtin_memcpy(&w1, addr + 4, 4);
	__builtin_memcpy(&w2, addr + 8, 4);
	return w0 == 0 && w1 == 0 && w2 == bpf_htonl(0xffff);
}

/* 127.0.0.1 (as ::ffff:127.0.0.1) or ::1: where the proxy listens. */
static __always_inline bool dns_addr_is_loopback(const __u8 *addr)
{
	__u32 w0, w1, w2, w3;

	__builtin_memcpy(&w0, addr, 4);
	__builtin_memcpy(&w1, addr + 4, 4);
	__builtin_memcpy(&w2, addr + 8, 4);
	__builtin_memcpy(&w3, addr + 12, 4);
	return !w0 && !w1 &&
	       ((w2 == bpf_htonl(0xffff) && w3 == bpf_htonl(DNS_LOOPBACK4)) ||
		(!w2 && w3 == bpf_htonl(1)));
}

/* True for the proxy's own sockets: 127.0.0.1 (or ::ffff:127.0.0.1) and ::1 at its ports. */
static __always_inline bool dns_is_proxy(const struct sandbox_cfg *cfg, const __u8 *addr,
					 __u16 port, bool udp)
{
	__u32 w0, w1, w2, w3;

	if (!port)
		return false;
	__builtin_memcpy(&w0, addr, 4);
	__builtin_memcpy(&w1, addr + 4, 4);
	__builtin_memcpy(&w2, addr + 8, 4);
	__builtin_memcpy(&w3, addr + 12, 4);
	if (w0 || w1)
		return false;
	if (w2 == bpf_htonl(0xffff) && w3 == bpf_htonl(DNS_LOOPBACK4))
		return port == (udp ? cfg->dns_udp4_port : cfg->dns_tcp4_port);
	if (w2 == 0 && w3 == bpf_htonl(1))
		return port == (udp ? cfg->dns_udp6_port : cfg->dns_tcp6_port);
	return false;
}

/*
 * DNS of the job, to any address, goes to the proxy: the destination is rewritten in place
 * and the original one kept on the socket for recvmsg and getpeername. Returns true when the
 * call must be let through: redirected, or aimed at the proxy already.
 */
static __always_inline bool dns_redirect(const struct sandbox_cfg *cfg, struct bpf_sock_addr *ctx,
					 const struct prefix_key *dst, __u16 family, __u16 port,
					 __u32 proto)
{
	struct dns_orig_dst *orig;
	bool udp = proto == PROTO_UDP;

	if (!(cfg->flags & CFG_DNS_PROXY))
		return false;
	if (port != DNS_PORT)
		return dns_is_proxy(cfg, dst->addr, port, udp);

	orig = bpf_sk_storage_get(&dns_orig, ctx->sk, 0, BPF_SK_STORAGE_GET_F_CREATE);
	if (orig) {
		/* Without room for it the reply's source stays the proxy's: DNS still works. */
		__builtin_memcpy(orig->addr, dst->addr, sizeof(orig->addr));
		orig->port = port;
	}
	if (family == AF_INET) {
		ctx->user_ip4 = bpf_htonl(DNS_LOOPBACK4);
		ctx->user_port = bpf_htons(udp ? cfg->dns_udp4_port : cfg->dns_tcp4_port);
		return true;
	}
	/*
	 * An IPv6 socket aimed at an IPv4 resolver (::ffff:a.b.c.d) may be unable to reach ::1
	 * and is sent to ::ffff:127.0.0.1; so is every IPv6 socket when the host has no ::1.
	 */
	ctx->user_ip6[0] = 0;
	ctx->user_ip6[1] = 0;
	if (dns_addr_is_v4(dst->addr) || !cfg->dns_udp6_port || !cfg->dns_tcp6_port) {
		ctx->user_ip6[2] = bpf_htonl(0xffff);
		ctx->user_ip6[3] = bpf_htonl(DNS_LOOPBACK4);
		ctx->user_port = bpf_htons(udp ? cfg->dns_udp4_port : cfg->dns_tcp4_port);
	} else {
		ctx->user_ip6[2] = 0;
		ctx->user_ip6[3] = bpf_htonl(1);
		ctx->user_port = bpf_htons(udp ? cfg->dns_udp6_port : cfg->dns_tcp6_port);
	}
	return true;
}

/* Whether an answer of the proxy opened the address, for whatever ports. */
static __always_inline bool dns_answered(const struct sandbox_cfg *cfg,
					 const struct prefix_key *dst)
{
	__u32 slot = cfg->slot;
	void *map;

	if (!(cfg->flags & CFG_DNS_PROXY))
		return false;
	map = bpf_map_lookup_elem(&dns_allow, &slot);
	return map && bpf_map_lookup_elem(map, dst->addr);
}

/* The addresses opened by answers of the proxy, with the ports of the rule that named them. */
static __always_inline bool dns_allows(const struct sandbox_cfg *cfg, const struct prefix_key *dst,
				       __u16 port, __u32 proto)
{
	__u32 slot = cfg->slot, *set_id, id;
	struct port_set *set;
	void *map;

	if (!(cfg->flags & CFG_DNS_PROXY))
		return false;
	map = bpf_map_lookup_elem(&dns_allow, &slot);
	set_id = map ? bpf_map_lookup_elem(map, dst->addr) : NULL;
	if (!set_id)
		return false;
	id = *set_id & ~DNS_SET_GATEWAY;
	map = bpf_map_lookup_elem(&dns_port_sets, &slot);
	set = map ? bpf_map_lookup_elem(map, &id) : NULL;
	return set && port_set_allows(set, port, proto);
}

#endif /* LAUNCH_DNS_BPF_H */
