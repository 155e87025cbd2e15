// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * cgroup/setsockopt: socket options that send packets somewhere other than the address that
 * connect or sendmsg judged (routing headers, source routes) are refused and logged.
 */
#include "common.bpf.h"

/* uapi/linux/in.h and uapi/linux/in6.h: vmlinux.h has no macros. */
#define SOL_IP	 0
#define SOL_IPV6 41

#define IP_OPTIONS 4

#define IPV6_2292PKTINFO    2
#define IPV6_2292HOPOPTS    3
#define IPV6_2292DSTOPTS    4
#define IPV6_2292RTHDR	    5
#define IPV6_2292PKTOPTIONS 6
#define IPV6_2292HOPLIMIT   8
#define IPV6_FLOWLABEL_MGR  32
#define IPV6_PKTINFO	    50
#define IPV6_HOPOPTS	    54
#define IPV6_RTHDRDSTOPTS   55
#define IPV6_RTHDR	    57
#define IPV6_DSTOPTS	    59

/* struct in6_flowlabel_req; what follows it is ancillary data: the label's own options. */
#define IN6_FLOWLABEL_REQ_LEN 32
/* struct in6_pktinfo: the source address, then the outgoing interface. */
#define IN6_PKTINFO_LEN 20

/*
 * Whether a sticky IPV6_PKTINFO names an address or an interface. All zeros is what a job
 * sets to undo one; anything else picks where its packets leave from.
 */
static __always_inline bool sockopt_pktinfo_set(struct bpf_sockopt *ctx)
{
	__u32 *words = ctx->optval;

	/* Shorter than the struct: the kernel refuses it itself (EINVAL). */
	if ((void *)(words + IN6_PKTINFO_LEN / 4) > ctx->optval_end)
		return false;
	return words[0] | words[1] | words[2] | words[3] | words[4];
}

/*
 * The options that change a packet's route (docs/threat-model.md lists what was checked in
 * the kernel and why each is here or not). A zero length removes a header: that is let
 * through.
 */
static __always_inline bool sockopt_reroutes(struct bpf_sockopt *ctx)
{
	int optname = ctx->optname;

	if (ctx->level == SOL_IP)
		/* Source routes (LSRR/SSRR) among them: the packet goes to the first hop. */
		return optname == IP_OPTIONS && ctx->optlen > 0;
	if (ctx->level != SOL_IPV6)
		return false;
	switch (optname) {
	case IPV6_RTHDR:
	case IPV6_HOPOPTS:
	case IPV6_DSTOPTS:
	case IPV6_RTHDRDSTOPTS:
	case IPV6_2292PKTOPTIONS:
		return ctx->optlen > 0;
	case IPV6_2292PKTINFO:
	case IPV6_2292HOPOPTS:
	case IPV6_2292DSTOPTS:
	case IPV6_2292RTHDR:
	case IPV6_2292HOPLIMIT:
		/* The obsolete RFC 2292 interface, which nothing current uses: all of it. */
		return true;
	case IPV6_PKTINFO:
		return sockopt_pktinfo_set(ctx);
	case IPV6_FLOWLABEL_MGR:
		/*
		 * A flow label may carry headers, which sendmsg then merges into each datagram
		 * sent with the label (a routing header, on kernels that accept one there).
		 */
		return ctx->optlen > IN6_FLOWLABEL_REQ_LEN;
	default:
		return false;
	}
}

/* Returns 1 to let the option be set, 0 to fail setsockopt with EPERM. */
SEC("cgroup/setsockopt")
int launch_setsockopt(struct bpf_sockopt *ctx)
{
	const struct sandbox_cfg *cfg;
	struct deny_event *event;
	struct bpf_sock *sk;

	/* Every option of every socket comes here: the sandbox is looked up for refusals only. */
	if (!sockopt_reroutes(ctx))
		return 1;
	cfg = sandbox_get();
	if (!cfg)
		return 0;
	sk = ctx->sk;
	event = audit_reserve(cfg, AUDIT_OP_SETSOCKOPT, sk ? sk->family : 0);
	if (event) {
		if (sk) {
			event->sock_type = sk->type;
			event->protocol = sk->protocol;
		}
		event->level = ctx->level;
		event->optname = ctx->optname;
		bpf_ringbuf_submit(event, 0);
	}
	return 0;
}
