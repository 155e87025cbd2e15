// SPDX-License-Identifier: LGPL-2.1-or-later
/* The HTTPS requests a launch mcp call made through the gateway: its result's list of them. */
#include <stdio.h>
#include <stdlib.h>

#include <cjson/cJSON.h>

#include "mcp_requests.h"

cJSON *mcp_requests_json(const struct mcp_http_request *requests, size_t n)
{
	cJSON *list = cJSON_CreateArray();

	for (size_t i = 0; list && i < n; i++) {
		const struct mcp_http_request *req = &requests[i];
		cJSON *item = cJSON_CreateObject();

		cJSON_AddStringToObject(item, "method", req->method);
		cJSON_AddStringToObject(item, "host", req->host);
		cJSON_AddStringToObject(item, "path", req->path);
		cJSON_AddNumberToObject(item, "status", req->status);
		cJSON_AddStringToObject(item, "decision", req->allowed ? "allow" : "deny");
		cJSON_AddStringToObject(item, "reason", req->reason);
		cJSON_AddItemToArray(list, item);
	}
	return list;
}

char *mcp_requests_text(const struct mcp_http_request *requests, size_t n, unsigned long long lost)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f;

	if (!n && !lost)
		return NULL;
	f = open_memstream(&text, &len);
	if (!f)
		return NULL;
	fprintf(f, "--- HTTP requests through the gateway ---\n");
	for (size_t i = 0; i < n; i++) {
		const struct mcp_http_request *req = &requests[i];

		fprintf(f, "%s https://%s%s %u", req->method, req->host, req->path, req->status);
		if (!req->allowed)
			fprintf(f, " refused (%s)", req->reason);
		fputc('\n', f);
	}
	if (lost)
		fprintf(f, "and %llu more\n", lost);
	fclose(f);
	return text;
}
