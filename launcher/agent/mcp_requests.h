/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The HTTPS requests a launch mcp call made through the gateway, as its result lists them. */
#ifndef LAUNCH_MCP_REQUESTS_H
#define LAUNCH_MCP_REQUESTS_H

#include <stdbool.h>
#include <stddef.h>

/* One request, as its http line says. */
struct mcp_http_request {
	char method[32];
	char host[256];
	char path[1024];
	unsigned int status;
	bool allowed;
	char reason[32]; /* "" when allowed */
};

struct cJSON;
/* The result's "http_requests": method, host, path, status, decision, reason of each. */
struct cJSON *mcp_requests_json(const struct mcp_http_request *requests, size_t n);
/* The same for the model's text (malloc'd; NULL when there are none). */
char *mcp_requests_text(const struct mcp_http_request *requests, size_t n, unsigned long long lost);

#endif /* LAUNCH_MCP_REQUESTS_H */
