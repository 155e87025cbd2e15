// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The job as a server: it may bind on loopback only, and only peers inside its sandbox may
 * connect to it, unless a policy's "listen" names the port (docs/policy.md). listen() itself
 * is judged by the launcher, through the seccomp filter (seccomp.c, inbound.c).
 */
#include "common.bpf.h"

#define ETH_P_IP   0x0800
#define ETH_P_IPV6 0x86DD

/* 127.0.0.0/8, ::1 and ::ffff:127.0.0.0/104, in the IPv4-mapped form of struct addr_key. */
static __always_inline bool addr_is_loopback(const __u8 addr[16])
{
	__u32 w[4];

	__builtin_memcpy(w, addr, sizeof(w));
	if (w[0] || w[1])
		return false;
	if (w[2] == bpf_htonl(0xffff))
		return addr[12] == 127;
	return !w[2] && w[3] == bpf_htonl(1);
}

static __always_inline bool listen_allows(const struct sandbox_cfg *cfg, __u16 port, __u32 proto)
{
	return cfg->listen.nranges && port_set_allows(&cfg->listen, port, proto);
}

static __always_inline void addr_from_ip4(__u8 addr[16], __u32 ip4)
{
	__builtin_memset(addr, 0, 16);
	addr[10] = 0xff;
	addr[11] = 0xff;
	__builtin_memcpy(&addr[12], &ip4, 4);
}

/*
 * bind(): any address with port 0 (an outgoing socket's own choice, and what listen()
 * judges again), loopback with any port, and elsewhere the "listen" ports. A UDP socket
 * bound to a wildcard port receives from anyone, but answers only where the allowlist lets
 * it send.
 */
static __always_inline int bind_judge(struct bpf_sock_addr *ctx, const __u8 addr[16], __u16 family)
{
	const struct sandbox_cfg *cfg = sandbox_get();
	__u16 port = bpf_ntohs((__u16)ctx->user_port);
	__u32 proto = ctx->protocol == IPPROTO_UDP ? PROTO_UDP : PROTO_TCP;
	struct deny_event *event;

	if (!cfg)
		return 0;
	/* A listener's, and the connections it accepts': what launch_ingress names. */
	sock_owner_record(ctx->sk);
	if (port == 0 || addr_is_loopback(addr) || listen_allows(cfg, port, proto))
		return 1;
	event = audit_reserve(cfg, AUDIT_OP_BIND, family);
	if (event) {
		event->sock_type = ctx->type;
		event->protocol = ctx->protocol;
		event->port = port;
		event->reason = AUDIT_REASON_ADDRESS;
		__builtin_memcpy(event->addr, addr, sizeof(event->addr));
		bpf_ringbuf_submit(event, 0);
	}
	return 0;
}

SEC("cgroup/bind4")
int launch_bind4(struct bpf_sock_addr *ctx)
{
	__u8 addr[16];

	addr_from_ip4(addr, ctx->user_ip4);
	return bind_judge(ctx, addr, AF_INET);
}

SEC("cgroup/bind6")
int launch_bind6(struct bpf_sock_addr *ctx)
{
	__u8 addr[16];
	__u32 word;

	/* user_ip6 is read one 32-bit word at a time, as the verifier requires. */
	word = ctx->user_ip6[0];
	__builtin_memcpy(&addr[0], &word, 4);
	word = ctx->user_ip6[1];
	__builtin_memcpy(&addr[4], &word, 4);
	word = ctx->user_ip6[2];
	__builtin_memcpy(&addr[8], &word, 4);
	word = ctx->user_ip6[3];
	__builtin_memcpy(&addr[12], &word, 4);
	return bind_judge(ctx, addr, AF_INET6);
}

/* A packet to a listener: addresses in the IPv4-mapped form, ports in host byte order. */
struct syn_info {
	__u8 saddr[16], daddr[16];
	__u16 sport, dport;
	__u16 family;
	struct bpf_sock_tuple tuple; /* the peer's side: as a packet to the peer would carry */
};

/*
 * Reads the addresses and ports of a TCP packet. False when they cannot be read: an IPv6
 * packet with extension headers before TCP among them (which the caller refuses: a peer
 * may add a header on purpose to hide its ports).
 */
static __always_inline bool syn_parse(struct __sk_buff *skb, struct syn_info *syn)
{
	__u32 off;

	if (skb->protocol == bpf_htons(ETH_P_IP)) {
		struct iphdr ip;

		if (bpf_skb_load_bytes(skb, 0, &ip, sizeof(ip)) < 0 || ip.protocol != IPPROTO_TCP)
			return false;
		off = (ip.ihl & 0xf) * 4;
		addr_from_ip4(syn->saddr, ip.saddr);
		addr_from_ip4(syn->daddr, ip.daddr);
		syn->family = AF_INET;
		syn->tuple.ipv4.saddr = ip.daddr;
		syn->tuple.ipv4.daddr = ip.saddr;
	} else if (skb->protocol == bpf_htons(ETH_P_IPV6)) {
		struct ipv6hdr ip6;

		if (bpf_skb_load_bytes(skb, 0, &ip6, sizeof(ip6)) < 0)
			return false;
		__builtin_memcpy(syn->saddr, &ip6.saddr, 16);
		__builtin_memcpy(syn->daddr, &ip6.daddr, 16);
		syn->family = AF_INET6;
		if (ip6.nexthdr != IPPROTO_TCP)
			return false;
		off = sizeof(ip6);
		__builtin_memcpy(syn->tuple.ipv6.saddr, &ip6.daddr, 16);
		__builtin_memcpy(syn->tuple.ipv6.daddr, &ip6.saddr, 16);
	} else {
		return false;
	}
	/* The ports: the first 4 bytes of the TCP header. */
	if (bpf_skb_load_bytes(skb, off, &syn->sport, 4) < 0)
		return false;
	if (syn->family == AF_INET) {
		syn->tuple.ipv4.sport = syn->dport;
		syn->tuple.ipv4.dport = syn->sport;
	} else {
		syn->tuple.ipv6.sport = syn->dport;
		syn->tuple.ipv6.dport = syn->sport;
	}
	syn->sport = bpf_ntohs(syn->sport);
	syn->dport = bpf_ntohs(syn->dport);
	return true;
}

/*
 * A packet to one of the job's listeners (a connection request, or the handshake's last
 * ACK, which the listener receives too): let in when the port is a "listen" one, or when the
 * connecting socket belongs to this sandbox. Loopback strips a packet of its sender, so the
 * sender's socket is looked up by the connection's addresses; it is in the established
 * table from connect() on. Packets to any other socket pass at the cost of one load: this is
 * no firewall for the job's own connections, which the address hooks judge.
 */
SEC("cgroup_skb/ingress")
int launch_ingress(struct __sk_buff *skb)
{
	const struct sandbox_cfg *cfg;
	struct syn_info syn = {};
	struct deny_event *event;
	struct bpf_sock *sk = skb->sk, *peer = NULL;
	bool inside = false;

	if (!sk || sk->state != BPF_TCP_LISTEN)
		return 1;
	cfg = sandbox_get();
	if (!cfg)
		return 0;
	/* The listener's own port: it needs no parsing, which a peer could get in the way of. */
	if (listen_allows(cfg, (__u16)sk->src_port, PROTO_TCP))
		return 1;
	if (syn_parse(skb, &syn)) {
		/* The verifier wants the tuple's size as a constant. */
		if (syn.family == AF_INET)
			peer = bpf_sk_lookup_tcp(skb, &syn.tuple, sizeof(syn.tuple.ipv4),
						 BPF_F_CURRENT_NETNS, 0);
		else
			peer = bpf_sk_lookup_tcp(skb, &syn.tuple, sizeof(syn.tuple.ipv6),
						 BPF_F_CURRENT_NETNS, 0);
	}
	if (peer) {
		inside = bpf_sk_cgroup_id(peer) == cfg->cgroup_id;
		bpf_sk_release(peer);
	}
	if (inside)
		return 1;
	/* The process named is the listener's owner, not whichever task the packet came in on. */
	event = audit_reserve_sk(cfg, AUDIT_OP_LISTEN, syn.family ? syn.family : AF_INET6, sk);
	if (event) {
		event->sock_type = SOCK_STREAM;
		event->protocol = IPPROTO_TCP;
		event->port = (__u16)sk->src_port;
		event->reason = AUDIT_REASON_PEER;
		__builtin_memcpy(event->addr, syn.daddr, sizeof(event->addr));
		__builtin_memcpy(event->peer_addr, syn.saddr, sizeof(event->peer_addr));
		event->peer_port = syn.sport;
		bpf_ringbuf_submit(event, 0);
	}
	return 0;
}
