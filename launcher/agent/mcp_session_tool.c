// SPDX-License-Identifier: LGPL-2.1-or-later
/* launch mcp --sessions, the protocol's side: run_typescript's session fields and their checks. */
#include <stdio.h>
#include <string.h>
#include <cjson/cJSON.h>

#include "mcp.h"

static const char MCP_SESSION_DESCRIPTION[] =
	" Sessions: \"session\": \"new\" runs the call in a sandbox that is kept, and the "
	"result's session is its handle; later calls with \"session\": \"<handle>\" run in that "
	"same sandbox, one at a time, with its files, its process and the top-level variables, "
	"functions and imports of earlier calls (declare again freely). A session ends after "
	"session_expires_s without a call, on \"session_end\": true (after that call's code), "
	"or when a call of it times out, is cancelled or exits the process.";

void mcp_session_describe_tool(cJSON *tool)
{
	cJSON *description = cJSON_GetObjectItemCaseSensitive(tool, "description");
	cJSON *input = cJSON_GetObjectItemCaseSensitive(
		cJSON_GetObjectItemCaseSensitive(tool, "inputSchema"), "properties");
	cJSON *output = cJSON_GetObjectItemCaseSensitive(
		cJSON_GetObjectItemCaseSensitive(tool, "outputSchema"), "properties");
	char text[2048];
	cJSON *prop;

	if (cJSON_IsString(description)) {
		snprintf(text, sizeof(text), "%s%s", description->valuestring,
			 MCP_SESSION_DESCRIPTION);
		cJSON_SetValuestring(description, text);
	}
	prop = cJSON_AddObjectToObject(input, "session");
	cJSON_AddStringToObject(prop, "type", "string");
	cJSON_AddStringToObject(prop, "description",
				"\"new\": start a session (kept sandbox); or the handle an earlier "
				"call returned: run in that session");
	prop = cJSON_AddObjectToObject(input, "session_end");
	cJSON_AddStringToObject(prop, "type", "boolean");
	cJSON_AddStringToObject(prop, "description",
				"end the session after this call's code (its sandbox is killed)");
	prop = cJSON_AddObjectToObject(output, "session");
	cJSON_AddStringToObject(prop, "type", "string");
	cJSON_AddStringToObject(prop, "description", "the session's handle");
	prop = cJSON_AddObjectToObject(output, "session_expires_s");
	cJSON_AddStringToObject(prop, "type", "integer");
	cJSON_AddStringToObject(prop, "description",
				"seconds without a call until the session ends; 0: it has ended");
}

int mcp_session_args(const struct mcp_server *server, const cJSON *arguments, struct mcp_call *call,
		     char *refusal, size_t len)
{
	const cJSON *session = cJSON_GetObjectItemCaseSensitive(arguments, "session");
	const cJSON *end = cJSON_GetObjectItemCaseSensitive(arguments, "session_end");

	if (!session && !end)
		return 0;
	if (!server->sessions) {
		snprintf(refusal, len,
			 "sessions are off on this server (launch mcp --sessions turns them on): "
			 "each call runs in a fresh sandbox; call again without \"session\" and "
			 "\"session_end\"");
		return 1;
	}
	if (!cJSON_IsString(session)) {
		snprintf(refusal, len,
			 "\"session\" must be \"new\" or the handle an earlier call returned in "
			 "structuredContent.session%s",
			 session ? "" : " (\"session_end\" ends a session: it needs one)");
		return 1;
	}
	if (end && !cJSON_IsBool(end)) {
		snprintf(refusal, len, "\"session_end\" must be true or false");
		return 1;
	}
	call->session = session->valuestring;
	call->session_end = cJSON_IsTrue(end);
	return 0;
}

void mcp_session_result_json(const struct mcp_result *result, cJSON *json)
{
	if (!result->session[0])
		return;
	cJSON_AddStringToObject(json, "session", result->session);
	cJSON_AddNumberToObject(json, "session_expires_s", (double)result->session_expires_s);
}

bool mcp_session_handle_equal(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	unsigned char diff = la != lb;

	for (size_t i = 0; i < la && i < lb; i++)
		diff |= (unsigned char)(a[i] ^ b[i]);
	return diff == 0;
}
