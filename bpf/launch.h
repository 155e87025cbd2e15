/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Structs and limits shared by the BPF programs and the launcher. */
#ifndef LAUNCH_H
#define LAUNCH_H

/*
 * No libc headers here: the BPF side gets __u8..__u64 from vmlinux.h, user space from
 * <linux/types.h>.
 */

/* Largest allowlist (exact addresses plus prefixes) one sandbox accepts. */
#define MAX_ALLOW_ENTRIES 100000
/* Distinct port sets in one sandbox (rules sharing ports share one set). */
#define MAX_PORT_SETS 1024
/* Port ranges in one port set, after merging overlapping ones. */
#define MAX_PORT_RANGES 32
/* Allowed AF_UNIX destinations (paths or abstract names) per sandbox. */
#define MAX_UNIX_PATHS 64
/* Port ranges a sandbox may listen on beyond loopback (the policies' "listen" ports). */
#define MAX_LISTEN_PORTS MAX_PORT_RANGES
/* Bytes of an AF_UNIX address kept, as sun_path (abstract names start with '\0'). */
#define UNIX_PATH_LEN	  108
#define TASK_COMM_LEN_MAX 16
/*
 * TLS server names (docs/policy.md, "sni"): at most 253 characters, kept lower case without
 * the trailing dot, NUL-padded to SNI_NAME_LEN, a power of two (the parser masks with it).
 */
#define SNI_NAME_MAX 253
#define SNI_NAME_LEN 256
/* Ports one rule with "sni" may name: each is a key of the SNI map per address. */
#define SNI_MAX_PORTS 16
/* A TLS record's most plaintext (RFC 8446 5.1), and its header. */
#define TLS_RECORD_MAX	      16384
#define TLS_RECORD_HEADER_LEN 5
#define TLS_HELLO_BUF_LEN     (TLS_RECORD_HEADER_LEN + TLS_RECORD_MAX)
/* The parser's buffer: a power of two above TLS_HELLO_BUF_LEN (the most a per-CPU value holds). */
#define TLS_BUF_SIZE 32768
/* Extensions walked in one ClientHello; more is refused as malformed (browsers send ~20). */
#define TLS_MAX_EXTENSIONS 128
/* Entries of the server_name list walked; more is refused as malformed (clients send one). */
#define TLS_MAX_SNI_ENTRIES 8
#define TLS_EXT_SERVER_NAME 0x0000
#define TLS_EXT_ECH	    0xfe0d /* encrypted_client_hello (RFC 9849) */

/* Default ring buffer size: about 2,700 deny events in flight. */
#define RINGBUF_SIZE_BYTES (512 * 1024)
/*
 * Sandboxes running at once on one host. The programs are verified once and shared by every
 * sandbox (docs/design.md); each running sandbox holds one slot of the maps-of-maps. Slot 0
 * is never handed out: a cgroup whose configuration still says 0 refuses everything.
 */
#define MAX_SANDBOXES 4096

/* Kinds of map a sandbox has at its slot of the maps-of-maps (the launcher's enum image_map). */
#define SLOT_MAP_KINDS 10
/*
 * slot_owner's value at a slot: the owner's cgroup id (0: none), which the programs compare,
 * and the ids of the maps the launcher put into the maps-of-maps there (0: none), which only
 * the launcher reads: a lookup in a map-of-maps from user space waits for an RCU grace period
 * on kernels before 6.8 (tens of ms each under load), where a plain array's costs nothing.
 * An id is written once its map is in place and cleared once it is taken out, so the record
 * may lack a map that is there (after a crash), never name one that is not.
 */
struct slot_owner_value {
	__u64 cgroup_id;
	__u32 map_ids[SLOT_MAP_KINDS];
};

/* Protocol bits of a port range. */
#define PROTO_TCP (1u << 0)
#define PROTO_UDP (1u << 1)
#define PROTO_ANY (PROTO_TCP | PROTO_UDP)

/* An inclusive port range allowed for the protocols in `protos`. */
struct port_range {
	__u16 lo;
	__u16 hi;
	__u32 protos;
};

/* Every range allowed for one address or prefix; ranges never overlap per protocol. */
struct port_set {
	__u32 nranges;
	struct port_range ranges[MAX_PORT_RANGES];
};

/*
 * The value of an allowlist entry (exact address or prefix): its port set, and that set's
 * range when it has only one, so that the common case decides without a second lookup.
 */
struct allow_value {
	__u32 set;		 /* index into the sandbox's port sets */
	struct port_range range; /* the set's only range; protos 0 when it has several */
	__u32 flags;		 /* ALLOW_* */
};

/*
 * allow_value.flags: an address of a host rule with "http". Every TCP connect to it goes to
 * the HTTPS gateway (CFG_GATEWAY), whatever the port, and UDP to it is refused (but port 53's,
 * which goes to the DNS proxy): none reaches the address itself.
 */
#define ALLOW_GATEWAY (1u << 0)

/*
 * Addresses are kept as IPv6; IPv4 is mapped to ::ffff:a.b.c.d, so an IPv4 rule of
 * prefix length N is stored with prefix length 96 + N and an IPv4-mapped IPv6
 * destination is judged by the IPv4 rules without a second code path.
 */
struct addr_key {
	__u8 addr[16];
};

struct prefix_key {
	__u32 prefixlen;
	__u8 addr[16];
};

/*
 * With at most this many distinct prefix lengths, prefixes live in a hash map and are looked
 * up once per length, longest first: a few hash lookups cost less than a walk down an LPM
 * trie of many entries. With more lengths, the trie it is.
 */
#define MAX_HASHED_PREFIX_LENGTHS 8

/* One prefix length and its mask, as four 32-bit words in network byte order. */
struct prefix_mask {
	__u32 prefixlen;
	__u32 mask[4];
};

/* sandbox_cfg.flags */
#define CFG_HAS_EXACT	 (1u << 0) /* the exact-address map has entries */
#define CFG_HAS_PREFIXES (1u << 1) /* the prefix hash (nprefix_masks > 0) or trie has entries */
#define CFG_DNS_PROXY	 (1u << 2) /* port 53 goes to the proxy at the dns_* ports */
#define CFG_HAS_UNIX	 (1u << 3) /* the AF_UNIX map has entries */
/*
 * --audit-only: what the policy would refuse is let through and logged as would_deny, what it
 * allows is logged as allow (connect, sendmsg and their AF_UNIX kinds). Refusals no policy can
 * lift (socket kinds, socket options, packets routed elsewhere) stay refusals.
 */
#define CFG_AUDIT_ONLY (1u << 4)
/*
 * Some rule checks the TLS server name (docs/policy.md, "sni"): new TCP connections are looked
 * up in the SNI maps, and UDP to an SNI-checked address and port is refused unless allowed.
 */
#define CFG_HAS_SNI (1u << 5)
/* TCP connects to ALLOW_GATEWAY addresses go to the gateway at the gateway_* ports. */
#define CFG_GATEWAY (1u << 6)
/*
 * A slot's maps outlive its sandbox (docs/design.md): a map the flags do not name may hold a
 * previous sandbox's entries, and the programs must not look at it.
 */

/*
 * One sandbox's settings, in the (shared, not per-CPU) cgroup storage of its cgroup: written
 * whole by its launcher after the programs are attached and before the job starts, then only
 * replaced whole, by `launch update` and to close the sandbox (slot 0) at its end. The kernel
 * replaces a shared cgroup storage's value by swapping a pointer (the old one is freed after
 * an RCU grace period), so a program sees the old settings or the new, never a mix.
 */
/*
 * A policy with this few exact addresses (one API host resolves to a handful) keeps them in
 * the sandbox's settings, compared in place: no hash lookup on the way of every call.
 */
#define MAX_INLINE_EXACT 4

struct inline_exact {
	__u32 addr[4]; /* as addr_key, in 32-bit words */
	struct allow_value value;
};

/* Likewise up to MAX_INLINE_PREFIXES prefixes, longest first: mask, then compare. */
#define MAX_INLINE_PREFIXES 4

struct inline_prefix {
	__u32 mask[4]; /* network byte order */
	__u32 addr[4]; /* host bits zero */
	struct allow_value value;
};

struct sandbox_cfg {
	__u64 cgroup_id; /* the cgroup this was written for: its slot must still be its own */
	__u32 slot;	 /* index into the maps-of-maps; 0: refuse everything */
	__u32 flags;	 /* CFG_* */
	__u32 nprefix_masks;
	/* Where the DNS proxy listens (host byte order); the 6s are 0 when the host has no ::1. */
	__u16 dns_udp4_port, dns_tcp4_port, dns_udp6_port, dns_tcp6_port;
	/* Where the HTTPS gateway listens for this sandbox (host byte order); 6: 0 without ::1. */
	__u16 gateway_port4, gateway_port6;
	/* The exact addresses, when there are at most MAX_INLINE_EXACT; 0: in the map. */
	__u32 ninline_exact;
	/* The prefixes, when there are at most MAX_INLINE_PREFIXES; 0: in the maps. */
	__u32 ninline_prefixes;
	/*
	 * 0 at start, one more at each `launch update`: a verdict remembered under another
	 * generation (send_verdicts, allowlist.bpf.h) was made by other rules.
	 */
	__u32 generation;
	/* The prefix lengths in the prefix hash, longest first; 0 of them: the trie. */
	struct prefix_mask prefix_masks[MAX_HASHED_PREFIX_LENGTHS];
	struct inline_exact inline_exact[MAX_INLINE_EXACT];
	struct inline_prefix inline_prefixes[MAX_INLINE_PREFIXES];
	/*
	 * The "listen" ports: the job may bind them on any address and serve any peer there.
	 * Elsewhere it may listen on loopback only, for peers inside the sandbox.
	 */
	struct port_set listen;
};

/*
 * Refusals of one sandbox, in the per-CPU cgroup storage of its cgroup (the launcher adds them
 * up): denied = logged + lost. Apart from the settings, so that replacing those while the job
 * runs loses no count; only a refusal looks them up.
 */
struct sandbox_counters {
	__u64 denied;
	__u64 lost;
	/*
	 * The packet-level backstop: every packet it dropped (exact, reported in sandbox_exit),
	 * and this CPU's logging window, which rate-limits their deny lines.
	 */
	__u64 packet_dropped;
	__u64 packet_window_ns;
	__u32 packet_logged; /* deny lines this window, at most PACKET_LOG_BURST */
	__u32 packet_pad;
	/* CFG_AUDIT_ONLY: what was let through that the policy refuses, and what it allows. */
	__u64 would_deny;
	__u64 would_deny_lost;
	__u64 allowed;
	__u64 allowed_lost;
};

/*
 * Deny lines for dropped packets, per CPU: at most PACKET_LOG_BURST per PACKET_LOG_WINDOW_NS.
 * A sender that keeps retrying (TCP retransmits a dropped SYN) must not flood the log; the
 * exact count is in sandbox_exit.packet_dropped.
 */
#define PACKET_LOG_BURST     16
#define PACKET_LOG_WINDOW_NS 1000000000ULL

enum audit_op {
	AUDIT_OP_CONNECT = 1,
	AUDIT_OP_SENDMSG,
	AUDIT_OP_SOCKET,
	AUDIT_OP_CONNECT_UNIX,
	AUDIT_OP_SENDMSG_UNIX,
	AUDIT_OP_USERNS,     /* seccomp: unshare/clone with CLONE_NEWUSER */
	AUDIT_OP_IO_URING,   /* seccomp: io_uring_setup */
	AUDIT_OP_SETSOCKOPT, /* a socket option that changes where packets go */
	AUDIT_OP_PACKET,     /* a packet the egress backstop dropped */
	AUDIT_OP_SYSCALL,    /* seccomp: a call of another ABI (i386, x32) */
	AUDIT_OP_BIND,	     /* bind() to an address the job may not listen on */
	AUDIT_OP_LISTEN,     /* listen() there, or a peer outside the sandbox refused */
	AUDIT_OP_TLS,	     /* a TLS ClientHello whose server name is not allowed there */
	AUDIT_OP_HTTP,	     /* user space: a request the HTTPS gateway refused */
};

/* Why a connection's first TLS record was refused (deny_event.reason, op tls). */
enum tls_reason {
	TLS_REASON_NAME = 1,	   /* the server name is not allowed for this address and port */
	TLS_REASON_NO_SNI,	   /* no server_name extension, or an empty one */
	TLS_REASON_MULTIPLE_NAMES, /* two server_name extensions, or two host names in one */
	TLS_REASON_NOT_TLS,	   /* the first bytes are not a TLS handshake record */
	TLS_REASON_MALFORMED,	   /* a ClientHello that does not parse, or a bad name */
	TLS_REASON_ECH,		   /* encrypted ClientHello whose outer name is not allowed */
	TLS_REASON_TOO_LARGE,	   /* the ClientHello is not within the first record (16 KiB) */
};

/* Why the backstop dropped a packet (deny_event.reason). */
enum packet_drop_reason {
	PACKET_DROP_DESTINATION = 1, /* its real destination is not allowed */
	PACKET_DROP_ROUTING_HEADER,  /* IPv6 with a routing header: it goes to another address */
	PACKET_DROP_IP_OPTIONS,	     /* IPv4 with options (source routes among them) */
	PACKET_DROP_MALFORMED,	     /* not an IP header the backstop can read */
	/* Payload of an SNI-checked connection whose ClientHello was not judged, or refused. */
	PACKET_DROP_TLS_UNJUDGED,
};

/* Why a bind or listen was refused (deny_event.reason). */
enum audit_reason {
	AUDIT_REASON_NONE = 0,
	AUDIT_REASON_ADDRESS,  /* not loopback, and no "listen" entry allows the port */
	AUDIT_REASON_ABSTRACT, /* an abstract AF_UNIX name: any process of the host can connect */
	AUDIT_REASON_PEER,     /* a connection to the job's listener from outside the sandbox */
	AUDIT_REASON_ATTACH,   /* listen(): the program that judges its peers could not attach */
};

/* What became of the call an event reports (deny_event.verdict). */
enum audit_verdict {
	AUDIT_VERDICT_DENY = 0,	  /* refused */
	AUDIT_VERDICT_WOULD_DENY, /* CFG_AUDIT_ONLY: the policy refuses it, yet it went through */
	AUDIT_VERDICT_ALLOW,	  /* CFG_AUDIT_ONLY: the policy allows it */
};

/*
 * One refusal (or, in audit-only mode, one call judged), sent from the kernel to the launcher
 * through the ring buffer.
 */
struct deny_event {
	__u64 boot_ns;	 /* bpf_ktime_get_boot_ns() at the refusal */
	__u64 cgroup_id; /* the sandbox's; events of an earlier user of the slot are dropped */
	/*
	 * The process: the caller's; for the packet hooks (op packet, a listen refused for its
	 * peer), the process that last connected, sent or bound on the socket, and 0 (with
	 * tid, uid and comm) when no hook saw one.
	 */
	__u32 pid; /* thread group id */
	__u32 tid;
	__u32 uid;
	__u16 op;	 /* enum audit_op */
	__u16 family;	 /* AF_INET, AF_INET6, AF_UNIX, ... */
	__u16 sock_type; /* SOCK_STREAM, SOCK_DGRAM, SOCK_RAW, ... */
	__u16 protocol;	 /* IPPROTO_* */
	__u16 port;	 /* destination port, host byte order */
	__u16 verdict;	 /* enum audit_verdict */
	__u8 addr[16];	 /* destination; IPv4 as ::ffff:a.b.c.d */
	char comm[TASK_COMM_LEN_MAX];
	char unix_path[UNIX_PATH_LEN];
	/* setsockopt: the option refused. */
	__s32 level;
	__s32 optname;
	/* packet: enum packet_drop_reason; bind and listen: enum audit_reason. */
	__u32 reason;
	__u32 pad2;
	/* Bytes of unix_path that count: an abstract name may hold NULs anywhere. */
	__u16 unix_path_len;
	/* A refused inbound connection: the peer's port (host byte order) and address. */
	__u16 peer_port;
	/* seccomp refusals: the call as the caller's ABI numbers it, and that ABI (AUDIT_ARCH_*) */
	__u32 syscall_nr;
	__u32 syscall_arch;
	__u8 peer_addr[16];
};

/*
 * Op tls: the refusal and the server name the ClientHello asked for ("" without one,
 * NUL-terminated). Only the sk_msg program reserves this size: every other refusal keeps the
 * smaller deny_event, so that a flood of them fills the ring at the rate it did before names
 * were judged (the name would more than double each record).
 */
struct tls_deny_event {
	struct deny_event event;
	char sni[SNI_NAME_LEN];
};

/*
 * The DNS proxy (docs/dns.md): the job's traffic to port 53 of any address goes to the
 * launcher's proxy, and the addresses in the answers it lets through are allowed for a while.
 */
#define DNS_PORT 53
/*
 * Addresses opened by DNS answers at one time, over every name of one sandbox (the oldest
 * close first beyond it). The hash map's buckets are allocated at its full size: 65,536
 * cost 1 MiB of kernel memory per sandbox, 8,192 cost 128 KiB.
 */
#define MAX_DNS_ALLOW_ENTRIES 8192
/* Distinct port sets of those addresses: each allowed name's, and unions of them. */
#define MAX_DNS_PORT_SETS 256
/*
 * A dns_allow value with this bit set: the address was answered for a name whose host rule
 * has "http": its TCP connects go to the gateway, its UDP is refused (the set id is the value
 * without it).
 */
#define DNS_SET_GATEWAY (1u << 31)

/* Where a redirected socket sent its DNS, so that the replies seem to come from there. */
struct dns_orig_dst {
	__u8 addr[16]; /* IPv4 as ::ffff:a.b.c.d */
	__u16 port;    /* host byte order */
	__u16 pad;
};

/*
 * An allowed AF_UNIX address, as the job passes it to connect() or sendto(): sun_path up
 * to its first NUL for a path, the raw bytes for an abstract name (which start with NUL),
 * zero-padded either way.
 */
struct unix_path_key {
	char path[UNIX_PATH_LEN];
};

/* The value of an AF_UNIX map entry: what the job may do with that address. */
#define UNIX_ALLOW_CONNECT (1u << 0) /* connect or send to it ("unix") */
#define UNIX_ALLOW_BIND	   (1u << 1) /* bind an abstract name and serve on it ("listen") */

/* AF_UNIX paths under this prefix are the job's own: its /tmp is a private tmpfs. */
#define UNIX_PRIVATE_PREFIX "/tmp/"

/*
 * nscd's socket, where glibc asks before every look-up (_PATH_NSCDSOCKET, and the same under
 * /run): hidden rather than refused. connect() and sendto() get ENOENT, as on a host without
 * nscd, so glibc falls back to DNS (the proxy) and writes no deny line; the job reaches nscd
 * no more than before. Any other spelling of the path is refused and logged as ever.
 */
#define UNIX_NSCD_SOCKET     "/var/run/nscd/socket"
#define UNIX_NSCD_SOCKET_RUN "/run/nscd/socket"

/*
 * The SNI maps' key (policy's, and the DNS proxy's at run time): an address and TCP port
 * whose connections must start with a ClientHello, and the names allowed there. len 0 and
 * an empty name: the marker that the address and port are SNI-checked at all, whose value
 * says what else is allowed; len > 0: a name allowed there (value 1). The full name, not a
 * hash of it: a job cannot search for a colliding one.
 */
struct sni_key {
	__u8 addr[16]; /* IPv4 as ::ffff:a.b.c.d */
	__u16 port;    /* host byte order */
	__u16 len;
	char name[SNI_NAME_LEN];
};

/* The marker's value: the rule allows UDP there too, so QUIC is not refused. */
#define SNI_MARK_UDP (1u << 0)
#define SNI_MARK     (1u << 1)

/*
 * The sk_msg program's refusals, per slot and per CPU (that program has no cgroup, so no
 * cgroup storage): a CPU's record counts for the cgroup it names, and is reset the first time
 * another cgroup's refusal lands there. The launcher adds the ones of its cgroup id to its
 * counters (loader_sandbox_sum_counters).
 */
struct sni_counters {
	__u64 cgroup_id;
	__u64 denied;
	__u64 lost;
	__u64 would_deny;
	__u64 would_deny_lost;
};

/* Names the DNS proxy's answers opened, as SNI map entries, at one time per sandbox. */
#define MAX_DNS_SNI_ENTRIES 16384

/* A connection's standing with the SNI check (socket storage, tls.bpf.c). */
enum sni_state_kind {
	SNI_STATE_PENDING = 1, /* SNI-checked, its first record not judged yet */
	SNI_STATE_PASSED,      /* judged and allowed */
	SNI_STATE_REFUSED,     /* judged and refused: nothing more leaves */
};

#endif /* LAUNCH_H */
