// SPDX-License-Identifier: LGPL-2.1-or-later
/* The MCP protocol layer: lifecycle, errors, tools/list, tools/call with a stand-in runner. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>
#include <cjson/cJSON.h>

#include "agent/mcp.h"
#include "test.h"

/* What the stand-in runner saw and answers. */
static struct {
	int calls;
	char code[256];
	int fail; /* negative errno to return */
	int signal;
	bool incomplete; /* refused_incomplete */
	int idles;	 /* replies after which the idle hook ran */
	char query[64];	 /* the last search_docs query, and its limit */
	int limit;
	int submits; /* background calls started, and the last one's id */
	char submit_id[32];
	char progress_token[32];
	long long timeout_ms;
	int cancels; /* notifications/cancelled passed on, and the last one's id */
	char cancel_id[32];
	char session[64]; /* the last submitted call's "session", "session_end", "typecheck" */
	bool session_end;
	bool no_typecheck;
	unsigned long long cancel_scope; /* the scope of the server it came to */
	const struct mcp_server *origin; /* the last submitted call's */
	int sink_writes, sink_last;	 /* messages to the sink, and those that were a reply */
} fake;

static int fake_run(void *ctx __attribute__((unused)), const char *code,
		    struct mcp_result *ret_result)
{
	fake.calls++;
	snprintf(fake.code, sizeof(fake.code), "%s", code);
	if (fake.fail)
		return fake.fail;
	memset(ret_result, 0, sizeof(*ret_result));
	ret_result->out = strdup("42\n");
	ret_result->out_len = 3;
	ret_result->err = strdup("");
	ret_result->signal = fake.signal;
	ret_result->exit_status = fake.signal ? 128 + fake.signal : 0;
	ret_result->refused_incomplete = fake.incomplete;
	ret_result->duration_ms = 17;
	ret_result->refused = calloc(2, sizeof(struct refusal));
	ret_result->nrefused = 2;
	strcpy(ret_result->refused[0].op, "connect");
	strcpy(ret_result->refused[0].destination, "1.1.1.1:443");
	strcpy(ret_result->refused[0].policy, "stripe");
	ret_result->refused[0].count = 1;
	strcpy(ret_result->refused[1].op, "dns");
	strcpy(ret_result->refused[1].destination, "evil.example");
	strcpy(ret_result->refused[1].name, "evil.example");
	strcpy(ret_result->refused[1].policy, "stripe");
	ret_result->refused[1].count = 4;
	return 0;
}

static void fake_idle(void *ctx __attribute__((unused)))
{
	fake.idles++;
}

/* One result for "customer", none for anything else. */
static int fake_search(void *ctx __attribute__((unused)), const char *query, int limit,
		       cJSON **ret_results)
{
	cJSON *results = cJSON_CreateArray(), *item;

	snprintf(fake.query, sizeof(fake.query), "%s", query);
	fake.limit = limit;
	if (fake.fail) {
		cJSON_Delete(results);
		return fake.fail;
	}
	if (strstr(query, "customer")) {
		item = cJSON_CreateObject();
		cJSON_AddStringToObject(item, "name", "customers.create");
		cJSON_AddStringToObject(item, "signature", "create(params?: P): Promise<C>;");
		cJSON_AddStringToObject(item, "description", "Creates a new customer object.");
		cJSON_AddStringToObject(item, "source", "stripe/Customers.d.ts:41");
		cJSON_AddItemToArray(results, item);
	}
	*ret_results = results;
	return 0;
}

static void fake_id(const cJSON *id, char *buf, size_t len)
{
	char *text = cJSON_PrintUnformatted(id);

	snprintf(buf, len, "%s", text ?: "");
	free(text);
}

static int fake_submit(void *ctx __attribute__((unused)), const cJSON *id,
		       const struct mcp_call *call)
{
	fake.submits++;
	fake_id(id, fake.submit_id, sizeof(fake.submit_id));
	snprintf(fake.code, sizeof(fake.code), "%s", call->code);
	fake.timeout_ms = call->timeout_ms;
	snprintf(fake.session, sizeof(fake.session), "%s", call->session ?: "");
	fake.session_end = call->session_end;
	fake.no_typecheck = call->no_typecheck;
	fake_id(call->progress_token, fake.progress_token, sizeof(fake.progress_token));
	fake.origin = call->origin;
	return fake.fail;
}

static void fake_cancel(void *ctx __attribute__((unused)), const struct mcp_server *server,
			const cJSON *id)
{
	fake.cancels++;
	fake.cancel_scope = server->scope;
	fake_id(id, fake.cancel_id, sizeof(fake.cancel_id));
}

static const struct mcp_ops FAKE_OPS_SUBMIT = { .submit = fake_submit, .cancel = fake_cancel };
static const struct mcp_ops FAKE_OPS = { .run = fake_run, .idle = fake_idle };
static const struct mcp_ops FAKE_OPS_SEARCH = { .run = fake_run,
						.idle = fake_idle,
						.search = fake_search };

static void server_init(struct mcp_server *server)
{
	memset(server, 0, sizeof(*server));
	memset(&fake, 0, sizeof(fake));
	server->ops = &FAKE_OPS;
	server->policy = "stripe";
	server->timeout_s = 30;
}

/* Sends one message; returns the parsed reply (NULL when none came). */
static cJSON *send_msg(struct mcp_server *server, const char *message)
{
	char *reply = NULL;
	cJSON *json;

	CHECK_EQ_INT(mcp_handle(server, message, strlen(message), &reply), 0);
	if (!reply)
		return NULL;
	json = cJSON_Parse(reply);
	CHECK(json != NULL);
	free(reply);
	return json;
}

static int error_code(const cJSON *reply)
{
	const cJSON *code = cJSON_GetObjectItem(cJSON_GetObjectItem(reply, "error"), "code");

	return cJSON_IsNumber(code) ? code->valueint : 0;
}

static void initialize(struct mcp_server *server)
{
	cJSON *reply = send_msg(server, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\","
					"\"params\":{\"protocolVersion\":\"2025-06-18\","
					"\"capabilities\":{},\"clientInfo\":{\"name\":\"t\","
					"\"version\":\"1\"}}}");

	CHECK_EQ_STR(cJSON_GetStringValue(cJSON_GetObjectItem(cJSON_GetObjectItem(reply, "result"),
							      "protocolVersion")),
		     "2025-06-18");
	cJSON_Delete(reply);
	CHECK(send_msg(server, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}") ==
	      NULL);
	CHECK(server->initialized);
}

static void test_initialize_negotiates(void)
{
	struct mcp_server server;
	cJSON *reply, *result;

	server_init(&server);
	reply = send_msg(&server, "{\"jsonrpc\":\"2.0\",\"id\":\"a\",\"method\":\"initialize\","
				  "\"params\":{\"protocolVersion\":\"2030-01-01\"}}");
	result = cJSON_GetObjectItem(reply, "result");
	/* A version we do not speak: our newest, and the client decides. */
	CHECK_EQ_STR(cJSON_GetStringValue(cJSON_GetObjectItem(result, "protocolVersion")),
		     MCP_PROTOCOL_LATEST);
	CHECK_EQ_STR(cJSON_GetStringValue(cJSON_GetObjectItem(reply, "id")), "a");
	CHECK(cJSON_GetObjectItem(cJSON_GetObjectItem(result, "capabilities"), "tools") != NULL);
	CHECK_EQ_STR(cJSON_GetStringValue(cJSON_GetObjectItem(
			     cJSON_GetObjectItem(result, "serverInfo"), "name")),
		     "launch");
	cJSON_Delete(reply);
	server_init(&server);
	initialize(&server);
	for (const char *const *v = (const char *const[]){ "2024-11-05", "2025-03-26", "2025-11-25",
							   "2026-07-28", NULL };
	     *v; v++) {
		char message[256];

		snprintf(message, sizeof(message),
			 "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"initialize\",\"params\":{"
			 "\"protocolVersion\":\"%s\"}}",
			 *v);
		reply = send_msg(&server, message);
		CHECK_EQ_STR(cJSON_GetStringValue(cJSON_GetObjectItem(
				     cJSON_GetObjectItem(reply, "result"), "protocolVersion")),
			     *v);
		cJSON_Delete(reply);
	}
}

static void test_errors(void)
{
	static const struct {
		const char *message;
		int code;
		bool null_id;
	} cases[] = {
		{ "not json", MCP_PARSE_ERROR, true },
		{ "{\"jsonrpc\":\"2.0\",\"id\":1,", MCP_PARSE_ERROR, true },
		{ "[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}]", MCP_INVALID_REQUEST,
		  true },
		{ "42", MCP_INVALID_REQUEST, true },
		{ "{\"id\":1,\"method\":\"ping\"}", MCP_INVALID_REQUEST, false },
		{ "{\"jsonrpc\":\"1.0\",\"id\":1,\"method\":\"ping\"}", MCP_INVALID_REQUEST,
		  false },
		{ "{\"jsonrpc\":\"2.0\",\"id\":{},\"method\":\"ping\"}", MCP_INVALID_REQUEST,
		  true },
		{ "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":7}", MCP_INVALID_REQUEST, false },
		{ "{\"jsonrpc\":\"2.0\",\"id\":1}", MCP_INVALID_REQUEST, false },
		{ "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"nope\"}", MCP_METHOD_NOT_FOUND,
		  false },
		{ "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"params\":[1]}",
		  MCP_INVALID_PARAMS, false },
		{ "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{}}",
		  MCP_INVALID_PARAMS, false },
		{ "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{}}",
		  MCP_INVALID_PARAMS, false },
		{ "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":"
		  "\"rm\",\"arguments\":{\"code\":\"1\"}}}",
		  MCP_INVALID_PARAMS, false },
		{ "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":"
		  "\"run_typescript\",\"arguments\":{\"code\":1}}}",
		  MCP_INVALID_PARAMS, false },
		{ "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":"
		  "\"run_typescript\"}}",
		  MCP_INVALID_PARAMS, false },
	};
	struct mcp_server server;

	server_init(&server);
	initialize(&server);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		cJSON *reply = send_msg(&server, cases[i].message);
		cJSON *id = cJSON_GetObjectItem(reply, "id");

		if (error_code(reply) != cases[i].code)
			printf("  case %zu: %s\n", i, cases[i].message);
		CHECK_EQ_INT(error_code(reply), cases[i].code);
		CHECK(cJSON_IsString(
			cJSON_GetObjectItem(cJSON_GetObjectItem(reply, "error"), "message")));
		CHECK_EQ_STR(cJSON_GetStringValue(cJSON_GetObjectItem(reply, "jsonrpc")), "2.0");
		if (cases[i].null_id)
			CHECK(cJSON_IsNull(id));
		else
			CHECK(cJSON_IsNumber(id) && id->valueint == 1);
		cJSON_Delete(reply);
	}
	CHECK_EQ_INT(fake.calls, 0);
}

static void test_notifications_and_responses_get_no_reply(void)
{
	struct mcp_server server;

	server_init(&server);
	CHECK(send_msg(&server, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\","
				"\"params\":{\"requestId\":3}}") == NULL);
	CHECK(send_msg(&server, "{\"jsonrpc\":\"2.0\",\"method\":\"no/such/notification\"}") ==
	      NULL);
	CHECK(send_msg(&server, "{\"jsonrpc\":\"2.0\",\"id\":5,\"result\":{}}") == NULL);
	CHECK(send_msg(&server, "{\"jsonrpc\":\"2.0\",\"id\":5,\"error\":{\"code\":1}}") == NULL);
}

static void test_before_initialize(void)
{
	struct mcp_server server;
	cJSON *reply;

	server_init(&server);
	reply = send_msg(&server, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"}");
	CHECK_EQ_INT(error_code(reply), MCP_INVALID_REQUEST);
	cJSON_Delete(reply);
	/* ping is allowed at any time. */
	reply = send_msg(&server, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"ping\"}");
	CHECK(cJSON_IsObject(cJSON_GetObjectItem(reply, "result")));
	cJSON_Delete(reply);
}

static void test_tools_list(void)
{
	struct mcp_server server;
	cJSON *reply, *tools, *tool, *schema;

	server_init(&server);
	initialize(&server);
	reply = send_msg(&server, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/list\"}");
	tools = cJSON_GetObjectItem(cJSON_GetObjectItem(reply, "result"), "tools");
	CHECK_EQ_INT(cJSON_GetArraySize(tools), 1);
	tool = cJSON_GetArrayItem(tools, 0);
	CHECK_EQ_STR(cJSON_GetStringValue(cJSON_GetObjectItem(tool, "name")), "run_typescript");
	CHECK_CONTAINS(cJSON_GetStringValue(cJSON_GetObjectItem(tool, "description")),
		       "policy \"stripe\"");
	schema = cJSON_GetObjectItem(tool, "inputSchema");
	CHECK_EQ_STR(cJSON_GetStringValue(cJSON_GetObjectItem(schema, "type")), "object");
	CHECK_EQ_STR(cJSON_GetStringValue(
			     cJSON_GetArrayItem(cJSON_GetObjectItem(schema, "required"), 0)),
		     "code");
	CHECK(cJSON_IsObject(cJSON_GetObjectItem(tool, "outputSchema")));
	CHECK(cJSON_IsFalse(
		cJSON_GetObjectItem(cJSON_GetObjectItem(tool, "annotations"), "readOnlyHint")));
	CHECK(cJSON_IsTrue(
		cJSON_GetObjectItem(cJSON_GetObjectItem(tool, "annotations"), "openWorldHint")));
	cJSON_Delete(reply);

	/* With an index, search_docs too. */
	server.ops = &FAKE_OPS_SEARCH;
	reply = send_msg(&server, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/list\"}");
	tools = cJSON_GetObjectItem(cJSON_GetObjectItem(reply, "result"), "tools");
	CHECK_EQ_INT(cJSON_GetArraySize(tools), 2);
	tool = cJSON_GetArrayItem(tools, 1);
	CHECK_EQ_STR(cJSON_GetStringValue(cJSON_GetObjectItem(tool, "name")), "search_docs");
	schema = cJSON_GetObjectItem(tool, "inputSchema");
	CHECK_EQ_STR(cJSON_GetStringValue(
			     cJSON_GetArrayItem(cJSON_GetObjectItem(schema, "required"), 0)),
		     "query");
	CHECK(cJSON_IsObject(cJSON_GetObjectItem(
		cJSON_GetObjectItem(cJSON_GetObjectItem(tool, "outputSchema"), "properties"),
		"results")));
	CHECK(cJSON_IsTrue(
		cJSON_GetObjectItem(cJSON_GetObjectItem(tool, "annotations"), "readOnlyHint")));
	CHECK(cJSON_IsFalse(
		cJSON_GetObjectItem(cJSON_GetObjectItem(tool, "annotations"), "openWorldHint")));
	cJSON_Delete(reply);
}

/* Sends a search_docs call with these arguments; returns the reply. */
static cJSON *search(struct mcp_server *server, const char *arguments)
{
	char message[512];

	snprintf(message, sizeof(message),
		 "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/call\",\"params\":{"
		 "\"name\":\"search_docs\",\"arguments\":%s}}",
		 arguments);
	return send_msg(server, message);
}

static void test_search_docs(void)
{
	struct mcp_server server;
	cJSON *reply, *result, *results, *text;

	server_init(&server);
	server.ops = &FAKE_OPS_SEARCH;
	initialize(&server);
	reply = search(&server, "{\"query\":\"create a customer\"}");
	CHECK_EQ_STR(fake.query, "create a customer");
	CHECK_EQ_INT(fake.limit, MCP_SEARCH_LIMIT_DEFAULT);
	result = cJSON_GetObjectItem(reply, "result");
	CHECK(cJSON_IsFalse(cJSON_GetObjectItem(result, "isError")));
	results = cJSON_GetObjectItem(cJSON_GetObjectItem(result, "structuredContent"), "results");
	CHECK_EQ_INT(cJSON_GetArraySize(results), 1);
	CHECK_EQ_STR(
		cJSON_GetStringValue(cJSON_GetObjectItem(cJSON_GetArrayItem(results, 0), "source")),
		"stripe/Customers.d.ts:41");
	/* The text is the same results, as JSON. */
	text = cJSON_Parse(cJSON_GetStringValue(cJSON_GetObjectItem(
		cJSON_GetArrayItem(cJSON_GetObjectItem(result, "content"), 0), "text")));
	CHECK_EQ_STR(cJSON_GetStringValue(cJSON_GetObjectItem(
			     cJSON_GetArrayItem(cJSON_GetObjectItem(text, "results"), 0), "name")),
		     "customers.create");
	cJSON_Delete(text);
	cJSON_Delete(reply);

	/* No match: an empty list, not an error. A limit past the most is the most. */
	reply = search(&server, "{\"query\":\"zzzqqq\",\"limit\":500}");
	CHECK_EQ_INT(fake.limit, MCP_SEARCH_LIMIT_MAX);
	result = cJSON_GetObjectItem(reply, "result");
	CHECK(cJSON_IsFalse(cJSON_GetObjectItem(result, "isError")));
	CHECK_EQ_INT(cJSON_GetArraySize(cJSON_GetObjectItem(
			     cJSON_GetObjectItem(result, "structuredContent"), "results")),
		     0);
	cJSON_Delete(reply);
	reply = search(&server, "{\"query\":\"x\",\"limit\":3}");
	CHECK_EQ_INT(fake.limit, 3);
	cJSON_Delete(reply);

	for (const char *const *bad =
		     (const char *const[]){ "{}", "{\"query\":3}", "{\"query\":\"x\",\"limit\":0}",
					    "{\"query\":\"x\",\"limit\":\"5\"}", "\"x\"", NULL };
	     *bad; bad++) {
		reply = search(&server, *bad);
		CHECK_EQ_INT(error_code(reply), MCP_INVALID_PARAMS);
		cJSON_Delete(reply);
	}
	fake.fail = -EIO;
	reply = search(&server, "{\"query\":\"x\"}");
	CHECK_EQ_INT(error_code(reply), MCP_INTERNAL_ERROR);
	cJSON_Delete(reply);

	/* Without an index the tool is unknown. */
	fake.fail = 0;
	server.ops = &FAKE_OPS;
	reply = search(&server, "{\"query\":\"x\"}");
	CHECK_EQ_INT(error_code(reply), MCP_INVALID_PARAMS);
	cJSON_Delete(reply);
}

/* One refusal read from an audit line, as mcp_run reads the call's log. */
static void add_line(struct mcp_result *result, const char *line)
{
	struct refusal refusal;

	CHECK_EQ_INT(refusal_parse(line, strlen(line), &refusal), 1);
	CHECK_EQ_INT(mcp_result_add_refusal(result, &refusal), 0);
}

/*
 * Each (op, destination) is listed once, at its first line's place, its count the refusals
 * of all its lines: a dns line stands for itself and its repeats. The same destination of
 * another op is another entry; an entry takes the first host name known for it.
 */
static void test_refused_counted(void)
{
	struct mcp_result result = { 0 };
	char line[256];

	add_line(&result, "{\"event\":\"deny\",\"op\":\"dns\",\"qname\":\"evil.example\","
			  "\"qtype\":\"A\",\"reason\":\"name\",\"repeats\":1}");
	add_line(&result, "{\"event\":\"deny\",\"op\":\"connect\",\"dst_ip\":\"127.0.5.3\","
			  "\"dst_port\":443}");
	add_line(&result, "{\"event\":\"deny\",\"op\":\"dns\",\"qname\":\"evil.example\","
			  "\"qtype\":\"AAAA\",\"reason\":\"name\",\"repeats\":0}");
	add_line(&result, "{\"event\":\"deny\",\"op\":\"connect\",\"dst_ip\":\"127.0.5.3\","
			  "\"dst_port\":443,\"dst_name\":\"evil.example\"}");
	add_line(&result, "{\"event\":\"deny\",\"op\":\"sendmsg\",\"dst_ip\":\"127.0.5.3\","
			  "\"dst_port\":443}");
	CHECK_EQ_INT(result.nrefused, 3);
	CHECK_EQ_STR(result.refused[0].op, "dns");
	CHECK_EQ_STR(result.refused[0].destination, "evil.example");
	CHECK_EQ_INT(result.refused[0].count, 3);
	CHECK_EQ_STR(result.refused[1].op, "connect");
	CHECK_EQ_STR(result.refused[1].destination, "127.0.5.3:443");
	CHECK_EQ_INT(result.refused[1].count, 2);
	CHECK_EQ_STR(result.refused[1].name, "evil.example");
	CHECK_EQ_STR(result.refused[2].op, "sendmsg");
	CHECK_EQ_INT(result.refused[2].count, 1);
	/* Many destinations: each stays one entry, found again past the table's growth. */
	for (int round = 0; round < 2; round++)
		for (int port = 1; port <= 300; port++) {
			snprintf(line, sizeof(line),
				 "{\"event\":\"deny\",\"op\":\"connect\",\"dst_ip\":\"10.0.0.1\","
				 "\"dst_port\":%d}",
				 port);
			add_line(&result, line);
		}
	CHECK_EQ_INT(result.nrefused, 303);
	CHECK_EQ_STR(result.refused[302].destination, "10.0.0.1:300");
	CHECK_EQ_INT(result.refused[302].count, 2);
	mcp_result_free(&result);
}

static void test_tools_call(void)
{
	struct mcp_server server;
	cJSON *reply, *result, *structured, *refused;
	const char *text;

	server_init(&server);
	initialize(&server);
	reply = send_msg(&server, "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"tools/call\","
				  "\"params\":{\"name\":\"run_typescript\",\"arguments\":{"
				  "\"code\":\"console.log(6 * 7)\"}}}");
	CHECK_EQ_INT(fake.calls, 1);
	CHECK_EQ_STR(fake.code, "console.log(6 * 7)");
	result = cJSON_GetObjectItem(reply, "result");
	CHECK(cJSON_IsFalse(cJSON_GetObjectItem(result, "isError")));
	text = cJSON_GetStringValue(cJSON_GetObjectItem(
		cJSON_GetArrayItem(cJSON_GetObjectItem(result, "content"), 0), "text"));
	CHECK_CONTAINS(text, "exit status 0 in 17 ms");
	CHECK_CONTAINS(text, "--- stdout ---\n42\n");
	CHECK_CONTAINS(text, "refused by the sandbox (policy stripe)");
	CHECK_CONTAINS(text, "connect 1.1.1.1:443\n");
	CHECK_CONTAINS(text, "dns evil.example, 4 times\n");
	structured = cJSON_GetObjectItem(result, "structuredContent");
	CHECK_EQ_STR(cJSON_GetStringValue(cJSON_GetObjectItem(structured, "stdout")), "42\n");
	CHECK_EQ_INT(cJSON_GetObjectItem(structured, "exit_status")->valueint, 0);
	CHECK_EQ_INT(cJSON_GetObjectItem(structured, "duration_ms")->valueint, 17);
	CHECK(cJSON_IsNull(cJSON_GetObjectItem(structured, "signal")));
	refused = cJSON_GetObjectItem(structured, "refused");
	CHECK_EQ_INT(cJSON_GetArraySize(refused), 2);
	CHECK_EQ_STR(cJSON_GetStringValue(
			     cJSON_GetObjectItem(cJSON_GetArrayItem(refused, 0), "destination")),
		     "1.1.1.1:443");
	CHECK(cJSON_IsNull(cJSON_GetObjectItem(cJSON_GetArrayItem(refused, 0), "name")));
	CHECK_EQ_INT(cJSON_GetObjectItem(cJSON_GetArrayItem(refused, 0), "count")->valueint, 1);
	CHECK_EQ_INT(cJSON_GetObjectItem(cJSON_GetArrayItem(refused, 1), "count")->valueint, 4);
	CHECK_EQ_STR(
		cJSON_GetStringValue(cJSON_GetObjectItem(cJSON_GetArrayItem(refused, 1), "name")),
		"evil.example");
	cJSON_Delete(reply);

	/* A log launch did not confirm: the model is told its refusals may be incomplete. */
	fake.incomplete = true;
	reply = send_msg(&server, "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"tools/call\","
				  "\"params\":{\"name\":\"run_typescript\",\"arguments\":{"
				  "\"code\":\"x\"}}}");
	result = cJSON_GetObjectItem(reply, "result");
	CHECK(cJSON_IsTrue(cJSON_GetObjectItem(cJSON_GetObjectItem(result, "structuredContent"),
					       "refused_incomplete")));
	CHECK(strstr(cJSON_GetStringValue(cJSON_GetObjectItem(
			     cJSON_GetArrayItem(cJSON_GetObjectItem(result, "content"), 0),
			     "text")),
		     "may be incomplete") != NULL);
	cJSON_Delete(reply);
	fake.incomplete = false;

	/* A crash is the tool's answer (isError), not a protocol error. */
	fake.signal = SIGSEGV;
	reply = send_msg(&server, "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"tools/call\","
				  "\"params\":{\"name\":\"run_typescript\",\"arguments\":{"
				  "\"code\":\"x\"}}}");
	result = cJSON_GetObjectItem(reply, "result");
	CHECK(cJSON_IsTrue(cJSON_GetObjectItem(result, "isError")));
	CHECK_EQ_STR(cJSON_GetStringValue(cJSON_GetObjectItem(
			     cJSON_GetObjectItem(result, "structuredContent"), "signal")),
		     "SIGSEGV");
	cJSON_Delete(reply);

	/* The runner itself failing is an internal error. */
	fake.fail = -EMFILE;
	reply = send_msg(&server, "{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"tools/call\","
				  "\"params\":{\"name\":\"run_typescript\",\"arguments\":{"
				  "\"code\":\"x\"}}}");
	CHECK_EQ_INT(error_code(reply), MCP_INTERNAL_ERROR);
	cJSON_Delete(reply);
}

/* The stdio transport: lines in, lines out; blank lines, CRLF, no final newline. */
static void test_serve(void)
{
	static const char input[] =
		"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\r\n"
		"\n"
		"garbage\n"
		"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n"
		"{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"ping\"}";
	struct mcp_server server;
	char out[4096] = "";
	int in_fds[2], out_fds[2];
	ssize_t n;

	server_init(&server);
	CHECK(pipe(in_fds) == 0 && pipe(out_fds) == 0);
	CHECK(write(in_fds[1], input, sizeof(input) - 1) == (ssize_t)(sizeof(input) - 1));
	close(in_fds[1]);
	CHECK_EQ_INT(mcp_serve(&server, in_fds[0], out_fds[1]), 0);
	close(out_fds[1]);
	n = read(out_fds[0], out, sizeof(out) - 1);
	CHECK(n > 0);
	CHECK_EQ_STR(out, "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n"
			  "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32700,"
			  "\"message\":\"Parse error: the message is not JSON\"}}\n"
			  "{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{}}\n");
	/* After each of the three replies, not after the notification or the blank line. */
	CHECK_EQ_INT(fake.idles, 3);
	close(in_fds[0]);
	close(out_fds[0]);
}

/* A message longer than the limit is answered once and skipped; the next one is served. */
static void test_serve_too_long(void)
{
	struct mcp_server server;
	char path[] = "/var/tmp/launch-test-mcp.XXXXXX", reply[1024] = "";
	const char ping[] = "\n{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"ping\"}\n";
	size_t big = MCP_MESSAGE_MAX_BYTES + 100;
	char *junk = malloc(big);
	int in_fd, out_fds[2];
	ssize_t n;

	server_init(&server);
	in_fd = mkstemp(path);
	CHECK(in_fd >= 0 && junk && pipe(out_fds) == 0);
	unlink(path);
	memset(junk, 'x', big);
	CHECK(write(in_fd, junk, big) == (ssize_t)big);
	CHECK(write(in_fd, ping, sizeof(ping) - 1) == (ssize_t)(sizeof(ping) - 1));
	lseek(in_fd, 0, SEEK_SET);
	CHECK_EQ_INT(mcp_serve(&server, in_fd, out_fds[1]), 0);
	close(out_fds[1]);
	n = read(out_fds[0], reply, sizeof(reply) - 1);
	CHECK(n > 0);
	CHECK_CONTAINS(reply, "\"code\":-32600,\"message\":\"Invalid Request: message longer");
	CHECK_CONTAINS(reply, "{\"jsonrpc\":\"2.0\",\"id\":9,\"result\":{}}\n");
	free(junk);
	close(in_fd);
	close(out_fds[0]);
}

/*
 * With a submit op, a run_typescript call gets no reply now (its thread sends it later); a
 * submit that fails is an internal error now. notifications/cancelled passes its requestId
 * on, and nothing else does.
 */
static void test_submit_and_cancel(void)
{
	struct mcp_server server;
	cJSON *reply;

	server_init(&server);
	server.ops = &FAKE_OPS_SUBMIT;
	initialize(&server);
	reply = send_msg(&server, "{\"jsonrpc\":\"2.0\",\"id\":\"c1\",\"method\":\"tools/call\","
				  "\"params\":{\"name\":\"run_typescript\","
				  "\"arguments\":{\"code\":\"1\"}}}");
	CHECK(reply == NULL);
	CHECK_EQ_INT(fake.submits, 1);
	CHECK_EQ_STR(fake.submit_id, "\"c1\"");
	CHECK_EQ_STR(fake.code, "1");
	fake.fail = -ENOMEM;
	reply = send_msg(&server, "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/call\","
				  "\"params\":{\"name\":\"run_typescript\","
				  "\"arguments\":{\"code\":\"2\"}}}");
	CHECK_EQ_INT(error_code(reply), MCP_INTERNAL_ERROR);
	cJSON_Delete(reply);
	fake.fail = 0;
	CHECK(send_msg(&server, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\","
				"\"params\":{\"requestId\":\"c1\",\"reason\":\"x\"}}") == NULL);
	CHECK_EQ_INT(fake.cancels, 1);
	CHECK_EQ_STR(fake.cancel_id, "\"c1\"");
	/* No requestId, or one that is no id: nothing to cancel. */
	CHECK(send_msg(&server, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\","
				"\"params\":{\"requestId\":[1]}}") == NULL);
	CHECK(send_msg(&server, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\"}") ==
	      NULL);
	CHECK_EQ_INT(fake.cancels, 1);
}

/*
 * A call's progressToken and timeout_ms go to submit; a timeout_ms that is no integer of at
 * least 1 is invalid params, naming it.
 */
static void test_call_progress_and_timeout(void)
{
	struct mcp_server server;
	cJSON *reply;

	server_init(&server);
	server.ops = &FAKE_OPS_SUBMIT;
	initialize(&server);
	CHECK(send_msg(&server, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\","
				"\"params\":{\"name\":\"run_typescript\",\"_meta\":{"
				"\"progressToken\":\"p1\"},\"arguments\":{\"code\":\"1\","
				"\"timeout_ms\":500}}}") == NULL);
	CHECK_EQ_STR(fake.progress_token, "\"p1\"");
	CHECK_EQ_INT((int)fake.timeout_ms, 500);
	CHECK(send_msg(&server, "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"tools/call\","
				"\"params\":{\"name\":\"run_typescript\","
				"\"arguments\":{\"code\":\"1\"}}}") == NULL);
	CHECK_EQ_STR(fake.progress_token, "");
	CHECK_EQ_INT((int)fake.timeout_ms, 0);
	for (const char *const *v =
		     (const char *const[]){ "\"x\"", "0", "-5", "1.5", "null", NULL };
	     *v; v++) {
		char message[256];

		snprintf(message, sizeof(message),
			 "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"tools/call\",\"params\":{"
			 "\"name\":\"run_typescript\",\"arguments\":{\"code\":\"1\","
			 "\"timeout_ms\":%s}}}",
			 *v);
		reply = send_msg(&server, message);
		CHECK_EQ_INT(error_code(reply), MCP_INVALID_PARAMS);
		CHECK(strstr(cJSON_GetStringValue(cJSON_GetObjectItem(
				     cJSON_GetObjectItem(reply, "error"), "message")),
			     "timeout_ms") != NULL);
		cJSON_Delete(reply);
	}
	CHECK_EQ_INT(fake.submits, 2);
}

/*
 * 2026-07-28 without initialize: server/discover lists the revisions; a request whose _meta
 * names a spoken one is served, one naming another is -32022; one naming none still needs
 * initialize.
 */
static void test_stateless_revision(void)
{
	struct mcp_server server;
	cJSON *reply, *result;

	server_init(&server);
	reply = send_msg(&server, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"server/discover\"}");
	result = cJSON_GetObjectItem(reply, "result");
	CHECK_EQ_STR(cJSON_GetStringValue(cJSON_GetArrayItem(
			     cJSON_GetObjectItem(result, "supportedVersions"), 0)),
		     MCP_PROTOCOL_LATEST);
	CHECK(cJSON_GetObjectItem(cJSON_GetObjectItem(result, "capabilities"), "tools") != NULL);
	cJSON_Delete(reply);
	reply = send_msg(&server,
			 "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\","
			 "\"params\":{\"_meta\":{\"" MCP_META_PROTOCOL "\":\"2026-07-28\"}}}");
	CHECK_EQ_INT(cJSON_GetArraySize(
			     cJSON_GetObjectItem(cJSON_GetObjectItem(reply, "result"), "tools")),
		     1);
	cJSON_Delete(reply);
	reply = send_msg(&server,
			 "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/list\","
			 "\"params\":{\"_meta\":{\"" MCP_META_PROTOCOL "\":\"1999-01-01\"}}}");
	CHECK_EQ_INT(error_code(reply), MCP_UNSUPPORTED_PROTOCOL);
	cJSON_Delete(reply);
	reply = send_msg(&server, "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"tools/list\"}");
	CHECK_EQ_INT(error_code(reply), MCP_INVALID_REQUEST);
	cJSON_Delete(reply);
	CHECK(!server.initialize_seen);
}

static int fake_sink_write(struct mcp_server *server __attribute__((unused)),
			   const char *text __attribute__((unused)), bool last)
{
	fake.sink_writes++;
	fake.sink_last += last;
	return 0;
}

static void fake_sink_hold(struct mcp_server *server __attribute__((unused)))
{
}

static const struct mcp_sink FAKE_SINK = { .write = fake_sink_write,
					   .hold = fake_sink_hold,
					   .release = fake_sink_hold };

/*
 * What a transport other than stdio's relies on (mcp_http.c): a submitted call names the
 * server it came to, a cancel comes with that server (its scope), answers go to the sink, and
 * initialize agrees to initialize_latest at most.
 */
static void test_transport_hooks(void)
{
	struct mcp_server server;
	cJSON *reply;

	server_init(&server);
	server.ops = &FAKE_OPS_SUBMIT;
	server.sink = &FAKE_SINK;
	server.scope = 42;
	server.initialize_latest = "2025-11-25";
	reply = send_msg(&server, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\","
				  "\"params\":{\"protocolVersion\":\"2026-07-28\"}}");
	CHECK_EQ_STR(cJSON_GetStringValue(cJSON_GetObjectItem(cJSON_GetObjectItem(reply, "result"),
							      "protocolVersion")),
		     "2025-11-25");
	cJSON_Delete(reply);
	reply = send_msg(&server, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"initialize\","
				  "\"params\":{\"protocolVersion\":\"2025-06-18\"}}");
	CHECK_EQ_STR(cJSON_GetStringValue(cJSON_GetObjectItem(cJSON_GetObjectItem(reply, "result"),
							      "protocolVersion")),
		     "2025-06-18");
	cJSON_Delete(reply);
	CHECK(send_msg(&server, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\","
				"\"params\":{\"name\":\"run_typescript\","
				"\"arguments\":{\"code\":\"1\"}}}") == NULL);
	CHECK(fake.origin == &server);
	CHECK(send_msg(&server, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\","
				"\"params\":{\"requestId\":3}}") == NULL);
	CHECK_EQ_INT(fake.cancel_scope, 42);
	CHECK_EQ_INT(mcp_server_notify(&server, "{}"), 0);
	CHECK_EQ_INT(mcp_server_send(&server, "{}"), 0);
	CHECK_EQ_INT(fake.sink_writes, 2);
	CHECK_EQ_INT(fake.sink_last, 1);
}

/* The text and isError of a tool's answer. */
static const char *tool_text(const cJSON *reply, bool *ret_is_error)
{
	const cJSON *result = cJSON_GetObjectItem(reply, "result");

	*ret_is_error = cJSON_IsTrue(cJSON_GetObjectItem(result, "isError"));
	return cJSON_GetStringValue(cJSON_GetObjectItem(
		cJSON_GetArrayItem(cJSON_GetObjectItem(result, "content"), 0), "text"));
}

static cJSON *call_with(struct mcp_server *server, const char *more)
{
	char message[512];

	snprintf(message, sizeof(message),
		 "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/call\",\"params\":{"
		 "\"name\":\"run_typescript\",\"arguments\":{\"code\":\"1\"%s}}}",
		 more);
	return send_msg(server, message);
}

/*
 * "session" and "session_end": refused as a tool error without --sessions, passed on with it
 * (and in the schema); "typecheck": false passed on, a non-boolean -32602.
 */
static void test_sessions_and_typecheck_args(void)
{
	struct mcp_server server;
	const cJSON *tool, *input, *output;
	bool is_error;
	cJSON *reply;

	server_init(&server);
	server.ops = &FAKE_OPS_SUBMIT;
	initialize(&server);
	reply = call_with(&server, ",\"session\":\"new\"");
	CHECK_CONTAINS(tool_text(reply, &is_error), "--sessions");
	CHECK(is_error);
	cJSON_Delete(reply);
	CHECK_EQ_INT(fake.submits, 0);
	CHECK(call_with(&server, ",\"typecheck\":false") == NULL);
	CHECK(fake.no_typecheck && !fake.session[0]);
	reply = call_with(&server, ",\"typecheck\":\"no\"");
	CHECK_EQ_INT(error_code(reply), MCP_INVALID_PARAMS);
	cJSON_Delete(reply);

	server.sessions = true;
	reply = send_msg(&server, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\"}");
	tool = cJSON_GetArrayItem(
		cJSON_GetObjectItem(cJSON_GetObjectItem(reply, "result"), "tools"), 0);
	input = cJSON_GetObjectItem(cJSON_GetObjectItem(tool, "inputSchema"), "properties");
	output = cJSON_GetObjectItem(cJSON_GetObjectItem(tool, "outputSchema"), "properties");
	CHECK(cJSON_GetObjectItem(input, "session") && cJSON_GetObjectItem(input, "session_end") &&
	      cJSON_GetObjectItem(input, "typecheck"));
	CHECK(cJSON_GetObjectItem(output, "session") &&
	      cJSON_GetObjectItem(output, "session_expires_s") &&
	      cJSON_GetObjectItem(output, "type_errors"));
	CHECK_CONTAINS(cJSON_GetStringValue(cJSON_GetObjectItem(tool, "description")),
		       "\"session\": \"new\"");
	cJSON_Delete(reply);
	CHECK(call_with(&server, ",\"session\":\"abc\",\"session_end\":true") == NULL);
	CHECK_EQ_STR(fake.session, "abc");
	CHECK(fake.session_end && !fake.no_typecheck);
	for (const char *const *v =
		     (const char *const[]){ ",\"session\":42", ",\"session_end\":true",
					    ",\"session\":\"new\",\"session_end\":1", NULL };
	     *v; v++) {
		reply = call_with(&server, *v);
		CHECK(tool_text(reply, &is_error) != NULL);
		CHECK(is_error);
		cJSON_Delete(reply);
	}
	CHECK_EQ_INT(fake.submits, 2);
	CHECK(mcp_session_handle_equal("00ff", "00ff"));
	CHECK(!mcp_session_handle_equal("00ff", "00fe"));
	CHECK(!mcp_session_handle_equal("00ff", "00ff0"));
	CHECK(!mcp_session_handle_equal("", "0"));
}

int main(void)
{
	RUN(test_initialize_negotiates);
	RUN(test_errors);
	RUN(test_notifications_and_responses_get_no_reply);
	RUN(test_before_initialize);
	RUN(test_tools_list);
	RUN(test_refused_counted);
	RUN(test_tools_call);
	RUN(test_submit_and_cancel);
	RUN(test_call_progress_and_timeout);
	RUN(test_sessions_and_typecheck_args);
	RUN(test_stateless_revision);
	RUN(test_transport_hooks);
	RUN(test_search_docs);
	RUN(test_serve);
	RUN(test_serve_too_long);
	return test_failures != 0;
}
