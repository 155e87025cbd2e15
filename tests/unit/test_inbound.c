// SPDX-License-Identifier: LGPL-2.1-or-later
/* Unit tests of inbound.c: where the job may listen, by the socket's bound address. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stddef.h>
#include <string.h>
#include <sys/un.h>

#include "policy/inbound.h"
#include "test.h"

static int judge4(const struct inbound_policy *policy, const char *ip, int port,
		  struct deny_event *ev)
{
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };

	memset(ev, 0, sizeof(*ev));
	inet_pton(AF_INET, ip, &sin.sin_addr);
	return inbound_judge_listen(policy, (struct sockaddr *)&sin, sizeof(sin), SOCK_STREAM,
				    IPPROTO_TCP, ev);
}

static int judge6(const struct inbound_policy *policy, const char *ip, int port)
{
	struct sockaddr_in6 sin6 = { .sin6_family = AF_INET6, .sin6_port = htons((uint16_t)port) };
	struct deny_event ev = { 0 };

	inet_pton(AF_INET6, ip, &sin6.sin6_addr);
	return inbound_judge_listen(policy, (struct sockaddr *)&sin6, sizeof(sin6), SOCK_STREAM,
				    IPPROTO_TCP, &ev);
}

static int judge_unix(const struct inbound_policy *policy, const char *name, size_t len,
		      struct deny_event *ev)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };

	memset(ev, 0, sizeof(*ev));
	memcpy(sun.sun_path, name, len);
	return inbound_judge_listen(policy, (struct sockaddr *)&sun,
				    (socklen_t)(offsetof(struct sockaddr_un, sun_path) + len),
				    SOCK_STREAM, 0, ev);
}

/* Loopback always; elsewhere only the policy's ports, and never an unbound socket. */
static void test_inet(void)
{
	struct port_set ports = {
		.nranges = 2, .ranges = { { 8080, 8080, PROTO_TCP }, { 5353, 5353, PROTO_UDP } }
	};
	struct inbound_policy none = { 0 }, some = { .ports = &ports };
	struct deny_event ev;

	CHECK_EQ_INT(judge4(&none, "127.0.0.1", 9000, &ev), 0);
	CHECK_EQ_INT(judge4(&none, "127.4.5.6", 9000, &ev), 0);
	CHECK_EQ_INT(judge4(&none, "0.0.0.0", 9000, &ev), AUDIT_REASON_ADDRESS);
	CHECK_EQ_INT(ev.family, AF_INET);
	CHECK_EQ_INT(ev.port, 9000);
	CHECK_EQ_INT(ev.reason, AUDIT_REASON_ADDRESS);
	CHECK_EQ_INT(judge4(&none, "0.0.0.0", 0, &ev), AUDIT_REASON_ADDRESS);
	CHECK_EQ_INT(judge4(&none, "192.0.2.1", 8080, &ev), AUDIT_REASON_ADDRESS);
	CHECK_EQ_INT(judge4(&some, "0.0.0.0", 8080, &ev), 0);
	CHECK_EQ_INT(judge4(&some, "192.0.2.1", 8080, &ev), 0);
	/* A UDP port is no TCP listener's, and port 0 is not bound yet. */
	CHECK_EQ_INT(judge4(&some, "0.0.0.0", 5353, &ev), AUDIT_REASON_ADDRESS);
	CHECK_EQ_INT(judge4(&some, "0.0.0.0", 0, &ev), AUDIT_REASON_ADDRESS);

	CHECK_EQ_INT(judge6(&none, "::1", 9000), 0);
	CHECK_EQ_INT(judge6(&none, "::ffff:127.0.0.1", 9000), 0);
	CHECK_EQ_INT(judge6(&none, "::", 9000), AUDIT_REASON_ADDRESS);
	CHECK_EQ_INT(judge6(&none, "::ffff:0.0.0.0", 9000), AUDIT_REASON_ADDRESS);
	CHECK_EQ_INT(judge6(&none, "::127.0.0.1", 9000), AUDIT_REASON_ADDRESS);
	CHECK_EQ_INT(judge6(&some, "::", 8080), 0);
}

/* Paths and unbound sockets pass; abstract names only when "listen" names them. */
static void test_unix(void)
{
	struct unix_allow allows[2] = { 0 };
	struct inbound_policy none = { 0 }, some = { .unix_allows = allows, .nunix = 2 };
	struct deny_event ev;

	allows[0].text = "@served";
	memcpy(allows[0].key.path, "\0served", 7);
	allows[0].flags = UNIX_ALLOW_BIND;
	allows[1].text = "@connect-only";
	memcpy(allows[1].key.path, "\0connect-only", 13);
	allows[1].flags = UNIX_ALLOW_CONNECT;

	CHECK_EQ_INT(judge_unix(&none, "/tmp/a.sock", 12, &ev), 0);
	CHECK_EQ_INT(judge_unix(&none, "", 0, &ev), 0);
	CHECK_EQ_INT(judge_unix(&none, "\0served", 7, &ev), AUDIT_REASON_ABSTRACT);
	CHECK_EQ_INT(ev.family, AF_UNIX);
	CHECK_EQ_INT(ev.unix_path_len, 7);
	CHECK(memcmp(ev.unix_path, "\0served", 7) == 0);
	CHECK_EQ_INT(judge_unix(&some, "\0served", 7, &ev), 0);
	/* Every byte counts: a longer name, or a NUL inside, is another name. */
	CHECK_EQ_INT(judge_unix(&some, "\0served\0", 8, &ev), AUDIT_REASON_ABSTRACT);
	CHECK_EQ_INT(judge_unix(&some, "\0serve", 6, &ev), AUDIT_REASON_ABSTRACT);
	/* A "unix" entry lets the job connect there, not serve there. */
	CHECK_EQ_INT(judge_unix(&some, "\0connect-only", 13, &ev), AUDIT_REASON_ABSTRACT);
}

/* Datagram sockets cannot listen: the kernel answers, not the judge. */
static void test_other_types(void)
{
	struct sockaddr_in sin = { .sin_family = AF_INET };
	struct inbound_policy none = { 0 };
	struct deny_event ev = { 0 };

	CHECK_EQ_INT(inbound_judge_listen(&none, (struct sockaddr *)&sin, sizeof(sin), SOCK_DGRAM,
					  IPPROTO_UDP, &ev),
		     0);
}

int main(void)
{
	RUN(test_inet);
	RUN(test_unix);
	RUN(test_other_types);
	return test_failures != 0;
}
