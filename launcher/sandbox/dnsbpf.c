// SPDX-License-Identifier: LGPL-2.1-or-later
/* The DNS proxy's side of the BPF maps: where it listens, and the addresses answers opened. */
#include <errno.h>
#include <string.h>
#include <bpf/bpf.h>

#include "dnsbpf.h"
#include "loader.h"

void dnsbpf_configure(struct loader_sandbox *sb, const struct dnsproxy_ports *ports)
{
	/* Part of the configuration loader_sandbox_attach writes, before the job starts. */
	sb->cfg.dns_udp4_port = ports->udp4;
	sb->cfg.dns_tcp4_port = ports->tcp4;
	sb->cfg.dns_udp6_port = ports->udp6;
	sb->cfg.dns_tcp6_port = ports->tcp6;
	sb->cfg.flags |= CFG_DNS_PROXY;
}

static int dnsbpf_write_set(void *ctx, uint32_t id, const struct port_set *set)
{
	struct loader_sandbox *sb = ctx;

	if (bpf_map_update_elem(sb->inner_fd[IMAGE_MAP_DNS_PORT_SETS], &id, set, BPF_ANY) < 0)
		return -errno;
	return 0;
}

static int dnsbpf_open_addr(void *ctx, const struct in6_addr *addr, uint32_t set_id)
{
	struct loader_sandbox *sb = ctx;
	struct addr_key key;

	memcpy(key.addr, addr, sizeof(key.addr));
	/* BPF_ANY: one update replaces the set of an open address atomically. */
	if (bpf_map_update_elem(sb->inner_fd[IMAGE_MAP_DNS_ALLOW], &key, &set_id, BPF_ANY) < 0)
		return -errno;
	return 0;
}

static int dnsbpf_close_addr(void *ctx, const struct in6_addr *addr)
{
	struct loader_sandbox *sb = ctx;
	struct addr_key key;

	memcpy(key.addr, addr, sizeof(key.addr));
	if (bpf_map_delete_elem(sb->inner_fd[IMAGE_MAP_DNS_ALLOW], &key) < 0 && errno != ENOENT)
		return -errno;
	return 0;
}

const struct dnsproxy_ops dnsbpf_ops = {
	.write_set = dnsbpf_write_set,
	.open_addr = dnsbpf_open_addr,
	.close_addr = dnsbpf_close_addr,
};
