/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* What the test helpers share: parsing a destination, reporting one errno by name. */
#ifndef LAUNCH_TEST_HELPERS_H
#define LAUNCH_TEST_HELPERS_H

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

/* "127.0.0.2" or "2001:db8::1" (or "::ffff:127.0.0.2") and a port 0-65535. */
static inline int helper_parse_dest(const char *addr, const char *port,
				    struct sockaddr_storage *ret, socklen_t *ret_len)
{
	struct sockaddr_in *sin = (struct sockaddr_in *)ret;
	struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)ret;
	char *end;
	long p;

	errno = 0;
	p = strtol(port, &end, 10);
	if (errno || end == port || *end || p < 0 || p > 65535)
		return -EINVAL;
	memset(ret, 0, sizeof(*ret));
	if (inet_pton(AF_INET, addr, &sin->sin_addr) == 1) {
		sin->sin_family = AF_INET;
		sin->sin_port = htons((uint16_t)p);
		*ret_len = sizeof(*sin);
		return 0;
	}
	if (inet_pton(AF_INET6, addr, &sin6->sin6_addr) == 1) {
		sin6->sin6_family = AF_INET6;
		sin6->sin6_port = htons((uint16_t)p);
		*ret_len = sizeof(*sin6);
		return 0;
	}
	return -EINVAL;
}

/* Prints "OK" for 0, else the negative errno's name (EPERM, ...); the helpers exit 0 then. */
static inline void helper_report(int r)
{
	const char *name = r ? strerrorname_np(-r) : "OK";

	if (name)
		puts(name);
	else
		printf("E%d\n", -r);
}

#endif /* LAUNCH_TEST_HELPERS_H */
