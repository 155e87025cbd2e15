/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The HTTPS gateway: TCP connects to a host rule with "http" go to the launcher's gateway, and
 * UDP to its addresses is refused.
 */
#ifndef LAUNCH_GATEWAY_BPF_H
#define LAUNCH_GATEWAY_BPF_H

#include "common.bpf.h"
#include "allowlist.bpf.h"
#include "dns.bpf.h"

/* The flags of an exact address of the policy (resolved at start); 0 when it has none. */
static __always_inline __u32 gateway_exact_flags(const struct sandbox_cfg *cfg,
						 const struct prefix_key *dst)
{
	const struct allow_value *value = NULL;
	__u32 slot = cfg->slot;
	void *map;

	if (!(cfg->flags & CFG_HAS_EXACT))
		return 0;
	if (cfg->ninline_exact) {
		value = inline_lookup(cfg, dst);
	} else {
		map = bpf_map_lookup_elem(&allow_exact, &slot);
		if (map)
			value = bpf_map_lookup_elem(map, dst->addr);
	}
	return value ? value->flags : 0;
}

/* Whether a DNS answer for a gateway host's name opened the address. */
static __always_inline bool gateway_dns_answered(const struct sandbox_cfg *cfg,
						 const struct prefix_key *dst)
{
	__u32 slot = cfg->slot, *set_id;
	void *map;

	if (!(cfg->flags & CFG_DNS_PROXY))
		return false;
	map = bpf_map_lookup_elem(&dns_allow, &slot);
	set_id = map ? bpf_map_lookup_elem(map, dst->addr) : NULL;
	return set_id && (*set_id & DNS_SET_GATEWAY);
}

/* Whether the address is a gateway host's: exact (ALLOW_GATEWAY) or answered by DNS. */
static __always_inline bool gateway_host_addr(const struct sandbox_cfg *cfg,
					      const struct prefix_key *dst)
{
	return (gateway_exact_flags(cfg, dst) & ALLOW_GATEWAY) || gateway_dns_answered(cfg, dst);
}

/*
 * UDP to a gateway host's address would be HTTP/3 (QUIC) to the provider with the job's own
 * key, around the gateway: refused whatever other rule (a cidr, another name on the same
 * address) allows it. Port 53 went to the DNS proxy before this is asked.
 */
static __always_inline bool gateway_refuses_udp(const struct sandbox_cfg *cfg,
						const struct prefix_key *dst, __u32 proto)
{
	return proto == PROTO_UDP && (cfg->flags & CFG_GATEWAY) && gateway_host_addr(cfg, dst);
}

/* 127.0.0.1 (or ::ffff:127.0.0.1) or ::1 at the gateway's port for this sandbox. */
static __always_inline bool gateway_is_self(const struct sandbox_cfg *cfg, const __u8 *addr,
					    __u16 port)
{
	__u32 w0, w1, w2, w3;

	__builtin_memcpy(&w0, addr, 4);
	__builtin_memcpy(&w1, addr + 4, 4);
	__builtin_memcpy(&w2, addr + 8, 4);
	__builtin_memcpy(&w3, addr + 12, 4);
	if (w0 || w1)
		return false;
	if (w2 == bpf_htonl(0xffff) && w3 == bpf_htonl(DNS_LOOPBACK4))
		return cfg->gateway_port4 && port == cfg->gateway_port4;
	if (w2 == 0 && w3 == bpf_htonl(1))
		return cfg->gateway_port6 && port == cfg->gateway_port6;
	return false;
}

/*
 * A TCP connect to a gateway host's address is rewritten to the gateway's loopback port, the
 * original destination kept on the socket for getpeername (dns_restore4/6). Returns true
 * when the call must be let through: redirected, or aimed at the gateway already.
 */
static __always_inline bool gateway_redirect(const struct sandbox_cfg *cfg,
					     struct bpf_sock_addr *ctx,
					     const struct prefix_key *dst, __u16 family, __u16 port,
					     __u32 proto)
{
	struct dns_orig_dst *orig;

	if (!(cfg->flags & CFG_GATEWAY) || proto != PROTO_TCP)
		return false;
	if (gateway_is_self(cfg, dst->addr, port))
		return true;
	if (!gateway_host_addr(cfg, dst))
		return false;
	orig = bpf_sk_storage_get(&dns_orig, ctx->sk, 0, BPF_SK_STORAGE_GET_F_CREATE);
	if (orig) {
		__builtin_memcpy(orig->addr, dst->addr, sizeof(orig->addr));
		orig->port = port;
	}
	if (family == AF_INET) {
		ctx->user_ip4 = bpf_htonl(DNS_LOOPBACK4);
		ctx->user_port = bpf_htons(cfg->gateway_port4);
		return true;
	}
	/* As dns_redirect: an IPv4-mapped destination, or no ::1, goes to ::ffff:127.0.0.1. */
	ctx->user_ip6[0] = 0;
	ctx->user_ip6[1] = 0;
	if (dns_addr_is_v4(dst->addr) || !cfg->gateway_port6) {
		ctx->user_ip6[2] = bpf_htonl(0xffff);
		ctx->user_ip6[3] = bpf_htonl(DNS_LOOPBACK4);
		ctx->user_port = bpf_htons(cfg->gateway_port4);
	} else {
		ctx->user_ip6[2] = 0;
		ctx->user_ip6[3] = bpf_htonl(1);
		ctx->user_port = bpf_htons(cfg->gateway_port6);
	}
	return true;
}

#endif /* LAUNCH_GATEWAY_BPF_H */
