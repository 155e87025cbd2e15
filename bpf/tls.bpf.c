// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The TLS server-name check: sockops marks each TCP connection to an SNI-checked address and
 * port and, once established, puts it in sni_socks; the sk_msg program on that map holds the
 * job's first bytes (bpf_msg_cork_bytes) until the whole first record is there, judges its
 * ClientHello's server name, and applies its verdict to what follows; at its next RTT sample
 * (usually the peer's ACK of the hello) the sockops program takes a passed socket out of the
 * map, so later sends take the plain TCP path. launch_egress (packet.bpf.c) drops any payload
 * of a connection not judged.
 */
#include "common.bpf.h"
#include "sni.bpf.h"
#include "tls.bpf.h"

/*
 * A context field read in place: clang would otherwise compute a pointer into the context
 * once and read through it, which the verifier refuses (a modified ctx pointer).
 */
#define CTX_READ(field) (*(volatile typeof(field) *)&(field))

/* The uapi's SK_PASS and SK_DROP, which vmlinux.h has as enums. */
#define SNI_SK_PASS 1
#define SNI_SK_DROP 0

/*
 * Takes one of the sandbox's MAX_SNI_PENDING_PER_SANDBOX places in sni_socks. The count is
 * reset when the slot has a new owner; without fetching atomics (the object is built for the
 * BPF ISA v1) the test after the add may refuse one that concurrent adds left room for, and
 * never lets more than one per CPU past the limit.
 */
static __always_inline bool sni_hold(struct sni_state *st)
{
	__u32 slot = st->slot;
	struct sni_pending *p = bpf_map_lookup_elem(&sni_pending, &slot);
	struct slot_owner_value *owner = bpf_map_lookup_elem(&slot_owner, &slot);

	/*
	 * Only the slot's owner counts there: a socket marked under an earlier owner, or before
	 * launch update moved its sandbox, would reset the owner's count (sni_judge refuses its
	 * hello anyway, and the backstop drops what it sends).
	 */
	if (!p || !owner || owner->cgroup_id != st->cgroup_id)
		return false;
	if (p->cgroup_id != st->cgroup_id) {
		p->cgroup_id = st->cgroup_id;
		p->count = 0;
	}
	__sync_fetch_and_add(&p->count, 1);
	if (*(volatile __s64 *)&p->count > MAX_SNI_PENDING_PER_SANDBOX) {
		__sync_fetch_and_add(&p->count, -1);
		return false;
	}
	st->held = 1;
	return true;
}

/* Gives the place back: the socket left sni_socks, or closes. */
static __always_inline void sni_unhold(struct sni_state *st)
{
	__u32 slot = st->slot;
	struct sni_pending *p;

	if (!st->held)
		return;
	st->held = 0;
	p = bpf_map_lookup_elem(&sni_pending, &slot);
	/* Never below 0: the reset of a new owner may race with an add of the old one's. */
	if (p && p->cgroup_id == st->cgroup_id && *(volatile __s64 *)&p->count > 0)
		__sync_fetch_and_add(&p->count, -1);
}

/* At connect (before the SYN): a connection to an SNI-checked address and port is marked. */
static __always_inline void sni_on_connect(struct bpf_sock_ops *ops)
{
	const struct sandbox_cfg *cfg = sandbox_get();
	struct sni_state *st;
	struct bpf_sock *sk = ops->sk;
	__u32 family = ops->family, ip4, ip6[4];
	__u8 addr[16] = {};

	if (!cfg || !(cfg->flags & CFG_HAS_SNI) || !sk)
		return;
	ip4 = CTX_READ(ops->remote_ip4);
	ip6[0] = CTX_READ(ops->remote_ip6[0]);
	ip6[1] = CTX_READ(ops->remote_ip6[1]);
	ip6[2] = CTX_READ(ops->remote_ip6[2]);
	ip6[3] = CTX_READ(ops->remote_ip6[3]);
	if (family == AF_INET) {
		addr[10] = 0xff;
		addr[11] = 0xff;
		__builtin_memcpy(&addr[12], &ip4, 4);
	} else {
		__builtin_memcpy(addr, ip6, 16);
	}
	/*
	 * A socket connected before (connect(AF_UNSPEC), then connect again): its last
	 * connection's standing must not judge this one. A disconnect does not take it out of
	 * sni_socks, where the sk_msg program would judge (or, with no state, refuse) every send
	 * of the new connection, and its last verdict's bytes would still apply: out of the map
	 * now, its place given back, and its state made anew below or deleted.
	 */
	st = bpf_sk_storage_get(&sni_states, sk, 0, 0);
	if (st) {
		bpf_map_delete_elem(&sni_socks, &st->cookie);
		sni_unhold(st);
	}
	/* remote_port: the port in network byte order, in the upper half on little endian. */
	if (!sni_mark(cfg, addr, (__u16)bpf_ntohl(ops->remote_port), SNI_SCRATCH_ADDR)) {
		if (st)
			bpf_sk_storage_delete(&sni_states, sk);
		return;
	}
	/*
	 * Without room for the record (BPF_F_NO_PREALLOC storage fails only when the kernel is
	 * out of memory), the connection is not marked: the backstop then drops its payload by
	 * the packet's destination (packet_tls_unjudged).
	 */
	st = bpf_sk_storage_get(&sni_states, sk, 0, BPF_SK_STORAGE_GET_F_CREATE);
	if (!st)
		return;
	st->cookie = bpf_get_socket_cookie(ops);
	st->cgroup_id = cfg->cgroup_id;
	st->slot = cfg->slot;
	st->flags = cfg->flags;
	st->held = 0;
	st->state = SNI_STATE_PENDING;
}

/*
 * Established: into sni_socks, where the sk_msg program sees its sends. A socket enters a
 * sockmap only from here (sock_map_op_okay); what it sent before (TCP Fast Open's data in the
 * SYN) never reaches sk_msg, and the backstop drops it. Without room in the map, or beyond its
 * sandbox's share of it, it stays pending, and the backstop drops everything it sends. In the
 * map, its RTT samples (sni_on_rtt) and its close (sni_on_state) are asked for.
 */
static __always_inline void sni_on_established(struct bpf_sock_ops *ops)
{
	struct sni_state *st;

	if (!ops->sk)
		return;
	st = bpf_sk_storage_get(&sni_states, ops->sk, 0, 0);
	if (!st || st->state != SNI_STATE_PENDING || !sni_hold(st))
		return;
	if (bpf_sock_hash_update(ops, &sni_socks, &st->cookie, BPF_NOEXIST) != 0) {
		sni_unhold(st);
		return;
	}
	bpf_sock_ops_cb_flags_set(ops, ops->bpf_sock_ops_cb_flags | BPF_SOCK_OPS_RTT_CB_FLAG |
					       BPF_SOCK_OPS_STATE_CB_FLAG);
}

/*
 * An RTT sample: the peer acknowledged data. Once the first record has passed, the socket
 * leaves sni_socks here (sock_ops may delete from a sockmap, sk_msg may not), so its later
 * sends take the plain TCP path, and the callbacks stop.
 */
static __always_inline void sni_on_rtt(struct bpf_sock_ops *ops)
{
	struct sni_state *st;

	if (!ops->sk)
		return;
	st = bpf_sk_storage_get(&sni_states, ops->sk, 0, 0);
	if (!st || st->state != SNI_STATE_PASSED)
		return;
	bpf_map_delete_elem(&sni_socks, &st->cookie);
	sni_unhold(st);
	bpf_sock_ops_cb_flags_set(ops, ops->bpf_sock_ops_cb_flags & ~(BPF_SOCK_OPS_RTT_CB_FLAG |
								      BPF_SOCK_OPS_STATE_CB_FLAG));
}

/* A socket in sni_socks closes (the kernel takes it out of the map): its place is given back. */
static __always_inline void sni_on_state(struct bpf_sock_ops *ops)
{
	struct sni_state *st;

	if (!ops->sk || ops->args[1] != BPF_TCP_CLOSE)
		return;
	st = bpf_sk_storage_get(&sni_states, ops->sk, 0, 0);
	if (st)
		sni_unhold(st);
}

SEC("sockops")
int launch_sockops(struct bpf_sock_ops *ops)
{
	if (ops->op == BPF_SOCK_OPS_TCP_CONNECT_CB)
		sni_on_connect(ops);
	else if (ops->op == BPF_SOCK_OPS_ACTIVE_ESTABLISHED_CB)
		sni_on_established(ops);
	else if (ops->op == BPF_SOCK_OPS_RTT_CB)
		sni_on_rtt(ops);
	else if (ops->op == BPF_SOCK_OPS_STATE_CB)
		sni_on_state(ops);
	return 1;
}

/* Counts a judgement of verdict for the connection's sandbox on this CPU; returns its lost. */
static __always_inline __u64 *sni_count(const struct sni_state *st, __u16 verdict)
{
	struct sni_counters *c;
	__u32 slot = st->slot;

	c = bpf_map_lookup_elem(&sni_counters, &slot);
	if (!c)
		return NULL;
	if (c->cgroup_id != st->cgroup_id) {
		/* A previous owner's counts: the slot's new owner starts from nothing. */
		c->cgroup_id = st->cgroup_id;
		c->denied = 0;
		c->lost = 0;
		c->would_deny = 0;
		c->would_deny_lost = 0;
	}
	if (verdict == AUDIT_VERDICT_WOULD_DENY) {
		__sync_fetch_and_add(&c->would_deny, 1);
		return &c->would_deny_lost;
	}
	__sync_fetch_and_add(&c->denied, 1);
	return &c->lost;
}

/* Logs (and counts) a refused ClientHello: op tls, the name asked for, the peer, the owner. */
static __noinline void sni_log(struct sk_msg_md *msg, const struct sni_state *st,
			       const struct sni_key *key, __u32 reason)
{
	__u16 verdict =
		(st->flags & CFG_AUDIT_ONLY) ? AUDIT_VERDICT_WOULD_DENY : AUDIT_VERDICT_DENY;
	__u64 *lost = sni_count(st, verdict);
	struct tls_deny_event *tls;
	struct deny_event *event;
	struct sock_owner *owner;
	struct bpf_sock *sk = msg->sk;

	event = audit_event_new_sized(st->slot, st->cgroup_id, AUDIT_OP_TLS, (__u16)msg->family,
				      sizeof(*tls));
	if (!event) {
		if (lost)
			__sync_fetch_and_add(lost, 1);
		return;
	}
	event->verdict = verdict;
	event->sock_type = SOCK_STREAM;
	event->protocol = IPPROTO_TCP;
	event->port = key->port;
	event->reason = reason;
	__builtin_memcpy(event->addr, key->addr, sizeof(event->addr));
	tls = (struct tls_deny_event *)event;
	__builtin_memcpy(tls->sni, key->name, sizeof(tls->sni));
	tls->sni[SNI_NAME_LEN - 1] = '\0';
	owner = sk ? bpf_sk_storage_get(&sock_owners, sk, 0, 0) : NULL;
	if (owner) {
		event->pid = owner->pid;
		event->tid = owner->tid;
		event->uid = owner->uid;
		__builtin_memcpy(event->comm, owner->comm, sizeof(event->comm));
	}
	bpf_ringbuf_submit(event, 0);
}

/* The peer of the socket, into the scratch key (port in host byte order). */
static __always_inline void sni_key_peer(struct sk_msg_md *msg, struct sni_key *key)
{
	__u32 family = msg->family, ip4, ip6[4];

	ip4 = CTX_READ(msg->remote_ip4);
	ip6[0] = CTX_READ(msg->remote_ip6[0]);
	ip6[1] = CTX_READ(msg->remote_ip6[1]);
	ip6[2] = CTX_READ(msg->remote_ip6[2]);
	ip6[3] = CTX_READ(msg->remote_ip6[3]);
	if (family == AF_INET) {
		key->addr[10] = 0xff;
		key->addr[11] = 0xff;
		__builtin_memcpy(&key->addr[12], &ip4, 4);
	} else {
		__builtin_memcpy(key->addr, ip6, 16);
	}
	key->port = (__u16)bpf_ntohl(msg->remote_port);
}

/*
 * Judges the first record in the scratch (n bytes of it there): 0 to let it go, a reason
 * to refuse, or -1 when more bytes are needed (*ret_need of them in all).
 */
static __always_inline int sni_judge(const struct sni_state *st, const struct tls_buf *b,
				     struct sni_key *key, __u32 n, __u32 *ret_need)
{
	__u32 reason, name_len = 0, ech = 0, slot = st->slot;
	struct slot_owner_value *owner;

	reason = tls_record_check(b->buf, n, ret_need);
	if (reason)
		return (int)reason;
	if (n < *ret_need)
		return -1;
	reason = tls_hello_parse(b->buf, *ret_need, key->name, &name_len, &ech);
	if (reason)
		return (int)reason;
	key->len = (__u16)name_len;
	/*
	 * The slot the connection was marked in must still be its sandbox's: once launch update
	 * has moved the sandbox, the old slot's names (or its next owner's) judge nothing.
	 */
	owner = bpf_map_lookup_elem(&slot_owner, &slot);
	if (owner && owner->cgroup_id == st->cgroup_id && key->len &&
	    sni_lookup(st->slot, st->flags, key))
		return 0;
	return ech ? TLS_REASON_ECH : TLS_REASON_NAME;
}

/*
 * A judged connection's sends: the verifier lets no sk_msg program take a socket out of a
 * sockmap (may_update_sockmap), so the verdict applies to the next 4 GiB without running this
 * again, and the sock_ops program takes the socket out at its next RTT sample (sni_on_rtt). Telling
 * the launcher instead, through the ring, woke it per connection: 25 µs of this program's run time
 * per hello on a virtual machine (the wake-up's self-IPI).
 */
static __always_inline int sni_pass(struct sk_msg_md *msg)
{
	bpf_msg_apply_bytes(msg, 0xffffffffu);
	return SNI_SK_PASS;
}

/*
 * Runs for each send of a socket in sni_socks. Whenever the whole first record is not there
 * yet, it asks for it (cork) and says drop: the kernel keeps the bytes and runs this again
 * once they are in, but when the message can hold no more (ENOSPC) it applies the verdict to
 * what it has, and then nothing of an unjudged hello must leave.
 */
SEC("sk_msg")
int launch_tls_msg(struct sk_msg_md *msg)
{
	struct sni_key *key;
	struct tls_buf *b;
	struct sni_state *st;
	__u32 zero = 0, scratch = SNI_SCRATCH_MSG, size = msg->size, n, need = 0;
	void *data, *end;
	int reason;

	if (!msg->sk)
		return SNI_SK_DROP;
	st = bpf_sk_storage_get(&sni_states, msg->sk, 0, 0);
	if (!st)
		return SNI_SK_DROP;
	if (st->state == SNI_STATE_REFUSED)
		return SNI_SK_DROP;
	/* Passed before, and not out of the map yet (no RTT sample since): pass again. */
	if (st->state != SNI_STATE_PENDING) {
		bpf_msg_apply_bytes(msg, 0xffffffffu);
		return SNI_SK_PASS;
	}
	b = bpf_map_lookup_elem(&tls_scratch, &zero);
	key = bpf_map_lookup_elem(&sni_scratch, &scratch);
	if (!b || !key || size == 0)
		return SNI_SK_DROP;
	n = size < TLS_HELLO_BUF_LEN ? size : TLS_HELLO_BUF_LEN;
	/* One piece: the message's pages are scattered until pulled. */
	if (bpf_msg_pull_data(msg, 0, n, 0) < 0)
		return SNI_SK_DROP;
	data = (void *)(long)msg->data;
	end = (void *)(long)msg->data_end;
	if (data + n > end || n > TLS_HELLO_BUF_LEN)
		return SNI_SK_DROP;
	/*
	 * The size as the verifier must see it bounded: 6.1's does not carry the test above
	 * over to the copy of n that clang passes (the mask is a no-op: n <= TLS_HELLO_BUF_LEN).
	 */
	TLS_OPAQUE(n);
	n &= TLS_BUF_SIZE - 1;
	if (bpf_probe_read_kernel(b->buf, n, data) < 0)
		return SNI_SK_DROP;
	__builtin_memset(key, 0, sizeof(*key));
	sni_key_peer(msg, key);
	reason = sni_judge(st, b, key, n, &need);
	if (reason < 0) {
		bpf_msg_cork_bytes(msg, need);
		return SNI_SK_DROP;
	}
	if (reason == 0) {
		st->state = SNI_STATE_PASSED;
		return sni_pass(msg);
	}
	sni_log(msg, st, key, (__u32)reason);
	if (st->flags & CFG_AUDIT_ONLY) {
		st->state = SNI_STATE_PASSED;
		return sni_pass(msg);
	}
	/* Refused for good: this and every later send fails, and the backstop drops the rest. */
	st->state = SNI_STATE_REFUSED;
	return SNI_SK_DROP;
}
