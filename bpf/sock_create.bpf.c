// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* cgroup/sock_create: only TCP and UDP inet sockets may be created; raw and ICMP are refused. */
#include "common.bpf.h"

SEC("cgroup/sock_create")
int launch_sock_create(struct bpf_sock *sk)
{
	const struct sandbox_cfg *cfg;
	struct deny_event *event;

	/* The kernel has already resolved protocol 0 to the type's default by now. */
	if (sk->type == SOCK_STREAM && sk->protocol == IPPROTO_TCP)
		return 1;
	if (sk->type == SOCK_DGRAM && sk->protocol == IPPROTO_UDP)
		return 1;

	cfg = sandbox_get();
	if (!cfg)
		return 0;
	event = audit_reserve(cfg, AUDIT_OP_SOCKET, sk->family);
	if (event) {
		event->sock_type = sk->type;
		event->protocol = sk->protocol;
		bpf_ringbuf_submit(event, 0);
	}
	return 0;
}
