/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* DNS through the launcher's proxy: port 53 goes to the proxy, its answers open addresses. */
#ifndef LAUNCH_DNS_BPF_H
#define LAUNCH_DNS_BPF_H

#include "common.bpf.h"

#define DNS_LOOPBACK4 0x7f000001 /* 127.0.0.1 */

/* Addresses the proxy saw in an answer to the job, each with the port set it may reach. */
struct dns_allow_map {
	__uint(type, BPF_MAP_TYPE_HASH);
	__type(key, struct addr_key);
	__type(value, __u32);
	__uint(max_entries, MAX_DNS_ALLOW_ENTRIES);
	__uint(map_flags, BPF_F_NO_PREALLOC);
};

/* Written once each, before any address points at them, and never rewritten. */
struct dns_port_sets_map {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__type(key, __u32);
	__type(value, struct port_set);
	__uint(max_entries, MAX_DNS_PORT_SETS);
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
/*
 * Where the proxy listens (ports in host byte order; the 6s are 0 when the host has no ::1).
 * Scalars in .bss, written by the launcher after load and before attach.
 */
__u32 dns_proxy_enabled = 0;
__u16 dns_udp4_port = 0, dns_tcp4_port = 0, dns_udp6_port = 0, dns_tcp6_port = 0;
#else
extern struct dns_allow_map dns_allow SEC(".maps");
extern struct dns_port_sets_map dns_port_sets SEC(".maps");
extern struct dns_orig_map dns_orig SEC(".maps");
extern __u32 dns_proxy_enabled;
extern __u16 dns_udp4_port, dns_tcp4_port, dns_udp6_port, dns_tcp6_port;
#endif

static __always_inline bool dns_addr_is_v4(const __u8 *addr)
{
	__u32 w0, w1, w2;

	__builtin_memcpy(&w0, addr, 4);
	__builtin_memcpy(&w1, addr + 4, 4);
	__builtin_memcpy(&w2, addr + 8, 4);
	return w0 == 0 && w1 == 0 && w2 == bpf_htonl(0xffff);
}

/* True for the proxy's own sockets: 127.0.0.1 (or ::ffff:127.0.0.1) and ::1 at its ports. */
static __always_inline bool dns_is_proxy(const __u8 *addr, __u16 port, bool udp)
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
		return port == (udp ? dns_udp4_port : dns_tcp4_port);
	if (w2 == 0 && w3 == bpf_htonl(1))
		return port == (udp ? dns_udp6_port : dns_tcp6_port);
	return false;
}

/*
 * DNS of the job, to any address, goes to the proxy: the destination is rewritten in place
 * and the original one kept on the socket for recvmsg and getpeername. Returns true when the
 * call must be let through: redirected, or aimed at the proxy already.
 */
static __always_inline bool dns_redirect(struct bpf_sock_addr *ctx, const struct prefix_key *dst,
					 __u16 family, __u16 port, __u32 proto)
{
	struct dns_orig_dst *orig;
	bool udp = proto == PROTO_UDP;

	if (!dns_proxy_enabled)
		return false;
	if (port != DNS_PORT)
		return dns_is_proxy(dst->addr, port, udp);

	orig = bpf_sk_storage_get(&dns_orig, ctx->sk, 0, BPF_SK_STORAGE_GET_F_CREATE);
	if (orig) {
		/* Without room for it the reply's source stays the proxy's: DNS still works. */
		__builtin_memcpy(orig->addr, dst->addr, sizeof(orig->addr));
		orig->port = port;
	}
	if (family == AF_INET) {
		ctx->user_ip4 = bpf_htonl(DNS_LOOPBACK4);
		ctx->user_port = bpf_htons(udp ? dns_udp4_port : dns_tcp4_port);
		return true;
	}
	/*
	 * An IPv6 socket aimed at an IPv4 resolver (::ffff:a.b.c.d) may be unable to reach ::1
	 * and is sent to ::ffff:127.0.0.1; so is every IPv6 socket when the host has no ::1.
	 */
	ctx->user_ip6[0] = 0;
	ctx->user_ip6[1] = 0;
	if (dns_addr_is_v4(dst->addr) || !dns_udp6_port || !dns_tcp6_port) {
		ctx->user_ip6[2] = bpf_htonl(0xffff);
		ctx->user_ip6[3] = bpf_htonl(DNS_LOOPBACK4);
		ctx->user_port = bpf_htons(udp ? dns_udp4_port : dns_tcp4_port);
	} else {
		ctx->user_ip6[2] = 0;
		ctx->user_ip6[3] = bpf_htonl(1);
		ctx->user_port = bpf_htons(udp ? dns_udp6_port : dns_tcp6_port);
	}
	return true;
}

/* The addresses opened by answers of the proxy, with the ports of the rule that named them. */
static __always_inline bool dns_allows(const struct prefix_key *dst, __u16 port, __u32 proto)
{
	struct port_set *set;
	__u32 *set_id;

	if (!dns_proxy_enabled)
		return false;
	set_id = bpf_map_lookup_elem(&dns_allow, dst->addr);
	if (!set_id)
		return false;
	set = bpf_map_lookup_elem(&dns_port_sets, set_id);
	return set && port_set_allows(set, port, proto);
}

#endif /* LAUNCH_DNS_BPF_H */
