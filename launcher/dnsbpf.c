// SPDX-License-Identifier: LGPL-2.1-or-later
/* The DNS proxy's side of the BPF object: where it listens, and the addresses answers opened. */
#include <errno.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "../bpf/launch.h" /* before the skeleton, which uses its structs */
#include "launch.skel.h"
#include "dnsbpf.h"

void dnsbpf_configure(struct launch_bpf *skel, const struct dnsproxy_ports *ports)
{
	/* .bss is mapped into our memory: the programs see these stores at once. */
	skel->bss->dns_udp4_port = ports->udp4;
	skel->bss->dns_tcp4_port = ports->tcp4;
	skel->bss->dns_udp6_port = ports->udp6;
	skel->bss->dns_tcp6_port = ports->tcp6;
	__atomic_store_n(&skel->bss->dns_proxy_enabled, 1, __ATOMIC_RELEASE);
}

static int dnsbpf_write_set(void *ctx, uint32_t id, const struct port_set *set)
{
	struct launch_bpf *skel = ctx;

	if (bpf_map_update_elem(bpf_map__fd(skel->maps.dns_port_sets), &id, set, BPF_ANY) < 0)
		return -errno;
	return 0;
}

static int dnsbpf_open_addr(void *ctx, const struct in6_addr *addr, uint32_t set_id)
{
	struct launch_bpf *skel = ctx;
	struct addr_key key;

	memcpy(key.addr, addr, sizeof(key.addr));
	/* BPF_ANY: one update replaces the set of an open address atomically. */
	if (bpf_map_update_elem(bpf_map__fd(skel->maps.dns_allow), &key, &set_id, BPF_ANY) < 0)
		return -errno;
	return 0;
}

static int dnsbpf_close_addr(void *ctx, const struct in6_addr *addr)
{
	struct launch_bpf *skel = ctx;
	struct addr_key key;

	memcpy(key.addr, addr, sizeof(key.addr));
	if (bpf_map_delete_elem(bpf_map__fd(skel->maps.dns_allow), &key) < 0 && errno != ENOENT)
		return -errno;
	return 0;
}

const struct dnsproxy_ops dnsbpf_ops = {
	.write_set = dnsbpf_write_set,
	.open_addr = dnsbpf_open_addr,
	.close_addr = dnsbpf_close_addr,
};
