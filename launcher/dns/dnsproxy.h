/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The sandbox's DNS proxy: allowed names go upstream and open their addresses, others are refused.
 */
#ifndef LAUNCH_DNSPROXY_H
#define LAUNCH_DNSPROXY_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include "audit/audit.h"
#include "lib/dnswire.h"
#include "policy/resolve.h"
#include "policy/rules.h"

/* Defaults of --dns-min-ttl, --dns-grace and --dns-max-ips. */
#define DNSPROXY_MIN_TTL_S 5
#define DNSPROXY_GRACE_S   60
#define DNSPROXY_MAX_IPS   256
/* Largest --dns-max-ips: one answer's addresses are collected in an array of this size. */
#define DNSPROXY_MAX_IPS_LIMIT 4096
/* An upstream UDP query is sent again after this, and fails (SERVFAIL) after the timeout. */
#define DNSPROXY_UDP_RETRY_MS	  1000
#define DNSPROXY_QUERY_TIMEOUT_MS 3000
/* Queries waiting for the upstream; more are answered SERVFAIL at once. */
#define DNSPROXY_MAX_PENDING	 1024
#define DNSPROXY_MAX_TCP_CLIENTS 64
/* An idle TCP client is closed after this (RFC 7766 6.2.3 suggests seconds). */
#define DNSPROXY_TCP_IDLE_MS 10000
/* Largest query taken: a question and an OPT record with a few options need far less. */
#define DNSPROXY_QUERY_MAX_LEN 1232
/* Addresses remembered with their name, for audit lines, after they were closed. */
#define DNSPROXY_NAME_HISTORY 16384
/*
 * Identical refused look-ups (name in any case, type, reason, protocol, pid) within this
 * much of the first make one deny line, with the others counted in its "repeats".
 */
#define DNSPROXY_REPEAT_WINDOW_MS 1000
/* Where the system's resolver is read from when --resolver is not given. */
#define DNSPROXY_RESOLV_CONF "/etc/resolv.conf"

struct dnsproxy_config {
	struct resolver upstream;
	unsigned int min_ttl_s; /* an answer's TTL is raised to at least this */
	unsigned int grace_s;	/* added to the TTL before an address closes */
	unsigned int max_ips;	/* open addresses per name, oldest closed first */
	uint8_t deny_rcode;	/* for denied names: DNS_RCODE_REFUSED or DNS_RCODE_NXDOMAIN */
	bool audit_allowed;	/* write a dns_allow line per allowed look-up */
	/*
	 * --audit-only: a look-up refused for its name or type is forwarded all the same and
	 * logged as would_deny; its addresses are remembered with the name (for the lines of
	 * the connections that follow), not opened: the kernel refuses nothing then.
	 */
	bool audit_only;
};

/*
 * How the proxy changes what the kernel allows; the sandbox's are BPF map updates (dnsbpf.c),
 * the unit tests' a table in memory. Each returns 0 or a negative errno. A port set is written
 * once, before any address refers to it, and never rewritten, so the kernel never sees an
 * address with a half-written set.
 */
struct dnsproxy_ops {
	int (*write_set)(void *ctx, uint32_t id, const struct port_set *set);
	/* Adds the address, or changes its port set. */
	int (*open_addr)(void *ctx, const struct in6_addr *addr, uint32_t set_id);
	int (*close_addr)(void *ctx, const struct in6_addr *addr);
	/*
	 * Optional (NULL: none): a name whose rules check the TLS server name ("sni") now holds
	 * the address, for those TCP ports (udp: every such rule allows UDP too), and lets go of
	 * it. Called after open_addr and before close_addr, so an address is never open without
	 * the check its name asks for.
	 */
	int (*open_name)(void *ctx, const struct in6_addr *addr, const char *name,
			 const uint16_t *ports, size_t nports, bool udp);
	int (*close_name)(void *ctx, const struct in6_addr *addr, const char *name,
			  const uint16_t *ports, size_t nports, bool udp);
};

/* Where the proxy listens: 127.0.0.1 and ::1 (0 when the host has no ::1). */
struct dnsproxy_ports {
	uint16_t udp4, tcp4, udp6, tcp6;
};

struct dnsproxy_stats {
	unsigned long long queries;    /* every message from the job */
	unsigned long long allowed;    /* forwarded upstream */
	unsigned long long denied;     /* refused: name, type or class */
	unsigned long long would_deny; /* --audit-only: forwarded, though the policy refuses */
	/* Deny lines written: each refused look-up (its repeats in it), each malformed message. */
	unsigned long long deny_lines;
	unsigned long long malformed;	    /* answered FORMERR or NOTIMP, or dropped */
	unsigned long long upstream_failed; /* answered SERVFAIL */
	unsigned long long opened;	    /* addresses added to the allowlist */
	unsigned long long closed;	    /* addresses removed (expired or evicted) */
	unsigned long long open_failed;	    /* addresses an answer named but we could not open */
	size_t open_now;		    /* addresses open at this moment */
};

struct dnsproxy;

/* Fills the defaults; the upstream is the first nameserver of DNSPROXY_RESOLV_CONF. */
void dnsproxy_config_default(struct dnsproxy_config *config);
/*
 * The first usable "nameserver" line of a resolv.conf file, port 53. Returns 0, -ENOENT when
 * there is none (glibc then uses 127.0.0.1, and so does dnsproxy_config_default), or the
 * error of opening the file.
 */
int dnsproxy_read_resolv_conf(const char *path, struct resolver *ret_upstream);

/*
 * Creates the proxy's state for the policies' host rules: each name the job may look up, with
 * the ports its addresses may reach, and the launch-time addresses' names for audit lines.
 * `log` (may be NULL) receives the proxy's audit lines. Opens no socket.
 */
int dnsproxy_new(const struct dnsproxy_config *config, const struct rules *rules,
		 const struct dnsproxy_ops *ops, void *ops_ctx, struct audit_log *log,
		 struct dnsproxy **ret_proxy);
void dnsproxy_free(struct dnsproxy *proxy);
/*
 * Judges names by another policy's host rules from now on (launch update), the answers of
 * queries already in flight included, and closes every address an answer opened. rules must
 * outlive the proxy. Returns 0 or -errno.
 */
int dnsproxy_set_rules(struct dnsproxy *proxy, const struct rules *rules);
/*
 * launch update's order: closes every address an answer opened, then calls install, which
 * puts the new settings in force (0) or leaves the old ones (< 0, returned as is), then
 * judges names by rules. No moment has the new settings with an address the old policy's
 * names opened, or the old settings with one the new names opened. *ret_installed tells
 * whether install succeeded. Returns 0 or -errno.
 */
int dnsproxy_swap_rules(struct dnsproxy *proxy, const struct rules *rules,
			int (*install)(void *ctx), void *install_ctx, bool *ret_installed);

/*
 * Who sent the message being judged: find(ctx, peer, len, tcp) gives the pid of the process
 * whose socket is the peer, or a negative errno. Deny lines carry it when it is found.
 */
typedef int (*dnsproxy_pid_fn)(void *ctx, const struct sockaddr *peer, socklen_t peerlen, bool tcp);
void dnsproxy_set_pid_finder(struct dnsproxy *proxy, dnsproxy_pid_fn find, void *ctx);
DEFINE_TRIVIAL_CLEANUP_FUNC(struct dnsproxy *, dnsproxy_free)

/*
 * Opens the listeners, UDP and TCP on 127.0.0.1 and ::1 at ports the kernel picks, in the
 * caller's network namespace, and the event loop's descriptors.
 */
int dnsproxy_listen(struct dnsproxy *proxy, struct dnsproxy_ports *ret_ports);
/* An epoll descriptor, readable when dnsproxy_process has work; -1 before dnsproxy_listen. */
int dnsproxy_fd(const struct dnsproxy *proxy);
/* Handles whatever is ready (queries, upstream answers, timers) without blocking. */
int dnsproxy_process(struct dnsproxy *proxy);

/*
 * The name an address was last seen under in an answer to the job, or the policy host it came
 * from at launch; NULL when unknown. Valid until the next call into the proxy.
 */
const char *dnsproxy_addr_name(const struct dnsproxy *proxy, const struct in6_addr *addr);
void dnsproxy_get_stats(const struct dnsproxy *proxy, struct dnsproxy_stats *ret_stats);

/*
 * The core without I/O, public for the unit tests: what to do with a query, what to answer
 * once the upstream replied, when addresses close. Times are CLOCK_MONOTONIC milliseconds.
 */
enum dnsproxy_transport {
	DNSPROXY_UDP,
	DNSPROXY_TCP,
};

enum dnsproxy_action {
	DNSPROXY_DROP,	    /* nothing to send back */
	DNSPROXY_REPLY,	    /* send the reply to the job */
	DNSPROXY_FORWARD,   /* send the query's upstream packet */
	DNSPROXY_RETRY_TCP, /* the upstream's UDP answer was truncated: ask again over TCP */
};

struct dnsproxy_query;

/*
 * A message from the job. Returns DNSPROXY_REPLY with the reply in `reply` (a refusal, FORMERR,
 * NOTIMP, or SERVFAIL when too many queries wait), DNSPROXY_FORWARD with *ret_query (its packet
 * for the upstream from dnsproxy_query_packet), or DNSPROXY_DROP; a negative errno when the
 * proxy itself fails (memory).
 */
int dnsproxy_query_begin(struct dnsproxy *proxy, const uint8_t *pkt, size_t len,
			 enum dnsproxy_transport transport, long long now_ms,
			 struct dnsproxy_query **ret_query, uint8_t *reply, size_t reply_cap,
			 size_t *ret_reply_len);
/* The packet to send upstream (a fresh query: our id, the name in lower case, our EDNS). */
const uint8_t *dnsproxy_query_packet(const struct dnsproxy_query *query, size_t *ret_len);
/*
 * The upstream's answer to `query`. Returns DNSPROXY_REPLY with the job's reply in `reply`
 * after the answer's addresses were opened (or the refusal, when the rules in force now
 * refuse the name: a launch update came after the query), DNSPROXY_RETRY_TCP (only for a UDP
 * answer), or -ENOMSG when the message is not the answer (keep waiting).
 */
int dnsproxy_query_answer(struct dnsproxy *proxy, struct dnsproxy_query *query,
			  const uint8_t *answer, size_t len, long long now_ms, uint8_t *reply,
			  size_t reply_cap, size_t *ret_reply_len);
/*
 * A query in flight judged again by the rules in force now (a launch update may have come
 * since): DNSPROXY_REPLY with the refusal in `reply` when they refuse its name (and its deny
 * line written; --audit-only: a would_deny line, and -EAGAIN), else -EAGAIN: go on with it.
 * dnsproxy_query_answer calls it; the loop calls it before sending a query again.
 */
int dnsproxy_query_rejudge(struct dnsproxy *proxy, struct dnsproxy_query *query, long long now_ms,
			   uint8_t *reply, size_t reply_cap, size_t *ret_reply_len);
/*
 * The reply when the upstream did not answer in time or failed: SERVFAIL, and a deny line
 * with reason ("upstream_timeout" or "upstream_error"), counted in denied like any refusal:
 * the job's look-up got no answer, and the log says so.
 */
int dnsproxy_query_fail(struct dnsproxy *proxy, struct dnsproxy_query *query, const char *reason,
			uint8_t *reply, size_t reply_cap, size_t *ret_reply_len);
void dnsproxy_query_free(struct dnsproxy *proxy, struct dnsproxy_query *query);
/*
 * Writes the deny lines of refused look-ups whose window closed at now_ms (all of them with
 * DNSPROXY_FLUSH_ALL, before sandbox_exit); returns how many.
 */
#define DNSPROXY_FLUSH_ALL LLONG_MAX
size_t dnsproxy_flush_refusals(struct dnsproxy *proxy, long long now_ms);
/* Closes every address whose time is over at now_ms; returns how many. */
size_t dnsproxy_expire(struct dnsproxy *proxy, long long now_ms);

#endif /* LAUNCH_DNSPROXY_H */
