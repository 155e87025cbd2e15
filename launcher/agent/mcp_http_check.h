/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * launch mcp --http's checks of what a client sends before any of it is served: the address
 * to listen on, the bearer token, the Origin, the mirrored request headers. Pure, no I/O.
 */
#ifndef LAUNCH_MCP_HTTP_CHECK_H
#define LAUNCH_MCP_HTTP_CHECK_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/socket.h>

/* The token file's content at most; and at least, so that it cannot be guessed. */
#define MCP_HTTP_TOKEN_MAX_BYTES 4096
#define MCP_HTTP_TOKEN_MIN_BYTES 16

/*
 * --http's value: PORT (on 127.0.0.1), ADDR:PORT or [ADDR6]:PORT, addresses in numbers only.
 * Returns 0 and the address, or -EINVAL.
 */
int mcp_http_parse_listen(const char *text, struct sockaddr_storage *ret_addr, socklen_t *ret_len);

/* Whether the address is a loopback one (127.0.0.0/8, ::1): reachable from this host only. */
bool mcp_http_is_loopback(const struct sockaddr_storage *addr);

/*
 * The token file's text without its trailing white space: one line of visible ASCII,
 * MCP_HTTP_TOKEN_MIN_BYTES or more. Returns 0, -ENODATA when empty, -EINVAL otherwise.
 */
int mcp_http_token_parse(const char *text, size_t len, char *token, size_t token_len);

/*
 * Whether an Authorization header carries "Bearer TOKEN" with the server's token. The
 * comparison takes the time of the token's length whatever was given: no timing tells how
 * much of a guess was right.
 */
bool mcp_http_bearer_ok(const char *authorization, const char *token);

/* A client's address as the per-address session limit counts it: IPv6's 16 bytes. */
#define MCP_HTTP_PEER_BYTES 16

/*
 * The peer's key: its IPv6 address, or its IPv4 one mapped into IPv6 (::ffff:a.b.c.d), so
 * that one host is one peer over either; all zeros when the address is unknown (NULL or
 * another family: such clients share one key, and so one limit).
 */
void mcp_http_peer_key(const struct sockaddr *addr, unsigned char ret_key[MCP_HTTP_PEER_BYTES]);

/*
 * Whether an Origin header is one of this host's own pages (http or https on localhost,
 * 127.0.0.1 or [::1], any port): a page served from anywhere else (a DNS rebinding one
 * included) gets 403. A request without Origin (not from a browser) is not checked here.
 */
bool mcp_http_origin_allowed(const char *origin);

/*
 * A mirrored header's value (Mcp-Name), decoded when it is in the "=?base64?...?=" form of
 * 2026-07-28. Returns 0 and the NUL-terminated value, or -EINVAL (bad encoding, too long).
 */
int mcp_http_header_value(const char *value, char *buf, size_t len);

#endif /* LAUNCH_MCP_HTTP_CHECK_H */
