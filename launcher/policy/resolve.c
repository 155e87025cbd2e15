/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Launch-time resolution of policy host names: getaddrinfo, or A and AAAA to one server. */
#include <errno.h>
#include <netdb.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <time.h>
#include <arpa/inet.h>
#include <sys/random.h>
#include <sys/socket.h>

#include "lib/dnswire.h"
#include "resolve.h"
#include "lib/util.h"

#define RESOLVE_DEFAULT_PORT   53
#define RESOLVE_TRY_TIMEOUT_MS 2000
#define RESOLVE_TRIES	       2
/* Addresses kept per record type; a 64 KiB TCP answer could carry about 4,000. */
#define RESOLVE_MAX_ADDRS_PER_TYPE 1024

/* One of the two questions (A, AAAA) asked of the server, and what came of it. */
struct resolve_query {
	uint16_t qtype;
	uint16_t id;
	uint8_t pkt[DNS_UDP_MAX_LEN];
	size_t pktlen;
	bool answered;	/* a reply was accepted; rcode and addrs are valid */
	bool truncated; /* that reply had TC set: ask again over TCP */
	int error;	/* when not answered: why, -ETIMEDOUT unless something better is known */
	uint8_t rcode;
	struct dns_answer_addr *addrs;
	size_t naddrs;
};

static inline void freeaddrinfop(struct addrinfo **ai)
{
	if (*ai)
		freeaddrinfo(*ai);
}

static int resolve_parse_port(const char *text, uint16_t *ret_port)
{
	unsigned long port = 0;

	if (!*text)
		return -EINVAL;
	for (const char *p = text; *p; p++) {
		if (*p < '0' || *p > '9')
			return -EINVAL;
		port = port * 10 + (unsigned long)(*p - '0');
		if (port > 65535)
			return -EINVAL;
	}
	if (port == 0)
		return -EINVAL;
	*ret_port = (uint16_t)port;
	return 0;
}

static int resolve_set_addr(int family, const char *host, uint16_t port, struct resolver *server)
{
	memset(server, 0, sizeof(*server));
	if (family == AF_INET) {
		struct sockaddr_in *sin = (struct sockaddr_in *)&server->addr;

		if (inet_pton(AF_INET, host, &sin->sin_addr) != 1)
			return -EINVAL;
		sin->sin_family = AF_INET;
		sin->sin_port = htons(port);
		server->addrlen = sizeof(*sin);
	} else {
		struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)&server->addr;

		if (inet_pton(AF_INET6, host, &sin6->sin6_addr) != 1)
			return -EINVAL;
		sin6->sin6_family = AF_INET6;
		sin6->sin6_port = htons(port);
		server->addrlen = sizeof(*sin6);
	}
	return 0;
}

int resolve_parse_server(const char *text, struct resolver *ret_server)
{
	char host[INET6_ADDRSTRLEN];
	const char *host_end, *colon;
	uint16_t port = RESOLVE_DEFAULT_PORT;
	int family, r;

	if (!text || !*text || !ret_server)
		return -EINVAL;

	if (text[0] == '[') {
		/* "[v6]" or "[v6]:port": the only form that gives an IPv6 server a port. */
		const char *close = strchr(text, ']');

		if (!close)
			return -EINVAL;
		if (close[1] == ':') {
			r = resolve_parse_port(close + 2, &port);
			if (r < 0)
				return r;
		} else if (close[1] != '\0') {
			return -EINVAL;
		}
		text++;
		host_end = close;
		family = AF_INET6;
	} else {
		colon = strchr(text, ':');
		if (colon && strchr(colon + 1, ':')) {
			/* Two colons or more: a bare IPv6 address, which cannot carry a port. */
			host_end = text + strlen(text);
			family = AF_INET6;
		} else if (colon) {
			r = resolve_parse_port(colon + 1, &port);
			if (r < 0)
				return r;
			host_end = colon;
			family = AF_INET;
		} else {
			host_end = text + strlen(text);
			family = AF_INET;
		}
	}

	if (host_end == text || (size_t)(host_end - text) >= sizeof(host))
		return -EINVAL;
	memcpy(host, text, (size_t)(host_end - text));
	host[host_end - text] = '\0';
	return resolve_set_addr(family, host, port, ret_server);
}

/* Appends `addr` unless it is already there. */
static void resolve_add_unique(struct in6_addr *addrs, size_t *n, const struct in6_addr *addr)
{
	for (size_t i = 0; i < *n; i++)
		if (memcmp(&addrs[i], addr, sizeof(*addr)) == 0)
			return;
	addrs[(*n)++] = *addr;
}

static void resolve_map_v4(const struct in_addr *v4, struct in6_addr *ret_addr)
{
	memset(ret_addr, 0, sizeof(*ret_addr));
	ret_addr->s6_addr[10] = 0xff;
	ret_addr->s6_addr[11] = 0xff;
	memcpy(&ret_addr->s6_addr[12], v4, 4);
}

static int resolve_gai_error(int gai)
{
	switch (gai) {
	case EAI_NONAME:
	case EAI_NODATA:
	case EAI_ADDRFAMILY:
		return -ENOENT;
	case EAI_AGAIN:
		return -EAGAIN;
	case EAI_MEMORY:
		return -ENOMEM;
	case EAI_SYSTEM:
		return errno > 0 ? -errno : -EIO;
	default:
		return -EIO;
	}
}

static int resolve_system(const char *name, struct in6_addr **ret_addrs, size_t *ret_naddrs)
{
	/* SOCK_STREAM: otherwise every address comes once per socket type. */
	struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM };
	_cleanup_(freeaddrinfop) struct addrinfo *res = NULL;
	_cleanup_free_ struct in6_addr *addrs = NULL;
	size_t count = 0, n = 0;
	int r;

	r = getaddrinfo(name, NULL, &hints, &res);
	if (r != 0)
		return resolve_gai_error(r);
	for (struct addrinfo *ai = res; ai; ai = ai->ai_next)
		count++;
	addrs = calloc(count ? count : 1, sizeof(*addrs));
	if (!addrs)
		return -ENOMEM;
	for (struct addrinfo *ai = res; ai; ai = ai->ai_next) {
		struct in6_addr addr;

		if (ai->ai_family == AF_INET && ai->ai_addrlen >= sizeof(struct sockaddr_in))
			resolve_map_v4(&((struct sockaddr_in *)ai->ai_addr)->sin_addr, &addr);
		else if (ai->ai_family == AF_INET6 && ai->ai_addrlen >= sizeof(struct sockaddr_in6))
			addr = ((struct sockaddr_in6 *)ai->ai_addr)->sin6_addr;
		else
			continue;
		resolve_add_unique(addrs, &n, &addr);
	}
	if (n == 0)
		return -ENOENT;
	*ret_addrs = TAKE_PTR(addrs);
	*ret_naddrs = n;
	return 0;
}

/* Waits for `events` on fd until the deadline: 0, -ETIMEDOUT, or -errno. */
static int resolve_wait(int fd, short events, int64_t deadline_ms)
{
	for (;;) {
		struct pollfd pfd = { .fd = fd, .events = events };
		int64_t left = deadline_ms - monotonic_now_ms();
		int r;

		if (left <= 0)
			return -ETIMEDOUT;
		r = poll(&pfd, 1, (int)left);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -errno;
		if (r > 0)
			return 0;
	}
}

static int resolve_random_ids(struct resolve_query *queries, size_t n)
{
	uint16_t ids[2];

	/* Unpredictable ids are half of what keeps an off-path forger out (RFC 5452). */
	for (;;) {
		ssize_t got = getrandom(ids, sizeof(ids), 0);

		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0)
			return -errno;
		if ((size_t)got != sizeof(ids))
			return -EIO;
		/* Distinct, so that a reply names its question by id alone. */
		if (n < 2 || ids[0] != ids[1])
			break;
	}
	for (size_t i = 0; i < n && i < ARRAY_SIZE(ids); i++)
		queries[i].id = ids[i];
	return 0;
}

static bool resolve_pending(const struct resolve_query *queries, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!queries[i].answered)
			return true;
	return false;
}

/* Hands one UDP datagram to the query whose id it carries; anything else is dropped. */
static void resolve_accept_reply(const char *name, const uint8_t *reply, size_t len,
				 struct resolve_query *queries, size_t n)
{
	uint16_t id;

	if (len < 2)
		return;
	id = (uint16_t)(reply[0] << 8 | reply[1]);
	for (size_t i = 0; i < n; i++) {
		struct resolve_query *q = &queries[i];
		int r;

		if (q->answered || q->id != id)
			continue;
		r = dns_parse_response(reply, len, q->id, name, q->addrs,
				       RESOLVE_MAX_ADDRS_PER_TYPE, &q->naddrs, &q->rcode,
				       &q->truncated);
		if (r == 0) {
			q->answered = true;
		} else if (r == -EBADMSG) {
			/*
			 * Maybe a forgery, maybe a broken server: keep listening, but say so
			 * if nothing better arrives.
			 */
			q->error = r;
		}
		return;
	}
}

/*
 * Asks every query over one connected UDP socket: the kernel then drops datagrams from any
 * other source, and ICMP port unreachable comes back as -ECONNREFUSED.
 */
static int resolve_udp(const struct resolver *server, const char *name,
		       struct resolve_query *queries, size_t n)
{
	_cleanup_close_ int fd = -1;
	_cleanup_free_ uint8_t *reply = NULL;

	reply = malloc(DNS_TCP_MAX_LEN);
	if (!reply)
		return -ENOMEM;
	fd = socket(server->addr.ss_family, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -errno;
	if (connect(fd, (const struct sockaddr *)&server->addr, server->addrlen) < 0)
		return -errno;

	for (int try = 0; try < RESOLVE_TRIES && resolve_pending(queries, n); try++) {
		int64_t deadline = monotonic_now_ms() + RESOLVE_TRY_TIMEOUT_MS;

		bool refused = false;

		for (size_t i = 0; i < n && !refused; i++) {
			if (queries[i].answered)
				continue;
			if (send(fd, queries[i].pkt, queries[i].pktlen, 0) >= 0)
				continue;
			/*
			 * The ICMP error for an earlier datagram can surface on this send and
			 * is then consumed by it: the whole try has been refused.
			 */
			if (errno == ECONNREFUSED)
				refused = true;
			else
				queries[i].error = -errno;
		}
		if (refused) {
			for (size_t i = 0; i < n; i++)
				queries[i].error = -ECONNREFUSED;
			continue;
		}
		while (resolve_pending(queries, n)) {
			ssize_t len;
			int r;

			r = resolve_wait(fd, POLLIN, deadline);
			if (r == -ETIMEDOUT)
				break;
			if (r < 0)
				return r;
			len = recv(fd, reply, DNS_TCP_MAX_LEN, 0);
			if (len < 0 && (errno == EAGAIN || errno == EINTR))
				continue;
			if (len < 0 && errno == ECONNREFUSED) {
				for (size_t i = 0; i < n; i++)
					queries[i].error = -ECONNREFUSED;
				break;
			}
			if (len < 0)
				return -errno;
			resolve_accept_reply(name, reply, (size_t)len, queries, n);
		}
	}
	return 0;
}

static int resolve_send_all(int fd, const uint8_t *buf, size_t len, int64_t deadline_ms)
{
	while (len > 0) {
		ssize_t sent = send(fd, buf, len, MSG_NOSIGNAL);
		int r;

		if (sent < 0 && errno != EAGAIN && errno != EINTR)
			return -errno;
		if (sent > 0) {
			buf += sent;
			len -= (size_t)sent;
			continue;
		}
		r = resolve_wait(fd, POLLOUT, deadline_ms);
		if (r < 0)
			return r;
	}
	return 0;
}

static int resolve_recv_all(int fd, uint8_t *buf, size_t len, int64_t deadline_ms)
{
	while (len > 0) {
		ssize_t got = recv(fd, buf, len, 0);
		int r;

		if (got == 0)
			return -ECONNRESET;
		if (got < 0 && errno != EAGAIN && errno != EINTR)
			return -errno;
		if (got > 0) {
			buf += got;
			len -= (size_t)got;
			continue;
		}
		r = resolve_wait(fd, POLLIN, deadline_ms);
		if (r < 0)
			return r;
	}
	return 0;
}

/* One TCP exchange (RFC 1035 4.2.2: a two-byte length before each message). */
static int resolve_tcp_try(const struct resolver *server, const char *name, struct resolve_query *q,
			   uint8_t *reply)
{
	int64_t deadline = monotonic_now_ms() + RESOLVE_TRY_TIMEOUT_MS;
	_cleanup_close_ int fd = -1;
	uint8_t prefix[2];
	socklen_t errlen = sizeof(int);
	size_t len;
	int r, err = 0;

	fd = socket(server->addr.ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -errno;
	if (connect(fd, (const struct sockaddr *)&server->addr, server->addrlen) < 0) {
		if (errno != EINPROGRESS)
			return -errno;
		r = resolve_wait(fd, POLLOUT, deadline);
		if (r < 0)
			return r;
		if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &errlen) < 0)
			return -errno;
		if (err != 0)
			return -err;
	}

	prefix[0] = (uint8_t)(q->pktlen >> 8);
	prefix[1] = (uint8_t)(q->pktlen & 0xff);
	r = resolve_send_all(fd, prefix, sizeof(prefix), deadline);
	if (r < 0)
		return r;
	r = resolve_send_all(fd, q->pkt, q->pktlen, deadline);
	if (r < 0)
		return r;

	r = resolve_recv_all(fd, prefix, sizeof(prefix), deadline);
	if (r < 0)
		return r;
	len = (size_t)prefix[0] << 8 | prefix[1];
	r = resolve_recv_all(fd, reply, len, deadline);
	if (r < 0)
		return r;
	r = dns_parse_response(reply, len, q->id, name, q->addrs, RESOLVE_MAX_ADDRS_PER_TYPE,
			       &q->naddrs, &q->rcode, &q->truncated);
	/* On TCP nobody off-path can inject: a reply that does not fit is the server's. */
	if (r == -ENOMSG)
		return -EBADMSG;
	if (r < 0)
		return r;
	/* There is nothing bigger than TCP to fall back to. */
	if (q->truncated)
		return -EMSGSIZE;
	return 0;
}

static void resolve_tcp(const struct resolver *server, const char *name, struct resolve_query *q,
			uint8_t *reply)
{
	q->answered = false;
	q->naddrs = 0;
	for (int try = 0; try < RESOLVE_TRIES; try++) {
		int r = resolve_tcp_try(server, name, q, reply);

		if (r == 0) {
			q->answered = true;
			return;
		}
		q->error = r;
	}
}

static int resolve_literal(const char *name, struct in6_addr **ret_addrs, size_t *ret_naddrs)
{
	struct in6_addr addr;
	struct in_addr v4;

	if (inet_pton(AF_INET, name, &v4) == 1)
		resolve_map_v4(&v4, &addr);
	else if (inet_pton(AF_INET6, name, &addr) != 1)
		return 0;
	*ret_addrs = malloc(sizeof(addr));
	if (!*ret_addrs)
		return -ENOMEM;
	**ret_addrs = addr;
	*ret_naddrs = 1;
	return 1;
}

static int resolve_server(const char *name, const struct resolver *server,
			  struct in6_addr **ret_addrs, size_t *ret_naddrs)
{
	struct resolve_query queries[] = { { .qtype = DNS_TYPE_A }, { .qtype = DNS_TYPE_AAAA } };
	_cleanup_free_ struct dns_answer_addr *answers = NULL;
	_cleanup_free_ struct in6_addr *addrs = NULL;
	_cleanup_free_ uint8_t *reply = NULL;
	size_t total = 0, n = 0;
	bool nxdomain = false;
	int r, err = 0;

	if (server->addrlen == 0 || server->addrlen > sizeof(server->addr) ||
	    (server->addr.ss_family != AF_INET && server->addr.ss_family != AF_INET6))
		return -EINVAL;
	/* A literal needs no server, as with getaddrinfo. */
	r = resolve_literal(name, ret_addrs, ret_naddrs);
	if (r != 0)
		return r < 0 ? r : 0;

	answers = calloc(ARRAY_SIZE(queries) * RESOLVE_MAX_ADDRS_PER_TYPE, sizeof(*answers));
	reply = malloc(DNS_TCP_MAX_LEN);
	if (!answers || !reply)
		return -ENOMEM;
	r = resolve_random_ids(queries, ARRAY_SIZE(queries));
	if (r < 0)
		return r;
	for (size_t i = 0; i < ARRAY_SIZE(queries); i++) {
		struct resolve_query *q = &queries[i];

		q->addrs = answers + i * RESOLVE_MAX_ADDRS_PER_TYPE;
		q->error = -ETIMEDOUT;
		/* No EDNS0: answers over 512 bytes come truncated and are fetched over TCP. */
		r = dns_build_query(q->id, name, q->qtype, false, q->pkt, sizeof(q->pkt),
				    &q->pktlen);
		if (r < 0)
			return r == -ENOBUFS ? -EINVAL : r;
	}

	r = resolve_udp(server, name, queries, ARRAY_SIZE(queries));
	if (r < 0)
		return r;
	for (size_t i = 0; i < ARRAY_SIZE(queries); i++)
		if (queries[i].answered && queries[i].truncated)
			resolve_tcp(server, name, &queries[i], reply);

	/*
	 * Addresses of either family are enough; NXDOMAIN speaks for the name whatever the
	 * type; otherwise a failed question is reported rather than taken for "no address".
	 */
	for (size_t i = 0; i < ARRAY_SIZE(queries); i++) {
		const struct resolve_query *q = &queries[i];

		if (!q->answered) {
			if (!err)
				err = q->error;
		} else if (q->rcode == DNS_RCODE_NXDOMAIN) {
			nxdomain = true;
		} else if (q->rcode != DNS_RCODE_NOERROR) {
			if (!err)
				err = -EIO;
		} else {
			total += q->naddrs;
		}
	}
	if (total == 0)
		return nxdomain || !err ? -ENOENT : err;

	addrs = calloc(total, sizeof(*addrs));
	if (!addrs)
		return -ENOMEM;
	for (size_t i = 0; i < ARRAY_SIZE(queries); i++) {
		if (!queries[i].answered || queries[i].rcode != DNS_RCODE_NOERROR)
			continue;
		for (size_t j = 0; j < queries[i].naddrs; j++)
			resolve_add_unique(addrs, &n, &queries[i].addrs[j].addr);
	}
	*ret_addrs = TAKE_PTR(addrs);
	*ret_naddrs = n;
	return 0;
}

int resolve_host(const char *name, const struct resolver *server, struct in6_addr **ret_addrs,
		 size_t *ret_naddrs)
{
	if (!ret_addrs || !ret_naddrs)
		return -EINVAL;
	*ret_addrs = NULL;
	*ret_naddrs = 0;
	if (!name || !*name)
		return -EINVAL;
	if (!server)
		return resolve_system(name, ret_addrs, ret_naddrs);
	return resolve_server(name, server, ret_addrs, ret_naddrs);
}
