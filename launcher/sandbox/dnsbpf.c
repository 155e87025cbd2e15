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

/*
 * A DNS SNI marker's value counts the names holding it (the proxy is its map's one writer):
 * SNI_MARK, SNI_MARK_UDP while every one of them allows UDP, and two counts above.
 */
#define DNSBPF_MARK_NAMES_SHIFT 2
#define DNSBPF_MARK_UDP_SHIFT	17
#define DNSBPF_MARK_COUNT_MASK	0x7fffu

static __u32 dnsbpf_mark_value(__u32 names, __u32 udp_names)
{
	return SNI_MARK | (udp_names == names ? SNI_MARK_UDP : 0) |
	       names << DNSBPF_MARK_NAMES_SHIFT | udp_names << DNSBPF_MARK_UDP_SHIFT;
}

/* Adds (+1) or removes (-1) one name's hold on the marker of addr and port. */
static int dnsbpf_mark(int fd, const struct in6_addr *addr, uint16_t port, int delta, bool udp)
{
	struct sni_key key;
	__u32 value = 0, names = 0, udp_names = 0;

	image_sni_key(&key, addr, port, NULL);
	if (bpf_map_lookup_elem(fd, &key, &value) == 0) {
		names = value >> DNSBPF_MARK_NAMES_SHIFT & DNSBPF_MARK_COUNT_MASK;
		udp_names = value >> DNSBPF_MARK_UDP_SHIFT & DNSBPF_MARK_COUNT_MASK;
	}
	if (delta > 0 && names == DNSBPF_MARK_COUNT_MASK)
		return -E2BIG;
	names = delta > 0 ? names + 1 : (names ? names - 1 : 0);
	if (udp)
		udp_names = delta > 0 ? udp_names + 1 : (udp_names ? udp_names - 1 : 0);
	if (names == 0)
		return bpf_map_delete_elem(fd, &key) < 0 && errno != ENOENT ? -errno : 0;
	value = dnsbpf_mark_value(names, udp_names);
	return bpf_map_update_elem(fd, &key, &value, BPF_ANY) < 0 ? -errno : 0;
}

static int dnsbpf_open_name(void *ctx, const struct in6_addr *addr, const char *name,
			    const uint16_t *ports, size_t nports, bool udp)
{
	struct loader_sandbox *sb = ctx;
	int fd = sb->inner_fd[IMAGE_MAP_DNS_SNI];
	__u32 one = 1;
	int r = 0;

	if (fd < 0)
		return -ENOENT;
	for (size_t i = 0; r == 0 && i < nports; i++) {
		struct sni_key key;

		image_sni_key(&key, addr, ports[i], name);
		if (bpf_map_update_elem(fd, &key, &one, BPF_ANY) < 0)
			r = -errno;
		else
			r = dnsbpf_mark(fd, addr, ports[i], +1, udp);
	}
	return r;
}

static int dnsbpf_close_name(void *ctx, const struct in6_addr *addr, const char *name,
			     const uint16_t *ports, size_t nports, bool udp)
{
	struct loader_sandbox *sb = ctx;
	int fd = sb->inner_fd[IMAGE_MAP_DNS_SNI];
	int r = 0;

	if (fd < 0)
		return -ENOENT;
	for (size_t i = 0; i < nports; i++) {
		struct sni_key key;
		int k;

		image_sni_key(&key, addr, ports[i], name);
		if (bpf_map_delete_elem(fd, &key) < 0 && errno != ENOENT && !r)
			r = -errno;
		k = dnsbpf_mark(fd, addr, ports[i], -1, udp);
		if (k < 0 && !r)
			r = k;
	}
	return r;
}

const struct dnsproxy_ops dnsbpf_ops = {
	.write_set = dnsbpf_write_set,
	.open_addr = dnsbpf_open_addr,
	.close_addr = dnsbpf_close_addr,
	.open_name = dnsbpf_open_name,
	.close_name = dnsbpf_close_name,
};
