/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The DNS proxy's state, shared by its I/O-free core (dnsproxy.c) and its event loop
 * (dnsproxy_loop.c); nothing else includes it.
 */
#ifndef LAUNCH_DNSPROXY_INTERNAL_H
#define LAUNCH_DNSPROXY_INTERNAL_H

#include <limits.h>

#include "dnsproxy.h"
#include "lib/hashtable.h"

#define DNS_FLAG_TC 0x0200
/* An OPT record: root name, TYPE, CLASS (the UDP payload size), TTL, RDLENGTH. */
#define DNS_OPT_LEN    11
#define DNSPROXY_NEVER LLONG_MAX

/* One name holds one address until expires_ms. */
struct dnsproxy_claim {
	struct in6_addr addr;
	long long expires_ms;
};

/* A name the job looked up and got addresses for. */
/* SNI-checked ports of one name, over every "sni" rule that matches it. */
#define DNSPROXY_SNI_PORTS (4 * SNI_MAX_PORTS)

struct dnsproxy_name {
	struct hashtable_node node;
	uint32_t set_id; /* the union of the port sets of every rule matching the name */
	/* The TCP ports of its rules with "sni", and whether every one of those allows UDP. */
	uint16_t sni_ports[DNSPROXY_SNI_PORTS];
	size_t nsni_ports;
	bool sni_udp;
	struct dnsproxy_claim *claims; /* oldest answer first */
	size_t nclaims, cap;
	char text[];
};

/* An address open in the kernel: the union of the port sets of the names holding it. */
struct dnsproxy_addr {
	struct hashtable_node node;
	struct in6_addr addr;
	uint32_t set_id;
	struct dnsproxy_name **names;
	size_t nnames, cap;
};

/* An address's name, for audit lines; kept after the address closed. */
struct dnsproxy_seen {
	struct hashtable_node node;
	struct in6_addr addr;
	bool from_policy; /* a launch-time address: never forgotten */
	char *name;
};

/* Refused look-ups waiting for their repeats (dnsproxy_refusal_note). */
#define DNSPROXY_REFUSALS_MAX 256

/* Identical refusals, one deny line: written when its window closes. */
struct dnsproxy_refusal {
	struct hashtable_node node;
	long long first_ms;    /* CLOCK_MONOTONIC, the window's start */
	int64_t first_real_ns; /* the line's ts */
	unsigned long long repeats;
	int pid;
	const char *protocol, *reason; /* static strings */
	char rcode[16], qtype[16];
	char qname[DNS_NAME_TEXT_MAX];
};

struct dnsproxy_query {
	unsigned int slot;
	unsigned long long gen;
	enum dnsproxy_transport transport; /* how the job asked */
	bool upstream_tcp;		   /* asking the upstream over TCP */
	bool would_deny;	/* --audit-only: forwarded though the policy refuses it */
	unsigned int rules_gen; /* the proxy's rules_gen when its name was last judged */
	/* Who asked, for the deny line of an answer that the rules in force then refuse. */
	struct sockaddr_storage peer;
	socklen_t peerlen;
	bool retried;
	uint16_t client_id, upstream_id;
	struct dns_question q;
	size_t client_limit; /* the largest reply the job takes over UDP */
	uint8_t client_pkt[DNSPROXY_QUERY_MAX_LEN];
	size_t client_len;
	uint8_t up[DNS_HEADER_LEN + DNS_NAME_WIRE_MAX + 4 + DNS_OPT_LEN];
	size_t up_len;
	long long retry_ms, deadline_ms;
	/* Where the reply goes: a UDP peer of a listener, or a TCP client. */
	int client_fd;
	struct sockaddr_storage client_addr;
	socklen_t client_addrlen;
	unsigned int client_slot;
	unsigned long long client_gen;
	/* The upstream: one of the UDP sockets, or a TCP connection of its own. */
	unsigned int up_index;
	int tcp_fd;
	uint8_t *tcp_buf;
	size_t tcp_len, tcp_off;
	bool tcp_reading;
};

/* The event loop's sockets and buffers (dnsproxy_loop.c); NULL before dnsproxy_listen. */
struct dnsproxy_loop;

struct dnsproxy {
	int fatal; /* a closed address the kernel could not forget: -errno */
	struct dnsproxy_config config;
	const struct dnsproxy_ops *ops;
	void *ops_ctx;
	struct audit_log *log;

	unsigned int rules_gen; /* counts dnsproxy_set_rules: a query judged since is judged */
	const struct policy_entry **hosts; /* every "host" entry of the policies */
	size_t nhosts;
	struct port_set sets[MAX_DNS_PORT_SETS]; /* as written to the kernel, by id */
	size_t nsets;
	struct hashtable names, addrs, seen;
	size_t nclaims;
	struct in6_addr *seen_ring; /* answer addresses in the order first seen, for forgetting */
	size_t seen_head, seen_count;
	long long next_expiry_ms; /* no claim expires before; DNSPROXY_NEVER when none */
	struct dns_answer_addr *answer_addrs; /* config.max_ips of them, for one answer */
	struct in6_addr *opened;	      /* as many: what one answer opened */
	struct dnsproxy_stats stats;
	/* The sender of the message being judged (set by the I/O layer), for deny lines. */
	dnsproxy_pid_fn pid_find;
	void *pid_ctx;
	struct sockaddr_storage peer;
	socklen_t peerlen;
	/*
	 * The last sender looked up, for a second: a flood from one socket costs a scan of
	 * /proc a second, and a port reused later by another process is looked up afresh.
	 */
	struct sockaddr_storage pid_peer;
	socklen_t pid_peerlen;
	int pid_found;
	long long pid_found_ms;

	struct dnsproxy_query *queries[DNSPROXY_MAX_PENDING];
	size_t npending, next_slot;
	uint16_t id_slot[65536]; /* upstream id -> slot + 1 */
	/* Refusals in the order first seen (a ring), and by their key. */
	struct dnsproxy_refusal *refusals[DNSPROXY_REFUSALS_MAX];
	size_t refusal_head, nrefusals;
	struct hashtable refusal_index;
	long long now_ms; /* of the message being judged */
	uint8_t random[256];
	size_t random_left;
	unsigned long long gen;

	/*
	 * Freed through a pointer the loop leaves here, so the core (and the unit tests that
	 * link only it) need not know the loop.
	 */
	struct dnsproxy_loop *loop;
	void (*loop_free)(struct dnsproxy_loop *loop);
};

static inline uint16_t dnsproxy_get16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static inline void dnsproxy_put16(uint8_t *p, uint16_t v)
{
	p[0] = v >> 8;
	p[1] = v & 0xff;
}

/* When the oldest waiting refusal's window closes; DNSPROXY_NEVER when none waits. */
long long dnsproxy_next_flush_ms(const struct dnsproxy *p);
/* Unpredictable 16 bits: upstream query ids and the choice of upstream socket. */
uint16_t dnsproxy_random16(struct dnsproxy *p);

/* What dnsproxy.c (queries, set-up), dnsproxy_names.c and dnsproxy_audit.c share. */
static inline const char *dnsproxy_transport_name(enum dnsproxy_transport transport)
{
	return transport == DNSPROXY_TCP ? "tcp" : "udp";
}

static inline uint8_t dnsproxy_ascii_lower(uint8_t c)
{
	return c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c;
}

/* Whether a policy host (exact, or a wildcard above it) allows the look-up of name. */
bool dnsproxy_name_allowed(const struct dnsproxy *p, const char *name);
/* The address's entry, or NULL. */
struct dnsproxy_addr *dnsproxy_addr_find(const struct dnsproxy *p, const struct in6_addr *addr);
/* The name the job last looked up for addr, or NULL. */
struct dnsproxy_seen *dnsproxy_seen_find(const struct dnsproxy *p, const struct in6_addr *addr);
/* Remembers that addr answers name (for audit lines' dst_name); 0 or -errno. */
int dnsproxy_remember(struct dnsproxy *p, const struct in6_addr *addr, const char *name,
		      bool from_policy);
/* Opens the n addresses of an allowed answer for qname until their time is over. */
void dnsproxy_open(struct dnsproxy *p, const char *qname, const struct dns_answer_addr *addrs,
		   size_t n, long long now_ms, struct audit_dns *ret_audit);
/* The look-up's audit line: allowed (with --audit-dns-allowed) or refused, counted. */
void dnsproxy_audit(struct dnsproxy *p, bool allow, struct audit_dns *dns);

#endif /* LAUNCH_DNSPROXY_INTERNAL_H */
