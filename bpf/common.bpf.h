/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Maps, counters and the audit helper that every hook group of the sandbox shares. */
#ifndef LAUNCH_COMMON_BPF_H
#define LAUNCH_COMMON_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>

#include "launch.h"

#define AF_UNIX	   1
#define AF_INET	   2
#define AF_INET6   10
#define AF_NETLINK 16

#define SOCK_STREAM 1
#define SOCK_DGRAM  2

#define EPERM 1

struct events_map {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, RINGBUF_SIZE_BYTES);
};

/*
 * The programs of every hook group are linked into one object (bpftool gen object), so the
 * shared maps are defined once, in maps.bpf.c (LAUNCH_DEFINE_SHARED), and declared extern
 * for the others.
 *
 * denied counts every refusal; lost counts refusals whose event found no room in the ring
 * buffer. The launcher reports both, so that denied = logged + lost, exactly.
 */
/* The policies' "unix" entries (unix.bpf.c). */
struct unix_allow_map {
	__uint(type, BPF_MAP_TYPE_HASH);
	__type(key, struct unix_path_key);
	__type(value, __u8);
	__uint(max_entries, MAX_UNIX_PATHS);
};

#ifdef LAUNCH_DEFINE_SHARED
struct events_map events SEC(".maps");
struct unix_allow_map unix_allow SEC(".maps");
__u64 denied_count = 0;
__u64 lost_count = 0;
#else
extern struct events_map events SEC(".maps");
extern struct unix_allow_map unix_allow SEC(".maps");
extern __u64 denied_count;
extern __u64 lost_count;
#endif

struct port_match {
	const struct port_set *set;
	__u32 port;
	__u32 proto;
	bool allowed;
};

static long port_match_range(__u32 i, void *data)
{
	struct port_match *m = data;
	const struct port_range *range;

	if (i >= MAX_PORT_RANGES)
		return 1;
	range = &m->set->ranges[i];
	if (m->port >= range->lo && m->port <= range->hi && (range->protos & m->proto)) {
		m->allowed = true;
		return 1;
	}
	return 0;
}

/*
 * Whether a port set allows (port, proto). bpf_loop (5.17) has the verifier check the body
 * once instead of once per range: the programs load several times faster than with an
 * open-coded loop, which launch pays on every start.
 */
static __always_inline bool port_set_allows(const struct port_set *set, __u16 port, __u32 proto)
{
	struct port_match m = { .set = set, .port = port, .proto = proto };
	__u32 n = set->nranges;

	/* The common case, one range (a single port, or all of them), needs no loop at all. */
	if (n == 1)
		return port >= set->ranges[0].lo && port <= set->ranges[0].hi &&
		       (set->ranges[0].protos & proto);
	bpf_loop(n < MAX_PORT_RANGES ? n : MAX_PORT_RANGES, port_match_range, &m, 0);
	return m.allowed;
}

static __always_inline struct deny_event *audit_reserve(__u16 op, __u16 family)
{
	struct deny_event *event;
	__u64 pid_tgid, uid_gid;

	__sync_fetch_and_add(&denied_count, 1);
	event = bpf_ringbuf_reserve(&events, sizeof(*event), 0);
	if (!event) {
		__sync_fetch_and_add(&lost_count, 1);
		return NULL;
	}
	pid_tgid = bpf_get_current_pid_tgid();
	uid_gid = bpf_get_current_uid_gid();
	event->boot_ns = bpf_ktime_get_boot_ns();
	event->pid = pid_tgid >> 32;
	event->tid = (__u32)pid_tgid;
	event->uid = (__u32)uid_gid;
	event->op = op;
	event->family = family;
	event->sock_type = 0;
	event->protocol = 0;
	event->port = 0;
	event->pad = 0;
	__builtin_memset(event->addr, 0, sizeof(event->addr));
	bpf_get_current_comm(event->comm, sizeof(event->comm));
	event->unix_path[0] = '\0';
	return event;
}

#endif /* LAUNCH_COMMON_BPF_H */
