// SPDX-License-Identifier: LGPL-2.1-or-later
/* launch mcp --http's checks: the listen address, the token, Origin, mirrored header values. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <sys/un.h>
#include <stdlib.h>
#include <string.h>

#include "agent/mcp_http_check.h"
#include "test.h"

static int listen_port(const char *text, int family)
{
	struct sockaddr_storage addr;
	socklen_t len;

	if (mcp_http_parse_listen(text, &addr, &len) < 0 || addr.ss_family != family)
		return -1;
	return family == AF_INET ? ntohs(((struct sockaddr_in *)&addr)->sin_port)
				 : ntohs(((struct sockaddr_in6 *)&addr)->sin6_port);
}

static void test_listen(void)
{
	struct sockaddr_storage addr;
	socklen_t len;

	/* A port alone is this host only. */
	CHECK_EQ_INT(mcp_http_parse_listen("8931", &addr, &len), 0);
	CHECK(mcp_http_is_loopback(&addr));
	CHECK_EQ_INT(ntohl(((struct sockaddr_in *)&addr)->sin_addr.s_addr), INADDR_LOOPBACK);
	CHECK_EQ_INT(listen_port("8931", AF_INET), 8931);
	CHECK_EQ_INT(listen_port("0.0.0.0:80", AF_INET), 80);
	CHECK_EQ_INT(mcp_http_parse_listen("0.0.0.0:80", &addr, &len), 0);
	CHECK(!mcp_http_is_loopback(&addr));
	CHECK_EQ_INT(listen_port("[::1]:443", AF_INET6), 443);
	CHECK_EQ_INT(mcp_http_parse_listen("[::1]:443", &addr, &len), 0);
	CHECK(mcp_http_is_loopback(&addr));
	CHECK_EQ_INT(listen_port("127.0.0.2:0", AF_INET), 0);
	for (const char *const *bad =
		     (const char *const[]){ "", "x", ":80", "1.2.3:80", "127.0.0.1:65536",
					    "127.0.0.1:", "[::1", "[::1]", "::1:80", "localhost:80",
					    "80x", "-1", "127.0.0.1:+80", NULL };
	     *bad; bad++)
		CHECK(mcp_http_parse_listen(*bad, &addr, &len) == -EINVAL);
}

static void test_token(void)
{
	char token[64];

	CHECK_EQ_INT(mcp_http_token_parse("0123456789abcdef\n", 17, token, sizeof(token)), 0);
	CHECK_EQ_STR(token, "0123456789abcdef");
	CHECK_EQ_INT(mcp_http_token_parse("\n \t\r\n", 5, token, sizeof(token)), -ENODATA);
	CHECK_EQ_INT(mcp_http_token_parse("", 0, token, sizeof(token)), -ENODATA);
	CHECK_EQ_INT(mcp_http_token_parse("short\n", 6, token, sizeof(token)), -EINVAL);
	CHECK_EQ_INT(mcp_http_token_parse("0123456789 abcdef", 17, token, sizeof(token)), -EINVAL);
	CHECK_EQ_INT(mcp_http_token_parse("0123456789\001abcdef", 17, token, sizeof(token)),
		     -EINVAL);
	/* Two lines are not one token. */
	CHECK_EQ_INT(mcp_http_token_parse("0123456789abcdef\nx", 18, token, sizeof(token)),
		     -EINVAL);
	CHECK_EQ_INT(mcp_http_token_parse("0123456789abcdef0123", 20, token, 20), -EINVAL);
}

static void test_bearer(void)
{
	const char *token = "0123456789abcdef";

	CHECK(mcp_http_bearer_ok("Bearer 0123456789abcdef", token));
	CHECK(mcp_http_bearer_ok("bearer 0123456789abcdef", token));
	CHECK(!mcp_http_bearer_ok(NULL, token));
	CHECK(!mcp_http_bearer_ok("", token));
	CHECK(!mcp_http_bearer_ok("Bearer ", token));
	CHECK(!mcp_http_bearer_ok("Basic 0123456789abcdef", token));
	CHECK(!mcp_http_bearer_ok("0123456789abcdef", token));
	CHECK(!mcp_http_bearer_ok("Bearer 0123456789abcde", token));
	CHECK(!mcp_http_bearer_ok("Bearer 0123456789abcdefg", token));
	CHECK(!mcp_http_bearer_ok("Bearer 0123456789abcdeF", token));
	CHECK(!mcp_http_bearer_ok("Bearer 1123456789abcdef", token));
}

/* The per-address session limit's key: one per address, IPv4 the same as its mapped IPv6. */
static void test_peer_key(void)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(1) };
	struct sockaddr_in b = { .sin_family = AF_INET, .sin_port = htons(2) };
	struct sockaddr_in6 mapped = { .sin6_family = AF_INET6 }, lo6 = { .sin6_family = AF_INET6 };
	struct sockaddr_un unix_addr = { .sun_family = AF_UNIX };
	unsigned char ka[MCP_HTTP_PEER_BYTES], kb[MCP_HTTP_PEER_BYTES],
		zero[MCP_HTTP_PEER_BYTES] = { 0 };

	inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
	inet_pton(AF_INET, "127.0.0.1", &b.sin_addr);
	inet_pton(AF_INET6, "::ffff:127.0.0.1", &mapped.sin6_addr);
	inet_pton(AF_INET6, "::1", &lo6.sin6_addr);
	/* The port is not the peer: one host's connections share its limit. */
	mcp_http_peer_key((struct sockaddr *)&a, ka);
	mcp_http_peer_key((struct sockaddr *)&b, kb);
	CHECK(memcmp(ka, kb, sizeof(ka)) == 0);
	mcp_http_peer_key((struct sockaddr *)&mapped, kb);
	CHECK(memcmp(ka, kb, sizeof(ka)) == 0);
	inet_pton(AF_INET, "127.0.0.2", &b.sin_addr);
	mcp_http_peer_key((struct sockaddr *)&b, kb);
	CHECK(memcmp(ka, kb, sizeof(ka)) != 0);
	mcp_http_peer_key((struct sockaddr *)&lo6, kb);
	CHECK(memcmp(ka, kb, sizeof(ka)) != 0);
	CHECK(memcmp(kb, &lo6.sin6_addr, sizeof(kb)) == 0);
	/* Unknown: all the same key. */
	mcp_http_peer_key(NULL, ka);
	CHECK(memcmp(ka, zero, sizeof(ka)) == 0);
	mcp_http_peer_key((struct sockaddr *)&unix_addr, ka);
	CHECK(memcmp(ka, zero, sizeof(ka)) == 0);
}

static void test_origin(void)
{
	for (const char *const *ok =
		     (const char *const[]){ "http://localhost", "http://localhost:8931",
					    "https://127.0.0.1:1", "http://[::1]:8080",
					    "http://LOCALHOST:80", NULL };
	     *ok; ok++)
		CHECK(mcp_http_origin_allowed(*ok));
	for (const char *const *bad =
		     (const char *const[]){
			     "http://evil.example", "http://localhost.evil.example",
			     "http://127.0.0.1.evil.example:80", "http://localhost:80/x",
			     "http://localhost:", "http://localhost:123456", "null", "file://",
			     "ftp://localhost", "http://localhost@evil.example", "", NULL };
	     *bad; bad++)
		CHECK(!mcp_http_origin_allowed(*bad));
}

static void test_header_value(void)
{
	char buf[64];

	CHECK_EQ_INT(mcp_http_header_value("run_typescript", buf, sizeof(buf)), 0);
	CHECK_EQ_STR(buf, "run_typescript");
	CHECK_EQ_INT(mcp_http_header_value("=?base64?SGVsbG8sIOS4lueVjA==?=", buf, sizeof(buf)), 0);
	CHECK_EQ_STR(buf, "Hello, \xe4\xb8\x96\xe7\x95\x8c");
	CHECK_EQ_INT(mcp_http_header_value("=?base64?IHBhZGRlZCA=?=", buf, sizeof(buf)), 0);
	CHECK_EQ_STR(buf, " padded ");
	CHECK_EQ_INT(mcp_http_header_value("=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?=", buf, sizeof(buf)),
		     0);
	CHECK_EQ_STR(buf, "=?base64?literal?=");
	CHECK_EQ_INT(mcp_http_header_value("=?base64?a?=", buf, sizeof(buf)), -EINVAL);
	CHECK_EQ_INT(mcp_http_header_value("=?base64?ab!c?=", buf, sizeof(buf)), -EINVAL);
	CHECK_EQ_INT(mcp_http_header_value("=?base64?YQ=a?=", buf, sizeof(buf)), -EINVAL);
	/* A NUL inside cannot be a JSON string's value. */
	CHECK_EQ_INT(mcp_http_header_value("=?base64?YQBi?=", buf, sizeof(buf)), -EINVAL);
	CHECK_EQ_INT(mcp_http_header_value("=?base64?SGVsbG8sIOS4lueVjA==?=", buf, 5), -EINVAL);
}

int main(void)
{
	RUN(test_listen);
	RUN(test_token);
	RUN(test_bearer);
	RUN(test_peer_key);
	RUN(test_origin);
	RUN(test_header_value);
	return test_failures != 0;
}
