/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The TLS server-name check's maps (docs/design.md, "Names on the wire"): each sandbox's SNI
 * maps, the connections awaiting judgement, and the look-up that the sockops, sk_msg, address
 * and packet programs share.
 */
#ifndef LAUNCH_SNI_BPF_H
#define LAUNCH_SNI_BPF_H

#include "common.bpf.h"

/* A sandbox's SNI map (the policy's, and the DNS proxy's): struct sni_key to SNI_MARK* or 1. */
struct sni_inner {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(key_size, sizeof(struct sni_key));
	__uint(value_size, sizeof(__u32));
	__uint(max_entries, 1);
	__uint(map_flags, BPF_F_NO_PREALLOC);
};

struct sni_allow_map {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, MAX_SANDBOXES);
	__type(key, __u32);
	__array(values, struct sni_inner);
};

/*
 * A connection's standing (enum sni_state_kind), and what the sk_msg program, which runs
 * for no cgroup, needs of its sandbox: the slot and cgroup id it had at connect, its flags.
 */
struct sni_state {
	__u64 cookie; /* the socket's key in sni_socks */
	__u64 cgroup_id;
	__u32 slot;
	__u32 state;
	__u32 flags; /* sandbox_cfg.flags at connect */
	__u32 held;  /* 1 while it counts in its sandbox's sni_pending */
};

struct sni_states_map {
	__uint(type, BPF_MAP_TYPE_SK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct sni_state);
};

/*
 * The connections whose first record is awaited (or was refused), over every sandbox: the
 * sk_msg program runs for the sends of these sockets alone; a passed one leaves at its next
 * RTT sample. One sandbox holds at most MAX_SNI_PENDING_PER_SANDBOX of them (sni_pending), so
 * that no job can fill the map for the others: 256 sandboxes at their limit would.
 */
#define MAX_SNI_PENDING		    262144
#define MAX_SNI_PENDING_PER_SANDBOX 1024

/* Per slot: how many of its sandbox's connections are in sni_socks (an estimate under races). */
struct sni_pending {
	__u64 cgroup_id; /* the sandbox the count is of */
	__s64 count;
};

struct sni_pending_map {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, MAX_SANDBOXES);
	__type(key, __u32);
	__type(value, struct sni_pending);
};

struct sni_socks_map {
	__uint(type, BPF_MAP_TYPE_SOCKHASH);
	__uint(max_entries, MAX_SNI_PENDING);
	__type(key, __u64);
	__type(value, __u64);
};

struct sni_counters_map {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, MAX_SANDBOXES);
	__type(key, __u32);
	__type(value, struct sni_counters);
};

/*
 * Room for a key (too big for the stack), per CPU and per context, so that no program
 * overwrites a key another is still using on the same CPU: the sk_msg program's judgement
 * (process context) can be interrupted by a softirq's transmit, whose egress backstop looks
 * up a marker (sni_mark) on the same CPU; a marker key left in the sk_msg program's place
 * would pass its hello. The address hooks and sockops' connect run in process context.
 */
enum sni_scratch_slot {
	SNI_SCRATCH_MSG,
	SNI_SCRATCH_ADDR,
	SNI_SCRATCH_SKB,
	SNI_SCRATCH_SLOTS,
};

struct sni_scratch_map {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, SNI_SCRATCH_SLOTS);
	__type(key, __u32);
	__type(value, struct sni_key);
};

/* Room for one record, for the parser (tls.bpf.h), one per CPU. */
struct tls_buf {
	__u8 buf[TLS_BUF_SIZE];
};

struct tls_scratch_map {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct tls_buf);
};

/* Defined once, in maps.bpf.c; every hook group is linked into one object. */
#ifdef LAUNCH_DEFINE_SNI
struct sni_allow_map sni_allow SEC(".maps");
struct sni_allow_map dns_sni_allow SEC(".maps");
struct sni_states_map sni_states SEC(".maps");
struct sni_socks_map sni_socks SEC(".maps");
struct sni_counters_map sni_counters SEC(".maps");
struct sni_pending_map sni_pending SEC(".maps");
struct tls_scratch_map tls_scratch SEC(".maps");
struct sni_scratch_map sni_scratch SEC(".maps");
#else
extern struct sni_allow_map sni_allow SEC(".maps");
extern struct sni_allow_map dns_sni_allow SEC(".maps");
extern struct sni_states_map sni_states SEC(".maps");
extern struct sni_socks_map sni_socks SEC(".maps");
extern struct sni_counters_map sni_counters SEC(".maps");
extern struct sni_pending_map sni_pending SEC(".maps");
extern struct tls_scratch_map tls_scratch SEC(".maps");
extern struct sni_scratch_map sni_scratch SEC(".maps");
#endif

/* The value of key in the slot's SNI maps (the policy's, then the DNS proxy's), or 0. */
static __always_inline __u32 sni_lookup(__u32 slot, __u32 flags, const struct sni_key *key)
{
	__u32 *value;
	void *map;

	map = bpf_map_lookup_elem(&sni_allow, &slot);
	value = map ? bpf_map_lookup_elem(map, key) : NULL;
	if (!value && (flags & CFG_DNS_PROXY)) {
		map = bpf_map_lookup_elem(&dns_sni_allow, &slot);
		value = map ? bpf_map_lookup_elem(map, key) : NULL;
	}
	return value ? *value : 0;
}

/*
 * The marker of an address (as addr_key) and TCP port: SNI_MARK* when connections there are
 * SNI-checked, 0 when not (or without room to look: the scratch is always there). scratch:
 * the caller's context (enum sni_scratch_slot).
 */
static __always_inline __u32 sni_mark(const struct sandbox_cfg *cfg, const __u8 *addr, __u16 port,
				      __u32 scratch)
{
	struct sni_key *key;

	if (!(cfg->flags & CFG_HAS_SNI))
		return 0;
	key = bpf_map_lookup_elem(&sni_scratch, &scratch);
	if (!key)
		return SNI_MARK;
	__builtin_memset(key, 0, sizeof(*key));
	__builtin_memcpy(key->addr, addr, sizeof(key->addr));
	key->port = port;
	return sni_lookup(cfg->slot, cfg->flags, key);
}

#endif /* LAUNCH_SNI_BPF_H */
