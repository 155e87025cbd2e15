// SPDX-License-Identifier: LGPL-2.1-or-later
/* launch mcp --http's checks of the listen address, the token, Origin and mirrored headers. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "mcp_http_check.h"

static int mcp_http_parse_port(const char *text, uint16_t *ret_port)
{
	char *end;
	unsigned long port;

	if (!*text || *text < '0' || *text > '9')
		return -EINVAL;
	errno = 0;
	port = strtoul(text, &end, 10);
	if (errno || *end || port > 65535)
		return -EINVAL;
	*ret_port = (uint16_t)port;
	return 0;
}

int mcp_http_parse_listen(const char *text, struct sockaddr_storage *ret_addr, socklen_t *ret_len)
{
	struct sockaddr_in *in4 = (struct sockaddr_in *)ret_addr;
	struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)ret_addr;
	char host[INET6_ADDRSTRLEN + 2];
	const char *colon;
	uint16_t port;
	size_t len;

	memset(ret_addr, 0, sizeof(*ret_addr));
	colon = strrchr(text, ':');
	if (!colon) {
		/* A port alone: this host only, as the specification asks of a local server. */
		if (mcp_http_parse_port(text, &port) < 0)
			return -EINVAL;
		in4->sin_family = AF_INET;
		in4->sin_port = htons(port);
		in4->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		*ret_len = sizeof(*in4);
		return 0;
	}
	len = (size_t)(colon - text);
	if (len == 0 || len >= sizeof(host) || mcp_http_parse_port(colon + 1, &port) < 0)
		return -EINVAL;
	memcpy(host, text, len);
	host[len] = '\0';
	if (host[0] == '[') {
		if (len < 3 || host[len - 1] != ']')
			return -EINVAL;
		host[len - 1] = '\0';
		if (inet_pton(AF_INET6, host + 1, &in6->sin6_addr) != 1)
			return -EINVAL;
		in6->sin6_family = AF_INET6;
		in6->sin6_port = htons(port);
		*ret_len = sizeof(*in6);
		return 0;
	}
	if (inet_pton(AF_INET, host, &in4->sin_addr) != 1)
		return -EINVAL;
	in4->sin_family = AF_INET;
	in4->sin_port = htons(port);
	*ret_len = sizeof(*in4);
	return 0;
}

bool mcp_http_is_loopback(const struct sockaddr_storage *addr)
{
	if (addr->ss_family == AF_INET)
		return (ntohl(((const struct sockaddr_in *)addr)->sin_addr.s_addr) >> 24) == 127;
	return addr->ss_family == AF_INET6 &&
	       IN6_IS_ADDR_LOOPBACK(&((const struct sockaddr_in6 *)addr)->sin6_addr);
}

int mcp_http_token_parse(const char *text, size_t len, char *token, size_t token_len)
{
	while (len && (text[len - 1] == '\n' || text[len - 1] == '\r' || text[len - 1] == ' ' ||
		       text[len - 1] == '\t'))
		len--;
	if (len == 0)
		return -ENODATA;
	if (len < MCP_HTTP_TOKEN_MIN_BYTES || len >= token_len)
		return -EINVAL;
	/* What a header carries as one token68-like word: no space, no control character. */
	for (size_t i = 0; i < len; i++)
		if ((unsigned char)text[i] <= ' ' || (unsigned char)text[i] >= 0x7f)
			return -EINVAL;
	memcpy(token, text, len);
	token[len] = '\0';
	return 0;
}

bool mcp_http_bearer_ok(const char *authorization, const char *token)
{
	size_t token_len = strlen(token), given_len;
	unsigned char diff;

	if (!authorization || strncasecmp(authorization, "Bearer ", 7) != 0)
		return false;
	authorization += 7;
	while (*authorization == ' ')
		authorization++;
	given_len = strnlen(authorization, MCP_HTTP_TOKEN_MAX_BYTES + 1);
	/* Every byte of the token is looked at, whatever the guess's length and content. */
	diff = given_len != token_len;
	for (size_t i = 0; i < token_len; i++)
		diff |= (unsigned char)token[i] ^
			(unsigned char)(i < given_len ? authorization[i] : 0);
	return diff == 0;
}

void mcp_http_peer_key(const struct sockaddr *addr, unsigned char ret_key[MCP_HTTP_PEER_BYTES])
{
	memset(ret_key, 0, MCP_HTTP_PEER_BYTES);
	if (addr && addr->sa_family == AF_INET6) {
		memcpy(ret_key, &((const struct sockaddr_in6 *)(const void *)addr)->sin6_addr,
		       MCP_HTTP_PEER_BYTES);
	} else if (addr && addr->sa_family == AF_INET) {
		/* As the IPv4-mapped IPv6 address: the same client over either is one peer. */
		ret_key[10] = ret_key[11] = 0xff;
		memcpy(ret_key + 12, &((const struct sockaddr_in *)(const void *)addr)->sin_addr,
		       4);
	}
}

bool mcp_http_origin_allowed(const char *origin)
{
	static const char *const hosts[] = { "localhost", "127.0.0.1", "[::1]" };
	const char *rest;

	if (strncmp(origin, "http://", 7) == 0)
		rest = origin + 7;
	else if (strncmp(origin, "https://", 8) == 0)
		rest = origin + 8;
	else
		return false;
	for (size_t i = 0; i < sizeof(hosts) / sizeof(hosts[0]); i++) {
		size_t n = strlen(hosts[i]);
		const char *p;

		if (strncasecmp(rest, hosts[i], n) != 0)
			continue;
		p = rest + n;
		if (*p == '\0')
			return true;
		if (*p++ != ':' || !*p)
			return false;
		for (; *p; p++)
			if (*p < '0' || *p > '9')
				return false;
		return strlen(rest + n + 1) <= 5;
	}
	return false;
}

static int mcp_http_base64_digit(char c)
{
	if (c >= 'A' && c <= 'Z')
		return c - 'A';
	if (c >= 'a' && c <= 'z')
		return c - 'a' + 26;
	if (c >= '0' && c <= '9')
		return c - '0' + 52;
	if (c == '+')
		return 62;
	if (c == '/')
		return 63;
	return -1;
}

int mcp_http_header_value(const char *value, char *buf, size_t len)
{
	size_t n = strlen(value), used = 0, digits = 0;
	unsigned int bits = 0, nbits = 0;

	if (n < 11 || strncmp(value, "=?base64?", 9) != 0 || strcmp(value + n - 2, "?=") != 0) {
		if (n >= len)
			return -EINVAL;
		memcpy(buf, value, n + 1);
		return 0;
	}
	for (const char *p = value + 9; p < value + n - 2; p++) {
		int d;

		if (*p == '=') {
			/* Padding only at the end. */
			for (const char *q = p; q < value + n - 2; q++)
				if (*q != '=')
					return -EINVAL;
			break;
		}
		d = mcp_http_base64_digit(*p);
		if (d < 0)
			return -EINVAL;
		digits++;
		bits = ((bits << 6) | (unsigned int)d) & 0xffffu;
		nbits += 6;
		if (nbits >= 8) {
			nbits -= 8;
			if (used + 1 >= len)
				return -EINVAL;
			buf[used++] = (char)((bits >> nbits) & 0xff);
		}
	}
	if (digits % 4 == 1)
		return -EINVAL;
	buf[used] = '\0';
	/* A value that holds a NUL cannot be the JSON string it is compared with. */
	return strlen(buf) == used ? 0 : -EINVAL;
}
