/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Launch-time resolution of policy host names to addresses (A and AAAA). */
#ifndef LAUNCH_RESOLVE_H
#define LAUNCH_RESOLVE_H

#include <stddef.h>
#include <netinet/in.h>
#include <sys/socket.h>

/* A DNS server given with --resolver ADDR[:PORT]. */
struct resolver {
	struct sockaddr_storage addr;
	socklen_t addrlen;
};

/* Parses "192.0.2.53", "192.0.2.53:5353", "2001:db8::53", "[2001:db8::53]:5353". */
int resolve_parse_server(const char *text, struct resolver *ret_server);

/*
 * Resolves `name` to its IPv4 and IPv6 addresses, IPv4 returned in mapped form
 * (::ffff:a.b.c.d), duplicates removed. With server NULL the system resolver is used
 * (getaddrinfo, so /etc/hosts counts); otherwise A and AAAA queries go to that server
 * over UDP (TCP when the answer is truncated), with a 2 s timeout and 2 tries.
 * Returns 0 with at least one address, -ENOENT when the name has none, another negative
 * errno on failure. *ret_addrs is malloc'd.
 */
int resolve_host(const char *name, const struct resolver *server, struct in6_addr **ret_addrs,
		 size_t *ret_naddrs);

#endif /* LAUNCH_RESOLVE_H */
