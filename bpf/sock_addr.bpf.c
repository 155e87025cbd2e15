// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* connect4/6 and sendmsg4/6: a destination leaves only if the allowlist has it. */
#include "common.bpf.h"
#include "allowlist.bpf.h"
#include "dns.bpf.h"
#include "gateway.bpf.h"
#include "sni.bpf.h"

/* Logs a connect or sendmsg judged `verdict`. */
static __always_inline void sock_addr_log(const struct sandbox_cfg *cfg, struct bpf_sock_addr *ctx,
					  const struct prefix_key *dst, __u16 family, __u16 op,
					  __u16 port, __u16 verdict)
{
	struct deny_event *event = audit_reserve_verdict(cfg, op, family, verdict);

	if (event) {
		event->sock_type = ctx->type;
		event->protocol = ctx->protocol;
		event->port = port;
		__builtin_memcpy(event->addr, dst->addr, sizeof(event->addr));
		bpf_ringbuf_submit(event, 0);
	}
}

/*
 * QUIC is TLS over UDP, whose name the sk_msg check never sees: UDP to an address and port
 * whose TCP is SNI-checked is refused unless the rule that checks it allows UDP too
 * (docs/policy.md, "sni").
 */
static __always_inline bool sni_refuses_udp(const struct sandbox_cfg *cfg,
					    const struct prefix_key *dst, __u16 port, __u32 proto)
{
	__u32 mark;

	if (proto != PROTO_UDP || !(cfg->flags & CFG_HAS_SNI))
		return false;
	mark = sni_mark(cfg, dst->addr, port, SNI_SCRATCH_ADDR);
	return mark && !(mark & SNI_MARK_UDP);
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

	if (!cfg)
		return 0;
	/* Who sends on the socket: what launch_egress names when it drops a packet. */
	sock_owner_record(ctx->sk);
	if (type == SOCK_STREAM && ctx->protocol == IPPROTO_TCP)
		proto = PROTO_TCP;
	else if (type == SOCK_DGRAM && ctx->protocol == IPPROTO_UDP)
		proto = PROTO_UDP;

	dst->prefixlen = 128;
	/* DNS goes to the launcher's proxy whatever the address (docs/dns.md). */
	if (proto && dns_redirect(cfg, ctx, dst, family, port, proto))
		return 1;
	/* Before the allowlist: a gateway host's address is never reached itself. */
	if (op == AUDIT_OP_CONNECT && gateway_redirect(cfg, ctx, dst, family, port, proto))
		return 1;
	if (proto &&
	    ((op == AUDIT_OP_SENDMSG ? allowlist_allows_send(cfg, ctx->sk, dst, port, proto)
				     : allowlist_allows(cfg, dst, port, proto)) ||
	     dns_allows(cfg, dst, port, proto)) &&
	    !sni_refuses_udp(cfg, dst, port, proto) && !gateway_refuses_udp(cfg, dst, proto)) {
		/* Enforcing, an allowed call costs this one test and logs nothing. */
		if (cfg->flags & CFG_AUDIT_ONLY)
			sock_addr_log(cfg, ctx, dst, family, op, port, AUDIT_VERDICT_ALLOW);
		return 1;
	}
	/*
	 * getaddrinfo connects a UDP socket to each of several answer addresses, on the
	 * service's port, only to learn which source address it would use (RFC 6724 sorting),
	 * and sends nothing. Refused like any UDP connect the policy does not allow, but without
	 * a line when the proxy answered the address: a UDP connect puts no packet on the wire,
	 * and the socket stays unconnected, so whatever the job sends there passes sendmsg,
	 * which logs. Not in audit-only: the connect goes through there, and the sends on the
	 * connected socket pass no address hook, so this is the one line that names them.
	 */
	if (op == AUDIT_OP_CONNECT && proto == PROTO_UDP && !(cfg->flags & CFG_AUDIT_ONLY) &&
	    dns_answered(cfg, dst))
		return 0;
	sock_addr_log(cfg, ctx, dst, family, op, port, audit_refusal_verdict(cfg));
	return (cfg->flags & CFG_AUDIT_ONLY) ? 1 : 0;
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
