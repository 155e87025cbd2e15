// SPDX-License-Identifier: LGPL-2.1-or-later
/* The job as a server: which sockets it may listen on (the rest of the rule is in BPF). */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stddef.h>
#include <string.h>
#include <sys/un.h>

#include "inbound.h"

/* 127.0.0.0/8, ::1 and ::ffff:127.0.0.0/104, in the mapped form; as inbound.bpf.c judges. */
static bool inbound_loopback(const __u8 *addr)
{
	static const __u8 v4_prefix[12] = { [10] = 0xff, [11] = 0xff };
	static const __u8 v6_loopback[16] = { [15] = 1 };

	if (memcmp(addr, v4_prefix, sizeof(v4_prefix)) == 0)
		return addr[12] == 127;
	return memcmp(addr, v6_loopback, sizeof(v6_loopback)) == 0;
}

static bool inbound_port_allowed(const struct port_set *ports, __u16 port, __u32 proto)
{
	for (__u32 i = 0; ports && i < ports->nranges && i < (__u32)MAX_PORT_RANGES; i++)
		if (port >= ports->ranges[i].lo && port <= ports->ranges[i].hi &&
		    (ports->ranges[i].protos & proto))
			return true;
	return false;
}

static int inbound_judge_inet(const struct inbound_policy *policy, const struct sockaddr *addr,
			      socklen_t addrlen, struct deny_event *ret_event)
{
	if (addr->sa_family == AF_INET && addrlen >= sizeof(struct sockaddr_in)) {
		const struct sockaddr_in *sin = (const struct sockaddr_in *)addr;

		ret_event->addr[10] = ret_event->addr[11] = 0xff;
		memcpy(&ret_event->addr[12], &sin->sin_addr, 4);
		ret_event->port = ntohs(sin->sin_port);
	} else if (addr->sa_family == AF_INET6 && addrlen >= sizeof(struct sockaddr_in6)) {
		const struct sockaddr_in6 *sin6 = (const struct sockaddr_in6 *)addr;

		memcpy(ret_event->addr, &sin6->sin6_addr, 16);
		ret_event->port = ntohs(sin6->sin6_port);
	} else {
		return AUDIT_REASON_ADDRESS;
	}
	if (inbound_loopback(ret_event->addr))
		return 0;
	/* Port 0: not bound yet, and listen() binds it to the wildcard address. */
	if (ret_event->port && inbound_port_allowed(policy->ports, ret_event->port, PROTO_TCP))
		return 0;
	return AUDIT_REASON_ADDRESS;
}

/*
 * An abstract name belongs to the network namespace, which the job shares with the host:
 * any process there may connect to it. A path is a file in the job's view of the file
 * system (its /tmp is its own), and an unbound socket cannot listen at all.
 */
static int inbound_judge_unix(const struct inbound_policy *policy, const struct sockaddr *addr,
			      socklen_t addrlen, struct deny_event *ret_event)
{
	const size_t off = offsetof(struct sockaddr_un, sun_path);
	const struct sockaddr_un *sun = (const struct sockaddr_un *)addr;
	struct unix_path_key key = { 0 };
	size_t len;

	if (addrlen <= off || sun->sun_path[0] != '\0')
		return 0;
	len = addrlen - off;
	if (len > UNIX_PATH_LEN)
		len = UNIX_PATH_LEN;
	memcpy(key.path, sun->sun_path, len);
	/*
	 * The key is zero-padded, so the length tells "@a" from "@a\0": a policy's name holds
	 * no NUL ("\u0000" is refused), and its text ("@a") is as long as its sun_path.
	 */
	for (size_t i = 0; i < policy->nunix; i++)
		if ((policy->unix_allows[i].flags & UNIX_ALLOW_BIND) &&
		    (!policy->unix_allows[i].text || strlen(policy->unix_allows[i].text) == len) &&
		    memcmp(&policy->unix_allows[i].key, &key, sizeof(key)) == 0)
			return 0;
	memcpy(ret_event->unix_path, key.path, sizeof(ret_event->unix_path));
	ret_event->unix_path_len = (__u16)len;
	return AUDIT_REASON_ABSTRACT;
}

int inbound_judge_listen(const struct inbound_policy *policy, const struct sockaddr *addr,
			 socklen_t addrlen, int sock_type, int protocol,
			 struct deny_event *ret_event)
{
	int reason;

	/* Datagram sockets cannot listen: the kernel says so itself. */
	if (sock_type != SOCK_STREAM && sock_type != SOCK_SEQPACKET)
		return 0;
	switch (addr->sa_family) {
	case AF_INET:
	case AF_INET6:
		reason = inbound_judge_inet(policy, addr, addrlen, ret_event);
		break;
	case AF_UNIX:
		reason = inbound_judge_unix(policy, addr, addrlen, ret_event);
		break;
	default:
		return 0;
	}
	if (reason) {
		ret_event->family = addr->sa_family;
		ret_event->sock_type = (__u16)sock_type;
		ret_event->protocol = (__u16)protocol;
		ret_event->reason = (__u16)reason;
	}
	return reason;
}
