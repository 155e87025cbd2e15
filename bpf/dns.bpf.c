// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* recvmsg4/6, getpeername4/6: DNS replies seem to come from the resolver the job asked. */
#include "dns.bpf.h"
#include "gateway.bpf.h"

/*
 * Stub resolvers check that a reply comes from the server they asked (glibc compares the
 * source with its nameserver list), so the proxy's address is swapped back for the one the
 * job sent to, kept on the socket by dns_redirect. Nothing is decided here: recvmsg and
 * getpeername programs must return 1.
 */
static __always_inline void dns_restore4(struct bpf_sock_addr *ctx, bool getpeername)
{
	__u16 port = bpf_ntohs((__u16)ctx->user_port);
	const struct sandbox_cfg *cfg;
	struct dns_orig_dst *orig;
	__u32 ip4;

	/* Every reply of every UDP socket comes here: the sandbox is looked up for DNS only. */
	if (ctx->user_ip4 != bpf_htonl(DNS_LOOPBACK4) || !port)
		return;
	cfg = sandbox_get();
	if (!cfg || !(cfg->flags & (CFG_DNS_PROXY | CFG_GATEWAY)))
		return;
	/* The gateway's port too: a redirected TCP connection shows the address it asked for. */
	if (!((cfg->flags & CFG_DNS_PROXY) && port == cfg->dns_udp4_port) &&
	    !(getpeername && (cfg->flags & CFG_DNS_PROXY) && port == cfg->dns_tcp4_port) &&
	    !(getpeername && (cfg->flags & CFG_GATEWAY) && port == cfg->gateway_port4))
		return;
	orig = bpf_sk_storage_get(&dns_orig, ctx->sk, 0, 0);
	if (!orig || !dns_addr_is_v4(orig->addr))
		return;
	__builtin_memcpy(&ip4, &orig->addr[12], 4);
	ctx->user_ip4 = ip4;
	ctx->user_port = bpf_htons(orig->port);
}

static __always_inline void dns_restore6(struct bpf_sock_addr *ctx, bool getpeername)
{
	__u16 port = bpf_ntohs((__u16)ctx->user_port);
	const struct sandbox_cfg *cfg;
	struct dns_orig_dst *orig;
	__u8 src[16];
	__u32 word;

	word = ctx->user_ip6[0];
	__builtin_memcpy(&src[0], &word, 4);
	word = ctx->user_ip6[1];
	__builtin_memcpy(&src[4], &word, 4);
	word = ctx->user_ip6[2];
	__builtin_memcpy(&src[8], &word, 4);
	word = ctx->user_ip6[3];
	__builtin_memcpy(&src[12], &word, 4);
	/* Only the proxy's loopback addresses need the sandbox looked up (see dns_restore4). */
	if (!dns_addr_is_loopback(src))
		return;
	cfg = sandbox_get();
	if (!cfg || !(cfg->flags & (CFG_DNS_PROXY | CFG_GATEWAY)))
		return;
	if (!((cfg->flags & CFG_DNS_PROXY) && dns_is_proxy(cfg, src, port, true)) &&
	    !(getpeername && (cfg->flags & CFG_DNS_PROXY) && dns_is_proxy(cfg, src, port, false)) &&
	    !(getpeername && gateway_is_self(cfg, src, port)))
		return;
	orig = bpf_sk_storage_get(&dns_orig, ctx->sk, 0, 0);
	if (!orig)
		return;
	__builtin_memcpy(&word, &orig->addr[0], 4);
	ctx->user_ip6[0] = word;
	__builtin_memcpy(&word, &orig->addr[4], 4);
	ctx->user_ip6[1] = word;
	__builtin_memcpy(&word, &orig->addr[8], 4);
	ctx->user_ip6[2] = word;
	__builtin_memcpy(&word, &orig->addr[12], 4);
	ctx->user_ip6[3] = word;
	ctx->user_port = bpf_htons(orig->port);
}

SEC("cgroup/recvmsg4")
int launch_recvmsg4(struct bpf_sock_addr *ctx)
{
	dns_restore4(ctx, false);
	return 1;
}

SEC("cgroup/recvmsg6")
int launch_recvmsg6(struct bpf_sock_addr *ctx)
{
	dns_restore6(ctx, false);
	return 1;
}

SEC("cgroup/getpeername4")
int launch_getpeername4(struct bpf_sock_addr *ctx)
{
	dns_restore4(ctx, true);
	return 1;
}

SEC("cgroup/getpeername6")
int launch_getpeername6(struct bpf_sock_addr *ctx)
{
	dns_restore6(ctx, true);
	return 1;
}
