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

/*
 * The programs are loaded once per host and shared by every sandbox (docs/design.md). What
 * is a sandbox's own is found from the cgroup the hook runs for:
 * - sandbox_cfgs, its cgroup storage: the slot it holds and its settings;
 * - sandbox_states, its per-CPU cgroup storage: its refusal counters;
 * - the maps-of-maps, at its slot: its allowlist maps and its ring buffer, made by its
 *   launcher;
 * - slot_owner, at its slot: its cgroup id, as long as the slot is its own. Before a slot
 *   whose launcher died goes to another sandbox, the new launcher empties the dead one's
 *   cgroup (loader.c); events of a cgroup that is not the slot's owner go to nobody's log.
 *
 * The programs of every hook group are linked into one object (bpftool gen object), so the
 * shared maps are defined once, in maps.bpf.c (LAUNCH_DEFINE_SHARED), and declared extern
 * for the others.
 */
/*
 * The settings: shared cgroup storage, one value that an update replaces whole (launch.h).
 * Keyed by the cgroup id alone: one storage for every program.
 */
struct sandbox_cfgs_map {
	__uint(type, BPF_MAP_TYPE_CGROUP_STORAGE);
	__type(key, __u64);
	__type(value, struct sandbox_cfg);
};

/* The refusal counters: per-CPU cgroup storage, counted with atomics, never rewritten. */
struct sandbox_states_map {
	__uint(type, BPF_MAP_TYPE_PERCPU_CGROUP_STORAGE);
	__type(key, __u64);
	__type(value, struct sandbox_counters);
};

struct slot_owner_map {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__type(key, __u32);
	__type(value, struct slot_owner_value);
	__uint(max_entries, MAX_SANDBOXES);
};

/* A sandbox's ring buffer; the launcher makes each at RINGBUF_SIZE_BYTES or its own size. */
struct events_inner {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, RINGBUF_SIZE_BYTES);
};

struct events_map {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, MAX_SANDBOXES);
	__type(key, __u32);
	__array(values, struct events_inner);
};

/*
 * The process that last connected, sent or bound on a socket, as the address hooks saw it:
 * what the packet hooks (cgroup_skb) name in their events. Those run where no process of the
 * job need be current (a retransmission from softirq, a peer's send on loopback), and older
 * kernels refuse them the task helpers: 6.1's cg_skb_func_proto offers none of
 * bpf_get_current_{pid_tgid,uid_gid,comm,cgroup_id}, 6.12's only bpf_get_current_pid_tgid.
 * BPF_F_CLONE: a connection accepted from a listener inherits the listener's.
 */
struct sock_owner {
	__u32 pid;
	__u32 tid;
	__u32 uid;
	char comm[TASK_COMM_LEN_MAX];
};

struct sock_owners_map {
	__uint(type, BPF_MAP_TYPE_SK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC | BPF_F_CLONE);
	__type(key, int);
	__type(value, struct sock_owner);
};

#ifdef LAUNCH_DEFINE_SHARED
struct sandbox_cfgs_map sandbox_cfgs SEC(".maps");
struct sandbox_states_map sandbox_states SEC(".maps");
struct slot_owner_map slot_owner SEC(".maps");
struct events_map events SEC(".maps");
struct sock_owners_map sock_owners SEC(".maps");
#else
extern struct sandbox_cfgs_map sandbox_cfgs SEC(".maps");
extern struct sandbox_states_map sandbox_states SEC(".maps");
extern struct slot_owner_map slot_owner SEC(".maps");
extern struct events_map events SEC(".maps");
extern struct sock_owners_map sock_owners SEC(".maps");
#endif

/*
 * The configuration of the sandbox whose cgroup the hook runs for, or NULL when that cgroup
 * is not (or no longer) a running sandbox: the caller refuses then. A slot is handed to
 * another sandbox only once no process is left in the cgroup that had it (loader.c), so the
 * slot alone is trusted here, on the path of every call.
 */
static __always_inline const struct sandbox_cfg *sandbox_get(void)
{
	struct sandbox_cfg *cfg = bpf_get_local_storage(&sandbox_cfgs, 0);

	return cfg->slot ? cfg : NULL;
}

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

/*
 * Reserves an event in the ring buffer of sandbox cfg, filled with what every event says but
 * the process, which is left unknown (pid 0); NULL when the slot is being handed over or the
 * ring is full. Calls no task helper: the packet hooks may call it. Counts nothing: see
 * audit_reserve.
 */
static __always_inline struct deny_event *audit_event_new_sized(__u32 slot, __u64 cgroup_id,
								__u16 op, __u16 family, __u32 size)
{
	struct deny_event *event = NULL;
	struct slot_owner_value *owner;
	void *ring;

	/* A slot being handed over: its ring is not (or no longer) this sandbox's. */
	owner = bpf_map_lookup_elem(&slot_owner, &slot);
	if (!owner || owner->cgroup_id != cgroup_id)
		return NULL;
	ring = bpf_map_lookup_elem(&events, &slot);
	if (ring)
		event = bpf_ringbuf_reserve(ring, size, 0);
	if (!event)
		return NULL;
	event->boot_ns = bpf_ktime_get_boot_ns();
	event->cgroup_id = cgroup_id;
	event->pid = 0;
	event->tid = 0;
	event->uid = 0;
	event->op = op;
	event->family = family;
	event->sock_type = 0;
	event->protocol = 0;
	event->port = 0;
	event->verdict = AUDIT_VERDICT_DENY;
	__builtin_memset(event->addr, 0, sizeof(event->addr));
	__builtin_memset(event->comm, 0, sizeof(event->comm));
	event->unix_path[0] = '\0';
	event->level = 0;
	event->optname = 0;
	event->reason = 0;
	event->pad2 = 0;
	event->unix_path_len = 0;
	event->peer_port = 0;
	event->syscall_nr = 0;
	event->syscall_arch = 0;
	__builtin_memset(event->peer_addr, 0, sizeof(event->peer_addr));
	return event;
}

static __always_inline struct deny_event *audit_event_new_slot(__u32 slot, __u64 cgroup_id,
							       __u16 op, __u16 family)
{
	return audit_event_new_sized(slot, cgroup_id, op, family, sizeof(struct deny_event));
}

static __always_inline struct deny_event *audit_event_new(const struct sandbox_cfg *cfg, __u16 op,
							  __u16 family)
{
	return audit_event_new_slot(cfg->slot, cfg->cgroup_id, op, family);
}

/* audit_event_new for a hook that runs in the calling process: the event names it. */
static __always_inline struct deny_event *audit_event_reserve(const struct sandbox_cfg *cfg,
							      __u16 op, __u16 family)
{
	struct deny_event *event = audit_event_new(cfg, op, family);
	__u64 pid_tgid;

	if (!event)
		return NULL;
	pid_tgid = bpf_get_current_pid_tgid();
	event->pid = pid_tgid >> 32;
	event->tid = (__u32)pid_tgid;
	event->uid = (__u32)bpf_get_current_uid_gid();
	bpf_get_current_comm(event->comm, sizeof(event->comm));
	return event;
}

/*
 * audit_event_new for the packet hooks: the event names the process that sock_owner_record
 * saw last on socket sk, or none (pid 0) when there is no socket or no hook saw it.
 */
static __always_inline struct deny_event *
audit_event_reserve_sk(const struct sandbox_cfg *cfg, __u16 op, __u16 family, struct bpf_sock *sk)
{
	struct deny_event *event = audit_event_new(cfg, op, family);
	struct sock_owner *owner;

	if (!event || !sk)
		return event;
	owner = bpf_sk_storage_get(&sock_owners, sk, 0, 0);
	if (owner) {
		event->pid = owner->pid;
		event->tid = owner->tid;
		event->uid = owner->uid;
		__builtin_memcpy(event->comm, owner->comm, sizeof(event->comm));
	}
	return event;
}

/*
 * Records the calling process as the owner of socket sk, for the packet hooks' events; from
 * the address hooks, which run in the process that calls. Rewritten only when another
 * thread calls: a send costs one storage look-up then. Two threads racing may leave a
 * mixed record, which names a process of the job all the same.
 */
static __always_inline void sock_owner_record(struct bpf_sock *sk)
{
	struct sock_owner *owner;
	__u64 pid_tgid;

	owner = bpf_sk_storage_get(&sock_owners, sk, 0, BPF_SK_STORAGE_GET_F_CREATE);
	if (!owner)
		return;
	pid_tgid = bpf_get_current_pid_tgid();
	if (owner->tid == (__u32)pid_tgid)
		return;
	owner->pid = pid_tgid >> 32;
	owner->tid = (__u32)pid_tgid;
	owner->uid = (__u32)bpf_get_current_uid_gid();
	bpf_get_current_comm(owner->comm, sizeof(owner->comm));
}

/*
 * Counts a call of sandbox cfg judged `verdict`; returns its lost counter, for when its event
 * finds the ring full.
 */
static __always_inline __u64 *audit_count(__u16 verdict)
{
	/* This CPU's: a program runs with migration disabled. */
	struct sandbox_counters *counters = bpf_get_local_storage(&sandbox_states, 0);
	__u64 *count, *lost;

	if (verdict == AUDIT_VERDICT_WOULD_DENY) {
		count = &counters->would_deny;
		lost = &counters->would_deny_lost;
	} else if (verdict == AUDIT_VERDICT_ALLOW) {
		count = &counters->allowed;
		lost = &counters->allowed_lost;
	} else {
		count = &counters->denied;
		lost = &counters->lost;
	}
	/* Per CPU, yet atomic: a program may be preempted by another on the same CPU. */
	__sync_fetch_and_add(count, 1);
	return lost;
}

/*
 * Counts a call of sandbox cfg judged `verdict` and reserves its event in the sandbox's ring
 * buffer; NULL (and counted as lost, per verdict) when the ring is full.
 */
static __always_inline struct deny_event *
audit_reserve_verdict(const struct sandbox_cfg *cfg, __u16 op, __u16 family, __u16 verdict)
{
	__u64 *lost = audit_count(verdict);
	struct deny_event *event = audit_event_reserve(cfg, op, family);

	if (!event)
		__sync_fetch_and_add(lost, 1);
	else
		event->verdict = verdict;
	return event;
}

/* A refusal: audit_reserve_verdict with AUDIT_VERDICT_DENY. */
static __always_inline struct deny_event *audit_reserve(const struct sandbox_cfg *cfg, __u16 op,
							__u16 family)
{
	return audit_reserve_verdict(cfg, op, family, AUDIT_VERDICT_DENY);
}

/* audit_reserve for the packet hooks: the process named is socket sk's owner. */
static __always_inline struct deny_event *audit_reserve_sk(const struct sandbox_cfg *cfg, __u16 op,
							   __u16 family, struct bpf_sock *sk)
{
	__u64 *lost = audit_count(AUDIT_VERDICT_DENY);
	struct deny_event *event = audit_event_reserve_sk(cfg, op, family, sk);

	if (!event)
		__sync_fetch_and_add(lost, 1);
	return event;
}

/* What a call the policy refuses becomes: a refusal, or in audit-only mode a would_deny. */
static __always_inline __u16 audit_refusal_verdict(const struct sandbox_cfg *cfg)
{
	return (cfg->flags & CFG_AUDIT_ONLY) ? AUDIT_VERDICT_WOULD_DENY : AUDIT_VERDICT_DENY;
}

#endif /* LAUNCH_COMMON_BPF_H */
