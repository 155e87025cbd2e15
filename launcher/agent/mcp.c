// SPDX-License-Identifier: LGPL-2.1-or-later
/* The Model Context Protocol over stdio (JSON-RPC 2.0): lifecycle, tools/list, tools/call. */
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/uio.h>
#include <cjson/cJSON.h>

#include "mcp.h"
#include "lib/util.h"

DEFINE_TRIVIAL_CLEANUP_FUNC(cJSON *, cJSON_Delete);

/* The versions of the specification this server speaks, newest first. */
static const char *const MCP_PROTOCOLS[] = { MCP_PROTOCOL_LATEST, "2025-11-25", "2025-06-18",
					     "2025-03-26", "2024-11-05" };
/* run_typescript's "timeout_ms" above this is the server's --timeout anyway: no overflow. */
#define MCP_CALL_TIMEOUT_MS_MAX (1000LL * 1000 * 1000 * 1000)

static const char MCP_OUTPUT_SCHEMA[] =
	"{\"type\":\"object\",\"properties\":{"
	"\"stdout\":{\"type\":\"string\"},\"stderr\":{\"type\":\"string\"},"
	"\"stdout_truncated\":{\"type\":\"boolean\"},\"stderr_truncated\":{\"type\":\"boolean\"},"
	"\"exit_status\":{\"type\":\"integer\"},\"signal\":{\"type\":[\"string\",\"null\"]},"
	"\"timed_out\":{\"type\":\"boolean\"},\"duration_ms\":{\"type\":\"integer\"},"
	"\"refused_incomplete\":{\"type\":\"boolean\"},"
	"\"type_errors\":{\"type\":\"array\",\"items\":{\"type\":\"object\",\"properties\":{"
	"\"line\":{\"type\":\"integer\"},\"column\":{\"type\":\"integer\"},"
	"\"code\":{\"type\":\"string\"},\"message\":{\"type\":\"string\"}},"
	"\"required\":[\"line\",\"column\",\"code\",\"message\"]}},"
	"\"refused\":{\"type\":\"array\",\"items\":{\"type\":\"object\",\"properties\":{"
	"\"op\":{\"type\":\"string\"},\"destination\":{\"type\":\"string\"},"
	"\"name\":{\"type\":[\"string\",\"null\"]},\"count\":{\"type\":\"integer\"}},"
	"\"required\":[\"op\",\"destination\",\"name\",\"count\"]}}},\"required\":[\"stdout\","
	"\"stderr\",\"exit_status\",\"timed_out\","
	"\"duration_ms\",\"refused\"]}";

static const char MCP_SEARCH_OUTPUT_SCHEMA[] =
	"{\"type\":\"object\",\"properties\":{\"results\":{\"type\":\"array\",\"items\":{"
	"\"type\":\"object\",\"properties\":{\"name\":{\"type\":\"string\"},"
	"\"signature\":{\"type\":\"string\"},\"description\":{\"type\":\"string\"},"
	"\"source\":{\"type\":\"string\"}},"
	"\"required\":[\"name\",\"signature\",\"description\",\"source\"]}}},"
	"\"required\":[\"results\"]}";

/* A refusal's place in mcp_result.refused, found by its op and destination. */
struct mcp_refused_node {
	struct hashtable_node node;
	size_t index;
};

static void mcp_refused_node_free(struct hashtable_node *node)
{
	free(node);
}

void mcp_result_free(struct mcp_result *result)
{
	free(result->out);
	free(result->err);
	free(result->refused);
	free(result->tool_error);
	cJSON_Delete(result->type_errors);
	hashtable_clear(&result->refused_index, mcp_refused_node_free);
	free(result->refused_index.buckets);
	memset(result, 0, sizeof(*result));
}

static uint32_t mcp_refused_hash(const struct refusal *refusal)
{
	return hashtable_hash_bytes(refusal->op, strlen(refusal->op)) * 31 +
	       hashtable_hash_bytes(refusal->destination, strlen(refusal->destination));
}

int mcp_result_add_refusal(struct mcp_result *result, const struct refusal *refusal)
{
	uint32_t hash = mcp_refused_hash(refusal);
	struct mcp_refused_node *node;
	struct refusal *grown;

	for (struct hashtable_node *n = hashtable_chain(&result->refused_index, hash); n;
	     n = n->next) {
		struct refusal *entry =
			&result->refused[((struct mcp_refused_node *)(void *)n)->index];

		if (n->hash != hash || strcmp(entry->op, refusal->op) ||
		    strcmp(entry->destination, refusal->destination))
			continue;
		entry->count += refusal->count;
		if (!entry->name[0])
			memcpy(entry->name, refusal->name, sizeof(entry->name));
		return 0;
	}
	node = calloc(1, sizeof(*node));
	if (!node || hashtable_reserve(&result->refused_index) < 0) {
		free(node);
		return -ENOMEM;
	}
	grown = realloc(result->refused, (result->nrefused + 1) * sizeof(*grown));
	if (!grown) {
		free(node);
		return -ENOMEM;
	}
	result->refused = grown;
	node->index = result->nrefused;
	result->refused[result->nrefused++] = *refusal;
	hashtable_insert(&result->refused_index, &node->node, hash);
	return 0;
}

/* Takes `payload` (a result, or an error object) into a response to id; NULL id: null. */
static int mcp_reply(const cJSON *id, const char *key, cJSON *payload, char **ret_reply)
{
	_cleanup_(cJSON_Deletep) cJSON *reply = cJSON_CreateObject();
	cJSON *id_copy = id ? cJSON_Duplicate(id, true) : cJSON_CreateNull();

	if (!reply || !id_copy || !payload) {
		cJSON_Delete(id_copy);
		cJSON_Delete(payload);
		return -ENOMEM;
	}
	cJSON_AddStringToObject(reply, "jsonrpc", "2.0");
	cJSON_AddItemToObject(reply, "id", id_copy);
	cJSON_AddItemToObject(reply, key, payload);
	*ret_reply = cJSON_PrintUnformatted(reply);
	return *ret_reply ? 0 : -ENOMEM;
}

static int mcp_error(const cJSON *id, int code, const char *message, char **ret_reply)
{
	cJSON *error = cJSON_CreateObject();

	if (error) {
		cJSON_AddNumberToObject(error, "code", code);
		cJSON_AddStringToObject(error, "message", message);
	}
	return mcp_reply(id, "error", error, ret_reply);
}

static bool mcp_protocol_known(const char *version)
{
	for (size_t i = 0; i < ARRAY_SIZE(MCP_PROTOCOLS); i++)
		if (strcmp(MCP_PROTOCOLS[i], version) == 0)
			return true;
	return false;
}

/* What initialize and server/discover both say: capabilities, the server's name, a hint. */
static void mcp_describe(cJSON *result)
{
	cJSON *capabilities, *info;

	capabilities = cJSON_AddObjectToObject(result, "capabilities");
	cJSON_AddBoolToObject(cJSON_AddObjectToObject(capabilities, "tools"), "listChanged", false);
	info = cJSON_AddObjectToObject(result, "serverInfo");
	cJSON_AddStringToObject(info, "name", "launch");
	cJSON_AddStringToObject(info, "title", "launch: TypeScript in an egress sandbox");
	cJSON_AddStringToObject(info, "version", "1");
	cJSON_AddStringToObject(
		result, "instructions",
		"Call run_typescript with code that uses the provider's SDK; the "
		"sandbox reaches only that provider, and the result lists what it "
		"refused. search_docs finds the SDK's methods and README sections.");
}

/* 2026-07-28's server/discover: every revision spoken, and what initialize would say. */
static int mcp_discover(const cJSON *id, char **ret_reply)
{
	cJSON *result = cJSON_CreateObject();

	if (!result)
		return -ENOMEM;
	cJSON_AddStringToObject(result, "resultType", "complete");
	cJSON_AddItemToObject(result, "supportedVersions",
			      cJSON_CreateStringArray(MCP_PROTOCOLS, ARRAY_SIZE(MCP_PROTOCOLS)));
	mcp_describe(result);
	return mcp_reply(id, "result", result, ret_reply);
}

/*
 * A 2026-07-28 request names its revision in params._meta rather than after an initialize:
 * *ret_named is true when it names one spoken (then it needs no initialize). One not spoken
 * is answered -32022 with the revisions spoken, in *ret_reply. Returns 0, or -ENOMEM.
 */
static int mcp_request_revision(const cJSON *id, const cJSON *params, bool *ret_named,
				char **ret_reply)
{
	const cJSON *meta = cJSON_GetObjectItemCaseSensitive(params, "_meta");
	const cJSON *version = cJSON_GetObjectItemCaseSensitive(meta, MCP_META_PROTOCOL);
	cJSON *error, *data;

	*ret_named = false;
	if (!version)
		return 0;
	if (cJSON_IsString(version) && mcp_protocol_known(version->valuestring)) {
		*ret_named = true;
		return 0;
	}
	error = cJSON_CreateObject();
	if (!error)
		return -ENOMEM;
	cJSON_AddNumberToObject(error, "code", MCP_UNSUPPORTED_PROTOCOL);
	cJSON_AddStringToObject(error, "message", "Unsupported protocol version");
	data = cJSON_AddObjectToObject(error, "data");
	cJSON_AddItemToObject(data, "supported",
			      cJSON_CreateStringArray(MCP_PROTOCOLS, ARRAY_SIZE(MCP_PROTOCOLS)));
	cJSON_AddItemToObject(data, "requested", cJSON_Duplicate(version, true));
	return mcp_reply(id, "error", error, ret_reply);
}

static int mcp_initialize(struct mcp_server *server, const cJSON *id, const cJSON *params,
			  char **ret_reply)
{
	const cJSON *version = cJSON_GetObjectItemCaseSensitive(params, "protocolVersion");
	const char *latest;
	cJSON *result;

	if (!cJSON_IsString(version))
		return mcp_error(id, MCP_INVALID_PARAMS,
				 "Invalid params: initialize needs \"protocolVersion\" (a string)",
				 ret_reply);
	/* The client's version if we speak it, else our newest: the client decides then. */
	latest = server->initialize_latest ?: MCP_PROTOCOL_LATEST;
	snprintf(server->protocol, sizeof(server->protocol), "%s",
		 mcp_protocol_known(version->valuestring) &&
				 strcmp(version->valuestring, latest) <= 0
			 ? version->valuestring
			 : latest);
	result = cJSON_CreateObject();
	if (!result)
		return -ENOMEM;
	cJSON_AddStringToObject(result, "protocolVersion", server->protocol);
	mcp_describe(result);
	server->initialize_seen = true;
	return mcp_reply(id, "result", result, ret_reply);
}

/*
 * What a client may tell its user about a tool before calling it: search_docs only reads the
 * index; run_typescript's code may do anything and reaches the provider's hosts.
 */
static void mcp_tool_annotate(cJSON *tool, bool read_only, bool open_world)
{
	cJSON *annotations = cJSON_AddObjectToObject(tool, "annotations");

	cJSON_AddBoolToObject(annotations, "readOnlyHint", read_only);
	cJSON_AddBoolToObject(annotations, "openWorldHint", open_world);
}

static cJSON *mcp_tool(const struct mcp_server *server)
{
	char description[1024];
	cJSON *tool = cJSON_CreateObject(), *schema, *properties, *code, *timeout;

	if (!tool)
		return NULL;
	snprintf(description, sizeof(description),
		 "Runs TypeScript with Node.js as an ES module (top-level await works) in a fresh "
		 "sandbox whose network reaches only what the policy \"%s\" allows; any other "
		 "host, address or DNS look-up is refused. The provider's SDK is importable "
		 "(e.g. import Stripe from 'stripe'). Print what you need with console.log. "
		 "Returns stdout, stderr, the exit status, the duration and every refused "
		 "connection or look-up. Each call starts afresh: no files or processes of "
		 "earlier calls; /tmp and the working directory are writable. Stopped after "
		 "%g s.",
		 server->policy ? server->policy : "?", server->timeout_s);
	cJSON_AddStringToObject(tool, "name", MCP_TOOL_NAME);
	cJSON_AddStringToObject(tool, "title", "Run TypeScript in the provider's sandbox");
	cJSON_AddStringToObject(tool, "description", description);
	schema = cJSON_AddObjectToObject(tool, "inputSchema");
	cJSON_AddStringToObject(schema, "type", "object");
	properties = cJSON_AddObjectToObject(schema, "properties");
	code = cJSON_AddObjectToObject(properties, "code");
	cJSON_AddStringToObject(code, "type", "string");
	cJSON_AddStringToObject(code, "description", "TypeScript source, run as an ES module");
	timeout = cJSON_AddObjectToObject(properties, "timeout_ms");
	cJSON_AddStringToObject(timeout, "type", "integer");
	cJSON_AddNumberToObject(timeout, "minimum", 1);
	cJSON_AddStringToObject(timeout, "description",
				"stop the code after this many milliseconds (at most the server's "
				"timeout, which is the default)");
	timeout = cJSON_AddObjectToObject(properties, "typecheck");
	cJSON_AddStringToObject(timeout, "type", "boolean");
	cJSON_AddBoolToObject(timeout, "default", true);
	cJSON_AddStringToObject(timeout, "description",
				"check the code against the SDK's types first (where the server "
				"has TypeScript): on an error it does not run, and type_errors "
				"says where; false runs it unchecked");
	cJSON_AddItemToObject(schema, "required",
			      cJSON_CreateStringArray((const char *[]){ "code" }, 1));
	cJSON_AddBoolToObject(schema, "additionalProperties", false);
	cJSON_AddItemToObject(tool, "outputSchema", cJSON_Parse(MCP_OUTPUT_SCHEMA));
	mcp_tool_annotate(tool, false, true);
	if (server->sessions)
		mcp_session_describe_tool(tool);
	return tool;
}

static cJSON *mcp_search_tool(void)
{
	cJSON *tool = cJSON_CreateObject(), *schema, *properties, *prop;

	if (!tool)
		return NULL;
	cJSON_AddStringToObject(tool, "name", MCP_SEARCH_TOOL_NAME);
	cJSON_AddStringToObject(tool, "title", "Search the SDK's documentation");
	cJSON_AddStringToObject(
		tool, "description",
		"Searches the methods that the installed packages declare (their TypeScript "
		"declarations: e.g. customers.create, with its signature and doc comment) and the "
		"sections of their READMEs, for words such as \"create a customer\". Returns the "
		"best matches first, each with its name, signature, description and source file "
		"and line; an empty list when nothing matches. Nothing runs.");
	schema = cJSON_AddObjectToObject(tool, "inputSchema");
	cJSON_AddStringToObject(schema, "type", "object");
	properties = cJSON_AddObjectToObject(schema, "properties");
	prop = cJSON_AddObjectToObject(properties, "query");
	cJSON_AddStringToObject(prop, "type", "string");
	cJSON_AddStringToObject(prop, "description", "words to look for");
	prop = cJSON_AddObjectToObject(properties, "limit");
	cJSON_AddStringToObject(prop, "type", "integer");
	cJSON_AddNumberToObject(prop, "minimum", 1);
	cJSON_AddNumberToObject(prop, "maximum", MCP_SEARCH_LIMIT_MAX);
	cJSON_AddNumberToObject(prop, "default", MCP_SEARCH_LIMIT_DEFAULT);
	cJSON_AddStringToObject(prop, "description", "how many results, at most");
	cJSON_AddItemToObject(schema, "required",
			      cJSON_CreateStringArray((const char *[]){ "query" }, 1));
	cJSON_AddBoolToObject(schema, "additionalProperties", false);
	cJSON_AddItemToObject(tool, "outputSchema", cJSON_Parse(MCP_SEARCH_OUTPUT_SCHEMA));
	mcp_tool_annotate(tool, true, false);
	return tool;
}

static int mcp_tools_list(const struct mcp_server *server, const cJSON *id, char **ret_reply)
{
	cJSON *result = cJSON_CreateObject(), *tools;

	if (!result)
		return -ENOMEM;
	tools = cJSON_AddArrayToObject(result, "tools");
	cJSON_AddItemToArray(tools, mcp_tool(server));
	if (server->ops->search)
		cJSON_AddItemToArray(tools, mcp_search_tool());
	return mcp_reply(id, "result", result, ret_reply);
}

/* Appends printf output to a growing text; on allocation failure the text stays as it was. */
static void text_append(char **text, size_t *len, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void text_append(char **text, size_t *len, const char *fmt, ...)
{
	va_list ap;
	char *grown;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0 || !(grown = realloc(*text, *len + (size_t)n + 1)))
		return;
	*text = grown;
	va_start(ap, fmt);
	vsnprintf(*text + *len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	*len += (size_t)n;
}

/* The text a model reads: what happened first, then the streams, then the refusals. */
static char *mcp_result_text(const struct mcp_result *result)
{
	char *text = NULL;
	size_t len = 0;

	if (result->type_errors)
		text_append(&text, &len,
			    "type errors: the code did not run (stderr lists them; "
			    "\"typecheck\": false runs it anyway)\n");
	else if (result->timed_out)
		text_append(&text, &len, "timed out after %lld ms: stopped (exit status %d)\n",
			    result->duration_ms, result->exit_status);
	else if (result->signal)
		text_append(&text, &len, "killed by signal %d (SIG%s) after %lld ms\n",
			    result->signal, sigabbrev_np(result->signal) ?: "?",
			    result->duration_ms);
	else
		text_append(&text, &len, "exit status %d in %lld ms\n", result->exit_status,
			    result->duration_ms);
	if (result->session[0])
		text_append(&text, &len, "session %s: %s\n", result->session,
			    result->session_expires_s ? "kept for the next call" : "ended");
	text_append(&text, &len, "--- stdout%s ---\n%s%s",
		    result->out_truncated ? " (truncated)" : "", result->out ?: "",
		    result->out_len && result->out[result->out_len - 1] != '\n' ? "\n" : "");
	text_append(&text, &len, "--- stderr%s ---\n%s%s",
		    result->err_truncated ? " (truncated)" : "", result->err ?: "",
		    result->err_len && result->err[result->err_len - 1] != '\n' ? "\n" : "");
	if (result->refused_incomplete)
		text_append(&text, &len,
			    "--- the sandbox did not confirm its audit log: the "
			    "refusals below may be incomplete ---\n");
	if (result->nrefused) {
		text_append(&text, &len, "--- refused by the sandbox (policy %s) ---\n",
			    result->refused[0].policy);
		for (size_t i = 0; i < result->nrefused; i++) {
			const struct refusal *r = &result->refused[i];

			text_append(&text, &len, "%s %s%s%s%s", r->op, r->destination,
				    r->name[0] && strcmp(r->op, "dns") ? " (" : "",
				    strcmp(r->op, "dns") ? r->name : "",
				    r->name[0] && strcmp(r->op, "dns") ? ")" : "");
			if (r->count > 1)
				text_append(&text, &len, ", %llu times", r->count);
			text_append(&text, &len, "\n");
		}
	}
	return text;
}

static cJSON *mcp_result_json(const struct mcp_result *result)
{
	cJSON *json = cJSON_CreateObject(), *refused;

	if (!json)
		return NULL;
	cJSON_AddStringToObject(json, "stdout", result->out ?: "");
	cJSON_AddStringToObject(json, "stderr", result->err ?: "");
	cJSON_AddBoolToObject(json, "stdout_truncated", result->out_truncated);
	cJSON_AddBoolToObject(json, "stderr_truncated", result->err_truncated);
	cJSON_AddNumberToObject(json, "exit_status", result->exit_status);
	if (result->signal && sigabbrev_np(result->signal)) {
		char name[32];

		snprintf(name, sizeof(name), "SIG%s", sigabbrev_np(result->signal));
		cJSON_AddStringToObject(json, "signal", name);
	} else {
		cJSON_AddNullToObject(json, "signal");
	}
	cJSON_AddBoolToObject(json, "timed_out", result->timed_out);
	cJSON_AddNumberToObject(json, "duration_ms", (double)result->duration_ms);
	cJSON_AddBoolToObject(json, "refused_incomplete", result->refused_incomplete);
	mcp_session_result_json(result, json);
	if (result->type_errors)
		cJSON_AddItemToObject(json, "type_errors",
				      cJSON_Duplicate(result->type_errors, true));
	refused = cJSON_AddArrayToObject(json, "refused");
	for (size_t i = 0; i < result->nrefused; i++) {
		cJSON *item = cJSON_CreateObject();

		cJSON_AddStringToObject(item, "op", result->refused[i].op);
		cJSON_AddStringToObject(item, "destination", result->refused[i].destination);
		if (result->refused[i].name[0])
			cJSON_AddStringToObject(item, "name", result->refused[i].name);
		else
			cJSON_AddNullToObject(item, "name");
		cJSON_AddNumberToObject(item, "count", (double)result->refused[i].count);
		cJSON_AddItemToArray(refused, item);
	}
	return json;
}

/* A tool's answer: text for the model, and the same as structuredContent. */
static int mcp_tool_reply(const cJSON *id, const char *text, cJSON *structured, bool is_error,
			  char **ret_reply)
{
	cJSON *reply = cJSON_CreateObject(), *content, *item;

	if (!reply) {
		cJSON_Delete(structured);
		return -ENOMEM;
	}
	content = cJSON_AddArrayToObject(reply, "content");
	item = cJSON_CreateObject();
	cJSON_AddStringToObject(item, "type", "text");
	cJSON_AddStringToObject(item, "text", text ?: "");
	cJSON_AddItemToArray(content, item);
	cJSON_AddItemToObject(reply, "structuredContent", structured);
	cJSON_AddBoolToObject(reply, "isError", is_error);
	return mcp_reply(id, "result", reply, ret_reply);
}

static int mcp_search_call(struct mcp_server *server, const cJSON *id, const cJSON *arguments,
			   char **ret_reply)
{
	const cJSON *query = cJSON_GetObjectItemCaseSensitive(arguments, "query");
	const cJSON *limit = cJSON_GetObjectItemCaseSensitive(arguments, "limit");
	_cleanup_free_ char *text = NULL;
	cJSON *results = NULL, *structured;
	int n = MCP_SEARCH_LIMIT_DEFAULT, r;
	char message[256];

	if (!cJSON_IsObject(arguments) || !cJSON_IsString(query) ||
	    (limit && !cJSON_IsNumber(limit)))
		return mcp_error(id, MCP_INVALID_PARAMS,
				 "Invalid params: " MCP_SEARCH_TOOL_NAME " needs \"arguments\": "
				 "{\"query\": \"<words>\", \"limit\": <1-20, optional>}",
				 ret_reply);
	if (limit) {
		if (!(limit->valuedouble >= 1))
			return mcp_error(id, MCP_INVALID_PARAMS,
					 "Invalid params: \"limit\" must be at least 1", ret_reply);
		n = limit->valuedouble > MCP_SEARCH_LIMIT_MAX ? MCP_SEARCH_LIMIT_MAX
							      : (int)limit->valuedouble;
	}
	r = server->ops->search(server->ops->ctx, query->valuestring, n, &results);
	if (r < 0) {
		snprintf(message, sizeof(message), "Internal error: cannot search: %s",
			 strerror(-r));
		return mcp_error(id, MCP_INTERNAL_ERROR, message, ret_reply);
	}
	structured = cJSON_CreateObject();
	if (!structured) {
		cJSON_Delete(results);
		return -ENOMEM;
	}
	cJSON_AddItemToObject(structured, "results", results);
	text = cJSON_PrintUnformatted(structured);
	if (!text) {
		cJSON_Delete(structured);
		return -ENOMEM;
	}
	return mcp_tool_reply(id, text, structured, false, ret_reply);
}

static int mcp_tools_call(struct mcp_server *server, const cJSON *id, const cJSON *params,
			  char **ret_reply)
{
	const cJSON *name = cJSON_GetObjectItemCaseSensitive(params, "name");
	const cJSON *arguments = cJSON_GetObjectItemCaseSensitive(params, "arguments");
	const cJSON *code = cJSON_GetObjectItemCaseSensitive(arguments, "code");
	const cJSON *timeout = cJSON_GetObjectItemCaseSensitive(arguments, "timeout_ms");
	const cJSON *typecheck = cJSON_GetObjectItemCaseSensitive(arguments, "typecheck");
	const cJSON *meta = cJSON_GetObjectItemCaseSensitive(params, "_meta");
	const cJSON *token = cJSON_GetObjectItemCaseSensitive(meta, "progressToken");
	struct mcp_result result = { 0 };
	struct mcp_call call = { 0 };
	char message[256];
	int r;

	if (!cJSON_IsString(name))
		return mcp_error(id, MCP_INVALID_PARAMS,
				 "Invalid params: tools/call needs \"name\" (a string)", ret_reply);
	if (server->ops->search && strcmp(name->valuestring, MCP_SEARCH_TOOL_NAME) == 0)
		return mcp_search_call(server, id, arguments, ret_reply);
	if (strcmp(name->valuestring, MCP_TOOL_NAME) != 0) {
		snprintf(message, sizeof(message), "Invalid params: unknown tool \"%.64s\" (%s)",
			 name->valuestring,
			 server->ops->search ? "the tools are " MCP_TOOL_NAME
					       " and " MCP_SEARCH_TOOL_NAME
					     : "the tool is " MCP_TOOL_NAME);
		return mcp_error(id, MCP_INVALID_PARAMS, message, ret_reply);
	}
	if (!cJSON_IsObject(arguments) || !cJSON_IsString(code))
		return mcp_error(id, MCP_INVALID_PARAMS,
				 "Invalid params: " MCP_TOOL_NAME " needs \"arguments\": "
				 "{\"code\": \"<TypeScript>\"}",
				 ret_reply);
	/* An integer of at least 1; above the server's own timeout it is that one. */
	if (timeout && (!cJSON_IsNumber(timeout) || !(timeout->valuedouble >= 1) ||
			(timeout->valuedouble <= (double)MCP_CALL_TIMEOUT_MS_MAX &&
			 timeout->valuedouble != (double)(long long)timeout->valuedouble)))
		return mcp_error(id, MCP_INVALID_PARAMS,
				 "Invalid params: \"timeout_ms\" must be an integer of at least 1 "
				 "(milliseconds)",
				 ret_reply);
	call.code = code->valuestring;
	call.origin = server;
	if (cJSON_IsString(token) || cJSON_IsNumber(token))
		call.progress_token = token;
	if (typecheck && !cJSON_IsBool(typecheck))
		return mcp_error(id, MCP_INVALID_PARAMS,
				 "Invalid params: \"typecheck\" must be true or false", ret_reply);
	call.no_typecheck = cJSON_IsFalse(typecheck);
	if (mcp_session_args(server, arguments, &call, message, sizeof(message)))
		return mcp_tool_reply(id, message, NULL, true, ret_reply);
	if (timeout)
		call.timeout_ms = timeout->valuedouble > (double)MCP_CALL_TIMEOUT_MS_MAX
					  ? MCP_CALL_TIMEOUT_MS_MAX
					  : (long long)timeout->valuedouble;
	if (server->ops->submit) {
		r = server->ops->submit(server->ops->ctx, id, &call);
		return r < 0 ? mcp_call_reply(id, r, &result, ret_reply) : 0;
	}
	r = server->ops->run(server->ops->ctx, code->valuestring, &result);
	return mcp_call_reply(id, r, &result, ret_reply);
}

int mcp_call_reply(const cJSON *id, int run_r, struct mcp_result *result, char **ret_reply)
{
	_cleanup_free_ char *text = NULL;
	char message[256];
	cJSON *structured;
	bool is_error;
	int r;

	if (run_r < 0) {
		snprintf(message, sizeof(message), "Internal error: cannot run the code: %s",
			 strerror(-run_r));
		return mcp_error(id, MCP_INTERNAL_ERROR, message, ret_reply);
	}
	/* Refused before it ran: the model reads why, there is no run to describe. */
	if (result->tool_error) {
		r = mcp_tool_reply(id, result->tool_error, NULL, true, ret_reply);
		mcp_result_free(result);
		return r;
	}
	text = mcp_result_text(result);
	structured = mcp_result_json(result);
	/* A failed run is the tool's answer, not a protocol error: the model reads why. */
	is_error = result->exit_status != 0;
	mcp_result_free(result);
	return mcp_tool_reply(id, text, structured, is_error, ret_reply);
}

int mcp_handle(struct mcp_server *server, const char *message, size_t len, char **ret_reply)
{
	_cleanup_(cJSON_Deletep) cJSON *msg = cJSON_ParseWithLength(message, len);
	const cJSON *id, *method, *params, *version;
	bool id_valid, named;
	int r;

	*ret_reply = NULL;
	if (!msg)
		return mcp_error(NULL, MCP_PARSE_ERROR, "Parse error: the message is not JSON",
				 ret_reply);
	if (cJSON_IsArray(msg))
		return mcp_error(NULL, MCP_INVALID_REQUEST,
				 "Invalid Request: batches are not supported", ret_reply);
	if (!cJSON_IsObject(msg))
		return mcp_error(NULL, MCP_INVALID_REQUEST,
				 "Invalid Request: a message is a JSON object", ret_reply);
	id = cJSON_GetObjectItemCaseSensitive(msg, "id");
	method = cJSON_GetObjectItemCaseSensitive(msg, "method");
	params = cJSON_GetObjectItemCaseSensitive(msg, "params");
	version = cJSON_GetObjectItemCaseSensitive(msg, "jsonrpc");
	id_valid = cJSON_IsString(id) || cJSON_IsNumber(id);

	/* The client's answer to a request of ours: we send none, so there is nothing to do. */
	if (!method && (cJSON_GetObjectItemCaseSensitive(msg, "result") ||
			cJSON_GetObjectItemCaseSensitive(msg, "error")))
		return 0;
	if (!cJSON_IsString(version) || strcmp(version->valuestring, "2.0") != 0)
		return mcp_error(id_valid ? id : NULL, MCP_INVALID_REQUEST,
				 "Invalid Request: \"jsonrpc\" must be \"2.0\"", ret_reply);
	if (id && !id_valid)
		return mcp_error(NULL, MCP_INVALID_REQUEST,
				 "Invalid Request: \"id\" must be a string or a number", ret_reply);
	if (!cJSON_IsString(method))
		return mcp_error(id, MCP_INVALID_REQUEST,
				 "Invalid Request: \"method\" must be a string", ret_reply);
	if (!id) {
		/* Notifications get no answer, not even an error. */
		if (strcmp(method->valuestring, "notifications/initialized") == 0)
			server->initialized = true;
		if (strcmp(method->valuestring, "notifications/cancelled") == 0 &&
		    server->ops->cancel) {
			const cJSON *request =
				cJSON_GetObjectItemCaseSensitive(params, "requestId");

			if (cJSON_IsString(request) || cJSON_IsNumber(request))
				server->ops->cancel(server->ops->ctx, server, request);
		}
		return 0;
	}
	if (params && !cJSON_IsObject(params))
		return mcp_error(id, MCP_INVALID_PARAMS,
				 "Invalid params: \"params\" must be an object", ret_reply);
	if (strcmp(method->valuestring, "initialize") == 0)
		return mcp_initialize(server, id, params, ret_reply);
	if (strcmp(method->valuestring, "server/discover") == 0)
		return mcp_discover(id, ret_reply);
	r = mcp_request_revision(id, params, &named, ret_reply);
	if (r < 0 || *ret_reply)
		return r;
	if (strcmp(method->valuestring, "ping") == 0)
		return mcp_reply(id, "result", cJSON_CreateObject(), ret_reply);
	if (strcmp(method->valuestring, "tools/list") == 0 ||
	    strcmp(method->valuestring, "tools/call") == 0) {
		if (!server->initialize_seen && !named)
			return mcp_error(id, MCP_INVALID_REQUEST,
					 "Invalid Request: the server is not initialized (send "
					 "initialize first)",
					 ret_reply);
		if (method->valuestring[6] == 'l')
			return mcp_tools_list(server, id, ret_reply);
		return mcp_tools_call(server, id, params, ret_reply);
	}
	{
		char text[160];

		snprintf(text, sizeof(text), "Method not found: %.100s", method->valuestring);
		return mcp_error(id, MCP_METHOD_NOT_FOUND, text, ret_reply);
	}
}

/*
 * A message and its newline, in one write where the pipe takes it: the client reads a message
 * at its newline, and a newline of its own would wake it a second time for it.
 */
static int write_line(int fd, const char *buf, size_t len)
{
	struct iovec iov[2] = { { .iov_base = (void *)buf, .iov_len = len },
				{ .iov_base = (void *)"\n", .iov_len = 1 } };
	int i = 0;

	while (i < 2) {
		ssize_t n = writev(fd, iov + i, 2 - i);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		for (; i < 2 && (size_t)n >= iov[i].iov_len; i++)
			n -= (ssize_t)iov[i].iov_len;
		if (i < 2) {
			iov[i].iov_base = (char *)iov[i].iov_base + n;
			iov[i].iov_len -= (size_t)n;
		}
	}
	return 0;
}

static int mcp_answer(struct mcp_server *server, const char *line, size_t len)
{
	_cleanup_free_ char *reply = NULL;
	int r;

	while (len && (line[len - 1] == '\r' || line[len - 1] == ' ' || line[len - 1] == '\t'))
		len--;
	if (len == 0)
		return 0;
	r = mcp_handle(server, line, len, &reply);
	if (r < 0)
		return r;
	if (!reply)
		return 0;
	return mcp_server_send(server, reply);
}

int mcp_progress_notification(const cJSON *token, long long progress, const char *message,
			      char **ret_text)
{
	_cleanup_(cJSON_Deletep) cJSON *note = cJSON_CreateObject();
	cJSON *params;

	if (!note)
		return -ENOMEM;
	cJSON_AddStringToObject(note, "jsonrpc", "2.0");
	cJSON_AddStringToObject(note, "method", "notifications/progress");
	params = cJSON_AddObjectToObject(note, "params");
	if (!params)
		return -ENOMEM;
	cJSON_AddItemToObject(params, "progressToken", cJSON_Duplicate(token, true));
	cJSON_AddNumberToObject(params, "progress", (double)progress);
	cJSON_AddStringToObject(params, "message", message);
	*ret_text = cJSON_PrintUnformatted(note);
	return *ret_text ? 0 : -ENOMEM;
}

int mcp_server_notify(struct mcp_server *server, const char *text)
{
	int r;

	if (server->sink)
		return server->sink->write(server, text, false);
	pthread_mutex_lock(&server->out_lock);
	r = write_line(server->out_fd, text, strlen(text));
	pthread_mutex_unlock(&server->out_lock);
	return r;
}

int mcp_server_send(struct mcp_server *server, const char *reply)
{
	int r;

	if (server->sink) {
		r = server->sink->write(server, reply, true);
	} else {
		pthread_mutex_lock(&server->out_lock);
		r = write_line(server->out_fd, reply, strlen(reply));
		pthread_mutex_unlock(&server->out_lock);
	}
	if (r == 0 && server->ops->idle)
		server->ops->idle(server->ops->ctx);
	return r;
}

int mcp_serve(struct mcp_server *server, int in_fd, int out_fd)
{
	_cleanup_free_ char *buf = NULL;
	size_t cap = 64 * 1024, used = 0, scanned = 0;
	bool skipping = false; /* inside a message too long to keep */

	buf = malloc(cap);
	if (!buf)
		return -ENOMEM;
	server->out_fd = out_fd;
	for (;;) {
		ssize_t n;
		char *nl;
		int r;

		while ((nl = memchr(buf + scanned, '\n', used - scanned))) {
			size_t len = (size_t)(nl - buf);

			if (!skipping)
				r = mcp_answer(server, buf, len);
			else
				r = 0;
			skipping = false;
			if (r < 0)
				return r;
			memmove(buf, nl + 1, used - len - 1);
			used -= len + 1;
			scanned = 0;
		}
		scanned = used;
		if (used >= MCP_MESSAGE_MAX_BYTES) {
			_cleanup_free_ char *reply = NULL;

			/* Answered once, then the rest of the line is dropped as it comes. */
			if (!skipping) {
				r = mcp_error(NULL, MCP_INVALID_REQUEST,
					      "Invalid Request: message longer than 4 MiB", &reply);
				if (r < 0 || mcp_server_send(server, reply) < 0)
					return r < 0 ? r : -EIO;
			}
			skipping = true;
			used = scanned = 0;
		}
		if (used == cap) {
			char *grown = realloc(buf, cap * 2);

			if (!grown)
				return -ENOMEM;
			buf = grown;
			cap *= 2;
		}
		if (server->ops->wait)
			server->ops->wait(server->ops->ctx, in_fd);
		n = read(in_fd, buf + used, cap - used);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			return skipping ? 0 : mcp_answer(server, buf, used);
		used += (size_t)n;
	}
}
