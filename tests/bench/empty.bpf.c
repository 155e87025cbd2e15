// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The connect benchmark's floor: cgroup programs that let everything through and do nothing else.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

char LICENSE[] SEC("license") = "Dual BSD/GPL";

SEC("cgroup/connect4")
int bench_connect4(struct bpf_sock_addr *ctx)
{
	return 1;
}

SEC("cgroup/sendmsg4")
int bench_sendmsg4(struct bpf_sock_addr *ctx)
{
	return 1;
}

SEC("cgroup/sock_create")
int bench_sock_create(struct bpf_sock *sk)
{
	return 1;
}
