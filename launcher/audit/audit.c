// SPDX-License-Identifier: LGPL-2.1-or-later
/* The JSON-lines audit log: formats events into lines of bounded length. */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include "audit.h"
#include "policy/tlshello.h"
/* The release, from the build (build/release.h) when it makes one. */
#if __has_include("release.h")
#include "release.h"
#endif
#ifndef LAUNCH_RELEASE
#define LAUNCH_RELEASE "0.1.0"
#endif

/* Fields cut to their cap, listed in the line's "truncated" (further ones are not named). */
#define JSON_TRUNCATED_MAX 6
#include "lib/syscalls.h"
#include "lib/util.h"

/* A line being built, and the fields cut to fit it. */
struct json_line {
	struct line_buf out;
	const char *truncated[JSON_TRUNCATED_MAX];
	size_t ntruncated;
};

static void json_mark_truncated(struct json_line *j, const char *key)
{
	if (j->ntruncated < JSON_TRUNCATED_MAX)
		j->truncated[j->ntruncated++] = key;
}

/*
 * Length of the well-formed UTF-8 sequence (RFC 3629) of 2 to 4 bytes at s, at most max
 * bytes long; 0 when s starts no such sequence (overlong forms and surrogates included).
 */
static size_t utf8_sequence_len(const unsigned char *s, size_t max)
{
	unsigned char c = s[0], lo = 0x80, hi = 0xbf;
	size_t n;

	if (c >= 0xc2 && c <= 0xdf)
		n = 2;
	else if (c >= 0xe0 && c <= 0xef)
		n = 3;
	else if (c >= 0xf0 && c <= 0xf4)
		n = 4;
	else
		return 0;
	if (c == 0xe0)
		lo = 0xa0;
	else if (c == 0xed)
		hi = 0x9f;
	else if (c == 0xf0)
		lo = 0x90;
	else if (c == 0xf4)
		hi = 0x8f;
	if (n > max || s[1] < lo || s[1] > hi)
		return 0;
	for (size_t i = 2; i < n; i++)
		if (s[i] < 0x80 || s[i] > 0xbf)
			return 0;
	return n;
}

/*
 * The JSON text of the character at s: `"` and `\` escaped, control characters (C0, DEL,
 * C1) as \u00XX, well-formed UTF-8 as it is, and each byte of anything else as \u00XX too.
 * Characters from U+00A0 up are never escaped, so in the line's text \u00a0-\u00ff can only
 * be an invalid byte, whose value it keeps. (A lone surrogate escape, \udcXX, would say so
 * after parsing too, but strict parsers - cJSON, serde_json - refuse the whole line.)
 * Returns the input bytes taken; the text is in esc, *ret_n long.
 */
static size_t json_char(const unsigned char *s, size_t max, char esc[12], size_t *ret_n)
{
	static const char hex[] = "0123456789abcdef";
	unsigned char c = s[0];
	size_t seq;

	if (c == '"' || c == '\\') {
		esc[0] = '\\';
		esc[1] = (char)c;
		*ret_n = 2;
		return 1;
	}
	if (c >= 0x20 && c < 0x7f) {
		esc[0] = (char)c;
		*ret_n = 1;
		return 1;
	}
	seq = c >= 0x80 ? utf8_sequence_len(s, max) : 0;
	/* U+0080-U+009F are control characters too. */
	if (seq == 2 && c == 0xc2 && s[1] < 0xa0) {
		memcpy(esc, "\\u00", 4);
		esc[4] = hex[s[1] >> 4];
		esc[5] = hex[s[1] & 15];
		*ret_n = 6;
		return 2;
	}
	if (seq) {
		memcpy(esc, s, seq);
		*ret_n = seq;
		return seq;
	}
	memcpy(esc, "\\u00", 4);
	esc[4] = hex[c >> 4];
	esc[5] = hex[c & 15];
	*ret_n = 6;
	return 1;
}

/*
 * A JSON string of exactly len bytes (NULs included: an abstract AF_UNIX name may hold them),
 * at most max_out escaped bytes with its prefix; bytes the job controls (comm, paths, argv)
 * are escaped, never trusted (UTF-8 passes through). Returns false when it had to be cut: an
 * escape or a UTF-8 sequence is never split, so the string stays valid.
 */
static bool json_bytes_capped(struct json_line *j, const char *prefix, const char *s, size_t len,
			      size_t max_out)
{
	size_t out = strlen(prefix);
	bool whole = true;

	line_buf_append(&j->out, "\"", 1);
	line_buf_append(&j->out, prefix, out);
	for (size_t i = 0; i < len;) {
		char esc[12];
		size_t n, taken = json_char((const unsigned char *)s + i, len - i, esc, &n);

		if (out + n > max_out) {
			whole = false;
			break;
		}
		line_buf_append(&j->out, esc, n);
		out += n;
		i += taken;
	}
	line_buf_append(&j->out, "\"", 1);
	return whole;
}

/* A C string of at most max bytes (it ends at its first NUL), as json_bytes_capped. */
static bool json_string_capped(struct json_line *j, const char *prefix, const char *s, size_t max,
			       size_t max_out)
{
	size_t len = 0;

	while (len < max && s[len])
		len++;
	return json_bytes_capped(j, prefix, s, len, max_out);
}

/* "key":"value", value cut to AUDIT_FIELD_MAX escaped bytes and then named in "truncated". */
static void json_key_string(struct json_line *j, const char *key, const char *prefix,
			    const char *value, size_t max)
{
	line_buf_printf(&j->out, ",\"%s\":", key);
	if (!json_string_capped(j, prefix, value, max, AUDIT_FIELD_MAX))
		json_mark_truncated(j, key);
}

static void json_key_str(struct json_line *j, const char *key, const char *value)
{
	json_key_string(j, key, "", value, SIZE_MAX);
}

static void json_key_u64(struct json_line *j, const char *key, unsigned long long value)
{
	line_buf_printf(&j->out, ",\"%s\":%llu", key, value);
}

static int64_t realtime_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/*
 * The fields every line starts with. The machine's name is "host" on every line but http's,
 * where "host" is the request's (as the gateway's users name it) and the machine's "hostname".
 */
static void json_begin_named(struct json_line *j, const struct audit_log *log, int64_t real_ns,
			     const char *event, const char *machine_key)
{
	char ts[40];

	if (audit_format_time(real_ns, ts, sizeof(ts)) < 0)
		strcpy(ts, "1970-01-01T00:00:00.000000Z");
	line_buf_printf(&j->out, "{\"ts\":\"%s\",\"event\":\"%s\",\"v\":%d", ts, event,
			AUDIT_SCHEMA_VERSION);
	/* The line's place among its sandbox's lines: the next one audit_append queues. */
	json_key_u64(j, "seq", log->seq + 1);
	json_key_str(j, machine_key, log->host);
	json_key_str(j, "sandbox", log->sandbox);
	json_key_str(j, "policy", log->policy);
}

static void json_begin(struct json_line *j, const struct audit_log *log, int64_t real_ns,
		       const char *event)
{
	json_begin_named(j, log, real_ns, event, "host");
}

static int json_end(struct json_line *j)
{
	if (j->ntruncated) {
		line_buf_printf(&j->out, ",\"truncated\":[");
		for (size_t i = 0; i < j->ntruncated; i++)
			line_buf_printf(&j->out, "%s\"%s\"", i ? "," : "", j->truncated[i]);
		line_buf_append(&j->out, "]", 1);
	}
	line_buf_append(&j->out, "}\n", 2);
	if (j->out.overflow)
		return -ENOBUFS;
	j->out.buf[j->out.len] = '\0';
	return (int)j->out.len;
}

static const char *family_name(unsigned int family)
{
	switch (family) {
	case AF_UNIX:
		return "unix";
	case AF_INET:
		return "ipv4";
	case AF_INET6:
		return "ipv6";
	case AF_NETLINK:
		return "netlink";
	case AF_PACKET:
		return "packet";
	case AF_VSOCK:
		return "vsock";
	case AF_XDP:
		return "xdp";
	default:
		return NULL;
	}
}

static const char *sock_type_name(unsigned int type)
{
	switch (type) {
	case SOCK_STREAM:
		return "stream";
	case SOCK_DGRAM:
		return "dgram";
	case SOCK_RAW:
		return "raw";
	case SOCK_SEQPACKET:
		return "seqpacket";
	case SOCK_RDM:
		return "rdm";
	default:
		return NULL;
	}
}

static const char *ip_proto_name(unsigned int protocol)
{
	switch (protocol) {
	case IPPROTO_TCP:
		return "tcp";
	case IPPROTO_UDP:
		return "udp";
	case IPPROTO_ICMP:
		return "icmp";
	case IPPROTO_ICMPV6:
		return "icmpv6";
	case IPPROTO_SCTP:
		return "sctp";
	case IPPROTO_UDPLITE:
		return "udplite";
	case IPPROTO_MPTCP:
		return "mptcp";
	case IPPROTO_RAW:
		return "raw";
	default:
		return NULL;
	}
}

/* A name where there is one, else the number, so no refusal is ever unprintable. */
static void json_key_name(struct json_line *j, const char *key, const char *name,
			  unsigned int number)
{
	if (name)
		json_key_str(j, key, name);
	else
		json_key_u64(j, key, number);
}

/* Netlink protocols by the name of their NETLINK_* constant, in lower case. */
static const char *netlink_proto_name(unsigned int protocol)
{
	static const char *const names[] = {
		[0] = "route",	     [2] = "usersock",
		[4] = "sock_diag",   [5] = "nflog",
		[6] = "xfrm",	     [7] = "selinux",
		[8] = "iscsi",	     [9] = "audit",
		[10] = "fib_lookup", [11] = "connector",
		[12] = "netfilter",  [13] = "ip6_fw",
		[14] = "dnrtmsg",    [15] = "kobject_uevent",
		[16] = "generic",    [18] = "scsitransport",
		[19] = "ecryptfs",   [20] = "rdma",
		[21] = "crypto",     [22] = "smc",
	};

	return protocol < ARRAY_SIZE(names) ? names[protocol] : NULL;
}

static const char *reason_name(unsigned int reason)
{
	switch (reason) {
	case AUDIT_REASON_ADDRESS:
		return "address";
	case AUDIT_REASON_ABSTRACT:
		return "abstract";
	case AUDIT_REASON_PEER:
		return "peer";
	case AUDIT_REASON_ATTACH:
		return "attach";
	default:
		return NULL;
	}
}

/* An address kept as IPv6 (IPv4 mapped), written in the family the job used. */
static void json_key_ip(struct json_line *j, const char *key, unsigned int family,
			const __u8 addr[16])
{
	char ip[INET6_ADDRSTRLEN];

	if (family == AF_INET)
		inet_ntop(AF_INET, addr + 12, ip, sizeof(ip));
	else
		inet_ntop(AF_INET6, addr, ip, sizeof(ip));
	json_key_str(j, key, ip);
}

/* An AF_UNIX address: a path up to its first NUL, an abstract name ('@'...) whole. */
static void json_key_unix(struct json_line *j, const char *key, const struct deny_event *event)
{
	size_t len = event->unix_path_len < sizeof(event->unix_path) ? event->unix_path_len
								     : sizeof(event->unix_path);

	line_buf_printf(&j->out, ",\"%s\":", key);
	if (event->unix_path[0] != '\0') {
		if (!json_string_capped(j, "", event->unix_path,
					len ? len : sizeof(event->unix_path), AUDIT_FIELD_MAX))
			json_mark_truncated(j, key);
		return;
	}
	/* No length given: up to the next NUL, the most that can be said. */
	if (!len)
		while (len + 1 < sizeof(event->unix_path) && event->unix_path[len + 1])
			len++;
	else
		len--;
	/* Abstract names start with a NUL byte; they are shown with a leading '@'. */
	if (!json_bytes_capped(j, "@", event->unix_path + 1, len, AUDIT_FIELD_MAX))
		json_mark_truncated(j, key);
}

/* The call a seccomp refusal concerns, by name where the ABI's table has it. */
static void json_key_syscall(struct json_line *j, const struct deny_event *event)
{
	if (!event->syscall_arch)
		return;
	json_key_name(j, "syscall", syscalls_name(event->syscall_arch, event->syscall_nr),
		      event->syscall_nr);
	if (event->op == AUDIT_OP_SYSCALL)
		json_key_str(j, "abi", syscalls_abi(event->syscall_arch, event->syscall_nr));
}

static const char *op_name(unsigned int op)
{
	switch (op) {
	case AUDIT_OP_CONNECT:
		return "connect";
	case AUDIT_OP_SENDMSG:
		return "sendmsg";
	case AUDIT_OP_SOCKET:
		return "socket";
	case AUDIT_OP_CONNECT_UNIX:
		return "connect_unix";
	case AUDIT_OP_SENDMSG_UNIX:
		return "sendmsg_unix";
	case AUDIT_OP_USERNS:
		return "userns";
	case AUDIT_OP_IO_URING:
		return "io_uring";
	case AUDIT_OP_SETSOCKOPT:
		return "setsockopt";
	case AUDIT_OP_PACKET:
		return "packet";
	case AUDIT_OP_SYSCALL:
		return "syscall";
	case AUDIT_OP_BIND:
		return "bind";
	case AUDIT_OP_LISTEN:
		return "listen";
	case AUDIT_OP_TLS:
		return "tls";
	case AUDIT_OP_HTTP:
		return "http";
	default:
		return "unknown";
	}
}

static const char *packet_reason_name(unsigned int reason)
{
	switch (reason) {
	case PACKET_DROP_DESTINATION:
		return "destination";
	case PACKET_DROP_ROUTING_HEADER:
		return "routing_header";
	case PACKET_DROP_IP_OPTIONS:
		return "ip_options";
	case PACKET_DROP_MALFORMED:
		return "malformed";
	case PACKET_DROP_TLS_UNJUDGED:
		return "tls_unjudged";
	default:
		return NULL;
	}
}

/* uapi/linux/tcp.h's, without its header (it clashes with glibc's <netinet/tcp.h>). */
#define LAUNCH_TCP_FASTOPEN_CONNECT 30

/* uapi/linux/in6.h, which glibc's <netinet/in.h> does not carry. */
#ifndef IPV6_FLOWLABEL_MGR
#define IPV6_FLOWLABEL_MGR 32
#endif

/* The options the seccomp filter refuses (seccomp.c), by name (uapi/linux/in.h, in6.h). */
static const char *sockopt_name(int level, int optname)
{
	if (level == IPPROTO_IP && optname == IP_OPTIONS)
		return "IP_OPTIONS";
	/* Refused where TLS names are checked (seccomp.c, SECCOMP_REFUSE_FASTOPEN). */
	if (level == IPPROTO_TCP && optname == LAUNCH_TCP_FASTOPEN_CONNECT)
		return "TCP_FASTOPEN_CONNECT";
	if (level != IPPROTO_IPV6)
		return NULL;
	switch (optname) {
	case IPV6_2292PKTINFO:
		return "IPV6_2292PKTINFO";
	case IPV6_2292HOPOPTS:
		return "IPV6_2292HOPOPTS";
	case IPV6_2292DSTOPTS:
		return "IPV6_2292DSTOPTS";
	case IPV6_2292RTHDR:
		return "IPV6_2292RTHDR";
	case IPV6_2292PKTOPTIONS:
		return "IPV6_2292PKTOPTIONS";
	case IPV6_2292HOPLIMIT:
		return "IPV6_2292HOPLIMIT";
	case IPV6_PKTINFO:
		return "IPV6_PKTINFO";
	case IPV6_FLOWLABEL_MGR:
		return "IPV6_FLOWLABEL_MGR";
	case IPV6_HOPOPTS:
		return "IPV6_HOPOPTS";
	case IPV6_RTHDRDSTOPTS:
		return "IPV6_RTHDRDSTOPTS";
	case IPV6_RTHDR:
		return "IPV6_RTHDR";
	case IPV6_DSTOPTS:
		return "IPV6_DSTOPTS";
	default:
		return NULL;
	}
}

static const char *sockopt_level_name(int level)
{
	switch (level) {
	case IPPROTO_IP:
		return "ip";
	case IPPROTO_IPV6:
		return "ipv6";
	case IPPROTO_TCP:
		return "tcp";
	default:
		return NULL;
	}
}

/* The event a kernel event's verdict makes: refused, or audit-only's would_deny and allow. */
static const char *verdict_event_name(unsigned int verdict)
{
	switch (verdict) {
	case AUDIT_VERDICT_WOULD_DENY:
		return "would_deny";
	case AUDIT_VERDICT_ALLOW:
		return "allow";
	default:
		return "deny";
	}
}

int audit_format_deny(const struct audit_log *log, const struct deny_event *event, char *buf,
		      size_t len)
{
	return audit_format_deny_name(log, event, NULL, buf, len);
}

int audit_format_deny_name(const struct audit_log *log, const struct deny_event *event,
			   const char *dst_name, char *buf, size_t len)
{
	return audit_format_deny_exe(log, event, dst_name, NULL, buf, len);
}

int audit_format_deny_exe(const struct audit_log *log, const struct deny_event *event,
			  const char *dst_name, const char *exe, char *buf, size_t len)
{
	struct json_line j = { .out = { .buf = buf, .cap = len } };

	json_begin(&j, log, (int64_t)event->boot_ns + log->boot_to_real_ns,
		   verdict_event_name(event->verdict));
	json_key_str(&j, "op", op_name(event->op));
	/*
	 * The packet hooks name a socket's owner, which they may not know (launch.h): a
	 * dropped packet's or a refused peer's line may have no process to name.
	 */
	if (event->pid || !(event->op == AUDIT_OP_PACKET ||
			    (event->op == AUDIT_OP_LISTEN && event->reason == AUDIT_REASON_PEER))) {
		json_key_u64(&j, "pid", event->pid);
		json_key_u64(&j, "tid", event->tid);
		json_key_string(&j, "comm", "", event->comm, sizeof(event->comm));
		json_key_u64(&j, "uid", event->uid);
		if (exe)
			json_key_str(&j, "exe", exe);
	}
	json_key_syscall(&j, event);
	/* userns, io_uring and other ABIs' calls concern no socket: nothing more to say. */
	if (event->op == AUDIT_OP_USERNS || event->op == AUDIT_OP_IO_URING ||
	    event->op == AUDIT_OP_SYSCALL)
		return json_end(&j);
	json_key_name(&j, "family", family_name(event->family), event->family);

	if (event->op == AUDIT_OP_SOCKET) {
		json_key_name(&j, "type", sock_type_name(event->sock_type), event->sock_type);
		json_key_name(&j, "protocol",
			      event->family == AF_NETLINK ? netlink_proto_name(event->protocol)
							  : ip_proto_name(event->protocol),
			      event->protocol);
	} else if (event->op == AUDIT_OP_SETSOCKOPT) {
		const char *option = sockopt_name(event->level, event->optname);

		json_key_name(&j, "type", sock_type_name(event->sock_type), event->sock_type);
		json_key_name(&j, "protocol", ip_proto_name(event->protocol), event->protocol);
		json_key_name(&j, "level", sockopt_level_name(event->level),
			      (unsigned int)event->level);
		json_key_u64(&j, "optname", (unsigned int)event->optname);
		if (option)
			json_key_str(&j, "option", option);
	} else if (event->op == AUDIT_OP_CONNECT_UNIX || event->op == AUDIT_OP_SENDMSG_UNIX) {
		json_key_name(&j, "type", sock_type_name(event->sock_type), event->sock_type);
		json_key_unix(&j, "dst_path", event);
	} else if (event->op == AUDIT_OP_BIND || event->op == AUDIT_OP_LISTEN) {
		json_key_name(&j, "type", sock_type_name(event->sock_type), event->sock_type);
		if (event->family == AF_UNIX) {
			json_key_unix(&j, "path", event);
		} else {
			json_key_name(&j, "protocol", ip_proto_name(event->protocol),
				      event->protocol);
			json_key_ip(&j, "local_ip", event->family, event->addr);
			json_key_u64(&j, "local_port", event->port);
		}
		if (event->reason == AUDIT_REASON_PEER) {
			json_key_ip(&j, "peer_ip", event->family, event->peer_addr);
			json_key_u64(&j, "peer_port", event->peer_port);
		}
		if (reason_name(event->reason))
			json_key_str(&j, "reason", reason_name(event->reason));
	} else {
		json_key_name(&j, "protocol", ip_proto_name(event->protocol), event->protocol);
		json_key_ip(&j, "dst_ip", event->family, event->addr);
		json_key_u64(&j, "dst_port", event->port);
		if (dst_name)
			json_key_str(&j, "dst_name", dst_name);
		if (event->op == AUDIT_OP_PACKET)
			json_key_name(&j, "reason", packet_reason_name(event->reason),
				      event->reason);
		if (event->op == AUDIT_OP_TLS) {
			/* The job's bytes: escaped, and bounded by the field, like comm. */
			const struct tls_deny_event *tls = (const void *)event;

			json_key_string(&j, "sni", "", tls->sni, sizeof(tls->sni));
			json_key_name(&j, "reason", tlshello_reason_name(event->reason),
				      event->reason);
		}
	}
	return json_end(&j);
}

/* A malformed message has no question: qname and qtype are left out, as rcode when dropped. */
static void json_dns_common(struct json_line *j, const struct audit_dns *dns)
{
	json_key_str(j, "protocol", dns->protocol);
	if (dns->qname)
		json_key_str(j, "qname", dns->qname);
	if (dns->qtype)
		json_key_str(j, "qtype", dns->qtype);
	if (dns->rcode)
		json_key_str(j, "rcode", dns->rcode);
}

int audit_format_dns_deny(const struct audit_log *log, const struct audit_dns *dns, char *buf,
			  size_t len)
{
	struct json_line j = { .out = { .buf = buf, .cap = len } };

	json_begin(&j, log, dns->ts_ns ? dns->ts_ns : realtime_ns(),
		   dns->would_deny ? "would_deny" : "deny");
	json_key_str(&j, "op", "dns");
	if (dns->pid > 0)
		json_key_u64(&j, "pid", (unsigned int)dns->pid);
	json_dns_common(&j, dns);
	json_key_str(&j, "reason", dns->reason);
	json_key_u64(&j, "repeats", dns->repeats);
	return json_end(&j);
}

int audit_format_dns_allow(const struct audit_log *log, const struct audit_dns *dns, char *buf,
			   size_t len)
{
	struct json_line j = { .out = { .buf = buf, .cap = len } };
	char ip[INET6_ADDRSTRLEN];

	json_begin(&j, log, realtime_ns(), "dns_allow");
	json_dns_common(&j, dns);
	line_buf_printf(&j.out, ",\"addrs\":[");
	for (size_t i = 0; i < dns->naddrs && i < AUDIT_DNS_ADDRS_MAX; i++) {
		const struct in6_addr *addr = &dns->addrs[i];

		if (IN6_IS_ADDR_V4MAPPED(addr))
			inet_ntop(AF_INET, &addr->s6_addr[12], ip, sizeof(ip));
		else
			inet_ntop(AF_INET6, addr, ip, sizeof(ip));
		line_buf_printf(&j.out, "%s\"%s\"", i ? "," : "", ip);
	}
	line_buf_append(&j.out, "]", 1);
	json_key_u64(&j, "naddrs", dns->naddrs);
	json_key_u64(&j, "ttl", dns->ttl_s);
	json_key_u64(&j, "open_s", dns->open_s);
	return json_end(&j);
}

/*
 * A JSON array of strings within max_out escaped bytes, each cut at AUDIT_ARG_MAX. Returns
 * false when one was cut or the last ones left out; *ret_count is how many there are.
 */
static bool json_string_array_capped(struct json_line *j, char *const *strings, size_t max_out,
				     size_t *ret_count)
{
	bool whole = true, full = false;
	size_t n = 0, first;

	line_buf_append(&j->out, "[", 1);
	first = j->out.len;
	for (; strings[n]; n++) {
		size_t used = j->out.len - first, budget = AUDIT_ARG_MAX;

		if (full)
			continue;
		/* A comma and two quotes around what is left of the budget. */
		if (used + 3 + budget > max_out)
			budget = used + 3 < max_out ? max_out - used - 3 : 0;
		if (budget < 16) {
			/* No room for a useful part of this string: the rest are left out. */
			whole = false;
			full = true;
			continue;
		}
		if (n)
			line_buf_append(&j->out, ",", 1);
		if (!json_string_capped(j, "", strings[n], SIZE_MAX, budget))
			whole = false;
	}
	line_buf_append(&j->out, "]", 1);
	*ret_count = n;
	return whole;
}

/* Room kept after a "policies" array: the fields after it, "truncated" and the line's end. */
#define JSON_POLICIES_RESERVE 256

/*
 * A "policies" array of sandbox_start's form: name, path and SHA-256 of each. Any number of
 * policies fits the line: those past the room are left out, and key is named in "truncated".
 */
static void json_policies(struct json_line *j, const char *key, struct policy *const *policies,
			  size_t npolicies)
{
	size_t cap = j->out.cap;

	if (j->out.overflow || j->out.len + JSON_POLICIES_RESERVE >= cap)
		return json_mark_truncated(j, key);
	j->out.cap = cap - JSON_POLICIES_RESERVE;
	line_buf_printf(&j->out, ",\"%s\":[", key);
	for (size_t i = 0; i < npolicies && !j->out.overflow; i++) {
		size_t before = j->out.len;

		line_buf_printf(&j->out, "%s{\"name\":", i ? "," : "");
		json_string_capped(j, "", policies[i]->name, SIZE_MAX, AUDIT_FIELD_MAX);
		line_buf_printf(&j->out, ",\"path\":");
		json_string_capped(j, "", policies[i]->path, SIZE_MAX, AUDIT_FIELD_MAX);
		line_buf_printf(&j->out, ",\"sha256\":\"%s\"}", policies[i]->sha256);
		if (j->out.overflow) {
			/* This one and the rest are left out; the line stays whole. */
			j->out.len = before;
			j->out.overflow = false;
			json_mark_truncated(j, key);
			break;
		}
	}
	j->out.cap = cap;
	line_buf_append(&j->out, "]", 1);
}

int audit_format_start(const struct audit_log *log, char *const *argv, int pid,
		       const struct audit_job *job, size_t rules, const char *hostname, char *buf,
		       size_t len)
{
	struct json_line j = { .out = { .buf = buf, .cap = len } };
	size_t argc, nwrite;
	bool truncated;

	json_begin(&j, log, realtime_ns(), "sandbox_start");
	/*
	 * A command line can be megabytes: the line keeps the arguments that fit in
	 * AUDIT_ARGV_MAX, each cut at AUDIT_ARG_MAX, and says so; argc has the full count.
	 */
	line_buf_printf(&j.out, ",\"argv\":");
	truncated = !json_string_array_capped(&j, argv, AUDIT_ARGV_MAX, &argc);
	json_key_u64(&j, "argc", argc);
	if (truncated)
		line_buf_printf(&j.out, ",\"argv_truncated\":true");
	json_key_u64(&j, "pid", (unsigned int)pid);
	json_key_u64(&j, "uid", job->uid);
	json_key_u64(&j, "gid", job->gid);
	line_buf_printf(&j.out, ",\"landlock\":%s", job->landlock_abi > 0 ? "true" : "false");
	if (job->landlock_abi > 0)
		json_key_u64(&j, "landlock_abi", (unsigned int)job->landlock_abi);
	if (job->fs_write) {
		line_buf_printf(&j.out, ",\"fs_write\":");
		if (!json_string_array_capped(&j, job->fs_write, AUDIT_FIELD_MAX, &nwrite))
			json_mark_truncated(&j, "fs_write");
	}
	json_key_u64(&j, "rules", rules);
	/* unix_connect is one of a fixed few words: no escaping needed. */
	line_buf_printf(&j.out, ",\"features\":{\"unix_connect\":\"%s\"",
			job->unix_connect ?: "bpf");
	json_key_u64(&j, "landlock_abi",
		     (unsigned int)(job->landlock_abi > 0 ? job->landlock_abi : 0));
	if (job->kernel)
		json_key_str(&j, "kernel", job->kernel);
	line_buf_printf(&j.out, "}");
	if (log->audit_only)
		line_buf_printf(&j.out, ",\"audit_only\":true");
	json_key_str(&j, "hostname", hostname);
	json_key_str(&j, "version", LAUNCH_RELEASE);
	json_policies(&j, "policies", log->policies, log->npolicies);
	return json_end(&j);
}

int audit_format_lost(const struct audit_log *log, unsigned long long count, char *buf, size_t len)
{
	return audit_format_lost_verdicts(log, count, 0, 0, buf, len);
}

int audit_format_lost_verdicts(const struct audit_log *log, unsigned long long count,
			       unsigned long long would_deny, unsigned long long allowed, char *buf,
			       size_t len)
{
	struct json_line j = { .out = { .buf = buf, .cap = len } };

	json_begin(&j, log, realtime_ns(), "events_lost");
	json_key_u64(&j, "count", count);
	if (would_deny)
		json_key_u64(&j, "would_deny", would_deny);
	if (allowed)
		json_key_u64(&j, "allow", allowed);
	return json_end(&j);
}

/* An object of counts by op ("dns" last, from `dns`): {"connect":3,"dns":2}; {} for none. */
static void json_key_by_op(struct json_line *j, const char *key, const unsigned long long *by_op,
			   unsigned long long dns)
{
	line_buf_printf(&j->out, ",\"%s\":{", key);
	for (unsigned int op = 0, first = 1; op <= AUDIT_OPS_MAX; op++) {
		unsigned long long count = op < AUDIT_OPS_MAX ? by_op[op] : dns;

		if (!count)
			continue;
		line_buf_printf(&j->out, "%s\"%s\":%llu", first ? "" : ",",
				op < AUDIT_OPS_MAX ? op_name(op) : "dns", count);
		first = 0;
	}
	line_buf_append(&j->out, "}", 1);
}

int audit_format_limit(const struct audit_log *log, const char *kind, unsigned long long limit,
		       const char *action, char *buf, size_t len)
{
	struct json_line j = { .out = { .buf = buf, .cap = len } };

	json_begin(&j, log, realtime_ns(), "limit");
	json_key_str(&j, "kind", kind);
	json_key_u64(&j, "limit", limit);
	json_key_str(&j, "action", action);
	return json_end(&j);
}

int audit_format_policy_update(const struct audit_log *log, const struct audit_update *update,
			       char *buf, size_t len)
{
	struct json_line j = { .out = { .buf = buf, .cap = len } };

	json_begin(&j, log, realtime_ns(), "policy_update");
	json_key_str(&j, "old_policy", update->old_names);
	json_policies(&j, "old_policies", update->old_policies, update->nold);
	json_policies(&j, "policies", log->policies, log->npolicies);
	json_key_u64(&j, "rules", update->rules);
	json_key_u64(&j, "requester_pid", (unsigned int)update->requester_pid);
	json_key_u64(&j, "requester_uid", update->requester_uid);
	return json_end(&j);
}

int audit_format_exit(const struct audit_log *log, const struct audit_exit *exit, char *buf,
		      size_t len)
{
	struct json_line j = { .out = { .buf = buf, .cap = len } };

	json_begin(&j, log, realtime_ns(), "sandbox_exit");
	if (exit->exit_unknown)
		; /* neither */
	else if (exit->exit_code >= 0)
		json_key_u64(&j, "exit_code", (unsigned int)exit->exit_code);
	else
		json_key_u64(&j, "signal", (unsigned int)-exit->exit_code);
	json_key_u64(&j, "duration_ms",
		     exit->duration_ms < 0 ? 0 : (unsigned long long)exit->duration_ms);
	json_key_u64(&j, "denied", exit->denied);
	json_key_u64(&j, "lost", exit->lost);
	json_key_u64(&j, "unwritten", exit->unwritten);
	json_key_u64(&j, "packet_dropped", exit->packet_dropped);
	json_key_by_op(&j, "denied_by_op", log->denied_by_op, log->denied_dns);
	if (log->audit_only) {
		json_key_u64(&j, "would_deny", exit->would_deny);
		json_key_u64(&j, "would_deny_lost", exit->would_deny_lost);
		json_key_by_op(&j, "would_deny_by_op", log->would_deny_by_op, log->would_deny_dns);
		json_key_u64(&j, "allowed", exit->allowed);
		json_key_u64(&j, "allowed_lost", exit->allowed_lost);
	}
	if (exit->log_failed)
		json_key_u64(&j, "log_failed", exit->log_failed);
	return json_end(&j);
}

int audit_deny(struct audit_log *log, const struct deny_event *event)
{
	return audit_deny_name(log, event, NULL);
}

int audit_deny_name(struct audit_log *log, const struct deny_event *event, const char *dst_name)
{
	return audit_deny_exe(log, event, dst_name, NULL);
}

int audit_deny_exe(struct audit_log *log, const struct deny_event *event, const char *dst_name,
		   const char *exe)
{
	char line[AUDIT_LINE_MAX];
	int n = audit_format_deny_exe(log, event, dst_name, exe, line, sizeof(line));

	/* A dropped packet is no refused call: sandbox_exit's packet_dropped counts those. */
	bool refusal = event->op != AUDIT_OP_PACKET && event->verdict == AUDIT_VERDICT_DENY;
	unsigned int op = event->op < AUDIT_OPS_MAX ? event->op : 0;

	if (refusal)
		log->denied_by_op[op]++;
	else if (event->verdict == AUDIT_VERDICT_WOULD_DENY)
		log->would_deny_by_op[op]++;
	else if (event->verdict == AUDIT_VERDICT_ALLOW)
		log->allowed++;
	return audit_append_formatted(log, refusal ? AUDIT_KIND_DENY : AUDIT_KIND_OTHER, line, n);
}

int audit_dns_deny(struct audit_log *log, const struct audit_dns *dns)
{
	char line[AUDIT_LINE_MAX];
	int n = audit_format_dns_deny(log, dns, line, sizeof(line));

	if (dns->would_deny)
		log->would_deny_dns++;
	else
		log->denied_dns++;
	return audit_append_formatted(log, dns->would_deny ? AUDIT_KIND_OTHER : AUDIT_KIND_DENY,
				      line, n);
}

int audit_format_http(const struct audit_log *log, const struct audit_http *http, char *buf,
		      size_t len)
{
	struct json_line j = { .out = { .buf = buf, .cap = len } };

	json_begin_named(&j, log, realtime_ns(), "http", "hostname");
	json_key_str(&j, "method", http->method ? http->method : "");
	json_key_str(&j, "host", http->host ? http->host : "");
	json_key_str(&j, "path", http->path ? http->path : "");
	json_key_u64(&j, "status", http->status);
	json_key_u64(&j, "bytes_out", http->bytes_out);
	json_key_u64(&j, "bytes_in", http->bytes_in);
	line_buf_printf(&j.out, ",\"duration_ms\":%.3f", http->duration_ms);
	json_key_str(&j, "decision", http->allowed ? "allow" : "deny");
	json_key_str(&j, "reason", http->reason ? http->reason : "");
	/* The name of the secret put into the request; its value is never here. */
	if (http->secret)
		json_key_str(&j, "secret", http->secret);
	if (http->pid > 0) {
		json_key_u64(&j, "pid", (unsigned int)http->pid);
		if (http->comm)
			json_key_str(&j, "comm", http->comm);
		if (http->exe)
			json_key_str(&j, "exe", http->exe);
	}
	return json_end(&j);
}

int audit_http(struct audit_log *log, const struct audit_http *http)
{
	char line[AUDIT_LINE_MAX];
	int n = audit_format_http(log, http, line, sizeof(line));

	if (!http->allowed)
		log->denied_by_op[AUDIT_OP_HTTP]++;
	return audit_append_formatted(log, http->allowed ? AUDIT_KIND_OTHER : AUDIT_KIND_DENY, line,
				      n);
}

unsigned long long audit_would_deny_total(const struct audit_log *log)
{
	unsigned long long total = log->would_deny_dns;

	for (size_t op = 0; op < AUDIT_OPS_MAX; op++)
		total += log->would_deny_by_op[op];
	return total;
}

unsigned long long audit_denied_total(const struct audit_log *log)
{
	unsigned long long total = log->denied_dns;

	for (size_t op = 0; op < AUDIT_OPS_MAX; op++)
		total += log->denied_by_op[op];
	return total;
}

const char *audit_launch_version(void)
{
	return LAUNCH_RELEASE;
}
