/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * launch mcp --http: the MCP Streamable HTTP transport, both 2025-11-25's sessions and
 * 2026-07-28's stateless requests, on libmicrohttpd, each connection on a thread of its own.
 */
#ifndef LAUNCH_MCP_HTTP_H
#define LAUNCH_MCP_HTTP_H

#include <stddef.h>
#include <sys/socket.h>

#include "mcp_http_check.h"
#include "mcp_http_sessions.h"

/* The one MCP endpoint; any other path is 404. */
#define MCP_HTTP_PATH "/mcp"
/* Connections served at once (a thread each); more wait in the listen queue. */
#define MCP_HTTP_CONNECTIONS_MAX 256
/* An SSE stream with nothing to say gets a comment this often: proxies keep it open. */
#define MCP_HTTP_KEEPALIVE_MS 15000
/* A keep-alive connection that sends nothing for this long is closed. */
#define MCP_HTTP_IDLE_TIMEOUT_S 120

struct mcp_http_config {
	struct sockaddr_storage addr;
	socklen_t addr_len;
	char token[MCP_HTTP_TOKEN_MAX_BYTES]; /* every request's bearer token */
};

struct mcp_server;

/* libmicrohttpd's run-time name, opened by mcp_http_load (Debian's libmicrohttpd12). */
#define MCP_HTTP_LIBRARY "libmicrohttpd.so.12"

/*
 * Opens libmicrohttpd, before mcp_http_serve and before any thread. Returns 0, or -ENOENT
 * with one line in errbuf.
 */
int mcp_http_load(char *errbuf, size_t errlen);

/*
 * Serves MCP over HTTP with base's tools until SIGINT or SIGTERM; base->ops->wait does the
 * runner's background work meanwhile. Returns 0, or a negative errno with one line in errbuf.
 */
int mcp_http_serve(struct mcp_server *base, const struct mcp_http_config *config, char *errbuf,
		   size_t errlen);

#endif /* LAUNCH_MCP_HTTP_H */
