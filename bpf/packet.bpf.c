// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * cgroup_skb/egress, the second line of defence: every packet a socket of the sandbox sends
 * is judged by its real IP destination, whatever the address hooks were shown.
 */
#include "common.bpf.h"
#include "allowlist.bpf.h"
#include "dns.bpf.h"
#include "sni.bpf.h"

/* uapi/linux/in6.h: next header values of IPv6 extension headers. */
#define NEXTHDR_HOP	 0
#define NEXTHDR_ROUTING	 43
#define NEXTHDR_FRAGMENT 44
#define NEXTHDR_AUTH	 51
#define NEXTHDR_DEST	 60
/* Extension headers walked before the transport header; more is refused as unreadable. */
#define PACKET_MAX_EXT_HEADERS 8

#define IP_OFFSET_MASK	0x1fff /* iphdr.frag_off: the fragment offset */
#define IP6_OFFSET_MASK 0xfff8 /* frag_hdr.frag_off: the fragment offset */
#define TCP_LISTEN	10

/* What the backstop reads of a packet. */
struct packet_info {
	struct prefix_key dst; /* the real destination; IPv4 as ::ffff:a.b.c.d */
	__u16 family;
	__u16 port;	     /* destination port, host byte order; 0 when unknown */
	__u32 proto;	     /* PROTO_TCP, PROTO_UDP or 0 */
	__u8 ip_proto;	     /* the transport protocol's number */
	__u32 l4_off;	     /* where the transport header starts */
	bool later_fragment; /* no transport header: judged by address alone */
};

/*
 * Reads the IPv4 header; the transport header's offset goes to *ret_off. Returns 0, or the
 * reason to drop the packet.
 */
static __always_inline __u32 packet_parse4(struct __sk_buff *skb, struct packet_info *info,
					   __u32 *ret_off)
{
	struct iphdr iph;

	if (bpf_skb_load_bytes(skb, 0, &iph, sizeof(iph)) < 0)
		return PACKET_DROP_MALFORMED;
	info->family = AF_INET;
	info->dst.addr[10] = 0xff;
	info->dst.addr[11] = 0xff;
	__builtin_memcpy(&info->dst.addr[12], &iph.daddr, 4);
	info->ip_proto = iph.protocol;
	info->later_fragment = (bpf_ntohs(iph.frag_off) & IP_OFFSET_MASK) != 0;
	*ret_off = (__u32)iph.ihl * 4;
	/*
	 * Any option: the job can set none (setsockopt refuses IP_OPTIONS), but IP_RETOPTS on
	 * sendmsg carries options per datagram, a source route among them where the kernel
	 * allows it, and no option is needed by a job.
	 */
	return iph.ihl != 5 ? PACKET_DROP_IP_OPTIONS : 0;
}

/*
 * Reads the IPv6 header and walks the extension headers to the transport header, whose
 * offset goes to *ret_off. Returns 0, or the reason to drop the packet.
 */
static __always_inline __u32 packet_parse6(struct __sk_buff *skb, struct packet_info *info,
					   __u32 *ret_off)
{
	struct ipv6hdr ip6;
	__u32 off = sizeof(ip6), reason = 0;
	__u8 nexthdr;

	if (bpf_skb_load_bytes(skb, 0, &ip6, sizeof(ip6)) < 0)
		return PACKET_DROP_MALFORMED;
	info->family = AF_INET6;
	__builtin_memcpy(info->dst.addr, &ip6.daddr, sizeof(info->dst.addr));
	nexthdr = ip6.nexthdr;
#pragma unroll
	for (int i = 0; i < PACKET_MAX_EXT_HEADERS; i++) {
		__u8 ext[4];

		switch (nexthdr) {
		case NEXTHDR_ROUTING:
			/*
			 * The packet goes to the header's next segment, not to the address that
			 * was judged; walked on only to name the port in the log.
			 */
			reason = PACKET_DROP_ROUTING_HEADER;
			/* fallthrough */
		case NEXTHDR_HOP:
		case NEXTHDR_DEST:
		case NEXTHDR_AUTH:
		case NEXTHDR_FRAGMENT:
			if (bpf_skb_load_bytes(skb, off, ext, sizeof(ext)) < 0)
				return PACKET_DROP_MALFORMED;
			if (nexthdr == NEXTHDR_FRAGMENT) {
				info->later_fragment |=
					(((__u16)ext[2] << 8 | ext[3]) & IP6_OFFSET_MASK) != 0;
				off += 8;
			} else if (nexthdr == NEXTHDR_AUTH) {
				off += ((__u32)ext[1] + 2) << 2;
			} else {
				off += ((__u32)ext[1] + 1) << 3;
			}
			nexthdr = ext[0];
			continue;
		default:
			info->ip_proto = nexthdr;
			*ret_off = off;
			return reason;
		}
	}
	return PACKET_DROP_MALFORMED;
}

/*
 * The packets a job sends nearly always: IPv4 without options or IPv6 without extension
 * headers, TCP or UDP, not a later fragment. Read in place, their headers being in the
 * packet's linear part, with no helper call; false for any other packet, or one whose
 * headers are not where this reads them, which packet_parse then reads whole.
 */
static __always_inline bool packet_parse_common(struct __sk_buff *skb, struct packet_info *info)
{
	void *data = (void *)(long)skb->data;
	void *end = (void *)(long)skb->data_end;
	__u16 *ports;
	__u8 ip_proto;

	if (data + sizeof(struct ipv6hdr) + 4 <= end && ((__u8 *)data)[0] >> 4 == 6) {
		struct ipv6hdr *ip6 = data;

		ip_proto = ip6->nexthdr;
		ports = data + sizeof(*ip6);
		info->l4_off = sizeof(*ip6);
		info->family = AF_INET6;
		__builtin_memcpy(info->dst.addr, &ip6->daddr, sizeof(info->dst.addr));
	} else if (data + sizeof(struct iphdr) + 4 <= end && ((__u8 *)data)[0] == 0x45) {
		/* Version 4, ihl 5: no options. */
		struct iphdr *iph = data;

		if (iph->frag_off & bpf_htons(IP_OFFSET_MASK))
			return false;
		ip_proto = iph->protocol;
		ports = data + sizeof(*iph);
		info->l4_off = sizeof(*iph);
		info->family = AF_INET;
		info->dst.addr[10] = 0xff;
		info->dst.addr[11] = 0xff;
		__builtin_memcpy(&info->dst.addr[12], &iph->daddr, 4);
	} else {
		return false;
	}
	if (ip_proto == IPPROTO_TCP)
		info->proto = PROTO_TCP;
	else if (ip_proto == IPPROTO_UDP)
		info->proto = PROTO_UDP;
	else
		return false;
	info->ip_proto = ip_proto;
	/* The destination port follows the source port in both. */
	info->port = bpf_ntohs(ports[1]);
	return true;
}

/*
 * Reads any other packet with bpf_skb_load_bytes, wherever its headers lie. Returns 0, or the
 * reason to drop the packet.
 */
static __noinline __u32 packet_parse(struct __sk_buff *skb, struct packet_info *info)
{
	__u32 off = 0, reason;
	__u8 version = 0;
	__u16 port;

	if (bpf_skb_load_bytes(skb, 0, &version, 1) < 0)
		version = 0;
	if (version >> 4 == 4)
		reason = packet_parse4(skb, info, &off);
	else if (version >> 4 == 6)
		reason = packet_parse6(skb, info, &off);
	else
		reason = PACKET_DROP_MALFORMED;
	if (reason != PACKET_DROP_MALFORMED && !info->later_fragment &&
	    (info->ip_proto == IPPROTO_TCP || info->ip_proto == IPPROTO_UDP)) {
		/* The destination port follows the source port in both. */
		info->l4_off = off;
		if (bpf_skb_load_bytes(skb, off + 2, &port, sizeof(port)) < 0) {
			reason = reason ?: PACKET_DROP_MALFORMED;
		} else {
			info->port = bpf_ntohs(port);
			info->proto = info->ip_proto == IPPROTO_TCP ? PROTO_TCP : PROTO_UDP;
		}
	}
	return reason;
}

/* Whether the packet goes to the peer of its own socket, which connect judged. */
static __always_inline bool packet_to_peer(const struct bpf_sock *sk,
					   const struct packet_info *info)
{
	__u32 words[4];

	__builtin_memcpy(words, info->dst.addr, sizeof(words));
	if (!info->later_fragment && bpf_ntohs(sk->dst_port) != info->port)
		return false;
	if (info->family == AF_INET)
		return sk->dst_ip4 && sk->dst_ip4 == words[3];
	return (sk->dst_ip6[0] | sk->dst_ip6[1] | sk->dst_ip6[2] | sk->dst_ip6[3]) &&
	       sk->dst_ip6[0] == words[0] && sk->dst_ip6[1] == words[1] &&
	       sk->dst_ip6[2] == words[2] && sk->dst_ip6[3] == words[3];
}

/*
 * The decision, for a packet that the headers let through. The address hooks judged the
 * socket's peer (connect) or each datagram's address (sendmsg), so what they allowed passes
 * here the same way; what differs is a packet routed elsewhere than the address judged.
 */
static __always_inline bool packet_allowed(const struct sandbox_cfg *cfg, struct __sk_buff *skb,
					   struct packet_info *info)
{
	struct bpf_sock *sk = skb->sk;

	if (sk) {
		/* SYN-ACKs to whoever connected in: who may is the listener's business. */
		if (sk->state == TCP_LISTEN)
			return true;
		/* Connected: its peer was judged once, and stays allowed for the connection. */
		if (packet_to_peer(sk, info))
			return true;
	}
	if (info->later_fragment || !info->proto)
		return false;
	/* Port 53 went to the proxy: the packet's destination is the proxy's loopback port. */
	if ((cfg->flags & CFG_DNS_PROXY) &&
	    dns_is_proxy(cfg, info->dst.addr, info->port, info->proto == PROTO_UDP))
		return true;
	/* An unconnected datagram: sendmsg may have judged and remembered its destination. */
	if (sk && info->proto == PROTO_UDP && allowlist_in_maps(cfg) &&
	    allowlist_sent(cfg, sk, &info->dst, info->port, info->proto))
		return true;
	return allowlist_allows(cfg, &info->dst, info->port, info->proto) ||
	       dns_allows(cfg, &info->dst, info->port, info->proto);
}

/*
 * Counts a drop, and logs it unless this CPU has logged PACKET_LOG_BURST drops in the current
 * window (launch.h).
 */
static __noinline void packet_log_drop(const struct sandbox_cfg *cfg, struct bpf_sock *sk,
				       const struct packet_info *info, __u32 reason)
{
	struct sandbox_counters *counters = bpf_get_local_storage(&sandbox_states, 0);
	__u64 now = bpf_ktime_get_ns();
	struct deny_event *event;

	__sync_fetch_and_add(&counters->packet_dropped, 1);
	if (now - counters->packet_window_ns >= PACKET_LOG_WINDOW_NS) {
		counters->packet_window_ns = now;
		counters->packet_logged = 0;
	}
	if (counters->packet_logged >= PACKET_LOG_BURST)
		return;
	counters->packet_logged++;
	/*
	 * A packet may leave from softirq (a retransmission), where the current task is anyone,
	 * and this hook may not ask the task anyway: the process named is the socket's owner.
	 */
	event = audit_event_reserve_sk(cfg, AUDIT_OP_PACKET, info->family, sk);
	if (!event)
		return;
	event->protocol = info->ip_proto;
	event->port = info->port;
	event->reason = reason;
	__builtin_memcpy(event->addr, info->dst.addr, sizeof(event->addr));
	bpf_ringbuf_submit(event, 0);
}

/*
 * The SNI check's backstop: a TCP segment that carries payload on a connection whose first
 * record was not judged (still pending: data sent before sk_msg could see it, such as TCP
 * Fast Open's in the SYN) or was refused. The handshake, ACKs, FIN and RST carry none.
 *
 * A connection with no sni_state to an SNI-checked address and port is unjudged too: sockops
 * could not store its mark (bpf_sk_storage_get fails only when the kernel is out of memory),
 * or it was made before a DNS answer or launch update made the address SNI-checked. Judged by
 * the packet's own destination, the one sockops saw at connect: a connection the connect hooks
 * redirected (DNS proxy, gateway) goes to the launcher's loopback port, not to the address the
 * job asked for (a gateway host's is SNI-checked on 443 by default), and passes as before. A
 * judged connection must keep its state (SNI_STATE_PASSED): without it, it would be dropped.
 */
static __always_inline bool packet_tls_unjudged(const struct sandbox_cfg *cfg,
						struct __sk_buff *skb,
						const struct packet_info *info)
{
	struct bpf_sock *sk = skb->sk;
	struct sni_state *st;
	__u8 doff = 0;

	if (!(cfg->flags & CFG_HAS_SNI) || info->proto != PROTO_TCP || !sk)
		return false;
	sk = bpf_sk_fullsock(sk);
	if (!sk)
		return false;
	st = bpf_sk_storage_get(&sni_states, sk, 0, 0);
	if (st && st->state == SNI_STATE_PASSED)
		return false;
	/* The data offset, in 32-bit words, is the high nibble of the TCP header's byte 12. */
	if (bpf_skb_load_bytes(skb, info->l4_off + 12, &doff, 1) == 0 &&
	    skb->len <= info->l4_off + (__u32)(doff >> 4) * 4)
		return false;
	if (st)
		return true;
	/*
	 * What a connection not SNI-checked pays here, in a sandbox that checks names: the
	 * one-byte read above for each segment and, for one with payload alone (a GSO segment
	 * of up to 64 KiB is one), a per-CPU array and one or two hash look-ups (sni_allow,
	 * then dns_sni_allow), which sockops paid once at connect. A pure ACK, the bulk of what
	 * a download sends, stops at the test above.
	 */
	return sni_mark(cfg, info->dst.addr, info->port, SNI_SCRATCH_SKB) != 0;
}

/* Returns 1 to let the packet leave, 0 to drop it (the sender's call fails with EPERM). */
SEC("cgroup_skb/egress")
int launch_egress(struct __sk_buff *skb)
{
	const struct sandbox_cfg *cfg = sandbox_get();
	struct packet_info info = {};
	__u32 reason = 0;

	if (!cfg)
		return 0;
	info.dst.prefixlen = 128;
	if (!packet_parse_common(skb, &info)) {
		/* Whatever the in-place read filled in, the general one starts from nothing. */
		__builtin_memset(&info, 0, sizeof(info));
		info.dst.prefixlen = 128;
		reason = packet_parse(skb, &info);
	}
	if (!reason && packet_tls_unjudged(cfg, skb, &info))
		reason = PACKET_DROP_TLS_UNJUDGED;
	if (!reason) {
		/*
		 * Audit-only: the address hooks let the call through and logged it as
		 * would_deny; its packets must leave too. A packet routed elsewhere (options,
		 * routing headers) is dropped all the same: no policy allows that.
		 */
		if ((cfg->flags & CFG_AUDIT_ONLY) || packet_allowed(cfg, skb, &info))
			return 1;
		reason = PACKET_DROP_DESTINATION;
	}
	packet_log_drop(cfg, skb->sk, &info, reason);
	return 0;
}
